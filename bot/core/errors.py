"""The errors every floor may raise. `UserError`: something the member can fix, said to them
politely (a `Phrase` message keeps its translations)."""

from __future__ import annotations


class UserError(Exception):
    """Something the member can fix; the message is shown to them as is."""

    @property
    def message(self) -> str:
        """The text as raised (a `Phrase` keeps its translations)."""
        first = self.args[0] if self.args else ""
        return first if isinstance(first, str) else str(self)
