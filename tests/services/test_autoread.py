"""The reading rules of `AutoReader.handle`: which chat messages are read aloud, each decided
on a real discord.py Message parsed from MESSAGE_CREATE (tests/e2e/test_autoread.py and
test_reading_rules.py run the same rules end to end)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

from bot.services.message_reading import RATE_WINDOW_S, Verdict
from tests.services.discord_objects import (
    OTHER_TEXT_ID,
    SILENT,
    STAGE_ID,
    TEXT_ID,
    VOICE2_ID,
    VOICE_ID,
    Server,
)
from tests.services.wiring import Bot

ROLES = {"readers": ("Readers", 2), "muted": ("No TTS", 1)}


@dataclass(frozen=True)
class Post:
    """Who posts what where, the server's settings and the member's own, and the outcome.
    Role settings name a role of ROLES."""

    outcome: str
    author: str = "bob"  # "bob", "webhook", "otherbot", "me" (the bot itself)
    content: str = "hello there"
    settings: dict[str, Any] = field(default_factory=dict)
    roles: tuple[str, ...] = ()
    author_voice: str | None = VOICE_ID
    audience: bool = False  # in a stage's audience (suppressed)
    bot_voice: str | None = VOICE_ID
    channel: str = TEXT_ID
    flags: int = 0
    kind: int = 0  # the message's type
    opted_out: bool = False
    blocked: bool = False
    files: tuple[str, ...] = ()  # content types of attachments
    stickers: int = 0


CASES = {
    "a member in the bot's channel": Post("read"),
    # the member's own choice, and the server's moderators'
    "the author opted out": Post("member opted out", opted_out=True),
    "the author is blocked": Post("blocked by a moderator", blocked=True),
    # roles
    "has the ignored role": Post(
        "has the ignored role", roles=("muted",), settings={"ignored_role": "muted"}
    ),
    "without the ignored role": Post(
        "read", roles=("readers",), settings={"ignored_role": "muted"}
    ),
    "has the required role": Post(
        "read", roles=("readers",), settings={"required_role": "readers"}
    ),
    "lacks the required role": Post(
        "missing the required role", settings={"required_role": "readers"}
    ),
    "has both the required and the ignored role": Post(
        "has the ignored role",
        roles=("readers", "muted"),
        settings={"required_role": "readers", "ignored_role": "muted"},
    ),
    # webhooks (no member, so no roles and never in voice) and bots
    "a webhook, bot_ignore on": Post("from a bot", author="webhook", author_voice=None),
    "a webhook, bot_ignore off": Post(
        "read", author="webhook", author_voice=None, settings={"bot_ignore": False}
    ),
    "a webhook cannot bring the bot to voice": Post(
        "not in voice",
        author="webhook",
        author_voice=None,
        bot_voice=None,
        settings={"bot_ignore": False},
    ),
    "a webhook has no required role": Post(
        "missing the required role",
        author="webhook",
        author_voice=None,
        settings={"bot_ignore": False, "required_role": "readers"},
    ),
    "a webhook has no ignored role": Post(
        "read",
        author="webhook",
        author_voice=None,
        settings={"bot_ignore": False, "ignored_role": "muted"},
    ),
    "another bot, bot_ignore on": Post("from a bot", author="otherbot"),
    "another bot, bot_ignore off": Post("read", author="otherbot", settings={"bot_ignore": False}),
    "the bot's own message": Post("own message", author="me", author_voice=None),
    # @silent messages
    "a @silent message": Post("a @silent message", flags=SILENT),
    "a @silent message, skip_silent off": Post(
        "read", flags=SILENT, settings={"skip_silent": False}
    ),
    # the skip prefix
    "the default skip prefix": Post("skip prefix", content="-not this"),
    "a prefix of the server's own": Post(
        "skip prefix", content="!not this", settings={"skip_prefix": "!"}
    ),
    "another server's prefix is read": Post(
        "read", content="-this one", settings={"skip_prefix": "!"}
    ),
    "no skip prefix": Post("read", content="-this one", settings={"skip_prefix": ""}),
    # a stage's audience
    "in a stage's audience": Post(
        "in the stage audience", author_voice=STAGE_ID, audience=True, bot_voice=STAGE_ID
    ),
    "a stage's speaker": Post("read", author_voice=STAGE_ID, bot_voice=STAGE_ID),
    "the audience, audience_ignore off": Post(
        "read",
        author_voice=STAGE_ID,
        audience=True,
        bot_voice=STAGE_ID,
        settings={"audience_ignore": False},
    ),
    "the audience, in the stage's chat": Post(
        "in the stage audience",
        author_voice=STAGE_ID,
        audience=True,
        bot_voice=STAGE_ID,
        channel=STAGE_ID,
    ),
    # where it is written
    "not the read channel": Post("not a read channel", channel=OTHER_TEXT_ID),
    "the chat of the bot's voice channel": Post("read", channel=VOICE_ID),
    "the voice chat, text_in_voice off": Post(
        "not a read channel", channel=VOICE_ID, settings={"text_in_voice": False}
    ),
    "the chat of another voice channel": Post("not a read channel", channel=VOICE2_ID),
    # voice
    "nobody in voice": Post("not in voice", author_voice=None, bot_voice=None),
    "autojoin off": Post("not in voice", bot_voice=None, settings={"autojoin": False}),
    "the author elsewhere in voice": Post(
        "author not in the bot's voice channel", author_voice=VOICE2_ID
    ),
    "the author not in voice": Post("author not in the bot's voice channel", author_voice=None),
    "elsewhere, require_voice off": Post(
        "read", author_voice=VOICE2_ID, settings={"require_voice": False}
    ),
    # what is written
    "only spaces": Post("nothing to say", content="   "),
    "only a file": Post("read", content="", files=("image/png",)),
    "only a sticker": Post("read", content="", stickers=1),
    "a system message": Post("system message", content="", kind=7),  # a member joined
    "a reply": Post("read", kind=19),
}


async def _decide(bot: Bot, server: Server, case: Post) -> str:
    roles = {key: server.role(name, position=position) for key, (name, position) in ROLES.items()}
    bob = server.add("bob", roles=tuple(roles[r] for r in case.roles))
    server.add("otherbot", bot=True)
    server.in_voice("alice", case.bot_voice or VOICE_ID)  # someone to hear it
    if case.author_voice is not None and case.author in ("bob", "otherbot"):
        server.in_voice(case.author, case.author_voice, suppress=case.audience)
    guild = server.start()
    if case.bot_voice is not None:
        server.bot_joins(case.bot_voice)
    settings = {
        key: int(roles[value].id) if key.endswith("_role") else value
        for key, value in case.settings.items()
    }
    await bot.configure(read_channel=int(TEXT_ID), **settings)
    if case.opted_out:
        await bot.db.members.set_autoread(int(bob.id), guild.id, False)
    if case.blocked:
        await bot.db.blocks.add(guild.id, int(bob.id), int(server.owner.id), None)
    if case.author == "webhook":
        payload = server.webhook_message(
            "Bridge Bob", case.content, channel_id=case.channel, flags=case.flags
        )
    else:
        author = server.bot if case.author == "me" else server[case.author]
        reply_to = server.message(server["alice"], "a question") if case.kind == 19 else None
        payload = server.message(
            author,
            case.content,
            channel_id=case.channel,
            flags=case.flags,
            kind=case.kind,
            attachments=tuple(server.attachment("file", t) for t in case.files),
            stickers=case.stickers,
            reply_to=reply_to,
        )
    return await bot.autoread.handle(server.message_create(payload))


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_reading_rules(bot: Bot, server: Server, case: Post) -> None:
    assert await _decide(bot, server, case) == case.outcome
    assert len(bot.speaker.queue) == (case.outcome == "read")


async def test_the_bot_joins_the_authors_channel_to_read(bot: Bot, server: Server) -> None:
    assert await _decide(bot, server, Post("read", bot_voice=None)) == "read"
    assert bot.connections.joined == [int(VOICE_ID)]
    assert bot.speaker.play() == ["Bob said hello there"]


async def test_a_join_refused_is_the_reason_and_its_cause_is_logged(
    bot: Bot, server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    bot.connections.refuse = "I cannot join Lounge."
    with caplog.at_level(logging.INFO, logger="bot.services.autoread"):
        outcome = await _decide(bot, server, Post("", bot_voice=None))
    assert outcome is Verdict.CANNOT_JOIN
    assert "I cannot join Lounge." in caplog.text


async def test_direct_messages_are_not_read(bot: Bot, server: Server) -> None:
    server.start()
    assert await bot.autoread.handle(server.direct_message("alice", "hello")) == "not in a server"


@pytest.mark.parametrize(
    ("limit", "outcomes"),
    [(5, ["read"] * 5 + ["rate limited"]), (1, ["read", "rate limited", "rate limited"])],
)
async def test_the_rate_limit_is_per_member(
    bot: Bot, server: Server, limit: int, outcomes: list[str]
) -> None:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), rate_limit=limit)
    burst = [await bot.autoread.handle(server.post("bob", f"message {n}")) for n in outcomes]
    assert burst == outcomes
    assert await bot.autoread.handle(server.post("alice", "mine")) == "read"  # hers is her own
    bot.clock.advance(RATE_WINDOW_S + 0.1)
    assert await bot.autoread.handle(server.post("bob", "later")) == "read"


async def test_each_name_a_webhook_posts_under_has_its_own_rate_limit(
    bot: Bot, server: Server
) -> None:
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False, rate_limit=1)
    hook = "1300000000000000001"

    async def as_(name: str) -> str:
        return await bot.autoread.handle(
            server.message_create(server.webhook_message(name, "hi", webhook_id=hook))
        )

    assert [await as_("Carol"), await as_("Carol"), await as_("Dave")] == [
        "read",
        "rate limited",
        "read",
    ]


async def test_a_webhook_as_a_whole_is_read_at_most_five_names_worth(
    bot: Bot, server: Server
) -> None:
    """A name is free to take: 60 names of one webhook, one message each, were 60 messages
    read at once. Now WEBHOOK_NAMES (5) x rate_limit (the default 5) in a window; a name's
    own limit still holds, a refused message costs the webhook nothing, and another webhook
    has its own share."""
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False)
    hook, other = "1300000000000000001", "1300000000000000002"

    async def as_(name: str, webhook: str = hook) -> str:
        return await bot.autoread.handle(
            server.message_create(server.webhook_message(name, "hi", webhook_id=webhook))
        )

    assert [await as_("Carol") for _ in range(6)] == ["read"] * 5 + ["rate limited"]
    outcomes = [await as_(f"persona {n}") for n in range(60)]
    assert outcomes.count("read") == 5 * 5 - 5  # (Carol's five counted: her sixth did not)
    assert outcomes[:20] == ["read"] * 20  # (the first come, the first read)
    assert await as_("Dave", other) == "read"
    bot.clock.advance(RATE_WINDOW_S + 0.1)
    assert await as_("persona 59") == "read"


async def test_a_webhooks_edits_are_limited_as_a_whole_too(bot: Bot, server: Server) -> None:
    """Each name's edits have its own rate_limit, and the webhook's together five names'
    (past it a waiting reading is dropped rather than said in words taken back)."""
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False, rate_limit=1)
    hook = "1300000000000000001"
    posted = [server.webhook_message(f"persona {n}", "hi", webhook_id=hook) for n in range(6)]
    for n, data in enumerate(posted):
        if n == 5:
            bot.clock.advance(RATE_WINDOW_S + 0.1)  # (a sixth name's message, a window later)
        assert await bot.autoread.handle(server.message_create(data)) == "read"
    for n, data in enumerate(posted):  # one edit each: the sixth is past five names' worth
        await bot.autoread.edited(server.message_update(data, f"edit {n}"))
    numbers = ("zero", "one", "two", "three", "four")  # (read as words, names and all)
    assert bot.speaker.play() == [f"persona {n} said edit {n}" for n in numbers]


async def test_a_full_queue_drops_the_oldest_message(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), queue_limit=2, rate_limit=10)
    for text in ("one", "two", "three"):
        assert await bot.autoread.handle(server.post("alice", text)) == "read"
    assert bot.speaker.play() == ["Alice said two", "three"]


async def test_a_deleted_message_is_not_read_and_an_edit_is(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID))
    first, second = (server.message(server["alice"], text) for text in ("first", "second"))
    for message in (first, second):
        assert await bot.autoread.handle(server.message_create(message)) == "read"
    assert bot.autoread.deleted(int(server.id), {int(first["id"])}) == 1
    await bot.autoread.edited(server.message_update(second, "second, edited"))
    assert bot.speaker.play() == ["Alice said second, edited"]
