"""What `/dict ...` and `/dictionary ...` do, apart from the command glue: a server's
pronunciations and sounds, listed, exported and imported (with a preview and a button)."""

from __future__ import annotations

import asyncio
import ssl
import time
import unicodedata
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import cachetools
import discord

from bot.core.errors import UserError
from bot.i18n.translate import Phrase, joined, language_name, lines, longest, plural, tr
from bot.services import dictionary_files
from bot.services.downloads import read_capped
from bot.services.replies import Confirmation, Reply, require_manage_guild
from bot.services.sounds import MAX_SOUNDS, SOUND_LIMITS, Sounds
from bot.storage.database import Database, DictionaryFullError, DictionarySound, Pronunciation
from bot.synthesis.model_pool import check_language
from bot.text.words import Names, ReadOptions, speakable

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


class DictionaryCommands:
    def __init__(
        self,
        db: Database,
        languages: tuple[str, ...] = (),
        ssl_context: ssl.SSLContext | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`languages`: what an entry may be for; `ssl_context`: the one Discord's files are
        fetched with (members' attachments)."""
        self.db = db
        self.languages = languages
        self.sounds = Sounds(db)
        self.ssl_context = ssl_context
        # server -> (its latest preview, what it would import)
        self._pending_imports: cachetools.TTLCache[
            int, tuple[object, list[Pronunciation], list[DictionarySound]]
        ] = cachetools.TTLCache(maxsize=MAX_PENDING_IMPORTS, ttl=IMPORT_CONFIRM_S, timer=clock)

    def dictionary_language(self, raw: str | None) -> str | None:
        """The language an entry is for: one the bot speaks, or None for all ('all', empty)."""
        if raw is None or raw.strip().casefold() in ALL_LANGUAGES:
            return None
        return check_language(raw, self.languages)  # a UserError when not offered

    def check_entry(self, word: str, spoken: str, language: str | None) -> Pronunciation:
        """An entry as it is kept (spaces collapsed), or a UserError saying what is wrong."""
        word, spoken = " ".join(word.split()), " ".join(spoken.split())
        if (character := unkeepable(word)) is not None:
            raise UserError(tr("The word holds {character}: remove it.", character=character))
        if (character := unkeepable(spoken)) is not None:
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
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        word: str,
        spoken: str,
        language: str | None = None,
    ) -> Reply:
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
            return Reply(
                tr(
                    "In {language}, “{word}” will be said as “{spoken}”.",
                    language=language_name(entry.language),
                    word=entry.word,
                    spoken=entry.spoken,
                )
            )
        return Reply(
            tr("“{word}” will be said as “{spoken}”.", word=entry.word, spoken=entry.spoken)
        )

    async def dict_remove(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        word: str,
        language: str | None = None,
    ) -> Reply:
        """Without a language, the entry for every language; if the word has none but has
        entries for some languages, the member is told which."""
        require_manage_guild(permissions)
        word = " ".join(word.split())
        if (character := unkeepable(word)) is not None:  # no entry holds it (PostgreSQL: NUL)
            raise UserError(tr("The word holds {character}: remove it.", character=character))
        chosen = self.dictionary_language(language)
        if await self.db.dictionary.remove(guild.id, word, chosen):
            if chosen is not None:
                return Reply(
                    tr(
                        "Removed “{word}” in {language} from the dictionary.",
                        word=word,
                        language=language_name(chosen),
                    )
                )
            return Reply(tr("Removed “{word}” from the dictionary.", word=word))
        others = [
            e.language
            for e in await self.db.dictionary.all(guild.id)
            if e.word.casefold() == word.casefold() and e.language is not None
        ]
        if chosen is None and others:
            raise UserError(
                tr(
                    "“{word}” is in the dictionary only for {languages}: give the language.",
                    word=word[:MAX_WORD],
                    languages=joined([language_name(o) for o in others]),
                )
            )
        raise UserError(tr("“{word}” is not in the dictionary.", word=word[:MAX_WORD]))

    async def dict_sound(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        word: str,
        attachment: discord.Attachment,
    ) -> Reply:
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
        return Reply(
            tr(
                "**Pronunciations** ({count}), page {page} of {pages}\n{text}\n{more}",
                count=len(shown),
                page=page,
                pages=len(pages),
                text=text,
                more=more,
            )
        )

    async def dict_export(self, guild: discord.Guild, kind: str = "json") -> Reply:
        """The entries as JSON (with the sounds, as FLAC) or CSV (without them)."""
        entries = await self.db.dictionary.all(guild.id)
        if kind == "csv":
            data, sounds = dictionary_files.to_csv(entries), []
        else:
            sounds = await self.sounds.exported(guild.id)
            data = await asyncio.to_thread(dictionary_files.to_json, entries, sounds)
        name = f"dictionary-{guild.id}.{'csv' if kind == 'csv' else 'json'}"
        content = tr(
            "The dictionary ({words}), to keep or to import with /dict import.",
            words=plural(len(entries), "word"),
        )
        if sounds:
            content = lines(content, tr("With its {count} sounds.", count=len(sounds)))
        elif kind == "csv" and await self.db.sounds.count(guild.id):
            content = lines(content, tr("A CSV file holds no sounds: export JSON to keep them."))
        return Reply(content, file=(name, data))

    async def dict_import(
        self,
        permissions: discord.Permissions,
        member: discord.abc.User,
        guild: discord.Guild,
        attachment: discord.Attachment,
    ) -> Reply:
        """What importing the file would change, with a button to do it: an import adds and
        replaces entries, and never removes any (the file may hold a part of a dictionary)."""
        require_manage_guild(permissions)
        data = await read_capped(attachment, IMPORT_MAX_BYTES, self.ssl_context)
        incoming, sounds = await self._read_import(attachment.filename, data)
        plan = _plan(await self.db.dictionary.all(guild.id), incoming)
        self._check_room(plan)
        await self._check_sound_room(guild.id, sounds)
        if not plan.added and not plan.changed and not sounds:
            return Reply(
                tr(
                    "The dictionary already says all {count} words of the file: nothing to import.",
                    count=len(incoming),
                )
            )
        return Reply(
            _import_preview(attachment.filename, plan, len(sounds)),
            confirm=Confirmation(
                member.id,
                tr("Import"),
                self._held_import(guild, incoming, sounds),
                IMPORT_CONFIRM_S,
                cancelled=tr("Import cancelled: the dictionary is unchanged."),
                expired=tr("The import was not confirmed in time: the dictionary is unchanged."),
            ),
        )

    async def _read_import(
        self, filename: str, data: bytes
    ) -> tuple[list[Pronunciation], list[DictionarySound]]:
        """The file's entries and its sounds, checked; a file with neither is refused."""

        def read() -> tuple[list[Pronunciation], list[tuple[str, str, bytes]]]:
            text = dictionary_files.decode(data)  # (megabytes with sounds: in a thread)
            return (
                dictionary_files.parse(filename, text, self.check_entry, MAX_DICTIONARY),
                dictionary_files.parse_sounds(filename, text, MAX_SOUNDS),
            )

        incoming, listed = await asyncio.to_thread(read)
        sounds = await self.sounds.imported(listed)
        if not incoming and not sounds:
            raise UserError(tr("The file has no entries."))
        return incoming, sounds

    async def _check_sound_room(self, guild_id: int, sounds: list[DictionarySound]) -> None:
        """The server's sounds with the file's stay within MAX_SOUNDS."""
        had = {w.casefold() for w in await self.db.sounds.words(guild_id)}
        if len(had | {s.key for s in sounds}) > MAX_SOUNDS:
            raise UserError(
                tr(
                    "This server can have at most {most} sounds: remove one first with "
                    "/dict sound_remove.",
                    most=MAX_SOUNDS,
                )
            )

    def _held_import(
        self,
        guild: discord.Guild,
        incoming: list[Pronunciation],
        sounds: list[DictionarySound],
    ) -> Callable[[discord.Permissions], Awaitable[Reply]]:
        """Keeps the import for its button (a newer import of the server's replaces it, and
        so frees it: the button holds only a token, not the entries and sounds); the button's
        action."""
        preview = object()
        self._pending_imports[guild.id] = (preview, incoming, sounds)

        async def apply(presser: discord.Permissions) -> Reply:
            require_manage_guild(presser)
            held = self._pending_imports.get(guild.id)
            if held is None or held[0] is not preview:
                raise UserError(
                    tr(
                        "A newer import replaced this one, or it expired: the dictionary is "
                        "unchanged. Use the newest import's button, or /dict import again."
                    )
                )
            del self._pending_imports[guild.id]
            return await self._import(presser, guild, held[1], held[2])

        return apply

    async def _import(
        self,
        permissions: discord.Permissions,
        guild: discord.Guild,
        incoming: list[Pronunciation],
        sounds: list[DictionarySound] | None = None,
    ) -> Reply:
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
            added=len(plan.added),
            changed=len(plan.changed),
            words=plural(plan.total, "word"),
        )
        if sounds:
            return Reply(lines(done, tr("Sounds imported: {count}.", count=len(sounds))))
        return Reply(done)

    @staticmethod
    def _check_room(plan: _Plan, *, full: bool = False) -> None:
        if full or plan.total > MAX_DICTIONARY:
            raise UserError(
                tr(
                    "The dictionary would have {count} words with this file, and it holds at most "
                    "{most}: remove some first.",
                    count=plan.total,
                    most=MAX_DICTIONARY,
                )
            )


def unkeepable(text: str) -> Phrase | None:
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
        added,
        changed,
        {e.key: now[e.key] for e in changed},
        unchanged=len(incoming) - len(added) - len(changed),
        kept=sum(1 for key in now if key not in named),
    )


def _entry(entry: Pronunciation) -> Phrase:
    """ "brb → be right back", and the language an entry is for, in the member's language."""
    if entry.language is None:
        return tr("{word} → {spoken}", word=entry.word, spoken=entry.spoken)
    return tr(
        "{word} → {spoken} [{language}]",
        word=entry.word,
        spoken=entry.spoken,
        language=language_name(entry.language),
    )


def _entry_line(entry: Pronunciation) -> Phrase:
    return tr("• {entry}", entry=_entry(entry))


def _import_preview(filename: str, plan: _Plan, sound_count: int) -> Phrase:
    """What an import would change, and how to confirm it."""
    return lines(
        tr(
            "**Importing {file}**: {added} to add, {changed} to change, {same} already so.",
            file=filename[:60],
            added=len(plan.added),
            changed=len(plan.changed),
            same=plan.unchanged,
        ),
        tr(
            "An import adds and changes words, it removes none. Kept as they are, not "
            "in the file: {kept}.",
            kept=plural(plan.kept, "word"),
        ),
        _preview(plan),
        *([tr("Sounds: {count} to add or replace.", count=sound_count)] if sound_count else []),
        tr(
            "Press Import within {minutes} min to make these changes.",
            minutes=max(1, round(IMPORT_CONFIRM_S / 60)),
        ),
    )


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
