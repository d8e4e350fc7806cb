"""A server's pronunciation dictionary as a file, and back: JSON (what `/dictionary export`
gives by default) or CSV (`word,spoken,language`, for spreadsheets). Reading is bounded
before the text is parsed (bytes, lines) and each bad entry is a `UserError` naming its line
(CSV) or its place in the list (JSON) and what is wrong with it. The entries' own rules
(lengths, plain words, an offered language) are the caller's `check`.

A CSV cell a spreadsheet would take for a formula (`=`, `+`, `-`, `@`, a tab or a carriage
return first) is written with a `'` before it, as spreadsheets mark text, and the `'` is
dropped again on import: a word such as "=HYPERLINK(…)" stays a word when the file is opened.

The JSON file also carries the server's sounds (`/dict sound`), each a FLAC file in base64
under "sounds"; CSV carries none. Each sound is bounded here (count, text length, base64) and
decoded by the caller through the one clip reader, like any upload."""

from __future__ import annotations

import base64
import binascii
import csv
import io
import json
from collections.abc import Callable, Sequence

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.storage.database import Pronunciation

FORMAT = "pocketvoice_dictionary"  # the JSON file's marker, with its version
VERSION = 1
CSV_HEADER = ("word", "spoken", "language")
ENTRY_KEYS = frozenset(CSV_HEADER)
Check = Callable[[str, str, str | None], Pronunciation]  # word, spoken, language as written
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet cell a formula
TEXT_MARK = "'"
MAX_DIGITS = 4_000  # a whole number longer than this is not made an int (see _whole_number)
SOUND_KEYS = frozenset(("word", "flac"))
SOUND_FILE_BYTES = 320 * 1024  # a sound's FLAC at most (3 s of 48 kHz s16 is 288 KB raw)


def to_json(entries: list[Pronunciation], sounds: Sequence[tuple[str, bytes]] = ()) -> bytes:
    """One entry a line, so that a person can read and edit the file; `sounds`: (word, its
    FLAC file), one a line after the entries."""
    lines = [
        json.dumps({"word": e.word, "spoken": e.spoken, "language": e.language}, ensure_ascii=False)
        for e in entries
    ]
    body = ",\n".join(f"  {line}" for line in lines)
    extra = ""
    if sounds:
        listed = ",\n".join(
            "  "
            + json.dumps(
                {"word": word, "flac": base64.b64encode(flac).decode()}, ensure_ascii=False
            )
            for word, flac in sounds
        )
        extra = f', "sounds": [\n{listed}\n]'
    return f'{{"{FORMAT}": {VERSION}, "entries": [\n{body}\n]{extra}}}\n'.encode()


def parse_sounds(filename: str, text: str, most: int) -> list[tuple[str, str, bytes]]:
    """The sounds of a JSON file as /dictionary export writes them: (where, word, the audio
    file's bytes), at most `most`, each bounded before its base64 is decoded; none in CSV."""
    if not is_json(filename, text):
        return []
    try:
        document = json.loads(text, parse_int=_whole_number)
    except (json.JSONDecodeError, RecursionError):
        return []  # (`parse` said why already)
    listed = document.get("sounds", []) if isinstance(document, dict) else []
    if not isinstance(listed, list):
        raise UserError(tr("“sounds” must be a list of sounds, as /dictionary export writes."))
    if len(listed) > most:
        raise UserError(tr("The file has more than {most} sounds.", most=most))
    found: list[tuple[str, str, bytes]] = []
    for number, item in enumerate(listed, start=1):
        where = tr("Sound {number}", number=number)
        if not isinstance(item, dict) or item.keys() != SOUND_KEYS:
            raise UserError(tr("{where}: expected an object with “word” and “flac”.", where=where))
        word, coded = item["word"], item["flac"]
        if not isinstance(word, str) or not isinstance(coded, str):
            raise UserError(tr("{where}: the word and the sound must both be text.", where=where))
        if len(coded) > (SOUND_FILE_BYTES + 2) // 3 * 4:
            raise UserError(
                tr(
                    "{where}: the sound is larger than {kb} KB.",
                    where=where,
                    kb=SOUND_FILE_BYTES // 1024,
                )
            )
        try:
            data = base64.b64decode(coded, validate=True)
        except (binascii.Error, ValueError):
            raise UserError(tr("{where}: the sound is not valid base64.", where=where)) from None
        found.append((where, word, data))
    return found


def to_csv(entries: list[Pronunciation]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for entry in entries:
        writer.writerow((_as_text(entry.word), _as_text(entry.spoken), entry.language or ""))
    return out.getvalue().encode()


def _as_text(cell: str) -> str:
    """A cell a spreadsheet keeps as text. Cells already marked ("'=x") get one mark more, so
    that `_unmarked` gives back exactly what was written."""
    return TEXT_MARK + cell if cell.lstrip(TEXT_MARK).startswith(FORMULA_STARTS) else cell


def _unmarked(cell: str) -> str:
    """A CSV cell without the text mark `_as_text` (or a spreadsheet) put before a formula."""
    marked = cell.startswith(TEXT_MARK) and cell.lstrip(TEXT_MARK).startswith(FORMULA_STARTS)
    return cell[1:] if marked else cell


def is_json(filename: str, text: str) -> bool:
    """JSON by its name, else by its first character; anything else is read as CSV."""
    name = filename.lower()
    if name.endswith(".json"):
        return True
    if name.endswith(".csv"):
        return False
    return text.lstrip()[:1] in ("{", "[")


def decode(data: bytes) -> str:
    """UTF-8 (a byte order mark, as spreadsheets write it, is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UserError(
            tr(
                "Line {line}: the file is not UTF-8 text (save it as UTF-8 and try again).",
                line=line,
            )
        ) from None


def parse(filename: str, text: str, check: Check, most: int) -> list[Pronunciation]:
    """The entries of a file, each checked; at most `most` of them, and no entry twice."""
    if is_json(filename, text):
        entries = _parse_json(text, check, most)
    else:
        entries = _parse_csv(text, check, most)
    if len(entries) > most:
        raise UserError(tr("The file has more than {most} entries.", most=most))
    seen: dict[tuple[str, str | None], str] = {}
    for where, entry in entries:
        if entry.key in seen:
            raise UserError(
                tr(
                    "{where}: “{word}” is already in the file ({first}).",
                    where=where,
                    word=entry.word,
                    first=seen[entry.key],
                )
            )
        seen[entry.key] = where
    return [entry for _, entry in entries]


def _checked(
    where: str, check: Check, word: object, spoken: object, language: object
) -> Pronunciation:
    if not isinstance(word, str) or not isinstance(spoken, str):
        raise UserError(tr("{where}: the word and how to say it must both be text.", where=where))
    if language is not None and not isinstance(language, str):
        raise UserError(tr("{where}: the language must be text, or empty for all.", where=where))
    try:
        return check(word, spoken, language)
    except UserError as error:
        raise UserError(tr("{where}: {problem}", where=where, problem=error.message)) from None


def _parse_csv(text: str, check: Check, most: int) -> list[tuple[str, Pronunciation]]:
    if sum(1 for line in text.splitlines() if line.strip()) > most + 1:  # with a header
        raise UserError(tr("The file has more than {most} entries.", most=most))
    reader = csv.reader(io.StringIO(text), strict=True)
    entries: list[tuple[str, Pronunciation]] = []
    try:
        for row in reader:
            where = tr("Line {line}", line=reader.line_num)
            if not any(cell.strip() for cell in row):
                continue
            if reader.line_num == 1 and [c.strip().casefold() for c in row] in (
                list(CSV_HEADER),
                list(CSV_HEADER[:2]),
            ):
                continue
            if len(row) not in (2, 3):
                raise UserError(
                    tr(
                        "{where}: expected word,spoken,language (the language may be left out); "
                        "found {count} fields.",
                        where=where,
                        count=len(row),
                    )
                )
            language = row[2] if len(row) == 3 else None
            word, spoken = _unmarked(row[0]), _unmarked(row[1])
            entries.append((where, _checked(where, check, word, spoken, language)))
    except csv.Error as error:
        raise UserError(
            tr(
                "Line {line}: this is not valid CSV ({problem}).",
                line=reader.line_num,
                problem=str(error)[:100],
            )
        ) from None
    return entries


def _whole_number(digits: str) -> int | float:
    """A whole number in the file. No field of an entry is one (each is refused, naming its
    entry, as not text), so one past Python's limit for an int (4,300 digits, a ValueError)
    is read as a float, infinite, instead."""
    return int(digits) if len(digits) <= MAX_DIGITS else float(digits)


def _parse_json(text: str, check: Check, most: int) -> list[tuple[str, Pronunciation]]:
    try:
        document = json.loads(text, parse_int=_whole_number)
    except json.JSONDecodeError as error:
        raise UserError(
            tr(
                "Line {line}, column {column}: this is not valid JSON ({problem}).",
                line=error.lineno,
                column=error.colno,
                problem=error.msg[:100],
            )
        ) from None
    except RecursionError:  # nested too deep: no dictionary looks like that
        raise UserError(tr("This is not a dictionary file.")) from None
    listed = document.get("entries") if isinstance(document, dict) else document
    if not isinstance(listed, list):
        raise UserError(
            tr(
                "This is not a dictionary file: expected a list of entries, or an object with "
                "“entries”, as /dictionary export writes."
            )
        )
    if len(listed) > most:
        raise UserError(tr("The file has more than {most} entries.", most=most))
    entries: list[tuple[str, Pronunciation]] = []
    for number, item in enumerate(listed, start=1):
        where = tr("Entry {number}", number=number)
        if not isinstance(item, dict) or not {"word", "spoken"} <= item.keys():
            raise UserError(
                tr(
                    "{where}: expected an object with “word”, “spoken” and, if it applies to one "
                    "language only, “language”.",
                    where=where,
                )
            )
        unknown = sorted(str(key) for key in item.keys() - ENTRY_KEYS)
        if unknown:
            raise UserError(
                tr(
                    "{where}: unknown field “{name}” (expected word, spoken, language).",
                    where=where,
                    name=unknown[0][:30],
                )
            )
        entry = _checked(where, check, item["word"], item["spoken"], item.get("language"))
        entries.append((where, entry))
    return entries
