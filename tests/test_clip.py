import numpy as np
import pytest

from bot.clip import ClipError, ClipLimits, decode, prepare, trim_to_speech
from tests.audio_samples import FORMATS, encode, speech_like

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
        (b"hello, this is not audio at all" * 10, "not an audio file"),
        (b"", "empty"),
        (half(encode(speech_like(4.0), "wav")), "damaged or cut short"),
        (half(encode(speech_like(4.0), "flac")), "damaged or cut short"),
        (half(encode(speech_like(4.0), "mp3")), "damaged or cut short"),
        (encode(speech_like(0.5), "wav"), "only 0.5 s of speech"),
        (encode(np.zeros(24_000 * 5, np.float32), "wav"), "sounds silent"),
        (encode(speech_like(70.0, lead_s=0, tail_s=0), "flac"), "at most 60 seconds"),
        (encode(speech_like(600.0, lead_s=0, tail_s=0), "mp3"), "10.0 minutes long"),
        (bytes(11 * 1024 * 1024), "the limit is 10 MB"),
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
def test_bad_clips_are_refused_politely(data: bytes, message: str) -> None:
    with pytest.raises(ClipError, match=message):
        prepare(data, LIMITS)
