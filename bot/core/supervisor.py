"""Long-lived tasks that log their failures and start again instead of dying quietly."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

RESTART_DELAY_S = 1.0
_tasks: set[asyncio.Task[None]] = set()  # strong references: the loop keeps only weak ones


def supervise(
    factory: Callable[[], Awaitable[None]], name: str, restart_delay: float = RESTART_DELAY_S
) -> asyncio.Task[None]:
    """Run `factory()` as a task; when it raises (or returns), log it and run it again after
    `restart_delay`. Cancelling the returned task stops it for good."""

    async def run() -> None:
        while True:
            try:
                await factory()
                log.warning("task %s ended by itself; starting it again", name)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("task %s died; starting it again in %.1f s", name, restart_delay)
            await asyncio.sleep(restart_delay)

    task = asyncio.create_task(run(), name=name)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task
