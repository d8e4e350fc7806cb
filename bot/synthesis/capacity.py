"""How many streams the batch carries in real time: step costs timed at start, then live.

The start-up table (`measure_costs`) times the flow LM and the Mimi decoder alone, one after
the other. Run side by side on their two threads, with prompts prefilled between steps, each
is slower (on our 2-core machine the LM step by about a quarter), so the live figures decide:
`StepCosts` keeps the recent times of one LM step and of one decode at each batch size, and
the prompts' prefill time per row; `capacity()` is the largest number of rows whose steps
all stay within the frame, with a margin. The LM's thread also decodes a share of the rows
after its step when the decoder's thread alone would not keep up (`best_split`).

Sizes not seen live yet are guessed from the start-up table, scaled by how much slower the
live steps ran at the largest size seen (before any, by the slowdown we measured side by
side), and the capacity grows to at most `RAMP` times the largest size seen live (`COLD_ROWS`
before any is seen), so a guess is only ever made a step past a measured size.

Padding: a batch runs at the cheapest size at or above its row count (`padded`; a size not
timed at start costs what the sizes around it suggest), the extra rows masked, since a math
library may run a larger batch faster than a smaller one (MKL's fp32 products did).

The figures behind the constants below are in docs/performance.md ("The batch's margins").
"""

from __future__ import annotations

import collections
import functools
import math
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

# A batch size fits when its typical steps take at most this share of the frame. The rest is
# headroom for the machine slowing down after the rows are in (they are never sent away): a
# small virtual machine or a burstable box runs its busy cores slower after a few seconds.
MARGIN = 0.65
# The slow steps (`slow_step`: all but the slowest 5% of the recent ones) are logged beside the
# typical ones, not admitted on: one slow step costs a frame of the audio buffered ahead, not
# a gap, and admitting on them held the batch far below what it carries.
SLOW_QUANTILE = 0.95
# The rows are split between the two decoders only when one would take more than this share
# of the frame: below MARGIN, so what is left is for the prompts' prefills and the jitter.
SPLIT_BUDGET = 0.54
LIVE_SAMPLES = 8  # live steps at a size before its figure replaces the start-up guess
# Rows admitted before any live figure; then at most `RAMP` times the largest size seen live:
# the start-up table times the model alone, while the bot's rows also cost their prompts, Opus
# encoding and the players. RAMP reaches 12 rows in a few seconds, each size checked live
# before the next; doubling guesses too far, one row at a time is too slow.
COLD_ROWS = 2
RAMP = 1.5  # how far past the largest size seen live a guess may go (2 -> 3 -> 5 -> 8 -> 12)
STALE_S = 30.0  # a live figure not renewed for this long gives way to the scaled guess again
# How long the figures' medians are reused while no live figure arrives: only staleness
# (STALE_S) changes them meanwhile. The scheduler asks for the capacity every time it wakes,
# for every pipeline: computed afresh each time, it kept the event loop's thread busy.
FIGURES_S = 1.0
# Before live figures: how much slower each thread ran beside the other than alone.
SIDE_BY_SIDE = {"lm": 1.25, "decode": 1.05}


@dataclass(frozen=True)
class BatchCost:
    """Measured seconds per step at one batch size: the flow LM and the Mimi decoder."""

    rows: int
    lm_s: float
    decode_s: float

    def period(self, cores: int, decode: Callable[[int], float] | None = None) -> float:
        """How often every row gets its next frame at best (`best_split`); `decode` gives
        the decode time at other sizes (default: this size's, scaled by rows)."""
        per_row = decode or (lambda n: self.decode_s * n / self.rows)
        return best_split(self.lm_s, per_row, self.rows, cores)[0]


def best_split(
    lm_s: float,
    decode: Callable[[int], float],
    rows: int,
    cores: int,
    budget_s: float | None = None,
) -> tuple[float, int]:
    """(seconds per step, rows decoded on the LM's thread) at the best split of the rows.

    On two cores or more the LM's thread and the decoder's run side by side, and the LM's
    thread decodes a share of the rows after its step (the rest go to the decoder's thread),
    so the period is the slower of `lm + decode(share)` and `decode(rows - share)`. With int8
    the LM's step is a fifth of the frame and the decoder alone would hold the batch to its
    own pace (at 8 rows it takes most of the frame); split, both cores decode. On one core
    everything runs one after the other: no split.

    Without `budget_s` the split is the one with the shortest period (what the capacity
    needs). With it, the split that costs the least CPU among those whose period fits the
    budget: two decodes of 2 rows cost more than one of 4, so the rows are split only when
    one decoder would not keep up.
    """
    if cores < 2:
        return lm_s + (decode(rows) if rows else 0.0), 0
    splits = []  # (period, CPU, share)
    for share in range(rows + 1):
        on_lm = lm_s + (decode(share) if share else 0.0)
        on_decoder = decode(rows - share) if rows - share else 0.0
        splits.append((max(on_lm, on_decoder), on_lm + on_decoder, share))
    fitting = [s for s in splits if budget_s is not None and s[0] <= budget_s]
    if fitting:
        period, _, share = min(fitting, key=lambda s: (s[1], s[0]))
    else:
        period, _, share = min(splits, key=lambda s: s[0])
    return period, share


def choose_batch(costs: list[BatchCost], frame_s: float, cores: int) -> int:
    """The largest batch size whose start-up figures fit in the frame (with `MARGIN`): the
    upper bound on rows. Which of them are live at once follows the live figures
    (`StepCosts.capacity`), so a noisy start-up timing no longer fixes the batch."""
    decodes = {c.rows: c.decode_s for c in costs}

    def decode(rows: int) -> float:
        return StepCosts._interpolate(decodes, rows)

    fitting = [c.rows for c in costs if c.period(cores, decode) <= MARGIN * frame_s]
    return max(fitting, default=costs[0].rows)


def slow_step(samples: list[float], quantile: float = SLOW_QUANTILE) -> float:
    """The time all but the slowest `1 - quantile` of `samples` stayed within, at least the
    single slowest left out (so with few samples, the second slowest)."""
    ordered = sorted(samples)
    left_out = max(1, math.ceil((1 - quantile) * len(ordered)))
    return ordered[max(0, len(ordered) - 1 - left_out)]


class Live:
    """Recent timings per batch size, written by one thread and read by others. The typical
    figure is the median of the last `WINDOW`: a mean let a few slow steps (a collection, a
    burst of prompts) hide the steady cost, which took the capacity down to one row. The slow
    figure (`slow_step`) is their spread, for the log (see `SLOW_QUANTILE`)."""

    WINDOW = 31

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        listener: Callable[[int, float], None] | None = None,
    ) -> None:
        """`listener(rows, seconds)` hears each figure added (a worker process's pipeline
        sends them to the process that admits its streams)."""
        self._lock = threading.Lock()
        self._clock = clock
        self._listener = listener
        self._samples: dict[int, collections.deque[float]] = {}
        self._when: dict[int, float] = {}
        self.version = 0  # figures added so far: what was computed from them is still good

    def add(self, rows: int, seconds: float) -> None:
        with self._lock:
            self.version += 1
            now = self._clock()
            samples = self._samples.get(rows)
            if samples is None or now - self._when[rows] > STALE_S:  # stale: start over
                samples = self._samples[rows] = collections.deque(maxlen=self.WINDOW)
            samples.append(seconds)
            self._when[rows] = now
        if self._listener is not None:
            self._listener(rows, seconds)

    def seen(self) -> dict[int, float]:
        """The typical figures with enough samples, renewed within `STALE_S`."""
        with self._lock:
            now = self._clock()
            return {
                n: statistics.median(samples)
                for n, samples in self._samples.items()
                if len(samples) >= LIVE_SAMPLES and now - self._when[n] <= STALE_S
            }

    def get(self, rows: int, slow: bool = False) -> float | None:
        """The typical figure for one size, or with `slow` its slow one (`slow_step`); None:
        too few samples, or stale. Only that size's is computed: the scheduler asks on the
        event loop for each size it tries."""
        with self._lock:
            samples = self._samples.get(rows)
            if samples is None or len(samples) < LIVE_SAMPLES:
                return None
            if self._clock() - self._when[rows] > STALE_S:
                return None
            return slow_step(list(samples)) if slow else statistics.median(samples)


@dataclass(frozen=True)
class LiveFigures:
    """The live figures at one moment, as the estimates read them: each size's typical LM
    step and decode, the prefill per row and step, and how much slower the live steps run than
    the start-up table's (`StepCosts._scale`)."""

    steps: dict[int, float]
    decodes: dict[int, float]
    prefill_per_row: float
    lm_scale: float
    decode_scale: float
    versions: tuple[int, int, int]
    at: float
    capacities: dict[tuple[float, int], int]  # (rate, extra) -> rows, as asked


class StepCosts:
    """The batch's costs by row count: the start-up table, corrected by live figures."""

    def __init__(
        self,
        startup: list[BatchCost],
        max_rows: int,
        frame_s: float,
        cores: int,
        listener: Callable[[str, int, float], None] | None = None,
    ) -> None:
        """`listener(kind, rows, seconds)` hears each live figure ("step", "decode",
        "prefill"), for `record` in another process."""
        self.max_rows = max_rows
        self.frame_s = frame_s
        self.cores = cores
        self._lm = {c.rows: c.lm_s for c in startup}
        self._decode = {c.rows: c.decode_s for c in startup}
        self._listener = listener
        self.steps = Live(  # one LM step on the batch's thread
            listener=functools.partial(listener, "step") if listener else None
        )
        self.decodes = Live(  # one decode on the decoder's thread
            listener=functools.partial(listener, "decode") if listener else None
        )
        # prompts prefilled on the LM's thread, per row and step: each row needs one per unit
        self._prefill_s = 0.0
        self._row_steps = 0.0
        self._prefills = 0  # prefills added: a version, as `Live.version`
        self._lock = threading.Lock()
        self._figures: LiveFigures | None = None

    def add_step(self, rows: int, seconds: float) -> None:
        self.steps.add(rows, seconds)
        with self._lock:  # a window of about the last thousand steps
            self._prefill_s *= 0.999
            self._row_steps = 0.999 * self._row_steps + rows

    def add_prefill(self, seconds: float) -> None:
        with self._lock:
            self._prefills += 1
            self._prefill_s += seconds
        if self._listener is not None:
            self._listener("prefill", 0, seconds)

    def record(self, kind: str, rows: int, seconds: float) -> None:
        """A live figure another `StepCosts` heard (its `listener`), as if measured here."""
        if kind == "step":
            self.add_step(rows, seconds)
        elif kind == "decode":
            self.decodes.add(rows, seconds)
        elif kind == "prefill":
            self.add_prefill(seconds)
        else:
            raise ValueError(f"not a live figure: {kind!r}")

    def prefill_per_row(self) -> float:
        """Seconds of prefill the LM's thread does per row and step."""
        with self._lock:
            return self._prefill_s / self._row_steps if self._row_steps >= 100 else 0.0

    @staticmethod
    def _interpolate(table: dict[int, float], rows: int) -> float:
        if not table:
            return 0.0
        if rows in table:
            return table[rows]
        below = max((n for n in table if n < rows), default=None)
        above = min((n for n in table if n > rows), default=None)
        if below is None:
            return table[above]  # type: ignore[index]  # under every key: one is above
        if above is None:  # beyond the table: grows as from its last two sizes
            last = sorted(table)[-2:]
            if len(last) < 2:
                return table[below] * rows / below
            slope = (table[last[1]] - table[last[0]]) / (last[1] - last[0])
            return table[below] + slope * (rows - below)
        share = (rows - below) / (above - below)
        return table[below] + share * (table[above] - table[below])

    def padded(self, rows: int) -> int:
        """The batch size to run `rows` rows at: the cheapest start-up LM step at or above it
        (within 3%, the smallest). `rows` itself is a candidate when it was not timed (past 8
        rows, `cost_sizes`), at the cost the sizes around it suggest: an untimed size runs as
        itself, not as the next timed one, which costs more (`bench/probe.py`)."""
        sizes = sorted({rows, *(n for n in self._lm if rows <= n <= self.max_rows)})
        cost = {n: self._interpolate(self._lm, n) for n in sizes}
        cheapest = min(cost.values())
        return min(n for n in sizes if cost[n] <= 1.03 * cheapest)

    def figures(self) -> LiveFigures:
        """The live figures now: computed again once a figure was added or `FIGURES_S` after
        the last time (read from any thread: the newest is kept, an older one still holds)."""
        versions = (self.steps.version, self.decodes.version, self._prefills)
        now = time.monotonic()
        figures = self._figures
        if figures is not None and figures.versions == versions and now - figures.at < FIGURES_S:
            return figures
        steps, decodes = self.steps.seen(), self.decodes.seen()
        figures = LiveFigures(
            steps,
            decodes,
            self.prefill_per_row(),
            self._scale(steps, self._lm, SIDE_BY_SIDE["lm"]),
            self._scale(decodes, self._decode, SIDE_BY_SIDE["decode"]),
            versions,
            now,
            {},
        )
        self._figures = figures
        return figures

    def _scale(self, seen: dict[int, float], table: dict[int, float], prior: float) -> float:
        """How much slower the live figures (`seen`) run than the start-up ones, at the
        largest size seen live (`prior` before any, on two cores or more)."""
        if not table:
            return 1.0
        if not seen:
            return prior if self.cores >= 2 else 1.0
        rows = max(seen)
        guess = self._interpolate(table, rows)
        return max(1.0, seen[rows] / guess) if guess > 0 else 1.0

    def _lm_estimate(self, rows: int, figures: LiveFigures) -> float:
        """Seconds of the LM's thread per step with `rows` live rows: its step, and the
        prompts' prefills between steps."""
        lm = figures.steps.get(rows)
        if lm is None:
            lm = self._interpolate(self._lm, self.padded(rows)) * figures.lm_scale
        return lm + rows * figures.prefill_per_row

    def _decode_estimate(self, rows: int, figures: LiveFigures) -> float:
        """Seconds of one decode of `rows` rows, on either thread."""
        decode = figures.decodes.get(rows)
        if decode is None:
            decode = self._interpolate(self._decode, rows) * figures.decode_scale
        return decode

    def split(self, rows: int) -> tuple[float, int]:
        """(seconds per step, rows to decode on the LM's thread) for `rows` live rows: the
        least CPU whose period stays within `SPLIT_BUDGET` of the frame."""
        figures = self.figures()
        return best_split(
            self._lm_estimate(rows, figures),
            functools.partial(self._decode_estimate, figures=figures),
            rows,
            self.cores,
            SPLIT_BUDGET * self.frame_s,
        )

    def estimate(self, rows: int, figures: LiveFigures | None = None) -> float:
        """Seconds per step with `rows` live rows, at the shortest period (`best_split`)."""
        figures = figures or self.figures()
        decode = functools.partial(self._decode_estimate, figures=figures)
        return best_split(self._lm_estimate(rows, figures), decode, rows, self.cores)[0]

    def capacity(self, rate: float = 1.0, extra: int = 0) -> int:
        """The most rows that all get their frames in real time when the fastest of them
        speaks at `rate` (2.0: its listener hears a frame's audio in half a frame, so every
        step must take half as long; the batch steps all rows at once). A size fits when its
        typical step takes at most `MARGIN` of that. Sizes are tried upwards and the first
        that does not fit ends the search (more rows never cost less); at most `RAMP` times the
        largest size seen live (`COLD_ROWS` before any), plus `extra`: rows kept free (for
        Discord, beside the speech service), which the batch never runs until they are used."""
        figures = self.figures()
        known = figures.capacities.get((rate, extra))
        if known is not None:
            return known
        seen = figures.steps
        largest = (math.ceil(RAMP * max(seen)) if seen else COLD_ROWS) + extra
        frame = self.frame_s / max(1.0, rate)
        fitting = 1
        for rows in range(2, min(self.max_rows, largest) + 1):
            if self.estimate(rows, figures) > MARGIN * frame:
                break
            fitting = rows
        figures.capacities[(rate, extra)] = fitting
        return fitting

    def live(self) -> str:
        """The live figures for the log: rows -> LM step and decode, typical/slow, in ms."""

        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value * 1000:.0f}"

        sizes = sorted(set(self.steps.seen()) | set(self.decodes.seen()))
        return (
            ", ".join(
                f"{n}: LM {ms(self.steps.get(n))}/{ms(self.steps.get(n, True))}"
                f" decode {ms(self.decodes.get(n))}/{ms(self.decodes.get(n, True))}"
                for n in sizes
            )
            or "none yet"
        )

    def table(self) -> str:
        """The figures for the log: rows -> estimated ms per step."""
        return ", ".join(
            f"{n}: {self.estimate(n) * 1000:.0f} ms" for n in range(1, self.max_rows + 1)
        )
