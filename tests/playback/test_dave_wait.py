"""The player holds a frame until the link's DAVE session can encrypt it (discord.py 2.7.1
sends plain Opus before that, which every member's client drops), bounded by `DAVE_READY_S`,
past which the link stops counting as carrying (the watchdog heals it) and says so. The link's
discord.py state is a stand-in here; tests/e2e/test_dave.py proves the same on the fake."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import discord
import pytest

from bot.playback import voice_link
from bot.playback.voice_link import OPUS_SILENCE, VoiceLink

pytestmark = pytest.mark.unit
BOT, ALICE = 1, 2


@dataclass
class Websocket:
    closed: bool = False
    close_code: int | None = None


@dataclass
class State:
    """What the link reads of discord.py's voice connection state."""

    dave_protocol_version: int = 1
    can_encrypt: bool = False
    ws: Any = None
    connected: bool = True

    def __post_init__(self) -> None:
        self.ws = type("VoiceWebsocket", (), {"ws": Websocket()})()

    def is_connected(self) -> bool:
        return self.connected


@dataclass
class Player:
    loops: int = 40
    _start: float = 0.0
    _end: threading.Event = field(default_factory=threading.Event)


@dataclass
class Channel:
    voice_states: dict[int, object]
    guild: object = field(default_factory=lambda: type("Guild", (), {"id": 7})())


class Link(VoiceLink):
    """A VoiceLink on stand-ins: no client, no connection."""

    def __init__(self, state: State, members: list[int]) -> None:  # no super(): no client
        self._connection = state  # type: ignore[assignment]  # a stand-in for discord.py's
        self.channel = Channel({m: object() for m in members})  # type: ignore[assignment]  # ditto
        self.player = Player()
        self.dave_stalled = False

    @property
    def user(self) -> Any:
        return type("User", (), {"id": BOT})()

    @property
    def audio_player(self) -> Player:
        return self.player


def link_with(state: State, members: list[int]) -> tuple[Link, list[bytes]]:
    return Link(state, members), []


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    frames: list[bytes] = []

    def send(self: discord.VoiceClient, data: bytes, *, encode: bool = True) -> None:
        frames.append(data)

    monkeypatch.setattr(discord.VoiceClient, "send_audio_packet", send)
    return frames


def test_a_frame_waits_for_the_dave_session_then_the_player_keeps_its_pace(
    sent: list[bytes],
) -> None:
    state = State()
    link, _ = link_with(state, [BOT, ALICE])
    threading.Timer(0.1, lambda: setattr(state, "can_encrypt", True)).start()
    started = time.monotonic()
    link.send_audio_packet(b"pcm" * 1280)
    assert sent == [b"pcm" * 1280] and time.monotonic() - started >= 0.1
    player = link.player
    assert player.loops == 0  # its clock restarted: no burst after
    assert time.perf_counter() - player._start < 0.05


def test_nothing_waits_without_dave_alone_or_for_silence(sent: list[bytes]) -> None:
    link, _ = link_with(State(dave_protocol_version=0), [BOT, ALICE])
    link.send_audio_packet(b"plain")  # DAVE off: passthrough
    link, _ = link_with(State(), [BOT])
    link.send_audio_packet(b"alone")  # nobody to hear it, and no group to make alone
    link, _ = link_with(State(), [BOT, ALICE])
    link.send_audio_packet(OPUS_SILENCE, encode=False)  # DAVE leaves it unencrypted
    assert sent == [b"plain", b"alone", OPUS_SILENCE]


def test_a_session_never_ready_is_healed_and_logged(
    sent: list[bytes], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(voice_link, "DAVE_READY_S", 0.05)
    state = State()
    link, _ = link_with(state, [BOT, ALICE])
    assert link.carrying
    with caplog.at_level(logging.WARNING, "bot.playback.voice_link"):
        link.send_audio_packet(b"frame")
        link.send_audio_packet(b"next")  # dropped at once while stalled: no second wait
    assert sent == [] and link.dave_stalled and not link.carrying  # the watchdog heals it
    assert "no DAVE session able to encrypt" in caplog.text
    state.can_encrypt = True

    link.send_audio_packet(b"late")
    assert sent == [b"late"] and not link.dave_stalled


def test_a_closed_voice_session_holds_the_frame_until_the_new_one_encrypts(
    sent: list[bytes],
) -> None:
    """After 4006 or 1006 the group is gone: what the old session sends is lost to all."""
    state = State(can_encrypt=True)
    state.ws.ws.close_code = 4006
    link, _ = link_with(state, [BOT, ALICE])

    def reconnected() -> None:
        state.ws = type("VoiceWebsocket", (), {"ws": Websocket()})()

    threading.Timer(0.1, reconnected).start()
    link.send_audio_packet(b"frame")
    assert sent == [b"frame"]
