"""What a member types to `/say` and `/tts` is said as their chat message would be
(`bot/services/wording.py`, the one rendering of both): the server's dictionary for the
language spoken, emoji, links, markup, mentions by the names members are read by, the length
cap; never "NAME said", except the username a cloned voice is always named by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import discord
import pytest

from bot.core.errors import UserError
from tests.services.discord_objects import VOICE_ID, Server
from tests.services.wiring import Bot

Entry = tuple[str, str, str | None]  # word, how it is said, the language it is for
BRB: Entry = ("brb", "be right back", None)


@dataclass(frozen=True)
class Typed:
    text: str  # "{carol}": a mention of carol
    said: str
    dictionary: tuple[Entry, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict)
    language: str | None = None  # bob's own
    carol: str | None = None  # her /set nick
    carol_in_voice: bool = False  # (then the bot's cache knows her: her server nickname)
    cloned: bool = False  # bob speaks in his own cloned voice


SAID = {
    "the server's dictionary": Typed("brb, back soon", "be right back, back soon", (BRB,)),
    "the dictionary of the language spoken": Typed(
        "gg",
        "bien joué",
        (("gg", "good game", None), ("gg", "bien joué", "french")),
        language="french",
    ),
    "not another language's entry": Typed("gg", "gg", (("gg", "bien joué", "french"),)),
    "emoji by their names": Typed("well done 🎉", "well done party popper"),
    "emoji skipped with skip_emoji": Typed(
        "well done 🎉", "well done", settings={"skip_emoji": True}
    ),
    "a link by its host": Typed("see https://www.example.com/page", "see a link to example.com"),
    "markup goes": Typed("**really** ||secret||", "really a spoiler"),
    "a member by the name they are read by": Typed("hi {carol}", "hi Cee", carol="Cee"),
    "a member in voice by their server nickname": Typed(
        "hi {carol}", "hi Carrie", carol_in_voice=True
    ),
    "a member the bot does not know": Typed("hi {carol}", "hi someone"),
    "the length cap": Typed(
        "one two three four five six seven", "one two and so on", settings={"max_length": 20}
    ),
    "no NAME said, whatever xsaid says": Typed("hello there", "hello there"),
    # the dictionary's words are an admin's, not the owner's: never in their clone (issue 58)
    "a cloned voice: its owner's username, then the words": Typed(
        "brb", "bob said: brb", (BRB,), cloned=True
    ),
}


async def _server(bot: Bot, server: Server, case: Typed) -> discord.Member:
    """Bob in Lounge (and Carol, as the case says), the server as the case says: Bob."""
    server.add("bob")
    server.add("carol", nick="Carrie")
    server.in_voice("bob", VOICE_ID)
    if case.carol_in_voice:
        server.in_voice("carol", VOICE_ID)
    guild = server.start()
    await bot.configure(**case.settings)
    for word, spoken, language in case.dictionary:
        await bot.db.dictionary.add(guild.id, word, spoken, language)
    if case.carol is not None:
        await bot.db.members.set_nick(int(server["carol"].id), guild.id, case.carol)
    if case.language is not None:
        await bot.db.members.set_language(int(server["bob"].id), guild.id, case.language)
    if case.cloned:
        await bot.clone("bob")
    bob = guild.get_member(int(server["bob"].id))
    assert bob is not None and bob.voice is not None
    return bob


def _typed(server: Server, case: Typed) -> str:
    return case.text.format(carol=f"<@{server['carol'].id}>")


@pytest.mark.parametrize("case", SAID.values(), ids=SAID.keys())
async def test_say_speaks_what_chat_would_say(bot: Bot, server: Server, case: Typed) -> None:
    bob = await _server(bot, server, case)
    assert await bot.speech.say(bob, _typed(server, case)) == f"Speaking in <#{VOICE_ID}>."
    assert [utterance.text for utterance in bot.speaker.queue] == [case.said]


TTS = {
    name: SAID[name]
    for name in (
        "the server's dictionary",
        "the dictionary of the language spoken",
        "a member by the name they are read by",
        "the length cap",
        "a cloned voice: its owner's username, then the words",
    )
}


@pytest.mark.parametrize("case", TTS.values(), ids=TTS.keys())
async def test_a_tts_file_says_what_say_would(bot: Bot, server: Server, case: Typed) -> None:
    bob = await _server(bot, server, case)
    reply = await bot.speech.tts_file(bob, bob.guild, _typed(server, case))
    assert reply.file is not None and reply.file[0] == "speech.ogg"
    assert bot.speakers.scheduler.asked == [case.said]


async def test_a_tts_file_in_direct_messages_has_no_server_dictionary(
    bot: Bot, server: Server
) -> None:
    server.add("bob")
    guild = server.start()
    await bot.db.dictionary.add(guild.id, *BRB)
    user = server.direct_message("bob", "hi").author  # (no server: a User)
    assert isinstance(user, discord.User)
    await bot.speech.tts_file(user, None, "brb 🎉 https://example.com/x")
    assert bot.speakers.scheduler.asked == ["brb party popper a link to example.com"]


@pytest.mark.parametrize("text", ["...", "?!", "** __ **"])
async def test_nothing_left_to_say_is_refused(bot: Bot, server: Server, text: str) -> None:
    bob = await _server(bot, server, Typed(text, ""))
    for command in (bot.speech.say(bob, text), bot.speech.tts_file(bob, bob.guild, text)):
        with pytest.raises(UserError) as error:
            await command
        assert error.value.message == "There is nothing to say: please give me some text."
    assert bot.speaker.queue == [] and bot.speakers.scheduler.asked == []
