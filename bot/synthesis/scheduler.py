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

A job names its language's model (`SpeechJob.language`); with `models`, a job picked while
that model is not loaded (unloaded since its message was planned) is set aside while the model
loads again, off the lanes, and comes back once it is loaded, or fails with the pool's reason
(`ModelsBusyError`): it is never spoken by another model.

Discord first: the speech service's streams (`SpeechJob.source` "api", "wyoming") wait behind
every Discord message waiting for room, and are admitted only while `reserved_rows` rows stay
free for Discord beside them (with the load estimate instead of a batch: while the load stays
under `SERVICE_LOAD_SHARE` of the most).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import numpy as np

from bot.core.supervisor import supervise
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.background_work import (
    BACKGROUND_LANES,
    BACKGROUND_UNIT_CHARS,
    BackgroundAdmission,
    BackgroundLimits,
)
from bot.synthesis.speech_jobs import (
    FIRST_UNIT_CHARS,
    CallInFlight,
    FileSink,
    Owner,
    RunCall,
    SpeechJob,
    Synthesize,
    cut_text,
)
from bot.synthesis.speed_estimate import SpeedEstimate

log = logging.getLogger(__name__)

MIN_UNIT_CHARS = 20
MIN_UNIT_AUDIO_S = 2.0  # a cut unit still gives this much speech
SPARE_MIN_SPEED = 1.5  # spare lanes run only while the model alone is this much faster than speech
SPARE_PREBUFFER_S = 0.3  # a new message started on a spare lane plays once this much is ready
# A message joining a busy batch plays once this much is ready: near capacity its buffer grows
# only by the step's margin, and a prefill or a slow step early on would break it up
BATCH_PREBUFFER_S = 0.3
READ_AHEAD_S = 20.0  # how far admitted jobs read ahead while others wait for room
KEPT_ROW_S = 10.0  # a row kept for a message's next part is let go after this (a way out)
SERVICE_LOAD_SHARE = 0.5  # unbatched, with rows reserved: the service's streams' share
T = TypeVar("T")


class Models(Protocol):
    """The languages' models as the scheduler sees them (`ModelPool`)."""

    def is_loaded(self, language: str | None) -> bool: ...

    def ensure(self, language: str) -> Awaitable[object]: ...


def rate_of(job: SpeechJob) -> float:
    """How many seconds of model audio the job's listener hears per second (its speaking
    rate; slower than 1x still costs a frame per step)."""
    return max(1.0, job.tempo.rate) if job.tempo is not None else 1.0


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
        capacity: Callable[..., int] | None = None,
        models: Models | None = None,
    ) -> None:
        """`capacity(rate, extra=0)`: for a batched engine, how many jobs may synthesize at
        once in real time, the fastest spoken at `rate` (measured live; `extra`: rows kept
        free, beyond the sizes seen live); admission then counts jobs instead of estimating
        their demand. `models`: loads again the model a job names when it is not loaded."""
        self._synthesize = synthesize
        self._models = models
        self._reloading: dict[SpeechJob, asyncio.Task[None]] = {}  # jobs set aside meanwhile
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
        self.estimate = SpeedEstimate()
        self._running: dict[SpeechJob, bool] = {}  # units in flight: crowded or not
        # rows kept for a message's next part (after a sound): its server's key -> since when
        self._kept_rows: dict[object, float] = {}
        # messages wait for room (`held_back`), kept by the loop for `slack` on other threads
        self._room_wanted = False
        self._run_call = run_call
        self.background = BackgroundAdmission(background_limits)
        # rows kept free for Discord's speech beside the speech service's streams (the bot
        # with SPEECH_PORT: 1; `serve` alone: 0)
        self.reserved_rows = 0

    # ---- admission (measured as the model runs: `estimate`) -------------------------------
    def remaining_audio(self, job: SpeechJob) -> float:
        per_char = self.estimate.seconds_per_char()
        left = sum(len(u) for u in job.units) * per_char
        if job.in_flight is not None:
            left += max(0.0, job.unit_chars * per_char - job.unit_audio)
        return left

    def demand(self, job: SpeechJob) -> float:
        """The share of one worker the job needs from now on to play without a gap: its
        remaining model audio within the time it takes to play (at its speaking rate)."""
        remaining = self.remaining_audio(job)
        if remaining <= 0.0:
            return 0.0
        slack = job.sink.buffered_seconds() if job.sink.started else self.first_audio_budget_s
        return remaining / (self.estimate.speed() * (slack + remaining / rate_of(job)))

    def live(self) -> list[SpeechJob]:
        return [j for j in self.jobs if not j.background]

    def load(self) -> float:
        return sum(self.demand(j) for j in self.live() if j.active)

    def _active(self) -> int:
        """Live jobs admitted and still synthesizing, and the rows kept for a message's next
        part: with a batch, the rows in use."""
        now = self.clock()
        for key, since in list(self._kept_rows.items()):
            if now - since > KEPT_ROW_S:
                del self._kept_rows[key]
        return sum(1 for j in self.live() if j.active) + len(self._kept_rows)

    def _fastest(self, job: SpeechJob | None = None) -> float:
        """The fastest speaking rate among the admitted live jobs (and `job`): the batch
        steps every row at once, so its fastest listener sets the pace it must keep."""
        jobs = [j for j in self.live() if j.active]
        return max(rate_of(j) for j in [*jobs, *([job] if job is not None else [])])

    def has_room(self, job: SpeechJob) -> bool:
        active = self._active()
        reserved = 0 if job.from_discord else self.reserved_rows
        if not active and not reserved:
            return True  # an idle model always takes the job, however slow it is
        if self.capacity is not None and reserved:
            # the kept rows count in the step times, not in the ramp (the batch never runs
            # them until Discord takes them); a model too slow for Discord and a stream beside
            # it never takes the stream
            fastest = self._fastest(job) if active else rate_of(job)
            return active + reserved < self.capacity(fastest, reserved)
        if not active:
            return True
        if self.capacity is not None:  # a batch: each job is a row, and rows cost alike
            return active < self.capacity(self._fastest(job))
        most = self.max_load * (SERVICE_LOAD_SHARE if reserved else 1.0)
        return self.load() + self.demand(job) <= most

    def at_capacity(self) -> bool:
        """A message asked for now would wait for room: the bot already speaks in as many
        servers as the model carries."""
        if self.capacity is not None:
            active = self._active()
            return bool(active) and active >= self.capacity(self._fastest())
        return self.held_back() > 0

    def held_back(self) -> int:
        """Messages waiting to start because the model has no room for them now."""
        waiting = [j for j in self.live() if not j.admitted and not j.cancelled and j.units]
        if not waiting or self.has_room(self._first_waiting(waiting, self.clock())):
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
        per_char = self.estimate.seconds_per_char()
        floor = max(MIN_UNIT_CHARS, int(MIN_UNIT_AUDIO_S / per_char))
        return max(floor, int(work_s * self.estimate.speed() / per_char))

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
        if waiting and self.has_room(first := self._first_waiting(waiting, now)):
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
        if busy < self.workers or self.estimate.speed() < SPARE_MIN_SPEED:
            return None
        candidates = [j for j in self.live() if self.eligible(j)]
        urgent = self._urgent(candidates)
        if urgent:
            return self._first(urgent, now)
        waiting = [j for j in candidates if not j.admitted]
        if waiting:
            first = self._first_waiting(waiting, now)
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

    def _first_waiting(self, jobs: list[SpeechJob], now: float) -> SpeechJob:
        """The next job to admit: Discord's before the speech service's, then by deadline."""
        return min(jobs, key=lambda j: (not j.from_discord, self.deadline(j, now), j.requested_at))

    def service_waiting(self) -> int:
        """The speech service's streams waiting for room (its queue, which it bounds)."""
        return sum(
            1 for j in self.live() if not j.from_discord and not j.admitted and not j.cancelled
        )

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
            head, rest = cut_text(text, limit)
            if rest:
                job.units.appendleft(rest)
            text = head
        return text

    # ---- jobs ------------------------------------------------------------------------------
    def submit(self, job: SpeechJob) -> None:
        if not job.units:
            job.finish()
            return
        if job.kept_row and self._kept_rows.pop(job.key, None) is not None:
            # the row its message kept: it goes on where its first words were let in, ahead of
            # messages waiting for room (a row once in is never sent away)
            job.admitted = True
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

    def release_row(self, key: object) -> None:
        """The message whose row was kept for its next part ended without it (skipped, failed)."""
        if self._kept_rows.pop(key, None) is not None:
            self._changed.set()

    def _retire(self, job: SpeechJob) -> None:
        if job.keeps_row and job.admitted and not job.cancelled and job.error is None:
            # its row passes to its message's next part, not to a message waiting for room
            self._kept_rows[job.key] = self.clock()
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
        self.background.done += 1

    async def background_speech(
        self, text: str, voice: str | None, owner: Owner, language: str | None = None
    ) -> np.ndarray:
        """Synthesize a whole text as background work (files, previews)."""
        self.background.admit(self._background_jobs(), owner)
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
        self.background.admit(self._background_jobs(), owner)
        job = SpeechJob(collections.deque(["(model call)"]), None, FileSink(), self.clock())
        job.owner, job.call, job.language = owner, fn, language
        await self._await_background(job)
        return job.result

    # ---- workers ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the worker tasks, supervised: one that dies is logged and restarted. Live
        workers and spare lanes take live units only; background lanes background work only."""
        if not self._tasks:
            lanes = ["live"] * self.workers + ["spare"] * self.spare_lanes
            lanes += ["background"] * self.background_lanes
            self._tasks = [
                supervise(functools.partial(self._work, lane), f"synthesis-{i}-{lane}")
                for i, lane in enumerate(lanes)
            ]

    async def close(self) -> None:
        for job in [*self.jobs, *self._reloading]:
            self.cancel(job)
        for task in self._reloading.values():
            task.cancel()
        await asyncio.gather(*self._reloading.values(), return_exceptions=True)
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
            if self._model_gone(job):
                self._set_aside(job)
                continue
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

    def _model_gone(self, job: SpeechJob) -> bool:
        """Whether the model the job names is not loaded. Checked just before its unit or call
        starts, with no await in between: a model cannot go unloaded in that gap."""
        return self._models is not None and not self._models.is_loaded(job.language)

    def _set_aside(self, job: SpeechJob) -> None:
        """Take the job out of the queue while its model loads again, off the lanes (seconds
        for a real model: another server's speech must not wait behind that)."""
        assert job.language is not None
        self.jobs.remove(job)
        self._reloading[job] = asyncio.create_task(
            self._reload(job, job.language), name=f"reload-{job.language}"
        )

    async def _reload(self, job: SpeechJob, language: str) -> None:
        assert self._models is not None
        log.info("the %s model was unloaded before its job: loading it again", language)
        try:
            await self._models.ensure(language)
        except Exception as error:  # refused (ModelsBusyError) or failed: the job says why
            log.warning("the %s model could not be loaded again: %s", language, error)
            job.error = error
            job.units.clear()
        finally:
            self._reloading.pop(job, None)
        if job.cancelled or job.error is not None:
            job.finish()
        else:
            self.jobs.append(job)  # as it was (admitted or not), picked again in turn
        self._changed.set()

    async def _run_call_job(self, job: SpeechJob) -> None:
        assert self._run_call is not None and job.call is not None
        job.admitted = True
        job.units.clear()
        job.in_flight = CallInFlight()  # type: ignore[assignment]  # a call: cancel() only
        started = self.clock()
        try:
            options: dict[str, Any] = {"background": True}
            if job.language is not None:
                options["language"] = job.language
            job.result = await self._run_call(job.call, **options)
        except Exception as error:
            job.error = error
        finally:
            self.estimate.busy_seconds += self.clock() - started
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
            self.estimate.speed(),
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
            self.estimate.record_unit(len(text), job.unit_audio, busy_s, complete, crowded)
            job.in_flight = None
            job.units_done += 1
            if job.cancelled or not job.units:
                self._retire(job)
            self._room_wanted = self.held_back() > 0
            self._changed.set()
