"""Choosing a language for a server (`/config speech language`) or a member (`/set
my_language`): one the bot offers, whose model can be loaded, and within the rate of changes,
since each language switched to may load a model (seconds of CPU, hundreds of MB)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.services.change_limits import ChangeLimit, wait_minutes
from bot.synthesis.model_pool import check_language

# at most this many changes per member (/set my_language) or server (/config speech language)
LANGUAGE_CHANGES = 3
LANGUAGE_CHANGES_WINDOW_S = 300.0
# ... and at most this many by all the members of a server together: alts would each bring
# their own member's limit.
SERVER_MEMBER_LANGUAGE_CHANGES = 10


class LanguageChoice:
    def __init__(
        self,
        languages: tuple[str, ...] = (),
        can_load: Callable[[str], Awaitable[None]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`languages`: what servers and members may choose; `can_load`: raises a UserError
        with the reason when a language's model cannot be loaded (ModelPool.check_loadable)."""
        self.languages = languages
        self.can_load = can_load
        self.language_changes = ChangeLimit(LANGUAGE_CHANGES, LANGUAGE_CHANGES_WINDOW_S, clock)
        self.member_language_changes_here = ChangeLimit(
            SERVER_MEMBER_LANGUAGE_CHANGES, LANGUAGE_CHANGES_WINDOW_S, clock
        )  # per server: its members' /set my_language together

    async def choose(self, raw: str, changer: tuple[str, int], member_of: int | None = None) -> str:
        """A language a server or member switches to: offered, within the rate of changes
        (a member's: also within their server's, `member_of`), and with a model that can be
        loaded."""
        language = check_language(raw, self.languages)  # a UserError when not offered
        self._count_language_change(changer, member_of)
        if self.can_load is not None:
            await self.can_load(language)
        return language

    def _count_language_change(self, changer: tuple[str, int], member_of: int | None) -> None:
        """Both limits are checked before either counts: a refusal counts nowhere."""
        wait_s = self.language_changes.waiting(changer)
        if wait_s:
            raise UserError(
                tr(
                    "The language was changed {count} times in the last few minutes: please wait "
                    "{minutes} min before changing it again.",
                    count=LANGUAGE_CHANGES,
                    minutes=wait_minutes(wait_s),
                )
            )
        if member_of is not None:
            wait_s = self.member_language_changes_here.take(member_of)
            if wait_s:
                raise UserError(
                    tr(
                        "Members of this server changed their language {count} times in the last "
                        "few minutes: please wait {minutes} min before changing yours.",
                        count=SERVER_MEMBER_LANGUAGE_CHANGES,
                        minutes=wait_minutes(wait_s),
                    )
                )
        self.language_changes.take(changer)
