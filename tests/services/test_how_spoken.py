"""How a member is spoken: the name said for them ("NAME said", in mentions and replies) and
when it is said again, and `bot/services/speech_plan.py`'s language, voice and speaking rate
(tests/e2e/test_reading_names.py and test_autoread_hardening.py run them end to end)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from bot.services.autoread import XSAID_QUIET_S
from bot.services.speech_plan import rate_of
from bot.storage.database import MemberSettings
from bot.storage.server_settings import ServerSettings
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import LANGUAGES, Bot


async def _reading_server(bot: Bot, server: Server, **settings: Any) -> None:
    """Alice, Bob and the bot in Lounge; #general read."""
    server.in_voice("alice", VOICE_ID)
    if "bob" in server.people:
        server.in_voice("bob", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), rate_limit=50, **settings)


@dataclass(frozen=True)
class Name:
    said: str
    global_name: str | None = "Bob"
    nick: str | None = None  # their server nickname
    reading_name: str | None = None  # their /set nick
    cloned: bool = False  # they speak in their own cloned voice
    settings: dict[str, Any] = field(default_factory=dict)
    dictionary: tuple[str, str] | None = None
    content: str = "hi"


NAMES = {
    "their global name": Name("Bob said hi"),
    "their username, without a global name": Name("bob said hi", global_name=None),
    "their server nickname": Name("Bobby said hi", nick="Bobby"),
    "their reading name before all": Name("Robert said hi", nick="Bobby", reading_name="Robert"),
    "a cloned voice: their username, whatever else": Name(
        "bob said hi", nick="Bobby", reading_name="Robert", cloned=True
    ),
    "fancy letters folded": Name("Bob said hi", nick="𝓑𝓸𝓫"),
    "decorations dropped": Name("Blaze said hi", nick="🔥Blaze🔥"),
    "the server's dictionary": Name("Bobbie said hi", nick="Bobby", dictionary=("Bobby", "Bobbie")),
    "xsaid off: no name": Name("hi", settings={"xsaid": False}),
    "xsaid off: a cloned voice is still named": Name(
        "bob said hi", cloned=True, settings={"xsaid": False}
    ),
    "in the server's language": Name(
        "Bob a dit salut", content="salut", settings={"language": "french"}
    ),
}


@pytest.mark.parametrize("case", NAMES.values(), ids=NAMES.keys())
async def test_the_name_a_message_is_read_under(bot: Bot, server: Server, case: Name) -> None:
    bob = server.add("bob", nick=case.nick)
    bob.global_name = case.global_name  # (None: Discord's users who never set one)
    await _reading_server(bot, server, **case.settings)
    if case.reading_name is not None:
        await bot.db.members.set_nick(int(bob.id), bot.guild_id, case.reading_name)
    if case.cloned:
        await bot.clone("bob")
    if case.dictionary is not None:
        await bot.db.dictionary.add(bot.guild_id, *case.dictionary)
    assert await bot.autoread.handle(server.post("bob", case.content)) == "read"
    assert bot.speaker.play() == [case.said]


def _webhook(server: Server, name: str, text: str) -> Any:
    hook = server.webhook_message(name, text, webhook_id="1300000000000000001")
    return server.message_create(hook)


SEQUENCES = {
    "the same author again: no name": (
        [("alice", "one"), ("alice", "two")],
        0,
        ["Alice said one", "two"],
    ),
    "a minute later: named again": (
        [("alice", "one"), ("alice", "two")],
        XSAID_QUIET_S + 1,
        ["Alice said one", "Alice said two"],
    ),
    "someone in between": (
        [("alice", "one"), ("bob", "two"), ("alice", "three")],
        0,
        ["Alice said one", "Bob said two", "Alice said three"],
    ),
    "one webhook, two names": (
        [("Carol", "one"), ("Dave", "two"), ("Dave", "three")],
        0,
        ["Carol said one", "Dave said two", "three"],
    ),
}


@pytest.mark.parametrize(("posts", "pause", "said"), SEQUENCES.values(), ids=SEQUENCES.keys())
async def test_when_the_name_is_said_again(
    bot: Bot, server: Server, posts: list[tuple[str, str]], pause: float, said: list[str]
) -> None:
    server.add("bob")
    await _reading_server(bot, server, bot_ignore=False)
    texts = []
    for who, text in posts:
        message = server.post(who, text) if who in server.people else _webhook(server, who, text)
        assert await bot.autoread.handle(message) == "read"
        texts += bot.speaker.play()  # each said before the next is written
        bot.clock.advance(pause)
    assert texts == said


async def test_a_deleted_message_does_not_silence_the_next_name(bot: Bot, server: Server) -> None:
    await _reading_server(bot, server)
    first, second = server.post("alice", "one"), server.post("alice", "two")
    for message in (first, second):
        assert await bot.autoread.handle(message) == "read"
    bot.autoread.deleted(bot.guild_id, {first.id})
    assert bot.speaker.play() == ["Alice said two"]


MENTIONS = {
    "a mention by their server name": (None, False, "Alice said hello Bob"),
    "a mention by their reading name": ("Robert", False, "Alice said hello Robert"),
    "a blocked member's reading name is not said": ("Mallory", True, "Alice said hello Bob"),
}


@pytest.mark.parametrize(
    ("reading_name", "blocked", "said"), MENTIONS.values(), ids=MENTIONS.keys()
)
async def test_the_names_of_the_members_a_message_mentions(
    bot: Bot, server: Server, reading_name: str | None, blocked: bool, said: str
) -> None:
    bob = server.add("bob")
    await _reading_server(bot, server)
    if reading_name is not None:
        await bot.db.members.set_nick(int(bob.id), bot.guild_id, reading_name)
    if blocked:
        await bot.db.blocks.add(bot.guild_id, int(bob.id), int(server.owner.id), None)
    message = server.post("alice", f"hello <@{bob.id}>", mentions=(bob,))
    assert await bot.autoread.handle(message) == "read"
    assert bot.speaker.play() == [said]


async def test_a_reply_names_whom_it_answers(bot: Bot, server: Server) -> None:
    bob = server.add("bob")
    await _reading_server(bot, server)
    await bot.db.members.set_nick(int(bob.id), bot.guild_id, "Robert")
    question = server.message(bob, "ready?")
    message = server.post("alice", "yes", reply_to=question)
    assert message.reference is not None and message.reference.resolved is not None
    assert await bot.autoread.handle(message) == "read"
    assert bot.speaker.play() == ["Alice said, replying to Robert, yes"]


# ---- language, voice, rate -------------------------------------------------------------------
LANGUAGE_CHOICES = {
    "nobody chose": (None, None, "english"),
    "the server's": (None, "french", "french"),
    "the member's before the server's": ("german", "french", "german"),
    "a choice no longer offered falls through": ("klingon", "french", "french"),
    "none offered: the operator's": ("klingon", "elvish", "english"),
}


@pytest.mark.parametrize(
    ("member", "here", "language"), LANGUAGE_CHOICES.values(), ids=LANGUAGE_CHOICES.keys()
)
def test_the_language_a_member_is_spoken_in(
    bot: Bot, member: str | None, here: str | None, language: str
) -> None:
    settings = ServerSettings(bot.guild_id, language=here)
    assert bot.planner.language_of(MemberSettings(language=member), settings) == language
    assert bot.planner.model_of(language) == (None if language == LANGUAGES[0] else language)


@pytest.mark.parametrize(
    ("member", "here", "rate"),
    [
        (1.5, ServerSettings(1, speaking_rate=0.8), 1.5),
        (None, ServerSettings(1, speaking_rate=0.8), 0.8),
        (None, ServerSettings(1), 1.0),
        (None, None, 1.0),  # a direct message
    ],
)
def test_the_speaking_rate(member: float | None, here: ServerSettings | None, rate: float) -> None:
    assert rate_of(MemberSettings(rate=member), here) == rate


VOICES = {
    "no choice, no server voice: the operator's": ((), None, (None, None)),
    "the server's default voice": ((), "marius", ("marius", None)),
    "their voice everywhere": ((("everywhere", "alba"),), "marius", ("alba", None)),
    "their voice here before everywhere": (
        (("everywhere", "alba"), ("here", "jean")),
        None,
        ("jean", None),
    ),
    "their voice in another server does not count": ((("elsewhere", "jean"),), None, (None, None)),
    "their own cloned voice": ((("here", "cloned"),), "marius", "cloned"),
    "a cloned voice deleted: the server's": (
        (("here", "deleted"),),
        "marius",
        ("marius", None),
    ),
    "another member's cloned voice: never": ((("here", "carol's"),), None, (None, None)),
}


@pytest.mark.parametrize(("choices", "default", "voice"), VOICES.values(), ids=VOICES.keys())
async def test_the_voice_a_member_is_spoken_in(
    bot: Bot,
    server: Server,
    choices: tuple[tuple[str, str], ...],
    default: str | None,
    voice: tuple[str | None, int | None] | str,
) -> None:
    bob = server.add("bob")
    server.add("carol")
    server.start()
    await bot.configure(default_voice=default)
    user = int(bob.id)
    where = {"here": bot.guild_id, "everywhere": None, "elsewhere": bot.guild_id + 1}
    for place, name in choices:
        if name == "cloned":
            voice_id = await bot.clone("bob")
            voice = (str(bot.data_dir / f"{user}/Mine.safetensors"), voice_id)
        elif name == "deleted":
            record = await bot.db.voices.get_by_id(await bot.clone("bob"))
            assert record is not None
            await bot.db.voices.delete(record)
        elif name == "carol's":
            theirs = await bot.clone("carol")
            await bot.db.choices.set(user, where[place], voice_id=theirs)
        else:
            await bot.db.choices.set(user, where[place], builtin=name)
    plan = await bot.planner.plan(await bot.speech.spoken(user, bot.guild_id))
    assert (plan.voice, plan.cloned_id) == voice


async def test_in_direct_messages_no_server_settings_apply(bot: Bot, server: Server) -> None:
    bob = server.add("bob")
    server.start()
    await bot.configure(language="french", speaking_rate=0.8, default_voice="marius")
    await bot.db.members.set_autoread(int(bob.id), bot.guild_id, False)
    spoken = await bot.speech.spoken(int(bob.id), None)
    assert (spoken.language, spoken.rate, spoken.member) == ("english", 1.0, MemberSettings())
    plan = await bot.planner.plan(spoken)
    assert (plan.voice, plan.cloned_id) == (None, None)


async def test_what_is_read_of_a_member_here(bot: Bot, server: Server) -> None:
    bob = server.add("bob")
    server.start()
    user = int(bob.id)
    await bot.db.members.set_nick(user, bot.guild_id, "Robert")
    await bot.db.members.set_language(user, bot.guild_id, "german")
    await bot.db.members.set_rate(user, bot.guild_id, 1.25)
    await bot.db.blocks.add(bot.guild_id, user, int(server.owner.id), None)
    spoken = await bot.speech.spoken(user, bot.guild_id)
    assert spoken.member == MemberSettings("Robert", True, "german", 1.25, blocked=True)
    assert (spoken.language, spoken.rate) == ("german", 1.25)
