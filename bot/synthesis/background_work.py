"""Background model work: speech as a file (`/tts` files, previews: `SpeechJob`s with an
owner) and model calls that are not speech (`ModelCall`: clones, voice rebuilds); its limits
per member, per server and overall, checked before the work is queued. It runs on lanes of its
own (`BACKGROUND_LANES`, the engine's background thread), never on a live worker."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.synthesis.speech_jobs import FIRST_UNIT_CHARS, Owner

BACKGROUND_LANES = 1  # background jobs in flight at once (the engine has one thread for them)
BACKGROUND_UNIT_CHARS = FIRST_UNIT_CHARS  # short units: a live unit never waits long


class BusyError(UserError):
    """Too much background work is waiting for this member, server or bot."""


@dataclass(eq=False)
class ModelCall:
    """`fn(model)` with the model of `language` (None: the default one), run once on a
    background lane. It cannot be interrupted: cancelled while running, it ends first."""

    fn: Callable[[Any], Any]
    owner: Owner
    language: str | None
    requested_at: float
    running: bool = False
    cancelled: bool = False
    error: BaseException | None = None
    result: Any = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    def finish(self) -> None:
        self.done.set()


@dataclass(frozen=True)
class BackgroundLimits:
    per_member: int = 2
    per_server: int = 4  # DMs count together as one server
    total: int = 32


class BackgroundAdmission:
    """Counts background jobs by owner and refuses one over the limits (`BusyError`)."""

    def __init__(self, limits: BackgroundLimits | None = None) -> None:
        self.limits = limits or BackgroundLimits()
        self.done = 0
        self.refused = 0

    def admit(self, waiting: Sequence[Owner], owner: Owner) -> None:
        """Raise `BusyError` when `owner`'s member, server or the bot has too much waiting
        (`waiting`: the owners of the background work not finished)."""
        limits = self.limits
        mine = sum(1 for who in waiting if who[0] == owner[0])
        server = sum(1 for who in waiting if who[1] == owner[1])
        if mine >= limits.per_member:
            refusal = tr(
                "You already have {count} requests waiting. Please wait for them to finish.",
                count=mine,
            )
        elif server >= limits.per_server:
            where = tr("this server") if owner[1] is not None else tr("direct messages")
            refusal = tr(
                "{count} requests from {where} are waiting. Please try again shortly.",
                count=server,
                where=where,
            )
        elif len(waiting) >= limits.total:
            refusal = tr("I'm busy with many requests right now. Please try again in a minute.")
        else:
            return
        self.refused += 1
        raise BusyError(refusal)
