"""One synthesis scheduler for every server: units of speech, earliest deadline first.

Each utterance becomes a `SpeechJob`: its text cut into units (sentences or clauses, the first
one short so speech starts fast). Worker coroutines (one per engine worker) repeatedly take the
unit `UnitChoice` picks (unit_choice.py: the earliest deadline, admission while the model has
room, Discord before the speech service), so a new request waits for at most one unit per
worker, and busy servers keep just enough audio ahead instead of synthesizing whole paragraphs
while others wait.

It is also the one admission point for background model work (`/tts` files, previews:
`background_speech`; clones, voice rebuilds: `background_call`, a `ModelCall`): those run on
lanes of their own (`background_lanes`, the engine's background thread), never on a live
worker or a spare lane, so a live unit never waits behind one; in short units, within
per-member, per-server and overall limits (`BackgroundLimits`).

A job names its language's model (`SpeechJob.language`); with `models`, a job picked while
that model is not loaded (unloaded since its message was planned) is set aside while the model
loads again, off the lanes, and comes back once it is loaded, or fails with the pool's reason
(`ModelsBusyError`): it is never spoken by another model.
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
    BackgroundAdmission,
    BackgroundLimits,
    ModelCall,
)
from bot.synthesis.model_errors import StreamRefused
from bot.synthesis.speech_jobs import FileSink, Owner, RunCall, SpeechJob, Synthesize
from bot.synthesis.speed_estimate import SpeedEstimate
from bot.synthesis.unit_choice import UnitChoice

log = logging.getLogger(__name__)

SPARE_PREBUFFER_S = 0.3  # a new message started on a spare lane plays once this much is ready
# A message joining a busy batch plays once this much is ready: near capacity its buffer grows
# only by the step's margin, and a prefill or a slow step early on would break it up
BATCH_PREBUFFER_S = 0.3
# The watchdog: a unit that gives no audio for this long ends with an error and frees its
# lane, whatever kept it (a stream a worker never received, a bug of the same kind): one
# lost stream must never silence a server for good. A live unit's first audio comes in under a
# second, and later chunks every frame; a worker's model load (minutes) is never waited on here.
STALL_S = 60.0
T = TypeVar("T")
Work = SpeechJob | ModelCall


class Models(Protocol):
    """The languages' models as the scheduler sees them (`ModelPool`)."""

    def is_loaded(self, language: str | None) -> bool: ...

    def ensure(self, language: str) -> Awaitable[object]: ...


class DeadlineScheduler:
    """Runs the units `choice` picks: `workers` at a time on live lanes, with `spare_lanes`
    for what cannot wait and `background_lanes` for background work; jobs come in with
    `submit` and go with `cancel` or their last unit."""

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
        stall_s: float = STALL_S,
    ) -> None:
        """`capacity`: see `UnitChoice`. `models`: loads again the model a job names when it
        is not loaded. `stall_s`: a unit with no audio for this long fails (see `STALL_S`)."""
        self._synthesize = synthesize
        self.stall_s = stall_s
        self._run_call = run_call
        self._models = models
        self._reloading: dict[Work, asyncio.Task[None]] = {}  # work set aside meanwhile
        self.workers = workers
        self.spare_lanes = spare_lanes
        self.background_lanes = background_lanes
        self.clock = clock
        self.jobs: list[SpeechJob] = []
        self.calls: list[ModelCall] = []
        self.estimate = SpeedEstimate()
        self.choice = UnitChoice(
            self.jobs,
            self.calls,
            self.estimate,
            clock,
            workers=workers,
            ahead_s=ahead_s,
            first_audio_budget_s=first_audio_budget_s,
            low_water_s=low_water_s,
            max_load=0.9 * workers if max_load is None else max_load,
            capacity=capacity,
        )
        self.background = BackgroundAdmission(background_limits)
        self._changed = asyncio.Event()
        # The idle lanes of a kind line up: one looks for work at a time and the next takes
        # over once it has some. Woken all at once at every change, the others only found
        # nothing more, each after a look at every job (a batch of 16 rows in 8 pipelines
        # has 128 live lanes).
        self._idle: dict[str, asyncio.Lock] = collections.defaultdict(asyncio.Lock)
        self._tasks: list[asyncio.Task[None]] = []
        self._running: dict[SpeechJob, bool] = {}  # units in flight: crowded or not

    # ---- jobs ------------------------------------------------------------------------------
    def submit(self, job: SpeechJob) -> None:
        if not job.units:
            job.finish()
            return
        if job.kept_row and self.choice.kept_rows.pop(job.key, None) is not None:
            # the row its message kept: it goes on where its first words were let in, ahead of
            # messages waiting for room (a row once in is never sent away)
            job.admitted = True
        self.jobs.append(job)
        self.choice.note_room()
        self._changed.set()

    def cancel(self, work: Work) -> None:
        """Drop the job's remaining units and stop the unit in flight (its stop event); a
        model call not started yet is dropped, one running ends first."""
        work.cancelled = True
        if isinstance(work, ModelCall):
            if not work.running:
                self._retire(work)
        else:
            work.units.clear()
            if work.in_flight is not None:
                work.in_flight.cancel()
            else:
                self._retire(work)
        self._changed.set()

    def release_row(self, key: object) -> None:
        """The message whose row was kept for its next part ended without it (skipped, failed)."""
        if self.choice.kept_rows.pop(key, None) is not None:
            self._changed.set()

    def _retire(self, work: Work) -> None:
        if isinstance(work, ModelCall):
            if work in self.calls:
                self.calls.remove(work)
        else:
            if work.keeps_row and work.admitted and not work.cancelled and work.error is None:
                # its row passes to its message's next part, not to a message waiting for room
                self.choice.kept_rows[work.key] = self.clock()
            if work in self.jobs:
                self.jobs.remove(work)
        work.finish()

    def at_capacity(self) -> bool:
        """A message asked for now would wait for room (`UnitChoice.at_capacity`)."""
        return self.choice.at_capacity()

    @property
    def queued_units(self) -> int:
        return sum(len(j.units) for j in self.choice.live())

    # ---- background work -------------------------------------------------------------------
    def _background_owners(self) -> list[Owner]:
        """Whose background work is not finished (files, previews, clones)."""
        owners = [j.owner for j in self.jobs if j.owner is not None and not j.cancelled]
        return owners + [c.owner for c in self.calls if not c.cancelled]

    def background_waiting(self) -> int:
        """Background work not finished (files, previews, clones)."""
        return len(self._background_owners())

    async def _await_background(self, work: Work) -> None:
        try:
            await work.done.wait()
        finally:
            if not work.done.is_set():  # the asker went away: free the model
                self.cancel(work)
        if work.error is not None:
            raise work.error
        if work.cancelled:  # the bot is shutting down: no half a file
            raise RuntimeError("background work was cancelled")
        self.background.done += 1

    async def background_speech(
        self, text: str, voice: str | None, owner: Owner, language: str | None = None
    ) -> np.ndarray:
        """Synthesize a whole text as background work (files, previews)."""
        self.background.admit(self._background_owners(), owner)
        sink = FileSink()
        job = SpeechJob.for_text(text, voice, sink, self.clock(), key=owner[1])
        job.owner, job.language = owner, language
        self.submit(job)
        await self._await_background(job)
        return sink.audio()

    async def background_call(
        self, fn: Callable[[Any], T], owner: Owner, language: str | None = None
    ) -> T:
        """Run `fn(model)` as background work (a clone, a voice rebuild), with the model of
        `language` (None: the default one)."""
        if self._run_call is None:
            raise RuntimeError("this scheduler was made without a way to run model calls")
        self.background.admit(self._background_owners(), owner)
        call = ModelCall(fn, owner, language, self.clock())
        self.calls.append(call)
        self._changed.set()
        await self._await_background(call)
        result: T = call.result
        return result

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
        for work in [*self.jobs, *self.calls, *self._reloading]:
            self.cancel(work)
        for task in self._reloading.values():
            task.cancel()
        await asyncio.gather(*self._reloading.values(), return_exceptions=True)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    def _pick_for(self, lane: str) -> Work | None:
        if lane == "spare":
            return self.choice.pick_spare(self.clock())
        if lane == "background":
            return self.choice.pick_background()
        return self.choice.pick_live(self.clock())

    async def _next(self, lane: str) -> Work:
        async with self._idle[lane]:
            while True:
                self.choice.note_room()
                work = self._pick_for(lane)
                if work is not None:
                    return work
                self._changed.clear()
                # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.choice.wake_in()):
                        await self._changed.wait()

    async def _work(self, lane: str = "live") -> None:
        while True:
            work = await self._next(lane)
            if self._model_gone(work):
                self._set_aside(work)
                continue
            try:
                if isinstance(work, ModelCall):
                    await self._run_call_now(work)
                else:
                    await self._run_unit(work, lane == "spare")
            except Exception as error:  # that job fails; the worker and other jobs go on
                log.exception("a synthesis unit failed")
                work.error = work.error or error
                if isinstance(work, SpeechJob):
                    work.units.clear()
                    work.in_flight = None
                    self._running.pop(work, None)
                self._retire(work)
                self._changed.set()

    def _model_gone(self, work: Work) -> bool:
        """Whether the model the work names is not loaded. Checked just before its unit or
        call starts, with no await in between: a model cannot go unloaded in that gap."""
        return self._models is not None and not self._models.is_loaded(work.language)

    def _set_aside(self, work: Work) -> None:
        """Take the work out of the queue while its model loads again, off the lanes (seconds
        for a real model: another server's speech must not wait behind that)."""
        assert work.language is not None
        if isinstance(work, ModelCall):
            self.calls.remove(work)
        else:
            self.jobs.remove(work)
        self._reloading[work] = asyncio.create_task(
            self._reload(work, work.language), name=f"reload-{work.language}"
        )

    async def _reload(self, work: Work, language: str) -> None:
        assert self._models is not None
        log.info("the %s model was unloaded before its job: loading it again", language)
        try:
            await self._models.ensure(language)
        except Exception as error:  # refused (ModelsBusyError) or failed: the job says why
            log.warning("the %s model could not be loaded again: %s", language, error)
            work.error = error
            if isinstance(work, SpeechJob):
                work.units.clear()
        finally:
            self._reloading.pop(work, None)
        if work.cancelled or work.error is not None:
            work.finish()
        elif isinstance(work, ModelCall):  # as it was, picked again in turn
            self.calls.append(work)
        else:  # as it was (admitted or not), picked again in turn
            self.jobs.append(work)
        self._changed.set()

    async def _run_call_now(self, call: ModelCall) -> None:
        assert self._run_call is not None
        call.running = True
        started = self.clock()
        try:
            options: dict[str, Any] = {"background": True}
            if call.language is not None:
                options["language"] = call.language
            call.result = await self._run_call(call.fn, **options)
        except Exception as error:
            call.error = error
        finally:
            self.estimate.busy_seconds += self.clock() - started
            call.running = False
            self._retire(call)
            self._changed.set()

    async def _run_unit(self, job: SpeechJob, spare: bool) -> None:
        busy = any(j.active for j in self.choice.live() if j is not job)
        job.admitted = True
        text = self.choice.take_unit(job, spare)
        if spare and not job.sink.started:  # two units share the CPU: absorb the jitter
            job.sink.prebuffer(SPARE_PREBUFFER_S)
        elif self.choice.capacity is not None and busy:
            # also a message chained after the one its server is playing: it starts when that
            # one ends, and near capacity its synthesis may have begun only just before.
            # And the messages that began a moment ago on an idle batch, with 60 ms: this
            # one's prompt, prefilled between their first steps, would break them up. (A sink
            # that is already playing ignores this.)
            for other in self.choice.live():
                if other is job or other.active:
                    other.sink.prebuffer(BATCH_PREBUFFER_S)
        log.debug(
            "unit of %d chars for %s%s; buffered: %s; speed %.1fx",
            len(text),
            job.key,
            " on a spare lane" if spare else "",
            ", ".join(f"{j.key}: {j.sink.buffered_seconds():.1f} s" for j in self.jobs),
            self.estimate.speed(),
        )
        options: dict[str, Any] = {"background": True} if job.background else {}
        if self.choice.capacity is not None and not job.background:  # a batch: it paces its steps
            options["slack"] = functools.partial(self.choice.slack, job)
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
        chunks = aiter(stream)
        try:
            while True:
                try:  # the watchdog: a unit that stalls frees its lane
                    async with asyncio.timeout(self.stall_s):
                        chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise StreamRefused(f"no audio came for {self.stall_s:g} s") from None
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
            self.choice.note_room()
            self._changed.set()
