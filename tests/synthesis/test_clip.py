from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from bot.synthesis.clip import (
    OPERATOR_LIMITS,
    ClipError,
    ClipLimits,
    decode,
    prepare,
    read_file,
    trim_to_speech,
)
from bot.synthesis.model_errors import UnusableVoiceError
from tests.audio_samples import FORMATS, audio_file, encode, speech_like

LIMITS = ClipLimits()


def half(data: bytes) -> bytes:
    return data[: len(data) // 2]


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_every_accepted_format_decodes_to_mono_24k(kind: str) -> None:
    audio = decode(encode(speech_like(4.0), kind), LIMITS)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert abs(len(audio) / 24_000 - 6.0) < 0.15  # 1 s + 4 s + 1 s


def test_stereo_is_mixed_to_mono() -> None:
    import io

    import soundfile

    mono = speech_like(4.0)
    buffer = io.BytesIO()
    soundfile.write(buffer, np.stack([mono, mono], axis=1), 24_000, format="WAV")
    assert np.allclose(decode(buffer.getvalue(), LIMITS), mono, atol=1e-4)


def test_silence_is_trimmed_and_the_speech_kept() -> None:
    clip = trim_to_speech(speech_like(5.0, lead_s=2.0, tail_s=3.0), LIMITS)
    assert 5.0 <= len(clip) / 24_000 <= 5.3


def test_the_best_30_seconds_are_kept() -> None:
    clip = trim_to_speech(speech_like(50.0), LIMITS)
    assert len(clip) / 24_000 == pytest.approx(30.0, abs=0.05)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (lambda: b"hello, this is not audio at all" * 10, "not an audio file"),
        (lambda: b"", "empty"),
        (lambda: half(encode(speech_like(4.0), "wav")), "damaged or cut short"),
        (lambda: half(encode(speech_like(4.0), "flac")), "damaged or cut short"),
        (lambda: half(encode(speech_like(4.0), "mp3")), "damaged or cut short"),
        (lambda: encode(speech_like(0.5), "wav"), "only 0.5 s of speech"),
        (lambda: encode(np.zeros(24_000 * 5, np.float32), "wav"), "sounds silent"),
        (lambda: encode(speech_like(70.0, lead_s=0, tail_s=0), "flac"), "at most 60 seconds"),
        pytest.param(
            lambda: audio_file(600.0, 8_000, 1, "MP3", "MPEG_LAYER_III", loud=True),
            "10.0 minutes long",
            marks=pytest.mark.slow,  # 2 s to encode at 8 kHz (12 s at 44.1 kHz)
        ),
        (lambda: bytes(11 * 1024 * 1024), "the limit is 10 MB"),
    ],
    ids=[
        "text",
        "empty",
        "cut-wav",
        "cut-flac",
        "cut-mp3",
        "half-second",
        "silence",
        "70s",
        "10min",
        "11MB",
    ],
)
def test_bad_clips_are_refused_politely(data: Callable[[], bytes], message: str) -> None:
    """(Each file is made when its test runs: at collection, in every worker, they took 12 s.)"""
    with pytest.raises(ClipError, match=message):
        prepare(data(), LIMITS)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (audio_file(2.0, 192_000, 1), "sample rate"),
        (audio_file(2.0, 655_350, 1), "sample rate"),
        (audio_file(2.0, 4_000, 1), "sample rate"),
        (audio_file(2.0, 48_000, 8), "8 channels"),
        (audio_file(2.0, 24_000, 1, "AIFF"), "not accepted"),
        (audio_file(2.0, 24_000, 1, "CAF"), "not accepted"),
        (audio_file(2.0, 24_000, 1, "W64"), "not accepted"),
    ],
    ids=["192kHz", "655kHz", "4kHz", "8ch", "aiff", "caf", "w64"],
)
def test_absurd_headers_and_other_containers_are_refused_before_decoding(
    data: bytes, message: str
) -> None:
    with pytest.raises(ClipError, match=message):
        decode(data, LIMITS)


def test_the_container_is_judged_by_the_bytes() -> None:
    aiff = audio_file(4.0, 24_000, 1, "AIFF", loud=True)
    with pytest.raises(ClipError, match="not accepted"):
        prepare(aiff, LIMITS)  # whatever name or content type the upload claimed


def test_decoding_memory_is_bounded_by_blocks() -> None:
    """120 s of 96 kHz stereo: decoded whole it is 92 MB of float32; in blocks the peak is
    the 24 kHz mono result (11.5 MB) plus a block."""
    import tracemalloc

    data = audio_file(120.0, 96_000, 2)
    tracemalloc.start()
    try:
        audio = decode(data, LIMITS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert abs(len(audio) / 24_000 - 120.0) < 0.05
    assert peak < 40 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"


def _float_wav(samples: np.ndarray, rate: int = 24_000) -> bytes:
    import io

    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, samples, rate, format="WAV", subtype="FLOAT")
    return buffer.getvalue()


@pytest.mark.parametrize("peak", [4.0, 1e20, 1e37])
def test_a_float_file_louder_than_full_scale_is_normalised(peak: float) -> None:
    """Float WAVs are not bound to [-1, 1]: an absurd peak (1e20 once reached the model and
    failed there with an error id) is scaled to full scale, its shape kept."""
    speech = speech_like(4.0)
    loud = (speech / np.abs(speech).max()).astype(np.float32) * np.float32(peak)
    clip = prepare(_float_wav(loud.astype(np.float32)), LIMITS)
    assert np.all(np.isfinite(clip))
    assert 0.9 <= float(np.abs(clip).max()) <= 1.0
    quiet = prepare(_float_wav(speech / np.abs(speech).max()), LIMITS)
    assert np.allclose(clip, quiet, atol=1e-3)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_float_file_with_non_finite_samples_is_refused(bad: float) -> None:
    samples = speech_like(4.0)
    samples[30_000] = bad
    with pytest.raises(ClipError, match="damaged"):
        prepare(_float_wav(samples), LIMITS)


def test_a_float_file_whose_channels_overflow_when_mixed_is_refused() -> None:
    """Two channels near float32's largest value sum to infinity: no waveform is left."""
    speech = speech_like(4.0)
    huge = (speech / np.abs(speech).max()).astype(np.float32) * np.float32(3e38)
    assert np.all(np.isfinite(huge))
    with pytest.raises(ClipError, match="damaged"):
        prepare(_float_wav(np.stack([huge, huge], axis=1).astype(np.float32)), LIMITS)


@pytest.mark.slow
@pytest.mark.slow
def test_decoding_stops_once_there_is_surely_too_much_speech() -> None:
    """Four 299 s files of speech took 9.8 s of CPU, each refused only after its whole
    decode: decoding now stops a second past the 60 s limit (the reply says how far it got)."""
    import io

    import soundfile

    buffer = io.BytesIO()
    soundfile.write(buffer, speech_like(299.0, lead_s=0, tail_s=0), 24_000, format="WAV")
    limits = ClipLimits(max_bytes=20 * 1024 * 1024)
    with pytest.raises(ClipError, match="has 61 s of speech; please send at most 60 seconds"):
        prepare(buffer.getvalue(), limits)


def test_a_clip_just_within_the_speech_limit_is_kept_whole() -> None:
    clip = prepare(encode(speech_like(59.0, lead_s=0.5, tail_s=0.5), "flac"), LIMITS)
    assert len(clip) / 24_000 == pytest.approx(30.0, abs=0.05)  # the best 30 s of it


def test_an_operators_file_is_read_whole_through_the_same_reader(tmp_path: Path) -> None:
    """DEFAULT_VOICE and the command line's clips: no speech limits, any accepted format."""
    path = tmp_path / "voice.flac"
    path.write_bytes(encode(speech_like(90.0), "flac"))  # more speech than a member may send
    audio = read_file(path)
    assert audio.dtype == np.float32 and audio.ndim == 1
    assert np.array_equal(audio, decode(path.read_bytes(), OPERATOR_LIMITS))
    assert abs(len(audio) / 24_000 - 92.0) < 0.15


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            lambda: b"hello, this is not audio at all" * 10,
            "voice.wav cannot be used as a voice: That is not an audio file",
        ),
        (
            lambda: audio_file(600.0, 8_000, 1),
            "voice.wav cannot be used as a voice: That recording is 10.0 minutes long",
        ),
        (lambda: audio_file(2.0, 24_000, 1, "AIFF"), "not accepted"),
        (lambda: audio_file(2.0, 384_000, 1), "sample rate"),
    ],
    ids=["text", "10min", "aiff", "384kHz"],
)
def test_an_operators_file_is_bounded_before_decoding(
    tmp_path: Path, data: Callable[[], bytes], message: str
) -> None:
    path = tmp_path / "voice.wav"
    path.write_bytes(data())
    with pytest.raises(UnusableVoiceError, match=message):
        read_file(path)


def test_an_operators_file_over_the_size_bound_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "film.wav"
    path.write_bytes(encode(speech_like(30.0), "wav"))  # 2.7 MB
    with pytest.raises(
        UnusableVoiceError,
        match=r"film\.wav cannot be used as a voice: That file is "
        r"2\.7 MB; the limit is 1 MB",
    ):
        read_file(path, ClipLimits(max_bytes=1024 * 1024))
    with pytest.raises(UnusableVoiceError, match=r"missing\.wav cannot be read"):
        read_file(tmp_path / "missing.wav")
