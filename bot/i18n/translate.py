"""Text that can be said again in the member's language: `tr("…")` keeps its English template
and values; `localize` says it in a locale's language where its table has a translation.
Locales are discord.py's `Locale` or their codes ("fr"): this module does not import discord."""

from __future__ import annotations

from bot.i18n.reply_tables import TABLES


class Phrase(str):
    """English text that keeps its template and values, so that it can be said again in the
    member's language when it is sent (`localize`). It is a `str`: logs, tests and code that
    compare it see the English. Write replies as `tr("Joined {channel}.", channel=...)`; the
    translators' tables are in `bot/i18n/reply_tables.py`."""

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


def locale_code(locale: object) -> str | None:
    """ "fr" for discord.py's `Locale.french` (its value) or for "fr" itself; None for None."""
    if locale is None:
        return None
    return str(getattr(locale, "value", locale))


def localize(text: str, locale: object | None) -> str:
    """`text` in `locale`'s language where a translation exists, else as it is (English).
    `locale`: a discord.py `Locale`, or its code."""
    code = locale_code(locale)
    table = TABLES.get(code) if code is not None else None
    if table is None or not isinstance(text, Phrase):
        return str(text)
    values = {key: localize(value, locale) if isinstance(value, Phrase) else value
              for key, value in text.values.items()}  # fmt: skip
    return table.get(text.template, text.template).format(**values)


def plural(count: int, noun: str) -> Phrase:
    """ "1 voice", "2 voices" (each form is a template of its own for the translators)."""
    return Phrase(f"{{count}} {noun}{'' if count == 1 else 's'}", count=count)


def joined(parts: list[str], separator: str = ", ") -> Phrase:
    """Parts put together (`", "`), each said in the member's language: "french, german"."""
    glue = separator.replace("{", "{{").replace("}", "}}")
    template = glue.join(f"{{p{i}}}" for i in range(len(parts)))
    return Phrase(template, **{f"p{i}": part for i, part in enumerate(parts)})


def longest(text: str) -> int:
    """The length of the text in the language it is longest in (for what must fit a message
    whoever reads it: its English and each table's)."""
    return max(len(localize(text, code)) for code in (None, *TABLES))
