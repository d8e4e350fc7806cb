"""A webhook never passes for a member: posting under a name a member here goes by (their
server name, username, nickname or /set nick, however it is written), it is said as a
webhook's, in the server's language, wherever its name is said (issue 33, item 12; the
phrases of each language: tests/text/test_phrasebook.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import discord
import pytest

from tests.services.discord_objects import JSON, TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

HOOK = "1300000000000000001"


@dataclass(frozen=True)
class Persona:
    """A webhook posts under `name`; what is said. Bob is in voice (so in the bot's cache),
    with the server nickname `nick`; Carol is in the server, not in voice, with the /set nick
    `carols`."""

    said: str
    name: str = "Bob"
    nick: str | None = None
    carols: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # content types of attachments
    content: str = "hi"


PERSONAS = {
    "a member's display name": Persona("a webhook named Bob said hi"),
    "a member's username": Persona("a webhook named bob said hi", name="bob"),
    "a member's server nickname": Persona(
        "a webhook named Bobby said hi", name="Bobby", nick="Bobby"
    ),
    "a member's name in capitals": Persona("a webhook named BOB said hi", name="BOB"),
    "a member's name in fancy letters": Persona("a webhook named Bob said hi", name="𝓑𝓸𝓫"),
    "a member's name with a mark after it": Persona("a webhook named Bob! said hi", name="Bob!"),
    "a member's name between decorations": Persona("a webhook named Bob said hi", name="🔥Bob🔥"),
    "a /set nick of a member out of voice": Persona(
        "a webhook named Captain said hi", name="Captain", carols="Captain"
    ),
    "the bot's own name": Persona("a webhook named PocketVoice said hi", name="PocketVoice"),
    "a name no member goes by": Persona("Bridge Bob said hi", name="Bridge Bob"),
    # as far as the bot knows: without the members intent, Carol out of voice is not cached
    "the name of a member the bot does not know of": Persona("Carol said hi", name="Carol"),
    "nothing written: the name is said, as a webhook's": Persona(
        "a webhook named Bob sent an image", content="", files=("image/png",)
    ),
    "xsaid off: no name at all": Persona("hi", settings={"xsaid": False}),
    "xsaid off, nothing written: as a webhook's": Persona(
        "a webhook named Bob sent an image",
        content="",
        files=("image/png",),
        settings={"xsaid": False},
    ),
    "in the server's language": Persona(
        "un webhook nommé Bob a dit salut", content="salut", settings={"language": "french"}
    ),
}


async def _reading_server(
    bot: Bot, server: Server, *, nick: str | None = None, **settings: Any
) -> None:
    """Alice and Bob in Lounge with the bot; Carol in the server only; #general read, with
    webhooks."""
    server.add("bob", nick=nick)
    server.add("carol")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False, rate_limit=50, **settings)


def _posted(server: Server, name: str, content: str = "hi", files: tuple[str, ...] = ()) -> JSON:
    data = server.webhook_message(name, content, webhook_id=HOOK)
    data["attachments"] = [server.attachment("file", kind) for kind in files]
    return data


@pytest.mark.parametrize("case", PERSONAS.values(), ids=PERSONAS.keys())
async def test_a_webhook_under_a_members_name_is_said_as_a_webhook(
    bot: Bot, server: Server, case: Persona
) -> None:
    await _reading_server(bot, server, nick=case.nick, **case.settings)
    if case.carols is not None:
        await bot.db.members.set_nick(int(server["carol"].id), bot.guild_id, case.carols)
    message = server.message_create(_posted(server, case.name, case.content, case.files))
    assert await bot.autoread.handle(message) == "read"
    assert bot.speaker.play() == [case.said]


async def test_the_same_name_from_a_member_and_a_webhook_in_turn(bot: Bot, server: Server) -> None:
    """Bob and a webhook named Bob are two authors: each is named when the other spoke last,
    the webhook always as one; its own next message goes unnamed, as a member's would."""
    await _reading_server(bot, server)
    said = []
    for message in (
        server.post("bob", "one"),
        server.message_create(_posted(server, "Bob", "two")),
        server.message_create(_posted(server, "Bob", "three")),
        server.post("bob", "four"),
    ):
        assert await bot.autoread.handle(message) == "read"
        said += bot.speaker.play()
    assert said == ["Bob said one", "a webhook named Bob said two", "three", "Bob said four"]


async def test_an_edit_of_a_webhooks_message_is_still_said_as_a_webhooks(
    bot: Bot, server: Server
) -> None:
    await _reading_server(bot, server)
    posted = _posted(server, "Bob", "hi")
    assert await bot.autoread.handle(server.message_create(posted)) == "read"
    await bot.autoread.edited(server.message_update(posted, "hi, edited"))
    assert bot.speaker.play() == ["a webhook named Bob said hi, edited"]


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("Bob", "Alice said, replying to a webhook named Bob, look"),
        ("Bridge Bob", "Alice said, replying to Bridge Bob, look"),
    ],
)
async def test_a_reply_to_a_webhook_under_a_members_name(
    bot: Bot, server: Server, name: str, said: str
) -> None:
    await _reading_server(bot, server)
    reply = server.message(server["alice"], "look", reply_to=_posted(server, name))
    assert await bot.autoread.handle(server.message_create(reply)) == "read"
    assert bot.speaker.play() == [said]


async def test_speak_this_message_says_a_webhook_as_one(bot: Bot, server: Server) -> None:
    await _reading_server(bot, server)
    interaction, message = server.message_command("alice", _posted(server, "Bob"))
    assert isinstance(interaction.user, discord.Member)
    answer = await bot.speak_message.speak(interaction.user, message)
    assert answer == f"Speaking that message in <#{VOICE_ID}>."
    assert bot.speaker.play() == ["a webhook named Bob said hi"]
