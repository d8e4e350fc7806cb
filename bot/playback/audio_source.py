"""Model audio (24 kHz mono float) to what Discord plays (48 kHz stereo s16le, 20 ms frames).

`FrameConverter` is a streaming resampler plus framer; `StreamingSource` is the discord.py
`AudioSource` fed by it. The player thread calls `read()` every 20 ms, so `read()` only ever
pops from a deque: it never waits.
"""

from __future__ import annotations

import collections
import threading
import time

import discord
import numpy as np
import soxr

from bot.core.errors import OperatorError
from bot.playback.voice_link import load_opus
from bot.synthesis.audio_files import MODEL_RATE

DISCORD_RATE = 48_000
FRAME_S = 0.02  # one Opus frame, as discord.py's player reads it: the one definition
FRAME_SAMPLES = round(DISCORD_RATE * FRAME_S)  # 960
FRAME_BYTES = FRAME_SAMPLES * 2 * 2  # stereo, s16le
SILENCE = bytes(FRAME_BYTES)
REWIND_FRAMES = 250  # 5 s: longer than a link goes unnoticed (the watchdog heals after 2 s)


class OpusMissingError(OperatorError, RuntimeError):
    """libopus cannot be loaded: voice cannot be sent."""


def ensure_opus() -> None:
    """Load libopus now, so a missing library is reported at start, not at the first /say."""
    if not load_opus():
        raise OpusMissingError(
            "libopus was not found: install it (Debian/Ubuntu: apt-get install libopus0; "
            "./run.sh does this for you)"
        )


class FrameConverter:
    """Streams float chunks at `in_rate` into exact 3,840-byte Discord frames.

    soxr keeps its filter state between chunks, so chunk joins are seamless.
    """

    def __init__(self, in_rate: int = MODEL_RATE) -> None:
        self._resampler = soxr.ResampleStream(in_rate, DISCORD_RATE, 1, dtype="float32")
        self._pending = bytearray()
        self.samples_out = 0  # 48 kHz samples per channel produced so far, padding excluded
        self.padding = 0  # samples per channel of silence the last `flush` padded its frame with

    def push(self, chunk: np.ndarray) -> list[bytes]:
        resampled = self._resampler.resample_chunk(np.asarray(chunk, dtype=np.float32))
        return self._frames(resampled)

    def flush(self, fade: bool = False) -> list[bytes]:
        """The rest of the audio, the last frame padded with silence; `fade`: its last
        FADE_SAMPLES fade out, so that silence after it starts without a click."""
        frames = self._frames(
            self._resampler.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
        )
        if fade:
            tail = frames[-1] if not self._pending and frames else bytes(self._pending)
            faded = _faded(tail)
            if self._pending:
                self._pending[:] = faded
            elif frames:
                frames[-1] = faded
        self.padding = 0
        if self._pending:
            self.padding = (FRAME_BYTES - len(self._pending)) // 4
            frames.append(bytes(self._pending) + bytes(FRAME_BYTES - len(self._pending)))
            self._pending.clear()
        return frames

    def _frames(self, samples: np.ndarray) -> list[bytes]:
        self.samples_out += len(samples)
        pcm = np.rint(np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
        self._pending += np.repeat(pcm, 2).tobytes()  # mono -> interleaved stereo
        count = len(self._pending) // FRAME_BYTES
        frames = [
            bytes(self._pending[i * FRAME_BYTES : (i + 1) * FRAME_BYTES]) for i in range(count)
        ]
        del self._pending[: count * FRAME_BYTES]
        return frames


FADE_SAMPLES = 240  # 5 ms at 48 kHz: speech fading out before a pause


def _faded(stereo: bytes) -> bytes:
    """Stereo s16le whose last FADE_SAMPLES fall linearly to zero."""
    samples = np.frombuffer(stereo, dtype="<i2").reshape(-1, 2).astype(np.float32)
    count = min(FADE_SAMPLES, len(samples))
    if count:
        samples[-count:] *= np.linspace(1.0, 0.0, count, dtype=np.float32)[:, None]
    return np.rint(samples).astype("<i2").tobytes()


def pcm_frames(pcm: bytes) -> list[bytes]:
    """48 kHz mono s16le as Discord frames (stereo), the last one padded with silence."""
    mono = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2")
    stereo = np.repeat(mono, 2).tobytes()
    stereo += bytes(-len(stereo) % FRAME_BYTES)
    return [stereo[at : at + FRAME_BYTES] for at in range(0, len(stereo), FRAME_BYTES)]


class StreamingSource(discord.AudioSource):
    """An AudioSource fed from the event loop and read by discord.py's player thread.

    Before the first `prebuffer_frames` frames are queued it plays silence (unless the
    stream already finished); after that an empty queue is an underrun: one frame of silence,
    counted. `b''` is returned only once everything fed has been played and `finish()` was
    called, and from then on.
    """

    def __init__(self, prebuffer_frames: int = 3) -> None:
        self.prebuffer_frames = prebuffer_frames
        self._frames: collections.deque[bytes] = collections.deque()  # thread-safe ends
        self._finished = False
        self._cancelled = False
        self._started = False
        self.ended = threading.Event()
        self.underruns = 0
        self.longest_underrun = 0  # the most underrun frames in a row: the longest gap heard
        self._underrun_run = 0
        self.frames_played = 0
        self.reads = 0  # every read, silence too: shows the player thread is alive
        self.first_frame_at: float | None = None  # time.monotonic() of the first real frame
        # the last frames played, to play again after a link that was not carrying them
        self._played: collections.deque[bytes] = collections.deque(maxlen=REWIND_FRAMES)

    def feed(self, frames: list[bytes]) -> None:
        if not self._cancelled:
            self._frames.extend(frames)

    def finish(self) -> None:
        """No more frames will come; the source ends once the queue is played."""
        self._finished = True

    def cancel(self) -> None:
        """Drop what is queued, ignore what is fed later, and end at the next read."""
        self._cancelled = True
        self._finished = True
        self._frames.clear()

    @property
    def buffered_frames(self) -> int:
        return len(self._frames)

    @property
    def ready(self) -> bool:
        """Enough is buffered to start playing without an immediate underrun."""
        return self._finished or len(self._frames) >= self.prebuffer_frames

    def read(self) -> bytes:
        self.reads += 1
        if self.ended.is_set():
            return b""
        if self._cancelled:
            self.ended.set()
            return b""
        finished = self._finished  # read before popping: frames are fed before finish()
        if not self._started:
            if not (finished or len(self._frames) >= self.prebuffer_frames):
                return SILENCE
            self._started = True
        try:
            frame = self._frames.popleft()
        except IndexError:
            if finished:
                self.ended.set()
                return b""
            self.underruns += 1
            self._underrun_run += 1
            self.longest_underrun = max(self.longest_underrun, self._underrun_run)
            return SILENCE
        self._underrun_run = 0
        if self.first_frame_at is None:
            self.first_frame_at = time.monotonic()
        self.frames_played += 1
        self._played.append(frame)
        return frame

    def rewind(self, frames: int) -> int:
        """Queue the last `frames` played frames again (at most `REWIND_FRAMES`): they went to
        a voice link that was no longer carrying them. Returns how many."""
        count = min(frames, len(self._played))
        again = [self._played.pop() for _ in range(count)]  # newest first
        self._frames.extendleft(again)  # extendleft reverses: oldest ends up first
        return count

    def is_opus(self) -> bool:
        return False
