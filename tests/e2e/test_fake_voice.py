"""The fake's own measure of when audio arrives: what the e2e tests' gap limits rest on."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time

import pytest

from tests.fakediscord.voice_udp import VoiceUDPServer


@pytest.mark.timing
async def test_arrivals_are_stamped_by_the_kernel_not_the_busy_event_loop() -> None:
    """A thread sends datagrams while the event loop stands still: each recorded arrival lies
    between the moments its send began and ended, not at the moment the loop read it.

    The bounds come from the sender's own clock readings around each send, so a slow or
    preempted sender widens them and never breaks them."""
    loop = asyncio.get_running_loop()
    server = VoiceUDPServer()
    await loop.create_datagram_endpoint(lambda: server, local_addr=("127.0.0.1", 0))
    assert server.transport is not None
    stamps: list[float] = []
    server._decode_rtp = lambda data, arrived: stamps.append(arrived)  # type: ignore[method-assign,assignment,return-value]
    sends: list[tuple[float, float]] = []
    first_sent = threading.Event()

    def send() -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            for sequence in range(20):
                began = time.monotonic()
                sock.sendto(
                    struct.pack(">BBHII", 0x80, 0x78, sequence, 0, 1) + bytes(8),
                    ("127.0.0.1", server.port),
                )
                sends.append((began, time.monotonic()))
                if sequence == 2:
                    first_sent.set()
                time.sleep(0.02)

    sender = threading.Thread(target=send)
    sender.start()
    # The loop stands still until three datagrams wait in the socket, and 100 ms more.
    assert first_sent.wait(timeout=10)
    time.sleep(0.1)
    unblocked = time.monotonic()
    await asyncio.to_thread(sender.join)
    await asyncio.sleep(0.05)
    server.transport.close()
    assert len(stamps) == 20, stamps
    slack = 0.002  # the realtime stamp moved onto the monotonic clock, to the microsecond
    assert all(
        began - slack <= stamp <= ended + slack
        for stamp, (began, ended) in zip(stamps, sends, strict=True)
    ), [(stamp, began, ended) for stamp, (began, ended) in zip(stamps, sends, strict=True)]
    assert stamps[2] <= unblocked - 0.1 + slack
