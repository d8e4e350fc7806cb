"""The speech service under load: K clients stream at once through OpenAI's SDK.

The service runs in this process on a random-weight model of `--config`'s architecture (the
released model's compute), batched as `./run.sh serve` runs it. For each K in `--clients`,
K clients ask for the same text at once (24 kHz PCM, streamed) and read it as a listener
would, in real time from their first byte. Then the same K requests one at a time (the way
every other pocket-tts server serves them), in the same run. Printed per K and way:

- time to first byte, p50 and p95, beside the model's raw first chunk (pocket-tts's own
  `generate_audio_stream`, same run): the target at K=1 is at most 1.2x the raw chunk;
- underruns: clients whose audio ran out while they played it (a gap a listener hears);
- the real-time factor per stream: its audio over the wall time from its request to its end.

Usage: .venv/bin/python bench/service.py [--clients 1 4 8 12] [--config english]
       [--quantize yes|no] [--smoke]
(`--smoke`: the tests' tiny model and K = 1, 2: checks that the bench runs, measures nothing.)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.config import load_config
from bot.speech_api.server import SpeechServer, standalone_scheduler
from bot.synthesis.engine import SAMPLE_RATE, TTSEngine
from bot.synthesis.model_pool import ModelPool
from tests.audio_samples import make_clip
from tests.tiny_model import train_tokenizer, write_random_config

TEXT = (
    "Hello there friend, the music stream starts tonight, so please join the voice channel "
    "and listen."
)
PREBUFFER_S = 0.2  # a client starts playing once this much audio has come


@dataclasses.dataclass
class Client:
    first_byte: float  # seconds from its request
    underrun: bool
    rtf: float


async def listen(api: openai.AsyncOpenAI) -> Client:
    """One client: streams PCM and plays it in real time from its first PREBUFFER_S."""
    asked = time.monotonic()
    received, first, playing_since, underrun = 0.0, None, None, False
    async with api.audio.speech.with_streaming_response.create(
        model="tts-1", voice="default", input=TEXT, response_format="pcm"
    ) as response:
        async for data in response.iter_bytes():
            now = time.monotonic()
            first = first or now
            if playing_since is not None and now - playing_since > received:
                underrun = True  # what it had was played out before this came
            received += len(data) / 2 / SAMPLE_RATE
            if playing_since is None and received >= PREBUFFER_S:
                playing_since = now
    end = time.monotonic()
    assert first is not None
    return Client(first - asked, underrun, received / (end - asked))


def raw_first_chunk(engine: TTSEngine) -> float:
    """pocket-tts alone, as a library user calls it: its first chunk's time."""
    state = engine.voice_cache.get(engine.default_voice) or {}
    stop = threading.Event()
    started = time.perf_counter()
    for _ in engine.model.generate_audio_stream(state, TEXT, stop=stop):
        stop.set()
        return time.perf_counter() - started
    return float("nan")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def run(clients: int, api: openai.AsyncOpenAI, at_once: bool) -> list[Client]:
    if at_once:
        return list(await asyncio.gather(*(listen(api) for _ in range(clients))))
    return [await listen(api) for _ in range(clients)]


async def bench(config: Path, clip: Path, quantize: bool, ks: list[int], folder: Path) -> None:
    env = {"TTS_CONFIG": str(config), "DEFAULT_VOICE": str(clip), "DATA_DIR": str(folder),
           "TTS_QUANTIZE": str(int(quantize)), "SPEECH_PORT": "8000"}  # fmt: skip
    settings = load_config(env, dotenv_path=None, require_token=False).model_copy(
        update={"speech_port": 0, "speech_streams_per_key": max(ks),
                "speech_requests_per_minute": 100_000, "speech_queue": max(ks)}
    )  # fmt: skip
    engine = await TTSEngine.load(settings)
    await engine.voice_state()
    models = ModelPool(settings, engine, partial(TTSEngine.load, batch=engine.rows))
    scheduler = standalone_scheduler(engine, models)
    server = SpeechServer(settings, scheduler, models)
    await server.start()
    api = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="-", max_retries=0,
                             timeout=600)  # fmt: skip
    try:
        await listen(api)  # warm-up
        raw = await asyncio.to_thread(raw_first_chunk, engine)
        print(f"{config.stem} {'int8' if quantize else 'fp32'}: raw first chunk "
              f"{raw * 1000:.0f} ms; batch of up to {engine.rows} rows")  # fmt: skip
        print(f"{'K':>3} {'way':<12} {'first byte p50':>15} {'p95':>8} {'x raw':>6} "
              f"{'underruns':>10} {'RTF min':>8} {'RTF p50':>8}")  # fmt: skip
        for k in ks:
            for at_once in (True, False):
                done = await run(k, api, at_once)
                firsts = [c.first_byte for c in done]
                rtfs = [c.rtf for c in done]
                p50 = statistics.median(firsts)
                print(f"{k:>3} {'at once' if at_once else 'one by one':<12} "
                      f"{p50 * 1000:>12.0f} ms {percentile(firsts, 0.95) * 1000:>5.0f} ms "
                      f"{p50 / raw:>6.2f} {sum(c.underrun for c in done):>6}/{k:<3} "
                      f"{min(rtfs):>8.2f} {statistics.median(rtfs):>8.2f}", flush=True)  # fmt: skip
    finally:
        await api.close()
        await server.close()
        await scheduler.close()
        await models.close()
        await engine.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8, 12])
    parser.add_argument("--config", default="english")
    parser.add_argument("--quantize", choices=["yes", "no"], default="yes")
    parser.add_argument("--smoke", action="store_true", help="the tiny model, K = 1, 2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.smoke:
            tokenizer = train_tokenizer(folder, 4000)
            config = write_random_config("english_2m_2026-10", folder, tokenizer=tokenizer)
            ks, quantize = [1, 2], False
        else:
            tokenizer = train_tokenizer(folder, 4000)
            config = write_random_config(args.config, folder, full_length=True,
                                         tokenizer=tokenizer)  # fmt: skip
            ks, quantize = args.clients, args.quantize == "yes"
        clip = make_clip(folder / "voice.wav", seconds=10.0)
        await bench(config, clip, quantize, ks, folder)


if __name__ == "__main__":
    asyncio.run(main())
