"""Slash commands /setup, /set ..., /config ..., /settings, /dict ... and /dictionary ...:
glue to bot.services.settings_commands, dictionary_commands and member_settings.

Server settings need Manage Server: Discord hides them from others (default permissions)
and the service checks again, since server admins can override Discord's defaults. So do
the dictionary's changes (/dict); reading it (/dictionary list, export) is for everyone: a
group's default permissions hold for all its subcommands, hence two groups.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from bot.client import PocketVoiceBot
from bot.services.settings_commands import builtin_voice_names
from bot.storage.server_settings import GROUPS, SettingInput, SettingSpec, settings_in
from bot.text.numbers import zone_names
from cogs.common import choose_voice, guild_of, respond, services

ADMIN = discord.Permissions(manage_guild=True)
# a read channel (/setup): a text channel, or a forum, whose posts are read
TextChannel = discord.TextChannel | discord.ForumChannel
# a voice channel setting's option (home_voice, a read channel's own voice channel)
VoiceChannel = discord.VoiceChannel | discord.StageChannel


def _server_setting_command(spec: SettingSpec) -> app_commands.Command[Any, Any, None]:
    """`/set <name> value:` with the option type that fits the setting."""

    async def apply(interaction: discord.Interaction, value: SettingInput) -> None:
        service = services(interaction).settings_commands
        await respond(
            interaction,
            lambda: service.set_server(
                interaction.permissions, guild_of(interaction), spec.name, value
            ),
        )

    async def on_off(interaction: discord.Interaction, value: bool) -> None:
        await apply(interaction, value)

    async def number(interaction: discord.Interaction, value: int) -> None:
        await apply(interaction, value)

    async def rate(interaction: discord.Interaction, value: float) -> None:
        await apply(interaction, value)

    async def role(interaction: discord.Interaction, value: discord.Role | None = None) -> None:
        await apply(interaction, value.id if value else None)

    async def channel(interaction: discord.Interaction, value: TextChannel | None = None) -> None:
        await apply(interaction, value.id if value else None)

    async def voice_channel(
        interaction: discord.Interaction, value: VoiceChannel | None = None
    ) -> None:
        await apply(interaction, value.id if value else None)

    async def text(interaction: discord.Interaction, value: str) -> None:
        await apply(interaction, value)

    # each kind's own option type: one callable type for them all
    callbacks: dict[str, Callable[..., Coroutine[Any, Any, None]]] = {
        "bool": on_off,
        "int": number,
        "rate": rate,
        "role": role,
        "channel": channel,
        "voice_channel": voice_channel,
    }
    callback = callbacks.get(spec.kind, text)
    hint = f"default: {spec.show(spec.default)}"
    if spec.kind in ("role", "channel", "voice_channel"):
        hint += " (leave empty for none)"
    command: app_commands.Command[Any, ..., None] = app_commands.Command(
        name=spec.name,
        description=spec.description[:100],
        callback=app_commands.describe(value=hint)(callback),
    )
    if spec.kind == "voice":
        command.autocomplete("value")(_builtin_voices)
    if spec.kind == "language":
        command.autocomplete("value")(_languages)
    if spec.kind == "timezone":
        command.autocomplete("value")(_time_zones)
    return command


def _language_choices(
    interaction: discord.Interaction, current: str, first: str
) -> list[app_commands.Choice[str]]:
    """`first`, then the languages the operator offers (read from the installed pocket-tts)."""
    names = [first, *services(interaction).models.languages]
    return [app_commands.Choice(name=n, value=n) for n in names if current.lower() in n][:25]


async def _languages(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    return _language_choices(interaction, current, "none")


async def _dictionary_languages(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    """An entry's language: all, or one the bot speaks (the service checks it again)."""
    return _language_choices(interaction, current, "all")


async def _builtin_voices(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    names = ["none", *builtin_voice_names()]
    return [app_commands.Choice(name=n, value=n) for n in names if current.lower() in n][:25]


async def _time_zones(
    interaction: discord.Interaction, current: str
) -> list[app_commands.Choice[str]]:
    return [app_commands.Choice(name=n, value=n) for n in zone_names(current)]


class SettingsCog(commands.Cog):
    set_group = app_commands.Group(
        name="set", description="Your reading preferences in this server", guild_only=True
    )
    # Apart from /set, which members see (their own). `/config <group> <setting>`: the groups
    # are added in setup(), from the settings' schema.
    config_group = app_commands.Group(
        name="config",
        description="This server's settings (Manage Server)",
        guild_only=True,
        default_permissions=ADMIN,
    )

    setup_group = app_commands.Group(
        name="setup",
        description="The channels read aloud (Manage Server)",
        guild_only=True,
        default_permissions=ADMIN,
    )

    def __init__(self, bot: PocketVoiceBot) -> None:
        self.bot = bot

    @setup_group.command(name="add", description="Read a text or forum channel aloud (up to 5)")
    @app_commands.describe(
        channel="The channel to read",
        voice_channel="The voice channel to read it in (default: the author's)",
    )
    async def setup_add(
        self,
        interaction: discord.Interaction,
        channel: TextChannel,
        voice_channel: VoiceChannel | None = None,
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.settings_commands.setup(
                interaction.permissions,
                guild_of(interaction),
                channel,
                voice_channel,
                invoker=interaction.user,
            ),
        )

    @setup_group.command(name="remove", description="Stop reading a channel aloud")
    @app_commands.describe(channel="The channel to stop reading")
    async def setup_remove(self, interaction: discord.Interaction, channel: TextChannel) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.settings_commands.setup_remove(
                interaction.permissions, guild_of(interaction), channel.id
            ),
        )

    @app_commands.command(name="settings", description="Show this server's settings")
    @app_commands.guild_only()
    async def settings(self, interaction: discord.Interaction) -> None:
        await respond(
            interaction, lambda: self.bot.app.settings_commands.show(guild_of(interaction))
        )

    @set_group.command(name="nick", description="The name I call you by ('reset' for your own)")
    @app_commands.describe(
        name="How I should call you",
        member="Another member's name instead (needs Manage Nicknames)",
    )
    async def nick(
        self, interaction: discord.Interaction, name: str, member: discord.Member | None = None
    ) -> None:
        service = self.bot.app.member_settings
        await respond(
            interaction,
            lambda: service.set_nick(
                interaction.user, interaction.permissions, guild_of(interaction), name, member
            ),
        )

    @set_group.command(name="autoread", description="Whether your messages are read aloud here")
    @app_commands.describe(value="on: read them; off: never")
    @app_commands.choices(
        value=[
            app_commands.Choice(name="on", value="on"),
            app_commands.Choice(name="off", value="off"),
        ]
    )
    async def autoread(self, interaction: discord.Interaction, value: str) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.member_settings.set_autoread(
                interaction.user, guild_of(interaction), value == "on"
            ),
        )

    @set_group.command(name="my_language", description="The language your messages are read in")
    @app_commands.describe(language="A language, or 'none' for the server's")
    @app_commands.autocomplete(language=_languages)
    async def my_language(self, interaction: discord.Interaction, language: str) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.member_settings.set_language(
                interaction.user, guild_of(interaction), language
            ),
        )

    @set_group.command(name="my_rate", description="How fast your messages are read here")
    @app_commands.describe(rate="0.5 to 2 (1: normal), or 'none' for the server's")
    async def my_rate(self, interaction: discord.Interaction, rate: str) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.member_settings.set_rate(
                interaction.user, guild_of(interaction), rate
            ),
        )

    @set_group.command(name="my_pitch", description="How high your messages are read here")
    @app_commands.describe(
        pitch="-6 to +6 semitones (0: the voice's own), or 'none' for the server's"
    )
    async def my_pitch(self, interaction: discord.Interaction, pitch: str) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.member_settings.set_pitch(
                interaction.user, guild_of(interaction), pitch
            ),
        )

    @set_group.command(name="voice", description="The voice you speak with (yours or built-in)")
    @app_commands.describe(name="The voice", everywhere="Use it in every server (default: here)")
    async def voice(
        self, interaction: discord.Interaction, name: str, everywhere: bool = False
    ) -> None:
        await choose_voice(interaction, name, everywhere)

    @voice.autocomplete("name")
    async def _voice_names(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        names = await self.bot.app.voices.names_for(interaction.user.id, current, builtin=True)
        return [app_commands.Choice(name=n, value=n) for n in names]

    dict_group = app_commands.Group(
        name="dict",
        description="Change this server's pronunciation dictionary (Manage Server)",
        guild_only=True,
        default_permissions=ADMIN,
    )
    dictionary_group = app_commands.Group(
        name="dictionary", description="This server's pronunciation dictionary", guild_only=True
    )

    @dict_group.command(name="add", description="Say a word differently (whole word, any case)")
    @app_commands.describe(
        word="The word as written",
        spoken="How to say it",
        language="Only when speaking this language (default: all languages)",
    )
    @app_commands.autocomplete(language=_dictionary_languages)
    async def dict_add(
        self, interaction: discord.Interaction, word: str, spoken: str, language: str | None = None
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.dictionary_commands.dict_add(
                interaction.permissions, guild_of(interaction), word, spoken, language
            ),
        )

    @dict_group.command(name="remove", description="Remove a word from the dictionary")
    @app_commands.describe(
        word="The word as written",
        language="The language of the entry (default: the one for all languages)",
    )
    @app_commands.autocomplete(language=_dictionary_languages)
    async def dict_remove(
        self, interaction: discord.Interaction, word: str, language: str | None = None
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.dictionary_commands.dict_remove(
                interaction.permissions, guild_of(interaction), word, language
            ),
        )

    @dict_group.command(
        name="sound", description="Play a short sound in place of a word (3 s, 200 KB at most)"
    )
    @app_commands.describe(
        word="The word as written (whole word, any case)",
        clip="An audio file: WAV, FLAC, MP3, Ogg Vorbis or Opus; at most 3 s and 200 KB",
    )
    async def dict_sound(
        self, interaction: discord.Interaction, word: str, clip: discord.Attachment
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.dictionary_commands.dict_sound(
                interaction.permissions, guild_of(interaction), word, clip
            ),
        )

    @dict_group.command(name="sound_remove", description="Remove a word's sound")
    @app_commands.describe(word="The word as written")
    async def dict_sound_remove(self, interaction: discord.Interaction, word: str) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.dictionary_commands.dict_sound_remove(
                interaction.permissions, guild_of(interaction), word
            ),
        )

    @dictionary_group.command(name="list", description="Show the dictionary")
    @app_commands.describe(contains="Only the words that contain this", page="Which page")
    async def dict_list(
        self,
        interaction: discord.Interaction,
        contains: str | None = None,
        page: app_commands.Range[int, 1, 100] = 1,
    ) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.dictionary_commands.dict_list(
                guild_of(interaction), contains, page
            ),
        )

    @dictionary_group.command(name="export", description="Get the dictionary as a file")
    @app_commands.describe(format="JSON (default) or CSV, for spreadsheets")
    @app_commands.choices(
        format=[
            app_commands.Choice(name="JSON", value="json"),
            app_commands.Choice(name="CSV", value="csv"),
        ]
    )
    async def dict_export(self, interaction: discord.Interaction, format: str = "json") -> None:
        await respond(
            interaction,
            lambda: self.bot.app.dictionary_commands.dict_export(guild_of(interaction), format),
        )

    @dict_group.command(
        name="import", description="Add words from a file (JSON or CSV), after a preview"
    )
    @app_commands.describe(
        file="A file from /dictionary export, or CSV lines: word,spoken,language"
    )
    async def dict_import(self, interaction: discord.Interaction, file: discord.Attachment) -> None:
        await respond(
            interaction,
            lambda: self.bot.app.dictionary_commands.dict_import(
                interaction.permissions, interaction.user, guild_of(interaction), file
            ),
        )


async def setup(bot: PocketVoiceBot) -> None:
    cog = SettingsCog(bot)
    for group, description in GROUPS.items():
        commands_of_group = app_commands.Group(name=group, description=description)
        for spec in settings_in(group):
            commands_of_group.add_command(_server_setting_command(spec))
        cog.config_group.add_command(commands_of_group)
    await bot.add_cog(cog)
