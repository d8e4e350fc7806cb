"""The voice links' watchdog (`bot/playback/connection.py`) on a real discord.py guild built
from Discord's payloads: a heal never joins where the bot may not connect or speak, and goes
to the channel a moderator moved the bot to. The joins are recorded instead of made: the
tests never reach a voice server."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest

from bot.playback import connection
from bot.playback.connection import VoiceConnections
from tests.services.discord_objects import VOICE2_ID, VOICE_ID, Server

CONNECT = discord.Permissions(connect=True).value


class SilentLink:
    """What the watchdog reads of a server's PlayerLink: audio wants to play, and none is
    heard (the link carries nothing)."""

    def __init__(self) -> None:
        self.wanted = False
        self.wants_audio = True
        self.detached = False
        self.silence_s = 60.0

    def silent_for(self, now: float) -> float:
        return self.silence_s

    def works(self) -> None: ...
    def unlink(self) -> None: ...
    def relink(self) -> None: ...


class WaitingSpeaker:
    """What the watchdog reads of a server's GuildSpeaker: speech waits to play."""

    def __init__(self) -> None:
        self.queued = 3
        self.last_active = 0.0
        self.link = SilentLink()

    def clear(self) -> int:
        cleared, self.queued = self.queued, 0
        self.link.wants_audio = False
        return cleared


class OneSpeaker:
    """Speakers' face to the connections, for one server."""

    def __init__(self) -> None:
        self.the_speaker = WaitingSpeaker()

    def get(self, guild_id: int) -> WaitingSpeaker:
        return self.the_speaker

    def speaker(self, guild: discord.Guild) -> WaitingSpeaker:
        return self.the_speaker


class JoinedLink(discord.VoiceProtocol):
    """A voice client as discord.py registers it once joined; it never carries audio."""

    def __init__(self, server: Server, channel: discord.abc.Connectable) -> None:
        super().__init__(server.client, channel)
        self.server = server

    async def disconnect(self, *, force: bool = False) -> None:
        self.server.remove_voice_client()
        self.server.in_voice(None, None)


@pytest.fixture
def server() -> Server:
    return Server()


@pytest.fixture
def joins(server: Server, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The channels the bot joined (its voice state follows, as Discord sends it)."""
    joined: list[int] = []

    async def connect(channel: discord.VoiceChannel, **options: Any) -> JoinedLink:
        joined.append(channel.id)
        link = JoinedLink(server, channel)
        server.add_voice_client(link)
        server.in_voice(None, str(channel.id))
        return link

    monkeypatch.setattr(discord.VoiceChannel, "connect", connect)
    return joined


@pytest.fixture
async def connections(server: Server) -> AsyncIterator[VoiceConnections]:
    guild = server.start()
    voice = VoiceConnections(OneSpeaker(), lambda guild_id: guild)  # type: ignore[arg-type]
    yield voice
    await voice.close()


@pytest.fixture(autouse=True)
def look_often(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watchdog looks every 50 ms (0.5 s in the bot): the tests stay fast."""
    monkeypatch.setattr(connection, "WATCH_PERIOD_S", 0.05)


@pytest.fixture
async def watching(connections: VoiceConnections) -> AsyncIterator[None]:
    task = asyncio.create_task(connections.watch())
    yield
    task.cancel()


async def until(done: Any, timeout_s: float = 3.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not done():
            await asyncio.sleep(0.05)


def _channel(server: Server, channel_id: str) -> discord.VoiceChannel:
    assert server.guild is not None
    channel = server.guild.get_channel(int(channel_id))
    assert isinstance(channel, discord.VoiceChannel)
    return channel


async def test_without_connect_the_watchdog_gives_up_instead_of_joining(
    server: Server,
    connections: VoiceConnections,
    joins: list[int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each heal was 3 joins of 15 s that Discord ignored, again and again while the speech
    queued for it waited."""
    await connections.ensure_connected(_channel(server, VOICE_ID))
    assert joins == [int(VOICE_ID)]
    server.deny(VOICE_ID, CONNECT, server.bot)  # a moderator takes Connect from the bot
    speaker = connections.speakers.get(int(server.id))
    with caplog.at_level(logging.WARNING, logger="bot.playback.connection"):
        task = asyncio.create_task(connections.watch())
        try:
            await until(lambda: not speaker.link.wanted)
            await asyncio.sleep(0.2)  # more looks of the watchdog: nothing more
        finally:
            task.cancel()
    assert joins == [int(VOICE_ID)]  # no join was tried
    assert speaker.queued == 0  # the waiting speech went, instead of waiting for a heal
    assert server.guild is not None and server.guild.voice_client is None  # it left
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert f"guild {server.id}" in warning and "lacks Connect" in warning


async def test_a_heal_goes_to_the_channel_a_moderator_moved_the_bot_to(
    server: Server, connections: VoiceConnections, joins: list[int], watching: None
) -> None:
    """The next fault pulled the bot back to the channel it was moved from."""
    await connections.ensure_connected(_channel(server, VOICE_ID))
    server.in_voice(None, VOICE2_ID)  # a moderator drags the bot to Gaming
    await until(lambda: len(joins) >= 2)  # the link carries nothing: the watchdog heals
    assert joins[:2] == [int(VOICE_ID), int(VOICE2_ID)]


@pytest.fixture
def quiet(connections: VoiceConnections) -> WaitingSpeaker:
    """The server's speaker with nothing to say (a home channel is kept all the same)."""
    speaker = connections.speakers.get(0)
    speaker.queued, speaker.link.wants_audio, speaker.link.silence_s = 0, False, 0.0
    return speaker


async def test_the_watchdog_joins_the_home_channel_with_nothing_to_say(
    server: Server,
    connections: VoiceConnections,
    joins: list[int],
    quiet: WaitingSpeaker,
    watching: None,
) -> None:
    await asyncio.sleep(0.2)
    assert joins == []  # no home: the bot stays out of voice
    connections.set_home(int(server.id), int(VOICE_ID))
    await until(lambda: joins)
    assert joins == [int(VOICE_ID)] and quiet.link.wanted


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
async def test_after_a_move_or_a_kick_the_bot_goes_back_home(
    server: Server,
    connections: VoiceConnections,
    joins: list[int],
    quiet: WaitingSpeaker,
    watching: None,
) -> None:
    connections.set_home(int(server.id), int(VOICE_ID))
    await until(lambda: joins)
    server.in_voice(None, VOICE2_ID)  # a moderator drags the bot to Gaming
    await until(lambda: len(joins) >= 2)
    assert joins[:2] == [int(VOICE_ID), int(VOICE_ID)]  # back home, not healed into Gaming
    assert server.guild is not None and server.guild.me.voice.channel.id == int(VOICE_ID)
    guild = server.guild
    before = len(joins)
    await guild.voice_client.disconnect(force=True)  # type: ignore[union-attr]
    assert await connections.on_own_voice_state(guild)  # kicked: it meant to be nowhere...
    await until(lambda: len(joins) > before)  # ... but home
    assert joins[-1] == int(VOICE_ID)
    await until(lambda: not connections._locks.get(int(server.id)))
    connections.forget(int(server.id))  # removed from the server: its home goes too
    await guild.voice_client.disconnect(force=True)  # type: ignore[union-attr]
    before = len(joins)
    await asyncio.sleep(0.3)
    assert len(joins) == before


async def test_a_home_it_may_not_join_is_tried_again_only_after_a_while(
    server: Server,
    connections: VoiceConnections,
    joins: list[int],
    quiet: WaitingSpeaker,
    watching: None,
) -> None:
    server.deny(VOICE_ID, CONNECT, server.bot)
    connections.set_home(int(server.id), int(VOICE_ID))
    await asyncio.sleep(0.5)  # ten looks of the watchdog
    assert joins == []  # given up once, not again every look
    assert connections._next_heal[int(server.id)] > time.monotonic() + 30
