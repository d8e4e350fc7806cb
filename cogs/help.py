"""Slash command /help and the welcome when the bot joins a server: glue to bot.services.help."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.client import PocketVoiceBot
from bot.services.help import help_reply, welcome
from cogs.common import respond


class HelpCog(commands.Cog):
    def __init__(self, bot: PocketVoiceBot) -> None:
        self.bot = bot

    @app_commands.command(name="help", description="What the bot can do, and how it is set up here")
    async def help(self, interaction: discord.Interaction) -> None:
        can_clone = self.bot.app.engine.has_voice_cloning
        guild = interaction.guild
        await respond(interaction, lambda: help_reply(self.bot.app.db, guild, can_clone))

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        await welcome(guild)


async def setup(bot: PocketVoiceBot) -> None:
    await bot.add_cog(HelpCog(bot))
