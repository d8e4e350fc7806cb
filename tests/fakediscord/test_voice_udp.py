"""The fake's ear: an underrun is heard as silence however discord.py encoded it, and what its
socket could not hold is counted."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import numpy as np
from discord import opus

from tests.fakediscord.voice_udp import (
    OPUS_SILENCE,
    RECEIVE_BUFFER,
    ReceivedPacket,
    VoiceUDPServer,
)

SAMPLES = 960  # 20 ms at 48 kHz


def received(packet: bytes, decoder: opus.Decoder) -> ReceivedPacket:
    pcm = b"" if packet == OPUS_SILENCE else decoder.decode(packet)
    return ReceivedPacket(0.0, 0, 0, 1, packet, pcm)


def test_an_underruns_encoded_zeros_are_silence_and_speech_is_not() -> None:
    """discord.py's player sends an underrun's PCM zeros through its encoder: ordinary packets,
    not Discord's silence frame. They are heard as silence after the previous frame's tail."""
    opus._load_default()
    encoder, decoder = opus.Encoder(), opus.Decoder()
    rng = np.random.default_rng(0)
    speech = (rng.standard_normal(SAMPLES * 2) * 3000).astype(np.int16).tobytes()
    spoken = [received(encoder.encode(speech, SAMPLES), decoder) for _ in range(5)]
    zeros = [received(encoder.encode(bytes(SAMPLES * 4), SAMPLES), decoder) for _ in range(8)]
    assert not any(p.sounds_silent for p in spoken)
    assert all(p.opus != OPUS_SILENCE and len(p.opus) > 3 for p in zeros)  # not the 3 bytes
    assert not any(p.is_silence for p in zeros)  # not Discord's silence frame, but heard so
    assert [p.sounds_silent for p in zeros[:3]].count(False) <= 2  # the tail of the speech
    assert all(p.sounds_silent for p in zeros[3:])
    assert received(OPUS_SILENCE, decoder).sounds_silent


async def test_a_datagram_the_kernel_dropped_is_counted() -> None:
    """The fake's ear counts what its socket's buffer could not hold (nobody heard it, so a
    test counting frames must not blame the bot), and its buffer holds seconds of speech."""
    loop = asyncio.get_running_loop()
    ear = VoiceUDPServer()
    transport, _ = await loop.create_datagram_endpoint(lambda: ear, local_addr=("127.0.0.1", 0))
    sock = transport.get_extra_info("socket")
    # the kernel reports twice what was asked (its bookkeeping); without root, rmem_max caps it
    limit = int(Path("/proc/sys/net/core/rmem_max").read_text())
    asked = RECEIVE_BUFFER if os.geteuid() == 0 else min(RECEIVE_BUFFER, limit)
    assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) == 2 * asked
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel's minimum
    before = VoiceUDPServer.kernel_drops_at_close
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        for _ in range(200):  # the loop does not read meanwhile
            sender.sendto(bytes(120), ("127.0.0.1", ear.port))
    assert ear.kernel_drops > 150
    ear.close()
    assert VoiceUDPServer.kernel_drops_at_close - before > 150
    VoiceUDPServer.kernel_drops_at_close = before  # not this test's fake's fault
