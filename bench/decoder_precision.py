"""Mimi's decode per frame in bfloat16 (`TTS_DECODER_PRECISION`) against fp32, in one run.

Random weights (Hugging Face is out of reach here), the real `english` architecture. For each
batch size, one `BatchedMimi` per precision decodes the same latents a frame at a time,
interleaved (frame after frame), so that the machine's load falls on all alike: fp32 and bf16
as the bot runs them (the large fp32 products packed for oneDNN, `linear_packing`; the
attention cut to its window, `windowed_attention`), and "before", fp32 with the attention over
every slot as at issue 35's start, the baseline. Printed: the median milliseconds per decode,
the ratios of the same run, and how far bf16's audio is from fp32's (relative L2).
`--profile ROWS` prints torch's profile of each at that size, the ops that take the time.

Usage: .venv/bin/python bench/decoder_precision.py [--rows 1 4 8 16] [--frames 40]
       [--config english] [--profile 8]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
from pocket_tts import TTSModel

from bot.synthesis.batching import BatchedMimi
from bot.synthesis.decoder_precision import HalfDecoder, cpu_has_bf16
from bot.synthesis.linear_packing import pack_linears
from bot.synthesis.windowed_attention import window_attention
from tests.tiny_model import write_random_config

WARM_UP = 5


def models(config: str) -> dict[str, Any]:
    """fp32 as the bot ran it before the window (`windowed_attention`), fp32 and bf16 as it
    runs them now."""
    path = write_random_config(config, Path(tempfile.mkdtemp(prefix="decoder-")), full_length=True)
    torch.manual_seed(0)  # the same random weights each run, so the relative L2 repeats
    every_slot = TTSModel.load_model(config=str(path))
    base = copy.deepcopy(every_slot)
    window_attention(base.mimi.decoder_transformer)
    half = copy.deepcopy(base)
    half.half_decoder = HalfDecoder(half.mimi)
    pack_linears(base)
    pack_linears(every_slot)
    return {"fp32": base, "bf16": half, "fp32 every slot": every_slot}


def batch(model: Any, rows: int) -> BatchedMimi:
    mimi = BatchedMimi(model, max_rows=rows)
    for _ in range(rows):
        mimi.join()
    return mimi


def measure(named: dict[str, Any], rows: int, frames: int) -> dict[str, tuple[float, Any]]:
    batches = {name: batch(model, rows) for name, model in named.items()}
    generator = torch.Generator().manual_seed(0)
    ldim = named["fp32"].flow_lm.ldim
    times: dict[str, list[float]] = {name: [] for name in named}
    audio: dict[str, list[torch.Tensor]] = {name: [] for name in named}
    for frame in range(WARM_UP + frames):
        latents = torch.randn(rows, 1, ldim, generator=generator)
        for name, mimi in batches.items():
            started = time.perf_counter()
            out = mimi.decode(latents)
            if frame >= WARM_UP:
                times[name].append(time.perf_counter() - started)
            audio[name].append(out)
    return {
        name: (statistics.median(times[name]) * 1000, torch.cat(audio[name], dim=1))
        for name in named
    }


def profile(named: dict[str, Any], rows: int) -> None:
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    ldim = named["fp32"].flow_lm.ldim
    for name, model in named.items():
        mimi = batch(model, rows)
        latents = torch.randn(rows, 1, ldim)
        for _ in range(WARM_UP):
            mimi.decode(latents)
        with torch_profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            for _ in range(20):
                mimi.decode(latents)
        print(f"\n{name} at {rows} rows, 20 decodes:")
        table = prof.key_averages(group_by_input_shape=True).table(
            sort_by="self_cpu_time_total", row_limit=12, max_name_column_width=32
        )
        print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 4, 8, 16])
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--config", default="english")
    parser.add_argument("--profile", type=int, metavar="ROWS")
    args = parser.parse_args()
    torch.set_num_threads(1)  # as pocket-tts runs it
    named = models(args.config)
    print(f"{args.config}, random weights; this CPU has native bf16: {cpu_has_bf16()}")
    print("ms per decode; 'before': fp32 with the attention over every slot, as at issue 35's")
    print(
        f"{'rows':>4} {'before':>7} {'fp32 ms':>8} {'bf16 ms':>8} {'bf16/fp32':>9}"
        f" {'bf16/before':>11} {'rel. L2':>8}"
    )
    for rows in args.rows:
        got = measure(named, rows, args.frames)
        fp32, bf16, before = got["fp32"], got["bf16"], got["fp32 every slot"]
        error = float((bf16[1] - fp32[1]).norm() / fp32[1].norm())
        print(
            f"{rows:>4} {before[0]:>7.1f} {fp32[0]:>8.1f} {bf16[0]:>8.1f}"
            f" {bf16[0] / fp32[0]:>9.2f} {bf16[0] / before[0]:>11.2f} {error:>8.4f}"
        )
    if args.profile:
        profile(named, args.profile)


if __name__ == "__main__":
    main()
