"""The idle upkeep's sweep of speakers (bot/services/upkeep.py): a server's speaker, made with
its voice connection, is what chat is queued on (`AutoReader`), so a link being healed, which
has no voice client for a moment, keeps its speaker however long it was idle."""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.playback.connection import VoiceConnections
from bot.services.upkeep import SPEAKER_IDLE_S, IdleUpkeep


@dataclass
class SweptSpeakers:
    """What the upkeep asks of the speakers: the status line and the sweep."""

    swept: list[tuple[float, set[int]]] = field(default_factory=list)

    def snapshot(self) -> SweptSpeakers:
        return self

    def status_line(self) -> str:
        return ""

    def get(self, guild_id: int) -> None:
        return None

    async def sweep(self, idle_s: float, connected: set[int]) -> int:
        self.swept.append((idle_s, set(connected)))
        return 0


class ReadyClient:
    voice_clients: tuple[object, ...] = ()  # in no voice channel: every link is down

    def is_ready(self) -> bool:
        return True


class NoModels:
    async def unload_over_budget(self) -> None:
        return None


@dataclass
class Voice:
    connections: VoiceConnections


async def test_a_server_whose_link_is_healing_keeps_its_speaker() -> None:
    speakers = SweptSpeakers()
    connections = VoiceConnections(speakers, lambda guild_id: None)  # type: ignore[arg-type]
    upkeep = IdleUpkeep(
        ReadyClient(),  # type: ignore[arg-type]
        speakers,  # type: ignore[arg-type]
        NoModels(),  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        Voice(connections),  # type: ignore[arg-type]
    )
    await upkeep.round()
    assert speakers.swept == [(SPEAKER_IDLE_S, set())]
    # the link of server 42 dropped: the bot means to be in its channel 7 while it heals
    connections._want(42, 7)
    await upkeep.round()
    assert speakers.swept[-1] == (SPEAKER_IDLE_S, {42})
    connections._want(42, None)  # it left on purpose: its speaker may go when idle
    await upkeep.round()
    assert speakers.swept[-1] == (SPEAKER_IDLE_S, set())
