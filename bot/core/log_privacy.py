"""Members' words kept out of the logs above DEBUG, where a library would write them.

pocket-tts writes part of the text it speaks into its own records: a chunk too long for the
model is logged at WARNING with its first 50 characters (`'%.50s...'`), and the bot speaks what
members wrote. `WithheldWords`, on every handler of the bot's process and of each model worker
(whose records are forwarded to the bot's process, already formatted), keeps such a record and
its message, with each string it was formatted with withheld: the text spoken is one, numbers
(its token counts) stay. A DEBUG record passes as it is: an operator asks for those knowingly.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

LIBRARIES = ("pocket_tts",)  # the loggers whose records may hold what members wrote
WITHHELD = "[text withheld]"


def _library_of(record: logging.LogRecord) -> str | None:
    """The library whose own code made the record (None: another's, or ours: a worker's
    record forwarded to the bot's process was withheld there, in the worker)."""
    for library in LIBRARIES:
        named = record.name == library or record.name.startswith(f"{library}.")
        if named and f"{os.sep}{library}{os.sep}" in record.pathname:
            return library
    return None


class WithheldWords(logging.Filter):
    """A handler's filter: a record a library in LIBRARIES made above DEBUG keeps its message
    and its numbers, with every string argument withheld (see the module's docstring)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno <= logging.DEBUG or not record.args or _library_of(record) is None:
            return True
        args = record.args
        if isinstance(args, Mapping):
            record.args = {key: _withheld(value) for key, value in args.items()}
        else:
            record.args = tuple(_withheld(value) for value in args)
        return True


def _withheld(value: object) -> object:
    return WITHHELD if isinstance(value, str | bytes) else value
