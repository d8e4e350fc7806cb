"""Generated recordings for the voice tests: speech-like bursts, silence, and file encodings."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import soundfile

FORMATS = {  # name -> (soundfile format, subtype, sample rate)
    "wav": ("WAV", "PCM_16", 44_100),
    "flac": ("FLAC", "PCM_16", 48_000),
    "mp3": ("MP3", "MPEG_LAYER_III", 44_100),
    "ogg": ("OGG", "VORBIS", 44_100),
    "opus": ("OGG", "OPUS", 48_000),  # what Discord voice messages are
}


def speech_like(
    speech_s: float, rate: int = 24_000, lead_s: float = 1.0, tail_s: float = 1.0, seed: int = 0
) -> np.ndarray:
    """Syllable-like bursts of a voiced sound for `speech_s` seconds, between quiet parts."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(speech_s * rate)) / rate
    pitch = 140 + 20 * np.sin(2 * np.pi * 0.7 * t)
    phase = 2 * np.pi * np.cumsum(pitch) / rate
    voiced = sum(np.sin(k * phase) / k for k in range(1, 6))
    syllables = 0.6 + 0.4 * np.sin(2 * np.pi * 4 * t)
    speech = 0.2 * voiced * syllables + 0.01 * rng.standard_normal(len(t))
    quiet = lambda s: 3e-4 * rng.standard_normal(int(s * rate))  # noqa: E731  (-70 dBFS)
    return np.concatenate([quiet(lead_s), speech, quiet(tail_s)]).astype(np.float32)


def encode(samples: np.ndarray, kind: str, rate: int = 24_000) -> bytes:
    container, subtype, out_rate = FORMATS[kind]
    if out_rate != rate:
        import soxr

        samples = soxr.resample(samples, rate, out_rate)
    buffer = io.BytesIO()
    soundfile.write(buffer, np.clip(samples, -1, 1), out_rate, format=container, subtype=subtype)
    return buffer.getvalue()


def audio_file(
    seconds: float,
    rate: int,
    channels: int,
    fmt: str = "FLAC",
    subtype: str = "PCM_16",
    loud: bool = False,
) -> bytes:
    """A file of `seconds` written a block at a time (never the whole signal in memory):
    silence, or with `loud` speech-like sound. Silence makes a long file in kilobytes and at
    once, for a limit read from the file's header (its length) before anything is decoded."""
    buffer = io.BytesIO()
    frames, block = int(seconds * rate), rate
    with soundfile.SoundFile(buffer, "w", rate, channels, subtype, format=fmt) as out:
        for start in range(0, frames, block):
            n = min(block, frames - start)
            signal = np.zeros((n, channels), np.float32)
            if loud:
                signal += speech_like(n / rate, rate, 0, 0)[:n, None]
            out.write(signal)
    return buffer.getvalue()


def make_clip(path: Path, seconds: float = 3.0, rate: int = 24_000) -> Path:
    t = np.arange(int(seconds * rate)) / rate
    rng = np.random.default_rng(1)
    voice = 0.3 * np.sin(2 * np.pi * 180 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
    soundfile.write(
        str(path), (voice + 0.02 * rng.standard_normal(len(t))).astype(np.float32), rate
    )
    return path
