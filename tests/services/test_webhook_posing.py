"""A webhook cannot pass for a member by an accent, nor for the server's owner the bot has
not cached (issue 58): "Böb" is Bob to the ear, and without the members intent the owner is
in the cache only while in voice, so their names are fetched (once a while); while they cannot
be, every webhook is said as one. The rest of the rule: test_webhook_names.py."""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from bot.services.wording import said_as
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

HOOK = "1300000000000000002"
ACCENTED = ["Böb", "Bøb", "Bób", "BÔB", "B\u04e7b"]  # (the last: Cyrillic ӧ, an о with two dots)


@pytest.mark.parametrize("name", ACCENTED)
def test_an_accent_does_not_make_another_name(name: str) -> None:
    assert said_as(name) == said_as("Bob")


@pytest.mark.parametrize(("one", "other"), [("Bob", "Rob"), ("Ana", "Anna"), ("さくら", "ざくら")])
def test_other_names_stay_other_names(one: str, other: str) -> None:
    assert said_as(one) != said_as(other)  # (a Japanese mark is a letter there: kept)


async def _reading_server(bot: Bot, server: Server, *, owner_in_voice: bool) -> None:
    """Bob in Lounge with the bot; Alice, the server's owner, too or not; #general read,
    with webhooks."""
    server.add("bob")
    server.in_voice("bob", VOICE_ID)
    if owner_in_voice:
        server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False, rate_limit=50)


async def _said(bot: Bot, server: Server, name: str) -> list[str]:
    posted = server.webhook_message(name, "hi", webhook_id=HOOK)
    assert await bot.autoread.handle(server.message_create(posted)) == "read"
    bot.clock.advance(61)
    return bot.speaker.play()


@pytest.mark.parametrize("name", ACCENTED)
async def test_a_webhook_under_an_accented_members_name(
    bot: Bot, server: Server, name: str
) -> None:
    await _reading_server(bot, server, owner_in_voice=True)
    assert await _said(bot, server, name) == [f"a webhook named {name} said hi"]


@pytest.mark.parametrize("owner_in_voice", [True, False])
async def test_a_webhook_under_the_owners_name(
    bot: Bot, server: Server, owner_in_voice: bool
) -> None:
    """Alice owns the server: in voice (cached) or not (fetched, once for many messages)."""
    await _reading_server(bot, server, owner_in_voice=owner_in_voice)
    member = f"members/{server['alice'].id}"
    for name in ("Alice", "alice", "Ålice"):
        assert await _said(bot, server, name) == [f"a webhook named {name} said hi"]
    assert await _said(bot, server, "Bridge Bob") == ["Bridge Bob said hi"]
    fetched = [path for method, path in server.http.requests if path.endswith(member)]
    assert len(fetched) == (0 if owner_in_voice else 1)


async def test_while_the_owner_cannot_be_known_every_webhook_is_one(
    bot: Bot, server: Server
) -> None:
    """Discord's API is down when the owner's names are first needed: no webhook passes for
    anyone meanwhile (the fetch is tried again after OWNER_RETRY_S), not even under a name
    no member goes by."""
    await _reading_server(bot, server, owner_in_voice=False)
    server.http.down = True
    assert await _said(bot, server, "Alice") == ["a webhook named Alice said hi"]
    assert await _said(bot, server, "Bridge Bob") == ["a webhook named Bridge Bob said hi"]


async def test_a_member_cannot_take_the_owners_name(bot: Bot, server: Server) -> None:
    """/set nick: Bob cannot be read as the owner, out of voice as she is."""
    await _reading_server(bot, server, owner_in_voice=False)
    guild = server.guild
    assert guild is not None
    bob = guild.get_member(int(server["bob"].id))
    assert isinstance(bob, discord.Member)
    with pytest.raises(UserError) as refused:
        await bot.members.set_nick(bob, discord.Permissions.none(), guild, "Alicé")
    assert refused.value.message == (
        "“Alicé” is the name of another member here: please choose another."
    )
