"""A webhook's message in a server with thousands of `/set nick`s does not fold them all
again (issue 48, item 6): each message folded every nick on the event loop (5,000 nicks: a
second), past `said_as`'s cache. Now each server's folded nicks are kept, a nick folded when
first met (many at once: in a thread). Counted, not timed: the names a message folds anew
(`plain_name`'s calls).
Real discord.py Messages from MESSAGE_CREATE."""

from __future__ import annotations

import pytest

import bot.services.wording as wording
from bot.text.words import plain_name
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

NICKS = 5_000


@pytest.mark.slow  # (the first message folds 5,000 nicks: seconds)
async def test_a_webhooks_message_does_not_fold_every_nick_again(
    bot: Bot, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    folded: list[str] = []

    def counted(name: str) -> str:  # the real folding, counted
        folded.append(name)
        return plain_name(name)

    monkeypatch.setattr(wording, "plain_name", counted)
    wording.said_as.cache_clear()
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False, rate_limit=50)
    await bot.db.execute(  # (one statement: as 5,000 /set nick would leave them)
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
        " INSERT INTO member_settings (user_id, guild_id, nick)"
        " SELECT 10000 + i, ?, 'Member Number ' || i FROM n",
        NICKS - 1,
        guild.id,
    )
    await bot.db.members.set_nick(9_999, guild.id, "Captain")

    async def folds(name: str) -> int:
        folded.clear()
        message = server.message_create(server.webhook_message(name, "hello"))
        assert await bot.autoread.handle(message) == "read"
        return len(folded)  # names folded anew

    assert await folds("Bridge Bob") >= NICKS  # the first: every nick folded, once
    assert await folds("Bridge Bob") == 0  # then nothing new
    assert await folds("Captain") == 1  # (the webhook's new name)
    await bot.db.members.set_nick(9_998, guild.id, "Newcomer")  # one new nick: one fold
    assert await folds("newcomer!") == 2
    said = bot.speaker.play()
    assert said[0] == "Bridge Bob said hello"
    assert said[2:] == [
        "a webhook named Captain said hello",
        "a webhook named newcomer! said hello",
    ]
