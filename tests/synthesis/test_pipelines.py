"""Pipelines by cores: placement of new streams, and pipelines side by side on the tiny model
(each stream whole on its own pipeline; a pipeline that fails ends only its streams and is
replaced)."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import soundfile
import torch
from pocket_tts import TTSModel

from bot.synthesis.batching import Batcher, Request, prefill
from bot.synthesis.engine import replicate
from bot.synthesis.pipelines import Pipeline, Pipelines, place
from tests.conftest import TinyModel

TEXT = "The quick brown fox jumps over the lazy dog."


def test_a_new_stream_goes_to_the_pipeline_with_the_most_room() -> None:
    assert place([0, 0], [2, 2]) == 0  # a tie: the lowest number
    assert place([1, 0], [2, 2]) == 1
    assert place([1, 1], [2, 2]) == 0
    assert place([1, 0], [4, 2]) == 0  # 3 free rows against 2
    assert place([3, 1], [4, 2]) == 1  # 1 free row each: the fewer streams
    assert place([2, 2, 1], [2, 2, 2]) == 2
    assert place([0, 5], [0, 8]) == 1  # a pipeline that carries nothing yet has no room
    # full everywhere (the scheduler admitted past a capacity that fell): the least over
    assert place([3, 2], [2, 2]) == 1
    with pytest.raises(ValueError):
        place([], [])


def test_a_stream_goes_where_its_voice_state_is_while_that_pipeline_has_a_free_row() -> None:
    """A worker that holds the stream's voice state takes it, not the one with most room,
    while it has a free row; full, the room decides again (the state is then sent anew)."""
    assert place([1, 0], [2, 2], [True, False]) == 0
    assert place([1, 0, 0], [4, 4, 4], [False, True, True]) == 1  # among holders: most room
    assert place([2, 0], [2, 2], [True, False]) == 1  # the holder is full
    assert place([0, 5], [0, 8], [True, False]) == 1  # a holder that carries nothing yet
    assert place([1, 0], [2, 2], [False, False]) == place([1, 0], [2, 2]) == 1


@pytest.fixture(scope="module")
def model(tiny_model: TinyModel) -> Iterator[Any]:
    model = TTSModel.load_model(config=str(tiny_model.config))
    model.temp, model.noise_clamp = 0.0, None  # fixed (zero) noise: streams comparable
    yield model


@pytest.fixture(scope="module")
def voice(model: Any, tiny_model: TinyModel) -> Any:
    audio = torch.from_numpy(soundfile.read(str(tiny_model.clip), dtype="float32")[0])
    return model.get_state_for_audio_prompt(audio[None, :])


class Streams:
    """Requests and what came of them: audio chunks and how each ended."""

    def __init__(self, model: Any, voice: Any) -> None:
        self.model, self.voice = model, voice
        self.audio: dict[int, list[np.ndarray]] = collections.defaultdict(list)
        self.ended: dict[int, BaseException | None] = {}
        self.events = {n: threading.Event() for n in range(16)}
        self.requests: dict[int, Request] = {}

    def request(self, n: int, *, emit: Callable[[np.ndarray], None] | None = None) -> Request:
        def end(error: BaseException | None) -> None:
            self.ended[n] = error
            self.events[n].set()

        request = Request(
            collections.deque(prefill(self.model, self.voice, TEXT)),
            emit=emit or self.audio[n].append,
            end=end,
        )
        self.requests[n] = request
        return request

    def wait(self, *ns: int) -> None:
        for n in ns:
            assert self.events[n].wait(120), f"stream {n} never ended"


def pipelines_of(model: Any, count: int, max_rows: int = 2) -> Pipelines:
    def make(index: int, on_death: Callable[[Pipeline], None]) -> Pipeline:
        return Batcher(replicate(model), max_rows=max_rows, index=index, cores=1, on_death=on_death)

    return Pipelines(make, count)


def replaced_and_speaking(
    pipelines: Pipelines,
    doomed: Pipeline,
    streams: Any,
    ready: Callable[[Pipeline], None] = lambda _: None,
) -> None:
    """Pipeline 1 (`doomed`, failed) is replaced by a fresh one, which (once `ready` returns
    for it) takes one of the next two streams (2 and 3); streams 0, 2 and 3 end."""
    for _ in range(200):
        if pipelines.pipelines[1] is not doomed:
            break
        threading.Event().wait(0.05)
    assert pipelines.restarts == 1 and pipelines.pipelines[1].alive
    ready(pipelines.pipelines[1])
    pipelines.submit(streams.request(2))
    pipelines.submit(streams.request(3))
    assert 1 in {streams.requests[2].pipeline, streams.requests[3].pipeline}
    streams.wait(0, 2, 3)


@pytest.mark.slow
def test_streams_spread_over_the_pipelines_and_each_stays_on_its_own(
    model: Any, voice: Any
) -> None:
    streams = Streams(model, voice)
    pipelines = pipelines_of(model, 2)
    try:
        for n in range(4):
            pipelines.submit(streams.request(n))
        assert pipelines.loads() == [2, 2]
        assert [streams.requests[n].pipeline for n in range(4)] == [0, 1, 0, 1]
        streams.wait(0, 1, 2, 3)
        assert pipelines.loads() == [0, 0]
        # both stepped: side by side
        assert all(isinstance(p, Batcher) and p.steps for p in pipelines.pipelines)
    finally:
        pipelines.close()
    assert streams.ended == dict.fromkeys(range(4))
    # the same text and voice at zero noise: each stream whole, the same audio wherever it ran
    first = np.concatenate(streams.audio[0])
    for n in range(1, 4):
        assert np.allclose(np.concatenate(streams.audio[n]), first, atol=1e-4)


@pytest.mark.slow
def test_a_pipeline_that_fails_ends_only_its_streams_and_is_replaced(
    model: Any, voice: Any, caplog: pytest.LogCaptureFixture
) -> None:
    streams = Streams(model, voice)
    pipelines = pipelines_of(model, 2)
    try:
        heard = threading.Event()

        def emit(chunk: np.ndarray) -> None:
            streams.audio[1].append(chunk)
            heard.set()

        pipelines.submit(streams.request(0))
        pipelines.submit(streams.request(1, emit=emit))
        assert heard.wait(60)  # pipeline 1 is speaking
        doomed = pipelines.pipelines[1]
        assert isinstance(doomed, Batcher)

        def fail(*_: object) -> Any:
            raise RuntimeError("the pipeline fell over")

        doomed._admit = fail  # type: ignore[method-assign]  # its thread's next round fails
        streams.wait(1)
        assert isinstance(streams.ended[1], RuntimeError)
        assert not doomed.alive
        replaced_and_speaking(pipelines, doomed, streams)
    finally:
        pipelines.close()
    assert [streams.ended[n] for n in (0, 2, 3)] == [None] * 3  # the others: whole
    whole = len(np.concatenate(streams.audio[0]))
    assert [len(np.concatenate(streams.audio[n])) for n in (2, 3)] == [whole, whole]
    assert "pipeline 1 failed" in caplog.text and "pipeline 1 restarted" in caplog.text
