"""At most so many changes in a sliding window, per whoever makes them: a change that costs
the bot more than the command (a language: a model to load; a reading name: new audio for the
phrase cache) is limited, so that a member cannot make it cost without end."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Hashable


class ChangeLimit:
    """`most` changes per key within `window_s`; only keys that changed lately are kept."""

    def __init__(
        self, most: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.most = most
        self.window_s = window_s
        self.clock = clock
        self._changes: dict[Hashable, collections.deque[float]] = {}

    def take(self, key: Hashable) -> float:
        """Count a change for `key` and return 0.0; or, past the limit, count nothing and
        return the seconds until the next change is allowed."""
        wait_s = self.waiting(key)
        if not wait_s:
            self._changes.setdefault(key, collections.deque()).append(self.clock())
        return wait_s

    def waiting(self, key: Hashable) -> float:
        """The seconds until `key` may change again (0.0: now), counting nothing: to check
        two limits before counting a change against either."""
        now = self.clock()
        since = now - self.window_s
        for stale in [k for k, times in self._changes.items() if not times or times[-1] <= since]:
            del self._changes[stale]  # keep only who changed lately
        times = self._changes.get(key)
        while times and times[0] <= since:
            times.popleft()
        if times is not None and len(times) >= self.most:
            return times[0] + self.window_s - now
        return 0.0


def wait_minutes(seconds: float) -> int:
    """A wait as whole minutes for the member (at least one)."""
    return max(1, round(seconds / 60))
