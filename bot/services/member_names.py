"""The names a server's members go by, as they sound read aloud: one name must not stand for
two members (`/set nick`, bot/services/member_settings.py), nor a webhook pass for a member (its
"NAME said", bot/services/autoread.py)."""

from __future__ import annotations

import asyncio
import functools
import logging
import unicodedata

import cachetools
import discord

# the package ships no type hints (no py.typed)
from confusable_homoglyphs import categories, confusables  # type: ignore[import-untyped]

from bot.storage.database import Database
from bot.text.words import plain_name

log = logging.getLogger(__name__)


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
