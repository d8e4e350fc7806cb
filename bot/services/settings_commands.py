"""What `/setup`, `/config ...` and `/settings` do, apart from the command glue: a server's
settings. The dictionary's commands are in dictionary_commands.py, a member's own settings in
member_settings.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import discord

from bot.core.errors import UserError
from bot.i18n.translate import Phrase, joined, lines, plural, tr
from bot.services.language_choice import LanguageChoice
from bot.services.replies import Reply, require_manage_guild
from bot.storage.database import MAX_READ_CHANNELS, Database, ReadChannel, ReadChannelsFullError
from bot.storage.server_settings import GROUPS, SETTINGS, SettingInput, settings_in
from bot.synthesis.engine import BUILTIN_VOICES


def read_channels_line(channels: list[ReadChannel]) -> Phrase:
    """The read channels as /settings and /help show them: each, with its voice channel."""
    if not channels:
        return tr("none")
    return joined(
        [
            tr(
                "{channel} in {voice}",
                channel=f"<#{c.channel_id}>",
                voice=f"<#{c.voice_channel_id}>",
            )
            if c.voice_channel_id is not None
            else f"<#{c.channel_id}>"
            for c in channels
        ]
    )


def builtin_voice_names() -> tuple[str, ...]:
    """The built-in voices a server can choose as its default (for the commands' choices)."""
    return BUILTIN_VOICES


def _check_readable(
    guild: discord.Guild, channel: discord.abc.GuildChannel, invoker: discord.Member | discord.User
) -> None:
    """Both the invoker and the bot can see `channel`."""
    if not (isinstance(invoker, discord.Member) and channel.permissions_for(invoker).view_channel):
        raise UserError(
            tr(
                "You can't see {channel} yourself, so I won't read it aloud for you.",
                channel=channel.mention,
            )
        )
    if not channel.permissions_for(guild.me).read_messages:
        raise UserError(
            tr("I can't see {channel}: please let me read it first.", channel=channel.mention)
        )


class SettingsCommands:
    """A server's settings: the channels read (`/setup`), `/config`, and `/settings`."""

    def __init__(
        self,
        db: Database,
        language: LanguageChoice,
        on_home_voice: Callable[[discord.Guild], Awaitable[object]] | None = None,
    ) -> None:
        """`on_home_voice`: the server's home voice channel was set or cleared."""
        self.db = db
        self.language = language
        self.on_home_voice = on_home_voice

    async def setup(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        channel: discord.abc.GuildChannel,
        voice_channel: discord.abc.GuildChannel | None = None,
        *,
        invoker: discord.Member | discord.User,
    ) -> Reply:
        """Read `channel` too (up to MAX_READ_CHANNELS), into `voice_channel` when given
        (else where its author is); a channel read already gets the voice channel given.
        Only a channel the `invoker` can see: Manage Server alone would let them hear a
        channel hidden from them (#staff) read aloud."""
        require_manage_guild(permissions)
        _check_readable(guild, channel, invoker)
        voice_id = None
        if voice_channel is not None:
            if not isinstance(voice_channel, discord.VoiceChannel | discord.StageChannel):
                raise UserError(
                    tr("{channel} is not a voice channel.", channel=voice_channel.mention)
                )
            voice_id = voice_channel.id
        try:
            await self.db.read_channels.add(guild.id, channel.id, voice_id)
        except ReadChannelsFullError:
            raise UserError(
                tr(
                    "I already read {most} channels here, the most I can: remove one first "
                    "(`/setup remove`).",
                    most=MAX_READ_CHANNELS,
                )
            ) from None
        if voice_channel is not None:
            return Reply(
                tr(
                    "I will read {channel} aloud in {voice}. Join it and type in {channel}: I'll "
                    "come to you.",
                    channel=channel.mention,
                    voice=voice_channel.mention,
                )
            )
        return Reply(
            tr(
                "I will read {channel} aloud. Join a voice channel and type there: I'll come to "
                "you.",
                channel=channel.mention,
            )
        )

    async def setup_remove(
        self, permissions: discord.Permissions, guild: discord.Guild, channel_id: int
    ) -> Reply:
        """Stop reading a channel (its id: a channel deleted since can be removed too)."""
        require_manage_guild(permissions)
        if not await self.db.read_channels.remove(guild.id, channel_id):
            raise UserError(tr("I don't read {channel}.", channel=f"<#{channel_id}>"))
        return Reply(tr("I no longer read {channel}.", channel=f"<#{channel_id}>"))

    async def set_server(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        key: str,
        given: SettingInput,
    ) -> Reply:
        """`given`: as the command's option gives it (`SettingSpec.accept`): text, or a
        switch, a number, a picked channel's or role's id, None for none."""
        require_manage_guild(permissions)
        spec = SETTINGS.get(key)
        if spec is None:
            raise UserError(tr("There is no setting called {key}.", key=key))
        value = spec.accept(given)  # a SettingError is the admin's to fix: a UserError
        if spec.kind == "voice" and value is not None:
            value = value.lower()
            if value not in BUILTIN_VOICES:
                choices = ", ".join(BUILTIN_VOICES)
                raise UserError(
                    tr(
                        "“{name}” is not a built-in voice. Choose one of: {choices}.",
                        name=str(given)[:40],
                        choices=choices,
                    )
                )
        if spec.kind == "language" and value is not None:
            value = await self.language.choose(value, ("server", guild.id))
        if spec.kind == "channel" and value is not None and guild.get_channel(value) is None:
            raise UserError(tr("That channel is not in this server."))
        voice = discord.VoiceChannel | discord.StageChannel
        if (
            spec.kind == "voice_channel"
            and value is not None
            and not isinstance(guild.get_channel(value), voice)
        ):
            raise UserError(tr("That is not a voice channel of this server."))
        if spec.kind == "role" and value is not None and guild.get_role(value) is None:
            raise UserError(tr("That role is not in this server."))
        await self.db.guilds.set(guild.id, key, value)
        if key == "home_voice" and self.on_home_voice is not None:
            await self.on_home_voice(guild)  # join it now (or let it go)
        return Reply(tr("{key} is now {value}.", key=key, value=spec.show(value)))

    async def show(self, guild: discord.Guild) -> Reply:
        settings = await self.db.guilds.get(guild.id)
        words = await self.db.dictionary.count(guild.id)
        read = read_channels_line(await self.db.read_channels.list(guild.id))
        fields: list[tuple[str, str]] = [
            (
                tr(GROUPS[group]),
                lines(
                    *(
                        tr(
                            "{name}: {value} · {description}",
                            name=spec.name,
                            value=spec.show(getattr(settings, spec.name)),
                            description=tr(spec.description),
                        )
                        for spec in settings_in(group)
                    )
                ),
            )
            for group in GROUPS
        ]
        fields.insert(
            0, ("read_channels", tr("{channels} · /setup add, /setup remove", channels=read))
        )
        fields.append(("dictionary", tr("{words} · /dictionary list", words=plural(words, "word"))))
        return Reply(
            "", title=tr("PocketVoice settings for {server}", server=guild.name), fields=fields
        )
