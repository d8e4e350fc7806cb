"""The voice UDP side of the fake: IP discovery, RTP decryption and Opus decoding."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import discord
import nacl.bindings
import numpy as np

OPUS_SILENCE = b"\xf8\xff\xfe"
# A decoded frame whose loudest sample stays under this is heard as silence (-54 dBFS). The
# bot's player sends an underrun as PCM zeros, which discord.py's Opus encoder turns into
# ordinary packets (~113 bytes, not Discord's 3-byte silence frame); they decode to a few
# units (the first one or two still carry the previous frame's tail). Counted by their bytes
# alone, an underrun looked like speech, and no gap test could see one. The tests' speech
# peaks near 1000 in every frame.
QUIET_PEAK = 64
SIOCGSTAMP = 0x8906  # Linux: when the kernel received the socket's last datagram
# The socket's receive buffer. At Linux's default (208 KiB, about 0.3 s of 14 servers' packets)
# a test process busy for a moment overflowed it, and the kernel dropped a packet of each server
# (a capacity run heard 5362 of 5376 frames): the fake lost what the bot had sent. As root it is
# forced past net.core.rmem_max (Linux's default 208 KiB again); otherwise that caps it.
RECEIVE_BUFFER = 4 * 1024 * 1024
SO_RCVBUFFORCE = 33  # Linux: SO_RCVBUF past rmem_max, with CAP_NET_ADMIN (not in `socket`)


@dataclass
class ReceivedPacket:
    arrived: float  # time.monotonic() at arrival, as the kernel stamped it
    sequence: int
    timestamp: int
    ssrc: int
    opus: bytes
    pcm: bytes  # 48 kHz stereo s16le, decoded from `opus`

    @property
    def is_silence(self) -> bool:
        """Discord's silence frame, as discord.py sends it at the end of speech (an underrun's
        frame is not one: see `sounds_silent`)."""
        return self.opus == OPUS_SILENCE

    @functools.cached_property
    def sounds_silent(self) -> bool:
        """What a listener hears as silence: Discord's silence frame, or a frame that decodes
        to near zero (`QUIET_PEAK`: an underrun the encoder made into a packet)."""
        if self.is_silence:
            return True
        samples = np.frombuffer(self.pcm, dtype=np.int16)
        return not samples.size or int(np.abs(samples.astype(np.int32)).max()) < QUIET_PEAK


# What the listeners do with a frame after the transport decryption (the fake's DAVE layer,
# server.py): `(ssrc, frame)` -> the frame as a member hears it, or None when none of them can
# decrypt it (lost audio); without a hook a frame is heard as it came.
Listeners = Callable[[int, bytes], bytes | None]


@dataclass
class UndecryptedPacket:
    """A packet no listener could decrypt (DAVE): lost audio, kept for tests to count."""

    arrived: float
    sequence: int
    ssrc: int


class VoiceUDPServer(asyncio.DatagramProtocol):
    """Answers IP discovery and records every RTP packet, decrypted and decoded."""

    # datagrams the kernel dropped at every fake closed so far in this process (`close`): the
    # tests' autouse check fails a test during which this grew
    kernel_drops_at_close: ClassVar[int] = 0

    def __init__(self) -> None:
        self.transport: asyncio.DatagramTransport | None = None
        self.keys: dict[int, bytes] = {}  # ssrc -> secret key of its voice session
        self.packets: list[ReceivedPacket] = []
        self.errors: list[str] = []
        self.arrival = asyncio.Event()
        self._decoders: dict[int, discord.opus.Decoder] = {}
        self.ended: set[int] = set()  # ssrcs of voice sessions Discord ended: their audio is lost
        self.dropped = 0  # packets of ended sessions (nobody hears them)
        # a speaker nobody hears (the bot in a stage's audience): its packets are dropped
        self.muted: Callable[[int], bool] = lambda ssrc: False
        self.unheard = 0
        self.listeners: Listeners | None = None
        # packets whose frame no listener could decrypt: not in `packets`, as a member hears
        # nothing of them (DAVE drops a plain frame, and one before the sender was welcomed)
        self.undecrypted: list[UndecryptedPacket] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
        except PermissionError:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        self._fileno = sock.fileno()
        with contextlib.suppress(OSError):  # the first call turns the kernel's stamps on
            self._kernel_stamp()

    def _kernel_stamp(self) -> float:
        """When the datagram just read reached the socket, on the monotonic clock.

        Discord hears a packet when it arrives, not when the fake's event loop, which is
        also the bot's, gets round to it: a loop busy for 90 ms made a steady stream of
        packets look like a 110 ms gap followed by a burst."""
        seconds, micros = struct.unpack("ll", fcntl.ioctl(self._fileno, SIOCGSTAMP, bytes(16)))
        return seconds + micros / 1e6 - (time.time() - time.monotonic())

    @property
    def kernel_drops(self) -> int:
        """Datagrams the kernel dropped before the fake read them (its buffer was full):
        /proc/net/udp's last column for this socket."""
        local = f"0100007F:{self.port:04X}"
        with open("/proc/net/udp", encoding="ascii") as table:
            rows = [line.split() for line in table.readlines()[1:]]
        return sum(int(row[-1]) for row in rows if row[1] == local)

    def close(self) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        VoiceUDPServer.kernel_drops_at_close += self.kernel_drops
        self.transport.close()

    @property
    def port(self) -> int:
        assert self.transport is not None
        return self.transport.get_extra_info("sockname")[1]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        assert self.transport is not None
        if len(data) == 74 and struct.unpack_from(">H", data, 0)[0] == 1:
            ssrc = struct.unpack_from(">I", data, 4)[0]
            reply = bytearray(74)
            struct.pack_into(">HHI", reply, 0, 2, 70, ssrc)
            ip = addr[0].encode("ascii")
            reply[8 : 8 + len(ip)] = ip
            struct.pack_into(">H", reply, 72, addr[1])
            self.transport.sendto(bytes(reply), addr)
            return
        if len(data) > 12 and struct.unpack_from(">I", data, 8)[0] in self.ended:
            self.dropped += 1
            return
        if len(data) > 12 and self.muted(struct.unpack_from(">I", data, 8)[0]):
            self.unheard += 1
            return
        try:
            packet = self._decode_rtp(data, self._kernel_stamp())
            if packet is not None:
                self.packets.append(packet)
            self.arrival.set()
        except Exception as error:  # recorded for the test to assert on
            self.errors.append(f"{type(error).__name__}: {error}")

    def _decode_rtp(self, data: bytes, arrived: float) -> ReceivedPacket | None:
        if data[0] != 0x80 or data[1] != 0x78:
            raise ValueError(f"unexpected RTP header {data[:2].hex()}")
        header = data[:12]
        sequence, timestamp, ssrc = struct.unpack_from(">HII", data, 2)
        key = self.keys.get(ssrc)
        if key is None:
            raise ValueError(f"RTP for ssrc {ssrc} before its SESSION_DESCRIPTION")
        nonce = data[-4:] + bytes(20)
        opus = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(
            data[12:-4], header, nonce, key
        )
        if self.listeners is not None:
            heard = self.listeners(ssrc, opus)
            if heard is None:
                self.undecrypted.append(UndecryptedPacket(arrived, sequence, ssrc))
                return None
            opus = heard
        decoder = self._decoders.setdefault(ssrc, discord.opus.Decoder())
        pcm = decoder.decode(opus, fec=False)
        return ReceivedPacket(arrived, sequence, timestamp, ssrc, opus, pcm)
