"""Prometheus metrics: what `/botstats` shows, and more, for an operator's dashboards.

Each bot has its own registry (tests run several bots in one process). Counters and the
time-to-first-audio histogram are fed as utterances finish; gauges are read from the
scheduler when Prometheus scrapes. Warnings and errors are counted by the logger that wrote
them (`bot.playback.speakers`, `discord.voice_state`, ...), so every kind of trouble is counted
without a call at each place it can happen.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from bot.playback.audio_source import FRAME_S

if TYPE_CHECKING:
    from bot.ops.shards import ProcessShards
    from bot.playback.speakers import Speakers
    from bot.playback.stats import UtteranceResult

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
TTFA_BUCKETS = (0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)
# a message's longest gap: none, a frame or two (unheard), up to a stutter (100 ms), and past it
GAP_BUCKETS = (0.0, 0.02, 0.04, 0.08, 0.1, 0.2, 0.5, 1.0, 2.0)
COUNTED_LOGGERS = ("bot", "cogs", "discord")


class _SchedulerCollector(Collector):
    """Gauges read at scrape time, so they are never stale."""

    def __init__(
        self, speakers: Callable[[], Speakers | None], shards: Callable[[], ProcessShards]
    ) -> None:
        self._scheduler = speakers
        self._shards = shards

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        yield from self._collect_shards(self._shards())
        speakers = self._scheduler()
        if speakers is None:
            return
        snap = speakers.snapshot()
        gauges = {
            "pocketvoice_speaking_servers": (
                "Servers with speech playing or queued.",
                snap.speaking_servers,
            ),
            "pocketvoice_queued_units": ("Text units waiting for the model.", snap.queued_units),
            "pocketvoice_waiting_for_room": (
                "Messages held back until the model has room.",
                snap.waiting_for_room,
            ),
            "pocketvoice_background_jobs_waiting": (
                "Files, previews and clones not finished.",
                snap.background_waiting,
            ),
            "pocketvoice_model_load_ratio": (
                "Share of model worker time spent synthesizing, last minute.",
                snap.load,
            ),
            "pocketvoice_real_time_factor": (
                "Seconds of audio made per second of synthesis.",
                snap.real_time_factor or 0.0,
            ),
        }
        for name, (documentation, value) in gauges.items():
            yield GaugeMetricFamily(name, documentation, value=value)
        yield CounterMetricFamily(
            "pocketvoice_background_jobs_refused",
            "Background jobs refused over the limits.",
            value=snap.background_refused,
        )
        yield CounterMetricFamily(
            "pocketvoice_background_jobs_done",
            "Background jobs finished.",
            value=snap.background_done,
        )
        streams = GaugeMetricFamily(
            "pocketvoice_speech_streams",
            "Speech being made now, by source (discord, api, wyoming).",
            labels=["source"],
        )
        live = dict(snap.streams)
        for source in ("discord", "api", "wyoming"):
            streams.add_metric([source], live.get(source, 0))
        yield streams

    @staticmethod
    def _collect_shards(shards: ProcessShards) -> Iterator[GaugeMetricFamily]:
        """Per shard of this process, so each process's load can be told apart."""
        yield GaugeMetricFamily(
            "pocketvoice_shard_count", "Gateway shards across every process.", value=shards.count
        )
        connections = GaugeMetricFamily(
            "pocketvoice_voice_connections",
            "Voice channels the bot is connected to, by shard.",
            labels=["shard"],
        )
        servers = GaugeMetricFamily(
            "pocketvoice_servers", "Servers this process holds, by shard.", labels=["shard"]
        )
        latency = GaugeMetricFamily(
            "pocketvoice_gateway_latency_seconds",
            "Gateway heartbeat round trip, by shard.",
            labels=["shard"],
        )
        connected = GaugeMetricFamily(
            "pocketvoice_shard_connected",
            "1 while the shard's gateway connection is open.",
            labels=["shard"],
        )
        for load in shards.loads:
            shard = [str(load.shard_id)]
            connections.add_metric(shard, load.voice_connections)
            servers.add_metric(shard, load.servers)
            latency.add_metric(shard, load.latency)
            connected.add_metric(shard, 0.0 if load.closed else 1.0)
        yield from (connections, servers, latency, connected)


class _LogCounter(logging.Handler):
    def __init__(self, counter: Counter) -> None:
        super().__init__(level=logging.WARNING)
        self._counter = counter

    def emit(self, record: logging.LogRecord) -> None:
        kind = record.name.removeprefix("bot.").removeprefix("cogs.")
        self._counter.labels(kind=kind, level=record.levelname.lower()).inc()


class Metrics:
    def __init__(
        self, speakers: Callable[[], Speakers | None], shards: Callable[[], ProcessShards]
    ) -> None:
        self.registry = CollectorRegistry()
        self.ttfa = Histogram(
            "pocketvoice_time_to_first_audio_seconds",
            "From a message or command to its first 20 ms frame handed to Discord.",
            buckets=TTFA_BUCKETS,
            registry=self.registry,
        )
        self.utterances = Counter(
            "pocketvoice_utterances",
            "Messages spoken (or given up).",
            ["outcome"],
            registry=self.registry,
        )
        self.audio = Counter(
            "pocketvoice_audio_played_seconds", "Audio handed to Discord.", registry=self.registry
        )
        self.underruns = Counter(
            "pocketvoice_underrun_seconds",
            "Silence inserted because the model was late, within a message.",
            registry=self.registry,
        )
        self.longest_gap = Histogram(
            "pocketvoice_longest_gap_seconds",
            "Per message, its longest stretch of underrun silence (a listener hears a gap of "
            "100 ms or more as a stutter).",
            buckets=GAP_BUCKETS,
            registry=self.registry,
        )
        self.problems = Counter(
            "pocketvoice_log_problems",
            "Warnings and errors logged, by the module that logged them.",
            ["kind", "level"],
            registry=self.registry,
        )
        # every way in to the one scheduler: Discord's messages, the speech service's streams
        self.requests = Counter(
            "pocketvoice_speech_requests",
            "Speech asked for, by source (discord, api, wyoming) and outcome.",
            ["source", "outcome"],
            registry=self.registry,
        )
        self.first_audio = Histogram(
            "pocketvoice_speech_first_audio_seconds",
            "From a request to its first audio, by source (discord: its first frame handed "
            "to Discord; api and wyoming: its first chunk handed to the client).",
            ["source"],
            buckets=TTFA_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_SchedulerCollector(speakers, shards))
        self._log_counter = _LogCounter(self.problems)

    def record(self, result: UtteranceResult) -> None:
        if result.first_frame_latency is not None:
            self.ttfa.observe(result.first_frame_latency)
        outcome = "error" if result.error else "cancelled" if result.cancelled else "spoken"
        self.utterances.labels(outcome=outcome).inc()
        self.requests.labels(source="discord", outcome=outcome).inc()
        if result.first_frame_latency is not None:
            self.first_audio.labels(source="discord").observe(result.first_frame_latency)
        self.audio.inc(result.frames_played * FRAME_S)
        self.underruns.inc(result.underruns * FRAME_S)
        if result.frames_played:
            self.longest_gap.observe(result.longest_underrun * FRAME_S)

    def record_stream(self, source: str, first_audio_s: float | None, outcome: str) -> None:
        """A speech service stream ended (`source`: "api" or "wyoming")."""
        self.requests.labels(source=source, outcome=outcome).inc()
        if first_audio_s is not None:
            self.first_audio.labels(source=source).observe(first_audio_s)

    def count_log_problems(self) -> None:
        for name in COUNTED_LOGGERS:
            logging.getLogger(name).addHandler(self._log_counter)

    def stop_counting(self) -> None:
        for name in COUNTED_LOGGERS:
            logging.getLogger(name).removeHandler(self._log_counter)

    def render(self) -> bytes:
        return generate_latest(self.registry)
