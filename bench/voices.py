"""Voice cloning cost and the voice-state cache, next to raw pocket-tts in the same run.

Default `english` architecture with random weights (same compute as the released model):
  clone      raw `get_state_for_audio_prompt` on a 10 s clip vs the bot's whole /clone path
             (decode WAV, trim, extract in the engine worker, export, write files, commit row);
  state      size of the exported .safetensors;
  cache      `engine.voice_state(path)`: a hit (cached) vs a miss (load the .safetensors) vs
             a plain dict lookup, per call.

Usage: .venv/bin/python bench/voices.py [--runs 3] [--config english]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.config import load_config
from bot.storage.database import Database
from bot.synthesis import clip as clips
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.voice_library import VoiceLibrary, VoiceLimits, consent_now
from tests.audio_samples import encode, make_clip, speech_like
from tests.tiny_model import train_tokenizer, write_random_config


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--config", default="english")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_random_config(args.config, folder, tokenizer=train_tokenizer(folder, 4000))
        settings = load_config(
            {"TTS_CONFIG": str(config), "DEFAULT_VOICE": str(make_clip(folder / "d.wav"))},
            dotenv_path=None,
            require_token=False,
        )
        engine = await load_engine(settings)
        db = await Database.open(folder / "bench.db")
        library = VoiceLibrary(db, engine, folder, VoiceLimits(quota=1000))
        upload = encode(speech_like(10.0, lead_s=0.5, tail_s=0.5), "wav")
        clip = clips.prepare(upload, clips.ClipLimits())
        tensor = torch.from_numpy(clip)[None, :]

        raw_s, bot_s, sizes, paths = [], [], [], []
        for run in range(args.runs):
            t0 = time.perf_counter()
            await asyncio.get_running_loop().run_in_executor(
                engine._executor, engine.model.get_state_for_audio_prompt, tensor
            )
            raw_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            record = await library.create(1, f"v{run}", upload, consented_at=consent_now())
            bot_s.append(time.perf_counter() - t0)
            sizes.append(record.state_bytes)
            paths.append(str(folder / record.state_path))

        hit, miss, plain = [], [], []
        table = {p: object() for p in paths}
        for _ in range(50):
            for path in paths:
                await engine.forget_voice(path)
                t0 = time.perf_counter()
                await engine.voice_state(path)
                miss.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                await engine.voice_state(path)
                hit.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                _ = table[path]
                plain.append(time.perf_counter() - t0)
        await db.close()
        await engine.close()

    med = statistics.median
    print(f"config {args.config} (random weights), 10 s clip, median of {args.runs}")
    print(
        f"clone: raw pocket-tts {med(raw_s):.2f} s | bot /clone path {med(bot_s):.2f} s | "
        f"ratio {med(bot_s) / med(raw_s):.2f}"
    )
    print(f"state file: {med(sizes) / 1e6:.1f} MB")
    print(
        f"voice state lookup: cache hit {med(hit) * 1e6:.0f} µs | miss (load file) "
        f"{med(miss) * 1e3:.2f} ms | plain dict {med(plain) * 1e9:.0f} ns | "
        f"miss/hit {med(miss) / med(hit):.1f}x"
    )


if __name__ == "__main__":
    asyncio.run(main())
