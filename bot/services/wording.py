"""Written words as the bot says them in a server, one way wherever it speaks: chat messages
(bot/services/autoread.py) and what members type to `/say` and `/tts`. Mentions are said by the
names members are read by (their /set nick), then the server's settings apply: its dictionary
for the language spoken, emoji, links, markup, the length cap. `bot.text.words` makes the
words; this reads what they need from the server and the store."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from typing import TypeVar

import cachetools
import discord

from bot.storage.database import Database, MemberSettings
from bot.storage.server_settings import ServerSettings
from bot.text.words import (
    MessageFacts,
    Names,
    ReadOptions,
    announce,
    mentioned_users,
    sound_keys,
)

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
        options = settings.read_options(entries, language)
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
