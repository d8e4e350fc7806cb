"""How often a server's messages are read: each author's share of a window (a webhook's names
each an author of their own, the webhook as a whole a larger share), for chat, edits and
"Speak this message"."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable

import cachetools
import discord

RATE_WINDOW_S = 10.0
MAX_TRACKED = 10_000  # servers or (server, member) pairs remembered at once
# Who wrote a message, for "NAME said" and the rate limit: a member's id, or for a webhook its
# id with the name it posted under (one webhook carries many people: Tupperbox's personas, a
# bridge's members), each an author of its own.
Author = int | tuple[int, str]
# A webhook as a whole is read at most WEBHOOK_NAMES x rate_limit times a window, beside each
# name's own rate_limit: a name is free to take, and 60 names were 60 members' shares.
WEBHOOK_NAMES = 5


def author_of(message: discord.Message) -> Author:
    if message.webhook_id is not None:
        return (message.webhook_id, message.author.name)
    return message.author.id


def limits_of(message: discord.Message, rate_limit: int) -> list[tuple[Author, int]]:
    """The rate limits a message counts against: its author's, and for a webhook's also the
    webhook's as a whole (its id: never a member's)."""
    limits: list[tuple[Author, int]] = [(author_of(message), rate_limit)]
    if message.webhook_id is not None:
        limits.append((message.webhook_id, rate_limit * WEBHOOK_NAMES))
    return limits


class ReadRates:
    """Recent reads per (server, author), and apart from them recent edits: an edit now and
    then costs no message. Entries older than the window are useless, so each table is bounded
    by what happened in the last RATE_WINDOW_S (and MAX_TRACKED)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.reads: cachetools.TTLCache[tuple[int, Author], collections.deque[float]] = (
            cachetools.TTLCache(maxsize=MAX_TRACKED, ttl=RATE_WINDOW_S, timer=clock)
        )
        self.edits: cachetools.TTLCache[tuple[int, Author], collections.deque[float]] = (
            cachetools.TTLCache(maxsize=MAX_TRACKED, ttl=RATE_WINDOW_S, timer=clock)
        )

    def limited(
        self,
        guild_id: int,
        limits: list[tuple[Author, int]],
        now: float | None = None,
        *,
        edit: bool = False,
    ) -> bool:
        """Whether one of `limits` (an author and how many reads it has in a window) is
        reached; if none is, the read counts for each of them."""
        now = self.clock() if now is None else now
        table = self.edits if edit else self.reads
        recents = []
        for author, limit in limits:
            recent = table.get((guild_id, author)) or collections.deque()
            while recent and now - recent[0] > RATE_WINDOW_S:
                recent.popleft()
            if len(recent) >= limit:
                return True
            recents.append((author, recent))
        for author, recent in recents:
            recent.append(now)
            table[(guild_id, author)] = recent  # (re)starts its time to live
        return False

    def forget_guild(self, guild_id: int) -> None:
        """The bot left a server: drop what it remembered there."""
        for table in (self.reads, self.edits):
            for key in [k for k in table if k[0] == guild_id]:
                table.pop(key, None)
