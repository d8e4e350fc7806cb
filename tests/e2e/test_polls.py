"""Polls, end to end through the fake Discord (issue 36, item 3): a member's poll in the read
channel is read with its question and its options, and its end (Discord's POLL_RESULT
message) is read where the bot is in voice, never joining for it. The polls come as Discord
sends them: MESSAGE_CREATE with the message's `poll` object, then, when the poll ends, a
type 46 message by its author with a `poll_result` embed. The wording, case by case and per
language: tests/text/test_polls.py."""

from __future__ import annotations

from tests.conftest import RunningBot
from tests.e2e.test_autoread import outcome, setup_read_channel, speaker
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID


async def test_a_poll_and_its_result_are_read(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await setup_read_channel(fake)
    # a poll's end is read only where the bot already is: it does not join for one
    early = await fake.post("alice", "", poll=fake.poll_json("Tea?", ["yes", "no"]))
    assert await outcome(running_bot, early) == "not in voice"
    await fake.set_voice_state("alice", VOICE)
    ended = await fake.end_poll(early, {1: 1})
    assert await outcome(running_bot, ended) == "not in voice"
    assert fake.bot_voice_channel is None
    # a poll in the read channel: its question and every option, after autojoin
    poll = fake.poll_json("Pizza or pasta?", [("Pizza", "🍕"), "pasta", "tacos 🌮"])
    asked = await fake.post("alice", "", poll=poll)
    assert await outcome(running_bot, asked) == "read"
    history = speaker(running_bot).history
    await fake.wait_for(lambda: len(history) == 1, 30, "the poll read")
    assert history[0].text == "Alice asks: Pizza or pasta? Options: Pizza, pasta, or tacos taco"
    assert history[0].error is None and history[0].frames_played > 0
    # its end, while the bot is in voice: the winner and its votes, in words
    result = await fake.end_poll(asked, {1: 2, 2: 1})
    assert result["type"] == 46 and result["embeds"][0]["type"] == "poll_result"
    assert await outcome(running_bot, result) == "read"
    await fake.wait_for(lambda: len(history) == 2, 30, "the result read")
    assert history[1].text == "The poll “Pizza or pasta?” ended: Pizza won with two votes"
    assert history[1].error is None and history[1].frames_played > 0
    # a tie names no winner (Discord sends no victor_answer_id)
    tie = await fake.end_poll(asked, {1: 1, 3: 1})
    assert await outcome(running_bot, tie) == "read"
    await fake.wait_for(lambda: len(history) == 3, 30, "the tie read")
    assert history[2].text == "The poll “Pizza or pasta?” ended in a tie"
    assert fake.payload_errors == []
