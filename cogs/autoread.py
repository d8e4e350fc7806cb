"""Reading chat aloud: message listeners, /clear, /tts and the 'Speak this message' menu."""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from bot.client import PocketVoiceBot
from cogs.common import guild_of, respond

log = logging.getLogger(__name__)


class AutoReadCog(commands.Cog):
    def __init__(self, bot: PocketVoiceBot) -> None:
        self.bot = bot
        self.speak_menu = app_commands.ContextMenu(
            name="Speak this message", callback=self.speak_message
        )
        self.speak_menu.guild_only = True

    async def cog_load(self) -> None:
        self.bot.tree.add_command(self.speak_menu)

    async def cog_unload(self) -> None:
        self.bot.tree.remove_command(self.speak_menu.name, type=self.speak_menu.type)

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        outcome = await self.bot.app.autoread.handle(message)
        log.debug("message %s: %s", message.id, outcome)

    @commands.Cog.listener()
    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        await self.bot.app.autoread.edited(payload.message)

    @commands.Cog.listener()
    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        self.bot.app.autoread.deleted(payload.guild_id, {payload.message_id})

    @commands.Cog.listener()
    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        self.bot.app.autoread.deleted(payload.guild_id, set(payload.message_ids))

    @commands.Cog.listener()
    async def on_guild_channel_delete(self, channel: discord.abc.GuildChannel) -> None:
        await self.bot.app.voice_control.on_channel_deleted(channel.guild, channel.id)

    @app_commands.command(name="clear", description="Drop the messages waiting to be read")
    @app_commands.guild_only()
    async def clear(self, interaction: discord.Interaction) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.voice_control.clear(
                guild_of(interaction), interaction.user, interaction.permissions
            ),
        )

    @app_commands.command(name="tts", description="Get a line as an audio file, in your voice")
    @app_commands.describe(text="What to say")
    async def tts(self, interaction: discord.Interaction, text: str) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.speech.tts_file(interaction.user, interaction.guild, text),
        )

    async def speak_message(
        self, interaction: discord.Interaction, message: discord.Message
    ) -> None:
        await respond(
            interaction, lambda: self.bot.app.speak_message.speak(interaction.user, message)
        )


async def setup(bot: PocketVoiceBot) -> None:
    await bot.add_cog(AutoReadCog(bot))
