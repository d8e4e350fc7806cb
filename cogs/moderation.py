"""Slash commands /block, /unblock and /blocked: glue to bot.services.blocks.

Shown by default to members with Manage Messages (Discord's default permissions take one set
of permissions, all needed); the service accepts Manage Messages or Moderate Members, and
checks again, since server admins can change who sees a command.
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.client import PocketVoiceBot
from bot.services.blocks import server_permissions
from cogs.common import guild_of, respond


class ModerationCog(commands.Cog):
    def __init__(self, bot: PocketVoiceBot) -> None:
        self.bot = bot

    @app_commands.command(name="block", description="Stop the bot reading or speaking for a member")
    @app_commands.describe(member="The member", reason="Why (only moderators see it)")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    async def block(
        self, interaction: discord.Interaction, member: discord.Member, reason: str | None = None
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.blocks.block(
                server_permissions(interaction.user),
                guild_of(interaction),
                interaction.user,
                member,
                reason,
            ),
        )

    @app_commands.command(
        name="unblock", description="Let the bot read and speak for a member again"
    )
    @app_commands.describe(member="The member")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    async def unblock(self, interaction: discord.Interaction, member: discord.Member) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.blocks.unblock(
                server_permissions(interaction.user),
                guild_of(interaction),
                interaction.user,
                member,
            ),
        )

    @app_commands.command(name="blocked", description="The members the bot does not speak for")
    @app_commands.describe(page="Which page (10 a page)")
    @app_commands.default_permissions(manage_messages=True)
    @app_commands.guild_only()
    async def blocked(
        self, interaction: discord.Interaction, page: app_commands.Range[int, 1, 1000] = 1
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.blocks.listing(
                server_permissions(interaction.user), guild_of(interaction), page
            ),
        )


async def setup(bot: PocketVoiceBot) -> None:
    await bot.add_cog(ModerationCog(bot))
