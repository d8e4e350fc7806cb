"""The shared core does not fall over: workers, queues, writes and tables under faults.

Each test here failed on the code before the hardening (commit 1c0224a).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from bot.core.supervisor import supervise
from bot.playback.speakers import GuildSpeaker, Utterance
from bot.storage.database import Database
from bot.synthesis.background_work import BusyError
from bot.synthesis.engine import TTSEngine
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.speech_jobs import FileSink, SpeechJob
from tests.player import Ended, PlayerVoiceClient


class OneChunk:
    """A stream that yields one chunk of `audio_s` seconds (or raises `error` first)."""

    paced_seconds = 0.0  # never held back by a batch

    def __init__(self, audio_s: float = 0.2, error: Exception | None = None) -> None:
        self.audio_s, self.error = audio_s, error

    def cancel(self) -> None:
        pass

    async def _chunks(self) -> AsyncIterator[np.ndarray]:
        await asyncio.sleep(0.01)
        if self.error is not None:
            raise self.error
        yield np.full(int(self.audio_s * 24_000), 0.1, dtype=np.float32)

    def __aiter__(self) -> AsyncIterator[np.ndarray]:
        return self._chunks()


def job(text: str = "Hello there.") -> SpeechJob:
    return SpeechJob.for_text(text, None, FileSink(), 0.0)


async def finished(job: SpeechJob, timeout: float = 5.0) -> None:
    await asyncio.wait_for(job.done.wait(), timeout)


# ---- hole 4: the synthesis workers never die silently ---
async def test_a_model_that_gave_no_audio_yet_does_not_kill_the_workers() -> None:
    scheduler = DeadlineScheduler(lambda text, voice: OneChunk())  # type: ignore[arg-type,return-value]
    scheduler.estimate.record_unit(20, 0.0, 1.0, complete=True)  # a second of work, no audio at all
    scheduler.start()
    try:
        playing = job()
        playing.sink = FileSink()
        scheduler.submit(playing)
        await finished(playing)
        assert playing.error is None and len(playing.sink.chunks) == 1  # type: ignore[attr-defined]
    finally:
        await scheduler.close()


async def test_a_synthesizer_that_raises_ends_that_job_and_the_worker_goes_on() -> None:
    calls = 0

    def synthesize(text: str, voice: str | None) -> OneChunk:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("the model fell over")
        return OneChunk()

    scheduler = DeadlineScheduler(synthesize)  # type: ignore[arg-type]
    scheduler.start()
    try:
        first, second = job(), job("Second.")
        scheduler.submit(first)
        await finished(first)
        scheduler.submit(second)
        await finished(second)
        assert isinstance(first.error, RuntimeError) and second.error is None
    finally:
        await scheduler.close()


@pytest.mark.slow
async def test_a_dead_worker_is_restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    scheduler = DeadlineScheduler(lambda text, voice: OneChunk())  # type: ignore[arg-type,return-value]
    real_pick, failures = scheduler.choice.pick_live, [RuntimeError("a bug in pick")]

    def flaky_pick(now: float) -> SpeechJob | None:
        if failures:
            raise failures.pop()
        return real_pick(now)

    monkeypatch.setattr(scheduler.choice, "pick_live", flaky_pick)  # what the live workers call
    monkeypatch.setattr("bot.core.supervisor.RESTART_DELAY_S", 0.01)
    scheduler.start()
    try:
        waiting = job()
        scheduler.submit(waiting)
        await finished(waiting, timeout=5.0)
        assert not failures and waiting.error is None
    finally:
        await scheduler.close()


async def test_supervise_restarts_a_task_until_cancelled(caplog: pytest.LogCaptureFixture) -> None:
    runs = 0

    async def work() -> None:
        nonlocal runs
        runs += 1
        if runs < 3:
            raise ValueError(f"failure {runs}")
        await asyncio.sleep(3600)

    task = supervise(work, "test-task", restart_delay=0.01)
    for _ in range(200):
        if runs >= 3:
            break
        await asyncio.sleep(0.01)
    assert runs == 3 and not task.done()
    assert "task test-task died" in caplog.text
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# ---- hole 2: background work goes through the scheduler, behind live speech ---
async def test_background_work_waits_behind_live_speech_and_has_limits(engine: TTSEngine) -> None:
    scheduler = DeadlineScheduler(engine.stream, run_call=engine.call)
    live = job("Live speech first.")
    live.admitted = True
    scheduler.submit(live)
    background = job("A file for later.")
    background.owner = (1, 10)
    scheduler.submit(background)
    assert scheduler.choice.pick(0.0) is live  # live before background, whatever the order
    scheduler.cancel(live)
    assert scheduler.choice.pick(0.0) is background
    scheduler.cancel(background)

    scheduler.start()
    try:
        tasks = [
            asyncio.create_task(scheduler.background_speech("One two three.", None, (1, 10)))
            for _ in range(2)
        ]
        await asyncio.sleep(0)
        with pytest.raises(BusyError, match="You already have 2 requests waiting"):
            await scheduler.background_speech("Too many.", None, (1, 10))
        others = [
            asyncio.create_task(scheduler.background_speech("Mine.", None, (user, 10)))
            for user in (2, 3)
        ]
        await asyncio.sleep(0)
        with pytest.raises(BusyError, match="4 requests from this server are waiting"):
            await scheduler.background_speech("One more.", None, (4, 10))
        with pytest.raises(BusyError, match="You already have 2 requests waiting"):
            await scheduler.background_speech("From a DM.", None, (1, None))  # DMs too
        audio = await asyncio.gather(*tasks, *others)
        assert all(len(a) > 0 for a in audio)
        clone_size = await scheduler.background_call(lambda model: 42, (5, 10))
        assert clone_size == 42
        assert scheduler.background.done == 5 and scheduler.background.refused == 3
        assert scheduler.background_waiting() == 0
    finally:
        await scheduler.close()


# ---- hole 11: model work uses a model of the pool, never the shared attribute ---
class _Untouchable:
    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"engine.model.{name} used outside the model pool")


async def test_voice_states_and_clones_use_a_pooled_model(
    engine: TTSEngine, tmp_path: Path, tiny_model: object
) -> None:
    from tests.conftest import TinyModel

    assert isinstance(tiny_model, TinyModel)
    shared, engine.model = engine.model, _Untouchable()
    try:
        await engine.forget_voice(str(tiny_model.clip))
        state = await engine.voice_state(str(tiny_model.clip))
        assert state
        clip = np.sin(np.arange(24_000 * 2) / 10).astype(np.float32) * 0.3
        size = await engine.call(lambda model: engine.clone_sync(clip, tmp_path / "v.st", model))
        assert size > 0
    finally:
        engine.model = shared


# ---- hole 3: a failed play() ends that message; the queue goes on ---
class BrokenOnce(PlayerVoiceClient):
    """play() raises once, as discord.py does while voice reconnects."""

    def __init__(self) -> None:
        super().__init__(encode=False)
        self.failures = 1

    def play(self, source, *, after):  # type: ignore[no-untyped-def,override]
        if self.failures:
            self.failures -= 1
            import discord

            raise discord.ClientException("Not connected to voice.")
        super().play(source, after=after)


async def test_a_failed_play_ends_that_message_and_the_next_one_plays() -> None:
    client, ended = BrokenOnce(), Ended()
    scheduler = DeadlineScheduler(lambda text, voice: OneChunk(0.3))  # type: ignore[arg-type,return-value]
    scheduler.start()
    speaker = GuildSpeaker(scheduler, lambda: client, on_result=ended)  # type: ignore[arg-type,return-value]
    try:
        speaker.enqueue(Utterance("first"))
        speaker.enqueue(Utterance("second"))
        first, second = await ended.wait_for(2)
        assert first.error is not None and "Not connected" in first.error
        assert second.error is None and second.frames_played > 0
        assert not speaker.busy
    finally:
        await speaker.close()
        await scheduler.close()


class FrozenPlayer(PlayerVoiceClient):
    """play() is accepted but the player never reads, as when the link is down; `connected`
    is what discord.py reports (False while it reconnects)."""

    def __init__(self, connected: bool) -> None:
        super().__init__(encode=False)
        self.connected = connected

    def is_connected(self) -> bool:
        return self.connected

    def play(self, source, *, after):  # type: ignore[no-untyped-def,override]
        self.after = after


@pytest.mark.parametrize("connected", [True, False])
@pytest.mark.slow
async def test_a_player_that_stops_reading_is_given_up_later_while_reconnecting(
    monkeypatch: pytest.MonkeyPatch, connected: bool
) -> None:
    from bot.playback import player_link

    monkeypatch.setattr(player_link, "STALL_S", 1.5)
    monkeypatch.setattr(player_link, "RECONNECT_STALL_S", 4.0)
    client, ended = FrozenPlayer(connected=True), Ended()
    scheduler = DeadlineScheduler(lambda text, voice: OneChunk(0.3))  # type: ignore[arg-type,return-value]
    scheduler.start()
    speaker = GuildSpeaker(scheduler, lambda: client, on_result=ended)  # type: ignore[arg-type,return-value]
    try:
        speaker.enqueue(Utterance("never heard"))
        await asyncio.sleep(0.5)  # playing now (play() was called)
        client.connected = connected
        started = asyncio.get_running_loop().time()
        (result,) = await ended.wait_for(1, 10)
        waited = asyncio.get_running_loop().time() - started
        assert result.error == "playback stalled"
        if connected:  # a dead player: given up after STALL_S
            assert 1.0 < waited < 3.5
        else:  # discord.py is reconnecting: it gets RECONNECT_STALL_S
            assert 3.0 < waited < 6.5
    finally:
        await speaker.close()
        await scheduler.close()


# ---- hole 5: one member's failed transaction never undoes another member's write ---
async def test_concurrent_writers_are_serialized(database_at: Path | str) -> None:
    db = await Database.open(database_at)
    try:
        inside, fail = asyncio.Event(), asyncio.Event()

        async def failing_clone() -> None:
            async with db.transaction():
                await db.execute(
                    "INSERT INTO voice_choices (user_id, guild_id, builtin_name) VALUES (1, 0, 'x')"
                )
                inside.set()
                await fail.wait()
                raise OSError("disk full")

        clone = asyncio.create_task(failing_clone())
        await inside.wait()
        choice = asyncio.create_task(db.choices.set(2, 5, builtin="alba"))
        opt_out = asyncio.create_task(db.members.set_autoread(3, 5, False))

        async def other_transaction() -> None:
            async with db.transaction():
                await db.execute(
                    "INSERT INTO voice_choices (user_id, guild_id, builtin_name) VALUES (4, 0, 'y')"
                )

        other = asyncio.create_task(other_transaction())
        await asyncio.sleep(0.05)
        fail.set()
        with pytest.raises(OSError):
            await clone
        await asyncio.gather(choice, opt_out, other)
        assert (await db.choices.for_user(2, 5)).builtin_name == "alba"  # type: ignore[union-attr]
        assert (await db.members.get(3, 5)).autoread is False
        assert (await db.choices.for_user(4, None)).builtin_name == "y"  # type: ignore[union-attr]
        assert await db.choices.for_user(1, None) is None
    finally:
        await db.close()


# ---- hole 9: forget-me keeps the opt-out; data files are private ---
async def test_forgetting_a_member_keeps_their_opt_out(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "data" / "pv.db")
    try:
        await db.members.set_autoread(7, 1, False)
        await db.members.set_nick(7, 1, "Seven")
        await db.members.set_nick(7, 2, "Sept")
        await db.members.forget_user(7)
        assert (await db.members.get(7, 1)).autoread is False
        assert (await db.members.get(7, 1)).nick is None
        assert (await db.members.get(7, 2)).nick is None
        assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700
        for file in (tmp_path / "data").iterdir():
            assert file.stat().st_mode & 0o777 == 0o600, file.name
    finally:
        await db.close()


# ---- hole 8: tables that only grew ---
def test_rate_limit_memory_forgets_old_entries() -> None:
    from bot.services.message_reading import RATE_WINDOW_S, ReadRates

    now = [0.0]
    rates = ReadRates(clock=lambda: now[0])
    for user in range(1000):
        rates.limited(1, [(user, 5)])
    assert len(rates.reads) == 1000
    now[0] += RATE_WINDOW_S + 1
    rates.limited(1, [(5000, 5)])
    rates.reads.expire()
    assert len(rates.reads) == 1
    rates.forget_guild(1)
    assert len(rates.reads) == 0


def test_log_of_an_unexpected_error_names_its_id(caplog: pytest.LogCaptureFixture) -> None:
    from bot.services.replies import unexpected_error_reply

    caplog.set_level(logging.ERROR)
    try:
        raise KeyError("boom")
    except KeyError:
        reply = unexpected_error_reply("/say")
    error_id = reply.content.split("error id ")[1].split(")")[0]
    assert len(error_id) == 8 and error_id in caplog.text and "KeyError" in caplog.text


def test_the_native_heap_can_be_capped_and_trimmed() -> None:
    """glibc (this machine's libc): the arena cap and the trim are really applied."""
    from bot.core import native_memory

    assert native_memory.limit_arenas()
    assert isinstance(native_memory.trim(), bool)
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc_trim.restype = ctypes.c_int
    assert libc.mallopt(native_memory.M_ARENA_MAX, native_memory.ARENAS) == 1
