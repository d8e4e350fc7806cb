"""Soak: the real bot on the fake Discord, eight servers busy for a long time. Does it leak?

Eight servers (each with its own member) do random things for `--minutes` (default 20):
`/say`, `/tts`, chat messages read aloud, `/clone` then `/voice delete`, `/voice use` and
`/voice list`, leaving and rejoining voice. Meanwhile faults strike at random (`--fault-every`
seconds on average; 0: none): voice websockets closed with 4015 (either order of voice events,
the resume working or refused), 4006 or 4014, cut without a close frame (1006), a voice server
move, the gateway closed (resumed, or invalidated and identified again), and a server switched
to a language whose model cannot load. The bot is the real one (tiny random-weight model,
SQLite, encrypted voice over UDP to the fake). After a warm-up (`--warmup` minutes) it samples,
every 10 s: resident memory (RSS), open file descriptors and asyncio tasks. It prints:

- the RSS slope after warm-up (least squares, MB per 10 minutes; target <= 1);
- file descriptors and tasks at the start (after warm-up) and the end (target: flat);
- errors logged (log records at ERROR or with a traceback; target: none);
- servers whose last `/say` was never spoken once the load stopped (target: none);
- the longest event-loop stall after warm-up (how late a 100 ms sleep wakes up).

The fake Discord runs in the same process; what it records for tests (packets, interactions,
uploads) is trimmed before each sample, so the figures are the bot's.

The baseline is the same run's own state right after warm-up.

Usage: .venv/bin/python bench/soak.py [--minutes 20] [--warmup 2] [--servers 8] [--seed 1]
       [--fault-every 20]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import logging
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.client import PocketVoiceBot
from bot.core import native_memory
from bot.core.config import load_config
from bot.text.numbers import cardinal
from tests.audio_samples import encode, make_clip, speech_like
from tests.fakediscord import FakeDiscord
from tests.tiny_model import train_tokenizer, write_random_config

SAMPLE_S = 10.0
MEAN_GAP_S = 3.0  # between one server's actions
LINES = [
    "Hello there.",
    "Is anyone up for a game tonight?",
    "That was a close one, well played everybody.",
    "I will be back in five minutes, do not start without me.",
    "Can you hear me? The sound keeps cutting out on my side, I think it is my headset.",
]


RECONNECT_LINES = ("Disconnected from voice... Reconnecting", "Failed to connect to voice...")


class ErrorCounter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []
        self.reconnects = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.name == "discord.voice_state" and message.startswith(RECONNECT_LINES):
            self.reconnects += 1  # discord.py logs its own handled reconnects at ERROR
            return
        self.records.append(f"{record.name}: {message[:120]}")


class LoopLag:
    """How late the event loop wakes a 100 ms sleeper: a blocked loop shows here."""

    def __init__(self) -> None:
        self.worst = 0.0

    async def watch(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.1)
            self.worst = max(self.worst, time.monotonic() - before - 0.1)


def trim_fake(fake: FakeDiscord) -> None:
    """The fake keeps every packet, interaction and upload for tests to inspect; in the same
    process, that would be counted as the bot's memory. Keep only what is still in use."""
    fake.udp.packets.clear()
    fake.gateway_log.clear()
    fake.voice_log.clear()
    for key in list(fake.interactions)[:-200]:
        del fake.interactions[key]
    for key in list(fake.files)[:-50]:
        del fake.files[key]


def object_counts() -> collections.Counter[str]:
    """Live Python objects by type: what grows shows here (a Python-side leak)."""
    return collections.Counter(type(o).__name__ for o in gc.get_objects())


def explain_growth(kinds: list[str], sample: int = 20) -> None:
    """Who holds the objects of `kinds`, by the holder's type, for a sample of each; and which
    exceptions are alive (a traceback keeps its frames and their locals). A diagnostic for a
    Python-side leak (`--why`)."""
    gc.collect()
    objects = gc.get_objects()
    alive = collections.Counter(type(o).__name__ for o in objects if isinstance(o, BaseException))
    print("  exceptions alive: " + ", ".join(f"{k} {v}" for k, v in alive.most_common(8)))
    for kind in kinds:
        of_kind = [o for o in objects if type(o).__name__ == kind][-sample:]
        holders: collections.Counter[str] = collections.Counter()
        for obj in of_kind:
            for ref in gc.get_referrers(obj):
                if ref is objects or ref is of_kind or type(ref).__name__ == "frame":
                    continue
                owner = getattr(ref, "__qualname__", None) or type(ref).__name__
                if isinstance(ref, dict):  # an object's attributes: name the object
                    owners = [r for r in gc.get_referrers(ref) if hasattr(r, "__dict__")]
                    owner = "dict of " + ",".join(sorted({type(r).__name__ for r in owners}))
                holders[owner] += 1
        print(
            f"  {kind} (last {len(of_kind)}) held by: "
            + ", ".join(f"{k} {v}" for k, v in holders.most_common(6))
        )
    del objects


def rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 1e6


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def slope_per_10_min(points: list[tuple[float, float]]) -> float:
    if len(points) < 3:
        return float("nan")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    num = sum((x - mean_x) * (y - mean_y) for x, y in points)
    den = sum((x - mean_x) ** 2 for x in xs)
    return num / den * 600.0 if den else float("nan")


async def server_load(
    fake: FakeDiscord,
    guild: str,
    user: str,
    stop_at: float,
    rng: random.Random,
    last_say: dict[str, str],
) -> None:
    text_id, voice_id, _ = fake.channels[guild]
    clip = encode(speech_like(4.0, seed=rng.randrange(1000)), "wav")
    await fake.set_voice_state(user, voice_id, guild)
    count = 0
    while time.monotonic() < stop_at:
        await asyncio.sleep(rng.expovariate(1 / MEAN_GAP_S))
        count += 1
        action = rng.choices(
            ["say", "post", "tts", "clone", "voice", "rejoin"], [30, 30, 10, 5, 15, 10]
        )[0]
        try:
            if action == "say":
                # the count in words: the bot reads digits as words, and the line is looked for
                # in what it said
                line = f"{rng.choice(LINES)} Number {cardinal(count, 'english')}."
                inter = await fake.interaction("say", {"text": line}, user=user, guild=guild)
                reply = (await inter.wait_final(60)).get("content") or ""
                if reply.startswith(("Speaking in", "Queued")):  # accepted: it must be heard
                    last_say[guild] = line
            elif action == "post":
                await fake.post(user, rng.choice(LINES), channel_id=text_id)
            elif action == "tts":
                await fake.interaction("tts", {"text": rng.choice(LINES)}, user=user, guild=guild)
            elif action == "clone":
                file = fake.attachment("me.wav", clip)
                name = f"v{count}"
                inter = await fake.interaction(
                    "clone", {"name": name, "clip": file, "consent": True}, user=user, guild=guild
                )
                with contextlib.suppress(TimeoutError):
                    await inter.wait_content("is ready", timeout=30)
                await fake.interaction("voice delete", {"name": name}, user=user, guild=guild)
            elif action == "voice":
                name = rng.choice(["voice list", "voice use"])
                options = {"name": "alba"} if name == "voice use" else {}
                await fake.interaction(name, options, user=user, guild=guild)
            else:  # the bot leaves a channel with no human in it: what was queued is dropped
                last_say.pop(guild, None)
                await fake.set_voice_state(user, None, guild)
                await asyncio.sleep(rng.uniform(0.5, 3.0))
                await fake.set_voice_state(user, voice_id, guild)
        except (RuntimeError, ConnectionError, TimeoutError) as error:
            print(f"  load error in {guild}: {error}", file=sys.stderr)


VOICE_FAULTS = ["4015", "4015 resume refused", "4006", "4014", "1006", "move"]
GATEWAY_FAULTS = ["gateway resumed", "gateway re-identified"]
BROKEN_LANGUAGE = "german"  # its config cannot load: the server is read in the default language


async def inject_faults(
    bot: PocketVoiceBot,
    fake: FakeDiscord,
    guilds: list[str],
    every_s: float,
    stop_at: float,
    rng: random.Random,
    counts: collections.Counter[str],
) -> None:
    """Strike a random fault every `every_s` seconds on average, until `stop_at`."""
    while time.monotonic() < stop_at:
        await asyncio.sleep(rng.expovariate(1 / every_s))
        kind = rng.choices(["voice", "gateway", "language"], [6, 2, 1])[0]
        in_voice = [g for g in guilds if g in fake.voice_ws and not fake.voice_ws[g].closed]
        try:
            if kind == "voice" and in_voice:
                fault, guild = rng.choice(VOICE_FAULTS), rng.choice(in_voice)
                fake.server_update_first = rng.random() < 0.5
                fake.voice_resume_fails = fault == "4015 resume refused"
                if fault == "1006":
                    fake.abort_voice(guild)
                elif fault == "move":
                    await fake.move_voice_server(guild)
                else:
                    await fake.close_voice(guild, int(fault[:4]))
            elif kind == "gateway":
                fault = rng.choice(GATEWAY_FAULTS)
                fake.invalidate_resume = fault == "gateway re-identified"
                await fake.close_gateway(4000)
            else:
                fault, guild = "language that cannot load", rng.choice(guilds)
                current = (await bot.app.db.guilds.get(int(guild))).language
                switched = "english" if current == BROKEN_LANGUAGE else BROKEN_LANGUAGE
                await bot.app.db.guilds.set(int(guild), "language", switched)
            counts[fault] += 1
        except (RuntimeError, ConnectionError, KeyError) as error:  # e.g. mid-reconnect
            print(f"  could not inject a fault: {error}", file=sys.stderr)


async def soak(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pocketvoice-soak-"))
    tokenizer = train_tokenizer(folder, 4000)
    config = write_random_config("english_2m_2026-10", folder, tokenizer=tokenizer)
    clip = make_clip(folder / "voice.wav")
    models = folder / "models"
    models.mkdir()
    (models / f"{BROKEN_LANGUAGE}.yaml").write_text("flow_lm: [unclosed\n", encoding="utf-8")
    fake = FakeDiscord(folder, check_payloads=False)
    guilds = [fake.add_guild(i) for i in range(args.servers)]
    await fake.start()
    env = {
        **fake.env,
        "TTS_CONFIG": str(config),
        "DEFAULT_VOICE": str(clip),
        "DATA_DIR": str(folder / "data"),
        "LOG_LEVEL": "WARNING",
        "TTS_CONFIG_DIR": str(models),
        "TTS_LANGUAGES": f"english,{BROKEN_LANGUAGE}",
    }
    errors = ErrorCounter()
    logging.getLogger().addHandler(errors)
    bot = PocketVoiceBot(load_config(env, dotenv_path=None))
    bot_task = asyncio.create_task(bot.start(env["DISCORD_TOKEN"]))
    await asyncio.wait_for(bot.wait_until_ready(), 60)
    admin = fake.EVERYONE_PERMISSIONS | (1 << 5)
    for number, guild in enumerate(guilds):
        text_id = fake.channels[guild][0]
        await fake.interaction(
            "setup", {"channel": text_id}, user=f"member{number}", permissions=admin, guild=guild
        )

    rng = random.Random(args.seed)
    start = time.monotonic()
    warm_until = start + args.warmup * 60
    stop_at = start + args.minutes * 60
    last_say: dict[str, str] = {}
    loads = [
        asyncio.create_task(
            server_load(fake, g, f"member{i}", stop_at, random.Random(rng.random()), last_say)
        )
        for i, g in enumerate(guilds)
    ]
    faults: collections.Counter[str] = collections.Counter()
    if args.fault_every > 0:
        loads.append(
            asyncio.create_task(
                inject_faults(
                    bot,
                    fake,
                    guilds,
                    args.fault_every,
                    stop_at,
                    random.Random(rng.random()),
                    faults,
                )
            )
        )
    samples: list[tuple[float, float, int, int, float]] = []  # (t, RSS, fds, tasks, cache MB)
    errors_at_warm = 0
    objects_at_warm: collections.Counter[str] = collections.Counter()
    lag = LoopLag()
    lag_task = asyncio.create_task(lag.watch())
    while time.monotonic() < stop_at:
        await asyncio.sleep(SAMPLE_S)
        trim_fake(fake)
        # what the process holds, not the allocator's free pages of the moment (the bot
        # trims every 15 s as well): without this, RSS swings by ~100 MB sample to sample
        await asyncio.to_thread(native_memory.trim)
        now = time.monotonic()
        if now >= warm_until:
            if not samples:
                errors_at_warm = len(errors.records)
                objects_at_warm = object_counts()
                lag.worst = 0.0
            phrases = bot.app.engine.phrases
            cache = (bot.app.engine.voice_cache.bytes + (phrases.bytes if phrases else 0)) / 1e6
            samples.append((now - start, rss_mb(), open_fds(), len(asyncio.all_tasks()), cache))
            t, rss, fds, tasks, _ = samples[-1]
            print(
                f"  {t / 60:5.1f} min  RSS {rss:7.1f} MB  fds {fds:4d}  tasks {tasks:4d}"
                f"  voice-state and phrase caches {cache:6.1f} MB"
            )
    await asyncio.gather(*loads)
    lag_task.cancel()
    grown = (object_counts() - objects_at_warm).most_common(6)

    # the load has stopped: every server's last /say must be spoken (or end with an error)
    scheduler = bot.app.speakers
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        busy = [g for g in guilds if (s := scheduler.get(int(g))) is not None and s.busy]
        if not busy:
            break
        await asyncio.sleep(1)
    stuck = []
    for guild, line in last_say.items():
        speaker = scheduler.get(int(guild))
        spoken = speaker is not None and any(line in r.text for r in speaker.history)
        if not spoken:
            stuck.append(guild)

    first, last = samples[0], samples[-1]
    slope = slope_per_10_min([(t, rss) for t, rss, _, _, _ in samples])
    # the voice-state cache fills up to its cap (256 MB) by design: what grows besides it?
    beside = slope_per_10_min([(t, rss - cache) for t, rss, _, _, cache in samples])
    print()
    print(f"Soak: {args.servers} servers, {args.minutes} min ({args.warmup} min warm-up)")
    print(f"  RSS after warm-up {first[1]:.1f} MB, at the end {last[1]:.1f} MB")
    print(f"  RSS slope after warm-up: {slope:+.2f} MB per 10 min (target <= 1.0)")
    print(f"  voice-state and phrase caches {first[4]:.1f} -> {last[4]:.1f} MB (bounded)")
    print(f"  RSS slope beside those caches: {beside:+.2f} MB per 10 min")
    print(f"  open file descriptors: {first[2]} -> {last[2]}")
    print(f"  asyncio tasks:         {first[3]} -> {last[3]}")
    print("  Python objects grown most since warm-up: " + ", ".join(f"{k} +{v}" for k, v in grown))
    print(f"  event loop: the longest stall after warm-up {lag.worst * 1000:.0f} ms")
    print(f"  errors logged: {len(errors.records)} ({errors_at_warm} during warm-up), besides")
    print(f"    {errors.reconnects} reconnects discord.py handled (it logs them at ERROR)")
    for record in errors.records[:10]:
        print(f"    {record}")
    print(f"  servers whose last /say was never spoken: {len(stuck)} of {len(last_say)}")
    print(
        "  faults injected: "
        + (", ".join(f"{k} x{v}" for k, v in sorted(faults.items())) or "none")
    )
    print(f"  voice links healed by the watchdog: {bot.app.connections.heals}")
    if args.why:
        trim_fake(fake)
        grown_after = (object_counts() - objects_at_warm).most_common(6)
        print("  after the load stopped, grown: " + ", ".join(f"{k} +{v}" for k, v in grown_after))
        explain_growth([k for k, _ in grown_after[:6]])

    await bot.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(bot_task, 10)
    await fake.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--servers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fault-every", type=float, default=20.0, help="seconds; 0: no faults")
    parser.add_argument("--why", action="store_true", help="show who holds what grew (slow)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(soak(args))


if __name__ == "__main__":
    main()
