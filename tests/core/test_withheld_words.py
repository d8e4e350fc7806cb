"""`WithheldWords` (bot/core/log_privacy.py) on a handler: what it leaves as it is. What it
withholds, from the real pocket-tts in both processes: test_log_privacy.py."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from bot.core.log_privacy import WithheldWords

SECRET = "mysecretword"


@pytest.fixture
def logger() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A pocket-tts logger writing through a handler with the filter, as the bot's are."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(WithheldWords())
    named = logging.getLogger("pocket_tts.models.text_chunking")
    named.addHandler(handler)
    yield named, stream
    named.removeHandler(handler)


def test_a_debug_record_and_other_loggers_pass_as_they_are(
    logger: tuple[logging.Logger, io.StringIO],
) -> None:
    """DEBUG is asked for knowingly; a record made by the bot's own code under pocket-tts's
    name (a worker's, forwarded: withheld in the worker already) is not withheld twice."""
    named, stream = logger
    level = named.level
    named.setLevel(logging.DEBUG)
    try:
        named.debug("chunk: '%.50s...'", SECRET)
        named.warning("%s", "Chunk has 60 tokens (max 50), generation may skip words")
    finally:
        named.setLevel(level)
    assert stream.getvalue().splitlines() == [
        f"chunk: '{SECRET}...'",
        "Chunk has 60 tokens (max 50), generation may skip words",
    ]
