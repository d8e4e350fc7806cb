"""The service's audio formats, encoded as the audio comes (24 kHz mono).

`pcm` is OpenAI's raw 16-bit little-endian; `wav` the same behind a header whose sizes say
"unknown" (0xFFFFFFFF), as OpenAI streams it; `opus` (in Ogg) and `mp3` are libsndfile's
encoders (soundfile), writing into a file that only goes forward: what the encoder goes back
to rewrite at its end (MP3's LAME header) was already sent. Ogg Opus comes in pages (about
half a second of audio each). MP3 is at a constant bit rate: without the LAME header's
length, a reader can only tell a stream's length from its bit rate, and libsndfile's reader
(python-soundfile) read 9.29 s of an 11.04 s variable-rate answer; every frame the same size,
it reads it whole. `flac` comes whole once the speech is made (kept in a temporary file
meanwhile, not in memory): a FLAC stream whose header leaves its length unknown is valid,
but libsndfile's own reader refuses it.
"""

from __future__ import annotations

import io
import struct
import tempfile
from typing import Protocol

import numpy as np
import soundfile

from bot.synthesis.audio_files import MODEL_RATE

MEDIA_TYPES = {
    "pcm": "audio/pcm",
    "wav": "audio/wav",
    "opus": "audio/ogg",
    "flac": "audio/flac",
    "mp3": "audio/mpeg",
}
_LIBSNDFILE = {
    "opus": ("OGG", "OPUS"),
    "flac": ("FLAC", "PCM_16"),
    "mp3": ("MP3", "MPEG_LAYER_III"),
}
# (compression level, bit rate mode) per format: MP3 at a constant 64 kbit/s (24 kHz mono
# speech; libsndfile's level 0.6 of MPEG-2's 8-160 kbit/s)
_SETTINGS: dict[str, tuple[float | None, str | None]] = {"mp3": (0.6, "CONSTANT")}


class Encoder(Protocol):
    def push(self, samples: np.ndarray) -> bytes: ...

    def finish(self) -> bytes:
        """The rest of the answer, a piece a call: b"" once all of it is given."""
        ...

    def close(self) -> None:
        """What it holds let go (a stream that ends early)."""
        ...


def pcm16(samples: np.ndarray) -> bytes:
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    return (clipped * 32767.0).astype("<i2").tobytes()


class PcmEncoder:
    def push(self, samples: np.ndarray) -> bytes:
        return pcm16(samples)

    def finish(self) -> bytes:
        return b""

    def close(self) -> None:
        pass


class WavEncoder(PcmEncoder):
    """A WAV header of unknown length, then 16-bit PCM."""

    def __init__(self) -> None:
        self._header: bytes | None = struct.pack(
            "<4sI4s4sIHHIIHH4sI",
            b"RIFF",
            0xFFFFFFFF,
            b"WAVE",
            b"fmt ",
            16,
            1,
            1,
            MODEL_RATE,
            MODEL_RATE * 2,
            2,
            16,
            b"data",
            0xFFFFFFFF,
        )

    def push(self, samples: np.ndarray) -> bytes:
        header, self._header = self._header or b"", None
        return header + pcm16(samples)

    def finish(self) -> bytes:
        header, self._header = self._header or b"", None
        return header


class _ForwardFile(io.RawIOBase):
    """A file libsndfile writes to, whose new bytes are taken as they come. A write over
    bytes already taken is dropped (an encoder's late header update)."""

    def __init__(self) -> None:
        self._pos = 0
        self._taken = 0
        self._pending = bytearray()

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    # typed narrower than RawIOBase.write (any buffer): soundfile passes a cffi buffer,
    # which bytes(data) copies as it would any other
    def write(self, data: bytes) -> int:  # type: ignore[override]
        data, count = bytes(data), len(data)
        start = self._pos - self._taken
        if start < 0:  # over what was taken already: that part is dropped
            data, start = data[-start:], 0
        if data:
            end = start + len(data)
            if end > len(self._pending):
                self._pending.extend(b"\0" * (end - len(self._pending)))
            self._pending[start:end] = data
        self._pos += count
        return count

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        end = self._taken + len(self._pending)
        self._pos = {io.SEEK_SET: offset, io.SEEK_CUR: self._pos + offset}.get(whence, end + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def take(self) -> bytes:
        data = bytes(self._pending)
        self._taken += len(data)
        self._pending.clear()
        return data


class SoundfileEncoder:
    def __init__(self, name: str) -> None:
        container, subtype = _LIBSNDFILE[name]
        level, mode = _SETTINGS.get(name, (None, None))
        self._file = _ForwardFile()
        self._sound = soundfile.SoundFile(
            self._file,
            "w",
            MODEL_RATE,
            1,
            format=container,
            subtype=subtype,
            compression_level=level,
            bitrate_mode=mode,
        )

    def push(self, samples: np.ndarray) -> bytes:
        self._sound.write(np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0))
        return self._file.take()

    def finish(self) -> bytes:
        self._sound.close()  # (a second close does nothing: then nothing is left)
        return self._file.take()

    def close(self) -> None:
        self._sound.close()


class FlacEncoder:
    """The whole speech, encoded as it comes into a temporary file (libsndfile writes its
    length into the header at the end), sent once the speech is made, a piece at a time:
    never the whole answer in memory (a 4,096-character answer is minutes of audio)."""

    PIECE = 64 * 1024

    def __init__(self) -> None:
        # closed by finish() or close(): the file lives as long as the stream
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (unlinked: gone when closed)
        self._sound = soundfile.SoundFile(
            self._file, "w", MODEL_RATE, 1, format="FLAC", subtype="PCM_16"
        )

    def push(self, samples: np.ndarray) -> bytes:
        self._sound.write(np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0))
        return b""

    def finish(self) -> bytes:
        if not self._sound.closed:
            self._sound.close()
            self._file.seek(0)
        if self._file.closed:
            return b""
        piece = self._file.read(self.PIECE)
        if not piece:
            self._file.close()
        return piece

    def close(self) -> None:
        self._sound.close()
        self._file.close()


def encoder_for(name: str) -> Encoder:
    """An encoder of `name` (one of MEDIA_TYPES); KeyError for another."""
    if name == "pcm":
        return PcmEncoder()
    if name == "wav":
        return WavEncoder()
    if name == "flac":
        return FlacEncoder()
    if name in _LIBSNDFILE:
        return SoundfileEncoder(name)
    raise KeyError(name)


def can_encode(name: str) -> bool:
    """libsndfile here writes this format (MP3 needs a libsndfile built with LAME)."""
    if name in ("pcm", "wav"):
        return True
    container, subtype = _LIBSNDFILE[name]
    return subtype in soundfile.available_subtypes(container)
