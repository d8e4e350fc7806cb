"""The deadline scheduler with a fake clock and a fake synthesizer: fast and deterministic."""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from typing import Any

import numpy as np
import pytest
import torch

from bench.fifo import FifoScheduler
from bot.playback.stats import BotStats
from bot.synthesis.clip import read_file
from bot.synthesis.engine import state_nbytes
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_errors import StreamRefused
from bot.synthesis.scheduler import BATCH_PREBUFFER_S, DeadlineScheduler
from bot.synthesis.speech_jobs import UNIT_CHARS, SpeechJob, split_units
from bot.synthesis.tempo import Tempo
from bot.synthesis.unit_choice import KEPT_ROW_S
from tests.conftest import TinyModel, engine_settings

RATE = 24_000


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeSink:
    """A playback buffer that drains in real time on the fake clock once started."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.fed_s = 0.0
        self.started_at: float | None = None

    @property
    def started(self) -> bool:
        return self.started_at is not None

    def buffered_seconds(self) -> float:
        if self.started_at is None:
            return self.fed_s
        return max(0.0, self.fed_s - (self.clock() - self.started_at))

    def feed(self, chunk: np.ndarray) -> None:
        self.fed_s += len(chunk) / RATE
        if self.started_at is None:
            self.started_at = self.clock()

    def prebuffer(self, seconds: float) -> None:
        pass


class FakeStream:
    """Each unit yields one chunk of `audio_s`, after `synth_s` of fake clock time."""

    paced_seconds = 0.0  # never held back by a batch

    def __init__(
        self, log: list[str], clock: FakeClock, text: str, synth_s: float, audio_s: float
    ) -> None:
        self.log, self.clock, self.text = log, clock, text
        self.synth_s, self.audio_s = synth_s, audio_s
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    async def _chunks(self):
        await asyncio.sleep(0)
        if self.cancelled:
            return
        self.clock.now += self.synth_s
        self.log.append(self.text)
        yield np.zeros(int(self.audio_s * RATE), dtype=np.float32)

    def __aiter__(self):
        return self._chunks()


def make_scheduler(
    clock: FakeClock,
    log: list[str],
    policy: str = "deadline",
    synth_s: float = 0.5,
    audio_s: float = 2.0,
    max_load: float | None = 100.0,
) -> DeadlineScheduler:
    kind = FifoScheduler if policy == "fifo" else DeadlineScheduler
    return kind(
        lambda text, voice: FakeStream(log, clock, text, synth_s, audio_s),
        clock=clock,
        ahead_s=3.0,
        first_audio_budget_s=0.5,
        low_water_s=1.0,
        max_load=max_load,
    )


def job(clock: FakeClock, key: str, units: int, admitted: bool = False) -> SpeechJob:
    texts = collections.deque(f"{key}{i}" for i in range(units))
    return SpeechJob(texts, None, FakeSink(clock), clock(), key, admitted=admitted)


def test_units_start_short_and_keep_every_word() -> None:
    text = (
        "Well, this is the first sentence of a fairly long message, and it goes on for a while. "
        "Short one. " + "A very long sentence without any full stop, " * 8 + "the end."
    )
    units = split_units(text)
    assert units[0] == "Well, this is the first sentence of a fairly long message,"
    assert all(0 < len(u) <= 180 for u in units)
    assert " ".join(units).split() == text.split()
    assert split_units("Hi.") == ["Hi."]
    assert split_units("   ") == []
    assert split_units("x" * 400)[0] == "x" * 60  # no space at all: cut anyway


def test_earliest_deadline_first() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [])
    low, high = job(clock, "low", 3, admitted=True), job(clock, "high", 3, admitted=True)
    new = job(clock, "new", 3)
    for j, buffered in ((low, 0.3), (high, 2.5)):
        j.sink.feed(np.zeros(int(buffered * RATE), np.float32))  # playing since now
        scheduler.jobs.append(j)
    assert scheduler.choice.pick(clock()) is low  # runs dry in 0.3 s
    scheduler.jobs.append(new)  # due at arrival + 0.5 s
    assert scheduler.choice.pick(clock()) is low  # 0.3 s < 0.5 s
    clock.now += 0.2  # low now has 0.1 s, new is due in 0.3 s
    assert scheduler.choice.pick(clock()) is low
    low.sink.feed(np.zeros(RATE, np.float32))  # low refilled to 1.1 s
    assert scheduler.choice.pick(clock()) is new
    new.in_flight = object()  # type: ignore[assignment]
    assert scheduler.choice.pick(clock()) is low
    low.in_flight = object()  # type: ignore[assignment]
    assert scheduler.choice.pick(clock()) is high


def test_enough_buffered_waits_and_says_when_to_wake() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [])
    full = job(clock, "full", 5)
    full.sink.feed(np.zeros(int(3.5 * RATE), np.float32))
    scheduler.jobs.append(full)
    assert scheduler.choice.pick(clock()) is None
    assert scheduler.choice.wake_in() == pytest.approx(0.1)  # capped: 0.51 s away
    clock.now += 0.45
    assert scheduler.choice.wake_in() == pytest.approx(0.06)
    clock.now += 0.06
    assert scheduler.choice.pick(clock()) is full


async def test_a_new_request_waits_at_most_one_unit() -> None:
    clock, log = FakeClock(), []
    scheduler = make_scheduler(clock, log)
    scheduler.start()
    try:
        long = job(clock, "A", 30)
        scheduler.submit(long)
        while len(log) < 3:  # A builds up its buffer; playback time passes
            clock.now += 0.1
            await asyncio.sleep(0.005)
        short = job(clock, "B", 2)
        scheduler.submit(short)
        while not short.done.is_set():
            clock.now += 0.1
            await asyncio.sleep(0.005)
        first_b = log.index("B0")
        assert first_b <= 4  # at most one more unit of A (the one in flight) came first
        assert "A29" not in log
        assert long.sink.buffered_seconds() > 0  # and A never ran dry meanwhile
    finally:
        await scheduler.close()


async def test_fifo_baseline_makes_the_short_request_wait_for_the_long_one() -> None:
    clock, log = FakeClock(), []
    scheduler = make_scheduler(clock, log, policy="fifo")
    scheduler.start()
    try:
        long = SpeechJob.for_text("word " * 100, None, FakeSink(clock), clock(), "A")
        scheduler.submit(long)
        await asyncio.sleep(0)
        short = job(clock, "B", 1)
        scheduler.submit(short)
        await asyncio.wait_for(short.done.wait(), 5)
        assert log[0].startswith("word") and log[1] == "B0"
    finally:
        await scheduler.close()


async def test_cancel_stops_the_unit_in_flight_and_drops_the_rest() -> None:
    clock, log = FakeClock(), []
    scheduler = make_scheduler(clock, log)
    streams: list[FakeStream] = []

    def synthesize(text: str, voice: str | None) -> FakeStream:
        stream = FakeStream(log, clock, text, 0.5, 2.0)
        streams.append(stream)
        return stream

    scheduler._synthesize = synthesize
    victim = job(clock, "A", 10)
    scheduler.submit(victim)
    scheduler.start()
    try:
        while not streams:
            await asyncio.sleep(0)
        scheduler.cancel(victim)
        assert streams[0].cancelled and not victim.units
        await asyncio.wait_for(victim.done.wait(), 1)
        assert victim not in scheduler.jobs and victim.cancelled
        assert len(log) <= 1
        other = job(clock, "B", 1)  # the worker is free for others at once
        scheduler.submit(other)
        await asyncio.wait_for(other.done.wait(), 1)
    finally:
        await scheduler.close()


async def test_many_servers_share_fairly_without_starving() -> None:
    clock, log = FakeClock(), []
    scheduler = make_scheduler(clock, log, synth_s=0.25, audio_s=2.0)
    scheduler.start()
    try:
        jobs = [job(clock, key, 8) for key in "ABCD"]
        for j in jobs:
            scheduler.submit(j)
        while not all(j.done.is_set() for j in jobs):  # playback time passes
            clock.now += 0.1
            await asyncio.sleep(0.002)
        first_units = [log.index(f"{key}0") for key in "ABCD"]
        assert first_units == [0, 1, 2, 3]  # every server starts before anyone's second unit
        for key in "ABCD":  # and everyone progresses: no server's units all come last
            assert log.index(f"{key}4") < len(log) - 4
    finally:
        await scheduler.close()


async def test_idle_lanes_look_for_work_one_at_a_time() -> None:
    """A batch of 16 rows in 8 pipelines has 128 live lanes: at a change, the idle ones look
    for work one after another until one finds none, not all of them at once."""
    clock, log = FakeClock(), []
    scheduler = DeadlineScheduler(
        lambda text, voice: FakeStream(log, clock, text, 0.25, 2.0),
        clock=clock,
        workers=64,
        ahead_s=3.0,
        max_load=100.0,
    )
    looks: list[int] = []
    note_room = scheduler.choice.note_room
    scheduler.choice.note_room = lambda: looks.append(1) or note_room()  # type: ignore[method-assign]
    scheduler.start()
    try:
        await asyncio.sleep(0.01)  # every lane started and idle
        looks.clear()
        jobs = [job(clock, key, 1) for key in "AB"]
        for j in jobs:
            scheduler.submit(j)
        async with asyncio.timeout(5):
            while not all(j.done.is_set() for j in jobs):
                await asyncio.sleep(0.002)
        assert log == ["A0", "B0"]
        # each job: a look that finds it, and the next lane's that finds nothing more; a few
        # more as the units end, and one each 0.1 s the test takes: all 64 lanes looking at
        # every change make 64 a change
        assert len(looks) < 32, len(looks)
    finally:
        await scheduler.close()


def text_job(
    clock: FakeClock,
    key: str,
    units: int,
    chars: int,
    buffered_s: float = 0.0,
    admitted: bool = False,
) -> SpeechJob:
    made = SpeechJob(collections.deque(["x" * chars] * units), None, FakeSink(clock), clock(), key)
    made.admitted = admitted
    if buffered_s:
        made.sink.feed(np.zeros(int(buffered_s * RATE), np.float32))  # playing since now
    return made


def test_a_fast_speaking_rate_counts_in_the_batchs_room() -> None:
    """The batch steps every row at once: a row spoken at 2x needs every step in half the
    time, so the capacity is asked at the fastest admitted rate, the new job's included."""
    clock = FakeClock()
    asked: list[float] = []

    def capacity(rate: float = 1.0) -> int:
        asked.append(rate)
        return 3 if rate <= 1.0 else 2  # the live step times: 3 rows at 1x, 2 at 2x

    scheduler = DeadlineScheduler(
        lambda text, voice, **_: FakeStream([], clock, text, 0.5, 2.0),
        clock=clock,
        ahead_s=3.0,
        capacity=capacity,
    )
    first = text_job(clock, "first", 3, 50, buffered_s=1.0, admitted=True)
    second = text_job(clock, "second", 3, 50, buffered_s=1.0, admitted=True)
    scheduler.jobs += [first, second]
    plain, fast = text_job(clock, "plain", 3, 50), text_job(clock, "fast", 3, 50)
    fast.tempo = Tempo(2.0)
    assert scheduler.choice.has_room(plain) and asked[-1] == 1.0
    assert not scheduler.choice.has_room(fast) and asked[-1] == 2.0  # its row would break up
    assert not scheduler.choice.at_capacity()
    second.tempo = Tempo(1.5)  # an admitted row speaks faster: the room shrinks for all
    assert not scheduler.choice.has_room(plain) and asked[-1] == 1.5
    assert scheduler.choice.at_capacity()
    slow = text_job(clock, "slow", 3, 50)
    slow.tempo = Tempo(0.5)  # slower than 1x still takes a frame a step
    second.tempo = None
    assert scheduler.choice.has_room(slow) and asked[-1] == 1.0


async def test_the_words_after_a_sound_keep_their_messages_row() -> None:
    """At capacity, a message with a sound in it is a job per stretch of words: the row its
    words before the sound had passes to the words after it, not to a server waiting for room
    (which would leave the message silent mid-way), and is let go when the message ends first
    or the next words never come."""
    clock = FakeClock()
    scheduler = DeadlineScheduler(
        lambda text, voice, **_: FakeStream([], clock, text, 0.5, 2.0),
        clock=clock,
        ahead_s=3.0,
        capacity=lambda rate=1.0: 1,
    )
    before = text_job(clock, "A", 1, 30, admitted=True)  # A's words before its sound
    before.keeps_row = True
    waiting = text_job(clock, "B", 2, 30)  # B asked after A began: it waits for room
    scheduler.jobs += [before, waiting]
    assert not scheduler.choice.has_room(waiting)
    await scheduler._run_unit(before, spare=False)  # A's first words are made
    assert before.done.is_set() and not scheduler.choice.has_room(waiting)  # the row is still A's
    after = text_job(clock, "A", 1, 30, buffered_s=2.0)  # A's words after the sound
    after.kept_row = True
    scheduler.submit(after)
    assert after.admitted and scheduler.choice.pick(clock()) is after
    await scheduler._run_unit(after, spare=False)
    assert scheduler.choice.has_room(waiting)  # A's message is made: B's turn

    skipped = text_job(clock, "C", 1, 30, admitted=True)
    skipped.keeps_row = True
    scheduler.jobs.append(skipped)
    await scheduler._run_unit(skipped, spare=False)
    assert not scheduler.choice.has_room(waiting)
    scheduler.release_row("C")  # its message was skipped before the words after its sound
    assert scheduler.choice.has_room(waiting)

    lost = text_job(clock, "D", 1, 30, admitted=True)
    lost.keeps_row = True
    scheduler.jobs.append(lost)
    await scheduler._run_unit(lost, spare=False)
    assert not scheduler.choice.has_room(waiting)
    clock.now += KEPT_ROW_S + 0.1  # its next words never came: the way out
    assert scheduler.choice.has_room(waiting)


def test_without_a_batch_a_jobs_demand_counts_its_speaking_rate() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [], max_load=0.9)  # 2x real time, 0.07 s per char
    playing = text_job(clock, "playing", 10, 100, buffered_s=2.0, admitted=True)
    scheduler.jobs.append(playing)
    assert scheduler.choice.demand(playing) == pytest.approx(70 / (2 * 72))  # 70 s in 72 s
    playing.tempo = Tempo(2.0)
    assert scheduler.choice.demand(playing) == pytest.approx(70 / (2 * 37))  # played in 2 + 35 s


def test_a_new_request_starts_only_while_the_model_has_room_for_it() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [], max_load=0.9)  # 2x real time, 0.07 s per char
    playing = text_job(clock, "playing", 10, 100, buffered_s=2.0, admitted=True)
    scheduler.jobs.append(playing)
    assert scheduler.choice.demand(playing) == pytest.approx(70 / (2 * 72))  # 70 s left, 2 s ahead
    long = text_job(clock, "long", 10, 100)
    scheduler.jobs.append(long)
    assert scheduler.choice.pick(clock()) is playing  # 0.49 + 0.50 > 0.9: the new one waits
    assert scheduler.choice.held_back() == 1
    clock.now += 1.0
    short = text_job(clock, "short", 1, 8)  # a short line fits next to the long reading
    scheduler.jobs.append(short)
    scheduler.jobs.remove(long)
    assert scheduler.choice.pick(clock()) is short
    scheduler.jobs.append(long)
    playing.units.clear()  # its text is all synthesized: it only plays now
    assert scheduler.choice.load() == 0.0
    assert scheduler.choice.pick(clock()) is long  # the oldest waiting job comes first


def test_with_a_batch_a_new_request_starts_only_while_a_row_stays_real_time() -> None:
    """Batched: room is a row of the live capacity, and the whole message is one stream."""
    clock = FakeClock()
    capacity = [2]
    scheduler = DeadlineScheduler(
        lambda text, voice, **_: FakeStream([], clock, text, 0.5, 2.0),
        clock=clock,
        ahead_s=3.0,
        capacity=lambda rate=1.0: capacity[0],
    )
    first = text_job(clock, "first", 3, 50, buffered_s=1.0, admitted=True)
    second = text_job(clock, "second", 3, 50, buffered_s=1.0, admitted=True)
    scheduler.jobs += [first, second]
    clock.now += 1.0
    waiting = text_job(clock, "waiting", 3, 50)
    scheduler.jobs.append(waiting)
    assert not scheduler.choice.has_room(waiting)  # two rows in use, two fit
    assert scheduler.choice.held_back() == 1
    assert scheduler.choice.at_capacity()  # a member asking now is told their speech starts later
    capacity[0] = 3  # the live step times say a third row stays in real time
    assert scheduler.choice.has_room(waiting)
    assert scheduler.choice.take_unit(waiting) == " ".join(["x" * 50] * 3)  # one stream, all of it
    assert not waiting.units
    capacity[0] = 2
    first.units.clear()  # all synthesized: it only plays now, its row is free
    assert scheduler.choice.has_room(text_job(clock, "next", 1, 10))


async def test_a_batched_unit_tells_the_batch_how_far_ahead_its_server_is() -> None:
    """The batch paces its steps by each row's slack: the audio its server has ahead, or none
    while messages wait for room (the admitted ones then read ahead to make room sooner).
    Background work has no slack: it is wanted as fast as the batch runs."""
    clock, options = FakeClock(), {}

    def stream(text: str, voice: str | None, **given: Any) -> FakeStream:
        options[text[0]] = given
        return FakeStream([], clock, text, 0.1, 2.0)

    capacity = [2]
    scheduler = DeadlineScheduler(
        stream, clock=clock, ahead_s=3.0, capacity=lambda rate=1.0: capacity[0], workers=2
    )
    first = text_job(clock, "first", 3, 50, buffered_s=1.5, admitted=True)
    second = text_job(clock, "second", 3, 50, buffered_s=1.0, admitted=True)
    for j in (first, second):
        scheduler.submit(j)
    assert scheduler.choice.slack(first) == pytest.approx(1.5)
    waiting = text_job(clock, "waiting", 3, 50)
    scheduler.submit(waiting)  # two rows in use, two fit: it waits for room
    assert scheduler.choice.slack(first) == 0.0
    file = SpeechJob(collections.deque(["y" * 20]), None, FakeSink(clock), clock(), "file")
    file.owner = (1, 2)  # a member's file: background work
    scheduler.submit(file)
    await scheduler._run_unit(file, spare=False)
    capacity[0] = 3  # a third row stays real-time: the unit's end finds room
    await scheduler._run_unit(first, spare=False)
    # and its unit's audio
    assert scheduler.choice.slack(first) == first.sink.buffered_seconds() > 3.0
    assert "slack" not in options["y"]
    assert options["x"]["slack"]() == scheduler.choice.slack(first)


def test_while_messages_wait_for_room_the_admitted_ones_read_further_ahead() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [], max_load=0.9)
    playing = text_job(clock, "playing", 10, 100, buffered_s=8.0, admitted=True)
    scheduler.jobs.append(playing)
    assert scheduler.choice.pick(clock()) is None  # 8 s ahead is plenty while nobody waits
    waiting = text_job(clock, "waiting", 10, 100)
    scheduler.jobs.append(waiting)
    demand_before = scheduler.choice.demand(playing)
    assert scheduler.choice.pick(clock()) is playing  # no room: read ahead instead of idling
    playing.sink.feed(np.zeros(12 * RATE, np.float32))  # 20 s ahead: its share shrinks
    assert scheduler.choice.demand(playing) < demand_before
    assert scheduler.choice.pick(clock()) is waiting  # and that made room for the waiting one
    scheduler.jobs.remove(waiting)
    assert scheduler.choice.pick(clock()) is None  # 20 s ahead at most


def test_waiting_jobs_start_in_arrival_order_across_servers() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [])
    older = text_job(clock, "B", 2, 30)
    clock.now += 1.0
    chained = text_job(clock, "A", 2, 30, buffered_s=0.5)  # A's next message, behind its audio
    scheduler.jobs += [chained, older]
    assert scheduler.choice.pick(clock()) is older
    older.admitted = True
    older.in_flight = object()  # type: ignore[assignment]
    assert scheduler.choice.pick(clock()) is chained


def test_a_busy_servers_next_message_waits_from_when_its_channel_is_free() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [], max_load=0.9)
    playing = text_job(clock, "playing", 10, 100, buffered_s=2.0, admitted=True)
    busy_next = text_job(clock, "A", 10, 100)  # asked long ago, behind A's long reading
    clock.now += 30.0
    busy_next.free_at = clock()  # A's previous message has just ended
    quiet = text_job(clock, "B", 10, 100)
    quiet.requested_at -= 1.0  # B has waited a second, in silence
    scheduler.jobs += [playing, busy_next, quiet]
    assert scheduler.choice.pick(clock()) is playing  # no room for either yet
    playing.units.clear()
    assert scheduler.choice.pick(clock()) is quiet  # B's channel has been free longer
    quiet.admitted = True
    quiet.in_flight = object()  # type: ignore[assignment]
    clock.now += 2.0
    newer = text_job(clock, "C", 10, 100)  # A does not starve behind newer requests
    scheduler.jobs.append(newer)
    quiet.in_flight = None
    quiet.units.clear()
    assert scheduler.choice.pick(clock()) is busy_next


def test_units_are_cut_shorter_while_another_server_runs_low() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [])
    sentence = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    reader = SpeechJob(collections.deque([sentence]), None, FakeSink(clock), clock(), "R")
    assert scheduler.choice.unit_limit(reader) is None  # alone: whole sentences
    other = text_job(clock, "other", 5, 100, buffered_s=1.5, admitted=True)
    scheduler.jobs += [reader, other]
    # 21 chars for 0.75 s of work; 2 s of speech at least
    assert scheduler.choice.unit_limit(reader) == 28
    first = scheduler.choice.take_unit(reader)
    assert len(first) <= 28 and f"{first} {reader.units[0]}" == sentence
    other.sink.feed(np.zeros(10 * RATE, np.float32))  # the other has 11.5 s ahead now
    assert scheduler.choice.unit_limit(reader) == int(0.5 * 11.5 * 2.0 / 0.07)


def test_a_spare_lane_takes_only_what_cannot_wait_while_the_worker_is_busy() -> None:
    clock = FakeClock()
    scheduler = DeadlineScheduler(
        lambda text, voice: None,  # type: ignore[arg-type,return-value]
        clock=clock,
        low_water_s=1.0,
        spare_lanes=1,
    )
    long = text_job(clock, "long", 5, 100, buffered_s=8.0, admitted=True)
    low = text_job(clock, "low", 5, 100, buffered_s=2.0, admitted=True)
    scheduler.jobs += [long, low]
    assert scheduler.choice.pick_spare(clock()) is None  # the worker is free: it takes the work
    long.in_flight = object()  # type: ignore[assignment]
    assert scheduler.choice.pick_spare(clock()) is None  # low can wait for the worker
    clock.now += 1.5  # low has 0.5 s left and the worker is still busy
    assert scheduler.choice.pick_spare(clock()) is low
    # short: the lane is free again soon
    assert len(scheduler.choice.take_unit(low, spare=True)) <= 60
    low.units.clear()
    fresh = text_job(clock, "fresh", 1, 30)
    scheduler.jobs.append(fresh)
    assert scheduler.choice.pick_spare(clock()) is None  # within its first-audio budget
    clock.now += 0.6
    assert scheduler.choice.pick_spare(clock()) is fresh
    for _ in range(30):  # a slow model: two units at once would fall far behind real time
        scheduler.estimate.record_unit(chars=50, audio_s=2.5, busy_s=2.0, complete=True)
    assert scheduler.choice.pick_spare(clock()) is None
    fifo = FifoScheduler(lambda text, voice: None, spare_lanes=1)  # type: ignore[arg-type,return-value]
    assert fifo.spare_lanes == 0  # the baseline has none


def test_speed_and_speech_rate_are_measured_from_recent_units() -> None:
    scheduler = DeadlineScheduler(lambda text, voice: None, workers=2)  # type: ignore[arg-type,return-value]
    assert scheduler.choice.max_load == pytest.approx(1.8)
    assert (
        scheduler.estimate.speed() == 2.0 and scheduler.estimate.seconds_per_char() == 0.07
    )  # until measured
    scheduler.estimate.record_unit(chars=50, audio_s=10.0, busy_s=4.0, complete=True)
    assert scheduler.estimate.speed() == pytest.approx(2.5)
    assert scheduler.estimate.seconds_per_char() == pytest.approx(0.2)
    scheduler.estimate.record_unit(chars=100, audio_s=1.0, busy_s=1.0, complete=False)  # cancelled
    assert scheduler.estimate.seconds_per_char() == pytest.approx(
        0.2
    )  # a cut-off unit says nothing
    alone = scheduler.estimate.speed()
    scheduler.estimate.record_unit(chars=50, audio_s=1.0, busy_s=1.0, complete=True, crowded=True)
    assert scheduler.estimate.speed() == alone  # it shared the CPU with a spare lane
    for _ in range(60):  # a slower voice for a while: the old figures fade away
        scheduler.estimate.record_unit(chars=50, audio_s=5.0, busy_s=5.0, complete=True)
    assert scheduler.estimate.speed() == pytest.approx(1.0, rel=0.01)
    assert scheduler.estimate.seconds_per_char() == pytest.approx(0.1, rel=0.01)
    assert scheduler.estimate.audio_seconds == 312.0  # the totals (for /botstats) keep everything


def test_the_bot_says_when_messages_wait_for_room() -> None:
    clock = FakeClock()
    scheduler = make_scheduler(clock, [], max_load=0.9)
    stats = BotStats(scheduler, clock=clock)
    assert stats.snapshot(0).status_line() == "Ready to speak"
    scheduler.jobs.append(text_job(clock, "playing", 10, 100, buffered_s=2.0, admitted=True))
    assert stats.snapshot(1).status_line() == "Speaking in 1 server"
    scheduler.jobs.append(text_job(clock, "waiting", 10, 100))
    snapshot = stats.snapshot(2)
    assert snapshot.waiting_for_room == 1
    assert snapshot.status_line() == "At capacity: speech may start late"


# ---- background work has its own thread: live prefill never waits behind it ------------------
class _FirstAudio:
    """A live job's playback buffer that notes when its first audio came."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.arrived = asyncio.Event()

    @property
    def started(self) -> bool:
        return self.first is not None

    def buffered_seconds(self) -> float:
        return 0.0

    def feed(self, chunk: np.ndarray) -> None:
        if self.first is None:
            self.first = time.monotonic()
            self.arrived.set()

    def prebuffer(self, seconds: float) -> None:
        pass


async def _first_audio(scheduler: DeadlineScheduler) -> tuple[float, float]:
    """(when a live /say was asked, when its first audio came)."""
    sink = _FirstAudio()
    asked = time.monotonic()
    job = SpeechJob.for_text("Hello there.", None, sink, asked)
    scheduler.submit(job)
    await asyncio.wait_for(sink.arrived.wait(), 30)
    await asyncio.wait_for(job.done.wait(), 30)
    assert sink.first is not None
    return asked, sink.first


@pytest.mark.slow
async def test_live_speech_never_waits_behind_clones(tiny_model: TinyModel) -> None:
    """Batched, two clones in flight: a live unit's prefill still starts at once, on a thread
    background work never takes, and its first audio comes before either clone is done."""
    settings = engine_settings(tiny_model.config, tiny_model.clip, TTS_WORKERS="1")
    engine = await load_engine(settings, batch=2)
    scheduler = DeadlineScheduler(
        engine.stream,
        workers=engine.workers,
        spare_lanes=engine.spare_lanes,
        run_call=engine.call,
    )
    scheduler.start()
    clip = torch.from_numpy(np.tile(read_file(tiny_model.clip), 2))[None, :]  # 6 s: ~1 s of work
    clone_threads: list[str] = []
    clones_done: list[float] = []
    clones: list[asyncio.Task[int]] = []

    def clone(model: object) -> int:
        clone_threads.append(threading.current_thread().name)
        state = model.get_state_for_audio_prompt(clip)  # type: ignore[attr-defined]
        clones_done.append(time.monotonic())
        return state_nbytes(state)

    try:
        await _first_audio(scheduler)  # warm up
        asked, first = await _first_audio(scheduler)
        alone = first - asked
        clones += [
            asyncio.create_task(scheduler.background_call(clone, (user, 10))) for user in (1, 2)
        ]
        for _ in range(500):  # a clone is running
            if clone_threads:
                break
            await asyncio.sleep(0.01)
        asked, first = await _first_audio(scheduler)
        behind = first - asked
        print(f"first audio: {alone:.3f} s alone, {behind:.3f} s with two clones waiting")
        assert clones_done == [] or first < min(clones_done), "live speech waited for a clone"
        assert await asyncio.gather(*clones)
        assert behind < max(10 * alone, 0.5)
        assert all(name.startswith("tts-background") for name in clone_threads), clone_threads
    finally:
        await scheduler.close()
        await asyncio.gather(*clones, return_exceptions=True)
        await engine.close()


class _PrebufferSink(FakeSink):
    """Records the prebuffer asked for."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.prebuffered = 0.0

    def prebuffer(self, seconds: float) -> None:
        self.prebuffered = max(self.prebuffered, seconds)


async def test_messages_starting_together_on_an_idle_batch_all_wait_for_a_prebuffer() -> None:
    """The first of two messages asked at once finds the batch idle; the second's prompt is
    prefilled between its first steps, so it too waits for `BATCH_PREBUFFER_S` of audio
    (it used to start on 60 ms, and its first second broke up)."""
    clock, log = FakeClock(), []
    scheduler = DeadlineScheduler(
        lambda text, voice, **_: FakeStream(log, clock, text, 0.1, 2.0),
        clock=clock,
        ahead_s=3.0,
        capacity=lambda rate=1.0: 4,
        workers=4,
    )
    jobs = [
        SpeechJob(collections.deque([f"{key}0"]), None, _PrebufferSink(clock), clock(), key)
        for key in "AB"
    ]
    for j in jobs:
        scheduler.submit(j)
    scheduler.start()
    try:
        await asyncio.wait_for(asyncio.gather(*(j.done.wait() for j in jobs)), 5)
    finally:
        await scheduler.close()
    assert [j.sink.prebuffered for j in jobs] == [BATCH_PREBUFFER_S] * 2


def test_the_speech_services_streams_come_after_discord_and_leave_it_rows() -> None:
    """Discord first: a service stream ("api", "wyoming") waiting for room goes after every
    Discord message waiting, however long it waited, and is admitted only while
    `reserved_rows` rows stay free for Discord; Discord's messages take those rows."""
    clock = FakeClock()
    scheduler = DeadlineScheduler(
        lambda text, voice, **_: FakeStream([], clock, text, 0.5, 2.0),
        clock=clock,
        ahead_s=3.0,
        capacity=lambda rate=1.0, extra=0: 3,
    )
    scheduler.choice.reserved_rows = 1
    api = text_job(clock, "api", 3, 50)
    api.source = "api"
    clock.now += 1.0
    discord = text_job(clock, "discord", 3, 50)  # asked a second after the stream
    scheduler.jobs += [api, discord]
    assert scheduler.choice.pick(clock()) is discord  # the older stream waits behind it
    discord.admitted = True
    assert scheduler.choice.pick(clock()) is api  # 1 row in use + this one + 1 kept: fits in 3
    api.admitted = True
    second = text_job(clock, "api 2", 3, 50)
    second.source = "wyoming"
    other = text_job(clock, "discord 2", 3, 50)
    scheduler.jobs += [second, other]
    assert not scheduler.choice.has_room(second)  # it would take the row kept for Discord
    assert scheduler.choice.has_room(other)  # which Discord's next message takes
    assert scheduler.choice.service_waiting() == 1
    scheduler.choice.reserved_rows = 0  # `serve` alone: no Discord to keep rows for
    other.cancelled = True
    assert scheduler.choice.has_room(second)


def test_the_row_kept_for_discord_stays_free_while_the_batch_ramps_up() -> None:
    """The kept row is counted beyond the sizes seen live (`capacity(rate, extra)`), so while
    the batch ramps up the streams' capacity is one row more than Discord's own. Discord's
    message counts that row as its own: after a burst of streams has taken every row it may,
    the next Discord message still has room and the bot does not say it is at capacity.
    Before, Discord counted without it: the burst had taken the kept row too (issue 59)."""
    clock = FakeClock()
    scheduler = DeadlineScheduler(
        lambda text, voice, **_: FakeStream([], clock, text, 0.5, 2.0),
        clock=clock,
        ahead_s=3.0,
        capacity=lambda rate=1.0, extra=0: 3 + extra,  # the ramp's limit, and the kept rows
    )
    scheduler.choice.reserved_rows = 1
    speaking = text_job(clock, "discord", 3, 50, admitted=True)
    burst = [text_job(clock, f"api {n}", 3, 50) for n in range(4)]
    for stream in burst:
        stream.source = "api"
    scheduler.jobs += [speaking, *burst]
    for stream in burst[:2]:  # two streams beside the speaking server: 3 rows and 1 kept
        assert scheduler.choice.pick(clock()) is stream
        stream.admitted = True
    assert not scheduler.choice.has_room(burst[2])
    other = text_job(clock, "discord 2", 3, 50)
    scheduler.jobs.append(other)
    assert scheduler.choice.has_room(other) and not scheduler.choice.at_capacity()
    assert scheduler.choice.pick(clock()) is other


async def test_a_model_call_is_background_work_of_its_own_kind() -> None:
    """A clone or rebuild is a `ModelCall`, not a speech job: it waits behind live speech on
    the background lane, in the order asked; one whose asker went away before it started never
    runs, and one running ends first (a model call cannot be interrupted)."""
    clock = FakeClock()
    ran: list[str] = []
    release = asyncio.Event()

    async def run_call(fn: Any, **options: Any) -> Any:
        if fn(None) == "slow":
            await release.wait()
        return ran[-1]

    def call(name: str) -> Any:
        return lambda model: ran.append(name) or name

    scheduler = DeadlineScheduler(
        lambda text, voice, **o: FakeStream([], clock, text, 0.1, 1.0),
        clock=clock,
        run_call=run_call,
        max_load=100.0,
    )
    live = text_job(clock, "live", 1, 30)
    scheduler.submit(live)
    first = asyncio.create_task(scheduler.background_call(call("slow"), (1, 10)))
    second = asyncio.create_task(scheduler.background_call(call("never"), (2, 10)))
    await asyncio.sleep(0)
    assert scheduler.jobs == [live] and len(scheduler.calls) == 2  # apart from speech
    assert scheduler.choice.pick(clock()) is live  # live speech first
    assert scheduler.choice.pick_background() is scheduler.calls[0]  # the oldest call
    assert scheduler.background_waiting() == 2
    scheduler.start()
    try:
        for _ in range(100):
            if ran:
                break
            await asyncio.sleep(0)
        assert ran == ["slow"] and scheduler.calls[0].running
        second.cancel()  # its asker went away before it started: dropped
        running = scheduler.calls[0]
        scheduler.cancel(running)  # running: it goes on to its end
        await asyncio.sleep(0)
        assert scheduler.calls == [running] and not running.done.is_set()
        release.set()
        with pytest.raises(RuntimeError, match="cancelled"):
            await first
        with pytest.raises(asyncio.CancelledError):
            await second
        assert ran == ["slow"] and scheduler.calls == [] and scheduler.background_waiting() == 0
    finally:
        await scheduler.close()


class _SilentStream:
    """A stream whose end never comes (a worker that never got it): no chunk, ever."""

    paced_seconds = 0.0

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    async def _chunks(self):  # type: ignore[no-untyped-def]
        await asyncio.Event().wait()
        yield np.zeros(0, dtype=np.float32)

    def __aiter__(self):  # type: ignore[no-untyped-def]
        return self._chunks()


async def test_a_unit_that_never_ends_fails_and_frees_its_lane(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The watchdog: one lane, a unit whose stream never says anything again. The job fails
    with the cause after `stall_s`, its stream is stopped, and the lane speaks the next one."""
    clock, log = FakeClock(), []
    lost = _SilentStream()
    streams: list[Any] = [lost]

    def synthesize(text: str, voice: str | None) -> Any:
        return streams.pop(0) if streams else FakeStream(log, clock, text, 0.5, 2.0)

    scheduler = DeadlineScheduler(synthesize, clock=clock, max_load=100.0, stall_s=0.2)
    stuck, later = job(clock, "A", 1), job(clock, "B", 1)
    scheduler.submit(stuck)
    scheduler.start()
    try:
        await asyncio.wait_for(stuck.done.wait(), 5)
        assert isinstance(stuck.error, StreamRefused) and lost.cancelled
        assert "no audio came for 0.2 s" in caplog.text
        scheduler.submit(later)
        await asyncio.wait_for(later.done.wait(), 5)
        assert later.error is None and log == ["B0"]
    finally:
        await scheduler.close()


def test_a_batched_message_without_punctuation_reaches_the_model_with_places_to_cut() -> None:
    """Batched, a message goes to pocket-tts whole, which cuts it only at punctuation: 2,000
    characters of chat with none are given a comma where a unit would be cut (the words all
    there, in order); a message with its own punctuation goes as it is."""
    clock = FakeClock()
    scheduler = DeadlineScheduler(
        lambda text, voice, **_: FakeStream([], clock, text, 0.5, 2.0),
        clock=clock,
        capacity=lambda rate=1.0: 4,
    )
    words = " ".join(f"word{n}" for n in range(300))  # 2,090 characters, no mark
    long = SpeechJob.for_text(words, None, FakeSink(clock), clock(), "long")
    said = scheduler.choice.take_unit(long)
    assert said.replace(",", "").split() == words.split()
    runs = said.split(",")
    assert len(runs) > 10 and max(map(len, runs)) <= UNIT_CHARS + 1, runs
    prose = "Hello there, friend. This one is fine as it is; short clauses, all of them."
    plain = SpeechJob.for_text(prose, None, FakeSink(clock), clock(), "plain")
    assert scheduler.choice.take_unit(plain) == prose
