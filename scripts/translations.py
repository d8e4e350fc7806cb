"""The replies' gettext catalogues (bot/i18n/locale/<locale>/LC_MESSAGES/pocketvoice.po),
kept in step with the code by Babel.

    .venv/bin/python scripts/translations.py update   extract the replies from bot/ and cogs/
                                                      and merge them into every locale's .po
    .venv/bin/python scripts/translations.py check    exit 1 when a .po lacks a reply or has
                                                      one the code no longer says
    .venv/bin/python scripts/translations.py import FILE
        fill the French of replies still untranslated from a Python file holding a
        `FRENCH_REPLIES = {english: french}` table (the tables before the catalogues)

A reply is `tr("template", ...)`, and `plural(n, "noun")` is the pair "{count} noun" /
"{count} nouns" (one gettext plural message: each language's CLDR plural rule picks the form).
The languages' names are said from values (`language_name`), not written in a `tr(...)`: they
are added here (`dynamic_messages`). After `update`, translate the new
messages of each .po (an editor such as Poedit, or by hand) and remove their `fuzzy` flags;
`tests/i18n/test_reply_translations.py` checks that every one has its French.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the checkout's bot package

from bot.i18n.translate import DOMAIN, LOCALE_DIR  # noqa: E402

LOCALES = ("en", "fr")
KEYWORDS = {"tr": None, "plural": (1, 2)}


def extract_replies(
    fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any
) -> Iterator[tuple[int, str, str | tuple[str, str], list[str]]]:
    """Babel's extraction method for our front: `tr("…")`'s literal template, and
    `plural(n, "noun")` as its two English forms."""
    for node in ast.walk(ast.parse(fileobj.read())):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        name = getattr(node.func, "id", None)
        first = node.args[0]
        if name == "tr" and isinstance(first, ast.Constant) and isinstance(first.value, str):
            yield node.lineno, "tr", first.value, []
        elif name == "plural":
            noun = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(noun, ast.Constant) and isinstance(noun.value, str)):
                raise ValueError(f"line {node.lineno}: plural() needs a literal noun")
            yield node.lineno, "plural", (f"{{count}} {noun.value}", f"{{count}} {noun.value}s"), []


def dynamic_messages() -> list[tuple[str, str]]:
    """Words said from values (`language_name`), with why they are here."""
    from bot.synthesis.model_pool import available_languages

    return [(language, "a language's name (pocket-tts's)") for language in available_languages()]


def command_messages() -> list[tuple[str, str]]:
    """What Discord shows of the commands, as the bot's command tree holds it (the cogs
    loaded as `sync` loads them): each command's and group's description, each option's, and
    the message menu's name; with where each is shown. The translator
    (`bot/services/command_translator.py`) gives Discord their translations."""
    return asyncio.run(_command_messages())


async def _command_messages() -> list[tuple[str, str]]:
    import discord
    from discord import app_commands
    from discord.ext import commands

    from bot.client import EXTENSIONS

    bot = commands.Bot(
        command_prefix=commands.when_mentioned, intents=discord.Intents.none(), help_command=None
    )
    for extension in EXTENSIONS:
        await bot.load_extension(extension)
    found: list[tuple[str, str]] = []

    def visit(command: app_commands.Command[Any, ..., Any] | app_commands.Group) -> None:
        where = f"/{command.qualified_name}"
        found.append((command.description, f"{where}: Discord shows at most 100 characters"))
        if isinstance(command, app_commands.Group):
            for child in command.commands:
                visit(child)
        else:
            for parameter in command.parameters:
                found.append((parameter.description, f"{where} {parameter.name}"))

    for command in bot.tree.get_commands():
        if isinstance(command, app_commands.ContextMenu):
            continue
        visit(command)
    for menu in bot.tree.get_commands(type=discord.AppCommandType.message):
        found.append((menu.name, "the message menu's name"))
    await bot.close()
    return [(message, why) for message, why in found if message and message != "…"]


@functools.cache
def extracted() -> Catalog:
    """The catalogue of what the code says, as Babel extracts it (read, not changed)."""
    catalog = Catalog(project="PocketVoice", domain=DOMAIN, fuzzy=False)
    for folder in ("bot", "cogs"):
        found = extract_from_dir(
            ROOT / folder, method_map=[("**.py", extract_replies)], keywords=KEYWORDS
        )
        for filename, lineno, message, _comments, context in found:
            catalog.add(message, locations=[(f"{folder}/{filename}", lineno)], context=context)
    for message, why in [*dynamic_messages(), *command_messages()]:
        if message not in catalog:
            catalog.add(message, auto_comments=[why])
    return catalog


def po_path(locale: str) -> Path:
    return LOCALE_DIR / locale / "LC_MESSAGES" / f"{DOMAIN}.po"


def read(locale: str) -> Catalog:
    path = po_path(locale)
    if not path.is_file():
        return Catalog(locale=locale, project="PocketVoice", domain=DOMAIN, fuzzy=False)
    with path.open("rb") as file:
        return read_po(file, locale=locale, domain=DOMAIN)


def write(catalog: Catalog, locale: str) -> None:
    path = po_path(locale)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as file:
        # no line numbers: a line moved in the code does not change the catalogue
        write_po(file, catalog, width=100, include_lineno=False, ignore_obsolete=True)


def update() -> None:
    template = extracted()
    for locale in LOCALES:
        catalog = read(locale)
        catalog.update(template, no_fuzzy_matching=locale == "en", update_header_comment=False)
        write(catalog, locale)
        print(f"updated {po_path(locale).relative_to(ROOT)}")


def problems(locale: str) -> list[str]:
    """What a locale's catalogue lacks against the code (French: every translation)."""
    template, catalog = extracted(), read(locale)
    wanted = {message.id for message in template if message.id}
    have = {message.id for message in catalog if message.id}
    found = [f"not in the catalogue: {m!r}" for m in wanted - have]
    found += [f"no longer said by the code: {m!r}" for m in have - wanted]
    if locale != "en":
        for message in catalog:
            if not message.id:
                continue
            strings = message.string if isinstance(message.string, tuple) else (message.string,)
            if message.fuzzy or not all(strings):
                found.append(f"untranslated or fuzzy: {message.id!r}")
    return found


def import_table(path: Path) -> None:
    """Fill the French of untranslated messages from a `FRENCH_REPLIES` table's file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    table: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(getattr(t, "id", None) == "FRENCH_REPLIES" for t in targets):
                assert node.value is not None
                table = ast.literal_eval(node.value)
    catalog = read("fr")
    filled = 0
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        current = message.string if isinstance(message.string, tuple) else (message.string,)
        if all(current) and not message.fuzzy:
            continue
        if all(i in table for i in ids):
            if isinstance(message.id, tuple):  # the first form is the singular (CLDR's "one")
                singular, *others = (table[i] for i in ids)
                message.string = (singular, *[others[-1]] * (catalog.num_plurals - 1))
            else:
                message.string = table[message.id]
            message.flags.discard("fuzzy")
            filled += 1
    write(catalog, "fr")
    print(f"filled {filled} French messages from {path}")


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "update":
        update()
    elif command == "import" and len(argv) == 2:
        import_table(Path(argv[1]))
    elif command == "check":
        found = [f"{locale}: {p}" for locale in LOCALES for p in problems(locale)]
        print("\n".join(found) or "the catalogues match the code")
        return 1 if found else 0
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
