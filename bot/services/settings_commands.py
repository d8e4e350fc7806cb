"""What `/setup`, `/set ...`, `/settings`, `/dict ...` and `/dictionary ...` do, apart from the
command glue."""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import cachetools
import discord

from bot.core.errors import UserError
from bot.i18n.translate import Phrase, joined, language_name, lines, longest, plural, tr
from bot.services import dictionary_files
from bot.services.blocks import BlockService, outranks
from bot.services.change_limits import ChangeLimit
from bot.services.downloads import read_capped
from bot.services.member_names import names_in_use, said_as
from bot.services.replies import (
    Confirmation,
    Reply,
    require_manage_guild,
    require_manage_nicknames,
)
from bot.services.sounds import MAX_SOUNDS, SOUND_LIMITS, Sounds
from bot.storage.database import (
    MAX_READ_CHANNELS,
    Database,
    DictionaryFullError,
    DictionarySound,
    Pronunciation,
    ReadChannel,
    ReadChannelsFullError,
)
from bot.storage.server_settings import (
    GROUPS,
    SETTINGS,
    parse_pitch,
    parse_rate,
    settings_in,
    show_pitch,
    show_rate,
)
from bot.synthesis.engine import BUILTIN_VOICES
from bot.synthesis.model_pool import check_language
from bot.text.words import Names, ReadOptions, speakable

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_NICK = 32
MAX_WORD = 50
MAX_DICTIONARY = 200  # entries, all languages together
ALL_LANGUAGES = ("", "all", "*")  # what /dict add's language takes for an entry for every one
# A file to import is checked before it is read (its size as Discord declares it), then read
# with this cap: 200 entries of the longest fields, escaped, fit; and the sounds, each at
# most dictionary_files.SOUND_FILE_BYTES in base64 (4 characters for 3 bytes).
IMPORT_MAX_BYTES = 256 * 1024 + MAX_SOUNDS * (dictionary_files.SOUND_FILE_BYTES * 4 // 3 + 1024)
IMPORT_CONFIRM_S = 300.0  # the import button's life: after it, nothing is imported
# imports waiting for their button, one a server (a newer preview replaces the older): each
# holds its decoded sounds, megabytes, until pressed or expired
MAX_PENDING_IMPORTS = 100
LIST_PAGE_CHARS = 1800  # a /dictionary list page, within Discord's 2,000 characters
PREVIEW_CHARS = 1200  # the changes an import preview lists, with room for its other lines
# Each language a member or server switches to may load a model (seconds of CPU, hundreds of
# MB): at most this many changes per member (/set my_language) or server (/config speech language).
LANGUAGE_CHANGES = 3
LANGUAGE_CHANGES_WINDOW_S = 300.0
# ... and at most this many by all the members of a server together: alts would each bring
# their own member's limit.
SERVER_MEMBER_LANGUAGE_CHANGES = 10
# Each reading name a member is given is new audio ("NAME said", "NAME joined") for the phrase
# cache, in every voice it is said in: at most this many per member and server.
NICK_CHANGES = 5
NICK_CHANGES_WINDOW_S = 600.0


def read_channels_line(channels: list[ReadChannel]) -> Phrase:
    """The read channels as /settings and /help show them: each, with its voice channel."""
    if not channels:
        return tr("none")
    return joined([
        tr("{channel} in {voice}", channel=f"<#{c.channel_id}>", voice=f"<#{c.voice_channel_id}>")
        if c.voice_channel_id is not None else f"<#{c.channel_id}>"
        for c in channels
    ])  # fmt: skip


def builtin_voice_names() -> tuple[str, ...]:
    """The built-in voices a server can choose as its default (for the commands' choices)."""
    return BUILTIN_VOICES


class SettingsCommands:
    def __init__(
        self, db: Database, languages: tuple[str, ...] = (),
        can_load: Callable[[str], Awaitable[None]] | None = None,
        ssl_context: ssl.SSLContext | None = None, *, blocks: BlockService,
        clock: Callable[[], float] = time.monotonic,
        on_home_voice: Callable[[discord.Guild], Awaitable[object]] | None = None,
    ) -> None:  # fmt: skip
        """`can_load`: raises a UserError with the reason when a language's model cannot be
        loaded (ModelPool.check_loadable); `ssl_context`: the one Discord's files are fetched
        with (members' attachments); `blocks`: a blocked member cannot choose the name they
        are read by; `on_home_voice`: the server's home voice channel was set or cleared."""
        self.db = db
        self.on_home_voice = on_home_voice
        self.blocks = blocks
        self.sounds = Sounds(db)
        self.ssl_context = ssl_context
        self.languages = languages  # what servers and members may choose
        self.can_load = can_load
        self.language_changes = ChangeLimit(LANGUAGE_CHANGES, LANGUAGE_CHANGES_WINDOW_S, clock)
        self.member_language_changes_here = ChangeLimit(
            SERVER_MEMBER_LANGUAGE_CHANGES, LANGUAGE_CHANGES_WINDOW_S, clock
        )  # per server: its members' /set my_language together
        self.nick_changes = ChangeLimit(NICK_CHANGES, NICK_CHANGES_WINDOW_S, clock)
        # server -> (its latest preview, what it would import)
        self._pending_imports: cachetools.TTLCache[
            int, tuple[object, list[Pronunciation], list[DictionarySound]]
        ] = cachetools.TTLCache(maxsize=MAX_PENDING_IMPORTS, ttl=IMPORT_CONFIRM_S, timer=clock)

    # ---- server ----------------------------------------------------------------------------
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
        if not (
            isinstance(invoker, discord.Member) and channel.permissions_for(invoker).view_channel
        ):
            raise UserError(tr(
                "You can't see {channel} yourself, so I won't read it aloud for you.",
                channel=channel.mention,
            ))  # fmt: skip
        me = guild.me
        if not channel.permissions_for(me).read_messages:
            raise UserError(
                tr("I can't see {channel}: please let me read it first.", channel=channel.mention)
            )
        voice_id = None
        if voice_channel is not None:
            if not isinstance(voice_channel, discord.VoiceChannel | discord.StageChannel):
                raise UserError(tr("{channel} is not a voice channel.",
                                   channel=voice_channel.mention))  # fmt: skip
            voice_id = voice_channel.id
        try:
            await self.db.read_channels.add(guild.id, channel.id, voice_id)
        except ReadChannelsFullError:
            raise UserError(tr(
                "I already read {most} channels here, the most I can: remove one first "
                "(`/setup remove`).",
                most=MAX_READ_CHANNELS,
            )) from None  # fmt: skip
        if voice_channel is not None:
            return Reply(tr(
                "I will read {channel} aloud in {voice}. Join it and type in {channel}: I'll "
                "come to you.",
                channel=channel.mention, voice=voice_channel.mention,
            ))  # fmt: skip
        return Reply(tr(
            "I will read {channel} aloud. Join a voice channel and type there: I'll come to you.",
            channel=channel.mention,
        ))  # fmt: skip

    async def setup_remove(
        self, permissions: discord.Permissions, guild: discord.Guild, channel_id: int
    ) -> Reply:
        """Stop reading a channel (its id: a channel deleted since can be removed too)."""
        require_manage_guild(permissions)
        if not await self.db.read_channels.remove(guild.id, channel_id):
            raise UserError(tr("I don't read {channel}.", channel=f"<#{channel_id}>"))
        return Reply(tr("I no longer read {channel}.", channel=f"<#{channel_id}>"))

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
                lines(*(
                    tr("{name}: {value} · {description}", name=spec.name,
                       value=spec.show(getattr(settings, spec.name)),
                       description=tr(spec.description))
                    for spec in settings_in(group)
                )),
            )
            for group in GROUPS
        ]  # fmt: skip
        fields.insert(0, ("read_channels", tr("{channels} · /setup add, /setup remove",
                                              channels=read)))  # fmt: skip
        fields.append(("dictionary", tr("{words} · /dictionary list", words=plural(words, "word"))))
        return Reply(
            "", title=tr("PocketVoice settings for {server}", server=guild.name), fields=fields
        )

    # ---- dictionary ------------------------------------------------------------------------
    def dictionary_language(self, raw: str | None) -> str | None:
        """The language an entry is for: one the bot speaks, or None for all ('all', empty)."""
        if raw is None or raw.strip().casefold() in ALL_LANGUAGES:
            return None
        return check_language(raw, self.languages)  # a UserError when not offered

    def check_entry(self, word: str, spoken: str, language: str | None) -> Pronunciation:
        """An entry as it is kept (spaces collapsed), or a UserError saying what is wrong."""
        word, spoken = " ".join(word.split()), " ".join(spoken.split())
        if (character := _unkeepable(word)) is not None:
            raise UserError(tr("The word holds {character}: remove it.", character=character))
        if (character := _unkeepable(spoken)) is not None:
            raise UserError(tr("How to say it holds {character}: remove it.", character=character))
        if not word or not spoken:
            raise UserError(tr("Give both the word and how to say it."))
        if len(word) > MAX_WORD or len(spoken) > MAX_WORD * 2:
            raise UserError(
                tr("Keep the word to {most} characters and how to say it to 100.", most=MAX_WORD)
            )
        plain = speakable(
            spoken, Names(), ReadOptions(max_length=200, numbers=False), dictionary=False
        )  # (digits are read when it is said)
        if plain != spoken:
            raise UserError(
                tr("Write how to say it as plain words (no links, mentions or markup).")
            )
        return Pronunciation(word, spoken, self.dictionary_language(language))

    async def dict_add(
        self, permissions: discord.Permissions, guild: discord.Guild, word: str, spoken: str,
        language: str | None = None,
    ) -> Reply:  # fmt: skip
        require_manage_guild(permissions)
        entry = self.check_entry(word, spoken, language)
        entries = await self.db.dictionary.all(guild.id)
        new_word = entry.key not in {e.key for e in entries}
        if new_word and len(entries) >= MAX_DICTIONARY:
            raise UserError(
                tr("The dictionary is full ({most} words): remove some first.", most=MAX_DICTIONARY)
            )
        await self.db.dictionary.add(guild.id, entry.word, entry.spoken, entry.language)
        if entry.language is not None:
            return Reply(tr(
                "In {language}, “{word}” will be said as “{spoken}”.",
                language=language_name(entry.language), word=entry.word, spoken=entry.spoken,
            ))  # fmt: skip
        return Reply(tr("“{word}” will be said as “{spoken}”.", word=entry.word,
                        spoken=entry.spoken))  # fmt: skip

    async def dict_remove(
        self, permissions: discord.Permissions, guild: discord.Guild, word: str,
        language: str | None = None,
    ) -> Reply:  # fmt: skip
        """Without a language, the entry for every language; if the word has none but has
        entries for some languages, the member is told which."""
        require_manage_guild(permissions)
        word = " ".join(word.split())
        if (character := _unkeepable(word)) is not None:  # no entry holds it (PostgreSQL: NUL)
            raise UserError(tr("The word holds {character}: remove it.", character=character))
        chosen = self.dictionary_language(language)
        if await self.db.dictionary.remove(guild.id, word, chosen):
            if chosen is not None:
                return Reply(tr("Removed “{word}” in {language} from the dictionary.",
                                word=word, language=language_name(chosen)))  # fmt: skip
            return Reply(tr("Removed “{word}” from the dictionary.", word=word))
        others = [
            e.language for e in await self.db.dictionary.all(guild.id)
            if e.word.casefold() == word.casefold() and e.language is not None
        ]  # fmt: skip
        if chosen is None and others:
            raise UserError(tr(
                "“{word}” is in the dictionary only for {languages}: give the language.",
                word=word[:MAX_WORD], languages=joined([language_name(o) for o in others]),
            ))  # fmt: skip
        raise UserError(tr("“{word}” is not in the dictionary.", word=word[:MAX_WORD]))

    async def dict_sound(
        self, permissions: discord.Permissions, guild: discord.Guild, word: str,
        attachment: discord.Attachment,
    ) -> Reply:  # fmt: skip
        """/dict sound: a short clip played in place of a whole word (bot/services/sounds.py);
        its size as Discord declares it is checked before it is fetched."""
        require_manage_guild(permissions)
        data = await read_capped(attachment, SOUND_LIMITS.max_bytes, self.ssl_context)
        return Reply(await self.sounds.set(guild.id, word, data))

    async def dict_sound_remove(
        self, permissions: discord.Permissions, guild: discord.Guild, word: str
    ) -> Reply:
        require_manage_guild(permissions)
        return Reply(await self.sounds.remove(guild.id, word))

    async def dict_list(
        self, guild: discord.Guild, contains: str | None = None, page: int = 1
    ) -> Reply:
        """The entries whose word holds `contains` (any case), then the words with a sound,
        a page at a time: each page fits one message."""
        entries = await self.db.dictionary.all(guild.id)
        needle = " ".join((contains or "").split()).casefold()
        sounds = await self.sounds.listed(guild.id, needle)
        if not entries and not await self.db.sounds.count(guild.id):
            return Reply(tr("The dictionary is empty. Admins add words with /dict add."))
        found = [e for e in entries if needle in e.word.casefold()]
        if not found and not sounds:
            return Reply(tr("No word in the dictionary contains “{text}”.", text=needle[:MAX_WORD]))
        shown = [_entry_line(e) for e in found] + sounds
        pages = _pages(shown, LIST_PAGE_CHARS)
        page = min(max(page, 1), len(pages))
        text = lines(*pages[page - 1])
        if len(pages) == 1:
            return Reply(tr("**Pronunciations** ({count})\n{text}", count=len(shown), text=text))
        if page == len(pages):
            more = tr("This is the last page.")
        else:  # the same filter, on the next page
            command = f"/dictionary list{f' contains:{needle}' if needle else ''} page:{page + 1}"
            fence = "``" if "`" in command else "`"  # (a backtick in the filter)
            more = tr("More with {command}.", command=f"{fence}{command}{fence}")
        return Reply(tr(
            "**Pronunciations** ({count}), page {page} of {pages}\n{text}\n{more}",
            count=len(shown), page=page, pages=len(pages), text=text, more=more,
        ))  # fmt: skip

    async def dict_export(self, guild: discord.Guild, kind: str = "json") -> Reply:
        """The entries as JSON (with the sounds, as FLAC) or CSV (without them)."""
        entries = await self.db.dictionary.all(guild.id)
        if kind == "csv":
            data, sounds = dictionary_files.to_csv(entries), []
        else:
            sounds = await self.sounds.exported(guild.id)
            data = await asyncio.to_thread(dictionary_files.to_json, entries, sounds)
        name = f"dictionary-{guild.id}.{'csv' if kind == 'csv' else 'json'}"
        content = tr("The dictionary ({words}), to keep or to import with /dict import.",
                     words=plural(len(entries), "word"))  # fmt: skip
        if sounds:
            content = lines(content, tr("With its {count} sounds.", count=len(sounds)))
        elif kind == "csv" and await self.db.sounds.count(guild.id):
            content = lines(content, tr("A CSV file holds no sounds: export JSON to keep them."))
        return Reply(content, file=(name, data))

    async def dict_import(
        self, permissions: discord.Permissions, member: discord.abc.User, guild: discord.Guild,
        attachment: discord.Attachment,
    ) -> Reply:  # fmt: skip
        """What importing the file would change, with a button to do it: an import adds and
        replaces entries, and never removes any (the file may hold a part of a dictionary)."""
        require_manage_guild(permissions)
        data = await read_capped(attachment, IMPORT_MAX_BYTES, self.ssl_context)

        def read() -> tuple[list[Pronunciation], list[tuple[str, str, bytes]]]:
            text = dictionary_files.decode(data)  # (megabytes with sounds: in a thread)
            name = attachment.filename
            return (
                dictionary_files.parse(name, text, self.check_entry, MAX_DICTIONARY),
                dictionary_files.parse_sounds(name, text, MAX_SOUNDS),
            )

        incoming, listed = await asyncio.to_thread(read)
        sounds = await self.sounds.imported(listed)
        if not incoming and not sounds:
            raise UserError(tr("The file has no entries."))
        plan = _plan(await self.db.dictionary.all(guild.id), incoming)
        self._check_room(plan)
        had = {w.casefold() for w in await self.db.sounds.words(guild.id)}
        if len(had | {s.key for s in sounds}) > MAX_SOUNDS:
            raise UserError(tr(
                "This server can have at most {most} sounds: remove one first with "
                "/dict sound_remove.", most=MAX_SOUNDS,
            ))  # fmt: skip
        if not plan.added and not plan.changed and not sounds:
            return Reply(tr("The dictionary already says all {count} words of the file: nothing "
                            "to import.", count=len(incoming)))  # fmt: skip

        preview = object()  # the button holds this, not the entries and sounds: kept once,
        self._pending_imports[guild.id] = (preview, incoming, sounds)  # a newer one frees them
        sound_count = len(sounds)
        del incoming, sounds

        async def apply(presser: discord.Permissions) -> Reply:
            require_manage_guild(presser)
            held = self._pending_imports.get(guild.id)
            if held is None or held[0] is not preview:
                raise UserError(tr(
                    "A newer import replaced this one, or it expired: the dictionary is "
                    "unchanged. Use the newest import's button, or /dict import again."
                ))  # fmt: skip
            del self._pending_imports[guild.id]
            return await self._import(presser, guild, held[1], held[2])

        return Reply(
            lines(
                tr("**Importing {file}**: {added} to add, {changed} to change, {same} already so.",
                   file=attachment.filename[:60], added=len(plan.added),
                   changed=len(plan.changed), same=plan.unchanged),
                tr("An import adds and changes words, it removes none. Kept as they are, not "
                   "in the file: {kept}.", kept=plural(plan.kept, "word")),
                _preview(plan),
                *([tr("Sounds: {count} to add or replace.", count=sound_count)]
                  if sound_count else []),
                tr("Press Import within {minutes} min to make these changes.",
                   minutes=max(1, round(IMPORT_CONFIRM_S / 60))),
            ),
            confirm=Confirmation(
                member.id, tr("Import"), apply, IMPORT_CONFIRM_S,
                cancelled=tr("Import cancelled: the dictionary is unchanged."),
                expired=tr("The import was not confirmed in time: the dictionary is unchanged."),
            ),
        )  # fmt: skip

    async def _import(
        self, permissions: discord.Permissions, guild: discord.Guild,
        incoming: list[Pronunciation], sounds: list[DictionarySound] | None = None,
    ) -> Reply:  # fmt: skip
        """The confirmed import, against the dictionary as it is now (it may have changed)."""
        require_manage_guild(permissions)
        plan = _plan(await self.db.dictionary.all(guild.id), incoming)
        self._check_room(plan)
        if sounds:  # (refused whole, before any entry changes, when there is no room)
            await self.sounds.put(guild.id, sounds)
        try:
            await self.db.dictionary.merge(guild.id, plan.added + plan.changed, MAX_DICTIONARY)
        except DictionaryFullError:
            self._check_room(plan, full=True)
        done = tr(
            "Imported: {added} added, {changed} changed; the dictionary has {words}.",
            added=len(plan.added), changed=len(plan.changed),
            words=plural(plan.total, "word"),
        )  # fmt: skip
        if sounds:
            return Reply(lines(done, tr("Sounds imported: {count}.", count=len(sounds))))
        return Reply(done)

    @staticmethod
    def _check_room(plan: _Plan, *, full: bool = False) -> None:
        if full or plan.total > MAX_DICTIONARY:
            raise UserError(tr(
                "The dictionary would have {count} words with this file, and it holds at most "
                "{most}: remove some first.", count=plan.total, most=MAX_DICTIONARY,
            ))  # fmt: skip

    async def choose_language(
        self, raw: str, changer: tuple[str, int], member_of: int | None = None
    ) -> str:
        """A language a server or member switches to: offered, within the rate of changes
        (a member's: also within their server's, `member_of`), and with a model that can be
        loaded."""
        language = check_language(raw, self.languages)  # a UserError when not offered
        self._count_language_change(changer, member_of)
        if self.can_load is not None:
            await self.can_load(language)
        return language

    def _count_language_change(self, changer: tuple[str, int], member_of: int | None) -> None:
        """Both limits are checked before either counts: a refusal counts nowhere."""
        wait_s = self.language_changes.waiting(changer)
        if wait_s:
            raise UserError(tr(
                "The language was changed {count} times in the last few minutes: please wait "
                "{minutes} min before changing it again.",
                count=LANGUAGE_CHANGES, minutes=_minutes(wait_s),
            ))  # fmt: skip
        if member_of is not None:
            wait_s = self.member_language_changes_here.take(member_of)
            if wait_s:
                raise UserError(tr(
                    "Members of this server changed their language {count} times in the last "
                    "few minutes: please wait {minutes} min before changing yours.",
                    count=SERVER_MEMBER_LANGUAGE_CHANGES, minutes=_minutes(wait_s),
                ))  # fmt: skip
        self.language_changes.take(changer)

    # ---- member ----------------------------------------------------------------------------
    async def set_language(self, member: discord.Member | discord.User, guild: discord.Guild,
                           raw: str) -> Reply:  # fmt: skip
        """A member's own language in this server ('none': the server's)."""
        if raw.strip().lower() in ("", "none", "reset"):
            await self.db.members.set_language(member.id, guild.id, None)
            return Reply(tr("I will speak your messages in this server's language again."))
        language = await self.choose_language(raw, ("member", member.id), member_of=guild.id)
        await self.db.members.set_language(member.id, guild.id, language)
        return Reply(tr("I will speak your messages in {language} in this server.",
                        language=language_name(language)))  # fmt: skip

    async def set_rate(self, member: discord.Member | discord.User, guild: discord.Guild,
                       raw: str) -> Reply:  # fmt: skip
        """A member's own speaking rate in this server ('none': the server's)."""
        parse = partial(parse_rate, name="my_rate")
        rate = await _member_own(raw, parse, partial(self.db.members.set_rate, member.id, guild.id))
        if rate is None:
            return Reply(tr("Your messages are read at this server's speaking rate again."))
        return Reply(tr("Your messages are read at {rate} speed in this server.",
                        rate=show_rate(rate)))  # fmt: skip

    async def set_pitch(self, member: discord.Member | discord.User, guild: discord.Guild,
                        raw: str) -> Reply:  # fmt: skip
        """A member's own pitch in this server, in semitones ('none': the server's)."""
        parse = partial(parse_pitch, name="my_pitch")
        store = partial(self.db.members.set_pitch, member.id, guild.id)
        pitch = await _member_own(raw, parse, store)
        if pitch is None:
            return Reply(tr("Your messages are read at this server's pitch again."))
        return Reply(tr("Your messages are read at a pitch of {pitch} semitones in this server.",
                        pitch=show_pitch(pitch)))  # fmt: skip

    async def set_nick(
        self, invoker: discord.Member | discord.User, permissions: discord.Permissions,
        guild: discord.Guild, nick: str, member: discord.Member | None = None,
    ) -> Reply:  # fmt: skip
        """The name a member is read by here: their own, or with `member` another member's,
        for members with Manage Nicknames (checked here too, as server settings are). Never a
        name another member goes by; and whoever sets it, a cloned voice's speech is still
        named by its owner's username (bot/services/autoread.py, speech.py)."""
        target = member if member is not None else invoker
        own = target.id == invoker.id
        if not own:
            require_manage_nicknames(permissions)
            if not outranks(guild, invoker, target):
                raise UserError(tr(
                    "You can only name members whose highest role is below yours."
                ))  # fmt: skip
        else:  # a name they choose is spoken (others' messages, join notices)
            await self.blocks.check(invoker.id, guild.id)
        nick = " ".join(nick.split())
        if nick.lower() in ("", "none", "reset"):
            await self.db.members.set_nick(target.id, guild.id, None)
            if own:
                return Reply(tr("I will call you by your server name again."))
            return Reply(tr("I will call {member} by their server name again.",
                            member=target.mention))  # fmt: skip
        if len(nick) > MAX_NICK:
            raise UserError(tr("Please keep the name to {most} characters.", most=MAX_NICK))
        if (character := _unkeepable(nick)) is not None:
            raise UserError(tr("The name holds {character}: remove it.", character=character))
        if said_as(nick) in await names_in_use(self.db, guild, target.id):
            raise UserError(
                tr("“{nick}” is the name of another member here: please choose another.",
                   nick=nick)
            )  # fmt: skip
        wait_s = self.nick_changes.take((guild.id, target.id))  # (a reset costs no new name)
        if wait_s and own:
            raise UserError(tr(
                "Your reading name was changed {count} times in the last few minutes: please "
                "wait {minutes} min before changing it again.",
                count=NICK_CHANGES, minutes=_minutes(wait_s),
            ))  # fmt: skip
        if wait_s:
            raise UserError(tr(
                "The reading name of {member} was changed {count} times in the last few "
                "minutes: please wait {minutes} min before changing it again.",
                member=target.mention, count=NICK_CHANGES, minutes=_minutes(wait_s),
            ))  # fmt: skip
        await self.db.members.set_nick(target.id, guild.id, nick)
        if own:
            return Reply(tr("I will call you “{nick}” when reading your messages.", nick=nick))
        log.info("user %s set the reading name of user %s in server %s", invoker.id, target.id,
                 guild.id)  # fmt: skip
        return Reply(tr("I will call {member} “{nick}” when reading their messages.",
                        member=target.mention, nick=nick))  # fmt: skip

    async def set_autoread(self, member: discord.Member | discord.User, guild: discord.Guild,
                           enabled: bool) -> Reply:  # fmt: skip
        await self.db.members.set_autoread(member.id, guild.id, enabled)
        if enabled:
            return Reply(tr("Your messages are read aloud again in this server."))
        return Reply(tr("Your messages will not be read aloud in this server."))


def _minutes(seconds: float) -> int:
    """A wait as whole minutes for the member (at least one)."""
    return max(1, round(seconds / 60))


def _unkeepable(text: str) -> Phrase | None:
    """The first character of `text` a dictionary entry cannot hold, said for the member: a
    control character (NUL: PostgreSQL refuses it) or half of a surrogate pair (no character
    at all: it has no UTF-8, so no store can write it). None when there is none."""
    for char in text:
        category = unicodedata.category(char)
        if category == "Cc":
            return tr("a control character ({code})", code=f"U+{ord(char):04X}")
        if category == "Cs":
            return tr("an invalid character ({code})", code=f"U+{ord(char):04X}")
    return None


@dataclass(frozen=True)
class _Plan:
    """What an import changes in the dictionary as it is."""

    added: list[Pronunciation]
    changed: list[Pronunciation]
    was: dict[tuple[str, str | None], Pronunciation]  # the entries the changed ones replace
    unchanged: int
    kept: int  # entries the file does not name

    @property
    def total(self) -> int:
        return len(self.was) + self.kept + self.unchanged + len(self.added)


def _plan(current: list[Pronunciation], incoming: list[Pronunciation]) -> _Plan:
    now = {entry.key: entry for entry in current}
    added = [e for e in incoming if e.key not in now]
    changed = [e for e in incoming if e.key in now and now[e.key] != e]
    named = {e.key for e in incoming}
    return _Plan(
        added, changed, {e.key: now[e.key] for e in changed},
        unchanged=len(incoming) - len(added) - len(changed),
        kept=sum(1 for key in now if key not in named),
    )  # fmt: skip


def _entry(entry: Pronunciation) -> Phrase:
    """ "brb → be right back", and the language an entry is for, in the member's language."""
    if entry.language is None:
        return tr("{word} → {spoken}", word=entry.word, spoken=entry.spoken)
    return tr("{word} → {spoken} [{language}]", word=entry.word, spoken=entry.spoken,
              language=language_name(entry.language))  # fmt: skip


def _entry_line(entry: Pronunciation) -> Phrase:
    return tr("• {entry}", entry=_entry(entry))


def _preview(plan: _Plan) -> Phrase:
    """The changes, as many as fit a message in any language (`+` added, `~` changed)."""
    shown = [tr("+ {entry}", entry=_entry(e)) for e in plan.added] + [
        tr("~ {entry} (was “{spoken}”)", entry=_entry(e), spoken=plan.was[e.key].spoken)
        for e in plan.changed
    ]
    kept: list[str] = []
    used = 0
    for line in shown:
        if used + longest(line) > PREVIEW_CHARS:
            kept.append(tr("… and {count} more", count=len(shown) - len(kept)))
            break
        kept.append(line)
        used += longest(line) + 1
    return lines(*kept)


def _pages(lines_: list[Phrase], budget: int) -> list[list[Phrase]]:
    """Lines in pages of at most `budget` characters each in any language (a line is never
    split)."""
    pages: list[list[Phrase]] = [[]]
    used = 0
    for line in lines_:
        size = longest(line) + 1
        if pages[-1] and used + size > budget:
            pages.append([])
            used = 0
        pages[-1].append(line)
        used += size
    return pages


async def _member_own(
    raw: str, parse: Callable[[str], T], store: Callable[[T | None], Awaitable[None]]
) -> T | None:
    """Store a member's own setting (`parse`d: a SettingError is theirs to fix), or forget it
    ('none', 'reset' or nothing: the server's again). What was stored."""
    value = None if raw.strip().lower() in ("", "none", "reset") else parse(raw)
    await store(value)
    return value
