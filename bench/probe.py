"""The model's own cost per stream at B rows, each row prompted as the bot's are: the floor.

`bench/load.py --breakdown` says how much CPU the bot spent per second of audio; this says how
much the model work alone costs at the same row count, so the two can be divided. An earlier
probe (a 20-token random prompt) read 20-50 attention-cache slots per step where the bot's rows
read 109-114, and the int8 step grows ~60% between 85 and 150 slots: its figure flattered the
model against the bot. Here each row is what the bot runs:

- the model loaded as the bot loads it (`load_model`: int8 or fp32, the decoder's
  precision attached, the large fp32 products packed for oneDNN), the real architecture
  (default `english`) with random weights;
- a voice state made from a 3 s clip (the one `bench/load.py` speaks with) and a ~20-word text,
  prefilled by the bot's own `prefill`, so every row holds voice + text positions;
- B rows joined to the bot's `BatchedFlowLM` and `BatchedMimi`, then one LM step and one decode
  of all B rows per frame, `--frames` frames after a few warm-up ones. The timed steps centre
  on `--slots` cache slots: by default the prompt plus half the text's speech (2.5 words/s, as
  `bench/load.py` sizes its texts), the mean over a unit spoken to its end (the LM steps alone,
  untimed, until there); `bench/load.py` asks for its run's own mean.

Printed per B: the CPU milliseconds of one LM step and of one decode (the thread's CPU time:
wall time on a busy machine would count the others' work), the attention-cache slots an LM step read
(the batch's offset, as `bench/load.py` counts it), the wall milliseconds of both, and the CPU
seconds of model work per second of audio at B rows: the LM and the decoder run side by side
on two threads in the bot, so per stream-frame (LM + decode) / B over the frame's 80 ms.

Usage: .venv/bin/python bench/probe.py [--rows 1 4 8 12 16 24] [--quantize yes|no|both]
       [--decoder auto|fp32|bf16] [--frames 40] [--words 20] [--config english]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import dataclasses
import logging
import math
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from bot.core.config import load_config
from bot.synthesis import engine_loading
from bot.synthesis.batching import BatchedFlowLM, BatchedMimi, Prefilled, Request, prefill
from bot.synthesis.clip import read_file
from bot.synthesis.decoder_precision import PRECISIONS, half_decoder
from tests.audio_samples import make_clip
from tests.tiny_model import _WORDS, write_random_config

WARM_UP = 5  # frames stepped and decoded before the timed ones
WORDS_PER_SECOND = 2.5  # speech's pace, as bench/load.py sets its texts' lengths
ModelState = dict[str, dict[str, torch.Tensor]]


@dataclass(frozen=True)
class ProbeResult:
    """One batch size's figures (times per frame: one LM step, one decode of every row)."""

    rows: int
    lm_cpu_s: float  # mean CPU seconds of one LM step
    decode_cpu_s: float  # mean CPU seconds of one decode
    wall_s: float  # median wall seconds of one LM step plus its decode
    slots: float  # mean attention-cache slots an LM step read
    frame_s: float

    @property
    def cpu_per_audio(self) -> float:
        """CPU seconds of model work per second of audio, each row a stream."""
        return (self.lm_cpu_s + self.decode_cpu_s) / self.rows / self.frame_s


@dataclass(frozen=True)
class ProbeEstimate:
    """The probe at a fractional row count (a run's mean), between the two sizes around it."""

    rows: float
    cpu_per_audio: float
    slots: float
    measured: tuple[ProbeResult, ...]


def load_model(config: Path, quantize: bool, decoder: str) -> Any:
    """The model as the bot loads it, for these settings."""
    env = {
        "TTS_CONFIG": str(config),
        "TTS_QUANTIZE": str(int(quantize)),
        "TTS_DECODER_PRECISION": decoder,
    }
    settings = load_config(env, dotenv_path=None, require_token=False)
    return engine_loading.load_model(settings)


def probe_text(words: int, seed: int = 0) -> str:
    """A sentence of `words` of the tests' words (their tokenizer knows them: ~2 tokens each)."""
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


class Probe:
    """One model and one realistic prompt (voice state + text), timed at any row count."""

    def __init__(
        self, model: Any, clip: Path, text: str, words_per_second: float = WORDS_PER_SECOND
    ) -> None:
        self.model = model
        self.frame_s = 1 / model.mimi.frame_rate
        audio = read_file(clip)  # as the engine reads DEFAULT_VOICE
        with torch.no_grad():
            state: ModelState = model.get_state_for_audio_prompt(torch.from_numpy(audio)[None, :])
        chunks = prefill(model, state, text)
        if len(chunks) != 1:
            raise ValueError(f"the text was split into {len(chunks)} chunks: use fewer words")
        # rows never end in the probe: the frames are counted here, not by pocket-tts's cap
        self.chunk: Prefilled = dataclasses.replace(chunks[0], max_gen_len=10**9)
        # the text spoken to its end, as the released model would: its mean step reads the
        # prompt and half its frames (random weights have no end of speech of their own)
        unit_frames = len(text.split()) / words_per_second / self.frame_s
        self.unit_slots = self.prompt + unit_frames / 2

    @property
    def prompt(self) -> int:
        """Positions each row's prompt holds (voice + text)."""
        return self.chunk.length

    @torch.no_grad()
    def measure(
        self, rows: int, frames: int = 40, slots: float | None = None, side_by_side: bool = False
    ) -> ProbeResult:
        """Time `frames` LM steps and decodes of `rows` rows, after `WARM_UP` frames, the
        steps reading `slots` cache slots on average (default `unit_slots`): the LM first
        steps alone (not timed, no decode) until the timed frames centre on them.

        `side_by_side`: as the bot runs them, a frame's decode on a second thread while the
        LM steps the next frame, so that each step is timed beside the other (the two cores
        share their memory, which slows both: 1.17-1.19x, 2026-12-02); else one after the
        other on this thread, each alone."""
        centre = self.unit_slots if slots is None else slots
        lead = max(0, round(centre - self.prompt - WARM_UP - (frames + 1) / 2))
        lm = BatchedFlowLM(self.model, max_rows=rows)
        mimi = BatchedMimi(self.model, max_rows=rows)
        for _ in range(rows):
            lm.join(Request(collections.deque(), _ignore, _ignore), self.chunk)
            mimi.join()
        for _ in range(lead):
            self._step(lm, rows)
        # pocket-tts runs torch on one thread: the calling thread's CPU is the model's, and
        # not that of whatever else the process runs (bench/load.py's engine between runs)
        clock = time.thread_time if torch.get_num_threads() == 1 else time.process_time

        def decode(latents: torch.Tensor) -> float:
            started = clock()
            mimi.decode(latents)
            return clock() - started

        lm_cpu = decode_cpu = 0.0
        walls: list[float] = []
        read: list[int] = []
        with concurrent.futures.ThreadPoolExecutor(1, "probe-decoder") as decoder:
            decoding: concurrent.futures.Future[float] | None = None
            for frame in range(WARM_UP + frames):
                wall, cpu = time.perf_counter(), clock()
                latents = self._step(lm, rows)
                stepped = clock() - cpu
                if side_by_side:  # the frame before's decode ran beside this step
                    decoded = decoding.result() if decoding is not None else 0.0
                    decoding = decoder.submit(decode, latents)
                else:
                    decoded = decode(latents)
                if frame >= WARM_UP:
                    lm_cpu += stepped
                    decode_cpu += decoded
                    walls.append(time.perf_counter() - wall)
                    read.append(lm.offset)  # after the step, as bench/load.py counts it
            if decoding is not None:  # the last frame's decode, beside no step: not counted
                decoding.result()
        return ProbeResult(
            rows,
            lm_cpu / frames,
            decode_cpu / frames,
            statistics.median(walls),
            statistics.mean(read),
            self.frame_s,
        )

    @staticmethod
    def _step(lm: BatchedFlowLM, rows: int) -> torch.Tensor:
        """One step of the batch: every row's latent."""
        latents = [latent for _, latent, _ in lm.step() if latent is not None]
        if len(latents) != rows:
            raise RuntimeError("a row ended during the probe")
        return torch.cat(latents)

    def at(
        self,
        rows: float,
        frames: int = 40,
        slots: float | None = None,
        side_by_side: bool = False,
    ) -> ProbeEstimate:
        """The probe at a mean row count (a run's): the step's CPU is interpolated between
        the whole row counts around it (a step's cost grows about linearly with its rows),
        then shared by `rows` streams."""
        rows = max(rows, 1.0)
        sizes = sorted({math.floor(rows), math.ceil(rows)})
        measured = tuple(self.measure(size, frames, slots, side_by_side) for size in sizes)
        first, last = measured[0], measured[-1]
        share = (rows - first.rows) / (last.rows - first.rows) if last.rows > first.rows else 0.0
        step_cpu = [m.lm_cpu_s + m.decode_cpu_s for m in (first, last)]
        cpu = step_cpu[0] + share * (step_cpu[1] - step_cpu[0])
        slots = first.slots + share * (last.slots - first.slots)
        return ProbeEstimate(rows, cpu / rows / self.frame_s, slots, measured)


def _ignore(*_: object) -> None:
    """A probe row's audio and end go nowhere."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 4, 8, 12, 16, 24])
    parser.add_argument("--quantize", choices=["no", "yes", "both"], default="both")
    parser.add_argument(
        "--decoder",
        choices=PRECISIONS,
        default="auto",
        help="TTS_DECODER_PRECISION, as the bot (auto: bf16 where the CPU has it)",
    )
    parser.add_argument("--frames", type=int, default=40, help="timed frames per batch size")
    parser.add_argument("--words", type=int, default=20, help="words of the prompt's text")
    parser.add_argument(
        "--slots",
        type=float,
        help="the mean attention-cache slots the timed steps read (default: the prompt and "
        "half the text's speech at 2.5 words/s, a unit's mean)",
    )
    parser.add_argument("--config", default="english")
    args = parser.parse_args()
    if min(args.rows) < 1 or args.frames < 1 or args.words < 1:
        parser.error("--rows, --frames and --words must be at least 1")
    logging.getLogger("pocket_tts").setLevel(logging.ERROR)
    text = probe_text(args.words)
    quantize = {"no": [False], "yes": [True], "both": [True, False]}[args.quantize]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_random_config(args.config, folder, full_length=True)
        clip = make_clip(folder / "voice.wav")
        for q in quantize:
            model = load_model(config, q, args.decoder)
            probe = Probe(model, clip, text)
            decoder = "bf16" if half_decoder(model) is not None else "fp32"
            print(
                f"\n{args.config} {'int8' if q else 'fp32'} (decoder {decoder}), random weights;"
                f" prompt {probe.prompt} positions (3 s voice, {args.words} words);"
                f" {args.frames} frames per size"
            )
            print(
                "ms of CPU per LM step and per decode, alone (one after the other on one"
                " thread) and side by side (the decode on a second thread, as in the bot)"
            )
            print(
                f"{'rows':>4} {'slots':>6} {'LM ms':>7} {'decode ms':>9} {'wall ms':>8}"
                f" {'CPU-s/audio s':>13} {'LM beside':>9} {'decode beside':>13}"
                f" {'wall beside':>11} {'CPU-s/audio s':>13}"
            )
            for rows in args.rows:
                r = probe.measure(rows, args.frames, args.slots)
                b = probe.measure(rows, args.frames, args.slots, side_by_side=True)
                print(
                    f"{rows:>4} {r.slots:>6.0f} {r.lm_cpu_s * 1000:>7.1f}"
                    f" {r.decode_cpu_s * 1000:>9.1f} {r.wall_s * 1000:>8.1f}"
                    f" {r.cpu_per_audio:>13.3f} {b.lm_cpu_s * 1000:>9.1f}"
                    f" {b.decode_cpu_s * 1000:>13.1f} {b.wall_s * 1000:>11.1f}"
                    f" {b.cpu_per_audio:>13.3f}",
                    flush=True,
                )
            del probe, model


if __name__ == "__main__":
    main()
