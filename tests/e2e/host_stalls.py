"""Whether this process was off the CPU: every thread's time on a CPU and waiting for one, as
the kernel counts them (/proc/self/task/*/schedstat), sampled every few milliseconds.

The bot runs in the test's process, and a packet's arrival is stamped by the kernel, so a gap
between two packets is a time the bot's player did not send. When the host's other work has
both cores, the whole process waits on the run queue (every thread of it, and a thread
preempted while it holds the GIL keeps the others waiting too): such a gap is the host's,
not the bot's nor the test's. Measured (issue 59) on a 2-core host at a load average of 10:
a 129 ms gap in which the process's five threads ran 13 ms in all and waited 430 ms for a
CPU, the player 33 ms of it (the rest of the time it waited for the GIL)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

SAMPLE_S = 0.005


@dataclass(frozen=True)
class Sample:
    at: float  # time.monotonic()
    ran_s: float  # the process's threads' time on a CPU, summed
    waited_s: float  # and their time waiting on the run queue for one


def sample() -> Sample:
    ran = waited = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as stats:
                on_cpu, on_queue, _ = stats.read().split()
        except (OSError, ValueError):  # a thread that ended meanwhile
            continue
        ran, waited = ran + int(on_cpu), waited + int(on_queue)
    return Sample(time.monotonic(), ran / 1e9, waited / 1e9)


class HostStalls(threading.Thread):
    """Samples the process until `stop()`; `starved(a, b)` says whether the host kept it off
    the CPU between a and b."""

    def __init__(self) -> None:
        super().__init__(daemon=True, name="host-stalls")
        self.samples: list[Sample] = []
        self._ended = threading.Event()

    def run(self) -> None:
        while not self._ended.is_set():
            self.samples.append(sample())
            time.sleep(SAMPLE_S)

    def stop(self) -> None:
        self._ended.set()
        self.join()

    def starved(self, start: float, end: float) -> bool:
        """The process's threads waited on the run queue, together, for longer than the span
        from `start` to `end`, while they ran for under a third of it: the host's other work
        had the CPUs (a thread of the bot's holding the GIL would have run)."""
        before = [s for s in self.samples if s.at <= start]
        after = [s for s in self.samples if s.at >= end]
        if not before or not after:
            return False
        first, last = before[-1], after[0]
        span = last.at - first.at
        return last.waited_s - first.waited_s >= span and last.ran_s - first.ran_s < span / 3
