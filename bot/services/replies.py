"""What a command answers: text, maybe a file, a button or a table; the permission check that
refuses politely; and `reply_for`, the one function turning an error into a reply (the
member's own mistake in words, anything else as a generic reply naming an error id)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import discord
from discord import app_commands

from bot.core.errors import UserError
from bot.i18n.translate import tr

log = logging.getLogger(__name__)


@dataclass
class Confirmation:
    """A change shown before it is made: the member who asked presses `label` to make it
    (`apply`, given the presser's permissions, checked again), or Cancel; nothing pressed
    within `timeout_s`, nothing is made."""

    owner_id: int
    label: str
    apply: Callable[[discord.Permissions], Awaitable[Reply]]
    timeout_s: float
    cancelled: str
    expired: str


@dataclass
class Reply:
    content: str
    file: tuple[str, bytes] | None = None  # (filename, data)
    preview_voice_id: int | None = None  # show a Preview button for this voice
    confirm_forget: int | None = None  # show a confirmation button for this user's deletion
    title: str | None = None  # with `fields`: shown as an embed
    fields: Sequence[tuple[str, str]] = field(default_factory=list)
    withdrawn: bool = False  # no words: the "thinking…" reply is deleted
    confirm: Confirmation | None = None  # show its button and Cancel


class QuietRefusal(UserError):
    """A refusal the member was given in words before (a blocked member's later tries): the
    command's reply is withdrawn without words."""


def require_manage_guild(permissions: discord.Permissions) -> None:
    """Checked here too: Discord's default permissions can be changed by server admins."""
    if not permissions.manage_guild:
        raise UserError(
            tr("You need the Manage Server permission to change this server's settings.")
        )


def require_manage_nicknames(permissions: discord.Permissions) -> None:
    """Setting another member's reading name: Manage Nicknames, checked here."""
    if not permissions.manage_nicknames:
        raise UserError(
            tr("You need the Manage Nicknames permission to choose another member's name.")
        )


def unexpected_error_reply(what: str, error: BaseException | None = None) -> Reply:
    """Log an unexpected error (default: the one being handled) with its traceback under a
    short id, and the reply that names it. The member can quote the id; the operator finds it
    in the log."""
    error_id = secrets.token_hex(4)
    log.error("unexpected error %s in %s", error_id, what, exc_info=error or True)
    return Reply(
        tr("Something went wrong on my side (error id {id}). Please try again.", id=error_id)
    )


def reply_for(error: BaseException, what: str) -> Reply:
    """The reply for any error a command met, wherever it was caught (`respond` in the cogs,
    the command tree's error handler): a `UserError` (also wrapped by discord.py) in its own
    words, a check or option discord.py refused in words, anything else (an `OperatorError`
    or `InternalError` too) logged under an id that the generic reply names. `what` names the
    command in the log."""
    original = error
    if isinstance(error, app_commands.AppCommandError):  # discord.py wraps what a command raised
        original = getattr(error, "original", error)
    if isinstance(original, QuietRefusal):
        return Reply("", withdrawn=True)
    if isinstance(original, UserError):
        return Reply(original.message)
    if isinstance(error, app_commands.CheckFailure):
        return Reply(str(error) or tr("You cannot use this command here."))
    if isinstance(error, app_commands.TransformerError):  # e.g. a channel I cannot see
        return Reply(
            tr("I cannot use one of the options you gave (a channel or role I cannot see?).")
        )
    return unexpected_error_reply(what, original)
