"""Trust rules of reading (issue 48): a private thread is never read aloud, and a cloned
voice speaks only what its owner wrote (a forum post's title, which anyone with Manage
Threads may rename, and a poll's result, which Discord composes, are never in it).

Table tests on real discord.py objects parsed from payloads shaped as Discord sends them
(THREAD_CREATE of a type 12 thread, THREAD_UPDATE of a rename, a type 46 message with a
`poll_result` embed), each checked against Discord's typings."""

from __future__ import annotations

from dataclasses import dataclass

import discord
import pytest

from bot.core.errors import UserError
from bot.services.message_reading import thread_of
from tests.fakediscord import payload_check
from tests.services.discord_objects import FORUM_ID, JSON, TEXT_ID, VOICE_ID, Server
from tests.services.test_polls import WON, poll_message, result_message
from tests.services.wiring import Bot

PRIVATE = "That message is in a private thread: I don't read private threads aloud."
SPEAKING = f"Speaking that message in <#{VOICE_ID}>."


async def _in_voice(bot: Bot, server: Server, **settings: object) -> None:
    """Alice and Bob in voice with the bot; #general is read."""
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(**{"read_channel": int(TEXT_ID), **settings})


async def _asked(bot: Bot, server: Server, username: str, target: JSON) -> str:
    """`username` uses "Speak this message" on `target`: the answer."""
    interaction, message = server.message_command(username, target)
    assert isinstance(interaction.user, discord.Member)
    try:
        return await bot.speak_message.speak(interaction.user, message)
    except UserError as error:
        return error.message


# ---- item 1: private threads ---------------------------------------------------------------
@dataclass(frozen=True)
class Thread:
    private: bool
    read_threads: bool
    handled: str  # what auto-reading answers
    asked: str  # what "Speak this message" answers


THREADS = {
    "a private thread": Thread(True, True, "a private thread", PRIVATE),
    "a private thread, read_threads off": Thread(True, False, "a private thread", PRIVATE),
    "a public thread": Thread(False, True, "read", SPEAKING),
}


@pytest.mark.parametrize("case", THREADS.values(), ids=THREADS.keys())
async def test_a_private_thread_is_never_read(bot: Bot, server: Server, case: Thread) -> None:
    """The bot added to Carol's private thread of the read channel: Alice's reply there is
    not spoken into the voice channel, nor read when Bob (not in the thread) asks."""
    await _in_voice(bot, server, read_threads=case.read_threads)
    carol = server.add("carol")
    thread = server.thread_create(TEXT_ID, "for carol", carol, private=case.private)
    assert payload_check.errors_of(thread, "GatewayThreadCreateDispatchData") == []
    reply = server.message(server["alice"], "my private reply", channel_id=thread["id"])
    message = server.message_create(reply)
    known = thread_of(message)
    assert known is not None and known.is_private() is case.private
    assert await bot.autoread.handle(message) == case.handled
    assert await _asked(bot, server, "bob", reply) == case.asked
    said = ["Alice said my private reply", "Alice said my private reply"]
    assert bot.speaker.play() == (said if not case.private else [])


# ---- item 2: a forum post's title is not said in a clone -----------------------------------
@dataclass(frozen=True)
class Post:
    cloned: bool
    renamed: bool
    said: str


WHO_IS_IN = "Who is in?"
POSTS = {
    "a clone, renamed by a moderator": Post(True, True, "alice said Who is in?"),
    "a clone, its title as written": Post(True, False, "alice said Who is in?"),
    "a built-in voice, renamed": Post(
        False, True, "Alice posted: I confess I stole the money. Who is in?"
    ),
    "a built-in voice": Post(False, False, "Alice posted: Weekend plans. Who is in?"),
}


@pytest.mark.parametrize("how", ["auto-read", "on request"])
@pytest.mark.parametrize("case", POSTS.values(), ids=POSTS.keys())
async def test_a_clone_never_says_a_forum_posts_title(
    bot: Bot, server: Server, case: Post, how: str
) -> None:
    """THREAD_UPDATE renames Alice's post (Manage Threads may, and Discord does not say who
    did): her clone reads her first message without the thread's name, which is read only in
    a built-in voice."""
    await _in_voice(bot, server)
    server.forum()
    await bot.configure(read_channel=int(FORUM_ID))
    if case.cloned:
        await bot.clone("alice")
    thread, first = server.forum_post(server["alice"], "Weekend plans", WHO_IS_IN)
    if case.renamed:
        update = server.thread_update(thread, name="I confess I stole the money")
        # (THREAD_UPDATE's data is a thread channel, as THREAD_CREATE's without
        # `newly_created`: the typings' schema here has only THREAD_CREATE's)
        assert payload_check.errors_of(update, "GatewayThreadCreateDispatchData") == []
    if how == "auto-read":
        assert await bot.autoread.handle(server.message_create(first)) == "read"
    else:
        assert await _asked(bot, server, "bob", first) == SPEAKING
    (said,) = bot.speaker.play()
    assert said == case.said
    assert (bot.speaker.played[0].plan.voice is not None) is case.cloned


# ---- item 3: a poll's result is said in the server's built-in voice ------------------------
@dataclass(frozen=True)
class Result:
    default_voice: str | None
    how: str


RESULTS = {
    "auto-read": Result(None, "auto-read"),
    "auto-read, the server's voice": Result("marius", "auto-read"),
    "on request": Result(None, "on request"),
    "on request, the server's voice": Result("marius", "on request"),
}
RESULT_LINE = "The poll “Pizza or pasta?” ended: Pizza won with two votes"


@pytest.mark.parametrize("case", RESULTS.values(), ids=RESULTS.keys())
async def test_a_poll_result_is_never_in_its_authors_clone(
    bot: Bot, server: Server, case: Result
) -> None:
    """Alice's clone never says the result (Discord's words: a question past its end, the
    winning answer), unnamed or not: the server's built-in voice does."""
    await _in_voice(bot, server, default_voice=case.default_voice)
    await bot.clone("alice")
    poll = poll_message(server, "Pizza or pasta?", ["Pizza", "pasta"])
    result = result_message(server, poll, WON)
    assert (
        payload_check.errors_of(server._gateway_message(result), "GatewayMessageCreateDispatchData")
        == []
    )
    if case.how == "auto-read":
        assert await bot.autoread.handle(server.message_create(result)) == "read"
    else:
        assert await _asked(bot, server, "bob", result) == SPEAKING
    (utterance,) = bot.speaker.queue
    assert bot.speaker.play() == [RESULT_LINE]
    assert utterance.plan.voice == case.default_voice
