""" "Speak this message" (`SpeakThisMessage.speak`, bot/services/speak_message.py): a member
asks for a message to be read in their voice channel, under the reading rules of its author.

The message is the one discord.py gives the context menu's callback. Discord sends it in the
interaction's `resolved.messages` as a plain message object: its author and NO member. So its
author is a discord.User, unless discord.py's cache holds them as a member (without the members
intent: while they are in voice). The rules must hold either way: an author who opted out,
has the ignored role or lacks the required role is refused whether or not the payload said
who they are in the server (the bot can ask: GET /guilds/{guild}/members/{user}, which the
test's REST answers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import discord
import pytest

from bot.core.errors import UserError
from bot.services.blocks import BLOCKED_NOTICE
from bot.services.replies import QuietRefusal
from tests.services.discord_objects import (
    JSON,
    SILENT,
    STAGE_ID,
    TEXT_ID,
    VIEW_CHANNEL,
    VOICE2_ID,
    VOICE_ID,
    Server,
)
from tests.services.wiring import Bot

SPEAKING = f"Speaking that message in <#{VOICE_ID}>."
OPTED_OUT = "Its author has asked not to have their messages read aloud."
IGNORED = "Messages of members with the server's ignored role are not read."
NOT_REQUIRED = "Only messages of members with the server's reading role are read."
AUTHOR_BLOCKED = "A moderator has stopped me reading this member's messages in this server."
PREFIX = "Messages starting with “-” are not read aloud in this server."
BOTS = "This server does not have messages from bots read aloud."

# How the bot knows the message's author:
AS_DISCORD_SENDS_IT = "resolved, author not cached"  # a discord.User: no member data at all
CACHED = "resolved, author in voice"  # a discord.Member from the voice-state cache
WITH_MEMBER = "with member data"  # the MESSAGE_CREATE payload's member (as the e2e fake sends)
KNOWN_AS = (AS_DISCORD_SENDS_IT, CACHED, WITH_MEMBER)


@dataclass(frozen=True)
class Ask:
    """The author's side of a request, and the answer (a UserError's words, or SPEAKING)."""

    answer: str
    roles: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)  # roles by ROLES' names
    opted_out: bool = False
    blocked: bool = False
    content: str = "hello"
    flags: int = 0
    author: str = "bob"


ROLES = {"readers": ("Readers", 2), "muted": ("No TTS", 1)}
# who the author is in the server: each known as Discord sends it, from the cache, and from
# member data
AUTHOR_CASES = {
    "the author opted out": Ask(OPTED_OUT, opted_out=True),
    "the author has the ignored role": Ask(
        IGNORED, roles=("muted",), settings={"ignored_role": "muted"}
    ),
    "the author lacks the required role": Ask(
        NOT_REQUIRED, roles=("muted",), settings={"required_role": "readers"}
    ),
    "the author has no role and one is required": Ask(
        NOT_REQUIRED, settings={"required_role": "readers"}
    ),
    "a message": Ask(SPEAKING),
    "the author has the required role": Ask(
        SPEAKING, roles=("readers",), settings={"required_role": "readers"}
    ),
    "the author lacks the ignored role": Ask(
        SPEAKING, roles=("readers",), settings={"ignored_role": "muted"}
    ),
}
# what the message itself says (and a block, kept by the bot): as Discord sends it
MESSAGE_CASES = {
    "the author is blocked": Ask(AUTHOR_BLOCKED, blocked=True),
    "the skip prefix": Ask(PREFIX, content="-not this"),
    "a bot's message": Ask(BOTS, author="otherbot"),
    "a bot's message, bot_ignore off": Ask(
        SPEAKING, author="otherbot", settings={"bot_ignore": False}
    ),
    "a @silent message, read on request": Ask(SPEAKING, flags=SILENT),
}


def _start(server: Server, case: Ask, known_as: str) -> JSON:
    """The server with alice (the invoker) in voice; the message the case asks about."""
    roles = {key: server.role(name, position=position) for key, (name, position) in ROLES.items()}
    server.add("bob", roles=tuple(roles[r] for r in case.roles))
    server.add("otherbot", bot=True, roles=tuple(roles[r] for r in case.roles))
    server.in_voice("alice", VOICE_ID)
    if known_as == CACHED:
        server.in_voice(case.author, VOICE2_ID)
    server.start()
    return server.message(server[case.author], case.content, flags=case.flags)


async def _configure(bot: Bot, server: Server, case: Ask) -> None:
    ids = {role.name: int(role.id) for role in server.roles.values()}
    settings = {
        key: ids[ROLES[value][0]] if key.endswith("_role") else value
        for key, value in case.settings.items()
    }
    await bot.configure(**settings)
    author = int(server[case.author].id)
    if case.opted_out:
        await bot.db.members.set_autoread(author, bot.guild_id, False)
    if case.blocked:
        await bot.db.blocks.add(bot.guild_id, author, int(server.owner.id), None)


def _asked(server: Server, target: JSON, known_as: str) -> tuple[discord.Member, discord.Message]:
    """The invoker and the message, as the bot's callback gets them."""
    interaction, message = server.message_command("alice", target)
    if known_as == WITH_MEMBER:
        message = server.message_create(target)
    assert isinstance(interaction.user, discord.Member)
    return interaction.user, message


async def _answer(bot: Bot, invoker: discord.Member, message: discord.Message) -> str:
    try:
        return await bot.speak_message.speak(invoker, message)
    except UserError as error:
        return error.message


@pytest.mark.parametrize(
    ("case", "known_as"),
    [
        pytest.param(case, known_as, id=f"{name}-{known_as}")
        for name, case in AUTHOR_CASES.items()
        for known_as in KNOWN_AS
    ]
    + [pytest.param(case, AS_DISCORD_SENDS_IT, id=name) for name, case in MESSAGE_CASES.items()],
)
async def test_speak_this_message_keeps_the_authors_rules(
    bot: Bot, server: Server, case: Ask, known_as: str
) -> None:
    target = _start(server, case, known_as)
    await _configure(bot, server, case)
    invoker, message = _asked(server, target, known_as)
    author_type = discord.User if known_as == AS_DISCORD_SENDS_IT else discord.Member
    assert type(message.author) is author_type  # (how discord.py builds it)
    assert await _answer(bot, invoker, message) == case.answer
    said = bot.speaker.play()
    name = "Otherbot" if case.author == "otherbot" else "Bob"
    assert said == ([f"{name} said {case.content}"] if case.answer == SPEAKING else [])


WEBHOOK_CASES = {
    "bot_ignore on": ({}, BOTS),
    "bot_ignore off": ({"bot_ignore": False}, SPEAKING),
    "a role is required: a webhook has none": (
        {"bot_ignore": False, "required_role": True},
        NOT_REQUIRED,
    ),
    "an ignored role: a webhook has none": ({"bot_ignore": False, "ignored_role": True}, SPEAKING),
}


@pytest.mark.parametrize(("settings", "answer"), WEBHOOK_CASES.values(), ids=WEBHOOK_CASES.keys())
async def test_a_webhooks_message_on_request(
    bot: Bot, server: Server, settings: dict[str, Any], answer: str
) -> None:
    role = server.role("Readers")
    server.in_voice("alice", VOICE_ID)
    server.start()
    await bot.configure(
        **{k: int(role.id) if k.endswith("_role") else v for k, v in settings.items()}
    )
    invoker, message = _asked(
        server, server.webhook_message("Bridge Bob", "hi"), AS_DISCORD_SENDS_IT
    )
    assert message.webhook_id is not None and type(message.author) is discord.User
    assert await _answer(bot, invoker, message) == answer
    assert bot.speaker.play() == (["Bridge Bob said hi"] if answer == SPEAKING else [])


ROLE_CHECKS = {
    "the author left the server": (
        "left",
        "Its author is no longer in this server, so I cannot check the server's reading "
        "roles: I won't read it.",
    ),
    "Discord does not answer": (
        "down",
        "I could not check its author's roles just now: please try again in a moment.",
    ),
}


@pytest.mark.parametrize("rule", ["required_role", "ignored_role"])
@pytest.mark.parametrize(("what", "answer"), ROLE_CHECKS.values(), ids=ROLE_CHECKS.keys())
async def test_roles_that_cannot_be_checked_refuse(
    bot: Bot, server: Server, rule: str, what: str, answer: str
) -> None:
    role = server.role("Readers")
    server.add("bob", roles=(role,))
    server.in_voice("alice", VOICE_ID)
    server.start()
    await bot.configure(**{rule: int(role.id)})
    target = server.message(server["bob"], "hello")
    if what == "left":
        server.leave_server("bob")
    else:
        server.http.down = True
    invoker, message = _asked(server, target, AS_DISCORD_SENDS_IT)
    assert await _answer(bot, invoker, message) == answer
    assert server.http.requests == [("GET", f"/guilds/{server.id}/members/{server['bob'].id}")]
    assert bot.speaker.play() == []


@pytest.mark.parametrize(
    ("known_as", "settings", "fetched"),
    [
        (AS_DISCORD_SENDS_IT, {"required_role": True}, True),
        (AS_DISCORD_SENDS_IT, {"ignored_role": True}, True),
        (AS_DISCORD_SENDS_IT, {}, False),  # no role rule: no need to know their roles
        (CACHED, {"required_role": True}, False),
        (WITH_MEMBER, {"ignored_role": True}, False),
    ],
)
async def test_the_author_is_fetched_only_when_their_roles_matter(
    bot: Bot, server: Server, known_as: str, settings: dict[str, bool], fetched: bool
) -> None:
    role = server.role("Readers")
    server.add("bob", roles=(role,))
    server.in_voice("alice", VOICE_ID)
    if known_as == CACHED:
        server.in_voice("bob", VOICE2_ID)
    server.start()
    await bot.configure(**{key: int(role.id) for key in settings})
    invoker, message = _asked(server, server.message(server["bob"], "hi"), known_as)
    expected = SPEAKING if "ignored_role" not in settings else IGNORED
    assert await _answer(bot, invoker, message) == expected
    assert bool(server.http.requests) == fetched


async def test_the_stage_audience_is_read_on_request(bot: Bot, server: Server) -> None:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", STAGE_ID, suppress=True)
    server.start()
    invoker, message = _asked(server, server.message(server["bob"], "from the audience"), CACHED)
    assert await _answer(bot, invoker, message) == SPEAKING
    assert bot.speaker.play() == ["Bob said from the audience"]


async def test_a_blocked_member_is_told_once_then_refused_without_words(
    bot: Bot, server: Server
) -> None:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.start()
    await bot.db.blocks.add(bot.guild_id, int(server["alice"].id), int(server["bob"].id), None)
    target = server.message(server["bob"], "hello")
    invoker, message = _asked(server, target, AS_DISCORD_SENDS_IT)
    with pytest.raises(UserError) as told:
        await bot.speak_message.speak(invoker, message)
    assert told.type is UserError and told.value.message == BLOCKED_NOTICE
    with pytest.raises(QuietRefusal):
        await bot.speak_message.speak(invoker, message)


async def test_the_invoker_must_be_in_voice(bot: Bot, server: Server) -> None:
    server.add("bob")
    server.start()
    invoker, message = _asked(server, server.message(server["bob"], "hi"), AS_DISCORD_SENDS_IT)
    assert await _answer(bot, invoker, message) == "Join a voice channel first, then try again."


async def test_not_read_to_someone_who_cannot_see_its_channel(bot: Bot, server: Server) -> None:
    carol = server.add("carol")
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("carol", VOICE_ID)
    server.deny(TEXT_ID, VIEW_CHANNEL, carol)
    server.start()
    invoker, message = _asked(server, server.message(server["bob"], "hi"), AS_DISCORD_SENDS_IT)
    assert await _answer(bot, invoker, message) == (
        f"Someone in <#{VOICE_ID}> cannot see that message's channel, so I won't read it there."
    )


async def test_the_invokers_rate_limit(bot: Bot, server: Server) -> None:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.start()
    await bot.configure(rate_limit=1)
    invoker, message = _asked(server, server.message(server["bob"], "hi"), AS_DISCORD_SENDS_IT)
    assert await _answer(bot, invoker, message) == SPEAKING
    assert await _answer(bot, invoker, message) == (
        "That is a lot of reading at once: please wait a few seconds."
    )


async def test_a_direct_message_is_not_spoken(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    server.start()
    assert server.guild is not None
    invoker = server.guild.get_member(int(server["alice"].id))
    assert invoker is not None
    message = server.direct_message("alice", "hello")
    assert await _answer(bot, invoker, message) == "I can only speak messages from a server."


async def test_in_the_authors_voice_and_at_their_rate(bot: Bot, server: Server) -> None:
    """A cloned voice's speech is named by its owner's username, whatever their nickname."""
    server.add("bob", nick="Captain")
    server.in_voice("alice", VOICE_ID)
    server.start()
    voice_id = await bot.clone("bob")
    await bot.db.members.set_nick(int(server["bob"].id), bot.guild_id, "Robert")
    await bot.db.members.set_rate(int(server["bob"].id), bot.guild_id, 1.5)
    invoker, message = _asked(server, server.message(server["bob"], "hi"), AS_DISCORD_SENDS_IT)
    assert await _answer(bot, invoker, message) == SPEAKING
    (utterance,) = bot.speaker.queue
    assert (utterance.text, utterance.plan.rate) == ("bob said hi", 1.5)
    assert utterance.plan.voice == str(bot.data_dir / f"{server['bob'].id}/Mine.safetensors")
    assert voice_id > 0
