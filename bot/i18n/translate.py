"""Text that can be said again in the member's language: `tr("…")` keeps its English template
and values; `localize` says it in a locale's language where its gettext catalogue has a
translation. Locales are discord.py's `Locale` or their codes ("fr"): discord.py is not
imported here.

The catalogues are `locale/<code>/LC_MESSAGES/pocketvoice.po` beside this module, kept in step
with the code by Babel (`scripts/translations.py`). They are read at start and compiled in
memory (milliseconds), so no build step makes `.mo` files and a checkout runs as it is; the
plural rule of each language is the catalogue's (Babel's, from CLDR: French says "0 mot").
"""

from __future__ import annotations

import gettext
import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

DOMAIN = "pocketvoice"
LOCALE_DIR = Path(__file__).with_name("locale")
SOURCE_LOCALE = "en"  # the code's own language: its templates are the messages


def _load(code: str) -> gettext.GNUTranslations:
    with (LOCALE_DIR / code / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as file:
        catalog = read_po(file, locale=code, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)  # fuzzy messages are left out: not reviewed yet
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


# Every locale with a catalogue, but the code's own language
CATALOGUES: dict[str, gettext.GNUTranslations] = {
    folder.name: _load(folder.name)
    for folder in sorted(LOCALE_DIR.iterdir())
    if folder.is_dir() and folder.name != SOURCE_LOCALE
}


class Phrase(str):
    """English text that keeps its template and values, so that it can be said again in the
    member's language when it is sent (`localize`). It is a `str`: logs, tests and code that
    compare it see the English. Write replies as `tr("Joined {channel}.", channel=...)`; the
    translations are in the catalogues (`scripts/translations.py update` adds new ones)."""

    template: str
    values: dict[str, object]
    forms: tuple[str, str] | None = None  # a `plural`: its English singular and plural

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
    return Phrase(
        "\n".join(f"{{p{i}}}" for i in range(len(parts))),
        **{f"p{i}": part for i, part in enumerate(parts)},
    )


def locale_code(locale: object) -> str | None:
    """ "fr" for discord.py's `Locale.french` (its value) or for "fr" itself; None for None."""
    if locale is None:
        return None
    return str(getattr(locale, "value", locale))


def localize(text: str, locale: object | None) -> str:
    """`text` in `locale`'s language where a translation exists, else as it is (English).
    `locale`: a discord.py `Locale`, or its code."""
    code = locale_code(locale)
    catalogue = CATALOGUES.get(code) if code is not None else None
    if catalogue is None or not isinstance(text, Phrase):
        return str(text)
    values = {
        key: localize(value, locale) if isinstance(value, Phrase) else value
        for key, value in text.values.items()
    }
    if text.forms is not None:
        count = text.values["count"]
        assert isinstance(count, int)
        return catalogue.ngettext(*text.forms, count).format(**values)
    return catalogue.gettext(text.template).format(**values)


def command_text(text: str, locale: object) -> str | None:
    """A command's description (or the message menu's name) in `locale`'s language, from its
    catalogue; None where it has none (Discord then shows the English). The catalogues hold
    what the command tree shows (`scripts/translations.py`)."""
    code = locale_code(locale)
    catalogue = CATALOGUES.get(code) if code is not None else None
    if catalogue is None:
        return None
    translated = catalogue.gettext(text)
    return translated if translated != text else None


def plural(count: int, noun: str) -> Phrase:
    """ "1 voice", "2 voices": one gettext plural message, each language's rule picking its
    form ("0 voices" in English, "0 voix" in French)."""
    phrase = Phrase(f"{{count}} {noun}{'' if count == 1 else 's'}", count=count)
    phrase.forms = (f"{{count}} {noun}", f"{{count}} {noun}s")
    return phrase


def joined(parts: list[str], separator: str = ", ") -> Phrase:
    """Parts put together (`", "`), each said in the member's language: "french, german"."""
    glue = separator.replace("{", "{{").replace("}", "}}")
    template = glue.join(f"{{p{i}}}" for i in range(len(parts)))
    return Phrase(template, **{f"p{i}": part for i, part in enumerate(parts)})


def longest(text: str) -> int:
    """The length of the text in the language it is longest in (for what must fit a message
    whoever reads it: its English and each table's)."""
    return max(len(localize(text, code)) for code in (None, *CATALOGUES))
