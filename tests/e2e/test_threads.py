"""Threads and forum posts, end to end through the fake Discord: a thread of a read channel
is read; a forum added with /setup has its posts read, each post's title first. The threads
come as Discord sends them to a bot with the guilds intent: THREAD_CREATE (a public thread,
`parent_id` its channel), then MESSAGE_CREATE with the thread's id as `channel_id`; a forum
post's first message has the thread's own id."""

from __future__ import annotations

from tests.conftest import RunningBot
from tests.e2e.test_autoread import ADMIN, outcome, setup_read_channel, speaker
from tests.fakediscord import FakeDiscord

TEXT, VOICE, FORUM = FakeDiscord.TEXT_ID, FakeDiscord.VOICE_ID, FakeDiscord.FORUM_ID


async def heard(running: RunningBot, count: int) -> list[str]:
    """What the bot has said so far, once it has said `count` lines."""
    history = speaker(running).history
    await running.fake.wait_for(lambda: len(history) >= count, 30, f"{count} lines said")
    return [result.text for result in history]


async def test_a_thread_message_and_a_forum_post_are_read(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    await fake.set_voice_state("bob", VOICE)
    thread = await fake.create_thread("bob", TEXT, "Plans")  # a thread of #general
    in_thread = await fake.post("alice", "in the thread", thread["id"])
    assert await outcome(running_bot, in_thread) == "read"
    assert await heard(running_bot, 1) == ["Alice said in the thread"]
    # a forum as the read channel: its posts, the title before the first message
    await fake.add_forum()
    reply = await (
        await fake.interaction("setup add", {"channel": FORUM}, permissions=ADMIN)
    ).wait_final()
    assert reply["content"].startswith(f"I will read <#{FORUM}> aloud.")
    post, first = await fake.post_in_forum("bob", "Weekend plans", "Who is in?")
    assert first["id"] == post["id"] == first["channel_id"]  # the starter message
    assert await outcome(running_bot, first) == "read"
    later = await fake.post("alice", "me", post["id"])
    assert await outcome(running_bot, later) == "read"
    assert (await heard(running_bot, 3))[1:] == [
        "Bob posted: Weekend plans. Who is in?",
        "Alice said me",
    ]
    # #general removed: no longer read, nor its thread
    removed = await (
        await fake.interaction("setup remove", {"channel": TEXT}, permissions=ADMIN)
    ).wait_final()
    assert removed["content"] == f"I no longer read <#{TEXT}>."
    elsewhere = await fake.post("alice", "not now", thread["id"])
    assert await outcome(running_bot, elsewhere) == "not a read channel"
    assert fake.payload_errors == []
