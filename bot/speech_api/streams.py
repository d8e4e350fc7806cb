"""A request's speech as a job of the one deadline scheduler, within the service's limits.

The job is the speech service's (`source` "api" or "wyoming"): the scheduler admits it after
Discord's messages and only while rows stay free for them. Its sink counts as ahead only the
audio its client has not taken: a client that takes the audio as fast as it comes (a file, a
whole answer, a page that buffers) is never held back and gets its row at the model's full
speed; one that reads in real time (a player behind curl) leaves audio unread, and the
scheduler then keeps it a few seconds ahead like a Discord server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import numpy as np

from bot.services.speech_plan import PlanRefused, SpeechPlanner
from bot.speech_api.connections import Tally
from bot.speech_api.errors import BadRequest, Busy, SpeechFailed, TooMany
from bot.speech_api.limits import ClientLimits
from bot.speech_api.voices import ServiceVoice
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.model_errors import UnusableVoiceError
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.speech_jobs import SpeechJob
from bot.text.words import MessageFacts, Names, ReadOptions, announce

log = logging.getLogger(__name__)

MAX_INPUT = 4096  # characters of text, as OpenAI's API
SLOWEST_SPEED, FASTEST_SPEED = 0.25, 4.0  # what OpenAI's API takes (the planner clamps it)
STALL_S = 60.0  # no audio for this long: the stream is given up (a way out)
# audio a stream holds for a client that has not taken it: past it the client is not
# reading and its stream stops. Above the scheduler's read-ahead (20 s) and a unit, which
# a client that reads may have waiting; 2.9 MB of float32 at most
MAX_QUEUED_S = 30.0
SPOKEN_PER_INPUT = 4  # rendered words may be this much longer than the input (numbers)
NOTHING_TO_SAY = "nothing_to_say"  # the refusal's code for an input with no words


@dataclass
class StreamRecord:
    """A stream's end, for the metrics: by source, its first audio and its audio."""

    source: str
    first_audio_s: float | None
    audio_s: float
    outcome: str  # "spoken", "cancelled", "error", "stalled" (its client stopped reading)


def checked_speed(speed: float) -> float:
    """OpenAI's speeds, 0.25 to 4.0 (the planner clamps them to what the stretcher does)."""
    if not SLOWEST_SPEED <= speed <= FASTEST_SPEED:
        raise BadRequest(
            f"speed must be from {SLOWEST_SPEED} to {FASTEST_SPEED}",
            param="speed",
            code="invalid_value",
        )
    return speed


def spoken_words(text: str, language: str) -> str:
    """The text read as the bot reads chat (numbers, dates, units, emoji, links) in
    `language`, without Discord's parts (no names, no dictionary)."""
    options = ReadOptions(language=language, max_length=SPOKEN_PER_INPUT * MAX_INPUT)
    return announce(MessageFacts(content=text), Names(), options, say_name=False)


class ClientStalled(ConnectionResetError):
    """The client stopped reading its stream: the stream stopped, its connection dropped."""


class ServiceSink:
    """Where a service job's audio goes: a queue its client reads, bounded (MAX_QUEUED_S).

    Its audio ahead is what its client has not taken yet, nothing more. Whether a client
    listens is known only by how it reads: one that takes each chunk as it comes is not
    waiting on real time (a file, a whole answer), so nothing holds its job back; one that
    plays as it reads stops taking once its own buffers are full, its audio piles up here,
    and the scheduler keeps it only so far ahead (`Batcher.PACE_S`, `ahead_s`); one that
    stops reading leaves its job paused, not piling audio up. (Until issue 59 it counted as
    playing in real time from its first chunk: a whole file took as long as its speech.)"""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.chunks: asyncio.Queue[np.ndarray] = asyncio.Queue()
        self.first_at: float | None = None
        self.queued = 0  # samples in `chunks`
        self.overflowed = False
        self.on_overflow: Callable[[], None] | None = None

    @property
    def started(self) -> bool:
        return self.first_at is not None

    def queued_seconds(self) -> float:
        return self.queued / MODEL_RATE

    def buffered_seconds(self) -> float:
        return self.queued_seconds()

    def feed(self, chunk: np.ndarray) -> None:
        if self.overflowed:
            return
        if self.queued + len(chunk) > MAX_QUEUED_S * MODEL_RATE:
            self.overflowed = True  # the client is not reading: nothing more is kept
            if self.on_overflow is not None:  # (soon: not within the scheduler's own call)
                asyncio.get_running_loop().call_soon(self.on_overflow)
            return
        if self.first_at is None:
            self.first_at = self.clock()
        self.queued += len(chunk)
        self.chunks.put_nowait(np.array(chunk, dtype=np.float32))  # a copy: buffers are reused

    def taken(self, chunk: np.ndarray) -> np.ndarray:
        self.queued -= len(chunk)
        return chunk

    def prebuffer(self, seconds: float) -> None:
        pass  # the client buffers as it likes


class ServiceStream:
    """One request's audio: iterate for 24 kHz float32 chunks as they are made. Leaving the
    iteration early (the client went away) cancels the job."""

    def __init__(
        self,
        job: SpeechJob,
        sink: ServiceSink,
        scheduler: DeadlineScheduler,
        on_end: Callable[[StreamRecord], None],
        speed: float,
        on_stall: Callable[[], None] | None = None,
    ) -> None:
        self.job, self.sink, self.scheduler = job, sink, scheduler
        self.on_end = on_end
        self.on_stall = on_stall
        self.speed = speed  # as applied
        sink.on_overflow = self.stalled
        self.asked_at = job.requested_at
        self.first_audio_s: float | None = None
        self.audio_s = 0.0
        self._closed = False
        self._held: np.ndarray | None = None  # the first chunk, waited for by `first()`

    def close(self, outcome: str = "cancelled") -> None:
        """Stop the job if it runs; its end is counted once (also for a stream never read)."""
        if self._closed:
            return
        self._closed = True
        if not self.job.done.is_set():
            self.scheduler.cancel(self.job)
        self.on_end(StreamRecord(self.job.source, self.first_audio_s, self.audio_s, outcome))

    def stalled(self) -> None:
        """The client stopped reading (its audio over MAX_QUEUED_S, or a write it did not
        take in time): the job stops now, freeing its row, and the connection is dropped
        (`on_stall`: closing it would wait for the client to read what is buffered)."""
        self.close("stalled")
        if self.on_stall is not None:
            on_stall, self.on_stall = self.on_stall, None
            on_stall()

    async def first(self, voice: ServiceVoice) -> None:
        """Wait for the first audio before the client is answered: what fails before it
        (the voice's state cannot be loaded: a built-in voice this model cannot use, an
        operator's file that is not a voice; the model refusing the text) is a SpeechFailed
        with its status, not a 200 and a cut stream. The chunk is kept for the iteration."""
        try:
            self._held = await self._next()
            error = self.job.error if self._held is None else None
        except TimeoutError as timeout:
            error = timeout
        if error is None:
            return
        self.close("error")
        if isinstance(error, TimeoutError):
            raise Busy(
                "No audio came for a minute: the service is busy; try again later.",
                code="timeout",
                retry_after=10,
            )
        if isinstance(error, UnusableVoiceError):
            log.warning("the voice %s cannot be used: %s", voice.name, error)
            raise SpeechFailed(
                f"The voice {voice.name!r} cannot be used on this server now (the operator's "
                "log says why); choose another voice.",
                param="voice",
                code="voice_unavailable",
            )
        log.warning("a speech failed before its first audio: %s", error)
        raise SpeechFailed("The speech could not be made.", code="speech_failed")

    async def __aiter__(self) -> AsyncIterator[np.ndarray]:
        outcome = "cancelled"
        try:
            while True:
                chunk, self._held = self._held, None
                if chunk is None:
                    chunk = await self._next()
                if chunk is None:
                    break
                if self.first_audio_s is None:
                    self.first_audio_s = time.monotonic() - self.asked_at
                self.audio_s += len(chunk) / MODEL_RATE
                yield chunk
            if self.job.error is not None:
                outcome = "error"
                raise self.job.error
            outcome = "cancelled" if self.job.cancelled else "spoken"
        finally:
            self.close(outcome)

    async def _next(self) -> np.ndarray | None:
        """The next chunk; None once the job is done and its chunks read."""
        if self.sink.overflowed:
            raise ClientStalled("the client stopped reading")
        queue = self.sink.chunks
        while queue.empty():
            if self.job.done.is_set():
                return None
            getter = asyncio.ensure_future(queue.get())
            done = asyncio.ensure_future(self.job.done.wait())
            try:
                await asyncio.wait(
                    {getter, done}, timeout=STALL_S, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                done.cancel()
                if not getter.done():
                    getter.cancel()
            if getter.done() and not getter.cancelled():
                return self.sink.taken(getter.result())
            if not done.done() and not getter.done():
                raise TimeoutError("no audio came for a minute")
        return self.sink.taken(queue.get_nowait())


class SpeechStreams:
    """Opens service streams on the scheduler: the limits first, then the job."""

    def __init__(
        self,
        scheduler: DeadlineScheduler,
        planner: SpeechPlanner,
        limits: ClientLimits,
        queue_size: int,
        on_end: Callable[[StreamRecord], None] | None = None,
    ) -> None:
        """`planner`: each request's plan (its language's model, its voice, its rate), the
        same one Discord's speech asks beside it."""
        self.scheduler, self.planner, self.limits = scheduler, planner, limits
        self.queue_size = queue_size  # service streams waiting for room, at most
        self.on_end = on_end
        self.open_streams = 0
        self.live: set[ServiceStream] = set()
        self.stalled = Tally("streams whose clients stopped reading: %d stopped in the last minute")

    @property
    def languages(self) -> tuple[str, ...]:
        return self.planner.languages

    @property
    def default_language(self) -> str:
        return self.planner.language

    def count_request(self, client: str) -> None:
        """Count one request of `client` against its limits (TooMany past them): a Wyoming
        stream is one request, however many sentences it speaks."""
        self.limits.check(client, hold=False)

    def check_language(self, language: str | None) -> str:
        """The language asked for (none: the default), if offered: a BadRequest if not."""
        try:
            return self.planner.service_language(language)
        except PlanRefused as refused:
            raise BadRequest(str(refused), param="language", code=refused.reason) from None

    async def open(
        self,
        text: str,
        voice: ServiceVoice,
        *,
        language: str,
        speed: float,
        client: str,
        source: str,
        counted: bool = True,
        on_stall: Callable[[], None] | None = None,
    ) -> ServiceStream:
        """A stream for `text` (checked: at most MAX_INPUT characters), said in `language`.
        `counted` False: part of a request already counted against the client's requests a
        minute (`count_request`), as a Wyoming stream's sentences are. `on_stall`: how
        the client's connection is dropped when it stops reading."""
        asked_at = time.monotonic()
        self.limits.check(client, count=counted)  # holds one of the client's streams
        try:
            return await self._open(
                text, voice, language, speed, client, source, asked_at, on_stall
            )
        except BaseException:
            self.limits.closed(client)
            raise

    async def _open(
        self,
        text: str,
        voice: ServiceVoice,
        language: str,
        speed: float,
        client: str,
        source: str,
        asked_at: float,
        on_stall: Callable[[], None] | None,
    ) -> ServiceStream:
        """The stream, once the client's stream is held (given back by the caller if this
        raises, by the stream's end if not)."""
        if self.scheduler.choice.service_waiting() >= self.queue_size:
            raise TooMany(
                "The speech service is full right now; try again in a moment.",
                code="service_full",
                retry_after=2,
            )
        speed = checked_speed(speed)
        words = await asyncio.to_thread(spoken_words, text, language)
        if not words.strip():
            raise BadRequest(
                "There is nothing to say in this input.", param="input", code=NOTHING_TO_SAY
            )
        try:  # what the client asked, or refused: the service never falls back
            plan = await self.planner.service_plan(language, voice.spec, speed, client)
        except PlanRefused as refused:
            if refused.reason == "load_limit":
                param, code = "language", "rate_limit_exceeded"
            else:
                param, code = None, "service_full"
            raise TooMany(
                str(refused), param=param, code=code, retry_after=refused.retry_after
            ) from None
        sink = ServiceSink(self.scheduler.clock)
        rate = plan.rate
        job = SpeechJob.planned(words, plan, sink, asked_at, key=f"{source}:{client}")
        job.source = source
        self.open_streams += 1

        def ended(record: StreamRecord) -> None:
            self.limits.closed(client)
            self.open_streams -= 1
            self.live.discard(stream)
            if record.outcome == "stalled":
                self.stalled.note()
            if self.on_end is not None:
                with contextlib.suppress(Exception):
                    self.on_end(record)

        stream = ServiceStream(job, sink, self.scheduler, ended, rate, on_stall)
        self.live.add(stream)
        self.scheduler.submit(job)
        return stream
