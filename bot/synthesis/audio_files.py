"""Model audio as files: a `.wav` (16-bit PCM) or `.ogg` (Opus) of mono float samples, for
/tts replies and the `tts` command. No discord: the Discord side is
`bot/playback/audio_source.py`."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import soundfile

MODEL_RATE = 24_000  # Hz: what every model speaks and hears; the one definition
FILE_FORMATS = {".wav": ("WAV", "PCM_16"), ".ogg": ("OGG", "OPUS"), ".opus": ("OGG", "OPUS")}


def encode_audio(samples: np.ndarray, suffix: str, rate: int = MODEL_RATE) -> bytes:
    """Mono float samples as a `.wav` (16-bit PCM) or `.ogg` (Opus) file's bytes."""
    try:
        container, subtype = FILE_FORMATS[suffix.lower()]
    except KeyError:
        raise ValueError(f"unsupported audio file type {suffix!r}: use .wav or .ogg") from None
    buffer = io.BytesIO()
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 1.0)
    soundfile.write(buffer, clipped, rate, format=container, subtype=subtype)
    return buffer.getvalue()


def write_audio_file(path: Path, samples: np.ndarray, rate: int = MODEL_RATE) -> None:
    """Write atomically: a temporary file renamed into place (blocking; call in a thread)."""
    data = encode_audio(samples, path.suffix, rate)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
