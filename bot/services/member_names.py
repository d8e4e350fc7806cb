"""The names a server's members go by, as they sound read aloud: one name must not stand for
two members (`/set nick`, bot/services/member_settings.py), nor a webhook pass for a member (its
"NAME said", bot/services/autoread.py)."""

from __future__ import annotations

import asyncio
import functools

import cachetools
import discord

# the package ships no type hints (no py.typed)
from confusable_homoglyphs import categories, confusables  # type: ignore[import-untyped]

from bot.storage.database import Database
from bot.text.words import plain_name


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


@functools.lru_cache(maxsize=4096)
def said_as(name: str) -> str:
    """A name as it sounds: "𝓑𝓸𝓫", "BOB", "bob!", "Bob 🔥" and Cyrillic "Воb" are one name
    read aloud (its letters and digits, look-alikes as the Latin letters they look like,
    folded; a name of neither is kept whole). Cached: a webhook's every message is checked
    against the names of the members the bot knows of."""
    said = latin_lookalikes(plain_name(name)).casefold()
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


async def names_in_use(
    db: Database, guild: discord.Guild, member_id: int | None = None
) -> set[str]:
    """The names the server's members other than `member_id` (None: all of them, as for a
    webhook) go by, as they sound: those of the cache (`names_of_others`) and every
    `/set nick` here."""
    member_id = member_id or 0  # (no snowflake is 0)
    nicks = await db.members.nicks_of_others(guild.id, member_id)
    return names_of_others(guild, member_id) | await _folded_nicks(guild.id, nicks)
