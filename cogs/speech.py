"""Slash commands /say, /join, /leave, /skip, /stop and the leave-when-alone listener."""

from __future__ import annotations

import logging
import time

import discord
from discord import app_commands
from discord.ext import commands

from bot.client import PocketVoiceBot
from bot.services.botstats import botstats
from cogs.common import guild_of, respond

log = logging.getLogger(__name__)


def _who(
    interaction: discord.Interaction,
) -> tuple[discord.Member | discord.User, discord.Permissions]:
    return interaction.user, interaction.permissions


class SpeechCog(commands.Cog):
    def __init__(self, bot: PocketVoiceBot) -> None:
        self.bot = bot

    @app_commands.command(name="say", description="Speak a line in your voice channel")
    @app_commands.describe(text="What to say")
    @app_commands.guild_only()
    async def say(self, interaction: discord.Interaction, text: str) -> None:
        asked_at = time.monotonic()  # before the deferral: the order servers asked in
        await respond(
            interaction, lambda: self.bot.app.speech.say(interaction.user, text, asked_at)
        )

    @app_commands.command(name="join", description="Bring the bot into your voice channel")
    @app_commands.guild_only()
    async def join(self, interaction: discord.Interaction) -> None:
        await respond(interaction, lambda: self.bot.app.voice_control.join(interaction.user))

    @app_commands.command(name="leave", description="Make the bot leave the voice channel")
    @app_commands.guild_only()
    async def leave(self, interaction: discord.Interaction) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.voice_control.leave(guild_of(interaction), *_who(interaction)),
        )

    @app_commands.command(name="skip", description="Stop the current message, keep the queue")
    @app_commands.guild_only()
    async def skip(self, interaction: discord.Interaction) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.voice_control.skip(guild_of(interaction), *_who(interaction)),
        )

    @app_commands.command(name="stop", description="Stop speaking and clear the queue")
    @app_commands.guild_only()
    async def stop(self, interaction: discord.Interaction) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.voice_control.stop(guild_of(interaction), *_who(interaction)),
        )

    @app_commands.command(name="botstats", description="How fast and how busy the bot is")
    async def botstats(self, interaction: discord.Interaction) -> None:
        await respond(
            interaction,
            lambda: botstats(self.bot.app.speakers, self.bot.process_shards(), interaction.guild),
        )

    @commands.Cog.listener()
    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        if before.channel != after.channel:
            await self.bot.app.voice_control.on_voice_state_change(
                member.guild, member, after.channel
            )
            outcome = await self.bot.app.notices.on_voice_state(
                member, before.channel, after.channel
            )
            log.debug("voice notice for member %s: %s", member.id, outcome)

    @commands.Cog.listener()
    async def on_guild_available(self, guild: discord.Guild) -> None:
        """At start-up (and after an outage): take up the server's home voice channel."""
        await self.bot.app.home.settle(guild)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """The bot was removed from a server (or it was deleted): forget its state."""
        await self.bot.app.voice_control.forget_guild(guild)
        self.bot.app.autoread.forget_guild(guild.id)
        self.bot.app.notices.forget_guild(guild.id)


async def setup(bot: PocketVoiceBot) -> None:
    await bot.add_cog(SpeechCog(bot))
