"""Which job's unit the model synthesizes next, and whether a new job has room: the
scheduler's choice, pure (no tasks, no awaits), so it can be tested with a fake clock.

- a job that has not started playing is due at `requested_at + first_audio_budget_s`;
- a playing job is due when its buffer runs dry: `now + buffered seconds`;
- a job with `ahead_s` or more buffered waits, leaving the model to others;
- a job that has not started is admitted, the longest waiting first (counted from when its
  server's voice channel became free for it), only while the model has room for it, so an
  overload delays new speech instead of breaking it up;
- a unit is cut shorter while another playing server has little buffered, since a unit in
  flight cannot be interrupted.

Discord first: the speech service's streams (`SpeechJob.source` "api", "wyoming") wait behind
every Discord message waiting for room, and are admitted only while `reserved_rows` rows stay
free for Discord beside them (with the load estimate instead of a batch: while the load stays
under `SERVICE_LOAD_SHARE` of the most). Once admitted, a stream's audio ahead is only what its
client has not taken (`ServiceSink`): how long it has before it runs dry is not known, so it is
never urgent and its units go after every Discord server's below `ahead_s`; a client that takes
its audio as it comes (a file) gets the model whenever the servers are far enough ahead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.synthesis.background_work import BACKGROUND_UNIT_CHARS, ModelCall
from bot.synthesis.speech_jobs import FIRST_UNIT_CHARS, SpeechJob, cut_text, model_text
from bot.synthesis.speed_estimate import SpeedEstimate

MIN_UNIT_CHARS = 20
MIN_UNIT_AUDIO_S = 2.0  # a cut unit still gives this much speech
SPARE_MIN_SPEED = 1.5  # spare lanes run only while the model alone is this much faster than speech
READ_AHEAD_S = 20.0  # how far admitted jobs read ahead while others wait for room
KEPT_ROW_S = 10.0  # a row kept for a message's next part is let go after this (a way out)
SERVICE_LOAD_SHARE = 0.5  # unbatched, with rows reserved: the service's streams' share


def rate_of(job: SpeechJob) -> float:
    """How many seconds of model audio the job's listener hears per second (its speaking
    rate; slower than 1x still costs a frame per step)."""
    return max(1.0, job.tempo.rate) if job.tempo is not None else 1.0


@dataclass(eq=False)
class UnitChoice:
    """The next unit across all jobs, and admission.

    Admission: a job waiting for its first unit (a new request, or a server's next message)
    starts only while the model has room for it. With a batched engine, room is a row: fewer
    active jobs than the rows the live step times say stay in real time (`capacity`). Without
    one, the work every admitted job still needs, as a share of the time until its audio would
    run out, plus the new job's, stays under `max_load` (0.9 per worker). So an overload makes
    speech start later, in arrival order across servers, instead of making every server
    stutter.

    `capacity(rate, extra=0)`: for a batched engine, how many jobs may synthesize at once in
    real time, the fastest spoken at `rate` (measured live; `extra`: rows kept free, beyond the
    sizes seen live); admission then counts jobs instead of estimating their demand.
    """

    jobs: list[SpeechJob]  # the scheduler's speech jobs, live and background
    calls: list[ModelCall]  # the scheduler's model calls (background work)
    estimate: SpeedEstimate
    clock: Callable[[], float]
    workers: int = 1
    ahead_s: float = 5.0
    first_audio_budget_s: float = 0.5
    low_water_s: float = 1.5
    max_load: float = 0.9
    capacity: Callable[..., int] | None = None
    # rows kept free for Discord's speech beside the speech service's streams (the bot with
    # SPEECH_PORT: 1; `serve` alone: 0)
    reserved_rows: int = 0
    # rows kept for a message's next part (after a sound): its server's key -> since when
    kept_rows: dict[object, float] = field(default_factory=dict)
    # messages wait for room (`held_back`), kept by the loop for `slack` on other threads
    room_wanted: bool = False

    # ---- admission (measured as the model runs: `estimate`) -------------------------------
    def remaining_audio(self, job: SpeechJob) -> float:
        per_char = self.estimate.seconds_per_char()
        left = sum(len(u) for u in job.units) * per_char
        if job.in_flight is not None:
            left += max(0.0, job.unit_chars * per_char - job.unit_audio)
        return left

    def demand(self, job: SpeechJob) -> float:
        """The share of one worker the job needs from now on to play without a gap: its
        remaining model audio within the time it takes to play (at its speaking rate)."""
        remaining = self.remaining_audio(job)
        if remaining <= 0.0:
            return 0.0
        slack = job.sink.buffered_seconds() if job.sink.started else self.first_audio_budget_s
        return remaining / (self.estimate.speed() * (slack + remaining / rate_of(job)))

    def live(self) -> list[SpeechJob]:
        return [j for j in self.jobs if not j.background]

    def load(self) -> float:
        return sum(self.demand(j) for j in self.live() if j.active)

    def _active(self) -> int:
        """Live jobs admitted and still synthesizing, and the rows kept for a message's next
        part: with a batch, the rows in use."""
        now = self.clock()
        for key, since in list(self.kept_rows.items()):
            if now - since > KEPT_ROW_S:
                del self.kept_rows[key]
        return sum(1 for j in self.live() if j.active) + len(self.kept_rows)

    def _fastest(self, job: SpeechJob | None = None) -> float:
        """The fastest speaking rate among the admitted live jobs (and `job`): the batch
        steps every row at once, so its fastest listener sets the pace it must keep."""
        jobs = [j for j in self.live() if j.active]
        return max(rate_of(j) for j in [*jobs, *([job] if job is not None else [])])

    def has_room(self, job: SpeechJob) -> bool:
        active = self._active()
        reserved = 0 if job.from_discord else self.reserved_rows
        if not active and not reserved:
            return True  # an idle model always takes the job, however slow it is
        if self.capacity is not None and reserved:
            # the kept rows count in the step times, not in the ramp (the batch never runs
            # them until Discord takes them); a model too slow for Discord and a stream beside
            # it never takes the stream
            fastest = self._fastest(job) if active else rate_of(job)
            return active + reserved < self.capacity(fastest, reserved)
        if not active:
            return True
        if self.capacity is not None:  # a batch: each job is a row, and rows cost alike
            # Discord's message may take the rows kept for it: counted beyond the sizes seen
            # live, they are what the service's streams left free (without them, while the
            # batch ramped up, a burst of streams took the kept row too: issue 59)
            return active < self._discord_rows(self._fastest(job))
        most = self.max_load * (SERVICE_LOAD_SHARE if reserved else 1.0)
        return self.load() + self.demand(job) <= most

    def at_capacity(self) -> bool:
        """A message asked for now would wait for room: the bot already speaks in as many
        servers as the model carries."""
        if self.capacity is not None:
            active = self._active()
            return bool(active) and active >= self._discord_rows(self._fastest())
        return self.held_back() > 0

    def _discord_rows(self, fastest: float) -> int:
        """The rows a Discord message may take: the batch's, with those kept for it."""
        assert self.capacity is not None
        if self.reserved_rows:
            return self.capacity(fastest, self.reserved_rows)
        return self.capacity(fastest)

    def held_back(self) -> int:
        """Messages waiting to start because the model has no room for them now."""
        waiting = [j for j in self.live() if not j.admitted and not j.cancelled and j.units]
        if not waiting or self.has_room(self._first_waiting(waiting, self.clock())):
            return 0
        return len(waiting)

    def note_room(self) -> None:
        """Take note of whether messages wait for room now (read by `slack`)."""
        self.room_wanted = self.held_back() > 0

    def slack(self, job: SpeechJob) -> float:
        """How much audio `job`'s server has ahead, for the batch's pace (read on its
        thread): none while messages wait for room, so the admitted ones read ahead and
        make room sooner."""
        return 0.0 if self.room_wanted else job.sink.buffered_seconds()

    def unit_limit(self, job: SpeechJob) -> int | None:
        """How long `job`'s next unit may be so that no other playing server runs dry while the
        worker is busy with it (units cannot be interrupted); None: any length."""
        others = [
            j.sink.buffered_seconds()
            for j in self.jobs
            if j is not job and j.active and j.sink.started
        ]
        if not others:
            return None
        work_s = 0.5 * min(others)
        per_char = self.estimate.seconds_per_char()
        floor = max(MIN_UNIT_CHARS, int(MIN_UNIT_AUDIO_S / per_char))
        return max(floor, int(work_s * self.estimate.speed() / per_char))

    # ---- the choice ------------------------------------------------------------------------
    def deadline(self, job: SpeechJob, now: float) -> float:
        """When the job needs audio. A job not admitted yet waits from when its server's
        channel became free (its request, or the end of the server's previous message), so a
        busy server's next message does not go before a quiet server's, nor starve."""
        if not job.admitted and job.free_at is not None:
            return job.free_at + self.first_audio_budget_s
        if not job.sink.started:
            return job.requested_at + self.first_audio_budget_s
        return now + job.sink.buffered_seconds()

    def eligible(self, job: SpeechJob) -> bool:
        if job.cancelled or not job.units or job.in_flight is not None:
            return False
        return job.sink.buffered_seconds() < self.ahead_s

    def pick(self, now: float) -> SpeechJob | ModelCall | None:
        """The next unit's job: live speech first (`pick_live`), else background work, the
        oldest first."""
        job = self.pick_live(now)
        if job is not None:
            return job
        return self.pick_background()

    def pick_background(self) -> SpeechJob | ModelCall | None:
        """Background work for a background lane (a file's unit or a model call), the oldest
        first."""
        work: list[SpeechJob | ModelCall] = [
            j for j in self.jobs if j.background and self.eligible(j)
        ]
        work += [c for c in self.calls if not c.running and not c.cancelled]
        return min(work, key=lambda w: w.requested_at) if work else None

    def pick_live(self, now: float) -> SpeechJob | None:
        """Order: admitted jobs about to run dry (under `low_water_s`), then the most overdue
        waiting job if there is room for it, then the admitted jobs by how soon they run dry."""
        candidates = [j for j in self.live() if self.eligible(j)]
        if not candidates:
            return None
        admitted = [j for j in candidates if j.admitted]
        urgent = self._urgent(admitted)
        if urgent:
            return self._first(urgent, now)
        waiting = [j for j in candidates if not j.admitted]
        if waiting and self.has_room(first := self._first_waiting(waiting, now)):
            return first
        if admitted:
            return self._first(admitted, now)
        if waiting:  # no room for them: read further ahead, which lowers the admitted jobs'
            return self._read_ahead(now)  # demand and so makes room sooner
        return None

    def _read_ahead(self, now: float) -> SpeechJob | None:
        ahead = [
            j
            for j in self.live()
            if j.admitted
            and j.units
            and not j.cancelled
            and j.in_flight is None
            and j.sink.buffered_seconds() < READ_AHEAD_S
        ]
        return self._first(ahead, now) if ahead else None

    def pick_spare(self, now: float) -> SpeechJob | None:
        """A unit for a spare lane: only while every worker is busy (a unit cannot be
        interrupted), only what cannot wait for them (a playing server about to run dry, a
        new request past its first-audio budget), and only while the model alone is fast
        enough to share the CPU (two units at once run at about half speed each)."""
        busy = sum(1 for j in self.live() if j.in_flight is not None)
        if busy < self.workers or self.estimate.speed() < SPARE_MIN_SPEED:
            return None
        candidates = [j for j in self.live() if self.eligible(j)]
        urgent = self._urgent(candidates)
        if urgent:
            return self._first(urgent, now)
        waiting = [j for j in candidates if not j.admitted]
        if waiting:
            first = self._first_waiting(waiting, now)
            if self.deadline(first, now) <= now and self.has_room(first):
                return first
        return None

    def _urgent(self, jobs: list[SpeechJob]) -> list[SpeechJob]:
        """Discord's admitted jobs playing with less than `low_water_s` left (a service
        stream's unread audio says when its client has enough, not when it runs dry)."""
        return [
            j
            for j in jobs
            if j.admitted
            and j.from_discord
            and j.sink.started
            and j.sink.buffered_seconds() < self.low_water_s
        ]

    def _first(self, jobs: list[SpeechJob], now: float) -> SpeechJob:
        """Discord's jobs first, then by deadline: a service stream whose client takes its
        audio as it comes has nothing unread, which is no deadline (see `ServiceSink`)."""
        return min(jobs, key=lambda j: (not j.from_discord, self.deadline(j, now), j.requested_at))

    def _first_waiting(self, jobs: list[SpeechJob], now: float) -> SpeechJob:
        """The next job to admit: Discord's before the speech service's, then by deadline."""
        return min(jobs, key=lambda j: (not j.from_discord, self.deadline(j, now), j.requested_at))

    def service_waiting(self) -> int:
        """The speech service's streams waiting for room (its queue, which it bounds)."""
        return sum(
            1 for j in self.live() if not j.from_discord and not j.admitted and not j.cancelled
        )

    def wake_in(self) -> float:
        """How long until a waiting job's buffer falls under `ahead_s` (capped at 0.1 s, which
        also re-checks room for new jobs as playing ones run out of text)."""
        waiting = [
            j.sink.buffered_seconds() - self.ahead_s + 0.01
            for j in self.jobs
            if j.units and not j.cancelled and j.in_flight is None
        ]
        return min([0.1, *[w for w in waiting if w > 0]])

    def take_unit(self, job: SpeechJob, spare: bool = False) -> str:
        """The job's next unit, cut shorter when other servers' buffers are low (and on a
        spare lane, which should be free again soon)."""
        text = job.units.popleft()
        if self.capacity is not None and not job.background:
            # A batch gives the job a row of its own: the whole message goes as one stream,
            # which the batch prefills chunk by chunk. Units would only add a gap at each
            # boundary, where the next unit waits for its prompt with the buffer nearly empty.
            text = model_text(" ".join([text, *job.units]))
            job.units.clear()
            return text
        limit = self.unit_limit(job)
        if job.background:
            limit = min(limit or BACKGROUND_UNIT_CHARS, BACKGROUND_UNIT_CHARS)
        if spare:
            limit = min(limit or FIRST_UNIT_CHARS, FIRST_UNIT_CHARS)
        if limit is not None and len(text) > limit:
            head, rest = cut_text(text, limit)
            if rest:
                job.units.appendleft(rest)
            text = head
        return text
