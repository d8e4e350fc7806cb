"""The pronunciation dictionary end to end through the fake Discord: entries for one language
or for all, export to a file and import from one (a preview, then a button), /dictionary list
filtered and in pages, for every member, in their language."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.services import dictionary_commands
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN, setup_read_channel
from tests.e2e.test_languages import env_for, read_aloud
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
EVERYONE = FakeDiscord.EVERYONE_PERMISSIONS


async def ask(fake: FakeDiscord, command: str, options: dict[str, Any], **how: Any) -> str:
    """The content of the bot's answer to an admin's command."""
    how.setdefault("permissions", ADMIN)
    return (await (await fake.interaction(command, options, **how)).wait_final())["content"]


def button(response: dict[str, Any], label: str) -> str:
    """The custom id of the button labelled `label` on a message the bot sent."""
    buttons = [c for row in response.get("components", []) for c in row["components"]]
    return next(b["custom_id"] for b in buttons if b.get("label") == label)


def sent_file(response: dict[str, Any]) -> tuple[str, bytes]:
    """The one file the bot attached to a response (as uploaded, multipart)."""
    files = response["_files"]
    assert len(files) == 1, files.keys()
    return next(iter(files.items()))


async def listed(fake: FakeDiscord, locale: str = "en-US", **options: Any) -> str:
    """/dictionary list, as a member without Manage Server sees it."""
    return await ask(fake, "dictionary list", options, permissions=EVERYONE, locale=locale)


async def imported(fake: FakeDiscord, name: str, data: bytes) -> str:
    """An admin imports a file and presses Import; the bot's last words."""
    file = fake.attachment(name, data, "text/plain")
    preview = await (
        await fake.interaction("dict import", {"file": file}, permissions=ADMIN)
    ).wait_final()
    if not preview.get("components"):
        return preview["content"]
    done = await fake.click(preview, button(preview, "Import"), permissions=ADMIN)
    return (await done.wait_content("Imported"))["content"]


async def test_an_entry_for_one_language_wins_there_over_the_one_for_all(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, env_for(tmp_path, tiny_model)) as run:
        fake = run.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", VOICE)
        said = await ask(fake, "set my_language", {"language": "french"}, user="bob")
        assert "french" in said

        assert await ask(fake, "dict add", {"word": "GIF", "spoken": "graphics"}) == (
            "“GIF” will be said as “graphics”."
        )
        for_french = await ask(
            fake, "dict add", {"word": "gif", "spoken": "jif", "language": "French"}
        )
        assert for_french == "In french, “gif” will be said as “jif”."
        await ask(
            fake, "dict add", {"word": "brb", "spoken": "be right back", "language": "german"}
        )
        unknown = await ask(fake, "dict add", {"word": "a", "spoken": "b", "language": "klingon"})
        assert "I don't speak “klingon” on this bot. Choose one of: english, french" in unknown
        assert "[french]" in await listed(fake) and "[german]" in await listed(fake)

        # english: the entry for all languages; german's is not said in english
        english = await read_aloud(run, "alice", "a gif, brb", 1)
        assert english.text == "Alice said a graphics, brb"
        # french: french's own entry, over the one for all languages
        french = await read_aloud(run, "bob", "un gif, brb", 2)
        assert french.text.endswith("un jif, brb"), french.text

        # without a language, remove takes the entry for all languages only
        assert await ask(fake, "dict remove", {"word": "gif"}) == (
            "Removed “gif” from the dictionary."
        )
        only_some = await ask(fake, "dict remove", {"word": "gif"})
        assert only_some == "“gif” is in the dictionary only for french: give the language."
        removed = await ask(fake, "dict remove", {"word": "GIF", "language": "french"})
        assert removed == "Removed “GIF” in french from the dictionary."
        assert "gif" not in (await listed(fake)).lower()


async def test_export_then_import_previews_and_merges_on_the_button(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    await ask(fake, "dict add", {"word": "brb", "spoken": "be right back"})
    await ask(fake, "dict add", {"word": "gg", "spoken": "good game", "language": "english"})
    await ask(fake, "dict add", {"word": "afk", "spoken": "away"})

    exported = await (
        await fake.interaction("dictionary export", {}, permissions=EVERYONE)
    ).wait_final()
    assert exported["content"].startswith("The dictionary (3 words)")
    name, data = sent_file(exported)
    assert name.endswith(".json")
    document = json.loads(data)
    assert document["pocketvoice_dictionary"] == 1
    assert document["entries"] == [
        {"word": "afk", "spoken": "away", "language": None},
        {"word": "brb", "spoken": "be right back", "language": None},
        {"word": "gg", "spoken": "good game", "language": "english"},
    ]
    as_csv = await (
        await fake.interaction("dictionary export", {"format": "csv"}, permissions=EVERYONE)
    ).wait_final()
    name, data = sent_file(as_csv)
    assert name.endswith(".csv")
    assert list(csv.reader(io.StringIO(data.decode()))) == [
        ["word", "spoken", "language"],
        ["afk", "away", ""],
        ["brb", "be right back", ""],
        ["gg", "good game", "english"],
    ]

    # since the export: brb said otherwise, gg removed, lol added (the file does not name it)
    await ask(fake, "dict add", {"word": "brb", "spoken": "bee are bee"})
    await ask(fake, "dict remove", {"word": "gg", "language": "english"})
    await ask(fake, "dict add", {"word": "lol", "spoken": "laughing"})

    upload = fake.attachment("mine.json", json.dumps(document).encode(), "application/json")
    asked = await fake.interaction("dict import", {"file": upload}, permissions=ADMIN)
    preview = await asked.wait_final()
    content = preview["content"]
    assert content.startswith("**Importing mine.json**: 1 to add, 1 to change, 1 already so.")
    assert "it removes none. Kept as they are, not in the file: 1 word." in content
    assert "+ gg → good game [english]" in content
    assert "~ brb → be right back (was “bee are bee”)" in content
    assert "bee are bee" in await listed(fake)  # nothing changed before the button

    # the presser's permissions are checked again when the change is made
    refused = await fake.click(preview, button(preview, "Import"))
    assert "Manage Server" in (await refused.wait_final())["content"]
    assert "bee are bee" in await listed(fake)

    upload = fake.attachment("mine.json", json.dumps(document).encode(), "application/json")
    preview = await (
        await fake.interaction("dict import", {"file": upload}, permissions=ADMIN)
    ).wait_final()
    done = await fake.click(preview, button(preview, "Import"), permissions=ADMIN)
    result = await done.wait_content("Imported")
    assert result["content"] == "Imported: 1 added, 1 changed; the dictionary has 4 words."
    assert result["components"] == []  # the buttons are gone
    now = await listed(fake)
    assert "• brb → be right back" in now and "• gg → good game [english]" in now
    assert "• lol → laughing" in now  # merged: what the file does not name stays

    # the same file again: nothing to do, and no button
    again = fake.attachment("mine.json", json.dumps(document).encode(), "application/json")
    same = await (
        await fake.interaction("dict import", {"file": again}, permissions=ADMIN)
    ).wait_final()
    assert "nothing to import" in same["content"] and not same.get("components")


async def test_an_import_cancelled_or_not_confirmed_changes_nothing(
    running_bot: RunningBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = running_bot.fake
    rows = b"word,spoken,language\nbrb,be right back,\n"
    cancelled = await fake.interaction(
        "dict import", {"file": fake.attachment("d.csv", rows, "text/csv")}, permissions=ADMIN
    )
    preview = await cancelled.wait_final()
    assert "1 to add" in preview["content"]
    pressed = await fake.click(preview, button(preview, "Cancel"))
    shown = await pressed.wait_content("cancelled")
    assert shown["content"] == "Import cancelled: the dictionary is unchanged."
    assert "empty" in await listed(fake)

    monkeypatch.setattr(dictionary_commands, "IMPORT_CONFIRM_S", 0.5)
    waited = await fake.interaction(
        "dict import", {"file": fake.attachment("d.csv", rows, "text/csv")}, permissions=ADMIN
    )
    expired = await waited.wait_content("not confirmed in time", timeout=10)
    assert expired["content"] == (
        "The import was not confirmed in time: the dictionary is unchanged."
    )
    assert expired["components"] == []
    assert "empty" in await listed(fake)


async def test_a_bad_file_is_refused_saying_where_and_why(running_bot: RunningBot) -> None:
    fake = running_bot.fake

    async def importing(name: str, data: bytes, **how: Any) -> str:
        file = fake.attachment(name, data, "text/plain")
        if "declared" in how:
            file.declared_size = how.pop("declared")
        return await ask(fake, "dict import", {"file": file}, **how)

    bad_line = b"word,spoken\nbrb,be right back\nlol\n"
    assert await importing("d.csv", bad_line) == (
        "Line 3: expected word,spoken,language (the language may be left out); found 1 fields."
    )
    long_word = b"brb,be right back\n" + b"x" * 51 + b",long\n"
    assert await importing("d.csv", long_word) == (
        "Line 2: Keep the word to 50 characters and how to say it to 100."
    )
    markup = b"brb,<@1200000000000000002>\n"
    assert await importing("d.csv", markup) == (
        "Line 1: Write how to say it as plain words (no links, mentions or markup)."
    )
    language = b"brb,be right back,klingon\n"
    assert (await importing("d.csv", language)).startswith(
        "Line 1: I don't speak “klingon” on this bot."
    )
    twice = b"brb,be right back\nBRB,bee\n"
    assert await importing("d.csv", twice) == "Line 2: “BRB” is already in the file (Line 1)."
    broken_json = b'{"entries": [\n  {"word": "brb", "spoken": "x"}\n  {"word": "a"}\n]}'
    assert (await importing("d.json", broken_json)).startswith(
        "Line 3, column 3: this is not valid JSON"
    )
    missing = json.dumps([{"word": "brb", "spoken": "x"}, {"word": "a"}]).encode()
    assert (await importing("d.json", missing)).startswith("Entry 2: expected an object with")
    typo = json.dumps([{"word": "brb", "spoke": "x"}]).encode()
    assert (await importing("d.json", typo)).startswith("Entry 1: expected an object with")
    deep = b"[" * 100_000 + b"]" * 100_000
    assert await importing("d.json", deep) == "This is not a dictionary file."
    latin1 = "brb,tr\u00e8s bien\n".encode("latin-1")
    assert await importing("d.csv", latin1) == (
        "Line 1: the file is not UTF-8 text (save it as UTF-8 and try again)."
    )
    many = "".join(f"w{i},word\n" for i in range(201)).encode()
    assert await importing("d.csv", many) == "The file has more than 200 entries."

    # a file too large is refused before it is downloaded; one that says it is small is
    # read only up to the cap
    cap = dictionary_commands.IMPORT_MAX_BYTES  # (room for 20 sounds: 8809 KB)
    huge = fake.attachment("d.csv", b"a,b\n" * (cap // 4 + 1), "text/csv")
    refused = await ask(fake, "dict import", {"file": huge})
    assert refused == "That file is too large: at most 8809 KB." and huge.downloads == 0
    assert await importing("d.csv", b"a,b\n" * (cap // 4 + 1), declared=10) == (
        "That file is too large: at most 8809 KB."
    )

    # in the member's language; only admins import
    french = await importing("d.csv", bad_line, locale="fr")
    assert french.startswith("Ligne 3 :"), french
    denied = await importing("d.csv", b"brb,be right back\n", permissions=None)
    assert "Manage Server" in denied
    assert "empty" in await listed(fake)


async def test_list_filters_and_pages_within_a_message(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    rows = "".join(f"word{i:02d},how to say word number {i}\n" for i in range(60)).encode()
    preview = await (
        await fake.interaction(
            "dict import",
            {"file": fake.attachment("d.csv", rows, "text/csv")},
            permissions=ADMIN,
        )
    ).wait_final()
    imported = await fake.click(preview, button(preview, "Import"), permissions=ADMIN)
    await imported.wait_content("Imported")

    first = await listed(fake)
    assert first.startswith("**Pronunciations** (60), page 1 of 2\n") and len(first) <= 2000
    assert first.endswith("\nMore with `/dictionary list page:2`.")
    second = await listed(fake, page=2)
    assert second.endswith("\nThis is the last page.")  # (not "page 1" again)
    assert second.startswith("**Pronunciations** (60), page 2 of 2\n") and len(second) <= 2000
    on_pages = [line for text in (first, second) for line in text.splitlines() if "→" in line]
    assert len(on_pages) == 60 and on_pages[0].startswith("• word00 →")  # each once, in order
    assert on_pages[-1].startswith("• word59 →")

    some = await listed(fake, contains="WORD1")
    assert some.startswith("**Pronunciations** (10)\n")
    assert [line.split()[1] for line in some.splitlines()[1:]] == [f"word1{i}" for i in range(10)]
    assert await listed(fake, contains="nothing") == "No word in the dictionary contains “nothing”."
    # the next page's hint keeps the filter
    filtered = await listed(fake, contains="Word")
    assert filtered.startswith("**Pronunciations** (60), page 1 of 2\n")
    assert filtered.endswith("\nMore with `/dictionary list contains:word page:2`.")
    french = await listed(fake, locale="fr", contains="word", page=2)
    assert french.startswith("**Prononciations** (60), page 2 sur 2\n")
    assert french.endswith("\nC'est la dernière page.")


async def test_members_read_the_dictionary_and_only_admins_change_it(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    denied = await ask(fake, "dict add", {"word": "brb", "spoken": "x"}, permissions=EVERYONE)
    assert "Manage Server" in denied
    await ask(fake, "dict add", {"word": "brb", "spoken": "be right back"})
    assert await listed(fake) == "**Pronunciations** (1)\n• brb → be right back"
    exported = await (
        await fake.interaction("dictionary export", {}, user="bob", permissions=EVERYONE)
    ).wait_final()
    assert json.loads(sent_file(exported)[1])["entries"][0]["word"] == "brb"
    removing = await ask(fake, "dict remove", {"word": "brb"}, permissions=EVERYONE)
    assert "Manage Server" in removing
    assert "brb" in await listed(fake)


async def test_languages_and_the_preview_are_said_in_the_members_language(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, env_for(tmp_path, tiny_model)) as run:
        await _languages_and_the_preview(run.fake)


async def _languages_and_the_preview(fake: FakeDiscord) -> None:
    await ask(fake, "dict add", {"word": "gif", "spoken": "jif", "language": "french"})
    await ask(fake, "dict add", {"word": "gif", "spoken": "djif", "language": "english"})
    assert "• gif → jif [français]" in await listed(fake, locale="fr")
    assert "• gif → jif [french]" in await listed(fake)
    only_some = await ask(fake, "dict remove", {"word": "gif"}, locale="fr")
    assert only_some == (
        "« gif » n'est dans le dictionnaire que pour anglais, français : précisez la langue."
    )

    async def preview(rows: str) -> str:
        upload = fake.attachment("d.csv", rows.encode(), "text/csv")
        asked = await fake.interaction(
            "dict import", {"file": upload}, permissions=ADMIN, locale="fr"
        )
        return str((await asked.wait_final())["content"])

    # an import preview: what changes, and what it was
    changed = await preview("gif,graphics,french\nbrb,be right back\n")
    assert "+ brb → be right back\n~ gif → graphics [français] (avant : « jif »)" in changed
    assert "was" not in changed and "[french]" not in changed
    # past what fits a message, how many more
    rows = "".join(f"word{i:02d},how to say word number {i}\n" for i in range(60))
    many = await preview(rows)
    assert "+ word00 → how to say word number 0" in many and len(many) <= 2000
    assert re.search(r"\n… et \d+ de plus\n", many), many


async def test_a_csv_export_cannot_be_taken_for_formulas(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    words = {
        "=SUM(A1)": "sum",
        "+cmd": "plus",
        "-ish": "ish",
        "@home": "at home",
        "'=x": "marked",
        "'til": "until",
    }
    for word, spoken in words.items():
        await ask(fake, "dict add", {"word": word, "spoken": spoken})
    as_csv = await (
        await fake.interaction("dictionary export", {"format": "csv"}, permissions=EVERYONE)
    ).wait_final()
    data = sent_file(as_csv)[1]
    cells = {row[1]: row[0] for row in csv.reader(io.StringIO(data.decode()))}
    assert cells == {
        "spoken": "word",
        "sum": "'=SUM(A1)",
        "plus": "'+cmd",
        "ish": "'-ish",
        "at home": "'@home",
        "marked": "''=x",
        "until": "'til",
    }
    # imported again, the file is the dictionary as it is: the marks are dropped
    assert "nothing to import" in await imported(fake, "d.csv", data)
    for word in words:
        await ask(fake, "dict remove", {"word": word})
    assert await imported(fake, "d.csv", data) == (
        "Imported: 6 added, 0 changed; the dictionary has 6 words."
    )
    exported = await (
        await fake.interaction("dictionary export", {}, permissions=EVERYONE)
    ).wait_final()
    entries = json.loads(sent_file(exported)[1])["entries"]
    assert {e["word"]: e["spoken"] for e in entries} == words
