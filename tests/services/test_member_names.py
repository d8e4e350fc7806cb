"""The names members go by, as they sound (bot/services/wording.py): what `/set nick`
refuses as another member's name and what a webhook cannot pass for (test_webhook_names.py)."""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from bot.services.wording import names_in_use, said_as
from tests.services.discord_objects import VOICE_ID, Server
from tests.services.wiring import Bot

SOUNDS_THE_SAME = {
    "capitals": ("BOB", "bob"),
    "fancy letters": ("𝓑𝓸𝓫", "Bob"),
    "decorations": ("🔥Bob🔥", "bob"),
    "a mark after it": ("Bob!", "bob"),
    "dots and spaces": ("B.o b", "bob"),
}


@pytest.mark.parametrize(("one", "other"), SOUNDS_THE_SAME.values(), ids=SOUNDS_THE_SAME.keys())
def test_names_that_sound_the_same_are_one(one: str, other: str) -> None:
    assert said_as(one) == said_as(other)


@pytest.mark.parametrize(("one", "other"), [("Bob", "Rob"), ("Bob", "Bobby"), ("Jo", "J0")])
def test_other_names_are_other_names(one: str, other: str) -> None:
    assert said_as(one) != said_as(other)


async def test_the_names_in_use_are_the_cached_members_and_every_reading_name(
    bot: Bot, server: Server
) -> None:
    server.add("bob", nick="Bobby")
    carol = server.add("carol")  # not in voice: not cached
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    await bot.db.members.set_nick(int(carol.id), guild.id, "Captain!")
    everyone = await names_in_use(bot.db, guild)
    # the bot, Bob in voice, and the server's owner Alice: out of voice, fetched (issue 58)
    assert everyone == {"bobby", "bob", "pocketvoice", "captain", "alice"}
    assert "carol" not in everyone  # out of voice: the bot does not know of her
    assert "bobby" not in await names_in_use(bot.db, guild, int(server["bob"].id))


async def test_set_nick_refuses_a_name_another_member_goes_by_with_a_mark_after_it(
    bot: Bot, server: Server
) -> None:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    alice = guild.get_member(int(server["alice"].id))
    assert alice is not None
    with pytest.raises(UserError) as refused:
        await bot.members.set_nick(alice, discord.Permissions.none(), guild, "Bob!")
    assert refused.value.message == (
        "“Bob!” is the name of another member here: please choose another."
    )
