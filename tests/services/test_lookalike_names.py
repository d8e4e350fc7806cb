"""Look-alike letters (issue 48, item 11): a webhook named Cyrillic "Аlice" (its A is U+0410)
or Greek "Αlice" is said as a webhook's, not as Alice's "NAME said"; a /set nick spelt with
another script's look-alikes of a member's name is refused. Unicode's confusables (UTS #39,
the confusable-homoglyphs package) fold each look-alike to the Latin letter it looks like.
Real discord.py Messages from MESSAGE_CREATE; the nick's member from an INTERACTION_CREATE."""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

POSING = {
    "Cyrillic А": ("\u0410lice", True),
    "Greek Α": ("\u0391lice", True),
    "Cyrillic о in a nick": ("B\u043eb", True),
    "Cyrillic а in Bob's /set nick": ("C\u0430pt\u0430in", True),  # Cаptаin
    "another name in Cyrillic": ("\u0411\u043e\u0440\u0438\u0441", False),  # Борис
    "a plain other name": ("Bridge Dave", False),
}


async def _server(bot: Bot, server: Server) -> discord.Guild:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False, rate_limit=50)
    await bot.db.members.set_nick(int(server["bob"].id), guild.id, "Captain")
    return guild


@pytest.mark.parametrize(("name", "posing"), POSING.values(), ids=POSING.keys())
async def test_a_webhook_under_a_look_alike_name_is_said_as_a_webhook(
    bot: Bot, server: Server, name: str, posing: bool
) -> None:
    await _server(bot, server)
    message = server.message_create(server.webhook_message(name, "I quit"))
    assert await bot.autoread.handle(message) == "read"
    (said,) = bot.speaker.play()
    assert said == (f"a webhook named {name} said I quit" if posing else f"{name} said I quit")


NICKS = {
    "Cyrillic А for Alice": ("\u0410lice", True),
    "Greek ο for Bob": ("B\u03bfb", True),
    "Cyrillic for Bob's nick": ("\u0421\u0430ptain", True),  # Саptain
    "a name nobody goes by": ("Carol", False),
}


@pytest.mark.parametrize(("nick", "refused"), NICKS.values(), ids=NICKS.keys())
async def test_a_look_alike_nick_is_refused(
    bot: Bot, server: Server, nick: str, refused: bool
) -> None:
    guild = await _server(bot, server)
    carol = server.add("carol")
    interaction, _ = server.slash_command("carol", "set nick")
    member = interaction.user
    assert isinstance(member, discord.Member)
    try:
        answer = (await bot.members.set_nick(member, interaction.permissions, guild, nick)).content
    except UserError as error:
        answer = error.message
    assert ("is the name of another member here" in answer) is refused
    nicks = await bot.db.members.nicks(guild.id, [int(carol.id)])
    assert (nicks.get(int(carol.id)) == nick) is not refused
