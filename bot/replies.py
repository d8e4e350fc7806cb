"""What a command answers: text, maybe a file, a button or a table; or a polite refusal."""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass, field

import discord

from bot.reply_translations import TABLES

log = logging.getLogger(__name__)


class Phrase(str):
    """English text that keeps its template and values, so that it can be said again in the
    member's language when it is sent (`localize`). It is a `str`: logs, tests and code that
    compare it see the English. Write replies as `tr("Joined {channel}.", channel=...)`; the
    translators' tables are in `bot/reply_translations.py`."""

    template: str
    values: dict[str, object]

    def __new__(cls, template: str, **values: object) -> Phrase:
        phrase = super().__new__(cls, template.format(**values))
        phrase.template = template
        phrase.values = values
        return phrase


tr = Phrase


def language_name(language: str) -> Phrase:
    """A language's name ("french"), to be said in the member's language ("français")."""
    return Phrase(language)


def lines(*parts: str) -> Phrase:
    """Several replies' lines as one text, each said in the member's language."""
    return Phrase("\n".join(f"{{p{i}}}" for i in range(len(parts))), **{
        f"p{i}": part for i, part in enumerate(parts)
    })  # fmt: skip


def localize(text: str, locale: discord.Locale | None) -> str:
    """`text` in `locale`'s language where a translation exists, else as it is (English)."""
    table = TABLES.get(locale) if locale is not None else None
    if table is None or not isinstance(text, Phrase):
        return str(text)
    values = {key: localize(value, locale) if isinstance(value, Phrase) else value
              for key, value in text.values.items()}  # fmt: skip
    return table.get(text.template, text.template).format(**values)


class UserError(Exception):
    """Something the member can fix; the message is shown to them as is."""

    @property
    def message(self) -> str:
        """The text as raised (a `Phrase` keeps its translations)."""
        first = self.args[0] if self.args else ""
        return first if isinstance(first, str) else str(self)


@dataclass
class Reply:
    content: str
    file: tuple[str, bytes] | None = None  # (filename, data)
    preview_voice_id: int | None = None  # show a Preview button for this voice
    confirm_forget: int | None = None  # show a confirmation button for this user's deletion
    title: str | None = None  # with `fields`: shown as an embed
    fields: list[tuple[str, str]] = field(default_factory=list)


def plural(count: int, noun: str) -> Phrase:
    """ "1 voice", "2 voices" (each form is a template of its own for the translators)."""
    return Phrase(f"{{count}} {noun}{'' if count == 1 else 's'}", count=count)


def require_manage_guild(permissions: discord.Permissions) -> None:
    """Checked here too: Discord's default permissions can be changed by server admins."""
    if not permissions.manage_guild:
        raise UserError(
            tr("You need the Manage Server permission to change this server's settings.")
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
