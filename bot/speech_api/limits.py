"""Per-client limits of the speech service: streams at once and requests a minute, by key
(or by address when the service has no keys: the whole loopback range is one client, as
any local program may take any 127.x address).

A stream counts from the moment it is asked for (`check`), not from when its job starts:
a burst of requests all checked before the first one opens would otherwise all pass."""

from __future__ import annotations

import collections
import contextlib
import ipaddress
import math
import time
from collections.abc import Callable

from bot.core.config import is_loopback
from bot.speech_api.errors import TooMany

WINDOW_S = 60.0
MAX_CLIENTS = 10_000  # clients remembered (addresses without keys): the oldest forgotten


def client_address(address: str | None) -> str:
    """A client without a key, by its address: every loopback address one client (any
    program of this machine can take 127.0.0.2, .3, ... and pass the limits by address)."""
    if address is None:
        return "local"
    with contextlib.suppress(ValueError):
        mapped = ipaddress.ip_address(address)
        if isinstance(mapped, ipaddress.IPv6Address) and mapped.ipv4_mapped is not None:
            address = str(mapped.ipv4_mapped)  # (::ffff:127.0.0.2 on a dual-stack socket)
    return "local" if is_loopback(address) else address


class ClientLimits:
    def __init__(
        self, streams: int, per_minute: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.streams, self.per_minute, self.clock = streams, per_minute, clock
        self._open: collections.Counter[str] = collections.Counter()
        self._asked: collections.OrderedDict[str, collections.deque[float]] = (
            collections.OrderedDict()
        )

    def check(self, client: str, *, count: bool = True, hold: bool = True) -> None:
        """Count a request of `client` and hold one of its streams, or refuse it (TooMany);
        the stream is given back by `closed`. `count` False: a stream within a request
        already counted (a Wyoming stream's next sentence), held to the streams at once
        alone. `hold` False: the request counted, no stream held yet (a Wyoming stream's
        start, whose sentences hold one each)."""
        if not count:
            self._check_streams(client)
            self._open[client] += 1
            return
        now = self.clock()
        asked = self._asked.pop(client, None) or collections.deque()
        self._asked[client] = asked  # the most recent last
        while asked and now - asked[0] >= WINDOW_S:
            asked.popleft()
        if len(asked) >= self.per_minute:
            wait = WINDOW_S - (now - asked[0])
            raise TooMany(
                f"Too many requests: at most {self.per_minute} a minute.",
                code="rate_limit_exceeded",
                retry_after=max(1, math.ceil(wait)),
            )
        self._check_streams(client)
        asked.append(now)
        if hold:
            self._open[client] += 1
        while len(self._asked) > MAX_CLIENTS:
            self._asked.popitem(last=False)

    def _check_streams(self, client: str) -> None:
        if self._open[client] >= self.streams:
            raise TooMany(
                f"Too many streams at once: at most {self.streams} per client.",
                code="rate_limit_exceeded",
                retry_after=1,
            )

    def closed(self, client: str) -> None:
        self._open[client] -= 1
        if self._open[client] <= 0:
            del self._open[client]
