"""The speech service under load: K clients stream at once through OpenAI's SDK; one whole file
against pocket-tts's own speed.

The service runs in this process on a random-weight model of `--config`'s architecture (the
released model's compute), batched as `./run.sh serve` runs it. For each K in `--clients`,
K clients ask for the same text at once (24 kHz PCM, streamed) and read it as a listener
would, in real time from their first byte. Then the same K requests one at a time (the way
every other pocket-tts server serves them), in the same run: all K asked at the same moment,
so each one's first byte counts from then, its wait behind the others included. Printed per
K and way:

- time to first byte, p50 and p95, beside the model's raw first chunk (pocket-tts's own
  `generate_audio_stream`, same run): the target at K=1 is at most 1.2x the raw chunk;
- underruns: clients whose audio ran out while they played it (a gap a listener hears);
- the real-time factor per stream: its audio over the wall time from its request to its end.

With `--discord N` (4 by default), N Discord servers speak without pause on the same scheduler
as the bot runs them beside the service (a row kept for Discord, `bot/app.py`): each server's
`GuildSpeaker` always has its next sentence waiting, played by a player thread per server
that reads a 20 ms frame as discord.py's does. For each K, the servers speak alone for as
long as the clients' run took, then beside the K clients at once; printed for both: their
messages' first audio (p50, p95: the next message's wait for the model), the messages with a
gap of 100 ms or more (5 underrun frames in a row) and the underrun seconds per minute.

First, one whole file alone (`--rounds` rounds): a WAV asked for through the SDK's
non-streamed `create`, read as fast as it comes, as Open WebUI keeps its answers; its audio
seconds per wall second beside pocket-tts's own `generate_audio_stream` on the same model and
text in the same process, the two in turn (A B, then B A, ...) so that the host's drift falls
on both alike; printed per round and as the median ratio (the target: at least 0.95).

Usage: .venv/bin/python bench/service.py [--clients 1 8 12] [--config english]
       [--quantize yes|no] [--discord 4] [--rounds 6] [--batch N] [--smoke]
(`--batch`: the batch size instead of the one measured at start, which a host busy with other
work makes small; a client answered with an error is counted as refused.)
(`--smoke`: the tests' tiny model and K = 1, 2: checks that the bench runs, measures nothing.)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable
from functools import partial
from pathlib import Path
from typing import Any

import openai

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.load import RunResult, model_waits, sentences, summarize
from bot.core.config import load_config
from bot.playback.speakers import GuildSpeaker, Utterance
from bot.playback.stats import UtteranceResult
from bot.speech_api.server import SpeechServer, standalone_scheduler
from bot.synthesis.engine import SAMPLE_RATE, TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_pool import ModelPool
from tests.audio_samples import make_clip
from tests.player import PlayerVoiceClient
from tests.tiny_model import train_tokenizer, write_random_config

TEXT = (
    "Hello there friend, the music stream starts tonight, so please join the voice channel "
    "and listen."
)
PREBUFFER_S = 0.2  # a client starts playing once this much audio has come
# the whole file's text: no numbers, units or emoji, so the service's reading of it is the
# text pocket-tts gets alone; tens of seconds of speech (each chunk runs to its length limit)
FILE_TEXT = (
    "The old lighthouse stood at the edge of the cliff, its white paint peeling in the salt "
    "wind. Every evening the keeper climbed the narrow stairs to light the lamp, and every "
    "morning he wrote a line in the logbook about the weather and the ships that passed. "
    "Nobody remembered when the last storm had reached the harbour, but the keeper kept "
    "his watch all the same."
)


@dataclasses.dataclass
class Client:
    first_byte: float  # seconds from its request
    underrun: bool
    rtf: float
    refused: bool = False  # answered with an error (503: no audio for a minute; 429)


async def listen(api: openai.AsyncOpenAI, asked: float | None = None) -> Client:
    """One client: streams PCM and plays it in real time from its first PREBUFFER_S. `asked`:
    when its listener asked (its first byte counts from then; by default, its request)."""
    asked = time.monotonic() if asked is None else asked
    received, first, playing_since, underrun = 0.0, None, None, False
    try:
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
    except openai.APIStatusError:
        return Client(time.monotonic() - asked, True, 0.0, refused=True)
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


def raw_file(engine: TTSEngine) -> float:
    """pocket-tts alone on FILE_TEXT, as a library user calls it: audio seconds per second."""
    state = engine.voice_cache.get(engine.default_voice) or {}
    samples, started = 0, time.perf_counter()
    for chunk in engine.model.generate_audio_stream(state, FILE_TEXT):
        samples += chunk.shape[-1]
    return samples / SAMPLE_RATE / (time.perf_counter() - started)


async def service_file(api: openai.AsyncOpenAI) -> float:
    """One whole WAV through the SDK's non-streamed call: audio seconds per second."""
    started = time.perf_counter()
    speech = await api.audio.speech.create(
        model="tts-1", voice="default", input=FILE_TEXT, response_format="wav"
    )
    wall = time.perf_counter() - started
    data = speech.content
    audio = data[data.index(b"data") + 8 :]  # (the header's sizes say "unknown")
    return len(audio) / 2 / SAMPLE_RATE / wall


async def file_rounds(engine: TTSEngine, api: openai.AsyncOpenAI, rounds: int) -> None:
    """The service's whole file and pocket-tts's own, in turn: each round's speeds and the
    median ratio."""
    print(f"one whole file alone ({len(FILE_TEXT)} characters), audio s per wall s:")
    ratios = []
    for n in range(rounds):
        if n % 2 == 0:
            raw = await asyncio.to_thread(raw_file, engine)
            ours = await service_file(api)
        else:
            ours = await service_file(api)
            raw = await asyncio.to_thread(raw_file, engine)
        ratios.append(ours / raw)
        order = "pocket-tts first" if n % 2 == 0 else "service first"
        print(
            f"  round {n + 1}: service {ours:5.2f}  pocket-tts {raw:5.2f}  "
            f"ratio {ours / raw:5.2f}  ({order})",
            flush=True,
        )
    print(f"  median ratio {statistics.median(ratios):.2f} (min {min(ratios):.2f})\n")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def run(clients: int, api: openai.AsyncOpenAI, at_once: bool) -> list[Client]:
    """K clients who ask at the same moment: served at once, or one after the other as a
    server of one request at a time would (each one's first byte counted from that moment)."""
    if at_once:
        return list(await asyncio.gather(*(listen(api) for _ in range(clients))))
    asked = time.monotonic()
    return [await listen(api, asked) for _ in range(clients)]


class DiscordServers:
    """`count` Discord servers speaking without pause on `scheduler`, as the bot's speakers
    do: each always has its next sentence waiting."""

    def __init__(self, scheduler: Any, count: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.results: list[tuple[int, UtteranceResult]] = []
        self.clients = [PlayerVoiceClient() for _ in range(count)]
        self.speakers = [
            GuildSpeaker(
                scheduler,
                lambda client=client: client,
                max_queue=1000,
                key=k,
                on_result=lambda result, k=k: self.results.append((k, result)),
            )
            for k, client in enumerate(self.clients)
        ]

    async def speak_during(self, other: Awaitable[Any]) -> RunResult:
        """Every server speaks until `other` is done (what is left then is cut)."""
        self.results.clear()
        now = time.monotonic()
        for speaker in self.speakers:
            for _ in range(200):  # more than any run speaks
                speaker.enqueue(Utterance(sentences(self.rng), requested_at=now))
        await other
        for speaker in self.speakers:
            speaker.clear_waiting()
        deadline = time.monotonic() + 30
        while any(s.busy for s in self.speakers) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        return RunResult(list(self.results), 0, 0.0, 0.0)

    async def close(self) -> None:
        for speaker in self.speakers:
            await speaker.close()


def discord_figures(run: RunResult) -> str:
    """`bench/load.py`'s figures: each message's wait for the model (its first audio less
    the time its server was still speaking its previous one), gaps of 100 ms or more,
    underrun seconds per minute of audio."""
    figures = summarize(run)
    waits = sorted(w for server in model_waits(run).values() for w in server)
    return (
        f"{figures['messages']:>3.0f} msgs, wait p50 {percentile(waits, 0.5):5.2f} s "
        f"p95 {figures['wait95']:5.2f} s, gaps>=100ms {figures['stutters']:.0f}, "
        f"underrun {figures['underrun_per_min']:.2f} s/min"
    )


async def beside_discord(
    k: int, api: openai.AsyncOpenAI, discord: DiscordServers
) -> tuple[str, str, list[Client]]:
    """The servers beside K clients at once (which start once the servers speak), then
    alone for as long: both figures, and the clients'."""

    async def clients() -> list[Client]:
        await asyncio.sleep(2.0)  # the servers speak first
        return await run(k, api, at_once=True)

    started = time.monotonic()
    task = asyncio.ensure_future(clients())
    beside = await discord.speak_during(task)
    alone = await discord.speak_during(asyncio.sleep(time.monotonic() - started))
    return discord_figures(alone), discord_figures(beside), task.result()


def client_row(k: int, way: str, done: list[Client], raw: float) -> str:
    """The served clients' figures (a refused one counts as an underrun, and apart)."""
    served = [c for c in done if not c.refused] or done
    firsts = [c.first_byte for c in served]
    rtfs = [c.rtf for c in served]
    p50 = statistics.median(firsts)
    refused = sum(c.refused for c in done)
    return (
        f"{k:>3} {way:<14} {p50 * 1000:>12.0f} ms {percentile(firsts, 0.95) * 1000:>5.0f} ms "
        f"{p50 / raw:>6.2f} {sum(c.underrun for c in done):>6}/{k:<3} "
        f"{min(rtfs):>8.2f} {statistics.median(rtfs):>8.2f}"
        + (f"  ({refused} refused)" if refused else "")
    )


async def bench(
    config: Path,
    clip: Path,
    quantize: bool,
    ks: list[int],
    folder: Path,
    servers: int,
    rounds: int,
    batch: int | None = None,
) -> None:
    env = {
        "TTS_CONFIG": str(config),
        "DEFAULT_VOICE": str(clip),
        "DATA_DIR": str(folder),
        "TTS_QUANTIZE": str(int(quantize)),
        "SPEECH_PORT": "8000",
    }
    settings = load_config(env, dotenv_path=None, require_token=False).model_copy(
        update={
            "speech_port": 0,
            "speech_streams_per_key": max(ks),
            "speech_requests_per_minute": 100_000,
            "speech_queue": max(ks),
        }
    )
    engine = await load_engine(settings, batch=batch)
    await engine.voice_state()
    models = ModelPool(settings, engine, partial(load_engine, batch=engine.rows))
    scheduler = standalone_scheduler(engine, models)
    discord = None
    if servers:  # as the bot with SPEECH_PORT runs it (bot/app.py)
        scheduler.choice.reserved_rows = 1
        discord = DiscordServers(scheduler, servers, seed=1)
    server = SpeechServer(settings, scheduler, models)
    await server.start()
    api = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="-", max_retries=0, timeout=600)
    try:
        await listen(api)  # warm-up
        raw = await asyncio.to_thread(raw_first_chunk, engine)
        print(
            f"{config.stem} {'int8' if quantize else 'fp32'}: raw first chunk "
            f"{raw * 1000:.0f} ms; batch of up to {engine.rows} rows"
        )
        if rounds:
            await file_rounds(engine, api, rounds)
        print(
            f"{'K':>3} {'way':<14} {'first byte p50':>15} {'p95':>8} {'x raw':>6} "
            f"{'underruns':>10} {'RTF min':>8} {'RTF p50':>8}"
        )
        beside: list[str] = []
        for k in ks:
            print(client_row(k, "at once", await run(k, api, True), raw), flush=True)
            print(client_row(k, "one by one", await run(k, api, False), raw), flush=True)
            if discord is not None:
                alone, with_clients, done = await beside_discord(k, api, discord)
                print(client_row(k, f"+{servers} Discord", done, raw), flush=True)
                beside += [f"K={k:<3} alone   {alone}", f"K={k:<3} beside  {with_clients}"]
        if beside:
            print(
                f"\n{servers} Discord servers speaking without pause, alone and beside the K "
                "clients at once (a row kept for Discord):"
            )
            print("\n".join(beside))
    finally:
        await api.close()
        await server.close()
        if discord is not None:
            await discord.close()
        await scheduler.close()
        await models.close()
        await engine.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 12])
    parser.add_argument("--config", default="english")
    parser.add_argument("--quantize", choices=["yes", "no"], default="yes")
    parser.add_argument("--discord", type=int, default=4, help="Discord servers beside (0: none)")
    parser.add_argument("--rounds", type=int, default=6, help="whole-file rounds (0: none)")
    parser.add_argument(
        "--batch",
        type=int,
        default=None,
        help="the batch size (default: measured at start, as the bot does; on a host busy "
        "with other work that measure comes out small, and K > 1 says little)",
    )
    parser.add_argument("--smoke", action="store_true", help="the tiny model, K = 1, 2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.smoke:
            tokenizer = train_tokenizer(folder, 4000)
            config = write_random_config("english_2m_2026-10", folder, tokenizer=tokenizer)
            ks, quantize, args.rounds = [1, 2], False, min(args.rounds, 2)
        else:
            tokenizer = train_tokenizer(folder, 4000)
            config = write_random_config(args.config, folder, full_length=True, tokenizer=tokenizer)
            ks, quantize = args.clients, args.quantize == "yes"
        clip = make_clip(folder / "voice.wav", seconds=10.0)
        await bench(config, clip, quantize, ks, folder, args.discord, args.rounds, args.batch)


if __name__ == "__main__":
    asyncio.run(main())
