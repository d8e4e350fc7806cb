"""Every connection of the speech service bounded, before any key is checked: idle
connections by the thousand would otherwise take the process's descriptors, and with
SPEECH_PORT the Discord bot's with them (nothing left to open a file, a voice socket, the
database).

- At most SPEECH_CONNECTIONS open at once, HTTP and Wyoming together (what `doctor` counts
  descriptors for). At the cap the oldest connection that has sent no request yet is reset
  for the new one; if every one is in use, the new one is reset at once, never left waiting.
- A new HTTP connection whose first request is not whole within HEADER_S is closed;
  between requests aiohttp's own keep-alive timeout (IDLE_S) closes it. Wyoming waits
  HEADER_S for a first event and IDLE_S between events (`wyoming_server.BoundedReader`).
- Each connection's kernel send buffer is SEND_BUFFER, so that a client that stops reading
  is found in seconds (its writes block), not after a minute of audio the kernel took.
- Floods are logged once a minute with a count (`Tally`), never per connection.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Callable

log = logging.getLogger(__name__)

HEADER_S = 10.0  # a new connection's first request (or Wyoming event), whole, within this
IDLE_S = 30.0  # an idle connection is closed after this: longer than clients keep theirs
# pooled (httpx 5 s, aiohttp 15 s), so a client never sends into a connection being closed
BODY_S = 10.0  # a request's body (at most 64 KB) within this once its headers came
WRITE_S = 30.0  # a write the client does not take within this: it stopped reading
LOG_EVERY_S = 60.0
# the kernel's send buffer of each connection (Linux doubles it; it would grow to 4 MB by
# itself, a minute of PCM held for a client that does not read): 128 KB still carries
# 1.3 MB/s at 100 ms of round trip, 27 times PCM's 48 KB/s
SEND_BUFFER = 64 * 1024

ProtocolFactory = Callable[[], asyncio.BaseProtocol]


class Tally:
    """Events counted and logged at most once every `every_s`: the first at once, those
    after it as one line with their count when the interval ends (a flood is one line a
    minute, not one per connection)."""

    def __init__(self, message: str, every_s: float = LOG_EVERY_S) -> None:
        self.message = message  # with one %d: how many
        self.every_s = every_s
        self.total = 0
        self._count = 0
        self._logged_at: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    def note(self) -> None:
        loop = asyncio.get_running_loop()
        self.total += 1
        self._count += 1
        now = loop.time()
        if self._logged_at is None or now - self._logged_at >= self.every_s:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_at(self._logged_at + self.every_s, self._flush)

    def _flush(self) -> None:
        self._timer = None
        if self._count:
            log.warning(self.message, self._count)
            self._count = 0
            self._logged_at = asyncio.get_running_loop().time()

    def close(self) -> None:
        """What is counted and not yet said, said now (the service closes)."""
        if self._timer is not None:
            self._timer.cancel()
            self._flush()


class Refused(asyncio.Protocol):
    """A connection past the cap: reset at once (its descriptor freed now, no TIME_WAIT)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.abort()


class Counted(asyncio.Protocol):
    """The service's own protocol (aiohttp's, or a Wyoming stream reader's), counted
    against the cap until its connection is lost, and closed if no request comes within
    `header_s` (None: the protocol bounds its own wait)."""

    def __init__(
        self, inner: asyncio.BaseProtocol, gate: ConnectionGate, header_s: float | None
    ) -> None:
        assert isinstance(inner, asyncio.Protocol)
        self.inner, self.gate, self.header_s = inner, gate, header_s
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._released = False  # its place in the cap given back (once)
        self._evicted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)  # (a TCP server's)
        self._transport = transport
        if self._evicted:  # (evicted between its making and its connection)
            self.inner.connection_made(transport)
            transport.abort()
            return
        if self.header_s is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.header_s, self._no_request)
        self.inner.connection_made(transport)

    def asked(self) -> None:
        """A whole request came: from now on the protocol's own idle timeout holds, and
        it is no longer the first to go for a newer connection."""
        self.gate.waiting.pop(self, None)
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def evict(self) -> None:
        """Closed for a newer connection (this one has sent no request): its place is
        given back now, its connection reset."""
        self._evicted = True
        self._release()
        if self._transport is not None:
            self._transport.abort()

    def _release(self) -> None:
        self.gate.waiting.pop(self, None)
        if not self._released:
            self._released = True
            self.gate.open -= 1

    def _no_request(self) -> None:
        self._timer = None
        if self._transport is not None and not self._transport.is_closing():
            self.gate.slow.note()
            self._transport.close()

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._release()
        self.inner.connection_lost(exc)


class ConnectionGate:
    """The cap on the service's connections, shared by its servers (HTTP and Wyoming)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open = 0  # counted from the protocol's making, so a burst of accepts in one
        # turn of the loop cannot pass the cap before any of them is connected
        self.waiting: dict[Counted, None] = {}  # those with no request yet, oldest first
        self.evicted = Tally(
            f"the speech service holds its most connections ({cap}, SPEECH_CONNECTIONS): "
            "%d with no request yet closed for newer ones in the last minute"
        )
        self.refused = Tally(
            f"the speech service holds its most connections ({cap}, SPEECH_CONNECTIONS): "
            "%d refused in the last minute"
        )
        self.slow = Tally(
            f"connections with no whole request in {HEADER_S:g} s: %d closed in the last minute"
        )

    def factory(self, make: ProtocolFactory, header_s: float | None) -> ProtocolFactory:
        """A protocol factory for `loop.create_server`: `make`'s protocol while there is
        room; at the cap, room made by closing the oldest connection that has sent no
        request yet (a client's request follows its connection at once, so a flood of
        idle connections cannot keep clients out); if every one is in use, a protocol that
        resets the new connection."""

        def protocol() -> asyncio.BaseProtocol:
            if self.open >= self.cap:
                if not self.waiting:
                    self.refused.note()
                    return Refused()
                next(iter(self.waiting)).evict()
                self.evicted.note()
            self.open += 1
            counted = Counted(make(), self, header_s)
            self.waiting[counted] = None
            return counted

        return protocol

    def close(self) -> None:
        self.evicted.close()
        self.refused.close()
        self.slow.close()


def bound_sends(server: asyncio.Server) -> None:
    """SEND_BUFFER on the listening sockets, which the connections they accept inherit."""
    for listener in server.sockets:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)


def mark_asked(transport: asyncio.BaseTransport | None) -> None:
    """A whole request came on `transport` (its header timeout ends)."""
    protocol = transport.get_protocol() if transport is not None else None
    if isinstance(protocol, Counted):
        protocol.asked()


class Listener:
    """A port bound before the model loads (the kernel holds it; nothing is accepted until
    the service is made and starts serving it): its connections go to `factory`, set then."""

    def __init__(self) -> None:
        self.server: asyncio.Server | None = None
        self.factory: Callable[[], asyncio.BaseProtocol] | None = None

    async def bind(self, host: str, port: int) -> None:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(self.protocol, host, port, start_serving=False)

    def protocol(self) -> asyncio.BaseProtocol:
        assert self.factory is not None, "served before the service was made"
        return self.factory()

    async def serve(self, factory: Callable[[], asyncio.BaseProtocol]) -> asyncio.Server:
        assert self.server is not None, "served before it was bound"
        self.factory = factory
        await self.server.start_serving()
        return self.server

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
