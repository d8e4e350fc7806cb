"""How fast batched speech runs: the decoder in one call against the old two halves.

Random weights (Hugging Face is out of reach here): the tests' model (`english_2m_2026-10`,
the configuration the end-to-end tests speak with) and the real `english` architecture. For
each, `rows` streams speak at once through the bot's `Batcher` (flow LM on one thread, Mimi on
another), and the audio made per row per second of wall time is printed:

- `halves` (the baseline, the decoder until December 2026): each step's rows decoded in two
  halves side by side, one on a helper thread;
- `one call` (the bot now): all rows in one call;
- `beside a load` (one call): while another language's model loads in a thread at the bot's
  low priority, over and over: what speaking servers keep while a language loads.

1.00x is real time: under it, listeners hear gaps. Ratios are against `halves` in the same run.

Usage: .venv/bin/python bench/decoding.py [--rows 2 4] [--seconds 6] [--repeats 2] [--models ...]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pocket_tts import TTSModel

from bot.synthesis.batching import BatchedMimi, Batcher, Request, prefill
from bot.synthesis.engine import replicate
from bot.synthesis.engine_loading import LOAD_NICENESS
from bot.synthesis.pocket_tts_adapter import init_states
from tests.tiny_model import train_tokenizer, write_random_config

TEXT = "This message keeps a server talking while another language loads. " * 8
MODELS = ["english_2m_2026-10", "english"]


@contextlib.contextmanager
def decoding_in_halves() -> Iterator[None]:
    """The baseline: BatchedMimi.decode as it was, two halves side by side."""
    helper = ThreadPoolExecutor(1, "tts-decoder-half")
    shipped = BatchedMimi.decode

    @torch.no_grad()
    def decode(self: BatchedMimi, latents: torch.Tensor) -> torch.Tensor:
        count = latents.shape[0]
        self._make_room(self.per_latent)
        flow = self.model.flow_lm
        latents = latents * flow.emb_std + flow.emb_mean
        if count >= 2:
            half = count // 2
            first = helper.submit(self._decode_rows, slice(0, half), latents[:half])
            second = self._decode_rows(slice(half, count), latents[half:])
            audio = torch.cat([first.result(), second])
        else:
            audio = self._decode_rows(slice(0, count), latents)
        self.offset += self.per_latent
        for name in self._attention:
            self.state[name]["offset"][:] = self.offset
        return audio[:, 0]

    BatchedMimi.decode = decode  # type: ignore[method-assign]
    try:
        yield
    finally:
        BatchedMimi.decode = shipped  # type: ignore[method-assign]
        helper.shutdown()


@contextlib.contextmanager
def loading_beside(config: Path) -> Iterator[None]:
    """Load a model over and over in a thread at the bot's loading priority."""
    stop = threading.Event()

    def run() -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOAD_NICENESS)
        while not stop.is_set():
            model = TTSModel.load_model(config=str(config))
            replicate(model)
            BatchedMimi(model, max_rows=8)

    thread = threading.Thread(target=run, name="bench-load", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=60)


def speed_per_row(model: Any, rows: int, seconds: float, beside: Callable[[], Any]) -> float:
    """Audio seconds made per row per wall second, after a 1.5 s warm-up."""
    frame_s = 1 / model.mimi.frame_rate
    made = collections.Counter[int]()
    batcher = Batcher(replicate(model), max_rows=8)
    empty = init_states(model.flow_lm, batch_size=1, sequence_length=0)
    requests = [
        Request(
            collections.deque(prefill(model, empty, TEXT)),
            emit=lambda _chunk, n=n: made.update([n]),
            end=lambda _error: None,
        )
        for n in range(rows)
    ]
    try:
        for request in requests:
            batcher.submit(request)
        time.sleep(1.5)
        with beside():
            before, started = sum(made.values()), time.perf_counter()
            time.sleep(seconds)
            after, ended = sum(made.values()), time.perf_counter()
    finally:
        for request in requests:
            request.stop.set()
        batcher.close()
    return (after - before) * frame_s / rows / (ended - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=MODELS)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(
        f"{'model':<20} {'rows':>4} {'halves':>8} {'one call':>9} {'ratio':>6} "
        f"{'beside a load':>14} {'ratio':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = train_tokenizer(folder, 4000)
        for base in args.models:
            config = write_random_config(base, folder, tokenizer=tokenizer, full_length=True)
            model = TTSModel.load_model(config=str(config))
            for rows in args.rows:
                figures: dict[str, list[float]] = collections.defaultdict(list)
                for _ in range(args.repeats):  # interleaved, so drift hits every column
                    with decoding_in_halves():
                        figures["halves"].append(
                            speed_per_row(model, rows, args.seconds, contextlib.nullcontext)
                        )
                    figures["one"].append(
                        speed_per_row(model, rows, args.seconds, contextlib.nullcontext)
                    )
                    figures["load"].append(
                        speed_per_row(model, rows, args.seconds, lambda c=config: loading_beside(c))
                    )
                halves, one, load = (
                    statistics.median(figures[k]) for k in ("halves", "one", "load")
                )
                print(
                    f"{base:<20} {rows:>4} {halves:>7.2f}x {one:>8.2f}x {one / halves:>5.2f}x "
                    f"{load:>13.2f}x {load / halves:>5.2f}x",
                    flush=True,
                )


if __name__ == "__main__":
    main()
