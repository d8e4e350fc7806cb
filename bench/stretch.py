"""Time-stretch for the speaking rate: three PyPI libraries, fed as the bot feeds them.

pocket-tts gives 24 kHz mono float32 audio in 80 ms chunks (1,920 samples); each library
gets the chunks one by one, at 1.0x (the baseline: no stretcher, the audio passes), 1.5x
and 0.75x, and we measure:
  cpu       CPU seconds per second of audio in (median of runs);
  first     compute time of the first chunk (ms), and the audio it gives (ms) next to what
            an ideal stretcher would give (80 ms / rate);
  lag       how far the output trails an ideal stretcher once streaming (ms of output):
            what the stretcher holds back (its tail comes at the end of the message);
  60ms after  chunks in before 60 ms are out (the player's prebuffer, so the first audio),
            this stretcher / an ideal one: each extra chunk is one more model step to wait;
  length    output length / (input length / rate), after the stream's end;
  pitch     the dominant frequency of a 220 Hz sine after the stretch (Hz);
  joins     the 10 ms peak envelope of that steady sine over the whole stream (min-max; a
            clean stretch stays near 0.5): a dip or a spike is a gap or a click.

Candidates: `pedalboard` (Spotify, Rubber Band inside; its `time_stretch` is offline: each
call is a whole clip), `python-stretch` (Signalsmith Stretch; its `process` seeks, flushes and
resets on each call: offline too), `pylibrb` (Rubber Band's real-time mode: a stream, the
R2 "faster" and R3 "finer" engines, standard and short windows).

The choice: pylibrb, R3 engine with the short window, no start pad (`bot/synthesis/tempo.py`).
It is the only one of the three that streams: one stretcher keeps its state across chunks
and across the units of a message, so joins are seamless. pedalboard and python-stretch,
given 80 ms at a time, stretch every chunk as a clip of its own: the steady sine's envelope
dips to 0.2-0.3 and spikes to 0.77 at the joins, its pitch drifts to 217-221 Hz, and their
state cannot be carried over (pedalboard also costs ~9% of a core). Among the Rubber Band
modes, R3 short gives audio from the first chunk, holds back the least (27 ms of output at
1.5x, 67 ms at 0.75x; R2 and the standard windows 50-100 ms), keeps the sine clean
(0.50-0.50, 220 Hz) and costs 0.4-0.9% of a core per second of audio; without the start pad
its first output comes with the first chunk, and the bot trims the end to the exact length.
R3 is also Rubber Band's engine for voice. Licences: Rubber Band (so pylibrb) and pedalboard
are GPL; python-stretch is MIT, but its Python API cannot stream.

Measured on the 2-core machine (quiet), 20 s per run, median of 5 (cpu: CPU-s per s in):
  passthrough 1.0x   cpu 0.0000
  pedalboard 1.5x    cpu 0.0869  first chunk 8.4 ms  joins 0.32-0.51  pitch 217.4
  python-stretch 1.5 cpu 0.0034  first chunk 0.3 ms  joins 0.21-0.77  pitch 217.4
  pylibrb R2 std 1.5 cpu 0.0054  first chunk 0.2 ms  lag 59.7 ms      joins 0.31-0.52
  pylibrb R3 sh 1.5x cpu 0.0044  first chunk 1.3 ms  lag 26.7 ms      joins 0.50-0.50  220.2 Hz
  pylibrb R3 sh 0.75 cpu 0.0090  first chunk 1.4 ms  lag 66.7 ms      joins 0.50-0.50  219.9 Hz
  (the bot's Tempo; lengths exact to the sample)
The engine's path (int8, batched): 0.62 CPU-s per s of model audio without the stretch,
0.57 with it at 1.5x and 0.75x (the stretch is within the noise); the first 60 ms were ready
136 ms after the request at 1x, +31 ms at 1.5x (one more model step: the player's 60 ms are
90 ms of model audio, for any stretcher), +1 ms at 0.75x (its second chunk is needed too, but
came right behind the first).

`--engine` also runs the bot's own path: the engine's stream of a message (the english
architecture, random weights, int8, batched as the bot runs it) with and without the
stretch: CPU per second of audio heard and per second of model audio (the model makes 1.5 s
of audio for each second heard at 1.5x), and when the first 60 ms are ready.

Usage: .venv/bin/python bench/stretch.py [--runs 5] [--seconds 20] [--engine]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.synthesis.tempo import Tempo

RATE = 24_000
CHUNK = 1_920  # 80 ms: one pocket-tts frame
RATES = (1.0, 1.5, 0.75)
PREBUFFER_S = 0.06  # the player starts once 3 frames (60 ms) are buffered
Push = Callable[[np.ndarray], np.ndarray]
Finish = Callable[[], np.ndarray]


@dataclass
class Result:
    cpu_per_s: float
    first_cpu_ms: float
    first_out_ms: float
    lag_ms: float
    prebuffer_chunks: int  # chunks in before the player's 60 ms prebuffer is full
    ideal_chunks: int  # the same for an ideal stretcher (no look-ahead)
    length_ratio: float
    pitch_hz: float
    envelope: tuple[float, float]


def voiced(seconds: float) -> np.ndarray:
    """Speech-like test audio: a 120-160 Hz voice with harmonics and syllable-rate loudness."""
    t = np.arange(round(seconds * RATE)) / RATE
    f0 = 140 + 20 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(f0) / RATE
    voice = sum(np.sin(k * phase) / k for k in range(1, 12))
    syllables = 0.5 + 0.5 * np.sin(2 * np.pi * 4 * t) ** 2
    return (0.2 * voice * syllables).astype(np.float32)


def sine(seconds: float, hz: float = 220.0) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


# ---- the candidates: (push, finish) for one stream at `rate` ---------------------------------
def passthrough(rate: float) -> tuple[Push, Finish]:
    return (lambda chunk: chunk), (lambda: np.zeros(0, np.float32))


def pedalboard_stream(rate: float) -> tuple[Push, Finish]:
    import pedalboard

    def push(chunk: np.ndarray) -> np.ndarray:
        out = pedalboard.time_stretch(chunk.reshape(1, -1), RATE, stretch_factor=rate)
        return np.asarray(out[0], dtype=np.float32)

    return push, lambda: np.zeros(0, np.float32)


def python_stretch_stream(rate: float) -> tuple[Push, Finish]:
    import python_stretch

    stretcher = python_stretch.Signalsmith.Stretch()
    stretcher.preset(1, RATE)
    stretcher.setTimeFactor(rate)

    def push(chunk: np.ndarray) -> np.ndarray:
        return np.asarray(stretcher.process(chunk.reshape(1, -1))[0], dtype=np.float32)

    return push, lambda: np.zeros(0, np.float32)


def pylibrb_stream(engine: str, window: str) -> Callable[[float], tuple[Push, Finish]]:
    """Rubber Band real-time, padded and trimmed as its docs say (not the bot's way)."""

    def make(rate: float) -> tuple[Push, Finish]:
        import pylibrb

        option = pylibrb.Option
        options = option.PROCESS_REALTIME | option.THREADING_NEVER | getattr(option, engine)
        if window:
            options |= getattr(option, window)
        stretcher = pylibrb.RubberBandStretcher(RATE, 1, options, initial_time_ratio=1 / rate)
        pad = stretcher.get_preferred_start_pad()
        trim = [stretcher.get_start_delay()]
        stretcher.process(np.zeros((1, pad), np.float32))

        def take() -> np.ndarray:
            out = stretcher.retrieve_available()[0]
            cut = min(trim[0], len(out))
            trim[0] -= cut
            return np.asarray(out[cut:], dtype=np.float32)

        def push(chunk: np.ndarray) -> np.ndarray:
            stretcher.process(chunk.reshape(1, -1))
            return take()

        def finish() -> np.ndarray:
            stretcher.process(np.zeros((1, 0), np.float32), final=True)
            return take()

        return push, finish

    return make


def bot_tempo(rate: float) -> tuple[Push, Finish]:
    """The bot's own `Tempo` (pylibrb R3, short window, no start pad, exact length)."""
    tempo = Tempo(rate)
    return tempo.push, tempo.finish


def bot_pitch(semitones: int) -> Callable[[float], tuple[Push, Finish]]:
    """The bot's `Tempo` with a pitch shift (formants kept) in the same stretcher."""

    def make(rate: float) -> tuple[Push, Finish]:
        tempo = Tempo(rate, semitones)
        return tempo.push, tempo.finish

    return make


PITCHES = (6, -6, 3)

CANDIDATES: dict[str, Callable[[float], tuple[Push, Finish]]] = {
    "pedalboard time_stretch": pedalboard_stream,
    "python-stretch Signalsmith": python_stretch_stream,
    "pylibrb R2 standard": pylibrb_stream("ENGINE_FASTER", ""),
    "pylibrb R2 short": pylibrb_stream("ENGINE_FASTER", "WINDOW_SHORT"),
    "pylibrb R3 standard": pylibrb_stream("ENGINE_FINER", ""),
    "pylibrb R3 short": pylibrb_stream("ENGINE_FINER", "WINDOW_SHORT"),
    "bot Tempo (pylibrb R3 short)": bot_tempo,
}


def run(
    make: Callable[[float], tuple[Push, Finish]], rate: float, audio: np.ndarray
) -> tuple[float, float, list[int], np.ndarray]:
    """(CPU s, first chunk's CPU s, output samples after each chunk, the whole output)."""
    push, finish = make(rate)
    outs: list[np.ndarray] = []
    counts: list[int] = []
    total, first = 0, 0.0
    started = time.process_time()
    for at in range(0, len(audio), CHUNK):
        out = push(audio[at : at + CHUNK])
        if at == 0:
            first = time.process_time() - started
        outs.append(out)
        total += len(out)
        counts.append(total)
    outs.append(finish())
    cpu = time.process_time() - started
    return cpu, first, counts, np.concatenate(outs)


def measure(
    make: Callable[[float], tuple[Push, Finish]], rate: float, seconds: float, runs: int
) -> Result:
    speech = voiced(seconds)
    cpus, firsts = [], []
    for _ in range(runs):
        cpu, first, counts, _ = run(make, rate, speech)
        cpus.append(cpu / seconds)
        firsts.append(first)
    ideal = [round(CHUNK * (k + 1) / rate) for k in range(len(counts))]
    prebuffer = round(PREBUFFER_S * RATE)
    chunks = next(k + 1 for k, c in enumerate(counts) if c >= prebuffer)
    ideal_chunks = next(k + 1 for k, c in enumerate(ideal) if c >= prebuffer)
    steady = [i - c for i, c in zip(ideal[5:-5], counts[5:-5], strict=True)]
    tone = sine(4.0)
    _, _, _, out = run(make, rate, tone)
    middle = out[RATE // 4 : -RATE // 4]
    spectrum = np.abs(np.fft.rfft(middle * np.hanning(len(middle))))
    pitch = float(np.fft.rfftfreq(len(middle), 1 / RATE)[np.argmax(spectrum)])
    window = 240  # 10 ms
    peaks = [np.abs(middle[a : a + window]).max() for a in range(0, len(middle) - window, window)]
    return Result(
        cpu_per_s=statistics.median(cpus),
        first_cpu_ms=1000 * statistics.median(firsts),
        first_out_ms=1000 * counts[0] / RATE,
        lag_ms=1000 * statistics.median(steady) / RATE,
        prebuffer_chunks=chunks,
        ideal_chunks=ideal_chunks,
        length_ratio=len(out) / (len(tone) / rate),
        pitch_hz=pitch,
        envelope=(float(min(peaks)), float(max(peaks))),
    )


async def engine_path(seconds_of_text: int, runs: int) -> list[str]:
    """The bot's path: the engine's stream of a message, with and without the stretch."""
    from bot.core.config import load_config
    from bot.synthesis.engine import SAMPLE_RATE
    from bot.synthesis.engine_loading import load_engine
    from tests.audio_samples import make_clip
    from tests.tiny_model import train_tokenizer, write_random_config

    text = " ".join(["Hello there friend, the music stream starts tonight."] * seconds_of_text)
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = train_tokenizer(folder, 4000)
        clip = make_clip(folder / "voice.wav", seconds=10.0)
        config = write_random_config("english", folder, full_length=True, tokenizer=tokenizer)
        env = {"TTS_CONFIG": str(config), "DEFAULT_VOICE": str(clip), "TTS_QUANTIZE": "1"}
        engine = await load_engine(load_config(env, dotenv_path=None, require_token=False))
        try:
            await engine.synthesize("Warming up the model.")
            baseline_ms = 0.0
            for rate in RATES:
                cpus, firsts = [], []
                for _ in range(runs):
                    await asyncio.sleep(1.0)  # each run from the same idle state
                    tempo: Any = None if rate == 1.0 else Tempo(rate)
                    samples, first = 0, None
                    started, asked = time.process_time(), time.perf_counter()
                    async with engine.stream(text, tempo=tempo) as stream:
                        async for chunk in stream:
                            samples += len(chunk)
                            if first is None and samples >= PREBUFFER_S * SAMPLE_RATE:
                                first = time.perf_counter() - asked
                    cpus.append((time.process_time() - started) / (samples / SAMPLE_RATE))
                    firsts.append(first or 0.0)
                label = "no stretch" if rate == 1.0 else f"stretch {rate}x"
                heard = statistics.median(cpus)
                first_ms = 1000 * statistics.median(firsts)
                baseline_ms = baseline_ms or first_ms
                lines.append(
                    f"  {label:13} CPU-s per s heard {heard:.3f}, per s of model audio "
                    f"{heard / rate:.3f} ({samples / SAMPLE_RATE:.1f} s heard); first 60 ms "
                    f"ready after {first_ms:.0f} ms ({first_ms - baseline_ms:+.0f} ms)"
                )
        finally:
            await engine.close()
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=20.0, help="audio per run")
    parser.add_argument("--engine", action="store_true", help="also the bot's engine path")
    args = parser.parse_args()
    print(f"{args.seconds:g} s of 24 kHz mono audio in 80 ms chunks; median of {args.runs} runs")
    for package in ("pedalboard", "python-stretch", "pylibrb"):
        try:
            print(f"  {package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            print(f"  {package}: not installed")
    header = (
        f"{'candidate':30} {'rate':>5} {'cpu/s':>8} {'first ms':>9} {'out ms':>12} "
        f"{'lag ms':>7} {'60ms after':>10} {'length':>7} {'pitch':>7} {'joins':>11}"
    )
    print(header)
    baseline = measure(passthrough, 1.0, args.seconds, args.runs)
    rows = [("passthrough (no stretch)", 1.0, baseline)]
    for name, make in CANDIDATES.items():
        for rate in RATES[1:]:
            try:
                rows.append((name, rate, measure(make, rate, args.seconds, args.runs)))
            except ImportError as error:
                print(f"{name}: not installed ({error.name})")
                break
    for name, rate, r in rows:
        print(
            f"{name:30} {rate:>5} {r.cpu_per_s:>8.4f} {r.first_cpu_ms:>9.2f} "
            f"{r.first_out_ms:>5.0f}/{80 / rate:<5.0f}  {r.lag_ms:>7.1f} "
            f"{r.prebuffer_chunks:>6}/{r.ideal_chunks:<3} {r.length_ratio:>7.3f} "
            f"{r.pitch_hz:>7.1f} {r.envelope[0]:>5.2f}-{r.envelope[1]:<5.2f}"
        )
    print("\npitch (bot Tempo, formants kept) beside the rate-only Tempo, same run:")
    for rate in (1.0, *RATES[1:]):
        plain = None if rate == 1.0 else measure(bot_tempo, rate, args.seconds, args.runs)
        base = plain.cpu_per_s if plain else baseline.cpu_per_s
        for semitones in PITCHES:
            r = measure(bot_pitch(semitones), rate, args.seconds, args.runs)
            print(
                f"  rate {rate:<4} pitch {semitones:+d}: cpu/s {r.cpu_per_s:.4f} (rate only "
                f"{base:.4f}, +{r.cpu_per_s - base:.4f} CPU-s per audio s), pitch of 220 Hz "
                f"{r.pitch_hz:.1f} Hz, length {r.length_ratio:.3f}"
            )
    if args.engine:
        print("\nthe bot's path (english architecture, random weights, int8):")
        for line in asyncio.run(engine_path(3, max(1, args.runs // 2))):
            print(line)


if __name__ == "__main__":
    main()
