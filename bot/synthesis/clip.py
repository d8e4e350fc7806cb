"""Voice clips into model input (mono float32 at 24 kHz), the one place clips are read.

`decode` is the one reader: every clip from outside, whoever sent it, is bounded by its size
and by its own header (container, rate, channels, duration) before a sample is decoded, then
decoded a block at a time. Four kinds of clip go through it, each with its limits: a
member's upload (`prepare`: decode, then `trim_to_speech`), an operator's file by path
(`read_file`: DEFAULT_VOICE, the command line; `OPERATOR_LIMITS`, looser than a member's but
bounds all the same: a wrong path may name a film), the recordings kept in the store, and a
dictionary's sounds (`prepare_sound`, `SOUND_LIMITS`: 3 s, 200 KB, decoded straight to the
48 kHz they play at).

Pure functions on bytes, files and arrays (blocking: call them in a thread). Every refusal of
a clip is a `ClipError` whose message is shown to the member as is (`read_file` makes it a
`VoiceError` for the operator).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import soundfile
import soxr

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.model_errors import UnusableVoiceError

WINDOW_S = 0.02
ACCEPTED = tr("WAV, FLAC, MP3, Ogg Vorbis or Ogg Opus")
DAMAGED = tr("That audio file seems damaged or cut short. Please record it again.")
TOO_BIG = tr("That file is too big for me to process. Please send a shorter one.")
BLOCK_S = 1.0  # decode this much at a time


class ClipError(UserError):
    """A clip we cannot use; the message says why, politely."""


class ClipInfo(Protocol):
    """What `soundfile.info` tells of a file and we read (its own type is private)."""

    format: str
    subtype: str
    samplerate: int
    channels: int
    frames: int


@dataclass(frozen=True)
class ClipLimits:
    max_bytes: int = 10 * 1024 * 1024
    max_duration_s: float = 300.0  # of the decoded file
    min_rate: int = 8_000
    max_rate: int = 96_000
    max_channels: int = 2
    min_speech_s: float = 3.0
    max_speech_s: float = 60.0
    keep_s: float = 30.0  # the best this-many seconds are kept
    floor_db: float = -50.0  # below this RMS a 20 ms window is never speech
    range_db: float = 35.0  # ... nor when it is this far below the loudest window


# An operator's own file: a studio recording may be large, many-channelled or at a high rate,
# and is read whole (no speech limit short of its length); but it is bounded all the same.
OPERATOR_LIMITS = ClipLimits(
    max_bytes=128 * 1024 * 1024, max_rate=192_000, max_channels=8, max_speech_s=300.0
)
# A sound in the dictionary (/dict sound): a short clip played in place of a word, as it is.
SOUND_LIMITS = ClipLimits(max_bytes=200 * 1024, max_duration_s=3.0, max_speech_s=3.0)
SOUND_RATE = 48_000  # what Discord plays: a sound is resampled to it once, when stored


def check_size(size: int, limits: ClipLimits) -> None:
    if size > limits.max_bytes and limits.max_bytes < 1024 * 1024:  # a sound's: in KB
        raise ClipError(
            tr(
                "That file is {size:.0f} KB; the limit is {most:.0f} KB. Please send a shorter "
                "one.",
                size=size / 1024,
                most=limits.max_bytes / 1024,
            )
        )
    if size > limits.max_bytes:
        raise ClipError(
            tr(
                "That file is {size:.1f} MB; the limit is {most:.0f} MB. A minute of speech is "
                "plenty.",
                size=size / 1024 / 1024,
                most=limits.max_bytes / 1024 / 1024,
            )
        )
    if size == 0:
        raise ClipError(tr("That file is empty."))


def _truncated_wav(data: bytes) -> bool:
    """libsndfile silently reads a cut-off WAV; its RIFF header still tells the real size."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        return False
    declared = int.from_bytes(data[4:8], "little")
    return 0 < declared < 0xFFFF_FF00 and declared + 8 > len(data)


def _accepted(info: ClipInfo) -> bool:
    """The five containers we promise, as libsndfile recognised them from the bytes."""
    if info.format in ("WAV", "WAVEX", "FLAC", "MP3"):
        return True
    return info.format == "OGG" and info.subtype in ("VORBIS", "OPUS")


def _check_header(data: bytes, limits: ClipLimits) -> ClipInfo:
    """Rate, channels, frames and container from the file's own header, before decoding."""
    check_size(len(data), limits)
    if _truncated_wav(data):
        raise ClipError(DAMAGED)
    try:
        info: ClipInfo = soundfile.info(io.BytesIO(data))
    except (soundfile.LibsndfileError, RuntimeError, TypeError, ValueError) as error:
        raise ClipError(
            tr("That is not an audio file I can read. Please send {kinds}.", kinds=ACCEPTED)
        ) from error
    if not _accepted(info):
        raise ClipError(
            tr("That kind of audio file is not accepted here. Please send {kinds}.", kinds=ACCEPTED)
        )
    if info.samplerate <= 0 or info.frames <= 0 or info.channels <= 0:
        raise ClipError(tr("That audio file holds no sound, or it is damaged."))
    if not limits.min_rate <= info.samplerate <= limits.max_rate:
        raise ClipError(
            tr(
                "That recording's sample rate ({rate:,} Hz) is unusual; please send one between "
                "{lo:,} and {hi:,} Hz.",
                rate=info.samplerate,
                lo=limits.min_rate,
                hi=limits.max_rate,
            )
        )
    if info.channels > limits.max_channels:
        raise ClipError(
            tr(
                "That recording has {channels} channels; please send mono or stereo.",
                channels=info.channels,
            )
        )
    duration = info.frames / info.samplerate
    if duration > limits.max_duration_s and limits.max_duration_s < 60:  # a sound's: in seconds
        raise _too_long(duration, limits)
    if duration > limits.max_duration_s:
        raise ClipError(
            tr(
                "That recording is {minutes:.1f} minutes long; please send at most {most:.0f} "
                "minutes (3 to 60 seconds of speech is ideal).",
                minutes=duration / 60,
                most=limits.max_duration_s / 60,
            )
        )
    return info


def _too_long(seconds: float, limits: ClipLimits) -> ClipError:
    return ClipError(
        tr(
            "That recording is {seconds:.1f} s long; please send at most {most:.0f} seconds.",
            seconds=seconds,
            most=limits.max_duration_s,
        )
    )


NOT_FINITE = tr("That audio file seems damaged. Please record it again.")


def _decode_blocks(
    data: bytes, info: ClipInfo, limits: ClipLimits, out_rate: int = MODEL_RATE
) -> np.ndarray:
    """Decode a block at a time, mixing down and resampling (to `out_rate`) as we go: memory
    stays within one block plus the mono result, whatever the header promised.

    Float files are not bound to [-1, 1]: a mix exported unclipped peaks above 1.0, and a
    broken writer can store peaks of 1e20 (which reached the model and failed there). Such a
    file's scale is arbitrary, so scaling it to full scale loses nothing: a peak above 1.0 is
    normalised to 1.0, the waveform's shape kept. Only samples that carry no waveform are
    refused: NaN or infinite ones, in the file or after mixing its channels down."""
    rate = info.samplerate
    speech = _SpeechCount(limits, out_rate)
    block = max(1024, int(rate * BLOCK_S))
    most = int(limits.max_duration_s * rate) + block  # a header may understate the length
    resampler = soxr.ResampleStream(rate, out_rate, 1, dtype="float32")
    pieces: list[np.ndarray] = []
    frames = 0
    peak = 1.0  # the loudest mixed-down sample, when louder than full scale
    with soundfile.SoundFile(io.BytesIO(data)) as source:
        while True:
            chunk = source.read(block, dtype="float32", always_2d=True)
            last = len(chunk) < block
            frames += len(chunk)
            if frames > most:
                raise ClipError(DAMAGED)
            with np.errstate(over="ignore"):  # an overflow is refused just below
                mono = (
                    chunk.mean(axis=1, dtype=np.float32) if len(chunk) else np.zeros(0, np.float32)
                )
            if not (np.all(np.isfinite(chunk)) and np.all(np.isfinite(mono))):
                raise ClipError(NOT_FINITE)
            if len(mono):
                peak = max(peak, float(np.abs(mono).max()))
            pieces.append(resampler.resample_chunk(mono, last=last))
            speech.add(pieces[-1], peak)
            if last:
                break
    if frames < 0.98 * info.frames:
        raise ClipError(DAMAGED)
    audio = np.ascontiguousarray(np.concatenate(pieces), dtype=np.float32)
    if not np.all(np.isfinite(audio)):  # resampling a peak near float32's largest overflowed
        raise ClipError(NOT_FINITE)
    if peak > 1.0 and len(audio):  # (the resampled peak: its filter may ring a little above)
        audio /= np.float32(max(peak, float(np.abs(audio).max())))
    return audio


def _too_much_speech(seconds: float, limits: ClipLimits) -> ClipError:
    return ClipError(
        tr(
            "That clip has {seconds:.0f} s of speech; please send at most {most:.0f} seconds (10 "
            "to 30 seconds works best).",
            seconds=seconds,
            most=limits.max_speech_s,
        )
    )


class _SpeechCount:
    """While decoding, the 20 ms windows that are speech whatever comes later, so that a
    clip with too much speech is refused as soon as that is certain, not after decoding all
    of a 5-minute file.

    `trim_to_speech` calls a window speech above max(floor_db, loudest window - range_db),
    on the clip scaled to at most full scale (0 dB), so that threshold is never above
    max(floor_db, -range_db): a window louder than that, relative to the peak so far, is
    speech. (Only a float file whose peak later grows past the one seen so far could make
    it quieter, and such a file is then refused early when a full decode might have let it
    pass: a loss nobody recording a voice meets.)"""

    def __init__(self, limits: ClipLimits, rate: int = MODEL_RATE) -> None:
        self.limits = limits
        self.size = int(WINDOW_S * rate)
        self.sure_db = max(limits.floor_db, -limits.range_db)
        self.windows = 0
        self._rest = np.zeros(0, np.float32)  # the part of a window left by the last piece

    def add(self, samples: np.ndarray, peak: float) -> None:
        """Count `samples` (the next ones); refuse once it is surely too much."""
        samples = np.concatenate([self._rest, samples])
        count = len(samples) // self.size
        self._rest = samples[count * self.size :]
        if count == 0:
            return
        windows = samples[: count * self.size].reshape(count, self.size).astype(np.float64)
        windows -= windows.mean(axis=1, keepdims=True)
        rms_db = 10 * np.log10(np.mean(windows**2, axis=1) + 1e-12) - 20 * np.log10(peak)
        self.windows += int(np.count_nonzero(rms_db > self.sure_db))
        seconds = self.windows * WINDOW_S
        if seconds > self.limits.max_speech_s + 0.5:  # (said as one more whole second)
            raise _too_much_speech(seconds, self.limits)


def decode(data: bytes, limits: ClipLimits, rate: int = MODEL_RATE) -> np.ndarray:
    """An accepted file's bytes to mono float32 at `rate` (24 kHz: the model's): refused by
    their size and header before decoding, and while decoding as soon as they prove longer
    than the header said, hold samples that are no waveform, or surely too much speech."""
    info = _check_header(data, limits)
    try:
        return _decode_blocks(data, info, limits, rate)
    except (soundfile.LibsndfileError, RuntimeError, ValueError) as error:
        raise ClipError(DAMAGED) from error
    except MemoryError as error:
        raise ClipError(TOO_BIG) from error


def read_file(path: Path, limits: ClipLimits = OPERATOR_LIMITS) -> np.ndarray:
    """An operator's audio file as mono float32 at 24 kHz, through `decode`; a `VoiceError`
    naming the file when it cannot be used."""
    try:
        return decode(_read_at_most(path, limits), limits)
    except ClipError as error:
        raise UnusableVoiceError(f"{path.name} cannot be used as a voice: {error}") from error


def _read_at_most(path: Path, limits: ClipLimits) -> bytes:
    """The file's bytes, refused by its size before any is read, never more than the limit
    (one byte more: a file that grew since is refused too)."""
    try:
        check_size(path.stat().st_size, limits)
        with path.open("rb") as file:
            return file.read(limits.max_bytes + 1)
    except OSError as error:
        raise UnusableVoiceError(
            f"{path.name} cannot be read: {error.strerror or error}"
        ) from error


def speech_windows(samples: np.ndarray, limits: ClipLimits, rate: int = MODEL_RATE) -> np.ndarray:
    """A boolean per 20 ms window: does it carry speech-level signal?"""
    size = int(WINDOW_S * rate)
    count = len(samples) // size
    if count == 0:
        return np.zeros(0, dtype=bool)
    windows = samples[: count * size].reshape(count, size).astype(np.float64)
    windows = windows - windows.mean(axis=1, keepdims=True)  # ignore DC offset
    rms_db = 10 * np.log10(np.mean(windows**2, axis=1) + 1e-12)
    threshold = max(limits.floor_db, float(rms_db.max()) - limits.range_db)
    speech: np.ndarray = rms_db > threshold
    return speech


def trim_to_speech(samples: np.ndarray, limits: ClipLimits, rate: int = MODEL_RATE) -> np.ndarray:
    """Cut leading and trailing silence; require enough speech; keep the best `keep_s`."""
    active = speech_windows(samples, limits, rate)
    size = int(WINDOW_S * rate)
    speech_s = float(active.sum()) * WINDOW_S
    if speech_s == 0:
        raise ClipError(tr("I could not hear any speech in that clip: it sounds silent."))
    if speech_s < limits.min_speech_s:
        raise ClipError(
            tr(
                "I heard only {seconds:.1f} s of speech; please send at least {least:.0f} seconds "
                "of you talking.",
                seconds=speech_s,
                least=limits.min_speech_s,
            )
        )
    if speech_s > limits.max_speech_s:
        raise _too_much_speech(speech_s, limits)
    indices = np.flatnonzero(active)
    margin = int(0.1 / WINDOW_S)  # keep 100 ms around the speech
    first = max(0, indices[0] - margin)
    last = min(len(active), indices[-1] + 1 + margin)
    keep = int(limits.keep_s / WINDOW_S)
    if last - first > keep:  # the window of `keep_s` holding the most speech
        sums = np.convolve(active[first:last].astype(np.int32), np.ones(keep, np.int32), "valid")
        first += int(np.argmax(sums))
        last = first + keep
    return samples[first * size : last * size].copy()


def prepare(data: bytes, limits: ClipLimits) -> np.ndarray:
    """Bytes of an uploaded file to the trimmed mono 24 kHz clip that a voice is made from."""
    return trim_to_speech(decode(data, limits), limits)


def prepare_sound(data: bytes, limits: ClipLimits = SOUND_LIMITS) -> bytes:
    """Bytes of an uploaded sound to what plays: 48 kHz mono s16le PCM, at most
    `max_duration_s` long (a header that understated the length is refused once decoded)."""
    audio = decode(data, limits, SOUND_RATE)
    if len(audio) > limits.max_duration_s * SOUND_RATE + int(WINDOW_S * SOUND_RATE):
        raise _too_long(len(audio) / SOUND_RATE, limits)
    if not np.any(np.abs(audio) >= 1 / 32768):
        raise ClipError(tr("That sound is silent."))
    # x 32768, as the reader divided: a sound exported as FLAC and imported comes back the same
    return np.clip(np.rint(audio * 32768.0), -32768, 32767).astype("<i2").tobytes()
