"""Slash commands /clone and /voice ...: glue to bot.services.voices."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.client import PocketVoiceBot
from cogs.common import (
    ForgetButton,
    PreviewButton,
    choose_voice,
    guild_of,
    progress_reporter,
    respond,
)


class VoicesCog(commands.Cog):
    voice = app_commands.Group(name="voice", description="Your voices", guild_only=True)

    def __init__(self, bot: PocketVoiceBot) -> None:
        self.bot = bot

    async def _own_names(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        names = await self.bot.app.voices.names_for(interaction.user.id, current, builtin=False)
        return [app_commands.Choice(name=n, value=n) for n in names]

    async def _all_names(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        names = await self.bot.app.voices.names_for(interaction.user.id, current, builtin=True)
        return [app_commands.Choice(name=n, value=n) for n in names]

    @app_commands.command(name="clone", description="Make a voice from a recording of YOUR voice")
    @app_commands.describe(
        name="A name for the voice (1 to 32 characters)",
        clip="A recording of you speaking, 10 to 30 s is best (WAV, FLAC, MP3, Ogg, voice message)",
        consent="This is my own voice and I agree that this bot speaks with it",
    )
    @app_commands.guild_only()
    async def clone(
        self,
        interaction: discord.Interaction,
        name: str,
        clip: discord.Attachment,
        consent: bool,
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.voices.clone(
                interaction.user,
                guild_of(interaction),
                name,
                clip,
                consent,
                progress_reporter(interaction),
            ),
        )

    @voice.command(name="list", description="Your voices and the built-in ones")
    async def list_voices(self, interaction: discord.Interaction) -> None:
        await respond(
            interaction, lambda: self.bot.app.voices.list(interaction.user, guild_of(interaction))
        )

    @voice.command(name="use", description="Speak with one of your voices or a built-in one")
    @app_commands.describe(name="The voice", everywhere="Use it in every server (default: here)")
    @app_commands.autocomplete(name=_all_names)
    async def use(
        self, interaction: discord.Interaction, name: str, everywhere: bool = False
    ) -> None:
        await choose_voice(interaction, name, everywhere)

    @voice.command(name="preview", description="Hear a voice")
    @app_commands.describe(name="The voice", text="What it should say")
    @app_commands.autocomplete(name=_all_names)
    async def preview(
        self, interaction: discord.Interaction, name: str, text: str | None = None
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.voices.preview(interaction.user, name, text, interaction.guild_id),
        )

    @voice.command(name="rename", description="Rename one of your voices")
    @app_commands.describe(name="The voice", new_name="Its new name")
    @app_commands.autocomplete(name=_own_names)
    async def rename(self, interaction: discord.Interaction, name: str, new_name: str) -> None:
        await respond(
            interaction, lambda: self.bot.app.voices.rename(interaction.user, name, new_name)
        )

    @voice.command(name="delete", description="Delete one of your voices and its recording")
    @app_commands.describe(name="The voice")
    @app_commands.autocomplete(name=_own_names)
    async def delete(self, interaction: discord.Interaction, name: str) -> None:
        await respond(interaction, lambda: self.bot.app.voices.delete(interaction.user, name))

    @voice.command(name="export", description="Get one of your voices as a file, for you alone")
    @app_commands.describe(name="The voice")
    @app_commands.autocomplete(name=_own_names)
    async def export(self, interaction: discord.Interaction, name: str) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.voices.export(interaction.user, guild_of(interaction), name),
        )

    @voice.command(name="forget-me", description="Delete all your voices and voice settings")
    async def forget_me(self, interaction: discord.Interaction) -> None:
        await respond(interaction, lambda: self.bot.app.voices.ask_forget(interaction.user))


async def setup(bot: PocketVoiceBot) -> None:
    bot.add_dynamic_items(PreviewButton, ForgetButton)
    await bot.add_cog(VoicesCog(bot))
