"""The one error tree every floor raises on. Three branches under `PocketVoiceError`:

- `OperatorError`: something the operator must fix (a setting, a port, a missing library, the
  weights, a database from a newer version). It stops start-up, or a command line, with one
  line naming what to change (`label: message`), never a traceback.
- `UserError`: something the member can fix, said to them politely (a `Phrase` message keeps
  its translations).
- `InternalError`: a signal between floors (a full queue, a refused write), caught and turned
  into something else by the caller. One that escapes is unexpected, like any other exception:
  the member gets a generic reply with an error id, the operator the traceback under that id.

`bot.services.replies.reply_for` is the one function turning any error into a reply. Classes
that were `ValueError` or `RuntimeError` keep that base too, so nothing catching them changes.
"""

from __future__ import annotations


class PocketVoiceError(Exception):
    """The root of every error PocketVoice raises on purpose."""


class OperatorError(PocketVoiceError):
    """Something the operator must fix; the message says what, in one line."""

    label = "Error"  # how the command line introduces the message


class UserError(PocketVoiceError):
    """Something the member can fix; the message is shown to them as is."""

    @property
    def message(self) -> str:
        """The text as raised (a `Phrase` keeps its translations)."""
        first = self.args[0] if self.args else ""
        return first if isinstance(first, str) else str(self)


class InternalError(PocketVoiceError):
    """A signal between floors, handled by the caller; escaping, it is an unexpected error."""
