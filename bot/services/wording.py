"""Written words as the bot says them in a server, one way wherever it speaks: chat messages
(bot/services/autoread.py) and what members type to `/say` and `/tts`. Mentions are said by the
names members are read by (their /set nick), then the server's settings apply: its dictionary
for the language spoken, emoji, links, markup, the length cap. `bot.text.words` makes the
words; this reads what they need from the server and the store.

The names members go by, as they sound read aloud, are here too: one name must not stand for
two members (`/set nick`, bot/services/member_settings.py), nor a webhook pass for a member (its
"NAME said", bot/services/message_reading.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import unicodedata
from collections.abc import Callable, Mapping
from typing import TypeVar

import cachetools
import discord

# the package ships no type hints (no py.typed)
from confusable_homoglyphs import categories, confusables  # type: ignore[import-untyped]

from bot.storage.database import Database, MemberSettings
from bot.storage.server_settings import ServerSettings
from bot.text.words import (
    MessageFacts,
    Names,
    ReadOptions,
    announce,
    mentioned_users,
    plain_name,
    sound_keys,
)

log = logging.getLogger(__name__)

# A text is cut to this many times the longest spoken line before it is rendered: past it the
# words would be cut anyway (rendering seldom shrinks text eightfold), and a 4,000-character
# message costs no more than it must.
CONTENT_PER_SPOKEN = 8
MIN_CONTENT = 1_000
CODE_FENCE = "```"
SHARED_SOUND_BYTES = 64 * 1024 * 1024  # sounds' audio kept shared by the waiting messages
# Rendering takes time in proportion to the text (docs/performance.md, "Rendering words"): a
# text this long or longer is rendered on a worker thread, so that the longest message holds
# the event loop no longer than a short one does
OFF_LOOP_CHARS = 500

T = TypeVar("T")


async def rendered(content: str, render: Callable[[], T]) -> T:
    """`render()` (the words for `content`), on a worker thread when `content` is long."""
    if len(content) < OFF_LOOP_CHARS:
        return render()
    return await asyncio.to_thread(render)


def capped(content: str, max_length: int) -> str:
    """The text cut before rendering (see CONTENT_PER_SPOKEN); a code block it cuts in two is
    closed, so it is still "a code block" and not its code read out."""
    most = max(MIN_CONTENT, CONTENT_PER_SPOKEN * max_length)
    if len(content) <= most:
        return content
    content = content[:most]
    return content + CODE_FENCE if content.count(CODE_FENCE) % 2 else content


def read_options(
    settings: ServerSettings, dictionary: Mapping[str, str], language: str
) -> ReadOptions:
    """How the server's chat becomes words under its `settings`, in `language` with its
    dictionary entries."""
    return ReadOptions(
        skip_emoji=settings.skip_emoji,
        repeated_characters=settings.repeated_characters,
        max_length=settings.max_length,
        dictionary=dictionary,
        language=language,
        timezone=settings.timezone,
        pauses=settings.pauses,
    )


def owners_names(owner_id: int, username: str) -> Names:
    """The only name a member's cloned voice says: its owner's username, which no one else
    can take. Another member's nickname (or name), a role's and a channel's are words other
    people chose (a 32-character nickname can be a sentence): mentioned, each is said as
    "someone", "a role", "a channel" (`bot.text.words.speakable`'s words for a name not
    known), so that the clone never says them under "NAME said"."""
    return Names(users={owner_id: username})


class Wording:
    """What the words need from a server: its dictionary, and the names members go by."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # one copy of each sound's audio for every message waiting to play it (a hundred
        # waiting messages held a hundred copies): (server, word) -> (sha256, pcm), bounded
        # in bytes; a sound changed since is known by its sha256 and read again
        self._sounds: cachetools.LRUCache[tuple[int, str], tuple[str, bytes]] = cachetools.LRUCache(
            maxsize=SHARED_SOUND_BYTES, getsizeof=lambda v: len(v[1]) or 1
        )

    async def options(
        self,
        guild_id: int | None,
        settings: ServerSettings,
        language: str,
        *,
        sounds: bool = False,
        cloned: bool = False,
    ) -> ReadOptions:
        """How the server's text becomes words, in `language` with its dictionary entries
        (in a DM, `guild_id` None: the settings' defaults, no dictionary); `sounds`: its words
        with a sound are marked (for speech that plays them: see `sounds_in`). `cloned`: for
        a member's cloned voice, without the dictionary: its replacements are the admins'
        words, not the owner's, and the clone says each word as its owner wrote it (a word
        with a sound still plays it: a clip is not the clone's voice)."""
        entries = (
            await self.db.dictionary.entries(guild_id, language) if guild_id and not cloned else {}
        )
        options = read_options(settings, entries, language)
        if sounds and guild_id:
            words = await self.db.sounds.words(guild_id)
            if words:
                options = dataclasses.replace(options, sounds=frozenset(words))
        return options

    async def sounds_in(self, guild_id: int, *lines: str) -> dict[str, bytes]:
        """The audio of the sounds these lines play (each at most MAX_SOUND_PLAYS), by
        casefolded word: read only when a line has one."""
        keys = sorted({key for line in lines for key in sound_keys(line)})
        hashes = await self.db.sounds.hashes(guild_id, keys)
        shared = {key: self._sounds.get((guild_id, key)) for key in hashes}
        missing = [k for k, held in shared.items() if held is None or held[0] != hashes[k]]
        for key, sound in (await self.db.sounds.get(guild_id, missing)).items():
            fresh = (sound.sha256, sound.pcm)
            shared[key] = self._sounds[(guild_id, key)] = fresh
        return {key: held[1] for key, held in shared.items() if held is not None}

    async def names(
        self,
        guild: discord.Guild,
        people: Mapping[int, str],
        *,
        author_id: int | None = None,
        author: MemberSettings | None = None,
    ) -> Names:
        """How to call what the words name: `people` (user id: the name Discord shows, "" when
        not known), each by their /set nick here if they have one; `author`: the settings of
        `author_id`, when read already (then only the others' nicks are read)."""
        users = dict(people)
        others = [user for user in users if author is None or user != author_id]
        if author is not None and author.nick is not None and author_id is not None:
            users[author_id] = author.nick  # /set nick wins
        if others:
            users.update(await self.db.members.nicks(guild.id, others))
        return Names(
            users=users,
            roles={role.id: role.name for role in guild.roles},
            channels={channel.id: channel.name for channel in guild.channels},
        )

    async def typed(
        self,
        text: str,
        guild: discord.Guild | None,
        settings: ServerSettings | None,
        language: str,
        *,
        author_id: int,
        author: MemberSettings | None = None,
        cloned: bool = False,
    ) -> str:
        """What a member typed (`/say`, `/tts`) as their chat message would be said, without
        "NAME said" ('' when nothing is left to say). A member mentioned is called as in
        chat, and "someone" when neither the server's cache nor a /set nick knows them; in a
        DM (`guild` None), no dictionary and no names. `cloned`: said in the member's cloned
        voice, which says only their words (`owners_names`, no dictionary)."""
        settings = settings or ServerSettings(guild_id=0)  # (a DM: the defaults)
        options = await self.options(guild.id if guild else None, settings, language, cloned=cloned)
        options = dataclasses.replace(options, pauses=True)  # what a member typed to be said
        names = Names()
        if guild is not None and cloned:
            own = guild.get_member(author_id)
            names = owners_names(author_id, own.name) if own is not None else Names()
        elif guild is not None:
            people: dict[int, str] = {}
            for user_id in mentioned_users(text):
                member = guild.get_member(user_id)
                people[user_id] = member.display_name if member is not None else ""
            names = await self.names(guild, people, author_id=author_id, author=author)
        facts = MessageFacts(content=capped(text, settings.max_length))
        return await rendered(
            facts.content, lambda: announce(facts, names, options, say_name=False)
        )


# ---- the names members go by, as they sound ------------------------------------------------
def latin_lookalikes(text: str) -> str:
    """Each character of another script that looks like a Latin one (Unicode's confusables,
    UTS #39) as that Latin character: Cyrillic "Аlice" or Greek "Αlice" is "Alice" to the eye
    and to the voice."""
    found = confusables.is_confusable(text, greedy=True, preferred_aliases=["latin"])
    if not found:
        return text
    swap: dict[str, str] = {}
    for item in found:
        for glyph in item["homoglyphs"]:
            if all(categories.alias(c) in ("LATIN", "COMMON") for c in glyph["c"]):
                swap[item["character"]] = glyph["c"]
                break
    return "".join(swap.get(c, c) for c in text)


# Latin letters with a stroke or a ligature, which Unicode does not decompose into a letter
# and a mark: "Ałice" and "Ålice" alike are "Alice" to the eye
LATIN_STROKES = str.maketrans(
    {"ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ŧ": "t", "ı": "i", "ȷ": "j", "æ": "ae", "œ": "oe"}
)


ACCENTED_SCRIPTS = ("LATIN ", "GREEK ", "CYRILLIC ")  # their marks are accents on a letter


def without_accents(text: str) -> str:
    """Latin, Greek and Cyrillic letters without their accents (NFKD, their marks dropped,
    the rest composed again): "Ålice", "Alicé" and "Alice" are one name to a listener and
    nearly so to the eye. The marks of other scripts stay: they make other letters there
    (Japanese "ざ" is not "さ")."""
    kept: list[str] = []
    for c in unicodedata.normalize("NFKD", text):
        if unicodedata.combining(c) and kept and _accented_script(kept[-1]):
            continue
        kept.append(c)
    return unicodedata.normalize("NFC", "".join(kept)).translate(LATIN_STROKES)


def _accented_script(letter: str) -> bool:
    return unicodedata.name(letter, "").startswith(ACCENTED_SCRIPTS)


@functools.lru_cache(maxsize=4096)
def said_as(name: str) -> str:
    """A name as it sounds: "𝓑𝓸𝓫", "BOB", "bob!", "Bob 🔥", "Bøb", "Böb" and Cyrillic "Воb"
    are one name read aloud (its letters and digits, look-alikes as the Latin letters they
    look like, without accents, folded; a name of neither is kept whole). Cached: a
    webhook's every message is checked against the names of the members the bot knows of."""
    said = latin_lookalikes(without_accents(plain_name(name))).casefold()
    said = without_accents(said)  # (a look-alike may bring an accent: "ӧ")
    return "".join(c for c in said if c.isalnum()) or said


def names_of_others(guild: discord.Guild, member_id: int | None) -> set[str]:
    """The names the server's members other than `member_id` go by that the bot's cache
    knows of (display, global and user names; without the members intent, the members in
    voice and the bot itself), as they sound."""
    return {
        said_as(name)
        for other in guild.members
        if other.id != member_id
        for name in (other.display_name, other.global_name, other.name)
        if name
    }


# Each server's /set nicks as they sound (raw nick -> folded), for the servers seen lately: a
# webhook's every message is checked against all of them, and folding 5,000 nicks each time
# held the event loop a second (past `said_as`'s cache, each was folded anew). A nick set or
# changed since is folded when it is first met; one no longer set drops out.
MAX_SERVERS_FOLDED = 256
FOLD_IN_THREAD = 64  # more new nicks than this are folded in a thread, off the event loop
_folded: cachetools.LRUCache[int, dict[str, str]] = cachetools.LRUCache(MAX_SERVERS_FOLDED)


def _fold(nicks: list[str]) -> dict[str, str]:
    """(Past `said_as`'s cache: thousands of nicks would push out the names of the members
    in voice, checked at every message.)"""
    return {nick: said_as.__wrapped__(nick) for nick in nicks}


async def _folded_nicks(guild_id: int, nicks: list[str]) -> set[str]:
    known = _folded.get(guild_id, {})
    new = [nick for nick in set(nicks) if nick not in known]
    made = await asyncio.to_thread(_fold, new) if len(new) > FOLD_IN_THREAD else _fold(new)
    now = {nick: known.get(nick) or made[nick] for nick in nicks}
    _folded[guild_id] = now
    return set(now.values())


# The server owner's names as they sound, by server: without the members intent the owner is
# in the cache only while in voice, and their name is the one a webhook would most like to
# take. Fetched when not cached, kept a while (a rename is seen within OWNER_NAMES_S); a fetch
# that failed is not tried again for OWNER_RETRY_S, and meanwhile the names are unknown (None).
OWNER_NAMES_S = 600.0
OWNER_RETRY_S = 60.0
OWNER_FETCH_S = 5.0
# (by server and owner: an ownership transferred is another owner at once)
_owners: cachetools.TTLCache[tuple[int, int], frozenset[str]] = cachetools.TTLCache(
    MAX_SERVERS_FOLDED, OWNER_NAMES_S
)
_owners_failed: cachetools.TTLCache[tuple[int, int], bool] = cachetools.TTLCache(
    MAX_SERVERS_FOLDED, OWNER_RETRY_S
)


def _names_of(member: discord.Member) -> frozenset[str]:
    return frozenset(
        said_as(name) for name in (member.display_name, member.global_name, member.name) if name
    )


async def names_of_owner(guild: discord.Guild) -> frozenset[str] | None:
    """The server owner's names as they sound: from the cache, else fetched (once in
    OWNER_NAMES_S); None while they cannot be known (the fetch failed lately)."""
    owner = guild.owner
    if owner is not None:
        return _names_of(owner)
    if guild.owner_id is None:
        return frozenset()
    key = (guild.id, guild.owner_id)
    known = _owners.get(key)
    if known is not None:
        return known
    if key in _owners_failed:
        return None
    try:
        async with asyncio.timeout(OWNER_FETCH_S):
            fetched = await guild.fetch_member(guild.owner_id)
    except (discord.HTTPException, TimeoutError) as error:
        log.info("the owner of server %s could not be fetched: %s", guild.id, error)
        _owners_failed[key] = True
        return None
    _owners[key] = names = _names_of(fetched)
    return names


async def names_in_use(
    db: Database, guild: discord.Guild, member_id: int | None = None
) -> set[str]:
    """The names the server's members other than `member_id` (None: all of them, as for a
    webhook) go by, as they sound: those of the cache (`names_of_others`), the server
    owner's (`names_of_owner`, fetched if need be) and every `/set nick` here."""
    member_id = member_id or 0  # (no snowflake is 0)
    nicks = await db.members.nicks_of_others(guild.id, member_id)
    names = names_of_others(guild, member_id) | await _folded_nicks(guild.id, nicks)
    if guild.owner_id != member_id:
        names |= await names_of_owner(guild) or frozenset()
    return names
