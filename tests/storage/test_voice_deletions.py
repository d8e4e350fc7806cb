"""Following other processes' voice deletions (`follow_deletions`), on a stand-in for the store's
LISTEN: the notices as `VoiceRepository.delete` sends them, in order, a bad one skipped, and a
flood past `MAX_HEARD` caught up by one sweep. (The real PostgreSQL path:
tests/synthesis/test_shared_voices.py.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from bot.storage import voice_deletions
from bot.storage.database import VOICE_DELETED
from bot.storage.voice_deletions import DeletedVoice, follow_deletions


def notice(voice_id: int) -> str:
    """What `VoiceRepository.delete` sends."""
    return json.dumps(
        {
            "id": voice_id,
            "state_path": f"voices/1/{voice_id}.st",
            "clip_path": f"voices/1/{voice_id}.f",
        }
    )


class Notices:
    """The store's LISTEN: connected once, then `send` delivers payloads; stays connected."""

    def __init__(self) -> None:
        self.hear: Callable[[str], None] | None = None
        self.connected = asyncio.Event()

    async def listen(
        self, channel: str, on_message: Callable[[str], None], on_connected: Callable[[], None]
    ) -> None:
        assert channel == VOICE_DELETED
        self.hear = on_message
        on_connected()
        self.connected.set()
        await asyncio.Event().wait()

    def send(self, *payloads: str) -> None:
        assert self.hear is not None
        for payload in payloads:
            self.hear(payload)


class Follower:
    def __init__(self) -> None:
        self.store = Notices()
        self.dropped: list[DeletedVoice] = []
        self.sweeps = 0
        self.idle = asyncio.Event()

    async def on_deleted(self, gone: DeletedVoice) -> None:
        self.dropped.append(gone)

    async def catch_up(self) -> None:
        self.sweeps += 1

    async def run(self) -> asyncio.Task[None]:
        task = asyncio.create_task(
            follow_deletions(self.store, self.on_deleted, self.catch_up)  # type: ignore[arg-type]
        )
        await asyncio.wait_for(self.store.connected.wait(), 30)
        await self.settle()
        return task

    async def settle(self) -> None:
        """Let the handler take everything heard (it never waits on anything but the queue)."""
        for _ in range(50):
            await asyncio.sleep(0)


async def test_each_notice_drops_that_voice_and_a_bad_one_stops_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    follower = Follower()
    task = await follower.run()
    try:
        assert follower.sweeps == 1  # on connecting: what was missed meanwhile
        follower.store.send(notice(7), "not json", notice(8))
        await follower.settle()
        assert follower.dropped == [
            DeletedVoice(7, "voices/1/7.st", "voices/1/7.f"),
            DeletedVoice(8, "voices/1/8.st", "voices/1/8.f"),
        ]
        assert "handling a voice deletion failed" in caplog.text
        assert follower.sweeps == 1
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_notices_past_the_bound_are_caught_up_by_one_sweep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(voice_deletions, "MAX_HEARD", 3)
    follower = Follower()
    task = await follower.run()
    try:
        follower.store.send(*(notice(n) for n in range(10)))  # faster than handled: 7 dropped
        await follower.settle()
        assert follower.sweeps == 2  # at connecting, then one for the notices dropped
        assert [gone.id for gone in follower.dropped] == [1, 2]  # the first taken as the sweep
        follower.store.send(notice(11))  # then back to one notice at a time
        await follower.settle()
        assert follower.sweeps == 2 and follower.dropped[-1].id == 11
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
