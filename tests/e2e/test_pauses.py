"""Pauses end to end (issue 50): `/say` with `[pause 2s]` between two sentences is heard by the
fake Discord (its decoded Opus) as speech, a silence of the asked length (within 40 ms: two
frames), and speech again, in one playback, without an underrun.

What is heard of a frame is its sound less its slow trend (a quadratic over the 20 ms frame):
the tests' random-weight model speaks with a large DC offset, and Opus's encoder, which
filters DC out, turns its stop into a slow decay of a few hundred milliseconds, below what an
ear hears (the bot's own frames there are exact zeros); the speech itself is broadband."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import RunningBot
from tests.e2e.test_speech import packets_settled, speaker_of
from tests.fakediscord import FakeDiscord
from tests.fakediscord.voice_udp import QUIET_PEAK

VOICE = FakeDiscord.VOICE_ID


def audible_peak(pcm: bytes) -> float:
    """A decoded frame's loudest sample once its inaudible slow trend is taken out."""
    samples = np.frombuffer(pcm, dtype="<i2").reshape(-1, 2)[:, 0].astype(np.float64)
    if not samples.size:
        return 0.0
    at = np.arange(samples.size)
    return float(np.abs(samples - np.polyval(np.polyfit(at, samples, 2), at)).max())


@pytest.mark.timing
@pytest.mark.parametrize("seconds", [2.0, 0.6])
async def test_a_pause_is_heard_as_silence_of_its_length(
    running_bot: RunningBot, seconds: float
) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)
    heard = len(fake.udp.packets)
    text = f"Hello there. [pause {seconds:g}s] Bye now."
    reply = await (await fake.interaction("say", {"text": text})).wait_final()
    assert reply["content"] == f"Speaking in <#{VOICE}>."
    speaker = speaker_of(running_bot)
    await fake.wait_for(lambda: len(speaker.history) == 1, 60, "the utterance to end")
    await packets_settled(fake)
    result = speaker.history[0]
    assert result.error is None and not result.cancelled and result.underruns == 0
    assert not fake.udp.errors
    quiet = [p.is_silence or audible_peak(p.pcm) < QUIET_PEAK for p in fake.udp.packets[heard:]]
    first, last = quiet.index(False), len(quiet) - 1 - quiet[::-1].index(False)
    runs, count = [], 0
    for silent in quiet[first : last + 1]:
        if silent:
            count += 1
        elif count:
            runs.append(count)
            count = 0
    assert len(runs) == 1, runs  # one silence between the two voiced parts, nowhere else
    # within two 20 ms frames, counted in frames (98 * 0.02 is a hair over 1.96 in floats)
    assert abs(runs[0] - round(seconds / 0.02)) <= 2, runs
