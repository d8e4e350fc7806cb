"""Which messages are read aloud: the server's rules and the author's own choice, as one pure
function (`verdict`) over what a message is (`Posted`), for chat, edits and "Speak this
message" alike. Where a message is written and where the bot is (read channels, voice) are
auto-reading's own (bot/services/autoread.py): a member asking for a message chose both."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from bot.storage.server_settings import ServerSettings


class Verdict(enum.StrEnum):
    """Whether a message is read, else the rule that skips it (its value: the log's words)."""

    READ = "read"
    PRIVATE_THREAD = "a private thread"
    FROM_A_BOT = "from a bot"
    SYSTEM_MESSAGE = "system message"
    SILENT = "a @silent message"
    SKIP_PREFIX = "skip prefix"
    MISSING_ROLE = "missing the required role"
    IGNORED_ROLE = "has the ignored role"
    STAGE_AUDIENCE = "in the stage audience"
    BLOCKED = "blocked by a moderator"
    OPTED_OUT = "member opted out"


@dataclass(frozen=True)
class Posted:
    """What the rules read of a message and its author."""

    content: str = ""
    webhook: bool = False  # posted by a webhook: no member, hence no roles, never in voice
    from_bot: bool = False
    system: bool = False  # neither a plain message, a reply nor a poll's result
    silent: bool = False  # sent with @silent (suppress_notifications)
    private_thread: bool = False
    roles: frozenset[int] = frozenset()  # the author's roles (a webhook has none)
    stage_audience: bool = False  # the author is in a stage channel's audience
    blocked: bool = False  # the author, by the server's moderators
    opted_out: bool = False  # the author asked not to be read (/set autoread)


def verdict(posted: Posted, settings: ServerSettings, *, asked: bool = False) -> Verdict:
    """Whether `posted` is read under the server's `settings`, else why not. `asked`: a
    member asked for it now ("Speak this message"): a @silent message, a system message's
    type and the stage audience do not count then. A private thread is never read: without
    the members intent the bot cannot know who may see it."""
    if posted.private_thread:
        return Verdict.PRIVATE_THREAD
    if settings.bot_ignore and (posted.from_bot or posted.webhook):
        return Verdict.FROM_A_BOT
    if posted.system and not asked:
        return Verdict.SYSTEM_MESSAGE
    if settings.skip_silent and posted.silent and not asked:
        return Verdict.SILENT
    if settings.skip_prefix and posted.content.startswith(settings.skip_prefix):
        return Verdict.SKIP_PREFIX
    if settings.required_role and settings.required_role not in posted.roles:
        return Verdict.MISSING_ROLE
    if settings.ignored_role and settings.ignored_role in posted.roles:
        return Verdict.IGNORED_ROLE
    if settings.audience_ignore and posted.stage_audience and not asked:
        return Verdict.STAGE_AUDIENCE
    if posted.blocked and not posted.webhook:
        return Verdict.BLOCKED
    if posted.opted_out and not posted.webhook:
        return Verdict.OPTED_OUT
    return Verdict.READ
