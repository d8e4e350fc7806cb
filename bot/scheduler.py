"""Per-guild speech queues: each guild speaks its utterances in order on its voice client.

The shared engine runs one synthesis at a time; this first version keeps one FIFO per guild
and streams each utterance into the voice client as the model produces it. (The deadline
scheduler across guilds is a later issue.)
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import discord

from bot.audio import FrameConverter, StreamingSource
from bot.engine import SynthesisStream, TTSEngine, VoiceError

log = logging.getLogger(__name__)


class QueueFullError(Exception):
    pass


@dataclass
class Utterance:
    text: str
    voice: str | None = None
    requested_at: float = field(default_factory=time.monotonic)
    message_id: int | None = None  # the chat message it reads, if any (edits, deletions)


@dataclass
class UtteranceResult:
    """What happened to one utterance: the figures tests and stats read."""

    text: str
    voice: str | None  # the voice spec the engine was given (None: its default)
    model_samples: int  # 24 kHz samples the engine produced
    frames_played: int
    underruns: int
    first_frame_latency: float | None  # request -> first 20 ms frame handed to discord.py
    cancelled: bool
    error: str | None = None


VoiceClientGetter = Callable[[], discord.VoiceClient | None]


class GuildSpeaker:
    """One guild's queue and the task that speaks it."""

    def __init__(
        self, engine: TTSEngine, voice_client: VoiceClientGetter, max_queue: int = 20
    ) -> None:
        self._engine = engine
        self._voice_client = voice_client
        self.max_queue = max_queue
        self._queue: collections.deque[Utterance] = collections.deque()
        self._wakeup = asyncio.Event()
        self._current: tuple[SynthesisStream, StreamingSource] | None = None
        self.history: collections.deque[UtteranceResult] = collections.deque(maxlen=100)
        self.finished = asyncio.Event()  # set after each utterance ends (tests wait on it)
        self.last_active = time.monotonic()
        self._task = asyncio.create_task(self._run(), name="guild-speaker")

    @property
    def busy(self) -> bool:
        return self._current is not None or bool(self._queue)

    @property
    def queued(self) -> int:
        return len(self._queue)

    def enqueue(self, utterance: Utterance, *, drop_oldest: bool = False) -> int:
        """Queue an utterance; returns how many are ahead of it.

        When the queue is full: QueueFullError, or with `drop_oldest` the oldest waiting
        utterance makes room (chat reading: the newest messages matter most).
        """
        if len(self._queue) >= self.max_queue:
            if not drop_oldest:
                raise QueueFullError
            while len(self._queue) >= self.max_queue:
                dropped = self._queue.popleft()
                log.info("queue full: dropped the oldest waiting message %s", dropped.message_id)
        ahead = len(self._queue) + (1 if self._current else 0)
        self._queue.append(utterance)
        self.last_active = time.monotonic()
        self._wakeup.set()
        return ahead

    def drop(self, message_id: int) -> bool:
        """Forget a waiting utterance of a deleted message. False when none was waiting."""
        for utterance in self._queue:
            if utterance.message_id == message_id:
                self._queue.remove(utterance)
                return True
        return False

    def replace_text(self, message_id: int, text: str) -> bool:
        """Read the edited text of a message that is still waiting."""
        for utterance in self._queue:
            if utterance.message_id == message_id:
                utterance.text = text
                return True
        return False

    def clear_waiting(self) -> int:
        """Drop the waiting utterances; the current one goes on."""
        dropped = len(self._queue)
        self._queue.clear()
        return dropped

    @property
    def idle_seconds(self) -> float:
        return 0.0 if self.busy else time.monotonic() - self.last_active

    def skip(self) -> bool:
        """Stop the current utterance; the queue goes on. False when nothing was playing."""
        if self._current is None:
            return False
        stream, source = self._current
        stream.cancel()
        source.cancel()
        voice_client = self._voice_client()
        if voice_client is not None and voice_client.is_playing():
            voice_client.stop()
        return True

    def clear(self) -> int:
        """Stop the current utterance and drop the queue; returns how many were dropped."""
        dropped = len(self._queue) + (1 if self._current else 0)
        self._queue.clear()
        self.skip()
        return dropped

    async def close(self) -> None:
        self.clear()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        while True:
            while not self._queue:
                self._wakeup.clear()
                await self._wakeup.wait()
            utterance = self._queue.popleft()
            try:
                self.history.append(await self._speak(utterance))
            except Exception:  # one bad utterance must not end the guild's queue
                log.exception("speaking an utterance failed")
            finally:
                self._current = None
                self.last_active = time.monotonic()
                self.finished.set()

    async def _speak(self, utterance: Utterance) -> UtteranceResult:
        voice_client = self._voice_client()
        source = StreamingSource()
        stream = self._engine.stream(utterance.text, utterance.voice)
        self._current = (stream, source)
        if voice_client is None or not voice_client.is_connected():
            stream.cancel()
            return self._result(utterance, stream, source, error="not connected to voice")
        loop = asyncio.get_running_loop()
        played: asyncio.Future[Exception | None] = loop.create_future()

        def after(error: Exception | None) -> None:  # runs in the player thread
            loop.call_soon_threadsafe(lambda: played.done() or played.set_result(error))

        converter = FrameConverter()
        playing = False
        error: str | None = None
        try:
            async with stream:
                async for chunk in stream:
                    source.feed(converter.push(chunk))
                    if not playing and source.ready and not stream.cancelled:
                        voice_client.play(source, after=after)
                        playing = True
                source.feed(converter.flush())
        except Exception as exc:
            retry = utterance.voice and not stream.stats.samples and not stream.cancelled
            if isinstance(exc, VoiceError) and retry:
                log.warning("voice unusable (%s): speaking with the default voice", exc)
                return await self._speak(dataclasses.replace(utterance, voice=None))
            log.warning("synthesis failed: %s", exc)
            error = str(exc)
        source.finish()
        if not playing and source.buffered_frames and not stream.cancelled:
            voice_client.play(source, after=after)
            playing = True
        if playing:
            await played
        return self._result(utterance, stream, source, error=error)

    @staticmethod
    def _result(
        utterance: Utterance,
        stream: SynthesisStream,
        source: StreamingSource,
        error: str | None = None,
    ) -> UtteranceResult:
        first = source.first_frame_at
        return UtteranceResult(
            text=utterance.text,
            voice=utterance.voice,
            model_samples=stream.stats.samples,
            frames_played=source.frames_played,
            underruns=source.underruns,
            first_frame_latency=None if first is None else first - utterance.requested_at,
            cancelled=stream.stats.cancelled,
            error=error,
        )


class SpeechScheduler:
    """All guilds' speakers, sharing one engine."""

    def __init__(self, engine: TTSEngine, max_queue: int = 20) -> None:
        self._engine = engine
        self._max_queue = max_queue
        self._speakers: dict[int, GuildSpeaker] = {}

    def speaker(self, guild: discord.Guild) -> GuildSpeaker:
        speaker = self._speakers.get(guild.id)
        if speaker is None:
            getter = lambda: guild.voice_client  # noqa: E731
            speaker = GuildSpeaker(self._engine, getter, self._max_queue)  # type: ignore[arg-type]
            self._speakers[guild.id] = speaker
        return speaker

    @property
    def engine(self) -> TTSEngine:
        return self._engine

    def get(self, guild_id: int) -> GuildSpeaker | None:
        return self._speakers.get(guild_id)

    async def close(self) -> None:
        speakers, self._speakers = list(self._speakers.values()), {}
        await asyncio.gather(*(s.close() for s in speakers))
