"""The fake's own measure of when audio arrives: what the e2e tests' gap limits rest on."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from itertools import pairwise

import pytest

from tests.fakediscord.voice_udp import VoiceUDPServer


@pytest.mark.timing
async def test_arrivals_are_stamped_by_the_kernel_not_the_busy_event_loop() -> None:
    """A thread sends a datagram every 20 ms while the event loop is blocked for 150 ms: the
    recorded arrivals stay 20 ms apart, as Discord would hear them."""
    loop = asyncio.get_running_loop()
    server = VoiceUDPServer()
    await loop.create_datagram_endpoint(lambda: server, local_addr=("127.0.0.1", 0))
    assert server.transport is not None
    stamps: list[float] = []
    server._decode_rtp = lambda data, arrived: stamps.append(arrived)  # type: ignore[method-assign,assignment,return-value]
    sent: list[float] = []

    def send() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            for sequence in range(20):
                sent.append(time.monotonic())
                sock.sendto(
                    struct.pack(">BBHII", 0x80, 0x78, sequence, 0, 1) + bytes(8),
                    ("127.0.0.1", server.port),
                )
                time.sleep(0.02)

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(0.15)  # the loop stands still: the datagrams wait in the socket
    await asyncio.to_thread(sender.join)
    await asyncio.sleep(0.05)
    server.transport.close()
    assert len(stamps) == 20, stamps
    assert max(b - a for a, b in pairwise(stamps)) < 0.06
    assert all(abs(stamp - at) < 0.01 for stamp, at in zip(stamps, sent, strict=True))
