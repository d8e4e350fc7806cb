"""One model worker or two replicas sharing the weights? Aggregate speed, same run.

Default `english` architecture with random weights. For W = 1 and 2 engine workers, four
utterances are requested at once; printed: total audio / wall time (aggregate real-time
factor), the slowest first chunk, and process CPU use, side by side.

Usage: .venv/bin/python bench/workers.py [--config english] [--quantize]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.config import load_config
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from tests.audio_samples import make_clip
from tests.tiny_model import train_tokenizer, write_random_config

TEXTS = [
    "Hello there friend, the music stream starts tonight, so please join the voice channel.",
    "Good morning people, the weather today is rain and cloud, so bring coffee and tea.",
    "The quick brown fox jumps over the lazy dog, then the game starts and people talk.",
    "Please read the message in the channel, then join the queue and listen to the music.",
]


async def run(engine: TTSEngine) -> tuple[float, float, float, float]:
    async def one(text: str) -> tuple[float, float]:
        stream = engine.stream(text)
        first = None
        async for _ in stream:
            if first is None:
                first = time.monotonic() - stream.stats.started
        return first or 0.0, stream.stats.audio_seconds

    cpu0, t0 = time.process_time(), time.monotonic()
    results = await asyncio.gather(*(one(t) for t in TEXTS))
    wall = time.monotonic() - t0
    audio = sum(a for _, a in results)
    return audio / wall, max(f for f, _ in results), (time.process_time() - cpu0) / wall, audio


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="english")
    parser.add_argument("--quantize", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = train_tokenizer(folder, 4000)
        config = write_random_config(args.config, folder, full_length=True, tokenizer=tokenizer)
        clip = make_clip(folder / "voice.wav")
        rows = []
        for workers in (1, 2):
            env = {
                "TTS_CONFIG": str(config),
                "DEFAULT_VOICE": str(clip),
                "TTS_WORKERS": str(workers),
                "TTS_QUANTIZE": str(int(args.quantize)),
            }
            settings = load_config(env, dotenv_path=None, require_token=False)
            engine = await load_engine(settings)
            try:
                await engine.synthesize("Warming up.")
                rows.append((workers, *(await run(engine))))
            finally:
                await engine.close()
    base = rows[0][1]
    print(f"{args.config} {'int8' if args.quantize else 'fp32'}, 4 utterances at once")
    for workers, rtf, first, cpu, audio in rows:
        print(
            f"workers {workers}: aggregate real-time factor {rtf:4.2f}x (ratio {rtf / base:4.2f})"
            f" | slowest first chunk {first:5.2f} s | CPU {cpu:4.2f} cores | {audio:5.1f} s audio"
        )


if __name__ == "__main__":
    asyncio.run(main())
