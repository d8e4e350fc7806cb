"""One synthesis scheduler for every server: units of speech, earliest deadline first.

Each utterance becomes a `SpeechJob`: its text cut into units (sentences or clauses, the first
one short so speech starts fast). Worker coroutines (one per engine worker) repeatedly pick
the unit whose server will run out of buffered audio first:

- a job that has not started playing is due at `requested_at + first_audio_budget_s`;
- a playing job is due when its buffer runs dry: `now + buffered seconds`;
- a job with `ahead_s` or more buffered waits, leaving the model to others;
- a job that has not started is admitted, the longest waiting first (counted from when its
  server's voice channel became free for it), only while the model has room for it
  (see `DeadlineScheduler`), so an overload delays new speech instead of breaking it up;
- a unit is cut shorter while another playing server has little buffered, since a unit in
  flight cannot be interrupted.

So a new request waits for at most one unit per worker, and busy servers keep just enough
audio ahead instead of synthesizing whole paragraphs while others wait.

It is also the one admission point for background model work (`/tts` files, previews,
clones, voice rebuilds): those run on lanes of their own (`background_lanes`, the engine's
background thread), never on a live worker or a spare lane, so a live unit never waits behind
one; in short units, within per-member, per-server and overall limits (`BackgroundLimits`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import numpy as np

from bot.core.errors import UserError
from bot.core.supervisor import supervise
from bot.i18n.translate import tr
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.tempo import Tempo

log = logging.getLogger(__name__)

FIRST_UNIT_CHARS = 60
UNIT_CHARS = 180
MIN_UNIT_CHARS = 20
MIN_UNIT_AUDIO_S = 2.0  # a cut unit still gives this much speech
SPARE_MIN_SPEED = 1.5  # spare lanes run only while the model alone is this much faster than speech
SPARE_PREBUFFER_S = 0.3  # a new message started on a spare lane plays once this much is ready
# A message joining a busy batch plays once this much is ready: near capacity its buffer grows
# only by the step's margin, and a prefill or a slow step early on would break it up
BATCH_PREBUFFER_S = 0.3
READ_AHEAD_S = 20.0  # how far admitted jobs read ahead while others wait for room
DEFAULT_SPEED = 2.0  # audio seconds per second of work, until measured
DEFAULT_SECONDS_PER_CHAR = 0.07  # speech runs about 14 characters a second
MIN_SPEED = 0.05  # a model that gave no audio yet is slow, not infinitely slow
BACKGROUND_UNIT_CHARS = FIRST_UNIT_CHARS  # short units: a live unit never waits long
T = TypeVar("T")
Owner = tuple[int, int | None]  # (member, server; None for a DM)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?…])\s+")


def _cut(text: str, limit: int) -> tuple[str, str]:
    """Split `text` near `limit`: after a clause mark if there is one late enough, else at a
    space; never inside a word unless it has no space at all."""
    window = text[: limit + 1]
    for marks in (",;:", " "):
        at = max(window.rfind(m) for m in marks)
        if at >= limit // 3:
            return text[: at + 1].strip(), text[at + 1 :].strip()
    return text[:limit], text[limit:]


def split_units(
    text: str, first_chars: int = FIRST_UNIT_CHARS, unit_chars: int = UNIT_CHARS
) -> list[str]:
    """Sentences (long ones cut at clauses), with a short first unit for a fast start."""
    units: list[str] = []
    for sentence in _SENTENCE_SPLIT.split(text.strip()):
        while len(sentence) > unit_chars:
            head, sentence = _cut(sentence, unit_chars)
            units.append(head)
        if sentence:
            units.append(sentence)
    if units and len(units[0]) > first_chars:
        head, rest = _cut(units[0], first_chars)
        units[:1] = [u for u in (head, rest) if u]
    return units


class Stream(Protocol):
    """What a synthesizer returns: an async iterator of chunks that can be cancelled."""

    def __aiter__(self) -> AsyncIterator[np.ndarray]: ...

    def cancel(self) -> None: ...

    @property
    def paced_seconds(self) -> float:
        """How long a batch held its frames back (listener far enough ahead): not work."""
        ...


# (text, voice, *, background=, language=, tempo=, last=) -> Stream
Synthesize = Callable[..., Stream]
RunCall = Callable[..., Awaitable[Any]]  # (fn, *, background=, language=) -> fn(model)
BACKGROUND_LANES = 1  # background jobs in flight at once (the engine has one thread for them)


class BusyError(UserError):
    """Too much background work is waiting for this member, server or bot."""


@dataclass(frozen=True)
class BackgroundLimits:
    per_member: int = 2
    per_server: int = 4  # DMs count together as one server
    total: int = 32


class FileSink:
    """Collects a background job's audio (a `/tts` file, a preview): never plays."""

    started = False

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []

    def buffered_seconds(self) -> float:
        return 0.0

    def feed(self, chunk: np.ndarray) -> None:
        self.chunks.append(chunk)

    def prebuffer(self, seconds: float) -> None:
        pass

    def audio(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)


class Sink(Protocol):
    """Where a job's audio goes (the guild's playback buffer)."""

    @property
    def started(self) -> bool: ...

    def buffered_seconds(self) -> float: ...

    def feed(self, chunk: np.ndarray) -> None: ...

    def prebuffer(self, seconds: float) -> None:
        """Hold back the start of playback until this much audio is buffered."""


@dataclass(eq=False)
class SpeechJob:
    units: collections.deque[str]
    voice: str | None
    sink: Sink
    requested_at: float
    key: object = None  # the guild, for logs and fairness figures
    cancelled: bool = False
    error: BaseException | None = None
    in_flight: Stream | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    units_done: int = 0
    admitted: bool = False  # its first unit was picked: from now on it is kept fed
    free_at: float | None = None  # when its server's voice channel became free for it
    unit_chars: int = 0  # the unit in flight: its length
    unit_audio: float = 0.0  # and the audio it gave so far
    owner: Owner | None = None  # set for background work: whose request it is
    call: Callable[[Any], Any] | None = None  # background work that is not speech
    result: Any = None  # what `call` returned
    language: str | None = None  # the model that speaks it (None: the default one)
    tempo: Tempo | None = None  # its speaking rate's stretcher, across all its units

    @property
    def background(self) -> bool:
        return self.owner is not None

    @classmethod
    def for_text(cls, text: str, voice: str | None, sink: Sink, requested_at: float,
                 key: object = None) -> SpeechJob:  # fmt: skip
        return cls(collections.deque(split_units(text)), voice, sink, requested_at, key)

    @property
    def active(self) -> bool:
        """Admitted and still has text to synthesize."""
        return self.admitted and not self.cancelled and bool(self.units or self.in_flight)

    def finish(self) -> None:
        self.done.set()


class DeadlineScheduler:
    """Picks the next unit across all jobs; `workers` units are synthesized at a time.

    Admission: a job waiting for its first unit (a new request, or a server's next message)
    starts only while the model has room for it. With a batched engine, room is a row: fewer
    active jobs than the rows the live step times say stay in real time (`capacity`). Without
    one, the work every admitted job still needs, as a share of the time until its audio would
    run out, plus the new job's, stays under `max_load` (0.9 per worker). So an overload makes
    speech start later, in arrival order across servers, instead of making every server
    stutter.
    """

    def __init__(
        self,
        synthesize: Synthesize,
        *,
        workers: int = 1,
        clock: Callable[[], float] = time.monotonic,
        ahead_s: float = 5.0,
        first_audio_budget_s: float = 0.5,
        low_water_s: float = 1.5,
        max_load: float | None = None,
        spare_lanes: int = 0,
        run_call: RunCall | None = None,
        background_limits: BackgroundLimits | None = None,
        background_lanes: int = BACKGROUND_LANES,
        capacity: Callable[[], int] | None = None,
    ) -> None:
        """`capacity`: for a batched engine, how many jobs may synthesize at once in real time
        (measured live); admission then counts jobs instead of estimating their demand."""
        self._synthesize = synthesize
        self.capacity = capacity
        self.workers = workers
        self.spare_lanes = spare_lanes
        self.background_lanes = background_lanes
        self.clock = clock
        self.ahead_s = ahead_s
        self.first_audio_budget_s = first_audio_budget_s
        self.low_water_s = low_water_s
        self.max_load = 0.9 * workers if max_load is None else max_load
        self.jobs: list[SpeechJob] = []
        self._changed = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.busy_seconds = 0.0  # synthesis wall time, summed over workers
        self.audio_seconds = 0.0  # audio produced
        # recent units, older ones fading (x0.9 a unit): the estimates follow voice changes
        self._recent_busy = self._recent_audio = 0.0
        self._recent_chars = self._recent_chars_audio = 0.0
        self._running: dict[SpeechJob, bool] = {}  # units in flight: crowded or not
        # messages wait for room (`held_back`), kept by the loop for `slack` on other threads
        self._room_wanted = False
        self._run_call = run_call
        self.background_limits = background_limits or BackgroundLimits()
        self.background_done = 0
        self.background_refused = 0

    # ---- estimates (measured as the model runs) -------------------------------------------
    def record_unit(
        self, chars: int, audio_s: float, busy_s: float, complete: bool, crowded: bool = False
    ) -> None:
        """Take one unit's figures into the estimates: the speed only from units that ran
        without a spare lane beside them (so it stays the speed of the workers alone), the
        speech rate only from units synthesized to their end."""
        self.busy_seconds += busy_s
        self.audio_seconds += audio_s
        if not crowded:
            self._recent_busy = 0.9 * self._recent_busy + busy_s
            self._recent_audio = 0.9 * self._recent_audio + audio_s
        if complete:
            self._recent_chars = 0.9 * self._recent_chars + chars
            self._recent_chars_audio = 0.9 * self._recent_chars_audio + audio_s

    def speed(self) -> float:
        """Audio seconds one worker makes per second of work."""
        if self._recent_busy < 0.5:
            return DEFAULT_SPEED
        return max(MIN_SPEED, self._recent_audio / self._recent_busy)

    def seconds_per_char(self) -> float:
        """Seconds of speech per character of text."""
        if self._recent_chars < 30:
            return DEFAULT_SECONDS_PER_CHAR
        return self._recent_chars_audio / self._recent_chars

    def remaining_audio(self, job: SpeechJob) -> float:
        per_char = self.seconds_per_char()
        left = sum(len(u) for u in job.units) * per_char
        if job.in_flight is not None:
            left += max(0.0, job.unit_chars * per_char - job.unit_audio)
        return left

    def demand(self, job: SpeechJob) -> float:
        """The share of one worker the job needs from now on to play without a gap."""
        remaining = self.remaining_audio(job)
        if remaining <= 0.0:
            return 0.0
        slack = job.sink.buffered_seconds() if job.sink.started else self.first_audio_budget_s
        return remaining / (self.speed() * (slack + remaining))

    def live(self) -> list[SpeechJob]:
        return [j for j in self.jobs if not j.background]

    def load(self) -> float:
        return sum(self.demand(j) for j in self.live() if j.active)

    def _active(self) -> int:
        """Live jobs admitted and still synthesizing: with a batch, the rows in use."""
        return sum(1 for j in self.live() if j.active)

    def has_room(self, job: SpeechJob) -> bool:
        active = self._active()
        if not active:
            return True  # an idle model always takes the job, however slow it is
        if self.capacity is not None:  # a batch: each job is a row, and rows cost alike
            return active < self.capacity()
        return self.load() + self.demand(job) <= self.max_load

    def at_capacity(self) -> bool:
        """A message asked for now would wait for room: the bot already speaks in as many
        servers as the model carries."""
        if self.capacity is not None:
            return self._active() >= self.capacity()
        return self.held_back() > 0

    def held_back(self) -> int:
        """Messages waiting to start because the model has no room for them now."""
        waiting = [j for j in self.live() if not j.admitted and not j.cancelled and j.units]
        if not waiting or self.has_room(self._first(waiting, self.clock())):
            return 0
        return len(waiting)

    def unit_limit(self, job: SpeechJob) -> int | None:
        """How long `job`'s next unit may be so that no other playing server runs dry while the
        worker is busy with it (units cannot be interrupted); None: any length."""
        others = [
            j.sink.buffered_seconds()
            for j in self.jobs
            if j is not job and j.active and j.sink.started
        ]
        if not others:
            return None
        work_s = 0.5 * min(others)
        per_char = self.seconds_per_char()
        floor = max(MIN_UNIT_CHARS, int(MIN_UNIT_AUDIO_S / per_char))
        return max(floor, int(work_s * self.speed() / per_char))

    # ---- the choice (pure: unit-testable with a fake clock) --------------------------------
    def deadline(self, job: SpeechJob, now: float) -> float:
        """When the job needs audio. A job not admitted yet waits from when its server's
        channel became free (its request, or the end of the server's previous message), so a
        busy server's next message does not go before a quiet server's, nor starve."""
        if not job.admitted and job.free_at is not None:
            return job.free_at + self.first_audio_budget_s
        if not job.sink.started:
            return job.requested_at + self.first_audio_budget_s
        return now + job.sink.buffered_seconds()

    def eligible(self, job: SpeechJob) -> bool:
        if job.cancelled or not job.units or job.in_flight is not None:
            return False
        return job.sink.buffered_seconds() < self.ahead_s

    def pick(self, now: float) -> SpeechJob | None:
        """The next unit's job: live speech first (`pick_live`), else background work, the
        oldest first."""
        job = self.pick_live(now)
        if job is not None:
            return job
        return self.pick_background()

    def pick_background(self) -> SpeechJob | None:
        """Background work for a background lane, the oldest first."""
        background = [j for j in self.jobs if j.background and self.eligible(j)]
        return min(background, key=lambda j: j.requested_at) if background else None

    def pick_live(self, now: float) -> SpeechJob | None:
        """Order: admitted jobs about to run dry (under `low_water_s`), then the most overdue
        waiting job if there is room for it, then the admitted jobs by how soon they run dry."""
        candidates = [j for j in self.live() if self.eligible(j)]
        if not candidates:
            return None
        admitted = [j for j in candidates if j.admitted]
        urgent = self._urgent(admitted)
        if urgent:
            return self._first(urgent, now)
        waiting = [j for j in candidates if not j.admitted]
        if waiting and self.has_room(first := self._first(waiting, now)):
            return first
        if admitted:
            return self._first(admitted, now)
        if waiting:  # no room for them: read further ahead, which lowers the admitted jobs'
            return self._read_ahead(now)  # demand and so makes room sooner
        return None

    def _read_ahead(self, now: float) -> SpeechJob | None:
        ahead = [
            j
            for j in self.live()
            if j.admitted
            and j.units
            and not j.cancelled
            and j.in_flight is None
            and j.sink.buffered_seconds() < READ_AHEAD_S
        ]
        return self._first(ahead, now) if ahead else None

    def pick_spare(self, now: float) -> SpeechJob | None:
        """A unit for a spare lane: only while every worker is busy (a unit cannot be
        interrupted), only what cannot wait for them (a playing server about to run dry, a
        new request past its first-audio budget), and only while the model alone is fast
        enough to share the CPU (two units at once run at about half speed each)."""
        busy = sum(1 for j in self.live() if j.in_flight is not None)
        if busy < self.workers or self.speed() < SPARE_MIN_SPEED:
            return None
        candidates = [j for j in self.live() if self.eligible(j)]
        urgent = self._urgent(candidates)
        if urgent:
            return self._first(urgent, now)
        waiting = [j for j in candidates if not j.admitted]
        if waiting:
            first = self._first(waiting, now)
            if self.deadline(first, now) <= now and self.has_room(first):
                return first
        return None

    def _urgent(self, jobs: list[SpeechJob]) -> list[SpeechJob]:
        """Admitted jobs playing with less than `low_water_s` left."""
        return [
            j
            for j in jobs
            if j.admitted and j.sink.started and j.sink.buffered_seconds() < self.low_water_s
        ]

    def _first(self, jobs: list[SpeechJob], now: float) -> SpeechJob:
        return min(jobs, key=lambda j: (self.deadline(j, now), j.requested_at))

    def wake_in(self) -> float:
        """How long until a waiting job's buffer falls under `ahead_s` (capped at 0.1 s, which
        also re-checks room for new jobs as playing ones run out of text)."""
        waiting = [
            j.sink.buffered_seconds() - self.ahead_s + 0.01
            for j in self.jobs
            if j.units and not j.cancelled and j.in_flight is None
        ]
        return min([0.1, *[w for w in waiting if w > 0]])

    def take_unit(self, job: SpeechJob, spare: bool = False) -> str:
        """The job's next unit, cut shorter when other servers' buffers are low (and on a
        spare lane, which should be free again soon)."""
        text = job.units.popleft()
        if self.capacity is not None and not job.background:
            # A batch gives the job a row of its own: the whole message goes as one stream,
            # which the batch prefills chunk by chunk. Units would only add a gap at each
            # boundary, where the next unit waits for its prompt with the buffer nearly empty.
            text = " ".join([text, *job.units])
            job.units.clear()
            return text
        limit = self.unit_limit(job)
        if job.background:
            limit = min(limit or BACKGROUND_UNIT_CHARS, BACKGROUND_UNIT_CHARS)
        if spare:
            limit = min(limit or FIRST_UNIT_CHARS, FIRST_UNIT_CHARS)
        if limit is not None and len(text) > limit:
            head, rest = _cut(text, limit)
            if rest:
                job.units.appendleft(rest)
            text = head
        return text

    # ---- jobs ------------------------------------------------------------------------------
    def submit(self, job: SpeechJob) -> None:
        if not job.units:
            job.finish()
            return
        self.jobs.append(job)
        self._room_wanted = self.held_back() > 0
        self._changed.set()

    def slack(self, job: SpeechJob) -> float:
        """How much audio `job`'s server has ahead, for the batch's pace (read on its
        thread): none while messages wait for room, so the admitted ones read ahead and
        make room sooner."""
        return 0.0 if self._room_wanted else job.sink.buffered_seconds()

    def cancel(self, job: SpeechJob) -> None:
        """Drop the job's remaining units and stop the unit in flight (its stop event)."""
        job.cancelled = True
        job.units.clear()
        if job.in_flight is not None:
            job.in_flight.cancel()
        else:
            self._retire(job)
        self._changed.set()

    def _retire(self, job: SpeechJob) -> None:
        if job in self.jobs:
            self.jobs.remove(job)
        job.finish()

    @property
    def queued_units(self) -> int:
        return sum(len(j.units) for j in self.live())

    # ---- background work -------------------------------------------------------------------
    def _background_jobs(self) -> list[SpeechJob]:
        return [j for j in self.jobs if j.background and not j.cancelled]

    def background_waiting(self) -> int:
        """Background jobs not finished (files, previews, clones)."""
        return len(self._background_jobs())

    def _admit_background(self, owner: Owner) -> None:
        limits, jobs = self.background_limits, self._background_jobs()
        mine = sum(1 for j in jobs if j.owner is not None and j.owner[0] == owner[0])
        server = sum(1 for j in jobs if j.owner is not None and j.owner[1] == owner[1])
        if mine >= limits.per_member:
            refusal = tr(
                "You already have {count} requests waiting. Please wait for them to finish.",
                count=mine,
            )
        elif server >= limits.per_server:
            where = tr("this server") if owner[1] is not None else tr("direct messages")
            refusal = tr(
                "{count} requests from {where} are waiting. Please try again shortly.",
                count=server,
                where=where,
            )
        elif len(jobs) >= limits.total:
            refusal = tr("I'm busy with many requests right now. Please try again in a minute.")
        else:
            return
        self.background_refused += 1
        raise BusyError(refusal)

    async def _await_background(self, job: SpeechJob) -> None:
        self.submit(job)
        try:
            await job.done.wait()
        finally:
            if not job.done.is_set():  # the asker went away: free the model
                self.cancel(job)
        if job.error is not None:
            raise job.error
        if job.cancelled:  # the bot is shutting down: no half a file
            raise RuntimeError("background work was cancelled")
        self.background_done += 1

    async def background_speech(
        self, text: str, voice: str | None, owner: Owner, language: str | None = None
    ) -> np.ndarray:
        """Synthesize a whole text as background work (files, previews)."""
        self._admit_background(owner)
        sink = FileSink()
        job = SpeechJob.for_text(text, voice, sink, self.clock(), key=owner[1])
        job.owner, job.language = owner, language
        await self._await_background(job)
        return sink.audio()

    async def background_call(
        self, fn: Callable[[Any], T], owner: Owner, language: str | None = None
    ) -> T:
        """Run `fn(model)` as background work (a clone, a voice rebuild), with the model of
        `language` (None: the default one)."""
        if self._run_call is None:
            raise RuntimeError("this scheduler was made without a way to run model calls")
        self._admit_background(owner)
        job = SpeechJob(collections.deque(["(model call)"]), None, FileSink(), self.clock())
        job.owner, job.call, job.language = owner, fn, language
        await self._await_background(job)
        return job.result  # type: ignore[no-any-return]

    # ---- workers ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker tasks, supervised: one that dies is logged and restarted. Live
        workers and spare lanes take live units only; background lanes background work only."""
        if not self._tasks:
            lanes = ["live"] * self.workers + ["spare"] * self.spare_lanes
            lanes += ["background"] * self.background_lanes
            self._tasks = [
                supervise(lambda lane=lane: self._work(lane), f"synthesis-{i}-{lane}")
                for i, lane in enumerate(lanes)
            ]

    async def close(self) -> None:
        for job in list(self.jobs):
            self.cancel(job)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    def _pick_for(self, lane: str) -> SpeechJob | None:
        if lane == "spare":
            return self.pick_spare(self.clock())
        if lane == "background":
            return self.pick_background()
        return self.pick_live(self.clock())

    async def _next(self, lane: str) -> SpeechJob:
        while True:
            self._room_wanted = self.held_back() > 0
            job = self._pick_for(lane)
            if job is not None:
                return job
            self._changed.clear()
            # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.wake_in()):
                    await self._changed.wait()

    async def _work(self, lane: str = "live") -> None:
        while True:
            job = await self._next(lane)
            try:
                if job.call is not None:
                    await self._run_call_job(job)
                else:
                    await self._run_unit(job, lane == "spare")
            except Exception as error:  # that job fails; the worker and other jobs go on
                log.exception("a synthesis unit failed")
                job.error = job.error or error
                job.units.clear()
                job.in_flight = None
                self._running.pop(job, None)
                self._retire(job)
                self._changed.set()

    async def _run_call_job(self, job: SpeechJob) -> None:
        assert self._run_call is not None and job.call is not None
        job.admitted = True
        job.units.clear()
        job.in_flight = _CallInFlight()  # type: ignore[assignment]
        started = self.clock()
        try:
            options: dict[str, Any] = {"background": True}
            if job.language is not None:
                options["language"] = job.language
            job.result = await self._run_call(job.call, **options)
        except Exception as error:
            job.error = error
        finally:
            self.busy_seconds += self.clock() - started
            job.in_flight = None
            self._retire(job)
            self._changed.set()

    async def _run_unit(self, job: SpeechJob, spare: bool) -> None:
        busy = any(j.active for j in self.live() if j is not job)
        job.admitted = True
        text = self.take_unit(job, spare)
        if spare and not job.sink.started:  # two units share the CPU: absorb the jitter
            job.sink.prebuffer(SPARE_PREBUFFER_S)
        elif self.capacity is not None and busy:
            # also a message chained after the one its server is playing: it starts when that
            # one ends, and near capacity its synthesis may have begun only just before.
            # And the messages that began a moment ago on an idle batch, with 60 ms: this
            # one's prompt, prefilled between their first steps, would break them up. (A sink
            # that is already playing ignores this.)
            for other in self.live():
                if other is job or other.active:
                    other.sink.prebuffer(BATCH_PREBUFFER_S)
        log.debug(
            "unit of %d chars for %s%s; buffered: %s; speed %.1fx",
            len(text), job.key, " on a spare lane" if spare else "",
            ", ".join(f"{j.key}: {j.sink.buffered_seconds():.1f} s" for j in self.jobs),
            self.speed(),
        )  # fmt: skip
        options: dict[str, Any] = {"background": True} if job.background else {}
        if self.capacity is not None and not job.background:  # a batch: it paces its steps
            options["slack"] = functools.partial(self.slack, job)
        if job.language is not None:
            options["language"] = job.language
        if job.tempo is not None:  # one stretcher for the whole job: seamless unit joins
            options["tempo"], options["last"] = job.tempo, not job.units
        stream = self._synthesize(text, job.voice, **options)
        job.in_flight, job.unit_chars, job.unit_audio = stream, len(text), 0.0
        self._running[job] = False  # crowded: more units at once than workers
        if len(self._running) > self.workers:
            self._running = dict.fromkeys(self._running, True)
        started, complete = self.clock(), False
        try:
            async for chunk in stream:
                if not job.cancelled:
                    job.sink.feed(chunk)
                    job.unit_audio += len(chunk) / MODEL_RATE
            complete = not job.cancelled
        except Exception as error:  # the job fails; other jobs go on
            log.warning("synthesis of a unit failed: %s", error)
            job.error = error
            job.units.clear()
        finally:
            stream.cancel()  # a no-op when it ended; stops the model when abandoned
            crowded = self._running.pop(job, False)
            busy_s = max(0.0, self.clock() - started - stream.paced_seconds)  # waits: not work
            self.record_unit(len(text), job.unit_audio, busy_s, complete, crowded)
            job.in_flight = None
            job.units_done += 1
            if job.cancelled or not job.units:
                self._retire(job)
            self._room_wanted = self.held_back() > 0
            self._changed.set()


class _CallInFlight:
    """Marks a model call in flight (`SpeechJob.in_flight`); it cannot be interrupted."""

    def cancel(self) -> None:
        pass
