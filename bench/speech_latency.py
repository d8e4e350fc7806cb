"""Latency and speed of speech: raw pocket-tts next to the bot's whole pipeline, same run.

For the default `english` architecture (random weights: same compute as the released model)
in fp32 and int8, alternating runs of:
  raw       pocket-tts's own `generate_audio_stream` in a thread: first chunk, real-time factor;
  pipeline  the bot's path: engine stream -> FrameConverter -> StreamingSource read every
            20 ms by a player thread that Opus-encodes like discord.py does: time from
            request to first 20 ms frame handed over, real-time factor of frame production,
            and the pipeline's own CPU (conversion + read + Opus) per second of audio,
            next to the model's CPU per second of audio;
  announced an announced message ("Alice said ...") through a server's queue, its lead from
            the phrase cache, next to the same message without the cache (the baseline).

Usage: .venv/bin/python bench/speech_latency.py [--runs 3] [--configs english]
       [--quantize no|yes|both]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import discord

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.config import load_config
from bot.playback.audio_source import FrameConverter, StreamingSource
from bot.playback.speakers import GuildSpeaker, Utterance
from bot.playback.voice_link import load_opus
from bot.synthesis.engine import SAMPLE_RATE, TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.phrase_cache import PhraseCache
from bot.synthesis.scheduler import DeadlineScheduler
from tests.audio_samples import make_clip
from tests.player import Ended, PlayerVoiceClient
from tests.tiny_model import train_tokenizer, write_random_config

LEAD = "Alice said"
# 16 words; with the tests' tokenizer 34 tokens, so ~13 s of audio, as in the pocket-tts notes
TEXT = (
    "Hello there friend, the music stream starts tonight, so please join the voice channel "
    "and listen."
)


IDLE_BEFORE_RUN = 2.0  # seconds; both kinds of run then start from the same CPU state


@dataclass
class Raw:
    first_chunk: float
    rtf: float
    cpu_per_audio_s: float


@dataclass
class Pipeline:
    first_frame: float
    first_chunk: float  # the engine's first chunk, in the same run
    rtf: float
    pipeline_cpu_per_audio_s: float  # conversion + read (+ Opus encode, reported apart)
    opus_cpu_per_audio_s: float
    underruns: int


def raw_run(engine: TTSEngine, state: dict) -> Raw:
    """pocket-tts alone, in a thread, as a library user would call it."""
    stop = threading.Event()
    cpu0, t0 = time.process_time(), time.perf_counter()
    first, samples = None, 0
    for chunk in engine.model.generate_audio_stream(state, TEXT, stop=stop):
        if first is None:
            first = time.perf_counter() - t0
        samples += len(chunk)
    elapsed = time.perf_counter() - t0
    audio = samples / SAMPLE_RATE
    return Raw(first or 0.0, audio / elapsed, (time.process_time() - cpu0) / audio)


class PlayerThread(threading.Thread):
    """Reads a source every 20 ms and Opus-encodes each frame, like discord.py's AudioPlayer."""

    def __init__(self, source: StreamingSource) -> None:
        super().__init__(daemon=True)
        self.source = source
        self.encoder = discord.opus.Encoder()
        self.read_cpu = 0.0
        self.opus_cpu = 0.0

    def run(self) -> None:
        start = time.perf_counter()
        loops = 0
        while True:
            c0 = time.thread_time()
            data = self.source.read()
            c1 = time.thread_time()
            self.read_cpu += c1 - c0
            if not data:
                return
            self.encoder.encode(data, 960)
            self.opus_cpu += time.thread_time() - c1
            loops += 1
            time.sleep(max(0.0, start + 0.02 * loops - time.perf_counter()))


async def pipeline_run(engine: TTSEngine) -> Pipeline:
    requested = time.monotonic()
    source = StreamingSource()
    converter = FrameConverter()
    player: PlayerThread | None = None
    convert_cpu = 0.0
    stream = engine.stream(TEXT)
    async with stream:
        async for chunk in stream:
            c0 = time.thread_time()
            source.feed(converter.push(chunk))
            convert_cpu += time.thread_time() - c0
            if player is None and source.ready:
                player = PlayerThread(source)
                player.start()
        c0 = time.thread_time()
        source.feed(converter.flush())
        convert_cpu += time.thread_time() - c0
    produced = time.monotonic() - requested
    source.finish()
    assert player is not None
    await asyncio.to_thread(player.join)
    audio = stream.stats.audio_seconds
    assert source.first_frame_at is not None and stream.stats.first_chunk is not None
    return Pipeline(
        first_frame=source.first_frame_at - requested,
        first_chunk=stream.stats.first_chunk - requested,
        rtf=audio / produced,
        pipeline_cpu_per_audio_s=(convert_cpu + player.read_cpu) / audio,
        opus_cpu_per_audio_s=player.opus_cpu / audio,
        underruns=source.underruns,
    )


async def announced_run(engine: TTSEngine, phrases: PhraseCache | None) -> tuple[float, int]:
    """An announced message ("Alice said ...") through a server's queue: the first frame's
    latency from the message's arrival, and the underruns. With `phrases`, the lead is
    cached; without, the model says the whole line (the baseline)."""
    scheduler = DeadlineScheduler(engine.stream, workers=engine.workers)
    scheduler.start()
    client, ended = PlayerVoiceClient(), Ended()
    speaker = GuildSpeaker(
        scheduler,
        lambda: client,
        phrases=phrases,
        default_voice=engine.default_voice,  # type: ignore[arg-type,return-value]
        on_result=ended,
    )
    try:
        speaker.enqueue(Utterance(f"{LEAD} {TEXT}", lead=LEAD if phrases else ""))
        (result,) = await ended.wait_for(1, timeout=None)
    finally:
        await speaker.close()
        await scheduler.close()
    assert result.first_frame_latency is not None
    return result.first_frame_latency, result.underruns


async def bench_config(config: Path, clip: Path, quantize: bool, runs: int) -> list[str]:
    env = {
        "TTS_CONFIG": str(config),
        "DEFAULT_VOICE": str(clip),
        "TTS_QUANTIZE": str(int(quantize)),
    }
    engine = await load_engine(load_config(env, dotenv_path=None, require_token=False))
    try:
        state = await engine.voice_state()
        await engine.synthesize("Warming up the model.")
        raws: list[Raw] = []
        pipes: list[Pipeline] = []
        with tempfile.TemporaryDirectory() as folder:
            phrases = PhraseCache(Path(folder), engine.fingerprint)
            phrases.put(engine.default_voice, LEAD, await engine.synthesize(LEAD))
            announced: list[tuple[float, int]] = []
            plain: list[tuple[float, int]] = []
            for _ in range(runs):
                await asyncio.sleep(IDLE_BEFORE_RUN)
                announced.append(await announced_run(engine, phrases))
                await asyncio.sleep(IDLE_BEFORE_RUN)
                plain.append(await announced_run(engine, None))
        for _ in range(runs):  # alternate, and start each from the same idle pause
            await asyncio.sleep(IDLE_BEFORE_RUN)
            raws.append(
                await asyncio.to_thread(engine._executor.submit(raw_run, engine, state).result)
            )
            await asyncio.sleep(IDLE_BEFORE_RUN)
            pipes.append(await pipeline_run(engine))
    finally:
        await engine.close()

    def med(values: list[float]) -> float:
        return statistics.median(values)

    raw_first = med([r.first_chunk for r in raws])
    pipe_first = med([p.first_frame for p in pipes])
    model_cpu = med([r.cpu_per_audio_s for r in raws])
    pipe_cpu = med([p.pipeline_cpu_per_audio_s for p in pipes])
    opus_cpu = med([p.opus_cpu_per_audio_s for p in pipes])
    frame_after_chunk = med([p.first_frame - p.first_chunk for p in pipes])
    name = f"{config.stem.replace('-random-full', '')} {'int8' if quantize else 'fp32'}"
    cached_first = med([first for first, _ in announced])
    uncached_first = med([first for first, _ in plain])
    return [
        f"{name:<14} announced message, first frame after arrival: lead cached "
        f"{cached_first * 1000:6.1f} ms (target <= 50) | uncached (baseline) "
        f"{uncached_first * 1000:6.0f} ms | underruns {sum(u for _, u in announced)} cached, "
        f"{sum(u for _, u in plain)} uncached",
        f"{name:<14} first audio: raw chunk {raw_first * 1000:6.0f} ms | bot frame "
        f"{pipe_first * 1000:6.0f} ms | ratio {pipe_first / raw_first:4.2f} | "
        f"frame after chunk (same run) {frame_after_chunk * 1000:5.1f} ms",
        f"{'':<14} real-time factor: raw {med([r.rtf for r in raws]):4.2f}x | "
        f"pipeline {med([p.rtf for p in pipes]):4.2f}x | ratio "
        f"{med([p.rtf for p in pipes]) / med([r.rtf for r in raws]):4.2f}",
        f"{'':<14} CPU s per audio s: model {model_cpu:5.3f} | pipeline {pipe_cpu:6.4f} "
        f"({pipe_cpu / model_cpu * 100:4.2f}% of model) | Opus encode (discord.py) "
        f"{opus_cpu:6.4f} ({opus_cpu / model_cpu * 100:4.2f}%) | underruns "
        f"{sum(p.underruns for p in pipes)}",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--configs", nargs="+", default=["english"])
    parser.add_argument(
        "--quantize", choices=["no", "yes", "both"], default="both", help="fp32, int8 or both"
    )
    args = parser.parse_args()
    precisions = {"no": (False,), "yes": (True,), "both": (False, True)}[args.quantize]
    load_opus()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = train_tokenizer(folder, 4000)
        clip = make_clip(folder / "voice.wav", seconds=10.0)
        print(f"text: {len(TEXT.split())} words; median of {args.runs} alternating runs\n")
        for base in args.configs:
            config = write_random_config(base, folder, full_length=True, tokenizer=tokenizer)
            for quantize in precisions:
                for line in await bench_config(config, clip, quantize, args.runs):
                    print(line, flush=True)
                print()


if __name__ == "__main__":
    asyncio.run(main())
