"""The speaking rate's stretcher: exact lengths, the pitch kept, streaming chunk by chunk,
and the rates the settings allow (0.5-2x, a clear error outside)."""

from __future__ import annotations

import numpy as np
import pytest

from bot.services.speech_plan import rate_of
from bot.storage.database import MemberSettings
from bot.storage.server_settings import SETTINGS, ServerSettings, SettingError, parse_rate
from bot.synthesis.tempo import Tempo, normal, stretch

RATE = 24_000
CHUNK = 1_920  # one pocket-tts frame of 80 ms


def sine(seconds: float, hz: float = 220.0) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def dominant_hz(audio: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(len(audio))))
    return float(np.fft.rfftfreq(len(audio), 1 / RATE)[np.argmax(spectrum)])


def streamed(audio: np.ndarray, tempo: Tempo) -> list[np.ndarray]:
    return [tempo.push(audio[at : at + CHUNK]) for at in range(0, len(audio), CHUNK)]


@pytest.mark.parametrize("rate", [0.5, 0.75, 1.5, 2.0])
def test_a_stream_is_rate_times_shorter_to_the_sample_and_keeps_its_pitch(rate: float) -> None:
    audio = sine(2.0)
    tempo = Tempo(rate)
    chunks = streamed(audio, tempo)
    out = np.concatenate([*chunks, tempo.finish()])
    assert len(out) == round(len(audio) / rate)
    assert sum(len(c) for c in chunks) > 0.8 * len(out)  # streamed, not held to the end
    assert len(chunks[0]) > 0  # the first chunk already gives audio
    assert abs(dominant_hz(out[2_400:-2_400]) - 220.0) < 5.0
    # steady loudness across the chunk joins: no gaps, no clicks
    middle = out[4_800:-4_800]
    envelope = [np.abs(middle[at : at + 240]).max() for at in range(0, len(middle) - 240, 240)]
    assert min(envelope) > 0.35 and max(envelope) < 0.65


def test_one_tempo_carries_across_unit_joins() -> None:
    """Two units through one stretcher are as long as their sum would be alone."""
    first, second = sine(0.96), sine(0.8, 330.0)
    tempo = Tempo(1.5)
    out = np.concatenate([*streamed(first, tempo), *streamed(second, tempo), tempo.finish()])
    assert len(out) == round((len(first) + len(second)) / 1.5)
    assert tempo.finish().size == 0  # finished once
    with pytest.raises(RuntimeError):
        tempo.push(first)


def test_a_whole_clip_and_the_normal_rate() -> None:
    clip = sine(1.0)
    assert len(stretch(clip, 2.0)) == RATE // 2
    assert stretch(clip, 1.0) is clip  # passthrough: no stretcher at all
    assert normal(1.0) and not normal(1.05)
    with pytest.raises(ValueError):
        Tempo(2.5)


@pytest.mark.parametrize(
    ("raw", "rate"), [("1.5", 1.5), ("0,75", 0.75), ("2x", 2.0), ("x0.5", 0.5), (" 1.234 ", 1.23)]
)
def test_rates_as_members_type_them(raw: str, rate: float) -> None:
    assert parse_rate(raw, "my_rate") == rate
    assert SETTINGS["speaking_rate"].parse(raw) == rate


@pytest.mark.parametrize("raw", ["0.49", "2.01", "3", "-1", "nan", "inf"])
def test_rates_outside_half_to_twice_are_refused_clearly(raw: str) -> None:
    with pytest.raises(SettingError, match=r"^my_rate goes from 0\.5 to 2\.0\.$"):
        parse_rate(raw, "my_rate")


@pytest.mark.parametrize("raw", ["fast", "", "1.5.1"])
def test_a_rate_that_is_not_a_number_is_refused_clearly(raw: str) -> None:
    with pytest.raises(SettingError, match=r"^speaking_rate is a number such as 1\.5\.$"):
        SETTINGS["speaking_rate"].parse(raw)


def test_the_members_rate_wins_over_the_servers() -> None:
    server = ServerSettings(1, speaking_rate=0.75)
    assert rate_of(MemberSettings(), None) == 1.0  # a DM
    assert rate_of(MemberSettings(), ServerSettings(1)) == 1.0
    assert rate_of(MemberSettings(), server) == 0.75
    assert rate_of(MemberSettings(rate=1.5), server) == 1.5
    assert SETTINGS["speaking_rate"].show(1.5) == "1.5×"
