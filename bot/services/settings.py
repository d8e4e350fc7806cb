"""What `/setup`, `/set ...`, `/settings` and `/dict ...` do, apart from the command glue."""

from __future__ import annotations

import collections
import time
from collections.abc import Awaitable, Callable

import discord

from bot.core.errors import UserError
from bot.i18n.translate import language_name, plural, tr
from bot.services.replies import Reply, require_manage_guild
from bot.storage.database import Database
from bot.storage.server_settings import SETTINGS, parse_rate, show_rate
from bot.synthesis.engine import BUILTIN_VOICES
from bot.synthesis.model_pool import check_language
from bot.text.words import Names, ReadOptions, plain_name, speakable

MAX_NICK = 32
MAX_WORD = 50
MAX_DICTIONARY = 200
# Each language a member or server switches to may load a model (seconds of CPU, hundreds of
# MB): at most this many changes per member (/set my_language) or server (/set language).
LANGUAGE_CHANGES = 3
LANGUAGE_CHANGES_WINDOW_S = 300.0


def builtin_voice_names() -> tuple[str, ...]:
    """The built-in voices a server can choose as its default (for the commands' choices)."""
    return BUILTIN_VOICES


class SettingsService:
    def __init__(
        self, db: Database, languages: tuple[str, ...] = (),
        can_load: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:  # fmt: skip
        """`can_load`: raises a UserError with the reason when a language's model cannot be
        loaded (ModelPool.check_loadable)."""
        self.db = db
        self.languages = languages  # what servers and members may choose
        self.can_load = can_load
        self._language_changes: dict[tuple[str, int], collections.deque[float]] = {}

    # ---- server ----------------------------------------------------------------------------
    async def setup(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        channel: discord.abc.GuildChannel,
    ) -> Reply:
        require_manage_guild(permissions)
        me = guild.me
        if not channel.permissions_for(me).read_messages:
            raise UserError(
                tr("I can't see {channel}: please let me read it first.", channel=channel.mention)
            )
        await self.db.guilds.set(guild.id, "read_channel", channel.id)
        return Reply(tr(
            "I will read {channel} aloud. Join a voice channel and type there: I'll come to you.",
            channel=channel.mention,
        ))  # fmt: skip

    async def set_server(
        self, permissions: discord.Permissions, guild: discord.Guild, key: str, raw: str
    ) -> Reply:
        require_manage_guild(permissions)
        spec = SETTINGS.get(key)
        if spec is None:
            raise UserError(tr("There is no setting called {key}.", key=key))
        value = spec.parse(raw)  # a SettingError is the admin's to fix: a UserError
        if spec.kind == "voice" and value is not None:
            value = value.lower()
            if value not in BUILTIN_VOICES:
                choices = ", ".join(BUILTIN_VOICES)
                raise UserError(tr("“{name}” is not a built-in voice. Choose one of: {choices}.",
                                   name=raw[:40], choices=choices))  # fmt: skip
        if spec.kind == "language" and value is not None:
            value = await self.choose_language(raw, ("server", guild.id))
        if spec.kind == "channel" and value is not None and guild.get_channel(value) is None:
            raise UserError(tr("That channel is not in this server."))
        if spec.kind == "role" and value is not None and guild.get_role(value) is None:
            raise UserError(tr("That role is not in this server."))
        await self.db.guilds.set(guild.id, key, value)
        return Reply(tr("{key} is now {value}.", key=key, value=spec.show(value)))

    async def show(self, guild: discord.Guild) -> Reply:
        settings = await self.db.guilds.get(guild.id)
        words = await self.db.dictionary.count(guild.id)
        fields = [
            (name, tr("{value} · {description}", value=spec.show(getattr(settings, name)),
                      description=tr(spec.description)))
            for name, spec in SETTINGS.items()
        ]  # fmt: skip
        fields.append(("dictionary", tr("{words} · /dict list", words=plural(words, "word"))))
        return Reply(
            "", title=tr("PocketVoice settings for {server}", server=guild.name), fields=fields
        )

    # ---- dictionary ------------------------------------------------------------------------
    async def dict_add(
        self, permissions: discord.Permissions, guild: discord.Guild, word: str, spoken: str
    ) -> Reply:
        require_manage_guild(permissions)
        word, spoken = " ".join(word.split()), " ".join(spoken.split())
        if not word or not spoken:
            raise UserError(tr("Give both the word and how to say it."))
        if len(word) > MAX_WORD or len(spoken) > MAX_WORD * 2:
            raise UserError(
                tr("Keep the word to {most} characters and how to say it to 100.", most=MAX_WORD)
            )
        plain = speakable(spoken, Names(), ReadOptions(max_length=200), dictionary=False)
        if plain != spoken:
            raise UserError(
                tr("Write how to say it as plain words (no links, mentions or markup).")
            )
        entries = await self.db.dictionary.entries(guild.id)
        new_word = word.casefold() not in {w.casefold() for w in entries}
        if new_word and len(entries) >= MAX_DICTIONARY:
            raise UserError(
                tr("The dictionary is full ({most} words): remove some first.", most=MAX_DICTIONARY)
            )
        await self.db.dictionary.add(guild.id, word, spoken)
        return Reply(tr("“{word}” will be said as “{spoken}”.", word=word, spoken=spoken))

    async def dict_remove(
        self, permissions: discord.Permissions, guild: discord.Guild, word: str
    ) -> Reply:
        require_manage_guild(permissions)
        if not await self.db.dictionary.remove(guild.id, " ".join(word.split())):
            raise UserError(tr("“{word}” is not in the dictionary.", word=word[:MAX_WORD]))
        return Reply(tr("Removed “{word}” from the dictionary.", word=word))

    async def dict_list(self, guild: discord.Guild) -> Reply:
        entries = await self.db.dictionary.entries(guild.id)
        if not entries:
            return Reply(tr("The dictionary is empty. Admins add words with /dict add."))
        lines = [f"• {word} → {spoken}" for word, spoken in entries.items()]
        text = "\n".join(lines)
        if len(text) > 1900:
            text = text[:1900].rsplit("\n", 1)[0] + "\n…"
        return Reply(tr("**Pronunciations** ({count})\n{text}", count=len(entries), text=text))

    async def choose_language(self, raw: str, changer: tuple[str, int]) -> str:
        """A language a server or member switches to: offered, within the rate of changes,
        and with a model that can be loaded."""
        language = check_language(raw, self.languages)  # a UserError when not offered
        self._count_language_change(changer)
        if self.can_load is not None:
            await self.can_load(language)
        return language

    def _count_language_change(self, changer: tuple[str, int]) -> None:
        now = time.monotonic()
        for key in [
            k
            for k, times in self._language_changes.items()
            if times[-1] < now - LANGUAGE_CHANGES_WINDOW_S
        ]:
            del self._language_changes[key]  # keep only who changed lately
        times = self._language_changes.setdefault(changer, collections.deque())
        while times and times[0] < now - LANGUAGE_CHANGES_WINDOW_S:
            times.popleft()
        if len(times) >= LANGUAGE_CHANGES:
            wait_s = times[0] + LANGUAGE_CHANGES_WINDOW_S - now
            raise UserError(tr(
                "The language was changed {count} times in the last few minutes: please wait "
                "{minutes} min before changing it again.",
                count=len(times), minutes=max(1, round(wait_s / 60)),
            ))  # fmt: skip
        times.append(now)

    # ---- member ----------------------------------------------------------------------------
    async def set_language(self, member: discord.Member | discord.User, guild: discord.Guild,
                           raw: str) -> Reply:  # fmt: skip
        """A member's own language in this server ('none': the server's)."""
        if raw.strip().lower() in ("", "none", "reset"):
            await self.db.members.set_language(member.id, guild.id, None)
            return Reply(tr("I will speak your messages in this server's language again."))
        language = await self.choose_language(raw, ("member", member.id))
        await self.db.members.set_language(member.id, guild.id, language)
        return Reply(tr("I will speak your messages in {language} in this server.",
                        language=language_name(language)))  # fmt: skip

    async def set_rate(self, member: discord.Member | discord.User, guild: discord.Guild,
                       raw: str) -> Reply:  # fmt: skip
        """A member's own speaking rate in this server ('none': the server's)."""
        if raw.strip().lower() in ("", "none", "reset"):
            await self.db.members.set_rate(member.id, guild.id, None)
            return Reply(tr("Your messages are read at this server's speaking rate again."))
        rate = parse_rate(raw, "my_rate")  # a SettingError is the member's to fix
        await self.db.members.set_rate(member.id, guild.id, rate)
        return Reply(tr("Your messages are read at {rate} speed in this server.",
                        rate=show_rate(rate)))  # fmt: skip

    async def set_nick(self, member: discord.Member | discord.User, guild: discord.Guild,
                       nick: str) -> Reply:  # fmt: skip
        nick = " ".join(nick.split())
        if nick.lower() in ("", "none", "reset"):
            await self.db.members.set_nick(member.id, guild.id, None)
            return Reply(tr("I will call you by your server name again."))
        if len(nick) > MAX_NICK:
            raise UserError(tr("Please keep the name to {most} characters.", most=MAX_NICK))
        if _names_of_others(guild, member.id) & {_said_as(nick)}:
            raise UserError(
                tr("“{nick}” is the name of another member here: please choose another.",
                   nick=nick)
            )  # fmt: skip
        await self.db.members.set_nick(member.id, guild.id, nick)
        return Reply(tr("I will call you “{nick}” when reading your messages.", nick=nick))

    async def set_autoread(self, member: discord.Member | discord.User, guild: discord.Guild,
                           enabled: bool) -> Reply:  # fmt: skip
        await self.db.members.set_autoread(member.id, guild.id, enabled)
        if enabled:
            return Reply(tr("Your messages are read aloud again in this server."))
        return Reply(tr("Your messages will not be read aloud in this server."))


def _said_as(name: str) -> str:
    """A name as it sounds: "𝓑𝓸𝓫", "BOB" and "bob" are one name read aloud."""
    return plain_name(name).casefold()


def _names_of_others(guild: discord.Guild, member_id: int) -> set[str]:
    """The names the server's other members go by that the bot knows of (display, global and
    user names; without the members intent, the members in voice and the bot's own cache):
    a nickname must not make one member's messages sound like another's."""
    return {
        _said_as(name)
        for other in guild.members
        if other.id != member_id
        for name in (other.display_name, other.global_name, other.name)
        if name
    }
