"""Keep Python's garbage collector from stalling the event loop.

torch, pocket-tts and discord.py leave about 390,000 objects behind at import. A full
collection walks all of them, for hundreds of milliseconds on a small machine, during which
the event loop, and so every server's queue and every reply, stands still (`bench/soak.py`
sees such stalls; docs/performance.md, "Memory").
They live as long as the process, so after start-up they are moved out of the collector's
sight (`gc.freeze`, as the Python documentation advises for long-running services); later
collections walk only what was made since.
"""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger(__name__)


def freeze_after_startup() -> None:
    """Collect what start-up left as garbage, then freeze everything still alive."""
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    log.debug(
        "froze %d start-up objects in %.0f ms",
        gc.get_freeze_count(),
        (time.perf_counter() - started) * 1000,
    )
