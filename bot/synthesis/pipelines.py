"""Pipelines by cores: the batched engine as several independent batches side by side.

One pipeline (`Batcher`: an LM thread and a decoder thread, its own rows, capacity table and
admission) keeps about 1.7 cores busy at most, whatever the machine has, so the engine runs
`TTS_PIPELINES` of them (by default one per 2 cores). The scheduler still sees one engine: its
capacity is the sum of theirs, so its fairness across servers (earliest deadline first,
admission in the order servers asked) holds across all pipelines together. A new stream goes
to the pipeline with the most room (`place`) and stays there to its end. A pipeline whose
thread fails ends only its own streams and is replaced by a fresh one on the same model.

A pipeline is a thread pair in this process (`bot.synthesis.batching.Batcher`) or a worker
process with its own copy of the model (`bot.synthesis.pipeline_processes.ProcessPipeline`),
both behind `Pipeline`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from bot.synthesis.batching import Request
from bot.synthesis.model_errors import StreamRefused

log = logging.getLogger(__name__)


class Pipeline(Protocol):
    """What `Pipelines` needs of one pipeline. It calls its `on_death` (given when it is
    made) once it has failed and ended its streams."""

    frame_s: float

    @property
    def alive(self) -> bool: ...
    def submit(self, request: Request) -> bool: ...
    def capacity(self, rate: float = 1.0, extra: int = 0) -> int: ...
    def cache_bytes(self) -> int: ...
    def holds(self, request: Request) -> bool: ...
    def close(self) -> None: ...


Make = Callable[[int, Callable[[Pipeline], None]], Pipeline]


def place(
    loads: Sequence[int], capacities: Sequence[int], holds: Sequence[bool] | None = None
) -> int:
    """The pipeline a new stream goes to: the most room (capacity less the streams it holds),
    then the fewest streams, then the lowest number. The scheduler admits a stream only while
    the pipelines' capacities add up to more than the streams they hold, so the one with the
    most room then has a free row. `holds`: the pipelines that hold the stream's voice state
    already (a worker process); one of them takes it while it has a free row, so that a
    server's messages seldom send their voice again."""
    if not loads or len(loads) != len(capacities):
        raise ValueError("one load and one capacity per pipeline")
    every = range(len(loads))
    free = [i for i in every if holds and holds[i] and loads[i] < capacities[i]]
    return min(free or every, key=lambda i: (loads[i] - capacities[i], loads[i], i))


class Pipelines:
    """`count` pipelines made by `make(index, on_death)`; streams placed, counted and kept
    on theirs; a pipeline that dies is made anew in its place."""

    def __init__(self, make: Make, count: int) -> None:
        self._make = make
        self._lock = threading.Lock()
        self._closed = False
        self.restarts = 0
        self._loads = [0] * count  # streams placed on each and not ended
        self.pipelines: list[Pipeline] = [make(i, self._died) for i in range(count)]

    def __len__(self) -> int:
        return len(self.pipelines)

    @property
    def frame_s(self) -> float:
        return self.pipelines[0].frame_s

    def loads(self) -> list[int]:
        """The streams each pipeline holds (placed, not ended)."""
        with self._lock:
            return list(self._loads)

    def capacity(self, rate: float = 1.0, extra: int = 0) -> int:
        """The rows all pipelines carry in real time, the fastest at `rate` (their sum);
        `extra` rows kept free (`Capacity.capacity`) are shared out among the live ones."""
        alive = [p for p in list(self.pipelines) if p.alive]
        share, more = divmod(extra, max(1, len(alive)))
        return sum(p.capacity(rate, share + (i < more)) for i, p in enumerate(alive))

    def cache_bytes(self) -> int:
        """The bytes of every pipeline's attention caches and decoder states."""
        return sum(p.cache_bytes() for p in list(self.pipelines))

    def submit(self, request: Request, tries: int | None = None) -> None:
        """Place `request` on the pipeline with the most room; it stays there to its end."""
        tries = len(self.pipelines) if tries is None else tries
        pipelines = list(self.pipelines)
        if tries <= 0 or self._closed or not any(p.alive for p in pipelines):
            request.ended = True
            request.end(StreamRefused("no synthesis pipeline is running"))
            return
        capacities = [p.capacity() if p.alive else -(10**6) for p in pipelines]
        try:
            holds = [p.holds(request) for p in pipelines]
        except Exception as error:  # its state cannot be looked at: placed on room alone
            log.warning("a stream's voice state could not be looked up: %s", error)
            holds = None
        with self._lock:
            index = place(self._loads, capacities, holds)
            self._loads[index] += 1
            pipeline = self.pipelines[index]
        end = request.end

        def ended(error: BaseException | None) -> None:
            with self._lock:
                self._loads[index] -= 1
            end(error)

        request.end = ended
        request.pipeline = index
        try:
            taken = pipeline.submit(request)
        except Exception as error:  # it could not take the stream: the stream ends, not the lane
            log.error("pipeline %d refused a stream: %s: %s", index, type(error).__name__, error)
            if not request.ended:
                request.ended = True
                request.end(StreamRefused(f"the synthesis pipeline refused it: {error}"))
            return
        if not taken:  # it died since: the next one takes the stream
            request.end = end
            with self._lock:
                self._loads[index] -= 1
            self.submit(request, tries - 1)

    def _died(self, pipeline: Pipeline) -> None:
        """On the dead pipeline's thread, its streams ended: a fresh one takes its place."""
        with self._lock:
            if self._closed or pipeline not in self.pipelines:
                return
            index = self.pipelines.index(pipeline)
        try:
            fresh = self._make(index, self._died)
        except Exception:  # its place stays dead: the others carry on (capacity excludes it)
            log.exception("pipeline %d could not be restarted", index)
            return
        with self._lock:
            if self._closed:
                fresh.close()
                return
            self.pipelines[index] = fresh
            self.restarts += 1
        log.warning("pipeline %d restarted", index)

    def close(self) -> None:
        """Close them all side by side (a worker process takes a second or two to end)."""
        with self._lock:
            self._closed = True
            pipelines = list(self.pipelines)
        with ThreadPoolExecutor(max_workers=max(1, len(pipelines))) as closing:
            list(closing.map(lambda pipeline: pipeline.close(), pipelines))
