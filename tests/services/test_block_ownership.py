"""Who may lift or take over a block (issue 48, item 10): its own moderator, or one who
outranks them; a junior moderator no longer lifts a senior's (or the owner's) block, nor
makes it theirs by blocking again. The moderators are discord.py Members of /unblock's and
/block's INTERACTION_CREATE; the block's moderator, out of voice, is asked of Discord
(GET /guilds/{guild}/members/{user}, answered by the test's REST)."""

from __future__ import annotations

from dataclasses import dataclass

import discord
import pytest

from bot.core.errors import UserError
from tests.services.discord_objects import MANAGE_MESSAGES, Server
from tests.services.wiring import Bot

SENIOR = (
    "Only the moderator who blocked them, or one ranked above that moderator, can change "
    "that block."
)
ROLES = {"mods": 3, "helpers": 2, "juniors": 1}


@dataclass(frozen=True)
class Lift:
    blocker: str  # who blocked carol
    by: str  # who unblocks (or blocks her again)
    refused: bool
    blocker_left: bool = False


LIFTS = {
    "a mod lifts the owner's block": Lift("alice", "bob", True),
    "the owner lifts her own": Lift("alice", "alice", False),
    "a mod lifts his own": Lift("bob", "bob", False),
    "a mod lifts a helper's": Lift("dave", "bob", False),
    "a helper lifts a mod's": Lift("bob", "dave", True),
    "the owner lifts a mod's": Lift("bob", "alice", False),
    "a helper lifts the block of a mod who left": Lift("bob", "dave", False, blocker_left=True),
}


def _people(server: Server) -> None:
    roles = {
        name: server.role(name.title(), position=p, permissions=MANAGE_MESSAGES)
        for name, p in ROLES.items()
    }
    server.add("bob", roles=(roles["mods"],))
    server.add("dave", roles=(roles["helpers"],))
    server.add("carol", roles=(roles["juniors"],))
    server.start()


async def _answer(call: object) -> str | None:
    try:
        await call  # type: ignore[misc]
    except UserError as error:
        return error.message
    return None


@pytest.mark.parametrize("command", ["unblock", "block again"])
@pytest.mark.parametrize("case", LIFTS.values(), ids=LIFTS.keys())
async def test_a_block_is_lifted_only_by_its_moderator_or_above(
    bot: Bot, server: Server, case: Lift, command: str
) -> None:
    _people(server)
    guild = server.guild
    assert guild is not None
    carol = int(server["carol"].id)
    await bot.db.blocks.add(guild.id, carol, int(server[case.blocker].id), "spam")
    if case.blocker_left:
        server.leave_server(case.blocker)
    name = "unblock" if command == "unblock" else "block"
    interaction, (member,) = server.slash_command(
        case.by, name, users=(server["carol"],), permissions=MANAGE_MESSAGES
    )
    moderator = interaction.user
    assert isinstance(moderator, discord.Member)
    if command == "unblock":
        answer = await _answer(
            bot.blocks.unblock(interaction.permissions, guild, moderator, member)
        )
        assert await bot.db.blocks.is_blocked(guild.id, carol) is case.refused
    else:
        answer = await _answer(
            bot.blocks.block(interaction.permissions, guild, moderator, member, "mine now")
        )
        owner = int(server[case.blocker if case.refused else case.by].id)
        (block,) = await bot.db.blocks.page(guild.id, 0, 10)
        assert (block.user_id, block.moderator_id) == (carol, owner)
    assert (answer == SENIOR) is case.refused
