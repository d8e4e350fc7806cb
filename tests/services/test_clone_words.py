"""A cloned voice says only its owner's words (issue 58): under "alice said", never another
member's nickname (mentioned, or the author of the message replied to), nor a role's or a
channel's name, nor the server dictionary's replacements: each is words someone else chose.
A built-in voice reads them as before.

On the services wired as the bot wires them (real discord.py objects from Discord-shaped
payloads, a real SQLite store); the same rule end to end: tests/e2e/test_clone_words.py."""

from __future__ import annotations

from dataclasses import dataclass

import discord
import pytest

from tests.services.discord_objects import JSON, OTHER_TEXT_ID, TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

CONFESSION = "I confess I lied to you all"  # bob's server nickname: 27 characters


@dataclass(frozen=True)
class Case:
    cloned: bool
    said: list[str]


async def _setup(bot: Bot, server: Server, *, cloned: bool) -> str:
    """Alice (with her clone or not) and Bob, whose nickname is a sentence, in voice; an
    admin's dictionary turns "hello" into "I quit"; a role named by someone else. The
    role's id."""
    server.add("bob", nick=CONFESSION)
    role = server.role("We all lied")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), rate_limit=50)
    await bot.db.dictionary.add(bot.guild_id, "hello", "I quit")
    if cloned:
        await bot.clone("alice")
    return role.id


CHAT = {
    "her clone": Case(
        True,
        [
            "alice said someone hello",
            "alice said, replying to someone, hello there",
            "alice said a role in a channel",
            "alice said alice here",
        ],
    ),
    "a built-in voice": Case(
        False,
        [
            f"Alice said {CONFESSION} I quit",
            f"Alice said, replying to {CONFESSION}, I quit there",
            "Alice said We all lied in general",
            "Alice said Alice here",
        ],
    ),
}


@pytest.mark.parametrize("case", CHAT.values(), ids=CHAT.keys())
async def test_a_clone_says_no_name_nor_dictionary_word_someone_else_chose(
    bot: Bot, server: Server, case: Case
) -> None:
    role = await _setup(bot, server, cloned=case.cloned)
    alice, bob = server["alice"], server["bob"]
    bobs = server.message(bob, "are you there")
    messages = [
        server.message(alice, f"<@{bob.id}> hello", mentions=(bob,)),
        server.message(alice, "hello there", reply_to=bobs),
        server.message(alice, f"<@&{role}> in <#{TEXT_ID}>"),
        server.message(alice, f"<@{alice.id}> here", mentions=(alice,)),
    ]
    said = []
    for data in messages:
        assert await bot.autoread.handle(server.message_create(data)) == "read"
        bot.clock.advance(61)  # past xsaid's minute: each names its author
        said += bot.speaker.play()
    assert said == case.said
    assert all((u.plan.cloned_id is not None) is case.cloned for u in bot.speaker.played)


SAY = {
    "her clone": Case(True, ["alice said: someone hello"]),
    "a built-in voice": Case(False, [f"{CONFESSION} I quit"]),
}


@pytest.mark.parametrize("case", SAY.values(), ids=SAY.keys())
async def test_say_in_a_clone_says_only_its_owners_words(
    bot: Bot, server: Server, case: Case
) -> None:
    """/say: what she typed, as chat's words, under the same rule."""
    await _setup(bot, server, cloned=case.cloned)
    guild = server.guild
    assert guild is not None
    alice = guild.get_member(int(server["alice"].id))
    assert isinstance(alice, discord.Member)
    await bot.speech.say(alice, f"<@{server['bob'].id}> hello")
    assert bot.speaker.play() == case.said


def _forward(server: Server, text: str) -> JSON:
    """Alice forwards a message someone else wrote (Discord's `message_snapshots`: the
    forwarded message's content, not its author)."""
    data = server.message(server["alice"], "")
    data["message_reference"] = {
        "type": 1,  # a forward
        "message_id": "1400000000000000001",
        "channel_id": OTHER_TEXT_ID,
        "guild_id": server.id,
    }
    data["message_snapshots"] = [
        {
            "message": {
                "type": 0,
                "content": text,
                "embeds": [],
                "attachments": [],
                "timestamp": data["timestamp"],
                "edited_timestamp": None,
                "flags": 0,
                "mentions": [],
                "mention_roles": [],
                "components": [],
            }
        }
    ]
    return data


@pytest.mark.parametrize("how", ["auto-read", "on request"])
async def test_a_forward_is_never_in_the_forwarders_clone(
    bot: Bot, server: Server, how: str
) -> None:
    """A forward's words are another message's: said in the server's built-in voice, as a
    poll's result is (tests/services/test_reading_trust.py), never in Alice's clone."""
    await _setup(bot, server, cloned=True)
    forward = _forward(server, "I confess I lied")
    if how == "auto-read":
        assert await bot.autoread.handle(server.message_create(forward)) == "read"
    else:
        interaction, message = server.message_command("bob", forward)
        assert isinstance(interaction.user, discord.Member)
        await bot.speak_message.speak(interaction.user, message)
    (utterance,) = bot.speaker.queue
    assert bot.speaker.play() == ["Alice forwarded a message: I confess I lied"]
    assert utterance.plan.cloned_id is None and utterance.plan.voice is None
