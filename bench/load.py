"""Many servers at once: the deadline scheduler next to a first-come first-served baseline.

K simulated servers (K = 1, 2, 4, 8, 16) each receive chat messages for `--seconds`
(Poisson arrivals, mean one every 5 s; lengths: 60% short lines, 30% a sentence or two, 10%
paragraphs). Every message goes through the bot's real path: `GuildSpeaker` queue ->
scheduler -> real engine (default `english` architecture, random weights) -> FrameConverter ->
StreamingSource, read every 20 ms by a player thread per server that Opus-encodes each frame
like discord.py's AudioPlayer. Two schedulers, same engine, same arrivals:

  deadline  the bot's scheduler: units of a sentence or clause, earliest deadline first,
            at most 5 s buffered ahead per server, new messages admitted oldest first while
            the model has room, a server's next message synthesized while the current plays;
  fifo      the baseline: whole messages, one global first-come first-served queue (each
            server's next message joins it when the current one has played).

Printed per K: time-to-first-audio p50/p95 (request -> first 20 ms frame handed over),
the wait for the model p95 (time-to-first-audio minus the time the server's own voice channel
was still busy with its previous message: the part a scheduler can change), underrun seconds
per minute of audio (after the first frame), the messages with a gap of 100 ms or more (5
underrun frames in a row), CPU use (cores), fairness (Jain's index over the
servers' mean wait for the model: 1 = every server waits alike), and messages still waiting or
speaking at the end.

Random weights have no sense of when speech ends, so each text's length is set the way the
real model's would be: pocket-tts runs to its own cap, which this bench sets to about 2.5
words per second of speech (`--words-per-second`).

Two engines, same scheduler, same arrivals (`--engines`): the batched engine (every stream a
row of one flow-LM step, TTS_BATCH's default) and the baseline, one stream per thread
(TTS_BATCH=1, the engine before batching). `--traffic continuous` (the default) keeps every
server speaking without pause: its next message is always waiting.

`--dave` runs each K without DAVE (Discord's end-to-end encryption of voice), twice with it,
and again without: with it, each server's player encrypts every Opus frame with a davey session
of its own, ready as discord.py's is after the call's MLS welcome (the bot and one member in a
call on the fake voice gateway's DAVE part, in this process), as
`VoiceClient._get_voice_packet` does. Then it prints the CPU per second of audio without and
with, and their ratio; the players' CPU time per frame, Opus and DAVE apart; and
`encrypt_opus` timed alone.

`--breakdown` prints where each run's CPU went (by thread, the batch's counts), then runs
`bench/probe.py`'s measure on the engine's own model at the run's mean rows and cache slots, in
this process right after the run, and prints the bot's CPU per second of audio over the
model's own (all threads; the LM's and the decoder's): over the probe with its LM step and
decode timed one after the other, each alone, and over it with the two side by side on two
threads as the bot runs them (the cores then slow each other).

Usage: .venv/bin/python bench/load.py [--seconds 30] [--ks 1 2 4 6 8 12 16] [--quantize both]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import logging
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import davey

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.fifo import FifoScheduler, FifoSpeaker
from bench.paced_engine import PacedEngine
from bench.probe import Probe, ProbeEstimate, probe_text
from bot.core.config import load_config
from bot.playback.speakers import GuildSpeaker, Utterance
from bot.playback.stats import UtteranceResult
from bot.playback.voice_link import load_opus
from bot.synthesis import engine_loading
from bot.synthesis.batching import Batcher
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.pocket_tts_adapter import set_generation_length
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.speech_plan import SpeechPlan
from tests.audio_samples import make_clip
from tests.fakediscord.dave import DaveClient, DaveGateway, Message, server_frame
from tests.player import PlayerVoiceClient
from tests.tiny_model import _WORDS, train_tokenizer, write_random_config

MEAN_GAP_S = 5.0


def chat_message(rng: random.Random) -> str:
    roll = rng.random()
    count = (
        rng.randint(2, 6)
        if roll < 0.6
        else rng.randint(8, 20)
        if roll < 0.9
        else rng.randint(40, 80)
    )
    words = [rng.choice(_WORDS) for _ in range(count)]
    text, sentence = [], []
    for word in words:
        sentence.append(word)
        if len(sentence) >= rng.randint(6, 14):
            text.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    if sentence:
        text.append(" ".join(sentence).capitalize() + rng.choice([".", "!", "?"]))
    return " ".join(text)


# ---- DAVE: each server's call, end-to-end encrypted -----------------------------------------
BOT_ID, MEMBER_ID = 1100000000000000001, 1200000000000000001
FIRST_CHANNEL_ID = 1090000000000000000
OPUS_FRAME_S = 0.02
DAVE_ORDER = ("off", "on", "on", "off")  # --dave's runs of each K


class DaveCall:
    """One server's call: the bot and one member on the fake voice gateway's DAVE part
    (tests/fakediscord/dave.py), their davey sessions driven as discord.py 2.7.1 drives its own,
    the gateway's messages delivered in order in this process until nothing is left to say. The
    bot's session then can encrypt, as discord.py's after the commit or welcome."""

    def __init__(self, channel_id: int) -> None:
        self.channel_id = channel_id
        self.gateway = DaveGateway(channel_id)
        self.clients: dict[int, DaveClient] = {}
        self._seq: collections.Counter[int] = collections.Counter()
        for user_id in (BOT_ID, MEMBER_ID):
            self._join(user_id)
        if not self.bot.ready:
            raise RuntimeError(f"the bot's DAVE session in call {channel_id} is not ready")

    @property
    def bot(self) -> davey.DaveSession:
        return self.clients[BOT_ID].dave

    @property
    def member(self) -> davey.DaveSession:
        return self.clients[MEMBER_ID].dave

    def _join(self, user_id: int) -> None:
        """SESSION_DESCRIPTION: the client's key package leaves at once, the gateway's external
        sender package arrives; then every message each way until the call is quiet."""
        client = self.clients[user_id] = DaveClient(user_id, self.channel_id)
        key_package = client.session_description()
        queue: collections.deque[tuple[int, Message, bool]] = collections.deque()
        queue.extend((out.user_id, out.message, True) for out in self.gateway.connect(user_id))
        queue.extend((user_id, message, False) for message in key_package)
        while queue:
            user, message, to_client = queue.popleft()
            if to_client:
                if isinstance(message, bytes):  # the voice websocket puts its seq first
                    self._seq[user] += 1
                    message = server_frame(self._seq[user], message)
                queue.extend(
                    (user, answer, False) for answer in self.clients[user].receive(message)
                )
                continue
            if isinstance(message, bytes):
                outgoing = self.gateway.handle_binary(user, message)
            else:
                outgoing = self.gateway.handle_json(user, message)
            queue.extend((out.user_id, out.message, True) for out in outgoing)


class MeteredEncoder:
    """A player's Opus encoder, its CPU time per frame counted in the player's own thread (CPU
    time: what another process running beside the bench takes is not counted); with a `call`,
    each frame then comes out DAVE-encrypted by the bot's session, as discord.py's
    `VoiceClient._get_voice_packet` seals each encoded frame while its session can encrypt
    (`dave_session.encrypt_opus`), the sealing counted apart. Keeps the last frame, for the
    call's member to decrypt."""

    def __init__(self, encoder: Any, call: DaveCall | None = None) -> None:
        self.encoder = encoder
        self.call = call
        self.frames = 0
        self.encode_s = 0.0
        self.seal_s = 0.0
        self.last: tuple[bytes, bytes] | None = None  # (Opus, sealed)

    def encode(self, pcm: bytes, frame_size: int) -> bytes:
        start = time.thread_time()
        opus: bytes = self.encoder.encode(pcm, frame_size)
        encoded = time.thread_time()
        self.encode_s += encoded - start
        self.frames += 1
        if self.call is None:
            return opus
        sealed: bytes = self.call.bot.encrypt_opus(opus)
        self.seal_s += time.thread_time() - encoded
        self.last = (opus, sealed)
        return sealed

    def check(self) -> None:
        """The frames were DAVE's: the member decrypts the last one to the Opus it sealed."""
        if self.call is None or self.last is None:
            return
        opus, sealed = self.last
        heard = self.call.member.decrypt(BOT_ID, davey.MediaType.audio, sealed)
        if sealed == opus or not sealed.endswith(b"\xfa\xfa") or heard != opus:
            raise RuntimeError(f"call {self.call.channel_id}: its frames were not DAVE's")


def dave_calls(count: int) -> list[DaveCall]:
    """A call for each of `count` servers, each channel its own MLS group."""
    return [DaveCall(FIRST_CHANNEL_ID + k) for k in range(count)]


def encrypt_cost(call: DaveCall, opus: bytes, frames: int = 5000) -> float:
    """`encrypt_opus` alone: CPU seconds per frame, on `opus` (a frame a player encoded)."""
    start = time.thread_time()
    for _ in range(frames):
        call.bot.encrypt_opus(opus)
    return (time.thread_time() - start) / frames


@dataclass
class RunResult:
    results: list[tuple[int, UtteranceResult]]
    unfinished: int
    cpu_cores: float
    wall: float
    threads: dict[str, float] = field(default_factory=dict)  # CPU seconds by thread role
    work: dict[str, float] = field(default_factory=dict)  # the batch's own counts
    opus: bytes = b""  # the last Opus frame a player sealed with DAVE, for `encrypt_cost`


def tree_cpu() -> float:
    """CPU seconds of this process and its worker processes (pipelines run as processes)."""
    return time.process_time() + workers_cpu()


def workers_cpu() -> float:
    """CPU seconds of this process's worker processes (pipelines run as processes)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for child in multiprocessing.active_children():
        try:
            fields = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def thread_cpu() -> dict[str, float]:
    """CPU seconds so far of the process's long-lived threads, by role (from /proc). Threads
    that ended are not listed: the player threads, one per message, come out of the total."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    roles: dict[str, float] = collections.defaultdict(float)
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        name = names.get(int(task.name), "")
        role = (
            "lm"
            if name.startswith("tts-batch")
            else "decoder"
            if name.startswith("tts-decoder")
            else "loop"
            if name == "MainThread"
            else "players"
            if name.endswith("(run)")
            else "stand-in"  # bench/paced_engine.py's threads: the model's place, not the bot
            if name.startswith("paced-")
            else "other"
        )
        roles[role] += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return roles


class BatchCounts:
    """Counts what the batches did (every pipeline's, added up), from their live cost figures
    (bench-side wrappers)."""

    def __init__(self, engine: TTSEngine) -> None:
        self.counts: dict[str, float] = collections.defaultdict(float)
        pipelines = engine.pipelines
        self.frame_s = pipelines.frame_s if pipelines is not None else 0.08
        for batcher in pipelines.pipelines if pipelines is not None else []:
            if isinstance(batcher, Batcher):  # (a worker process's are counted there)
                self._wrap(batcher)

    def _wrap(self, batcher: Batcher) -> None:
        costs = batcher.costs
        add_step, add_prefill, add_decode = costs.add_step, costs.add_prefill, costs.decodes.add

        def step(rows: int, seconds: float) -> None:
            self.counts["steps"] += 1
            self.counts["span"] += batcher.batch.offset  # the slots this step's attention read
            self.counts["row_steps"] += rows
            self.counts["lm_s"] += seconds
            add_step(rows, seconds)

        def prefill(seconds: float) -> None:
            self.counts["prefills"] += 1
            self.counts["prefill_s"] += seconds
            add_prefill(seconds)

        def decode(rows: int, seconds: float) -> None:
            self.counts["decodes"] += 1
            self.counts["decode_s"] += seconds
            add_decode(rows, seconds)

        costs.add_step, costs.add_prefill, costs.decodes.add = step, prefill, decode  # type: ignore[method-assign]

    def take(self) -> dict[str, float]:
        counts, self.counts = dict(self.counts), collections.defaultdict(float)
        return counts


async def run_load(
    engine: TTSEngine,
    servers: int,
    seconds: float,
    policy: str,
    seed: int,
    traffic: str = "chat",
    counts: BatchCounts | None = None,
    own_voices: bool = False,
    dave: list[DaveCall | None] | None = None,
) -> RunResult:
    """`own_voices`: each server speaks in a voice of its own (the paced engine's states);
    `dave`: each server's player's frames are metered, and sealed with the bot's session in
    its call where it has one (`MeteredEncoder`)."""
    rng = random.Random(seed)
    kind = FifoScheduler if policy == "fifo" else DeadlineScheduler
    capacity = engine.capacity if engine.batched and policy == "deadline" else None
    scheduler = kind(
        engine.stream, workers=engine.workers, spare_lanes=engine.spare_lanes, capacity=capacity
    )
    scheduler.start()
    clients = [PlayerVoiceClient() for _ in range(servers)]
    meters: list[MeteredEncoder] = []
    if dave is not None:  # both runs of --dave: each player's frames metered
        meters = [MeteredEncoder(c.encoder, call) for c, call in zip(clients, dave, strict=True)]
        for client, meter in zip(clients, meters, strict=True):
            client.encoder = meter
    speaker_kind = FifoSpeaker if policy == "fifo" else GuildSpeaker
    results: list[tuple[int, UtteranceResult]] = []  # as each server's messages end, in order
    speakers = [
        speaker_kind(
            scheduler,
            lambda client=client: client,
            max_queue=1000,
            key=k,
            on_result=lambda result, k=k: results.append((k, result)),
        )
        for k, client in enumerate(clients)
    ]
    if traffic == "continuous":  # every server always has its next message waiting
        arrivals = [(0.0, k) for k in range(servers) for _ in range(int(seconds / 4) + 2)]
    else:
        arrivals = sorted((t, k) for k in range(servers) for t in _poisson(rng, seconds))
    texts = {
        i: chat_message(rng) if traffic == "chat" else sentences(rng) for i in range(len(arrivals))
    }
    if counts is not None:
        counts.take()
    threads0 = thread_cpu()
    workers0 = workers_cpu()
    cpu0, wall0 = tree_cpu(), time.monotonic()
    for i, (at, k) in enumerate(arrivals):
        await asyncio.sleep(max(0.0, wall0 + at - time.monotonic()))
        plan = SpeechPlan(voice=f"server-{k}") if own_voices else SpeechPlan()
        speakers[k].enqueue(Utterance(texts[i], plan=plan, requested_at=time.monotonic()))
    if traffic == "continuous":  # the load stops at `seconds`: what is left is cut
        await asyncio.sleep(max(0.0, wall0 + seconds - time.monotonic()))
        for speaker in speakers:
            speaker.clear_waiting()
    deadline = wall0 + seconds + 20.0  # let the queues drain a while
    while any(s.busy for s in speakers) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    wall = time.monotonic() - wall0
    total = tree_cpu() - cpu0
    cpu = total / wall
    threads = {role: s - threads0.get(role, 0.0) for role, s in thread_cpu().items()}
    if multiprocessing.active_children():  # the pipelines' processes: their model work
        threads["workers"] = workers_cpu() - workers0
    threads["players"] = total - sum(s for role, s in threads.items() if role != "players")
    work = counts.take() if counts is not None else {}
    for meter in meters:
        meter.check()
    if meters:
        work["frames_sent"] = sum(meter.frames for meter in meters)
        work["encode_s"] = sum(meter.encode_s for meter in meters)
        work["seal_s"] = sum(meter.seal_s for meter in meters)
    unfinished = sum(s.queued + (1 if s.busy else 0) for s in speakers)
    ended = list(results)  # what ended by now: closing cuts the rest off
    for speaker in speakers:
        await speaker.close()
    await scheduler.close()
    last = [meter.last[0] for meter in meters if meter.last is not None]
    return RunResult(ended, unfinished, cpu, wall, threads, work, last[-1] if last else b"")


def sentences(rng: random.Random) -> str:
    """A sentence or two (about 3-6 s of speech)."""
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + "."


def _poisson(rng: random.Random, seconds: float) -> list[float]:
    times, t = [], rng.expovariate(1 / MEAN_GAP_S)
    while t < seconds:
        times.append(t)
        t += rng.expovariate(1 / MEAN_GAP_S)
    return times


def model_waits(run: RunResult) -> dict[int, list[float]]:
    """Per server, how long each message waited for the model: request to first frame, minus
    the time its own voice channel was still busy with the server's previous message."""
    waits: dict[int, list[float]] = {}
    previous_end: dict[int, float] = {}
    for k, r in run.results:  # each server's results in the order they played
        if r.first_frame_latency is not None:
            free_at = max(r.requested_at, previous_end.get(k, 0.0))
            first_frame = r.requested_at + r.first_frame_latency
            waits.setdefault(k, []).append(max(0.0, first_frame - free_at))
        previous_end[k] = r.ended_at
    return waits


def summarize(run: RunResult) -> dict[str, float]:
    started = [(k, r) for k, r in run.results if r.first_frame_latency is not None]
    ttfa = sorted(r.first_frame_latency for _, r in started)  # type: ignore[misc]
    audio_min = sum(r.frames_played for _, r in started) * 0.02 / 60
    underrun_s = sum(r.underruns for _, r in started) * 0.02
    audio_s = sum(r.frames_played for _, r in started) * 0.02
    waits = model_waits(run)
    means = [statistics.mean(v) for v in waits.values()]

    def pct(values: list[float], p: float) -> float:
        values = sorted(values)
        return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")

    firsts: dict[int, float] = {}
    for k, r in started:  # each server's first message: nothing of its own ahead of it
        firsts.setdefault(k, r.first_frame_latency)  # type: ignore[arg-type]
    return {
        "first50": pct(list(firsts.values()), 0.5),
        "p50": pct(ttfa, 0.5),
        "p95": pct(ttfa, 0.95),
        "wait95": pct([w for v in waits.values() for w in v], 0.95),
        "underrun_per_min": underrun_s / audio_min if audio_min else 0.0,
        # messages with a gap a listener hears as a stutter: 5 underrun frames in a row (100 ms)
        "stutters": sum(r.longest_underrun >= 5 for _, r in started),
        "cpu": run.cpu_cores,
        "cpu_per_audio": run.cpu_cores * run.wall / audio_s if audio_s else float("nan"),
        # Jain's index over the servers' mean model wait: 1 = all equal, 1/K = one gets it all
        "fairness": sum(means) ** 2 / (len(means) * sum(m * m for m in means))
        if means and any(means)
        else 1.0,
        "messages": len(started),
        "unfinished": run.unfinished,
    }


COLUMNS = [  # title, figure, width, format ("s": seconds)
    ("K", "k", 3, "d"),
    ("engine", "engine", 9, ""),
    ("scheduler", "policy", 9, ""),
    ("DAVE", "dave", 4, ""),
    ("first p50", "first50", 9, "s"),
    ("TTFA p50", "p50", 8, "s"),
    ("p95", "p95", 7, "s"),
    ("wait p95", "wait95", 8, "s"),
    ("underrun s/min", "underrun_per_min", 14, ".2f"),
    ("gaps>=100ms", "stutters", 11, ".0f"),
    ("CPU", "cpu", 5, ".2f"),
    ("CPU s/audio s", "cpu_per_audio", 13, ".3f"),
    ("fair", "fairness", 5, ".2f"),
    ("msgs", "messages", 5, ".0f"),
    ("unfinished", "unfinished", 10, ".0f"),
]


def breakdown(run: RunResult, frame_s: float) -> str:
    """Where the CPU went: each thread role's CPU seconds per second of audio played, and
    what the batch made against what played (rows cut short or cancelled cost CPU too)."""
    audio_s = sum(r.frames_played for _, r in run.results) * 0.02
    if not audio_s:
        return "    (no audio)"
    roles = " ".join(
        f"{role} {seconds / audio_s:.4f}" for role, seconds in sorted(run.threads.items())
    )
    line = f"    CPU-s per audio s by thread: {roles}"
    if run.wall:  # one thread: its ceiling is one core
        line += f"; the event loop's thread busy {run.threads.get('loop', 0.0) / run.wall:.0%}"
    w = run.work
    if w.get("steps"):
        made_s = w["row_steps"] * frame_s
        line += (
            f"\n    batch: {w['steps']:.0f} steps, mean {w['row_steps'] / w['steps']:.2f} rows;"
            f" LM step {w['lm_s'] / w['steps'] * 1000:.1f} ms"
            f" over {w['span'] / w['steps']:.0f} slots, decode"
            f" {w['decode_s'] / max(1, w['decodes']) * 1000:.1f} ms ({w['decodes']:.0f});"
            f" {w.get('prefills', 0):.0f} prefills, {w.get('prefill_s', 0):.2f} s;"
            f" made {made_s:.1f} s of audio, played {audio_s:.1f} s"
        )
    return line


def probe_rows(run: RunResult) -> tuple[float, float | None]:
    """The row count and cache slots to probe the run at: its batch's mean rows and mean
    slots read; one row (and a unit's slots) without a batch, each stream alone."""
    w = run.work
    if not w.get("steps"):
        return 1.0, None
    return w["row_steps"] / w["steps"], w["span"] / w["steps"]


def against_probe(
    run: RunResult, estimate: ProbeEstimate, beside: ProbeEstimate | None = None
) -> str:
    """The run's CPU per second of audio over the model's own at its rows (bench/probe.py,
    measured right after it in this process): how much the bot spends beyond the model work.
    All threads, and the batch's two (LM, decoder: the model work and its bookkeeping); over
    the probe alone, then over `beside` (the probe's LM and decode side by side), if given."""
    audio_s = sum(r.frames_played for _, r in run.results) * 0.02
    if not audio_s or not estimate.cpu_per_audio:
        return "    probe: (no audio)"
    total = sum(run.threads.values()) / audio_s
    model = None
    if "lm" in run.threads:
        model = (run.threads["lm"] + run.threads.get("decoder", 0.0)) / audio_s
    sizes = " and ".join(f"{m.rows}" for m in estimate.measured)
    line = f"    probe at {estimate.rows:.2f} rows ({sizes}), {estimate.slots:.0f} slots:"
    for name, probe in (("alone", estimate), ("side by side", beside)):
        if probe is None or not probe.cpu_per_audio:
            continue
        floor = probe.cpu_per_audio
        line += f"\n      {name}: model CPU-s per audio s {floor:.3f}; bot/probe: all threads"
        line += f" {total / floor:.2f}"
        if model is not None:
            line += f", LM+decoder threads {model / floor:.2f}"
    return line


def show(value: object, width: int, fmt: str) -> str:
    if fmt == "s":
        return f"{value:>{width - 1}.2f}s"
    return f"{value:>{width}{fmt}}"


async def run_engine(
    args: argparse.Namespace,
    engine: Any,
    kind: str,
    counts: BatchCounts | None,
    probe: Probe | None,
    served: dict[str, int],
    calls: list[DaveCall] | None = None,
) -> None:
    """Every K and policy on one engine: a line each (and its breakdown); `served` gets the
    largest K with no underrun and nothing left waiting. With `calls`, each K and policy runs
    without DAVE, twice with it, and again without (the same arrivals each time; in this order
    a drift of the machine, or the engine's first run, weighs on both alike), and the two are
    compared."""
    for k, policy in itertools.product(args.ks, args.policies):
        runs: dict[str, list[RunResult]] = collections.defaultdict(list)
        for dave in DAVE_ORDER if calls else ("",):
            run = await run_one(args, engine, kind, counts, probe, k, policy, dave, calls)
            runs[dave].append(run)
            figures = summarize(run)
            if figures["underrun_per_min"] == 0 and figures["unfinished"] == 0:
                served[f"{kind}/{policy}"] = max(k, served.get(f"{kind}/{policy}", 0))
        if calls:
            print(dave_cost(runs["off"], runs["on"], calls[0]), flush=True)


async def run_one(
    args: argparse.Namespace,
    engine: Any,
    kind: str,
    counts: BatchCounts | None,
    probe: Probe | None,
    k: int,
    policy: str,
    dave: str,
    calls: list[DaveCall] | None,
) -> RunResult:
    """One run of `k` servers: its line, and what --breakdown adds."""
    traffic = getattr(engine, "traffic", [])
    sent0 = sum(t.bytes for t in traffic)
    metering: list[DaveCall | None] | None = None
    if calls:  # both runs metered alike; only the second seals
        metering = list(calls[:k]) if dave == "on" else [None] * k
    run = await run_load(
        engine, k, args.seconds, policy, k, args.traffic, counts, bool(traffic), metering
    )
    figures = summarize(run) | {"k": k, "policy": policy, "engine": kind, "dave": dave or "-"}
    print(
        " ".join(show(figures[key], width, fmt) for _, key, width, fmt in COLUMNS),
        flush=True,
    )
    if traffic:  # what the worker processes' pipes would carry of voice states
        sent = sum(t.bytes for t in traffic) - sent0
        print(
            f"  voice states to the workers ({args.voice_states}): "
            f"{sent / run.wall / 1e6:.2f} MB/s, {sent / 1e6:.0f} MB in {run.wall:.0f} s",
            flush=True,
        )
    if args.breakdown:
        print(breakdown(run, counts.frame_s if counts else 0.08), flush=True)
    if args.breakdown and probe is not None:
        rows, slots = probe_rows(run)
        estimate, beside = [
            await asyncio.to_thread(probe.at, rows, args.probe_frames, slots, side_by_side)
            for side_by_side in (False, True)
        ]
        print(against_probe(run, estimate, beside), flush=True)
    return run


def dave_cost(plain: list[RunResult], sealed: list[RunResult], call: DaveCall) -> str:
    """The runs' CPU per second of audio without DAVE and with it, and their ratio: all threads
    and the players' threads (where the encryption runs), per second of audio sent (the frames
    the players sent, an underrun's silence included, as discord.py sends and seals those too)
    and per second played; then what the players spent per frame, Opus and DAVE apart (their
    own threads' CPU time, which what runs beside the bench does not move), and `encrypt_opus`
    timed alone on a frame of the run."""

    def total(runs: list[RunResult], figure: Callable[[RunResult], float]) -> float:
        return sum(figure(run) for run in runs)

    def played_s(run: RunResult) -> float:
        return sum(r.frames_played for _, r in run.results) * OPUS_FRAME_S

    def sent_s(run: RunResult) -> float:
        return run.work.get("frames_sent", 0.0) * OPUS_FRAME_S

    def cpu(run: RunResult) -> float:
        return run.cpu_cores * run.wall

    def players(run: RunResult) -> float:
        return run.threads.get("players", 0.0)

    line = "  DAVE, CPU-s per audio s (without, with, ratio):"
    for audio, audio_s in (("sent", sent_s), ("played", played_s)):
        for name, spent in (("all threads", cpu), ("players", players)):
            off = total(plain, spent) / total(plain, audio_s)
            on = total(sealed, spent) / total(sealed, audio_s)
            line += f" {name} per s {audio} {off:.4f}, {on:.4f}, x{on / off:.3f};"

    def per_frame_us(runs: list[RunResult], key: str) -> float:
        frames = total(runs, lambda run: run.work.get("frames_sent", 0.0))
        return total(runs, lambda run: run.work.get(key, 0.0)) / max(1.0, frames) * 1e6

    opus_off, opus_on = per_frame_us(plain, "encode_s"), per_frame_us(sealed, "encode_s")
    seal = per_frame_us(sealed, "seal_s")
    line += (
        f"\n    per frame, in the players' threads: Opus {opus_off:.1f} us without, "
        f"{opus_on:.1f} us with, encrypt_opus {seal:.1f} us (x{(opus_on + seal) / opus_on:.3f}):"
        f" DAVE {seal * 1e-6 / OPUS_FRAME_S:.5f} CPU-s per audio s"
    )
    opus = sealed[-1].opus
    if opus:
        frame = encrypt_cost(call, opus)
        line += (
            f"\n    encrypt_opus alone {frame * 1e6:.1f} us per frame of {len(opus)} bytes,"
            f" {frame / OPUS_FRAME_S:.5f} CPU-s per audio s"
        )
    frames = total(sealed, lambda run: run.work.get("frames_sent", 0.0))
    return f"{line}; {frames:.0f} frames sealed, the last of each call decrypted by its member"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4, 6, 8, 12, 16])
    parser.add_argument("--quantize", choices=["no", "yes", "both"], default="both")
    parser.add_argument("--config", default="english")
    parser.add_argument(
        "--batch", type=int, help="TTS_BATCH for the batched engines (default: the bot's)"
    )
    parser.add_argument(
        "--pipelines",
        type=int,
        default=None,
        help="TTS_PIPELINES for the batched engines (default: that variable if set, else the "
        "bot's default, one per 2 cores of this process's CPU affinity)",
    )
    parser.add_argument(
        "--pipeline-mode",
        choices=["auto", "threads", "processes"],
        default=None,
        help="TTS_PIPELINE_MODE for the batched engines (default: the bot's, auto)",
    )
    parser.add_argument("--words-per-second", type=float, default=2.5)
    parser.add_argument("--traffic", choices=["continuous", "chat"], default="continuous")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="also print the CPU by thread and the batch's counts, and after each run the "
        "model's own CPU per audio second at its mean rows (bench/probe.py) and the ratio",
    )
    parser.add_argument(
        "--probe-frames", type=int, default=20, help="frames the probe times per row count"
    )
    parser.add_argument("--policies", nargs="+", default=["deadline"], choices=["deadline", "fifo"])
    parser.add_argument(
        "--engines",
        nargs="+",
        default=["batched", "forced", "stream"],
        choices=["batched", "forced", "stream", "paced"],
        help="batched: the bot's engine (batch size chosen from the costs measured at start); "
        "forced: batches of up to TTS_BATCH's default whatever the costs; stream: TTS_BATCH=1, "
        "one stream per thread (the engine before batching, the baseline); paced: no model, "
        "frames at its pace from --pipelines threads of --batch rows (bench/paced_engine.py): "
        "what the bot's own process spends per server",
    )
    parser.add_argument(
        "--voice-states",
        choices=["each", "once"],
        help="paced only: each server speaks in a voice of its own, a state of the English "
        "model's size, and the bytes of states its worker processes would be sent are shown: "
        "each: every stream carries its state (c4687c7); once: sent once, then named",
    )
    parser.add_argument(
        "--dave",
        action="store_true",
        help="run each K without DAVE and then with it: every server's player encrypts each "
        "frame with a davey session of its own call, as discord.py does; prints the CPU per "
        "audio second of both and their ratio",
    )
    args = parser.parse_args()
    logging.getLogger("pocket_tts").setLevel(logging.ERROR)  # random weights: no EOS
    logging.getLogger("bot.synthesis.batching").setLevel(logging.ERROR)
    load_opus()
    # our tests' tokenizer gives ~2 tokens per word: pocket-tts stops at tokens/rate + padding
    set_generation_length(2.0 * args.words_per_second, padding_s=0.3)
    quantize = {"no": [False], "yes": [True], "both": [False, True]}[args.quantize]
    calls = dave_calls(max(args.ks)) if args.dave else None  # made once, outside the runs
    pipelines = str(args.pipelines or "") or os.environ.get("TTS_PIPELINES", "")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tokenizer = train_tokenizer(folder, 4000)
        config = write_random_config(args.config, folder, full_length=True, tokenizer=tokenizer)
        clip = make_clip(folder / "voice.wav")
        for q in quantize:
            print(
                f"\n{args.config} {'int8' if q else 'fp32'}, {args.traffic} traffic, "
                f"{args.seconds:.0f} s per run"
            )
            print(" ".join(f"{title:>{width}}" for title, _, width, _ in COLUMNS))
            served: dict[str, int] = {}
            for kind in args.engines:
                if kind == "paced":  # the bot's own process, no model: see bench/paced_engine.py
                    count = int(pipelines or 1)
                    paced = PacedEngine(
                        count, args.batch or 12, args.words_per_second, args.voice_states
                    )
                    name = f"paced{paced.rows}x{count}"
                    await run_engine(args, paced, name, None, None, served, calls)
                    await paced.close()
                    continue
                env = {
                    "TTS_CONFIG": str(config),
                    "DEFAULT_VOICE": str(clip),
                    "TTS_QUANTIZE": str(int(q)),
                    **({"TTS_BATCH": "1"} if kind == "stream" else {}),
                    **({"TTS_BATCH": str(args.batch)} if args.batch and kind != "stream" else {}),
                    **({"TTS_PIPELINES": pipelines} if pipelines else {}),
                    **({"TTS_PIPELINE_MODE": args.pipeline_mode} if args.pipeline_mode else {}),
                }
                settings = load_config(env, dotenv_path=None, require_token=False)
                measured = engine_loading.batch_size
                engine_loading._CHOSEN_BATCH.clear()  # measured afresh for each engine
                if kind == "forced":
                    engine_loading.batch_size = lambda model, largest, cores=0, m=measured: (
                        largest,
                        m(model, largest, cores)[1],
                    )
                try:
                    engine = await load_engine(settings)
                finally:
                    engine_loading.batch_size = measured
                kind = f"{kind}{engine.rows if engine.batched else ''}"
                if engine.pipelines is not None and len(engine.pipelines) > 1:
                    kind += f"x{len(engine.pipelines)}"  # rows in each of that many pipelines
                await engine.synthesize("Warming up the model.")
                counts = BatchCounts(engine) if args.breakdown else None
                probe = None
                if args.breakdown:  # the engine's own model, idle between the runs
                    probe = await asyncio.to_thread(Probe, engine.model, clip, probe_text(20))
                await run_engine(args, engine, kind, counts, probe, served, calls)
                await engine.close()
            print(f"largest K with no underrun and nothing left waiting: {served}")


if __name__ == "__main__":
    asyncio.run(main())
