"""Sharding: servers speaking at once in one process versus two, and a voice's first use on a
machine that has never used it (its state fetched from PostgreSQL, or rebuilt).

  speak   K servers (K/2 on each of 2 shards) each ask for the same long message at once,
          through the fake Discord; one bot process holding both shards (the baseline) and
          two processes holding one shard each, on this machine, sharing one PostgreSQL.
          Per run: the batch rows each process chose at start (measured on this machine),
          time to first audio (mean, worst), underruns within messages (s per minute of
          audio, from the silent frames the bot sent), and the wall time until every
          message was heard. The tiny model (full length): this shows the mechanism,
          not more cores; on one box the two processes share the same cores.
  voice   the real `english` architecture (random weights), a 10 s clip cloned on machine A;
          on machine B (its own DATA_DIR, same PostgreSQL): the voice's state ready to speak
          when B already has it (the baseline), fetched from the store, and rebuilt from the
          recording; with the sizes of the state and the recording kept in the store.

Needs PostgreSQL's server programs (./test.sh installs them). Usage:
  .venv/bin/python bench/shards.py [--servers 4] [--runs 3] [--skip-speak] [--skip-voice]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.core.config import load_config
from bot.storage.database import Database
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.voice_library import VoiceLibrary, VoiceLimits, consent_now
from tests.audio_samples import encode, make_clip, speech_like
from tests.bot_process import BotProcess
from tests.fakediscord import FakeDiscord
from tests.fakediscord.server import shard_of
from tests.postgres_server import PostgresServer
from tests.tiny_model import train_tokenizer, write_random_config

TEXT = " ".join(["Every server hears its own message while the others speak as well."] * 3)
FRAME_S = 0.02


async def speak_once(
    folder: Path, config: Path, clip: Path, url: str, servers: int, processes: int
) -> dict[str, float]:
    """One run: `servers` servers ask at once; figures from the audio that reached them."""
    folder.mkdir(parents=True)
    fake = FakeDiscord(folder, shards=2, check_payloads=False)
    shard1 = [fake.GUILD_ID, fake.GUILD2_ID]
    people = {fake.GUILD_ID: "alice", fake.GUILD2_ID: "bob"}
    extra = max(0, servers - len(shard1))
    for number in range(extra):
        people[fake.add_guild(number)] = f"member{number}"
    guilds = sorted(people, key=lambda g: shard_of(g, 2))[:servers]
    await fake.start()
    base = {
        **fake.env,
        "TTS_CONFIG": str(config),
        "DEFAULT_VOICE": str(clip),
        "DATABASE_URL": url,
        "SHARD_COUNT": "2",
    }
    shard_sets = ["0,1"] if processes == 1 else ["0", "1"]
    bots = [
        BotProcess(
            {**base, "SHARD_IDS": ids, "DATA_DIR": str(folder / f"m{n}")},
            folder / f"m{n}",
            f"bot{n}",
        )
        for n, ids in enumerate(shard_sets)
    ]
    try:
        await asyncio.gather(*(bot.start() for bot in bots))
        await fake.wait_for(lambda: fake.identified_shards == {0, 1}, 180, "both shards")
        for guild in guilds:
            await fake.set_voice_state(people[guild], fake.channels[guild][1], guild)
        await asyncio.sleep(2)  # READY and the servers reached every process
        asked = time.monotonic()
        for guild in guilds:
            await fake.interaction("say", {"text": TEXT}, user=people[guild], guild=guild)

        def heard(guild: str) -> list:
            ssrcs = {s for s, g in fake.ssrc_guild.items() if g == guild}
            return [p for p in fake.udp.packets if p.ssrc in ssrcs]

        await fake.wait_for(lambda: all(heard(g) for g in guilds), 300, "every server")
        await quiet(fake)
        firsts, underrun_s, audio_s = [], 0.0, 0.0
        for guild in guilds:
            packets = heard(guild)
            voiced = [i for i, p in enumerate(packets) if not p.is_silence]
            firsts.append(packets[voiced[0]].arrived - asked)
            inside = packets[voiced[0] : voiced[-1] + 1]
            underrun_s += sum(p.is_silence for p in inside) * FRAME_S
            audio_s += len(inside) * FRAME_S
        last = max(heard(g)[-1].arrived for g in guilds)
        rows = [int(m) for bot in bots for m in re.findall(r"largest batch (\d+)", bot.log)]
        return {
            "rows": sum(rows),
            "ttfa_mean": statistics.mean(firsts),
            "ttfa_worst": max(firsts),
            "underrun_per_min": underrun_s / (audio_s / 60),
            "wall": last - asked,
            "audio_per_server": audio_s / len(guilds),
        }
    finally:
        for bot in bots:
            await bot.stop()
        await fake.close()


async def quiet(fake: FakeDiscord, for_s: float = 1.0) -> None:
    while not fake.udp.packets or time.monotonic() - fake.udp.packets[-1].arrived < for_s:
        await asyncio.sleep(0.1)


async def bench_speak(server: PostgresServer, servers: int, runs: int) -> None:
    print(f"\n== {servers} servers speaking at once: one process (2 shards) vs two (1 each) ==")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = train_tokenizer(folder, 4000)
        config = write_random_config(
            "english_2m_2026-10", folder, tokenizer=tokenizer, full_length=True
        )
        clip = make_clip(folder / "voice.wav")
        results: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        for run in range(runs):
            for processes in (1, 2):
                url = await server.new_database()
                where = folder / f"run{run}-{processes}"
                results[processes].append(
                    await speak_once(where, config, clip, url, servers, processes)
                )
        keys = [
            ("rows", "batch rows, all processes"),
            ("ttfa_mean", "first audio, mean (s)"),
            ("ttfa_worst", "first audio, worst (s)"),
            ("underrun_per_min", "underruns (s/min)"),
            ("wall", "all heard after (s)"),
            ("audio_per_server", "audio per server (s)"),
        ]
        print(
            f"{'median of ' + str(runs) + ' runs':28} {'1 process':>10} {'2 processes':>12} "
            f"{'ratio':>7}"
        )
        for key, label in keys:
            one = statistics.median(r[key] for r in results[1])
            two = statistics.median(r[key] for r in results[2])
            ratio = f"{two / one:.2f}x" if one else "-"
            print(f"{label:28} {one:10.2f} {two:12.2f} {ratio:>7}")


async def bench_voice(server: PostgresServer, runs: int) -> None:
    print("\n== a voice's first use on a machine that never used it (english, 10 s clip) ==")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_random_config("english", folder, tokenizer=train_tokenizer(folder, 4000))
        settings = load_config(
            {"TTS_CONFIG": str(config), "DEFAULT_VOICE": str(make_clip(folder / "d.wav"))},
            dotenv_path=None,
            require_token=False,
        )
        engine = await load_engine(settings)
        url = await server.new_database()
        a_db, b_db = await Database.open(url), await Database.open(url)
        try:
            a = VoiceLibrary(a_db, engine, folder / "a", VoiceLimits(quota=1000))
            upload = encode(speech_like(10.0, lead_s=0.5, tail_s=0.5), "wav")
            hit, fetch, rebuild = [], [], []
            for run in range(runs):
                record = await a.create(1, f"v{run}", upload, consented_at=consent_now())
                b = VoiceLibrary(b_db, engine, folder / f"b{run}", VoiceLimits(quota=1000))
                t0 = time.perf_counter()
                await b.states.state_spec(record)  # B never had it: fetched from the store
                fetch.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                await b.states.state_spec(record)  # B has it now
                hit.append(time.perf_counter() - t0)
                await a_db.execute("DELETE FROM voice_states WHERE voice_id = ?", record.id)
                c = VoiceLibrary(b_db, engine, folder / f"c{run}", VoiceLimits(quota=1000))
                t0 = time.perf_counter()
                await c.states.state_spec(record)  # nothing kept: rebuilt from the recording
                rebuild.append(time.perf_counter() - t0)
            state = await a_db.voices.state(record.id, engine.fingerprint)
            recording = await a_db.voices.recording(record.id)
        finally:
            await a_db.close()
            await b_db.close()
            await engine.close()
        base, rebuilt = statistics.median(hit), statistics.median(rebuild)
        print(
            f"{'median of ' + str(runs) + ' voices':30} {'seconds':>9} {'vs has it':>10} "
            f"{'vs rebuilt':>11}"
        )
        for label, values in (
            ("B has it (baseline)", hit),
            ("fetched from PostgreSQL", fetch),
            ("rebuilt from the recording", rebuild),
        ):
            value = statistics.median(values)
            print(f"{label:30} {value:9.3f} {value / base:9.0f}x {value / rebuilt:10.3f}x")
        assert state is not None and recording is not None
        print(
            f"kept in the store per voice: recording {len(recording) / 1e3:.0f} kB, "
            f"state {len(state) / 1e6:.1f} MB per model"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-speak", action="store_true")
    parser.add_argument("--skip-voice", action="store_true")
    args = parser.parse_args()
    server = PostgresServer()
    server.start()
    try:
        if not args.skip_voice:
            await bench_voice(server, args.runs)
        if not args.skip_speak:
            await bench_speak(server, args.servers, args.runs)
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
