"""Figures the bot keeps about itself: time to first audio, underruns, speed and load.

`BotStats.record()` takes each finished utterance; `snapshot()` summarizes the recent ones
with the scheduler's figures for `/botstats`, the status line and debug logs.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.i18n.translate import plural, tr
from bot.playback.audio_source import FRAME_S
from bot.synthesis.scheduler import DeadlineScheduler

log = logging.getLogger(__name__)

WINDOW_S = 60.0  # load is measured over the last minute
AT_CAPACITY = 0.9  # workers busy this share of the time


@dataclass
class UtteranceResult:
    """What happened to one utterance: the figures tests and stats read."""

    text: str
    voice: str | None  # the voice spec the engine was given (None: its default)
    model_samples: int  # 24 kHz samples the engine produced
    frames_played: int
    underruns: int
    first_frame_latency: float | None  # request -> first 20 ms frame handed to discord.py
    cancelled: bool
    error: str | None = None
    requested_at: float = 0.0  # time.monotonic() of the message or interaction
    ended_at: float = 0.0  # when its playback ended (or it was given up)
    language: str | None = None  # the model that spoke it (None: the default language)
    rate: float = 1.0  # the speaking rate it was said at (a queue's speed-up included)
    pitch: int = 0  # the semitones it was shifted by (the formants kept)
    # the most underrun frames in a row (20 ms each): the longest gap a listener heard. A gap
    # test needs it: discord.py encodes an underrun's PCM zeros as ordinary Opus, and the
    # first frames after speech decode to its fading tail, so the wire hides short gaps
    longest_underrun: int = 0


@dataclass(frozen=True)
class Snapshot:
    utterances: int
    ttfa_p50: float | None
    ttfa_p95: float | None
    underruns_per_audio_min: float  # seconds of underrun per minute of audio
    real_time_factor: float | None  # audio produced per second of synthesis (per worker)
    load: float  # share of worker time spent synthesizing, last minute
    queued_units: int
    speaking_servers: int
    waiting_for_room: int = 0  # messages held back until the model has room
    background_waiting: int = 0  # files, previews and clones not finished
    background_done: int = 0
    background_refused: int = 0  # refused over the per-member/server/total limits
    # speech being made now by source: "discord", and the speech service's "api", "wyoming"
    streams: tuple[tuple[str, int], ...] = ()

    @property
    def at_capacity(self) -> bool:
        return (
            self.load >= AT_CAPACITY
            or self.underruns_per_audio_min > 1.0
            or self.waiting_for_room > 0
        )

    def status_line(self) -> str:
        if self.at_capacity:
            return tr("At capacity: speech may start late")
        if self.speaking_servers:
            return tr("Speaking in {servers}", servers=plural(self.speaking_servers, "server"))
        return tr("Ready to speak")


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class BotStats:
    def __init__(
        self, scheduler: DeadlineScheduler, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.scheduler = scheduler
        self.clock = clock
        self.recent: collections.deque[UtteranceResult] = collections.deque(maxlen=500)
        self.listeners: list[Callable[[UtteranceResult], None]] = []  # e.g. the metrics
        self._busy_marks: collections.deque[tuple[float, float]] = collections.deque()

    def record(self, result: UtteranceResult) -> None:
        self.recent.append(result)
        for listener in self.listeners:
            listener(result)
        if result.first_frame_latency is not None:
            log.debug(
                "utterance: first audio after %.0f ms, %d frames, %d underruns",
                result.first_frame_latency * 1000,
                result.frames_played,
                result.underruns,
            )

    def _load(self) -> float:
        """Share of the workers' time spent synthesizing over the last minute."""
        now = self.clock()
        self._busy_marks.append((now, self.scheduler.estimate.busy_seconds))
        while len(self._busy_marks) > 1 and now - self._busy_marks[1][0] >= WINDOW_S:
            self._busy_marks.popleft()
        then, busy_then = self._busy_marks[0]
        if now - then < 1.0:
            return 0.0
        return min(
            1.0,
            (self.scheduler.estimate.busy_seconds - busy_then)
            / ((now - then) * self.scheduler.workers),
        )

    def snapshot(self, speaking_servers: int) -> Snapshot:
        started = [r for r in self.recent if r.first_frame_latency is not None]
        ttfa = [r.first_frame_latency for r in started if r.first_frame_latency is not None]
        audio_min = sum(r.frames_played for r in started) * FRAME_S / 60
        underrun_s = sum(r.underruns for r in started) * FRAME_S
        busy = self.scheduler.estimate.busy_seconds
        snapshot = Snapshot(
            utterances=len(started),
            ttfa_p50=_percentile(ttfa, 0.5),
            ttfa_p95=_percentile(ttfa, 0.95),
            underruns_per_audio_min=underrun_s / audio_min if audio_min else 0.0,
            real_time_factor=self.scheduler.estimate.audio_seconds / busy if busy else None,
            load=self._load(),
            queued_units=self.scheduler.queued_units,
            speaking_servers=speaking_servers,
            waiting_for_room=self.scheduler.choice.held_back(),
            background_waiting=self.scheduler.background_waiting(),
            background_done=self.scheduler.background.done,
            background_refused=self.scheduler.background.refused,
            streams=tuple(
                collections.Counter(
                    j.source for j in self.scheduler.choice.live() if not j.done.is_set()
                ).items()
            ),
        )
        log.debug("stats: %s", snapshot)
        return snapshot
