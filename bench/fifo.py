"""The baseline the deadline scheduler is measured against: first come, first served.

Whole messages, one at a time, in arrival order across every server, with no spare lane and
no read-ahead limit; and a server's next message goes to the model only once the current one
has played: what a simple bot does. Benchmarks and tests compare against it; the bot never
uses it.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

from bot.playback.speakers import GuildSpeaker
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.speech_jobs import SpeechJob
from bot.synthesis.unit_choice import UnitChoice


class FifoChoice(UnitChoice):
    """Whole messages in arrival order, one at a time across every server."""

    def deadline(self, job: SpeechJob, now: float) -> float:
        return job.requested_at

    def eligible(self, job: SpeechJob) -> bool:
        if job.cancelled or not job.units or job.in_flight is not None:
            return False
        return not any(j.in_flight is not None for j in self.jobs if j is not job)

    def pick_live(self, now: float) -> SpeechJob | None:
        candidates = [j for j in self.live() if self.eligible(j)]
        return min(candidates, key=lambda j: j.requested_at) if candidates else None

    def unit_limit(self, job: SpeechJob) -> int | None:
        return None


class FifoScheduler(DeadlineScheduler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["spare_lanes"] = 0
        super().__init__(*args, **kwargs)
        fields = dataclasses.fields(self.choice)
        self.choice = FifoChoice(**{f.name: getattr(self.choice, f.name) for f in fields})

    def submit(self, job: SpeechJob) -> None:
        """A message is synthesized whole: its units (sentences, clauses) become one again."""
        if not job.background and len(job.units) > 1:
            job.units = collections.deque([" ".join(job.units)])
        super().submit(job)


class FifoSpeaker(GuildSpeaker):
    """A server's queue without preparing ahead: its next message joins the model's queue
    only when the current one has played (the bot synthesizes it while the current plays)."""

    def prepare_next(self) -> None:
        pass
