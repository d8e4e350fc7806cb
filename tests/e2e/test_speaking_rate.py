"""Speaking rate end to end: `/set my_rate` and `/config speaking_rate` change how long the Opus
the bot sends lasts (the tests' model has EOS off: a unit's length is fixed), pitch kept."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from bot.playback.stats import UtteranceResult
from bot.synthesis.speech_jobs import FIRST_UNIT_CHARS, split_units
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN, outcome, setup_read_channel
from tests.e2e.test_speech import audio_packets, packets_settled, speaker_of
from tests.fakediscord import FakeDiscord
from tests.fakediscord.voice_udp import ReceivedPacket

VOICE = FakeDiscord.VOICE_ID
FRAME = 480  # 20 ms at 24 kHz
# several units (sentences), so the joins between them go through the one stretcher too
TEXT = (
    "The quick brown fox jumps over the lazy dog, and then it runs far away into the woods. "
    "Nobody in the village has seen it since that morning, but the dog still waits by the gate."
)
# one short unit: at full length it lasts the same in every run (the rate test)
RATE_TEXT = "The fox runs."
# sentences short enough that no lane ever cuts them: the same units, so the same audio, each
# time. Two, as short as RATE_TEXT: unbatched, the full-length model runs each unit to its cap
# (5 s at 1x for these), and four longer ones made the suite's longest test, 61 s of speech
# that a fresh run's workers ended on alone (2026-12-03)
SHORT_SENTENCES = "The fox runs. The dog waits."


async def said_seconds(running: RunningBot, text: str = TEXT) -> tuple[float, np.ndarray]:
    """Say `text` with /say; the seconds of voiced Opus the fake Discord heard for it, and
    its decoded 48 kHz mono PCM."""
    fake = running.fake
    scheduler = running.bot.app.speakers
    known = scheduler.get(int(FakeDiscord.GUILD_ID))
    before, heard = len(known.history) if known else 0, len(fake.udp.packets)
    reply = await (await fake.interaction("say", {"text": text})).wait_final()
    assert reply["content"] == f"Speaking in <#{VOICE}>."
    speaker = speaker_of(running)
    await fake.wait_for(lambda: len(speaker.history) == before + 1, 60, "the utterance to end")
    await packets_settled(fake)
    result = speaker.history[-1]
    assert result.error is None and not result.cancelled
    packets = fake.udp.packets[heard:]
    frames = [np.frombuffer(p.pcm, dtype="<i2") for p in audio_packets(packets) if any(p.pcm)]
    pcm = np.concatenate(frames).reshape(-1, 2)[:, 0]
    return speech_seconds(packets, result), pcm.astype(np.float32) / 32768.0


def speech_seconds(packets: list[ReceivedPacket], result: UtteranceResult) -> float:
    """Seconds of speech in one utterance's packets, to the frame, loaded machine or not.

    An underrun goes out as a frame of digital silence, but Opus's look-ahead carries the end of
    the speech before it into that frame: counting the frames that decode to sound counts an
    underrun as speech (a loaded test run heard 2.04 s where 1.92 s was said). So: the frames
    the wire carried, less the underruns, which must be the frames the bot played."""
    carried = len(audio_packets(packets))
    assert carried - result.underruns == result.frames_played, (carried, result)
    return round(result.frames_played * 0.02, 2)


def stretched(seconds: float, rate: float) -> float:
    """How long `seconds` of speech (whole 20 ms frames: whole 80 ms model chunks) last at
    `rate`, in the 20 ms frames they go out in: the stretch is exact to the sample."""
    samples = round(seconds * 24_000)
    return round(math.ceil(round(samples / rate) / FRAME) * 0.02, 2)


async def set_reply(running: RunningBot, name: str, options: dict, **kw: object) -> dict:
    inter = await running.fake.interaction(name, options, **kw)  # type: ignore[arg-type]
    reply = await inter.wait_final()
    assert inter.responses[0]["flags"] & 64  # ephemeral
    assert reply["allowed_mentions"] == {"parse": []}
    return reply


async def test_my_rate_and_the_servers_rate_change_the_length_of_speech(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    # Full length, as the one-stretcher test below: the model's own length is then the same in
    # every run. With the end-of-speech signal of random weights the 1.5x run once made one
    # 80 ms chunk more than the 1x run (a CI-like run heard 1.50 s where 2.16 s at 1.5x is
    # 1.44 s), which compared two random lengths, not the stretch.
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        await running.fake.set_voice_state("alice", VOICE)
        normal, _ = await said_seconds(running, RATE_TEXT)
        assert normal > 2.0

        reply = await set_reply(running, "set my_rate", {"rate": "1.5"})
        assert reply["content"] == "Your messages are read at 1.5× speed in this server."
        faster, _ = await said_seconds(running, RATE_TEXT)
        assert abs(normal / faster - 1.5) <= 0.05 * 1.5, (normal, faster)
        # to the frame (one stream: the same audio each time): the stretcher's tail (~27 ms it
        # holds back) came out at the end
        assert faster == stretched(normal, 1.5), (normal, faster)

        # the server's rate applies to members without their own; a member's own wins
        reply = await set_reply(
            running, "config speech speaking_rate", {"value": 0.75}, permissions=ADMIN
        )
        assert reply["content"] == "speaking_rate is now 0.75×."
        faster_still, _ = await said_seconds(running, RATE_TEXT)
        assert abs(normal / faster_still - 1.5) <= 0.05 * 1.5, (normal, faster_still)
        reply = await set_reply(running, "set my_rate", {"rate": "none"})
        assert reply["content"] == "Your messages are read at this server's speaking rate again."
        slower, _ = await said_seconds(running, RATE_TEXT)
        assert abs(normal / slower - 0.75) <= 0.05 * 0.75, (normal, slower)
        assert slower == stretched(normal, 0.75), (normal, slower)


async def test_rates_out_of_bounds_get_a_clear_error_and_change_nothing(
    running_bot: RunningBot,
) -> None:
    running = running_bot
    for raw in ("3", "0.4", "fast"):
        reply = await set_reply(running, "set my_rate", {"rate": raw})
        assert reply["content"] in (
            "my_rate goes from 0.5 to 2.0.",
            "my_rate is a number such as 1.5.",
        ), reply["content"]
    reply = await set_reply(
        running, "config speech speaking_rate", {"value": 2.5}, permissions=ADMIN
    )
    assert reply["content"] == "speaking_rate goes from 0.5 to 2.0."
    db, guild = running.bot.app.db, int(FakeDiscord.GUILD_ID)
    assert db is not None
    assert (await db.members.get(int(running.fake.humans["alice"].id), guild)).rate is None
    assert (await db.guilds.get(guild)).speaking_rate == 1.0
    # without Manage Server, the server's rate is refused on the bot's side too
    reply = await set_reply(running, "config speech speaking_rate", {"value": 1.5})
    assert "Manage Server" in reply["content"]


async def test_units_synthesized_one_by_one_share_one_stretcher(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """Without batching each sentence is a stream of its own: the one stretcher of the message
    carries across them, and the message is still 1.5x shorter, the tail not lost."""
    units = split_units(SHORT_SENTENCES)
    assert len(units) == 2 and max(map(len, units)) < FIRST_UNIT_CHARS
    # Full length: each unit runs to its cap. With the end-of-speech signal of random weights a
    # unit now and then ran 3 frames longer in one of the two runs (a CI run heard 2.08 s where
    # 2.88 s at 1.5x is 1.92 s), which compared two random lengths, not the stretch.
    env = {"TTS_BATCH": "1", "TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        await running.fake.set_voice_state("alice", VOICE)
        normal, _ = await said_seconds(running, SHORT_SENTENCES)
        await set_reply(running, "set my_rate", {"rate": "1.5"})
        faster, pcm = await said_seconds(running, SHORT_SENTENCES)
    assert abs(normal / faster - 1.5) <= 0.05 * 1.5, (normal, faster)
    # to the frame: the stretcher's tail (~27 ms it holds back) came out after the last unit
    assert faster == stretched(normal, 1.5), (normal, faster)
    assert np.abs(pcm).max() > 0


async def test_an_announced_lead_is_cached_at_the_members_rate(running_bot: RunningBot) -> None:
    """ "Alice said" is rendered once per rate: at 1.5x its cached audio is 1.5x shorter than
    the model's, and the cache at 1x stays apart."""
    running = running_bot
    fake, engine = running.fake, running.bot.app.speakers.engine
    phrases = engine.phrases
    assert phrases is not None
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    await set_reply(running, "set my_rate", {"rate": "1.5"})
    message = await fake.post("alice", "hello there, this is read a little faster")
    assert await outcome(running, message) == "read"
    voice = engine.default_voice
    await fake.wait_for(
        lambda: phrases.in_memory(voice, "Alice said", rate=1.5) is not None, 30, "the lead"
    )
    cached = phrases.in_memory(voice, "Alice said", rate=1.5)
    assert phrases.in_memory(voice, "Alice said") is None  # not at 1x
    model = await engine.synthesize("Alice said")
    assert cached is not None and len(cached) == round(len(model) / 1.5)


async def test_a_tts_file_and_a_message_spoken_on_request_follow_the_rate(
    running_bot: RunningBot,
) -> None:
    """/tts gives the file at the member's rate; Speak this message reads at its author's."""
    import io

    import soundfile

    running = running_bot
    fake = running.fake

    async def tts_seconds() -> float:
        answer = await (await fake.interaction("tts", {"text": TEXT})).wait_content("s of speech")
        audio, sample_rate = soundfile.read(io.BytesIO(answer["_files"]["speech.ogg"]))
        return len(audio) / sample_rate

    normal_file = await tts_seconds()
    await set_reply(running, "set my_rate", {"rate": "1.5"})
    faster_file = await tts_seconds()
    assert abs(normal_file / faster_file - 1.5) <= 0.05 * 1.5, (normal_file, faster_file)

    # bob asks for alice's message: it is read at alice's rate (1.5x), not bob's (1x)
    await fake.set_voice_state("alice", VOICE)
    await fake.set_voice_state("bob", VOICE)
    normal, _ = await said_seconds(running)  # alice's /say at 1.5x, for the length
    message = await fake.post("alice", TEXT)
    speaker = speaker_of(running)
    before, heard = len(speaker.history), len(fake.udp.packets)
    menu = await fake.interaction("Speak this message", user="bob", target=message)
    assert (await menu.wait_final())["content"].startswith("Speaking that message in")
    await fake.wait_for(lambda: len(speaker.history) == before + 1, 60, "the message read")
    await packets_settled(fake)
    on_request = speech_seconds(fake.udp.packets[heard:], speaker.history[-1])
    # (with "alice said" before it: at least as long as her /say at 1.5x, far from 1x's)
    assert normal <= on_request < normal * 1.4, (normal, on_request)
