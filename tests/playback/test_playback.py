"""The per-guild queue: order, limits, edits and deletions of waiting messages."""

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np
import pytest

from bench.fifo import FifoSpeaker
from bot.playback.audio_source import StreamingSource
from bot.playback.speakers import GuildSpeaker, QueueFullError, Utterance
from bot.synthesis.engine import TTSEngine
from bot.synthesis.phrase_cache import PhraseCache
from bot.synthesis.scheduler import DeadlineScheduler
from tests.player import Ended, PlayerVoiceClient


@pytest.mark.slow
async def test_queue_limit_refuses_or_drops_the_oldest(engine: TTSEngine) -> None:
    speaker = GuildSpeaker(DeadlineScheduler(engine.stream), lambda: None, max_queue=3)
    try:
        for i in range(3):
            assert speaker.enqueue(Utterance(f"m{i}", message_id=i)) == i
        with pytest.raises(QueueFullError):
            speaker.enqueue(Utterance("refused"))
        speaker.enqueue(Utterance("m3", message_id=3), drop_oldest=True)
        speaker.enqueue(Utterance("m4", message_id=4), drop_oldest=True)
        assert [u.text for u in speaker._queue] == ["m2", "m3", "m4"]
        assert speaker.drop(3) is True and speaker.drop(3) is False
        assert speaker.replace_text(4, "m4 edited") is True
        assert speaker.replace_text(99, "nothing") is False
        assert [u.text for u in speaker._queue] == ["m2", "m4 edited"]
        assert speaker.clear_waiting() == 2 and speaker.queued == 0
    finally:
        await speaker.close()


async def test_without_a_voice_connection_utterances_end_with_an_error(engine: TTSEngine) -> None:
    ended = Ended()
    speaker = GuildSpeaker(DeadlineScheduler(engine.stream), lambda: None, on_result=ended)
    try:
        speaker.enqueue(Utterance("hello"))
        (result,) = await ended.wait_for(1)
        assert result.error == "not connected to voice" and result.frames_played == 0
        assert not speaker.busy and speaker.idle_seconds >= 0
    finally:
        await speaker.close()


class TimedStream:
    """A unit of `audio_s` seconds, ready after `synth_s` of real time."""

    paced_seconds = 0.0  # never held back by a batch

    def __init__(self, log: list[tuple[str, float]], text: str, audio_s: float) -> None:
        self.log, self.text, self.audio_s = log, text, audio_s
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    async def _chunks(self) -> AsyncIterator[np.ndarray]:
        self.log.append((self.text, time.monotonic()))
        await asyncio.sleep(0.05)
        if not self.cancelled:
            yield np.full(int(self.audio_s * 24_000), 0.1, dtype=np.float32)

    def __aiter__(self) -> AsyncIterator[np.ndarray]:
        return self._chunks()


def timed_speaker(
    log: list[tuple[str, float]],
    client: PlayerVoiceClient,
    ended: Ended,
    kind: type[GuildSpeaker] = GuildSpeaker,
) -> GuildSpeaker:
    def synthesize(text: str, voice: str | None) -> TimedStream:
        return TimedStream(log, text, audio_s=1.0 if text.startswith("long") else 0.3)

    scheduler = DeadlineScheduler(synthesize, max_load=100.0)
    scheduler.start()
    return kind(scheduler, lambda: client, on_result=ended)  # type: ignore[arg-type,return-value]


async def test_a_servers_message_waits_for_the_model_from_its_request_not_from_its_turn() -> None:
    """Admission's order across servers is the order they asked in (the scheduler's deadline
    counts from `free_at`): a message in an idle server counts from its request, however late
    the server's own task comes to it (a loaded event loop)."""
    # not started: nothing is admitted, so the message waits for the model
    scheduler = DeadlineScheduler(lambda text, voice: TimedStream([], text, 0.3))
    client = PlayerVoiceClient(encode=False)
    speaker = GuildSpeaker(scheduler, lambda: client)  # type: ignore[arg-type]
    try:
        asked = time.monotonic() - 5.0  # asked 5 s ago: its server's task comes to it only now
        speaker.enqueue(Utterance("hello", requested_at=asked))
        async with asyncio.timeout(10):
            while not scheduler.jobs or scheduler.jobs[0].free_at is None:
                await asyncio.sleep(0.01)
        assert scheduler.jobs[0].free_at == asked
    finally:
        await speaker.close()


@pytest.mark.slow
@pytest.mark.timing
async def test_the_next_message_is_synthesized_while_the_current_one_plays() -> None:
    log: list[tuple[str, float]] = []
    client, ended = PlayerVoiceClient(encode=False), Ended()
    speaker = timed_speaker(log, client, ended)
    try:
        speaker.enqueue(Utterance("long first"))
        speaker.enqueue(Utterance("second"))
        first, second = await ended.wait_for(2)
        first_ended = client.ended[0]
        synthesis_started = dict(log)
        # the second one's synthesis began while the first still had most of its second to play
        assert synthesis_started["second"] < first_ended - 0.5
        assert first.underruns == 0 and second.underruns == 0
        # and it starts right after the first ends: no synthesis wait in between
        assert client.started[1] - first_ended < 0.06
    finally:
        await speaker.close()


@pytest.mark.slow
async def test_the_fifo_baseline_synthesizes_a_next_message_only_once_the_current_played() -> None:
    """bench/fifo.py's speaker, what bench/load.py measures the bot against: no preparing ahead."""
    log: list[tuple[str, float]] = []
    client, ended = PlayerVoiceClient(encode=False), Ended()
    speaker = timed_speaker(log, client, ended, kind=FifoSpeaker)
    try:
        speaker.enqueue(Utterance("long first"))
        speaker.enqueue(Utterance("second"))
        first, second = await ended.wait_for(2)
        assert dict(log)["second"] >= client.ended[0]  # after the first one's end was played
        assert first.error is None and second.error is None and second.frames_played > 0
    finally:
        await speaker.close()


class GaveUpPlayerClient(PlayerVoiceClient):
    """Like discord.py's player when it stops waiting for a voice reconnect: it calls `after`
    but never stops itself, so `is_playing()` stays True until `stop()`."""

    def play(self, source: StreamingSource, *, after: Callable[[Exception | None], None]) -> None:
        def after_but_still_playing(error: Exception | None) -> None:
            self._playing = True
            after(error)

        super().play(source, after=after_but_still_playing)

    def stop(self) -> None:
        super().stop()
        self._playing = False


async def test_a_player_that_gave_up_without_stopping_does_not_block_the_next_message() -> None:
    client, ended = GaveUpPlayerClient(encode=False), Ended()
    speaker = timed_speaker([], client, ended)
    try:
        for count, text in enumerate(("first", "second"), 1):
            speaker.enqueue(Utterance(text))
            await ended.wait_for(count)
        first, second = ended.results
        assert first.error is None and second.error is None
        assert second.frames_played > 0 and len(client.started) == 2
    finally:
        await speaker.close()


@pytest.mark.slow
async def test_a_prepared_message_deleted_or_edited_is_dropped_or_read_anew() -> None:
    log: list[tuple[str, float]] = []
    client, ended = PlayerVoiceClient(encode=False), Ended()
    speaker = timed_speaker(log, client, ended)
    try:
        speaker.enqueue(Utterance("long first", message_id=1))
        speaker.enqueue(Utterance("deleted", message_id=2))
        speaker.enqueue(Utterance("long edited later", message_id=3))
        while [text for text, _ in log] != ["long first", "deleted"]:
            await asyncio.sleep(0.01)
        assert speaker.queued == 2
        assert speaker.drop(2) is True  # being prepared: cancelled, the next one prepared
        while len(log) < 3:
            await asyncio.sleep(0.01)
        assert speaker.replace_text(3, "edited") is True  # prepared again with the new text
        assert [r.text for r in await ended.wait_for(2)] == ["long first", "edited"]
        assert [text for text, _ in log] == ["long first", "deleted", "long edited later", "edited"]
        assert speaker.queued == 0 and not speaker.busy
    finally:
        await speaker.close()


class SlowStream(TimedStream):
    """A model that needs `delay_s` before its first audio."""

    def __init__(self, log: list[tuple[str, float]], text: str, delay_s: float) -> None:
        super().__init__(log, text, audio_s=1.0)
        self.delay_s = delay_s

    async def _chunks(self) -> AsyncIterator[np.ndarray]:
        self.log.append((self.text, time.monotonic()))
        await asyncio.sleep(self.delay_s)
        if not self.cancelled:
            yield np.full(int(self.audio_s * 24_000), 0.1, dtype=np.float32)


@pytest.mark.slow
@pytest.mark.timing
async def test_a_cached_lead_plays_at_once_and_the_model_says_only_the_rest(
    tmp_path: Path,
) -> None:
    """'Alice said' comes from the phrase cache; the first frame does not wait for the model,
    and the body follows the lead without a gap. Uncached, the lead is rendered for next time
    as background work."""
    log: list[tuple[str, float]] = []
    phrases = PhraseCache(tmp_path, "model")

    def synthesize(text: str, voice: str | None, background: bool = False) -> SlowStream:
        return SlowStream(log, text, 0.5)

    scheduler = DeadlineScheduler(synthesize, max_load=100.0)  # type: ignore[arg-type]
    scheduler.start()
    client, ended = PlayerVoiceClient(encode=False), Ended()
    speaker = GuildSpeaker(
        scheduler,
        lambda: client,  # type: ignore[arg-type,return-value]
        phrases=phrases,
        default_voice="alba",
        on_result=ended,
    )
    try:
        speaker.enqueue(Utterance("Alice said hello there", lead="Alice said"))
        first = (await ended.wait_for(1, 10))[0]
        assert [text for text, _ in log][:1] == ["Alice said hello there"]  # not cached yet
        assert first.first_frame_latency is not None and first.first_frame_latency > 0.45
        for _ in range(100):  # the lead alone is rendered in the background
            if phrases.get("alba", "Alice said") is not None:
                break
            await asyncio.sleep(0.05)
        assert "Alice said" in [text for text, _ in log]
        assert phrases.get("alba", "Alice said") is not None

        log.clear()
        speaker.enqueue(Utterance("Alice said how are you", lead="Alice said"))
        second = (await ended.wait_for(2, 10))[1]
        assert [text for text, _ in log] == ["how are you"]  # the model got only the body
        assert second.first_frame_latency is not None and second.first_frame_latency < 0.2
        assert second.underruns == 0  # 1 s of lead covers the model's 0.5 s: no gap
        assert second.frames_played == 50 + 50  # the lead's 1 s, then the body's 1 s
    finally:
        await speaker.close()
        await scheduler.close()


def test_the_phrase_cache_keeps_phrases_on_disk_privately_and_forgets_a_voice(
    tmp_path: Path,
) -> None:
    audio = np.linspace(-0.5, 0.5, 24_000, dtype=np.float32)
    cache = PhraseCache(tmp_path, "fingerprint")
    cache.put("voice-a", "Alice said", audio)
    cache.put("voice-b", "Alice said", audio * 0.5)
    cache.put("voice-a", "x" * 200, audio)  # not a short phrase: not kept
    fresh = PhraseCache(tmp_path, "fingerprint")  # after a restart: from disk
    assert np.array_equal(fresh.get("voice-a", "Alice said"), audio)  # type: ignore[arg-type]
    assert fresh.get("voice-a", "x" * 200) is None
    assert PhraseCache(tmp_path, "other model").get("voice-a", "Alice said") is None
    files = list((tmp_path / "fingerprint").rglob("*.npy"))
    assert len(files) == 2
    assert all(f.stat().st_mode & 0o777 == 0o600 for f in files)
    assert all(f.parent.stat().st_mode & 0o777 == 0o700 for f in files)
    fresh.forget_voice("voice-a")
    assert fresh.get("voice-a", "Alice said") is None
    assert PhraseCache(tmp_path, "fingerprint").get("voice-b", "Alice said") is not None
