"""A rate that keeps up (a server's `queue_speedup`): the more messages wait behind the one
about to be spoken, the faster it is spoken, up to 1.5x at 5 waiting; once the queue drains,
the next message is at its normal rate again.

Decided when an utterance's synthesis begins (`GuildSpeaker._begin`), from how many wait then,
so that a backlog speeds up what is said while it lasts, and nothing after it.
"""

from __future__ import annotations

from bot.storage.server_settings import FASTEST

FULL_SPEED_AT = 5  # messages waiting at which the speed-up is at its most
MOST_SPEEDUP = 1.5  # the factor then (the rate a member or the server chose, times this)


def queue_factor(waiting: int) -> float:
    """How much faster than chosen: 1.0 with nobody waiting, 0.1 more for each waiting
    message, 1.5 at `FULL_SPEED_AT` or more.

    Kept to steps of 0.1: cached leads ("Alice said") are kept per rate, so a handful of
    factors keeps a handful of entries per chosen rate, not one for every queue length."""
    steps = min(max(waiting, 0), FULL_SPEED_AT)
    return round(1.0 + (MOST_SPEEDUP - 1.0) * steps / FULL_SPEED_AT, 1)


def queue_rate(rate: float, waiting: int, *, speedup: bool = False) -> float:
    """The rate to speak at: `rate` (the member's or the server's) with `waiting` messages
    behind it; sped up only with `speedup` (the server's `queue_speedup`), never past FASTEST.
    Kept to hundredths, as chosen rates are (the phrase cache keys rates in hundredths)."""
    if not speedup:
        return rate
    return min(round(rate * queue_factor(waiting), 2), FASTEST)
