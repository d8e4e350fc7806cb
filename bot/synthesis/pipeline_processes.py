"""A pipeline in a worker process: one `Batcher` with its own copy of the model, fed over a pipe.

Threads share one interpreter lock: the Python between torch's operations (pocket-tts's module
code, the batch's bookkeeping) runs one thread at a time, so thread pipelines stop scaling
long before the cores run out (docs/performance.md, "More cores: pipelines"). A process has
its own. `ProcessPipeline` is the `Pipeline` (`bot.synthesis.pipelines`) the bot's process
holds for one worker:

- the worker loads the model itself (`source`, a picklable call: the same weights, set up as
  the bot's) and runs a `Batcher` on it;
- a stream goes over as its text and the digest of its voice state (prefilled in the worker,
  as in a thread pipeline); the state itself crosses once, as bytes in the pipe, and the
  worker keeps it (`bot.synthesis.state_transfer`: no `/dev/shm`, no descriptor per tensor);
  its audio comes back frame by frame, then its end (with its error's text, and how long the
  batch held its steps back for it: the scheduler's speed estimate leaves that out);
- cancels and each stream's slack (the audio its listener has ahead, which paces the batch)
  go over every `TICK_S`;
- the worker's live step times come back as they are measured, so that this process's
  `StepCosts` (the scheduler's capacity) follows them as a thread pipeline's does;
- what the worker says goes over in bursts (`Outbox`): a step's frames, one for each of its
  rows, make one message, which costs this process one receive and one unpickling instead of
  one per row;
- when the worker exits (killed, out of memory, its batch failed), a reader thread sees the
  pipe close, ends its streams with the error, and tells `on_death`, which makes a new one;
- whatever else fails on the way to the worker (packing a state, a pipe that refuses a
  message) ends that stream with `StreamRefused`, logged once with its cause: a stream that
  never reached its worker must not wait for an end that never comes.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import logging
import multiprocessing
import queue
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import torch

from bot.core.log_privacy import WithheldWords
from bot.synthesis.batching import Batcher, LiveCapacity, ModelState, Request, prefill_chunks
from bot.synthesis.capacity import BatchCost, StepCosts
from bot.synthesis.model_errors import StreamRefused
from bot.synthesis.state_transfer import StateDigests, WorkerStates, unpack

log = logging.getLogger(__name__)

TICK_S = 0.1  # how often cancels and slack go to the worker (the batch paces at 2 s of slack)
READY_S = 300.0  # the most a stream waits for a new worker's model to load
BURST = 256  # the most messages the worker sends as one
# How long the worker's outbox waits after a message for the rest of its burst (a step's
# rows are decoded one after another, its figures follow): a frame is 80 ms.
LINGER_S = 0.005
CLOSE_S = 10.0  # a worker told to close is killed after this


class WorkerDied(StreamRefused):
    """The pipeline's worker process ended with streams in it."""


class ProcessPipeline:
    """One pipeline run by a worker process (see the module's docstring)."""

    def __init__(
        self,
        source: Callable[[], Any],
        *,
        frame_s: float,
        max_rows: int,
        costs: list[BatchCost] | None,
        index: int,
        cores: int,
        on_death: Callable[[ProcessPipeline], None] | None = None,
        digests: StateDigests | None = None,
    ) -> None:
        """`digests`: the voice states' digests, shared by the engine's pipelines."""
        self.index = index
        self.frame_s = frame_s
        self.costs = StepCosts(costs or [], max_rows, frame_s, cores)
        self._capacity = LiveCapacity(self.costs, index)
        self._on_death = on_death
        self._streams: dict[int, Request] = {}
        self._stopped: set[int] = set()  # cancels already sent
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # the streams, and sending on the pipe
        self._closed = False
        self.failed: BaseException | None = None
        self._cache_bytes = 0
        self._digests = digests or StateDigests()
        self.states = WorkerStates()  # what the worker holds (this process decides)
        self._ready = threading.Event()
        self._loaded = False  # its model loaded: it said "ready"
        context = multiprocessing.get_context("spawn")  # no fork of a threaded process
        self._pipe, child = context.Pipe()
        self.process = context.Process(
            target=serve,
            args=(child, source, max_rows, costs, cores, logging.getLogger().getEffectiveLevel()),
            name=f"tts-pipeline-{index}",
            daemon=True,
        )
        self.process.start()
        child.close()
        self._reader = threading.Thread(
            target=self._read, name=f"tts-pipeline-{index}-reader", daemon=True
        )
        self._reader.start()
        self._ticker = threading.Thread(
            target=self._tick, name=f"tts-pipeline-{index}-ticker", daemon=True
        )
        self._ticker.start()

    def wait_ready(self, timeout: float = READY_S) -> None:
        """Until its worker has loaded the model; raises what stopped it."""
        if not self._ready.wait(timeout):
            raise WorkerDied(f"pipeline {self.index}'s worker did not load its model")
        if not self._loaded:
            raise self.failed or WorkerDied(f"pipeline {self.index}'s worker ended")

    # ---- the Pipeline protocol -------------------------------------------------------------
    @property
    def alive(self) -> bool:
        return not self._closed and self.failed is None and self.process.is_alive()

    def capacity(self, rate: float = 1.0, extra: int = 0) -> int:
        """As a thread pipeline's (its worker's live step times); none while its worker is
        loading the model: a new stream then goes to a pipeline that can start it now."""
        return self._capacity(rate, extra) if self._loaded else 0

    def cache_bytes(self) -> int:
        """The worker's attention caches and decoder states, as it last said."""
        return self._cache_bytes

    def holds(self, request: Request) -> bool:
        """Whether its worker holds the stream's voice state (`Pipeline.holds`)."""
        state = request.work[0] if request.work is not None else None
        if state is None:
            return False
        key, _ = self._digests.of(state)
        with self._lock:
            return key in self.states

    def submit(self, request: Request) -> bool:
        """Send `request` to the worker once its model is loaded; False when it has died. A
        stream that cannot be sent for any other reason is ended here with the cause."""
        if not request.more:
            request.ended = True
            request.end(None)
            return True
        if not self._ready.wait(READY_S) or not self.alive:
            return False
        state, text = request.work or (None, "")
        if state is None:  # only streams made by the engine (a voice state and a text)
            raise ValueError("a worker process takes a stream's voice state and text")
        try:
            key, payload = self._digests.of(state)
            with self._lock:
                if self.failed is not None:
                    return False
                stream = next(self._ids)
                self._streams[stream] = request
                try:
                    self._send_state(key, state, payload)
                    paced = request.slack is not None
                    self._pipe.send(("submit", stream, key, text, request.background, paced))
                except (OSError, EOFError):  # the worker is gone: the next pipeline takes it
                    del self._streams[stream]
                    return False
                except BaseException:
                    del self._streams[stream]
                    raise
        except Exception as error:  # whatever else: this stream ends, the pipeline goes on
            log.error(
                "pipeline %d: a stream could not be sent to its worker (%s: %s)",
                self.index,
                type(error).__name__,
                error,
            )
            request.ended = True
            request.end(StreamRefused(f"the synthesis process could not take it: {error}"))
        return True

    def _send_state(self, key: str, state: ModelState, payload: bytes | None) -> None:
        """The voice state `key` to the worker unless it holds it (under `_lock`)."""
        for message in self.states.messages(key, state, payload):
            self._pipe.send(message)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            with contextlib.suppress(OSError, ValueError):
                self._pipe.send(("close",))
        self.process.join(CLOSE_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(CLOSE_S)
        self._reader.join(CLOSE_S)
        self._end_all(WorkerDied(f"pipeline {self.index} closed"))

    # ---- the pipe ----------------------------------------------------------------------------
    def _read(self) -> None:
        """What the worker sends, until its end."""
        try:
            while True:
                for message in self._pipe.recv():
                    self._take(message)
        except (EOFError, OSError):
            pass
        except Exception:  # a reader that fails ends the pipeline
            log.exception("pipeline %d: its worker's messages could not be read", self.index)
        self._ready.set()  # nobody waits for a worker that is gone
        if self._closed:
            return
        code = self.process.exitcode
        self.failed = self.failed or WorkerDied(
            f"the synthesis process of pipeline {self.index} ended (exit code {code})"
        )
        log.error("%s: its streams end, and it is replaced", self.failed)
        self._end_all(self.failed)
        if self.process.is_alive():
            self.process.kill()
        # one that never loaded its model (a model that cannot load) is not made again and
        # again: its place stays empty, and the others carry on
        if self._on_death is not None and self._loaded:
            self._on_death(self)

    def _take(self, message: tuple[Any, ...]) -> None:
        """One message from the worker."""
        kind = message[0]
        if kind == "audio":
            request = self._streams.get(message[1])
            if request is not None and not request.stop.is_set():
                request.emit(message[2])
        elif kind == "end":
            with self._lock:
                request = self._streams.pop(message[1], None)
                self._stopped.discard(message[1])
            if request is not None and not request.ended:
                request.paced_s = message[3]  # the scheduler's work is time less that
                request.ended = True
                request.end(None if message[2] is None else RuntimeError(message[2]))
        elif kind == "cost":
            self.costs.record(*message[1:])
        elif kind == "bytes":
            self._cache_bytes = message[1]
        elif kind == "ready":
            self._loaded = True
            self._ready.set()
        elif kind == "failed":
            self.failed = RuntimeError(message[1])
        elif kind == "log":  # through this process's handlers and format
            logging.getLogger(message[2]).log(message[1], "%s", message[3])

    def _end_all(self, error: BaseException) -> None:
        with self._lock:
            streams, self._streams = list(self._streams.values()), {}
        for request in streams:
            if not request.ended:
                request.ended = True
                request.end(error)

    def _tick(self) -> None:
        """Every TICK_S: the cancels, and the slack of each stream that has one."""
        while not self._closed and self.failed is None and self.process.is_alive():
            time.sleep(TICK_S)
            try:
                if not self._send_news():
                    return
            except Exception:  # logged, and the next tick tries again
                log.exception("pipeline %d: cancels and slack could not be sent", self.index)

    def _send_news(self) -> bool:
        """The cancels not sent yet and every paced stream's slack; False: the pipe is gone."""
        with self._lock:
            streams = list(self._streams.items())
        stops = [s for s, r in streams if r.stop.is_set() and s not in self._stopped]
        slack = {}
        for stream, request in streams:
            if request.slack is not None:
                try:
                    slack[stream] = request.slack()
                except Exception:  # a listener gone: no reason to wait
                    slack[stream] = 0.0
        with self._lock:
            try:
                if stops:
                    self._stopped.update(stops)
                    self._pipe.send(("stop", stops))
                if slack:
                    self._pipe.send(("slack", slack))
            except (OSError, ValueError):
                return False
        return True


# ---- the worker ----------------------------------------------------------------------------
class Outbox:
    """The worker's messages to the bot's process, sent by one thread of their own in
    bursts: a message and what is said in the `LINGER_S` after it, or while it goes out, go
    as one (a step's frames, one per row, come one after another). One sender keeps them in
    the order they were said."""

    def __init__(self, pipe: Connection) -> None:
        self._pipe = pipe
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self.gone = threading.Event()  # the pipe broke: the bot's process is gone
        self._thread = threading.Thread(target=self._run, name="tts-outbox", daemon=True)
        self._thread.start()

    def send(self, *message: Any) -> None:
        self._queue.put(message)

    def close(self) -> None:
        """Send what was said, then stop."""
        self._queue.put(None)
        self._thread.join(CLOSE_S)

    def _run(self) -> None:
        closing = False
        while not closing:
            burst = [self._queue.get()]
            if burst[-1] is not None:
                time.sleep(LINGER_S)
            while burst[-1] is not None and len(burst) < BURST:
                try:
                    burst.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            closing = burst[-1] is None  # the last said: nothing comes after it
            if closing:
                burst.pop()
            try:
                if burst:
                    self._pipe.send(burst)
            except (OSError, ValueError):  # the bot's process is gone
                self.gone.set()
                return


class PipeLogHandler(logging.Handler):
    """A worker's log records, sent to the bot's process to be logged there."""

    def __init__(self, send: Callable[..., None]) -> None:
        super().__init__()
        self._send = send

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            self._send("log", record.levelno, record.name, text)
        except Exception:  # the pipe is gone: nowhere left to say it
            self.handleError(record)


def serve(
    pipe: Connection,
    source: Callable[[], Any],
    max_rows: int,
    costs: list[BatchCost] | None,
    cores: int,
    log_level: int = logging.INFO,
) -> None:
    """The worker process: load the model, run a `Batcher`, and answer the pipe until told to
    close (or the bot's process is gone)."""
    torch.set_num_threads(1)  # as pocket-tts sets it: a pipeline is its two threads
    # Ctrl+C reaches the whole process group: the bot's process closes its workers in order
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    outbox = Outbox(pipe)
    try:
        run_worker(pipe, outbox, source, max_rows, costs, cores, log_level)
    finally:
        outbox.close()


def run_worker(
    pipe: Connection,
    outbox: Outbox,
    source: Callable[[], Any],
    max_rows: int,
    costs: list[BatchCost] | None,
    cores: int,
    log_level: int,
) -> None:
    """`serve`'s work: what it says goes through `outbox`."""
    send = outbox.send
    handler = PipeLogHandler(send)
    handler.addFilter(WithheldWords())  # members' words never leave the worker in a record
    logging.basicConfig(level=log_level, handlers=[handler], force=True)
    logging.getLogger("pocket_tts").setLevel(max(logging.WARNING, log_level))

    try:
        model = source()
    except Exception as error:  # said to the bot's process, which logs it
        send("failed", f"the model could not be loaded: {error}")
        return
    died = threading.Event()
    batcher = Batcher(
        model,
        max_rows=max_rows,
        costs=costs,
        cores=cores,
        on_death=lambda _: died.set(),
        on_cost=lambda *figure: send("cost", *figure),
    )
    streams: dict[int, Request] = {}
    slack: dict[int, float] = collections.defaultdict(float)
    states: dict[str, ModelState] = {}  # voice states by digest: what the bot's process sent
    send("bytes", batcher.cache_bytes())
    send("ready")
    last_bytes = time.monotonic()
    try:
        while not died.is_set() and not outbox.gone.is_set():
            if pipe.poll(TICK_S):
                message = pipe.recv()
                if message[0] == "close":
                    break
                try:
                    handle(message, batcher, streams, slack, states, send)
                except Exception as error:  # that message's stream ends, the worker goes on
                    log.error("a message from the bot's process failed: %r", error)
                    if message[0] == "submit":
                        send("end", message[1], f"the synthesis process failed: {error}", 0.0)
            if time.monotonic() - last_bytes > 1.0:
                last_bytes = time.monotonic()
                send("bytes", batcher.cache_bytes())
        if died.is_set():
            send("failed", f"its batch failed: {batcher.failed}")
    except (EOFError, OSError):  # the bot's process is gone
        pass
    finally:
        batcher.close()


def handle(
    message: tuple[Any, ...],
    batcher: Batcher,
    streams: dict[int, Request],
    slack: dict[int, float],
    states: dict[str, ModelState],
    send: Callable[..., None],
) -> None:
    """One message from the bot's process, in the worker."""
    kind = message[0]
    if kind == "submit":
        _, stream, key, text, background, paced = message
        state = states.get(key)
        if state is None:  # the bot's process sends a state before the streams naming it
            send("end", stream, "its voice state never reached the synthesis process", 0.0)
            return
        request = worker_request(stream, state, text, streams, slack, send)
        request.background = background
        if paced:
            request.slack = lambda: slack[stream]
        streams[stream] = request
        if not batcher.submit(request):
            send("end", stream, "the pipeline failed", 0.0)
    elif kind == "state":
        states[message[1]] = unpack(message[2])
    elif kind == "forget":  # a stream holding one goes on with it
        for key in message[1]:
            states.pop(key, None)
    elif kind == "stop":
        for stream in message[1]:
            if stream in streams:
                streams[stream].stop.set()
    elif kind == "slack":
        slack.update(message[1])


def worker_request(
    stream: int,
    state: ModelState,
    text: str,
    streams: dict[int, Request],
    slack: dict[int, float],
    send: Callable[..., None],
) -> Request:
    """A stream in the worker: its audio and its end go back over the pipe."""

    def emit(chunk: np.ndarray) -> None:  # the decoder's own copy: pickled later is fine
        send("audio", stream, chunk)

    def end(error: BaseException | None) -> None:
        streams.pop(stream, None)
        slack.pop(stream, None)
        said = None if error is None else str(error) or type(error).__name__
        send("end", stream, said, request.paced_s)

    request = Request(
        collections.deque(),
        emit=emit,
        end=end,
        prepare=lambda model: prefill_chunks(model, state, text),
    )
    return request
