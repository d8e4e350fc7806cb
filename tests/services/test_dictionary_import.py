"""The dictionary import (`bot/services/dictionary_commands.py`,
`bot/services/dictionary_files.py`): the file read and checked entry by entry, the plan of what
it would change (`_plan`: an import adds and changes, never removes), its preview, the room
left, and the confirmed import against the dictionary as it is then (tests/e2e/test_dictionary.py
runs it end to end)."""

from __future__ import annotations

import json

import discord
import pytest

from bot.core.errors import UserError
from bot.services import dictionary_files
from bot.services.dictionary_commands import IMPORT_MAX_BYTES, MAX_DICTIONARY, _plan, _preview
from bot.storage.database import Pronunciation
from tests.services.discord_objects import EVERYONE, MANAGE_GUILD, Server
from tests.services.wiring import Bot


def entries(text: str) -> list[Pronunciation]:
    """ "brb=be right back, gg=good game@english" as entries."""
    found = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        word, said = item.split("=")
        spoken, _, language = said.partition("@")
        found.append(Pronunciation(word, spoken, language or None))
    return found


PLANS = {
    "into an empty dictionary": ("", "brb=be right back, gg=good game", (2, 0, 0, 0, 2)),
    "nothing new": ("brb=be right back", "brb=be right back", (0, 0, 1, 0, 1)),
    "a word said otherwise": ("brb=bee are bee", "brb=be right back", (0, 1, 0, 0, 1)),
    "words the file does not name are kept": (
        "afk=away, lol=laughing",
        "brb=be right back",
        (1, 0, 0, 2, 3),
    ),
    "the word in another case is the same word": (
        "BRB=be right back",
        "brb=be right back",
        (0, 1, 0, 0, 1),
    ),
    "the same word for one language is another entry": (
        "gg=good game",
        "gg=bien joué@french",
        (1, 0, 0, 1, 2),
    ),
    "all at once": (
        "afk=away, brb=bee, gg=good game@english",
        "brb=be right back, gg=good game@english, lol=laughing",
        (1, 1, 1, 1, 4),
    ),
}


@pytest.mark.parametrize(("current", "incoming", "counts"), PLANS.values(), ids=PLANS.keys())
def test_the_import_plan(current: str, incoming: str, counts: tuple[int, ...]) -> None:
    plan = _plan(entries(current), entries(incoming))
    assert (len(plan.added), len(plan.changed), plan.unchanged, plan.kept, plan.total) == counts
    assert set(plan.was) == {e.key for e in plan.changed}  # what each change replaces


def test_the_preview_says_what_changes_and_what_it_was() -> None:
    plan = _plan(entries("brb=bee are bee"), entries("brb=be right back, gg=good game@english"))
    assert _preview(plan).splitlines() == [
        "+ gg → good game [english]",
        "~ brb → be right back (was “bee are bee”)",
    ]


def test_a_long_preview_ends_with_how_many_more() -> None:
    plan = _plan([], [Pronunciation(f"word{n:03}", "x" * 40) for n in range(100)])
    shown = _preview(plan).splitlines()
    assert shown[-1] == f"… and {100 - len(shown) + 1} more"
    assert len(_preview(plan)) <= 1_300


@pytest.mark.parametrize(
    ("current", "incoming", "refused"),
    [
        (MAX_DICTIONARY - 1, 1, False),
        (MAX_DICTIONARY, 1, True),
        (MAX_DICTIONARY, 0, False),
        (150, 60, True),
    ],
)
async def test_an_import_fits_the_dictionary_or_is_refused(
    bot: Bot, server: Server, current: int, incoming: int, refused: bool
) -> None:
    guild = server.start()
    await bot.db.dictionary.merge(
        guild.id, [Pronunciation(f"old{n}", "said") for n in range(current)], MAX_DICTIONARY
    )
    new = [Pronunciation(f"new{n}", "said") for n in range(incoming)]
    if not new:  # a file naming only words the dictionary has: it fits, changing nothing
        new = [Pronunciation("old0", "said otherwise")]
    permissions = discord.Permissions(MANAGE_GUILD)
    try:
        reply = (await bot.dictionary._import(permissions, guild, new)).content
    except UserError as error:
        reply = error.message
    total = current + incoming
    assert reply == (
        f"The dictionary would have {total} words with this file, and it holds at most "
        f"{MAX_DICTIONARY}: remove some first."
        if refused
        else f"Imported: {incoming} added, {len(new) - incoming} changed; the dictionary has "
        f"{total} words."
    )


async def test_the_confirmed_import_merges_into_the_dictionary_as_it_is_then(
    bot: Bot, server: Server
) -> None:
    guild = server.start()
    incoming = entries("brb=be right back, gg=good game@english")
    await bot.db.dictionary.add(guild.id, "afk", "away")
    await bot.db.dictionary.add(guild.id, "brb", "bee are bee")  # (since the preview)
    reply = await bot.dictionary._import(discord.Permissions(MANAGE_GUILD), guild, incoming)
    assert reply.content == "Imported: 1 added, 1 changed; the dictionary has 3 words."
    assert await bot.db.dictionary.all(guild.id) == entries(
        "afk=away, brb=be right back, gg=good game@english"
    )


async def test_the_presser_needs_manage_server_too(bot: Bot, server: Server) -> None:
    guild = server.start()
    with pytest.raises(UserError, match="Manage Server"):
        await bot.dictionary._import(discord.Permissions(EVERYONE), guild, entries("a=b"))
    assert await bot.db.dictionary.all(guild.id) == []


async def test_a_file_declared_too_large_is_refused_before_it_is_fetched(
    bot: Bot, server: Server
) -> None:
    guild = server.start()
    file = dict(server.attachment("huge.csv", "text/csv"), size=IMPORT_MAX_BYTES + 1)
    interaction, (attachment,) = server.slash_command(
        "alice", "dict", files=(file,), permissions=MANAGE_GUILD
    )
    assert isinstance(attachment, discord.Attachment)
    with pytest.raises(UserError) as error:
        await bot.dictionary.dict_import(
            interaction.permissions, interaction.user, guild, attachment
        )
    assert error.value.message == "That file is too large: at most 8809 KB."  # (20 sounds fit)
    assert IMPORT_MAX_BYTES // 1024 == 8809


# ---- the file ----------------------------------------------------------------------------------
FILES = {
    "CSV with its header": (
        "d.csv",
        "word,spoken,language\nbrb,be right back,\n",
        "brb=be right back",
    ),
    "CSV without a header, two fields": (
        "d.csv",
        "brb,be right back\ngg,good game\n",
        "brb=be right back, gg=good game",
    ),
    "CSV with a language": ("d.csv", "gg,bien joué,french\n", "gg=bien joué@french"),
    "CSV, 'all' languages": ("d.csv", "gg,good game,all\n", "gg=good game"),
    "CSV, spaces collapsed, blank lines skipped": (
        "d.csv",
        "\n  brb , be  right back\n\n",
        "brb=be right back",
    ),
    "CSV, a spreadsheet's text mark dropped": ("d.csv", "'=x,equals x\n", "=x=equals x"),
    "JSON as exported": (
        "d.json",
        json.dumps(
            {
                "pocketvoice_dictionary": 1,
                "entries": [{"word": "gg", "spoken": "good game", "language": "english"}],
            }
        ),
        "gg=good game@english",
    ),
    "JSON, a plain list": (
        "d.json",
        '[{"word": "brb", "spoken": "be right back"}]',
        "brb=be right back",
    ),
    "JSON by its first character": ("dictionary.txt", '[{"word": "a", "spoken": "b"}]', "a=b"),
}


@pytest.mark.parametrize(("name", "text", "expected"), FILES.values(), ids=FILES.keys())
def test_a_file_is_read(bot: Bot, name: str, text: str, expected: str) -> None:
    found = dictionary_files.parse(name, text, bot.dictionary.check_entry, MAX_DICTIONARY)
    if "=x" in expected:  # (the word is "=x" itself)
        assert found == [Pronunciation("=x", "equals x")]
    else:
        assert found == entries(expected)


BAD_FILES = {
    "a line of one field": (
        "d.csv",
        "brb,be right back\nlol\n",
        "Line 2: expected word,spoken,language (the language may be left out); found 1 fields.",
    ),
    "a word too long": (
        "d.csv",
        "x" * 51 + ",long\n",
        "Line 1: Keep the word to 50 characters and how to say it to 100.",
    ),
    "markup in how to say it": (
        "d.csv",
        "brb,<@1200000000000000002>\n",
        "Line 1: Write how to say it as plain words (no links, mentions or markup).",
    ),
    "a word twice, in any case": (
        "d.csv",
        "brb,be right back\nBRB,bee\n",
        "Line 2: “BRB” is already in the file (Line 1).",
    ),
    "a JSON entry without how to say it": (
        "d.json",
        '[{"word": "a"}]',
        "Entry 1: expected an object with “word”, “spoken” "
        "and, if it applies to one language only, "
        "“language”.",
    ),
    "an unknown JSON field": (
        "d.json",
        '[{"word": "a", "spoken": "b", "lang": "x"}]',
        "Entry 1: unknown field “lang” (expected word, spoken, language).",
    ),
    "a word that is not text": (
        "d.json",
        '[{"word": 1, "spoken": "b"}]',
        "Entry 1: the word and how to say it must both be text.",
    ),
    "not a list of entries": (
        "d.json",
        '{"words": []}',
        "This is not a dictionary file: "
        "expected a list of entries, or an object with “entries”, as "
        "/dictionary export writes.",
    ),
    "too many entries": (
        "d.csv",
        "a,b\n" * (MAX_DICTIONARY + 2),
        f"The file has more than {MAX_DICTIONARY} entries.",
    ),
    # what no store can keep (PostgreSQL refuses NUL; a lone surrogate has no UTF-8), and a
    # number past Python's int limit (a ValueError: "Something went wrong")
    "a NUL in a word": (
        "d.csv",
        "brb,be right back\nb\x00rb,bee\n",
        "Line 2: The word holds a control character (U+0000): remove it.",
    ),
    "a NUL in how to say it": (
        "d.json",
        '[{"word": "a", "spoken": "b\\u0000c"}]',
        "Entry 1: How to say it holds a control character (U+0000): remove it.",
    ),
    "a control character in a word": (
        "d.csv",
        "be\x07ll,bell\n",
        "Line 1: The word holds a control character (U+0007): remove it.",
    ),
    "half of a surrogate pair in a word": (
        "d.json",
        '[{"word": "\\ud83d", "spoken": "x"}]',
        "Entry 1: The word holds an invalid character (U+D83D): remove it.",
    ),
    "half of a surrogate pair in how to say it": (
        "d.json",
        '[{"word": "a", "spoken": "x\\udc00"}]',
        "Entry 1: How to say it holds an invalid character (U+DC00): remove it.",
    ),
    "a 5,000-digit number for a word": (
        "d.json",
        f'[{{"word": {"9" * 5000}, "spoken": "x"}}]',
        "Entry 1: the word and how to say it must both be text.",
    ),
    "a 5,000-digit number for a language": (
        "d.json",
        f'[{{"word": "a", "spoken": "x", "language": {"9" * 5000}}}]',
        "Entry 1: the language must be text, or empty for all.",
    ),
}


@pytest.mark.parametrize(("name", "text", "refused"), BAD_FILES.values(), ids=BAD_FILES.keys())
def test_a_bad_file_is_refused_saying_where_and_why(
    bot: Bot, name: str, text: str, refused: str
) -> None:
    with pytest.raises(UserError) as error:
        dictionary_files.parse(name, text, bot.dictionary.check_entry, MAX_DICTIONARY)
    assert error.value.message == refused


UNKEEPABLE = {
    "a NUL in the word": (
        "b\x00rb",
        "be right back",
        "The word holds a control character (U+0000): remove it.",
    ),
    "a NUL in how to say it": (
        "brb",
        "be\x00 right back",
        "How to say it holds a control character (U+0000): remove it.",
    ),
    "half of a surrogate pair": (
        "\ud83d",
        "x",
        "The word holds an invalid character (U+D83D): remove it.",
    ),
}


@pytest.mark.parametrize(("word", "spoken", "refused"), UNKEEPABLE.values(), ids=UNKEEPABLE.keys())
async def test_dict_add_refuses_what_the_import_refuses(
    bot: Bot, server: Server, word: str, spoken: str, refused: str
) -> None:
    guild = server.start()
    with pytest.raises(UserError) as error:
        await bot.dictionary.dict_add(discord.Permissions(MANAGE_GUILD), guild, word, spoken)
    assert error.value.message == refused
    assert await bot.db.dictionary.all(guild.id) == []


@pytest.mark.parametrize(
    ("word", "refused"),
    [
        ("br\x00b", "The word holds a control character (U+0000): remove it."),
        ("br\ud800b", "The word holds an invalid character (U+D800): remove it."),
    ],
)
async def test_dict_remove_refuses_a_word_no_entry_can_hold(
    bot: Bot, server: Server, word: str, refused: str
) -> None:
    """Refused before the store is asked (PostgreSQL fails on a NUL in a query's text)."""
    guild = server.start()
    with pytest.raises(UserError) as error:
        await bot.dictionary.dict_remove(discord.Permissions(MANAGE_GUILD), guild, word)
    assert error.value.message == refused


@pytest.mark.parametrize(
    ("data", "text"),
    [(b"\xef\xbb\xbfbrb,be right back\n", "brb,be right back\n"), (b"a,b\n", "a,b\n")],
)
def test_a_file_is_utf8_with_or_without_its_byte_order_mark(data: bytes, text: str) -> None:
    assert dictionary_files.decode(data) == text


def test_a_file_not_in_utf8_is_refused_naming_its_line() -> None:
    with pytest.raises(UserError) as error:
        dictionary_files.decode("a,b\nc,é\n".encode("latin-1"))
    assert error.value.message == (
        "Line 2: the file is not UTF-8 text (save it as UTF-8 and try again)."
    )


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_an_export_imports_as_itself(bot: Bot, kind: str) -> None:
    """Formulas are marked as text for spreadsheets, and read back as written."""
    written = [
        Pronunciation("=HYPERLINK(x)", "a link"),
        Pronunciation("'+1", "plus one"),
        Pronunciation("gg", "good game", "english"),
    ]
    data = (dictionary_files.to_json if kind == "json" else dictionary_files.to_csv)(written)
    if kind == "csv":
        assert data.decode().splitlines()[1] == "'=HYPERLINK(x),a link,"
    text = dictionary_files.decode(data)
    assert dictionary_files.parse(f"d.{kind}", text, bot.dictionary.check_entry, 10) == written
