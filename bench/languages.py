"""What a language costs: load time and memory of each language's model, beside the first.

Random weights (Hugging Face is out of reach here), the real architecture of each config the
installed pocket-tts ships. Each model is loaded the way the bot loads another language
(`load_engine` in a low-priority thread, batch size known) and kept loaded, as the pool
does within its budget; printed per model: load time, its weights (what TTS_MEMORY_MB
counts), the process's resident memory growth, and its first audio, each with its ratio to
the first model's in the same run.

Usage: .venv/bin/python bench/languages.py [english french german ... french_24l] [--quantize]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bot.core.config import load_config
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.pocket_tts_adapter import CONFIGS_DIR
from tests.audio_samples import make_clip
from tests.tiny_model import train_tokenizer, write_random_config

DEFAULT = ["english", "french", "german", "italian", "spanish", "portuguese", "dutch"]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("languages", nargs="*", default=[*DEFAULT, "french_24l"])
    parser.add_argument("--quantize", action="store_true")
    args = parser.parse_args()
    rows = []
    engines = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        clip = make_clip(folder / "voice.wav")
        tokenizers: dict[int, Path] = {}
        try:
            for language in args.languages:
                base = yaml.safe_load((Path(CONFIGS_DIR) / f"{language}.yaml").read_text())
                bins = base["flow_lm"]["lookup_table"]["n_bins"]
                if bins not in tokenizers:
                    out = folder / f"tok{bins}"
                    out.mkdir()
                    tokenizers[bins] = train_tokenizer(out, bins)
                config = write_random_config(language, folder, tokenizer=tokenizers[bins])
                env = {
                    "TTS_CONFIG": str(config),
                    "TTS_LANGUAGE": language.split("_")[0],
                    "DEFAULT_VOICE": str(clip),
                    "TTS_WORKERS": "1",
                    "TTS_QUANTIZE": str(int(args.quantize)),
                }
                settings = load_config(env, dotenv_path=None, require_token=False)
                gc.collect()
                before, started = rss_mb(), time.monotonic()
                engine = await load_engine(settings, batch=1, background=True)
                loaded = time.monotonic() - started
                engines.append(engine)
                stream = engine.stream("Hello there, this is the first sentence.")
                async for _ in stream:
                    break
                first = stream.stats.first_chunk_latency or 0.0
                stream.cancel()
                grown = rss_mb() - before
                rows.append((language, loaded, engine.model_bytes / 2**20, grown, first))
        finally:
            for engine in engines:
                await engine.close()
    _, load0, weights0, _, first0 = rows[0]
    kind = "int8" if args.quantize else "fp32"
    print(f"language models, random weights, {kind}; ratios to {rows[0][0]} (the first loaded)")
    for language, loaded, weights, grown, first in rows:
        print(
            f"{language:>12}: load {loaded:5.2f} s ({loaded / load0:4.2f}x) | weights"
            f" {weights:6.1f} MB ({weights / weights0:4.2f}x) | RSS +{grown:6.1f} MB"
            f" | first audio {first:5.2f} s ({first / first0:4.2f}x)"
        )
    print(f"all {len(rows)} loaded at once: {rss_mb():.0f} MB resident")


if __name__ == "__main__":
    asyncio.run(main())
