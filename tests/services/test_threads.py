"""Threads and forum posts (`read_threads`): a thread of the read channel is read, a forum
chosen as the read channel has its posts read, each post's title before its first message.
Each message is a real discord.py Message parsed from MESSAGE_CREATE, in a thread discord.py
learnt of from THREAD_CREATE (tests/e2e/test_threads.py runs the same end to end)."""

from __future__ import annotations

import pytest

from bot.services.message_reading import thread_of
from tests.fakediscord import payload_check
from tests.services.discord_objects import FORUM_ID, OTHER_TEXT_ID, TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot


async def _in_voice(bot: Bot, server: Server, **settings: object) -> None:
    """Alice in voice with the bot; #general is read (or `read_channel`)."""
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(**{"read_channel": int(TEXT_ID), **settings})


async def _in_thread_of(bot: Bot, server: Server, parent_id: str, content: str) -> str:
    thread = server.thread_create(parent_id, "Plans", server["alice"])
    message = server.message_create(
        server.message(server["alice"], content, channel_id=thread["id"])
    )
    found = thread_of(message)
    assert found is not None and found.parent_id == int(parent_id)
    return await bot.autoread.handle(message)


async def test_a_thread_of_the_read_channel_is_read(bot: Bot, server: Server) -> None:
    await _in_voice(bot, server)
    assert await _in_thread_of(bot, server, TEXT_ID, "in the thread") == "read"
    assert bot.speaker.play() == ["Alice said in the thread"]


async def test_read_threads_off_leaves_them_out(bot: Bot, server: Server) -> None:
    await _in_voice(bot, server, read_threads=False)
    assert await _in_thread_of(bot, server, TEXT_ID, "in the thread") == "threads are not read"
    assert await bot.autoread.handle(server.post("alice", "in the channel")) == "read"
    assert bot.speaker.play() == ["Alice said in the channel"]


async def test_a_thread_of_another_channel_is_never_read(bot: Bot, server: Server) -> None:
    await _in_voice(bot, server)
    assert await _in_thread_of(bot, server, OTHER_TEXT_ID, "elsewhere") == "not a read channel"
    assert bot.speaker.queue == []


async def test_a_thread_unknown_to_the_cache_is_not_read(bot: Bot, server: Server) -> None:
    """A message of a thread discord.py was never told of (no THREAD_CREATE): its channel
    is a PartialMessageable, whose parent nothing says."""
    await _in_voice(bot, server)
    unknown = "1300000000000000099"
    message = server.message_create(server.message(server["alice"], "hi", channel_id=unknown))
    assert thread_of(message) is None
    assert await bot.autoread.handle(message) == "not a read channel"


@pytest.mark.parametrize("read_threads", [True, False])
async def test_a_forum_post_is_read_with_its_title_first(
    bot: Bot, server: Server, read_threads: bool
) -> None:
    """Its first message (the starter, with the thread's id) after "Alice posted: TITLE",
    a later one without the title; a forum holds only posts, so `read_threads` off reads
    them too."""
    await _in_voice(bot, server)
    server.forum()
    await bot.configure(read_channel=int(FORUM_ID), read_threads=read_threads)
    thread, first = server.forum_post(server["alice"], "Weekend plans", "Who is in?")
    assert await bot.autoread.handle(server.message_create(first)) == "read"
    later = server.message(server["alice"], "I am", channel_id=thread["id"])
    assert await bot.autoread.handle(server.message_create(later)) == "read"
    # (the same author right after: her name is not said again)
    assert bot.speaker.play() == ["Alice posted: Weekend plans. Who is in?", "I am"]


async def test_a_forum_posts_title_in_french(bot: Bot, server: Server) -> None:
    await _in_voice(bot, server, language="french")
    server.forum()
    await bot.configure(read_channel=int(FORUM_ID))
    _, first = server.forum_post(server["alice"], "Sortie", "Qui vient ?")
    assert await bot.autoread.handle(server.message_create(first)) == "read"
    assert bot.speaker.play() == ["Alice a publié : Sortie. Qui vient ?"]


async def test_a_forum_post_said_without_its_authors_name(bot: Bot, server: Server) -> None:
    await _in_voice(bot, server, xsaid=False)
    server.forum()
    await bot.configure(read_channel=int(FORUM_ID))
    _, first = server.forum_post(server["alice"], "Weekend plans", "Who is in?")
    assert await bot.autoread.handle(server.message_create(first)) == "read"
    assert bot.speaker.play() == ["new post: Weekend plans. Who is in?"]


def test_the_thread_payloads_are_discords(server: Server) -> None:
    """What these tests feed discord.py is what the fake Discord's schemas accept."""
    server.start()
    forum = server.forum()
    thread, first = server.forum_post(server["alice"], "Weekend plans", "Who is in?")
    assert payload_check.errors_of(forum, "GatewayChannelCreateDispatchData") == []
    assert payload_check.errors_of(thread, "GatewayThreadCreateDispatchData") == []
    event = dict(first, guild_id=server.id, member=server["alice"].member(user=False))
    assert payload_check.errors_of(event, "GatewayMessageCreateDispatchData") == []
