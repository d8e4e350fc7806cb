"""Following the voices that other processes delete, through a shared store (PostgreSQL's
LISTEN/NOTIFY): `VoiceRepository.delete` announces each deletion on commit, and every process
sharing the store drops its own copies of that voice's files at once."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.storage.database import STORE_ERRORS, VOICE_DELETED, Database

log = logging.getLogger(__name__)

RELISTEN_S = 2.0  # after the link to PostgreSQL is lost, listen again this soon
MAX_HEARD = 10_000  # deletions heard and not yet handled; past it, one catch-up instead


@dataclass(frozen=True)
class DeletedVoice:
    """What a deletion notice says: the voice and its files (relative to DATA_DIR)."""

    id: int
    state_path: str
    clip_path: str


async def follow_deletions(
    db: Database,
    on_deleted: Callable[[DeletedVoice], Awaitable[None]],
    catch_up: Callable[[], Awaitable[object]],
) -> None:
    """For good (supervised), with a shared store: `on_deleted` for each voice another process
    deletes (or forgets with its member), one at a time. Each time the link to the store is
    made (again), and when notices come faster than they are handled, `catch_up()` instead
    (a sweep), as some were missed."""
    heard: asyncio.Queue[str] = asyncio.Queue(MAX_HEARD)
    missed = ""  # the marker for "catch up on everything"
    overflowed = False  # deletions were heard faster than handled

    def hear(payload: str) -> None:
        nonlocal overflowed
        try:
            heard.put_nowait(payload)
        except asyncio.QueueFull:  # a catch-up covers everything dropped here
            overflowed = True

    async def handle() -> None:
        nonlocal overflowed
        while True:
            payload = await heard.get()
            try:
                if not payload or overflowed:
                    overflowed = False
                    await catch_up()
                    continue
                gone = json.loads(payload)
                await on_deleted(
                    DeletedVoice(int(gone["id"]), str(gone["state_path"]), str(gone["clip_path"]))
                )
            except Exception:  # one bad notice must not stop the rest
                log.exception("handling a voice deletion failed")

    handler = asyncio.create_task(handle())
    try:
        while True:
            try:
                await db.listen(VOICE_DELETED, hear, lambda: hear(missed))
                log.warning("lost the link to the store's notices; listening again")
            except STORE_ERRORS as error:
                log.warning("cannot listen to the store's notices: %r", error)
            await asyncio.sleep(RELISTEN_S)
    finally:
        handler.cancel()
