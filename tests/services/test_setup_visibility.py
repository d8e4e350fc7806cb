"""`/setup add` reads only a channel the member adding it can see (issue 48, item 15): a
Manage Server member denied View Channel on #staff used to add it and hear it read aloud.
The member is the discord.py Member of /setup add's INTERACTION_CREATE, the channel's
overwrites from GUILD_CREATE."""

from __future__ import annotations

from dataclasses import dataclass

import discord
import pytest

from bot.core.errors import UserError
from tests.services.discord_objects import MANAGE_GUILD, OTHER_TEXT_ID, VIEW_CHANNEL, Server
from tests.services.wiring import Bot

HIDDEN = f"You can't see <#{OTHER_TEXT_ID}> yourself, so I won't read it aloud for you."


@dataclass(frozen=True)
class Adding:
    hidden_from_her: bool  # #off-topic ("#staff") denies her View Channel
    role_sees: bool  # her Manage Server role is allowed View Channel there all the same
    refused: bool


CASES = {
    "hidden from her": Adding(True, False, True),
    "hidden from @everyone, her role allowed": Adding(True, True, False),
    "visible": Adding(False, False, False),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_setup_add_needs_view_channel_for_the_invoker(
    bot: Bot, server: Server, case: Adding
) -> None:
    admins = server.role("Admins", position=2, permissions=MANAGE_GUILD)
    carol = server.add("carol", roles=(admins,))
    if case.hidden_from_her and case.role_sees:
        server.deny(OTHER_TEXT_ID, VIEW_CHANNEL)  # hidden from @everyone
        server.overwrites[OTHER_TEXT_ID] += [  # her role and the bot see it
            {"id": admins.id, "type": 0, "allow": str(VIEW_CHANNEL), "deny": "0"},
            {"id": server.bot.id, "type": 1, "allow": str(VIEW_CHANNEL), "deny": "0"},
        ]
    elif case.hidden_from_her:
        server.deny(OTHER_TEXT_ID, VIEW_CHANNEL, carol)
    guild = server.start()
    staff = guild.get_channel(int(OTHER_TEXT_ID))
    assert staff is not None
    interaction, _ = server.slash_command("carol", "setup add", permissions=MANAGE_GUILD)
    assert isinstance(interaction.user, discord.Member)
    try:
        reply = await bot.settings.setup(
            interaction.permissions, guild, staff, invoker=interaction.user
        )
        answer = reply.content
    except UserError as error:
        answer = error.message
    assert (answer == HIDDEN) is case.refused
    read = [c.channel_id for c in await bot.db.read_channels.list(guild.id)]
    assert read == ([] if case.refused else [int(OTHER_TEXT_ID)])
