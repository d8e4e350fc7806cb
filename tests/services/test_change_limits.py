"""Changes that cost the bot more than the command, limited per whoever they are for
(`bot/services/change_limits.py`): a reading name (`/set nick`: new audio for the phrase cache
in each voice it is said in) and a language (a model to load)."""

from __future__ import annotations

from collections.abc import Awaitable

import discord
import pytest

from bot.core.errors import UserError
from bot.services.change_limits import ChangeLimit
from bot.services.language_choice import (
    LANGUAGE_CHANGES,
    LANGUAGE_CHANGES_WINDOW_S,
    SERVER_MEMBER_LANGUAGE_CHANGES,
)
from bot.services.member_settings import NICK_CHANGES, NICK_CHANGES_WINDOW_S
from tests.services.discord_objects import EVERYONE, Server
from tests.services.wiring import Bot, Clock

MANAGE_NICKNAMES = discord.Permissions(manage_nicknames=True).value

# (seconds since the start, key, the wait answered: 0.0 is a change counted), for 2 a minute
STEPS = {
    "within the limit": [(0, "a", 0.0), (1, "a", 0.0)],
    "past it: the wait until the oldest leaves the window": [
        (0, "a", 0.0),
        (10, "a", 0.0),
        (20, "a", 40.0),
    ],
    "a refusal is not counted": [
        (0, "a", 0.0),
        (10, "a", 0.0),
        (20, "a", 40.0),
        (60, "a", 0.0),
        (61, "a", 9.0),
    ],
    "each key its own": [(0, "a", 0.0), (0, "a", 0.0), (0, "b", 0.0), (0, "a", 60.0)],
}


@pytest.mark.parametrize("steps", STEPS.values(), ids=STEPS.keys())
def test_a_change_limit(steps: list[tuple[float, str, float]]) -> None:
    clock = Clock(0.0)
    limit = ChangeLimit(2, 60.0, clock)
    for at, key, wait in steps:
        clock.now = at
        assert limit.take(key) == wait, (at, key)


def test_a_change_limit_keeps_only_who_changed_lately() -> None:
    clock = Clock(0.0)
    limit = ChangeLimit(2, 60.0, clock)
    for key in range(100):
        limit.take(key)
    clock.advance(60.0)
    limit.take("now")
    assert list(limit._changes) == ["now"]


async def _answer(call: Awaitable[object]) -> str:
    try:
        reply = await call
    except UserError as error:
        return error.message
    return str(getattr(reply, "content", reply))


def _as(server: Server, username: str, *whom: str) -> tuple[discord.Member, list[discord.Member]]:
    """`username` using /set nick (on the members `whom`): them, and those members."""
    people = tuple(server[w] for w in whom)
    interaction, members = server.slash_command(
        username, "set nick", users=people, permissions=EVERYONE | MANAGE_NICKNAMES
    )
    assert isinstance(interaction.user, discord.Member)
    return interaction.user, members


async def _nick(bot: Bot, user: str) -> str | None:
    return (await bot.db.members.get(int(bot.server[user].id), bot.guild_id)).nick


async def test_a_member_changes_their_reading_name_so_many_times_in_ten_minutes(
    bot: Bot, server: Server
) -> None:
    """Each name is new audio ("NAME said", "NAME joined") in every voice it is said in: 30
    names a minute were 30 new phrases to render and keep, a minute."""
    server.add("bob")
    server.add("carol")
    guild = server.start()
    bob, _ = _as(server, "bob")
    permissions = discord.Permissions(EVERYONE)
    for n in range(NICK_CHANGES):
        assert await _answer(bot.members.set_nick(bob, permissions, guild, f"Bob {n}")) == (
            f"I will call you “Bob {n}” when reading your messages."
        )
    refused = await _answer(bot.members.set_nick(bob, permissions, guild, "Bob again"))
    assert refused == (
        f"Your reading name was changed {NICK_CHANGES} times in the last few minutes: please "
        f"wait {round(NICK_CHANGES_WINDOW_S / 60)} min before changing it again."
    )
    assert await _nick(bot, "bob") == f"Bob {NICK_CHANGES - 1}"
    carol, _ = _as(server, "carol")  # another member: a count of their own
    assert "I will call you" in await _answer(bot.members.set_nick(carol, permissions, guild, "C"))
    # going back to the server name costs no new name: never refused
    assert await _answer(bot.members.set_nick(bob, permissions, guild, "reset")) == (
        "I will call you by your server name again."
    )
    bot.clock.advance(NICK_CHANGES_WINDOW_S)
    assert "I will call you" in await _answer(bot.members.set_nick(bob, permissions, guild, "B"))


async def test_a_moderators_renames_count_for_the_member_renamed(bot: Bot, server: Server) -> None:
    server.add("bob")
    server.add("carol")
    guild = server.start()
    owner, (bob, carol) = _as(server, "alice", "bob", "carol")
    permissions = discord.Permissions(EVERYONE | MANAGE_NICKNAMES)
    for n in range(NICK_CHANGES):
        await bot.members.set_nick(owner, permissions, guild, f"Bob {n}", bob)
    refused = await _answer(bot.members.set_nick(owner, permissions, guild, "Bob again", bob))
    assert refused == (
        f"The reading name of <@{bob.id}> was changed {NICK_CHANGES} times in the last few "
        f"minutes: please wait {round(NICK_CHANGES_WINDOW_S / 60)} min before changing it again."
    )
    himself, _ = _as(server, "bob")  # the same member's name: the same count
    refused = await _answer(bot.members.set_nick(himself, permissions, guild, "Bobby"))
    assert refused.startswith("Your reading name was changed")
    assert "I will call" in await _answer(
        bot.members.set_nick(owner, permissions, guild, "Cee", carol)
    )


async def test_a_refused_name_is_not_counted(bot: Bot, server: Server) -> None:
    server.add("bob")
    server.add("carol")
    guild = server.start()
    await bot.db.members.set_nick(int(server["carol"].id), guild.id, "Cee")
    bob, _ = _as(server, "bob")
    permissions = discord.Permissions(EVERYONE)
    for _ in range(NICK_CHANGES + 1):
        refused = await _answer(bot.members.set_nick(bob, permissions, guild, "Cee"))
        assert refused == "“Cee” is the name of another member here: please choose another."
    assert "I will call you" in await _answer(bot.members.set_nick(bob, permissions, guild, "B"))


async def test_a_member_changes_their_language_so_many_times_in_five_minutes(
    bot: Bot, server: Server
) -> None:
    server.add("bob")
    guild = server.start()
    bob, _ = _as(server, "bob")
    for n in range(LANGUAGE_CHANGES):
        await bot.members.set_language(bob, guild, ("french", "german")[n % 2])
    assert await _answer(bot.members.set_language(bob, guild, "english")) == (
        f"The language was changed {LANGUAGE_CHANGES} times in the last few minutes: please "
        f"wait {round(LANGUAGE_CHANGES_WINDOW_S / 60)} min before changing it again."
    )
    bot.clock.advance(LANGUAGE_CHANGES_WINDOW_S)
    assert "english" in await _answer(bot.members.set_language(bob, guild, "english"))


async def test_the_members_of_a_server_change_their_languages_so_many_times_together(
    bot: Bot, server: Server
) -> None:
    """Alts each had a member's 3 changes: 10 accounts were 30 model loads in five minutes.
    The server's members share a limit too; a refusal counts against no one's own."""
    alts = [f"alt{n}" for n in range(SERVER_MEMBER_LANGUAGE_CHANGES + 1)]
    for name in alts:
        server.add(name)
    guild = server.start()
    members = [_as(server, name)[0] for name in alts]
    for n, member in enumerate(members[:-1]):
        language = ("french", "german")[n % 2]
        assert f"in {language} in this server" in await _answer(
            bot.members.set_language(member, guild, language)
        )
    last = members[-1]
    assert await _answer(bot.members.set_language(last, guild, "french")) == (
        f"Members of this server changed their language {SERVER_MEMBER_LANGUAGE_CHANGES} "
        f"times in the last few minutes: please wait {round(LANGUAGE_CHANGES_WINDOW_S / 60)} "
        "min before changing yours."
    )
    assert (await bot.db.members.get(last.id, guild.id)).language is None
    # going back to the server's language loads nothing: never refused
    assert "this server's language" in await _answer(
        bot.members.set_language(members[0], guild, "none")
    )
    bot.clock.advance(LANGUAGE_CHANGES_WINDOW_S)
    for _ in range(LANGUAGE_CHANGES):  # the refusal took none of the last one's own changes
        assert "french" in await _answer(bot.members.set_language(last, guild, "french"))


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Bo\x00b", "a control character (U+0000)"),  # PostgreSQL refuses a NUL
        ("Bob\x07", "a control character (U+0007)"),
        ("B\udc00ob", "an invalid character (U+DC00)"),  # half of a surrogate pair
    ],
)
async def test_a_reading_name_that_no_store_can_keep_is_refused(
    bot: Bot, server: Server, name: str, why: str
) -> None:
    server.add("bob")
    guild = server.start()
    bob, _ = _as(server, "bob")
    answer = await _answer(bot.members.set_nick(bob, discord.Permissions(EVERYONE), guild, name))
    assert answer == f"The name holds {why}: remove it."
    assert await _nick(bot, "bob") is None
