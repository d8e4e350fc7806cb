"""Pipelines as worker processes (`bot.synthesis.pipeline_processes`) on the tiny model: each
stream whole, with the same audio as a pipeline in this process; live step times come back
for the capacity; a cancel ends a stream; a worker killed mid-stream ends only its streams and
is replaced by a new one."""

from __future__ import annotations

import collections
import functools
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import soundfile
import torch
from pocket_tts import TTSModel

from bot.synthesis.batching import Batcher, Request, prefill_chunks
from bot.synthesis.engine import replicate
from bot.synthesis.pipeline_processes import Outbox, ProcessPipeline, WorkerDied
from bot.synthesis.pipelines import Pipeline, Pipelines
from tests.conftest import TinyModel

pytestmark = pytest.mark.process  # worker processes

TEXT = "The quick brown fox jumps over the lazy dog."


def load_tiny(config: str) -> Any:
    """The tiny model, the same random weights in every process (a fixed seed), at zero noise
    so that streams can be compared."""
    torch.manual_seed(0)
    model = TTSModel.load_model(config=config)
    model.temp, model.noise_clamp = 0.0, None
    return model


@pytest.fixture(scope="module")
def source(tiny_model: TinyModel) -> Callable[[], Any]:
    # its full-length variant: streams long enough for each worker's live figures to count
    return functools.partial(load_tiny, str(tiny_model.full_length_config))


@pytest.fixture(scope="module")
def model(source: Callable[[], Any]) -> Any:
    return source()


@pytest.fixture(scope="module")
def voice(model: Any, tiny_model: TinyModel) -> Any:
    audio = torch.from_numpy(soundfile.read(str(tiny_model.clip), dtype="float32")[0])
    return model.get_state_for_audio_prompt(audio[None, :])


class Streams:
    """Requests as the engine makes them (a voice state and a text) and what came of them."""

    def __init__(self, voice: Any) -> None:
        self.voice = voice
        self.audio: dict[int, list[np.ndarray]] = collections.defaultdict(list)
        self.ended: dict[int, BaseException | None] = {}
        self.events = {n: threading.Event() for n in range(16)}
        self.heard = {n: threading.Event() for n in range(16)}
        self.requests: dict[int, Request] = {}

    def request(self, n: int, text: str = TEXT, voice: Any = None) -> Request:
        voice = self.voice if voice is None else voice

        def emit(chunk: np.ndarray) -> None:
            self.audio[n].append(chunk)
            self.heard[n].set()

        def end(error: BaseException | None) -> None:
            self.ended[n] = error
            self.events[n].set()

        request = Request(
            collections.deque(),
            emit=emit,
            end=end,
            prepare=lambda model: prefill_chunks(model, voice, text),
        )
        request.work = (voice, text)
        self.requests[n] = request
        return request

    def wait(self, *ns: int) -> None:
        for n in ns:
            assert self.events[n].wait(120), f"stream {n} never ended"


def started(source: Callable[[], Any], count: int) -> Iterator[Pipelines]:
    def make(index: int, on_death: Callable[[Pipeline], None]) -> Pipeline:
        return ProcessPipeline(
            source, frame_s=0.08, max_rows=2, costs=None, index=index, cores=1, on_death=on_death
        )

    made = Pipelines(make, count)
    for pipeline in made.pipelines:  # as the engine does before it speaks
        loaded(pipeline)
    yield made
    made.close()


@pytest.fixture
def pipelines(source: Callable[[], Any]) -> Iterator[Pipelines]:
    yield from started(source, 2)


@pytest.fixture
def one_pipeline(source: Callable[[], Any]) -> Iterator[Pipelines]:
    """For a test of one stream: a second worker would only wait (4 CPU-s to start)."""
    yield from started(source, 1)


def loaded(pipeline: Pipeline) -> None:
    """Until a worker has loaded its model (a worker still loading carries no stream)."""
    assert isinstance(pipeline, ProcessPipeline)
    pipeline.wait_ready(120)


def test_streams_in_worker_processes_are_whole_and_sound_as_in_this_one(
    pipelines: Pipelines, model: Any, voice: Any
) -> None:
    streams = Streams(voice)
    for n in range(3):
        pipelines.submit(streams.request(n))
    # one voice: its streams stay on the worker that holds its state while it has a free row
    assert [streams.requests[n].pipeline for n in range(3)] == [0, 0, 1]
    assert [len(p.states) for p in pipelines.pipelines] == [1, 1]  # type: ignore[attr-defined]
    streams.wait(0, 1, 2)
    assert streams.ended == dict.fromkeys(range(3))
    assert pipelines.loads() == [0, 0]
    # the same stream on a pipeline in this process: the same audio
    here = Streams(voice)
    batcher = Batcher(replicate(model), max_rows=2, cores=1)
    try:
        batcher.submit(here.request(0))
        here.wait(0)
    finally:
        batcher.close()
    expected = np.concatenate(here.audio[0])
    for n in range(3):
        assert np.allclose(np.concatenate(streams.audio[n]), expected, atol=1e-4), n
    # the workers' live step times came back: the capacity follows them here
    for pipeline in pipelines.pipelines:
        assert isinstance(pipeline, ProcessPipeline)
        assert pipeline.costs.steps.seen() or pipeline.costs.decodes.seen()
        assert pipeline.cache_bytes() > 0


def test_a_cancelled_stream_ends_at_once_without_an_error(
    one_pipeline: Pipelines, voice: Any
) -> None:
    streams = Streams(voice)
    long = " ".join([TEXT] * 6)
    one_pipeline.submit(streams.request(0, long))
    assert streams.heard[0].wait(60)
    streams.requests[0].stop.set()
    streams.wait(0)
    assert streams.ended[0] is None
    assert one_pipeline.loads() == [0]


def test_a_killed_worker_ends_only_its_streams_and_is_replaced(
    pipelines: Pipelines, voice: Any, caplog: pytest.LogCaptureFixture
) -> None:
    streams = Streams(voice)
    long = " ".join([TEXT] * 4)
    pipelines.submit(streams.request(0, long))
    pipelines.submit(streams.request(1, long, another(voice)))  # another server's: pipeline 1
    assert streams.heard[1].wait(60)  # pipeline 1 is speaking
    doomed = pipelines.pipelines[1]
    assert isinstance(doomed, ProcessPipeline) and doomed.process.pid is not None
    os.kill(doomed.process.pid, signal.SIGKILL)
    streams.wait(1)
    assert isinstance(streams.ended[1], WorkerDied), streams.ended[1]
    for _ in range(200):  # a fresh worker takes pipeline 1's place
        if pipelines.pipelines[1] is not doomed:
            break
        threading.Event().wait(0.05)
    assert pipelines.restarts == 1 and pipelines.pipelines[1].alive
    loaded(pipelines.pipelines[1])
    # two other servers' voices, which no worker holds: placed by room, one on the new worker
    pipelines.submit(streams.request(2, voice=another(voice, 0.02)))
    pipelines.submit(streams.request(3, voice=another(voice, 0.03)))
    assert 1 in {streams.requests[2].pipeline, streams.requests[3].pipeline}
    streams.wait(0, 2, 3)
    assert [streams.ended[n] for n in (0, 2, 3)] == [None] * 3  # the others: whole
    whole = len(np.concatenate(streams.audio[2]))
    assert len(np.concatenate(streams.audio[3])) == whole
    assert "pipeline 1 ended" in caplog.text and "pipeline 1 restarted" in caplog.text


def another(voice: Any, by: float = 0.01) -> Any:
    """A voice state of the same shapes, not the same (another member's voice)."""
    return {
        module: {
            key: tensor + by if tensor.is_floating_point() else tensor.clone()
            for key, tensor in state.items()
        }
        for module, state in voice.items()
    }


def cannot_load() -> Any:
    raise RuntimeError("no weights here")


def test_a_worker_that_cannot_load_its_model_says_why_and_is_not_started_again(
    voice: Any,
) -> None:
    died: list[ProcessPipeline] = []
    pipeline = ProcessPipeline(
        cannot_load, frame_s=0.08, max_rows=2, costs=None, index=0, cores=1, on_death=died.append
    )
    try:
        with pytest.raises(RuntimeError, match="the model could not be loaded: no weights here"):
            pipeline.wait_ready(60)
        pipeline.process.join(10)
        assert not pipeline.alive and died == []  # its place stays empty: no loop of restarts
        assert pipeline.submit(Streams(voice).request(0)) is False
    finally:
        pipeline.close()


def test_a_paced_stream_is_paced_in_the_worker_and_its_waits_come_back(
    source: Callable[[], Any], voice: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A listener always far ahead: the worker's batch steps at the frame's pace, and the time
    it held back comes back with the stream's end (the scheduler's speed leaves it out). What
    the worker logs is logged here, through this process's handlers."""
    pipeline = ProcessPipeline(source, frame_s=0.08, max_rows=2, costs=None, index=0, cores=1)
    try:
        pipeline.wait_ready(120)
        streams = Streams(voice)
        request = streams.request(0)
        request.slack = lambda: 10.0
        pipeline.submit(request)
        streams.wait(0)
    finally:
        pipeline.close()
    assert streams.ended[0] is None
    audio_s = len(np.concatenate(streams.audio[0])) / 24_000
    assert audio_s > 2.0 and request.paced_s > 0.5 * audio_s, (audio_s, request.paced_s)
    # random weights never say "end of speech": the worker's batch warns, in its own logger
    assert any(
        r.name == "bot.synthesis.batching" and "length limit" in r.getMessage()
        for r in caplog.records
    ), caplog.text


def load_when(gate: Any, config: str) -> Any:
    """The tiny model, once `gate` (a process-shared event) is set."""
    assert gate.wait(120)
    return load_tiny(config)


def test_a_worker_still_loading_its_model_carries_nothing(tiny_model: TinyModel) -> None:
    """No stream is placed on a worker that cannot start it yet (a new one, after a crash):
    its capacity is none until its model is loaded."""
    gate = multiprocessing.get_context("spawn").Event()
    source = functools.partial(load_when, gate, str(tiny_model.config))
    pipeline = ProcessPipeline(source, frame_s=0.08, max_rows=2, costs=None, index=0, cores=1)
    try:
        assert pipeline.alive and pipeline.capacity() == 0
        gate.set()
        pipeline.wait_ready(120)
        assert pipeline.capacity() >= 1
    finally:
        pipeline.close()


def test_the_workers_outbox_sends_in_order_in_bursts_and_all_of_it_at_close() -> None:
    """A step's frames go as one message (`Outbox`), in the order they were said; what is
    said before `close` still goes; a pipe whose other end is gone stops the worker."""
    ours, theirs = multiprocessing.Pipe()
    outbox = Outbox(theirs)
    switching = sys.getswitchinterval()
    sys.setswitchinterval(100.0)  # this thread says it all before the outbox's can run
    try:
        for n in range(12):  # one step's rows, said one after another
            outbox.send("audio", n, np.full(4, n, dtype=np.float32))
        outbox.send("cost", "decode", 12, 0.05)
    finally:
        sys.setswitchinterval(switching)
    outbox.close()
    bursts = []
    while ours.poll(1.0):
        bursts.append(ours.recv())
    said = [message for burst in bursts for message in burst]
    assert [m[1] for m in said[:12]] == list(range(12)) and said[12] == ("cost", "decode", 12, 0.05)
    assert all(m[2][0] == m[1] for m in said[:12])
    assert len(bursts) == 1  # not one message each
    ours.close()
    outbox = Outbox(theirs)
    outbox.send("bytes", 1)
    assert outbox.gone.wait(5.0)
    outbox.close()
