"""A rate that keeps up, end to end: with `/config speech queue_speedup on`, a message begun while
others wait behind it goes out shorter on the wire than the same message said with the queue
empty; with it off, it goes out as long. The tiny model's full-length config (no end of
speech): a text's length is fixed, so the same text gives the same audio each time."""

from __future__ import annotations

from pathlib import Path

from bot.playback.stats import UtteranceResult
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN
from tests.e2e.test_speaking_rate import said_seconds, set_reply, stretched
from tests.e2e.test_speech import audio_packets, packets_settled, speaker_of
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
# Words the tests' tokenizer knows whole (tests/tiny_model.py), so that speech is short: a word
# it spells in pieces costs a third of a second each piece
TARGET = "Good morning friend, play the music."  # the message measured, about 5 s
# ahead of it: long enough (two units, about 14 s, well past the scheduler's 5 s ahead) that
# its synthesis is still going while the messages behind the measured one arrive, so that the
# measured one begins (and its rate is decided) with them all waiting
BLOCKER = (
    "The quick brown fox jumps over the lazy dog. "
    "Hello there, good morning friend, how is the weather?"
)
WAITING = 3


async def say(running: RunningBot, text: str, user: str, reply: str) -> None:
    inter = await running.fake.interaction("say", {"text": text}, user=user)
    answer = await inter.wait_final()
    assert answer["content"].startswith(reply), answer["content"]
    assert answer["allowed_mentions"] == {"parse": []}


async def said_while_others_wait(running: RunningBot) -> tuple[float, UtteranceResult]:
    """Bob's long message plays; alice's TARGET waits behind it, and WAITING of bob's behind
    hers. Once bob's first has ended (alice's has begun), his waiting ones are dropped (not
    played out: they only had to wait). The seconds alice's TARGET lasted, and its result."""
    fake = running.fake
    speaker = speaker_of(running)
    before, heard = len(speaker.history), len(fake.udp.packets)
    await say(running, BLOCKER, "bob", f"Speaking in <#{VOICE}>.")
    await say(running, TARGET, "alice", "Queued: 1 ahead of you")
    for number in range(WAITING):
        await say(running, "Waiting here.", "bob", f"Queued: {number + 2} ahead of you")
    await fake.wait_for(lambda: len(speaker.history) == before + 1, 90, "bob's first to end")
    # (the measured one is playing: what waits behind it is bob's, still all there)
    assert speaker.drop_author(int(fake.humans["bob"].id)) == WAITING
    await fake.wait_for(lambda: len(speaker.history) == before + 2, 60, "alice's to end")
    await packets_settled(fake)
    blocker, target = speaker.history[-2], speaker.history[-1]
    assert "music" in target.text and target.error is None and not target.cancelled
    assert blocker.error is None and not blocker.cancelled
    # the frames the wire carried, less the underruns, are the frames the bot played (see
    # test_speaking_rate.speech_seconds; here for the two messages played one after the other)
    carried = len(audio_packets(fake.udp.packets[heard:]))
    played = blocker.frames_played + target.frames_played
    assert carried - blocker.underruns - target.underruns == played, (carried, blocker, target)
    return round(target.frames_played * 0.02, 2), target


async def test_queue_speedup_speaks_faster_while_messages_wait(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = running.fake
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", VOICE)
        reply = await set_reply(
            running, "config speech queue_speedup", {"value": True}, permissions=ADMIN
        )
        assert reply["content"] == "queue_speedup is now on."

        # nobody waiting: at the member's own rate, sped up or not
        alone, _ = await said_seconds(running, TARGET)
        assert speaker_of(running).history[-1].rate == 1.0
        assert alone > 1.0

        # three waiting behind it when it began: 1.3x (a loaded machine may have begun it
        # before the last of them came: 1.1x or 1.2x, still faster)
        faster, result = await said_while_others_wait(running)
        assert 1.0 < result.rate <= 1.3, result
        assert faster < alone, (alone, faster)
        assert faster == stretched(alone, result.rate), (alone, faster, result.rate)

        # the queue drained: the next message is back to normal
        again, _ = await said_seconds(running, TARGET)
        assert again == alone and speaker_of(running).history[-1].rate == 1.0

        # off: as many waiting, and the message is as long as alone
        reply = await set_reply(
            running, "config speech queue_speedup", {"value": False}, permissions=ADMIN
        )
        assert reply["content"] == "queue_speedup is now off."
        unchanged, result = await said_while_others_wait(running)
        assert result.rate == 1.0 and unchanged == alone, (alone, unchanged, result)
