"""A stand-in for the model's pipelines: frames at the model's pace, no model work.

What one process can carry is bounded twice: by the model work (the pipelines, in threads or in
worker processes) and by what the bot's own process spends per server whatever the model
(the event loop's scheduling and framing, the frames' hand-over, the players' Opus). The
second bound cannot be seen on a small machine behind the first. `PacedEngine` takes the model
away and keeps the rest: the engine's real `Pipelines` (placement, capacity summed over
them) of `PacedPipeline`s, each one thread that, every frame (80 ms), hands every stream of
its own a 1,920-sample chunk through the engine's real sink and `SynthesisStream` (as a worker
process's reader thread does), two per frame while the stream's listener has under
`Batcher.PACE_S` ahead, else one, as the batch paces. Its capacity is the real `StepCosts`
over a start-up table shaped like the model's (`STEP_COSTS`), fed a live figure every frame as
a worker's are. `bench/load.py --engines paced` runs the bot's real scheduler, speakers,
framing and players on it.
"""

from __future__ import annotations

import asyncio
import collections
import pickle
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from bot.synthesis.batching import Batcher, LiveCapacity, Request
from bot.synthesis.capacity import BatchCost, StepCosts
from bot.synthesis.engine import SynthesisStream, _Sink
from bot.synthesis.pipelines import Pipeline, Pipelines
from bot.synthesis.state_transfer import StateDigests, WorkerStates

FRAME_S = 0.08  # one Mimi frame
# not silence: Opus spends less on silence than on speech
CHUNK = (np.random.default_rng(0).standard_normal(1920) * 0.1).astype(np.float32)
SPEEDUP = 2  # frames per frame while the listener is short of PACE_S: the batch runs ahead


def step_cost(rows: int) -> BatchCost:
    """An LM step and a decode at `rows`, shaped like the int8 English model's on one core
    (docs/performance.md's probe: about 49 + 76 ms at 16 rows): 12 rows fit a frame."""
    return BatchCost(rows, 0.008 + 0.0025 * rows, 0.010 + 0.004 * rows)


STATE_LAYERS = 24  # a voice state shaped like the `english` architecture's: about 6 MB
STATE_FLOATS = 6 * 2**20 // 4 // STATE_LAYERS


def voice_state(seed: int) -> dict[str, dict[str, torch.Tensor]]:
    """A voice state of its own, of the English model's size."""
    generator = torch.Generator().manual_seed(seed)
    return {
        f"layer{n}": {"cache": torch.randn(STATE_FLOATS, generator=generator)}
        for n in range(STATE_LAYERS)
    }


class StateTraffic:
    """The voice states' bytes a worker process would be sent for one pipeline's streams:
    `each`: every stream its whole state (c4687c7's rule: the state went by /dev/shm each
    time); `once`: the messages `ProcessPipeline` sends (`WorkerStates.messages`), pickled."""

    def __init__(self, rule: str, digests: StateDigests) -> None:
        self.rule = rule
        self._digests = digests
        self._states = WorkerStates()
        self.bytes = 0
        self.streams = 0

    def holds(self, state: dict[str, dict[str, torch.Tensor]]) -> bool:
        return self.rule == "once" and self._digests.of(state)[0] in self._states

    def submit(self, state: dict[str, dict[str, torch.Tensor]]) -> None:
        self.streams += 1
        if self.rule == "each":
            tensors = [t for module in state.values() for t in module.values()]
            self.bytes += sum(t.nelement() * t.element_size() for t in tensors)
            return
        key, payload = self._digests.of(state)
        for message in self._states.messages(key, state, payload):
            self.bytes += len(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


@dataclass(eq=False)
class _Paced:
    request: Request
    frames: int  # still to make


class PacedPipeline:
    """One thread handing its streams their frames at the model's pace (a `Pipeline`)."""

    def __init__(self, index: int, max_rows: int, traffic: StateTraffic | None = None) -> None:
        self.index = index
        self.traffic = traffic
        self.frame_s = FRAME_S
        self.costs = StepCosts([step_cost(n) for n in range(1, max_rows + 1)], max_rows, FRAME_S, 2)
        self._capacity = LiveCapacity(self.costs, index)
        self._streams: list[_Paced] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"paced-{index}", daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return not self._closed.is_set()

    def capacity(self, rate: float = 1.0, extra: int = 0) -> int:
        return self._capacity(rate, extra)

    def cache_bytes(self) -> int:
        return 0

    def holds(self, request: Request) -> bool:
        work = request.work or (0, "", None)
        state = work[2]  # type: ignore[misc]
        return self.traffic is not None and state is not None and self.traffic.holds(state)

    def submit(self, request: Request) -> bool:
        frames, _, state = request.work or (0, "", None)  # type: ignore[misc]
        if self.traffic is not None and state is not None:
            self.traffic.submit(state)
        with self._lock:
            self._streams.append(_Paced(request, frames))
        return True

    def close(self) -> None:
        self._closed.set()
        self._thread.join(5)

    def _run(self) -> None:
        tick = time.monotonic()
        while not self._closed.is_set():
            tick += FRAME_S
            time.sleep(max(0.0, tick - time.monotonic()))
            with self._lock:
                streams = list(self._streams)
            if streams:  # a live figure a frame, as a worker's reader records them
                cost = step_cost(len(streams))
                self.costs.add_step(cost.rows, cost.lm_s)
                self.costs.decodes.add(cost.rows, cost.decode_s)
            ended = {id(s) for s in streams if not self._step(s)}
            if ended:
                with self._lock:
                    self._streams = [s for s in self._streams if id(s) not in ended]

    @staticmethod
    def _step(stream: _Paced) -> bool:
        """One frame's work for `stream`; False once it has ended."""
        request = stream.request
        if request.stop.is_set():
            request.end(None)
            return False
        ahead = request.slack() if request.slack is not None else 0.0
        for _ in range(min(stream.frames, SPEEDUP if ahead < Batcher.PACE_S else 1)):
            request.emit(CHUNK)  # as the batch paces
            stream.frames -= 1
        if stream.frames > 0:
            return True
        request.end(None)
        return False


class PacedEngine:
    """The engine's face to the scheduler (`stream`, `capacity`, its lanes) over `pipelines`
    `PacedPipeline`s of up to `rows` each. A text lasts `words / words_per_second` seconds
    plus 0.3 s, as the bench sets the real model's cap."""

    batched = True
    spare_lanes = 0

    def __init__(
        self, pipelines: int, rows: int, words_per_second: float, state_rule: str | None = None
    ) -> None:
        """`state_rule` ("each" or "once"): each voice has a state of the English model's size
        and each pipeline counts what its worker process would be sent of them (`StateTraffic`)."""
        self.rows = rows
        self.workers = pipelines * rows  # as the batched engine's: a lane per row it may admit
        self._words_per_second = words_per_second
        digests = StateDigests()
        rules = [state_rule] * pipelines if state_rule else []
        self.traffic = [StateTraffic(rule, digests) for rule in rules]
        self._states: dict[str | None, dict[str, dict[str, torch.Tensor]]] = {}

        def make(index: int, on_death: Callable[[Pipeline], None]) -> Pipeline:
            return PacedPipeline(index, rows, self.traffic[index] if self.traffic else None)

        self.pipelines = Pipelines(make, pipelines)

    def capacity(self, rate: float = 1.0, extra: int = 0) -> int:
        return self.pipelines.capacity(rate, extra)

    def stream(
        self,
        text: str,
        voice: str | None = None,
        *,
        slack: Callable[[], float] | None = None,
        **_: Any,
    ) -> SynthesisStream:
        """As `TTSEngine.stream` hands a batched stream over (`TTSEngine._prefill`)."""
        sink = _Sink(asyncio.get_running_loop())
        seconds = len(text.split()) / self._words_per_second + 0.3
        request = Request(collections.deque(), emit=sink.put, end=sink.end, stop=sink.stop)
        request.slack = slack
        state = None
        if self.traffic:  # each voice its own state, made once, as the engine's cache keeps it
            state = self._states.get(voice)
            if state is None:
                state = self._states[voice] = voice_state(len(self._states))
        request.work = (round(seconds / FRAME_S), text, state)  # type: ignore[assignment]
        sink.request = request
        self.pipelines.submit(request)
        return SynthesisStream(sink)

    async def close(self) -> None:
        await asyncio.to_thread(self.pipelines.close)
