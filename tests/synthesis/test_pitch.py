"""Pitch in the rate's stretcher: a sine rises by 2**(n/12), its length kept (or the rate's),
no stretcher at 1x and 0, and the pitches the settings allow (-6 to +6, a clear error
outside, in English and French)."""

from __future__ import annotations

import numpy as np
import pytest

from bot.i18n.translate import localize
from bot.services.speech_plan import pitch_of
from bot.storage.database import MemberSettings
from bot.storage.server_settings import SETTINGS, ServerSettings, SettingError, parse_pitch
from bot.synthesis.tempo import Tempo, normal, pitch_scale, stretch
from tests.synthesis.test_tempo import RATE, dominant_hz, sine, streamed


@pytest.mark.parametrize("semitones", [-6, -3, 2, 6])
@pytest.mark.parametrize("rate", [1.0, 1.5])
def test_a_sine_rises_by_the_semitones_and_keeps_the_rate(semitones: int, rate: float) -> None:
    audio = sine(2.0)
    tempo = Tempo(rate, semitones)
    chunks = streamed(audio, tempo)
    out = np.concatenate([*chunks, tempo.finish()])
    assert len(out) == round(len(audio) / rate)  # the rate's length, to the sample
    assert len(chunks[0]) > 0  # still streaming from the first chunk
    wanted = 220.0 * 2 ** (semitones / 12)
    assert abs(dominant_hz(out[2_400:-2_400]) - wanted) < 0.02 * wanted, semitones


def test_pitch_zero_and_normal_rate_run_no_stretcher() -> None:
    clip = sine(1.0)
    assert stretch(clip, 1.0, 0) is clip  # passthrough: no stretcher at all
    assert normal(1.0, 0) and not normal(1.0, 1) and not normal(1.5, 0)
    shifted = stretch(clip, 1.0, 6)
    assert len(shifted) == len(clip)
    assert abs(dominant_hz(shifted[2_400:-2_400]) - 220 * 2**0.5) < 5
    assert pitch_scale(12) == 2.0 and pitch_scale(0) == 1.0
    with pytest.raises(ValueError):
        Tempo(1.0, 7)


def test_the_formants_are_kept() -> None:
    """A voice-like tone (a 140 Hz buzz through a 1 kHz resonance) shifted up 6 semitones:
    its harmonics move up, its spectral envelope (the resonance) stays near 1 kHz; without
    keeping the formants it would move up too (to ~1.4 kHz)."""
    t = np.arange(2 * RATE) / RATE
    buzz = sum(
        np.sin(2 * np.pi * 140 * k * t) * np.exp(-(((140 * k - 1000) / 300) ** 2))
        for k in range(1, 40)
    )
    audio = (0.3 * buzz / np.abs(buzz).max()).astype(np.float32)

    def centroid(x: np.ndarray) -> float:
        spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
        freqs = np.fft.rfftfreq(len(x), 1 / RATE)
        return float((freqs * spectrum).sum() / spectrum.sum())

    before = centroid(audio[2_400:-2_400])
    after = centroid(stretch(audio, 1.0, 6)[2_400:-2_400])
    assert abs(after - before) < 0.15 * before, (before, after)


@pytest.mark.parametrize(
    ("raw", "pitch"),
    [("3", 3), ("+3", 3), ("-2", -2), ("\u22122", -2), (" 6 ", 6), ("-6", -6), ("0", 0)],
)
def test_pitches_as_members_type_them(raw: str, pitch: int) -> None:
    assert parse_pitch(raw, "my_pitch") == pitch
    assert SETTINGS["pitch"].parse(raw.replace("\u2212", "-")) == pitch


@pytest.mark.parametrize("raw", ["-7", "7", "12", "-100"])
def test_pitches_outside_six_semitones_are_refused_clearly(raw: str) -> None:
    with pytest.raises(SettingError, match=r"^my_pitch goes from -6 to 6\.$") as refused:
        parse_pitch(raw, "my_pitch")
    assert localize(refused.value.args[0], "fr") == "my_pitch va de -6 à 6."
    with pytest.raises(SettingError, match=r"^pitch goes from -6 to 6\.$"):
        SETTINGS["pitch"].parse(raw)


@pytest.mark.parametrize("raw", ["high", "1.5", "3 semitones"])
def test_a_pitch_that_is_not_a_whole_number_is_refused_clearly(raw: str) -> None:
    with pytest.raises(SettingError, match=r"^my_pitch is a whole number\.$"):
        parse_pitch(raw, "my_pitch")


def test_the_members_pitch_wins_over_the_servers() -> None:
    server = ServerSettings(1, pitch=-3)
    assert pitch_of(MemberSettings(), None) == 0  # a DM
    assert pitch_of(MemberSettings(), ServerSettings(1)) == 0
    assert pitch_of(MemberSettings(), server) == -3
    assert pitch_of(MemberSettings(pitch=4), server) == 4
    assert pitch_of(MemberSettings(pitch=0), server) == 0  # their own 0 wins too
    spec = SETTINGS["pitch"]
    assert (spec.default, spec.lo, spec.hi, spec.kind) == (0, -6, 6, "int")
    field = ServerSettings.__dataclass_fields__["pitch"]
    assert field.metadata["group"] == "speech"
