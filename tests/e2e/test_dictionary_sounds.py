"""A sound in the dictionary end to end: an admin attaches a clip to a word with /dict sound
(the file served by the fake's CDN, as Discord serves attachments), then a message with the
word is read aloud: what the fake Discord hears (its decoded Opus) is speech, the clip's tone,
speech, in that order, in the one message's playback."""

from __future__ import annotations

import numpy as np

from tests.audio_samples import encode
from tests.conftest import RunningBot
from tests.e2e.test_autoread import ADMIN, outcome, setup_read_channel, speaker
from tests.e2e.test_speech import packets_settled
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
TONE_HZ = 1_000.0
FRAME = 960  # 20 ms at 48 kHz
FREQS = np.fft.rfftfreq(FRAME, 1 / 48_000)
NEAR_TONE = np.abs(FREQS - TONE_HZ) <= 100


def tone(seconds: float, rate: int = 48_000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * TONE_HZ * t)).astype(np.float32)


def kind(pcm: bytes) -> str:
    """A heard 20 ms frame: "t" the tone (nearly all its energy within 100 Hz of it), "s"
    other sound (the tests' model says a hiss), "" silence or a frame of both (a join)."""
    samples = np.frombuffer(pcm, dtype="<i2").reshape(-1, 2)[:, 0] / 32768.0
    power = np.abs(np.fft.rfft(samples * np.hanning(len(samples)))) ** 2
    if len(samples) != FRAME or np.sqrt(np.mean(samples**2)) < 1e-3:
        return ""
    share = power[NEAR_TONE].sum() / power.sum()
    return "t" if share > 0.9 else "s" if share < 0.3 else ""


async def test_a_words_sound_plays_between_the_speech_of_a_message(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    clip = fake.attachment("boom.wav", encode(tone(0.5), "wav", rate=48_000))
    answer = await (
        await fake.interaction("dict sound", {"word": "Boom", "clip": clip}, permissions=ADMIN)
    ).wait_final()
    assert answer["content"] == (
        "“Boom” now plays your sound (0.5 s) where it is written as a whole word."
    )
    listed = await (await fake.interaction("dictionary list", {})).wait_final()
    assert "• Boom → 🔊 a sound (0.5 s)" in listed["content"]

    known = running_bot.bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
    before = len(known.history) if known is not None else 0
    heard = len(fake.udp.packets)
    message = await fake.post("alice", "Here comes the big one, BOOM, and that was it.")
    assert await outcome(running_bot, message) == "read"
    await fake.wait_for(lambda: len(speaker(running_bot).history) > before, 60, "reading")
    await packets_settled(fake)
    result = speaker(running_bot).history[-1]
    assert result.error is None and not result.cancelled
    kinds = [k for k in (kind(p.pcm) for p in fake.udp.packets[heard:]) if k]
    runs = "".join(k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k)
    assert runs == "sts", runs  # speech, the clip, speech: in line, in order
    assert 20 <= kinds.count("t") <= 25  # the clip's 0.5 s (less a join's frame or two)
