"""Slash commands /settings ...: server settings, Manage Server only (checked on both sides)."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.client import PocketVoiceBot
from bot.engine import BUILTIN_VOICES
from cogs.common import respond


class SettingsCog(commands.Cog):
    settings = app_commands.Group(
        name="settings",
        description="This server's PocketVoice settings",
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    def __init__(self, bot: PocketVoiceBot) -> None:
        self.bot = bot

    @settings.command(name="show", description="Show this server's settings")
    async def show(self, interaction: discord.Interaction) -> None:
        assert interaction.guild is not None
        guild = interaction.guild
        await respond(interaction, lambda: self.bot.voices.show_settings(guild))

    @settings.command(name="cloning", description="Allow members to clone their voice here")
    @app_commands.describe(enabled="On or off")
    @app_commands.choices(
        enabled=[
            app_commands.Choice(name="on", value="on"),
            app_commands.Choice(name="off", value="off"),
        ]
    )
    async def cloning(self, interaction: discord.Interaction, enabled: str) -> None:
        assert interaction.guild is not None
        guild = interaction.guild
        await respond(
            interaction,
            lambda: self.bot.voices.set_cloning(interaction.permissions, guild, enabled == "on"),
        )

    @settings.command(name="default-voice", description="The voice for members without one")
    @app_commands.describe(name="A built-in voice, or 'none' for the bot's default")
    async def default_voice(self, interaction: discord.Interaction, name: str) -> None:
        assert interaction.guild is not None
        guild = interaction.guild
        await respond(
            interaction,
            lambda: self.bot.voices.set_default_voice(interaction.permissions, guild, name),
        )

    @default_voice.autocomplete("name")
    async def _builtin_names(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        names = ["none", *BUILTIN_VOICES]
        return [app_commands.Choice(name=n, value=n) for n in names if current.lower() in n][:25]


async def setup(bot: PocketVoiceBot) -> None:
    await bot.add_cog(SettingsCog(bot))
