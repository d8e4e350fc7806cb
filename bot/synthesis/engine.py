"""Pocket TTS behind an async API: model objects that share weights, one per worker thread.

pocket-tts models are not documented as thread-safe, so the engine keeps a pool of model
objects (replicas sharing the weights), one per executor thread, and every piece of model
work (voice states, clones, synthesis) takes one from the pool for its whole run. The
engine does not decide what runs when: `bot.synthesis.scheduler.DeadlineScheduler` is the one
admission point that calls `stream()` and `call()`. Audio chunks travel back to the event
loop through `loop.call_soon_threadsafe`; cancelling sets pocket-tts's `stop` event.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import logging
import queue
import threading
import time
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

from bot.core.config import usable_cores
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.batching import Batcher, Request, prefill_chunks
from bot.synthesis.capacity import BatchCost
from bot.synthesis.clip import read_file
from bot.synthesis.model_errors import ModelUnavailableError, StreamRefused, UnusableVoiceError
from bot.synthesis.phrase_cache import PhraseCache
from bot.synthesis.pipeline_processes import ProcessPipeline
from bot.synthesis.pipelines import Pipeline, Pipelines
from bot.synthesis.pocket_tts_adapter import (
    DEFAULT_VOICE_FOR_LANGUAGE,
    PREDEFINED_VOICES,
)
from bot.synthesis.state_transfer import StateDigests
from bot.synthesis.tempo import Tempo

__all__ = ["ModelUnavailableError", "TTSEngine", "UnusableVoiceError"]

log = logging.getLogger(__name__)
# pocket-tts's int8 (the default) goes through torch.ao.quantization, which torch marks as
# deprecated at every load; it works on the torch we pin, and the operator can do nothing.
warnings.filterwarnings("ignore", r"torch\.ao\.quantization is deprecated", DeprecationWarning)
warnings.filterwarnings("ignore", r"torch\.quantize_per_tensor, ", UserWarning)

SAMPLE_RATE = MODEL_RATE  # (its name here, for the engine's callers)
BUILTIN_VOICES: tuple[str, ...] = PREDEFINED_VOICES


def builtin_voices_for(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the built-in voices recorded in `language`, the others). pocket-tts names each
    language's own voice (`DEFAULT_VOICE_FOR_LANGUAGE`); its other voices were recorded in
    English. Every language's model has every voice, the others speak with an accent."""
    native = {voice: lang for lang, voice in DEFAULT_VOICE_FOR_LANGUAGE.items()}
    base = language.removesuffix("_24l")
    fitting = tuple(v for v in BUILTIN_VOICES if native.get(v, "english") == base)
    return fitting, tuple(v for v in BUILTIN_VOICES if v not in fitting)


T = TypeVar("T")
ModelState = dict[str, Any]
_END = object()
# Background work (clones, voice rebuilds, files, previews) runs on a thread and a model of its
# own, so a live unit's prefill never queues behind it in the workers' executor.
BACKGROUND_THREADS = 1


def pipeline_cores(pipelines: int) -> int:
    """The cores each of `pipelines` pipelines may count on: its share of the process's."""
    return max(1, usable_cores() // max(1, pipelines))


CLONING_UNAVAILABLE = (
    "the loaded model weights cannot clone voices. The bot's operator needs the gated "
    "voice-cloning weights: accept the licence of kyutai/pocket-tts on Hugging Face, put a "
    "read token in HF_TOKEN, and restart the bot"
)


class _Sink:
    """The worker's end of a stream. Holds no reference to the stream itself, so an
    abandoned stream is garbage-collected and its finalizer can set `stop`."""

    request: Request | None = None  # batched: the batch's request, once handed over

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.stop = threading.Event()

    def put(self, item: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self.stop.set()

    def complete(self) -> None:
        """The stream gave all its audio (not cancelled, no error): before its end."""

    def end(self, error: BaseException | None) -> None:
        """The stream ended (a batch's `Request.end`): its error or its completion, then the
        end itself."""
        if error is not None:
            self.put(error)
        elif not self.stop.is_set():
            self.complete()
        self.put(_END)


class _TempoSink(_Sink):
    """A sink whose chunks go through the utterance's `Tempo` first, on the thread that
    made them; the stretcher's tail goes out when the utterance's last unit completes."""

    def __init__(self, sink: _Sink, tempo: Tempo, last: bool) -> None:
        self.loop, self.queue, self.stop = sink.loop, sink.queue, sink.stop
        self._tempo = tempo
        self._last = last

    def put(self, item: Any) -> None:
        if isinstance(item, np.ndarray):
            try:
                item = self._tempo.push(item)
            except Exception as error:  # this stream fails, not the thread (the batch's decoder)
                self.stop.set()
                super().put(error)
                return
            if not len(item):
                return
        super().put(item)

    def complete(self) -> None:
        if self._last:
            tail = self._tempo.finish()
            if len(tail):
                super().put(tail)


@dataclass
class StreamStats:
    started: float  # time.monotonic() when the stream was requested
    first_chunk: float | None = None  # time.monotonic() of the first chunk on the loop
    finished: float | None = None
    samples: int = 0
    cancelled: bool = False

    @property
    def first_chunk_latency(self) -> float | None:
        return None if self.first_chunk is None else self.first_chunk - self.started

    @property
    def audio_seconds(self) -> float:
        return self.samples / SAMPLE_RATE


class SynthesisStream:
    """Async iterator over 24 kHz mono float32 chunks, as the model produces them.

    Use it as `async with engine.stream(...) as stream: async for chunk in stream`; leaving
    the block, `cancel()`, or dropping the object stops the model within one frame.
    """

    def __init__(self, sink: _Sink) -> None:
        self._sink = sink
        self.stats = StreamStats(started=time.monotonic())
        self._done = False
        weakref.finalize(self, sink.stop.set)

    def cancel(self) -> None:
        if not self._done:
            self.stats.cancelled = True
        self._sink.stop.set()

    @property
    def cancelled(self) -> bool:
        return self._sink.stop.is_set() and self.stats.cancelled

    @property
    def paced_seconds(self) -> float:
        """How long the batch held back its frames because its listener was far enough
        ahead: not synthesis time, so the speed figures leave it out."""
        request = self._sink.request
        return request.paced_s if request is not None else 0.0

    async def __aenter__(self) -> SynthesisStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cancel()

    def __aiter__(self) -> SynthesisStream:
        return self

    async def __anext__(self) -> np.ndarray:
        if self._done:
            raise StopAsyncIteration
        item = await self._sink.queue.get()
        if item is _END:
            self._done = True
            self.stats.finished = time.monotonic()
            raise StopAsyncIteration
        if isinstance(item, BaseException):
            self._done = True
            raise item
        if self.stats.first_chunk is None:
            self.stats.first_chunk = time.monotonic()
        self.stats.samples += len(item)
        audio: np.ndarray = item
        return audio


def replicate(model: Any) -> Any:
    """A second model object sharing the weights: its own modules, the same tensors.

    pocket-tts keeps generation state in the `ModelState` passed in, but its models are not
    documented as thread-safe, so each engine worker thread uses its own object.
    """
    shared = {id(t): t for t in [*model.parameters(), *model.buffers()]}
    return copy.deepcopy(model, memo=shared)


def weights_nbytes(model: Any) -> int:
    """Bytes of a model's weights. An int8 model's state also holds dtypes, and its packed
    linear layers as (weight, bias) tuples."""

    def nbytes(value: object) -> int:
        if isinstance(value, torch.Tensor):
            return value.nelement() * value.element_size()
        if isinstance(value, tuple | list):
            return sum(nbytes(item) for item in value)
        return 0

    state = model.state_dict() if hasattr(model, "state_dict") else {}
    return sum(nbytes(value) for value in state.values())


def state_nbytes(state: ModelState) -> int:
    """Bytes held by the tensors of a (nested) model state."""
    total = 0
    for value in state.values():
        if isinstance(value, dict):
            total += state_nbytes(value)
        elif isinstance(value, torch.Tensor):
            total += value.nelement() * value.element_size()
    return total


class StateCache:
    """Least-recently-used voice states, bounded by count and by bytes (engine threads)."""

    def __init__(self, max_items: int = 32, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, tuple[ModelState, int]] = OrderedDict()
        self._lock = threading.Lock()  # several engine workers may look up at once
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> ModelState | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self.hits += 1
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: str, state: ModelState) -> None:
        size = state_nbytes(state)
        with self._lock:
            self._pop(key)
            self._items[key] = (state, size)
            self.bytes += size
            while self._items and (
                len(self._items) > self.max_items or self.bytes > self.max_bytes
            ):
                _, (_, evicted) = self._items.popitem(last=False)
                self.bytes -= evicted

    def pop(self, key: str) -> None:
        with self._lock:
            self._pop(key)

    def _pop(self, key: str) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self.bytes -= item[1]

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: str) -> bool:
        return key in self._items


class TTSEngine:
    """Loads the model once; runs model work in its own threads, one pooled model each."""

    def __init__(
        self,
        model: Any,
        *,
        default_voice: str,
        fingerprint: str,
        executor: Any,
        replicas: list[Any] | None = None,
        spare_lanes: int = 0,
        batch: int = 1,
        costs: list[BatchCost] | None = None,
        phrases: PhraseCache | None = None,
        pipelines: int = 1,
        source: Callable[[], Any] | None = None,
    ) -> None:
        """`source`: loads the same model in another process (a picklable call); given, the
        pipelines run as worker processes (`bot.synthesis.pipeline_processes`)."""
        self.model = model
        # One model object per worker thread; replicas share the weights (see `replicate`).
        # `workers` threads do the steady work; `spare_lanes` more take over urgent units while
        # every worker is busy (see DeadlineScheduler.pick_spare).
        self.spare_lanes = spare_lanes
        self.workers = 1 + len(replicas or []) - spare_lanes
        self._free_models: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for replica in [model, *(replicas or [])]:
            self._free_models.put(replica)
        self.default_voice = default_voice
        self.fingerprint = fingerprint
        self._executor: ThreadPoolExecutor = executor
        self.voice_cache = StateCache()
        self.phrases = phrases  # short phrases' audio ("Alice said"): the first model's only
        self._active: weakref.WeakSet[threading.Event] = weakref.WeakSet()
        self._closed = False
        self._can_clone = bool(getattr(model, "has_voice_cloning", False))
        # the weights' size (replicas share them): what a model counts against TTS_MEMORY_MB
        self.model_bytes = weights_nbytes(model)
        # Background work has its own thread and model object (see BACKGROUND_THREADS).
        self._background_models: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for _ in range(BACKGROUND_THREADS):
            self._background_models.put(replicate(model))
        self._background_executor = ThreadPoolExecutor(
            max_workers=BACKGROUND_THREADS, thread_name_prefix="tts-background"
        )
        # Batched: every stream is a row of one flow-LM step on its pipeline's own thread (with
        # its own replica), which also prefills the prompts; `pipelines` of them side by side
        # (bot.synthesis.pipelines). The pool's threads make voice states and clones.
        self._pipelines: Pipelines | None = None
        self._batch = 1
        if batch > 1:
            cores = pipeline_cores(pipelines)
            digests = StateDigests()  # a voice state is packed once for every worker

            def make(index: int, on_death: Callable[[Pipeline], None]) -> Pipeline:
                if source is not None:
                    return ProcessPipeline(
                        source,
                        frame_s=1 / model.mimi.frame_rate,
                        max_rows=batch,
                        costs=costs,
                        index=index,
                        cores=cores,
                        on_death=on_death,
                        digests=digests,
                    )
                return Batcher(
                    replicate(model),
                    max_rows=batch,
                    costs=costs,
                    index=index,
                    cores=cores,
                    on_death=on_death,
                )

            self._pipelines = Pipelines(make, pipelines)
            if source is not None:  # each worker holds a copy of the weights
                self.model_bytes *= 1 + pipelines
                try:  # loaded side by side; the engine is ready once they all are
                    for pipeline in self._pipelines.pipelines:
                        assert isinstance(pipeline, ProcessPipeline)
                        pipeline.wait_ready()
                except Exception as error:
                    self._pipelines.close()
                    raise ModelUnavailableError(
                        f"a synthesis worker process could not start: {error}"
                    ) from error
            self._batch = batch
            # the scheduler's live workers: one per row it may admit, in all pipelines
            self.workers, self.spare_lanes = batch * pipelines, 0

    # ---- properties ------------------------------------------------------------------------
    @property
    def has_voice_cloning(self) -> bool:
        return self._can_clone

    def describe(self) -> str:
        cloning = "with voice cloning" if self.has_voice_cloning else "WITHOUT voice cloning"
        batching = "one stream per thread"
        if self._pipelines is not None:
            count = len(self._pipelines)
            batching = f"batches of up to {self._batch}"
            batching += f" in each of {count} pipelines" if count > 1 else ""
        return f"Pocket TTS loaded ({cloning}; {batching}; default voice {self.default_voice!r})"

    def capacity(self, rate: float = 1.0, extra: int = 0) -> int:
        """How many streams speak at once in real time, the fastest at `rate`: for the
        batched engine, from the live step times (see `bot.synthesis.capacity`; `extra`:
        rows kept free); else the worker threads."""
        if self._pipelines is None:
            return self.workers
        return self._pipelines.capacity(rate, extra)

    @property
    def rows(self) -> int:
        """The batch size of each pipeline (1: one stream per thread)."""
        return self._batch

    @property
    def pipelines(self) -> Pipelines | None:
        """The batched engine's pipelines (None: one stream per thread)."""
        return self._pipelines

    def cache_bytes(self) -> int:
        """The bytes of the pipelines' attention caches and decoder states, which count
        against TTS_MEMORY_MB beside the weights (`model_bytes`)."""
        return self._pipelines.cache_bytes() if self._pipelines is not None else 0

    @property
    def idle(self) -> bool:
        """No stream of this engine is running or waiting."""
        return all(stop.is_set() for stop in list(self._active))

    @property
    def batched(self) -> bool:
        return self._pipelines is not None

    # ---- model work ------------------------------------------------------------------------
    async def call(self, fn: Callable[[Any], T], *, background: bool = False) -> T:
        """Run `fn(model)` in a worker thread with a model of the pool (the scheduler's way
        in for work that is not a stream: clones, voice states). `background`: on the
        background thread, so the workers stay free for live speech."""
        if self._closed:
            raise RuntimeError("the TTS engine is closed")
        loop = asyncio.get_running_loop()
        executor, models = self._lane(background)
        return await loop.run_in_executor(executor, self._with_model, fn, models)

    def _lane(self, background: bool) -> tuple[ThreadPoolExecutor, queue.SimpleQueue[Any]]:
        """The threads and model objects for live or background work."""
        if background:
            return self._background_executor, self._background_models
        return self._executor, self._free_models

    @staticmethod
    def _with_model(fn: Callable[[Any], T], models: queue.SimpleQueue[Any]) -> T:
        model = models.get()  # as many models as the lane's threads: never waits
        try:
            return fn(model)
        finally:
            models.put(model)

    async def voice_state(self, voice: str | None = None) -> ModelState:
        """The model state for a voice spec (loaded in a worker; cached)."""
        return await self.call(lambda model: self.voice_state_sync(voice, model))

    def voice_state_sync(self, voice: str | None, model: Any) -> ModelState:
        spec = voice or self.default_voice
        state = self.voice_cache.get(spec)
        if state is None:
            state = self._load_voice(spec, model)
            self.voice_cache.put(spec, state)
        return state

    async def forget_voice(self, voice: str) -> None:
        """Drop a cached state and phrases (its file was rebuilt or deleted); no model work."""
        self.voice_cache.pop(voice)
        if self.phrases is not None:
            await asyncio.to_thread(self.phrases.forget_voice, voice)

    def clone_sync(self, clip: np.ndarray, path: Path, model: Any) -> int:
        """Make a voice state from a 24 kHz mono clip and export it to `path`; its size.

        Raises UnusableVoiceError when the loaded weights cannot clone. Run through `call()`.
        """
        from pocket_tts import export_model_state

        if not self.has_voice_cloning:
            raise UnusableVoiceError(CLONING_UNAVAILABLE)
        tensor = torch.from_numpy(np.ascontiguousarray(clip, dtype=np.float32))[None, :]
        state = model.get_state_for_audio_prompt(tensor)
        export_model_state(state, path)
        return path.stat().st_size

    def _load_voice(self, spec: str, model: Any) -> ModelState:
        state: ModelState  # pocket-tts's `get_state_for_audio_prompt` (untyped) gives one
        path = Path(spec).expanduser()
        if path.suffix == ".safetensors":
            if not path.is_file():
                raise UnusableVoiceError(f"voice state file {path} does not exist")
            try:
                state = model.get_state_for_audio_prompt(path)
                return state
            except Exception as error:
                raise UnusableVoiceError(
                    f"{path.name} is not a usable voice state: {error}"
                ) from error
        if path.is_file():
            if not self.has_voice_cloning:
                raise UnusableVoiceError(CLONING_UNAVAILABLE)
            clip = read_file(path)
            state = model.get_state_for_audio_prompt(torch.from_numpy(clip)[None, :])
            return state
        if spec in BUILTIN_VOICES or spec.startswith("hf://"):
            try:
                state = model.get_state_for_audio_prompt(spec)
                return state
            except (HfHubHTTPError, LocalEntryNotFoundError, ConnectionError) as error:
                raise UnusableVoiceError(
                    f"built-in voice {spec!r} could not be downloaded ({type(error).__name__})"
                ) from error
            except ValueError as error:
                raise UnusableVoiceError(
                    f"voice {spec!r} cannot be used with this model: {error}"
                ) from error
        if path.suffix or "/" in spec:
            raise UnusableVoiceError(f"voice file {path} does not exist")
        raise UnusableVoiceError(
            f"unknown voice {spec!r}: give a built-in name, a clip or a .safetensors"
        )

    def stream(
        self,
        text: str,
        voice: str | None = None,
        *,
        background: bool = False,
        tempo: Tempo | None = None,
        last: bool = True,
        slack: Callable[[], float] | None = None,
    ) -> SynthesisStream:
        """Start synthesizing `text`; chunks arrive on the returned stream. `background`:
        files and previews, which take a free row only after live speech (batched).
        `tempo`: the utterance's stretcher, run on the thread that makes the audio (its
        tail is added after the `last` unit of the utterance). `slack`: how much audio its
        listener has ahead, callable from any thread (batched: `Batcher.PACE_S`)."""
        if self._closed:
            raise RuntimeError("the TTS engine is closed")
        sink = _Sink(asyncio.get_running_loop())
        if tempo is not None:
            sink = _TempoSink(sink, tempo, last)
        stream = SynthesisStream(sink)
        self._active.add(sink.stop)
        executor, models = self._lane(background)
        if self._pipelines is not None:
            executor.submit(
                self._prefill, self._pipelines, sink, text, voice, background, models, slack
            )
        else:
            executor.submit(self._generate, sink, text, voice, models)
        return stream

    def _prefill(
        self,
        pipelines: Pipelines,
        sink: _Sink,
        text: str,
        voice: str | None,
        background: bool,
        models: queue.SimpleQueue[Any],
        slack: Callable[[], float] | None = None,
    ) -> None:
        """Make (or fetch) the voice state with a pooled model, then hand the stream to the
        batch, whose thread prefills its prompt between two steps."""
        model = models.get()  # as many models as the lane's threads: never waits
        try:
            if sink.stop.is_set():
                sink.put(_END)
                return
            state = self.voice_state_sync(voice, model)
        except BaseException as error:  # delivered to the caller, not swallowed
            sink.put(error)
            sink.put(_END)
            return
        finally:
            models.put(model)
        request = Request(
            collections.deque(),
            emit=sink.put,
            end=sink.end,
            stop=sink.stop,
            prepare=lambda batch_model: prefill_chunks(batch_model, state, text),
        )
        request.background = background
        request.slack = slack
        request.work = (state, text)
        sink.request = request
        try:
            pipelines.submit(request)
        except Exception as error:  # the stream ends with it; nobody else would end it
            log.error("a stream could not be handed to the batch: %s", error)
            if not request.ended:
                request.ended = True
                request.end(StreamRefused(f"the synthesis pipeline refused it: {error}"))

    def _generate(
        self, sink: _Sink, text: str, voice: str | None, models: queue.SimpleQueue[Any]
    ) -> None:
        model = models.get()  # as many models as the lane's threads: never waits
        try:
            if sink.stop.is_set():
                return
            state = self.voice_state_sync(voice, model)
            chunks = model.generate_audio_stream(state, text, stop=sink.stop)
            try:
                for chunk in chunks:
                    # After a cancel, keep draining: pocket-tts then joins its own threads.
                    if not sink.stop.is_set():
                        sink.put(chunk.numpy().astype(np.float32, copy=False))
                if not sink.stop.is_set():
                    sink.complete()
            finally:
                sink.stop.set()
                chunks.close()
        except BaseException as error:  # delivered to the caller, not swallowed
            sink.put(error)
        finally:
            models.put(model)
            sink.put(_END)

    async def synthesize(self, text: str, voice: str | None = None) -> np.ndarray:
        """The whole utterance as one array (for files)."""
        async with self.stream(text, voice) as stream:
            chunks = [chunk async for chunk in stream]
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)

    async def close(self) -> None:
        """Stop every stream and wait for the worker, so no model thread outlives us."""
        if self._closed:
            return
        self._closed = True
        for stop in list(self._active):
            stop.set()
        if self._pipelines is not None:
            await asyncio.to_thread(self._pipelines.close)
        # Queued jobs see their stop event set and return at once.
        await asyncio.to_thread(self._executor.shutdown, wait=True)
        await asyncio.to_thread(self._background_executor.shutdown, wait=True)
