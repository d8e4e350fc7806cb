"""A Discord message to the words a person would say reading it aloud. Pure functions.

`speakable()` turns message text into plain words: mentions become names, emoji their names,
links "a link to HOST", code blocks "a code block", spoilers "a spoiler"; numbers, dates, times,
money and units become words in the reading language (bot/text/numbers.py); markdown goes,
long runs of one character are cut, the server's pronunciation dictionary applies last.
`announce()` adds who said it, replies, forwards, attachments and stickers, and keeps the
whole under the length limit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import ipaddress
import re
import unicodedata
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlsplit

import emoji

from bot.text.numbers import cardinal, read_numbers, read_timestamp
from bot.text.phrasebook import ENGLISH, Attachment, Phrasebook, phrasebook
from bot.text.roman import read_roman


@dataclass(frozen=True)
class Names:
    """How to call the things a message mentions (ids to display names)."""

    users: Mapping[int, str] = field(default_factory=dict)
    roles: Mapping[int, str] = field(default_factory=dict)
    channels: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReadOptions:
    skip_emoji: bool = False
    repeated_characters: int = 4  # 0: keep runs as they are
    max_length: int = 300
    dictionary: Mapping[str, str] = field(default_factory=dict)  # word -> how to say it
    language: str = "english"  # a pocket-tts language: what the bot adds is said in it
    numbers: bool = True  # numbers, dates, times, money and units as words in `language`
    # words with a sound (/dict sound), as written: marked in the words (`sound_parts`)
    sounds: frozenset[str] = frozenset()
    timezone: str = "UTC"  # Discord's timestamps are read in this zone (an IANA name)
    # "...", a blank line and [pause] / [pause 2s] make silences (`Pause` parts): /say and
    # /tts always, chat where the server turns `pauses` on
    pauses: bool = False

    @property
    def phrases(self) -> Phrasebook:
        return phrasebook(self.language)


# Discord's own limits on a poll: what is read of one, bounded before anything is made of it
MAX_POLL_QUESTION = 300  # characters of the question
MAX_POLL_ANSWERS = 10
MAX_POLL_ANSWER = 55  # characters of each answer
MAX_VOTES_DIGITS = 9  # a poll result's counts come as text: longer is not a count


@dataclass(frozen=True)
class PollFacts:
    """A message's poll: its question and its answers' texts (an answer with only an emoji
    has the emoji as its text, `<:name:id>` for a custom one). Make one with `poll_facts`."""

    question: str
    answers: tuple[str, ...] = ()


def poll_facts(question: str, answers: list[str] | tuple[str, ...]) -> PollFacts:
    """A poll bounded as Discord bounds it (300 characters, 10 answers of 55), so that a
    payload past Discord's limits costs no more than one within them."""
    return PollFacts(
        question[:MAX_POLL_QUESTION],
        tuple(answer[:MAX_POLL_ANSWER] for answer in answers[:MAX_POLL_ANSWERS]),
    )


@dataclass(frozen=True)
class PollOutcome:
    """How a poll ended, from the fields of Discord's poll result message. `winner` is None
    when there is none: a tie (Discord then names no `victor_answer_id`) or no votes."""

    question: str
    total_votes: int
    winner: str | None = None
    winner_votes: int = 0


def _count(value: str | None) -> int:
    value = (value or "").strip()
    return int(value) if value.isdigit() and len(value) <= MAX_VOTES_DIGITS else 0


def poll_outcome(fields: Mapping[str, str]) -> PollOutcome:
    """A poll result embed's fields (name -> value, as Discord documents them:
    `poll_question_text`, `victor_answer_votes`, `total_votes`, and for a winner
    `victor_answer_id`, `victor_answer_text` and `victor_answer_emoji_id/_name/_animated`),
    each bounded before it is read."""
    question = (fields.get("poll_question_text") or "")[:MAX_POLL_QUESTION]
    total = _count(fields.get("total_votes"))
    winner = None
    if fields.get("victor_answer_id") and total:
        winner = (fields.get("victor_answer_text") or "")[:MAX_POLL_ANSWER]
        if not winner.strip():
            winner = _emoji_text(
                fields.get("victor_answer_emoji_name"),
                fields.get("victor_answer_emoji_id"),
                fields.get("victor_answer_emoji_animated") == "true",
            )
    return PollOutcome(question, total, winner or None, _count(fields.get("victor_answer_votes")))


def _emoji_text(name: str | None, emoji_id: str | int | None, animated: bool = False) -> str:
    """An emoji as written in a message: a custom one as `<:name:id>`, so that it is read
    (or skipped) as in a message; '' for none."""
    name = (name or "")[:64]
    if not name:
        return ""
    if emoji_id:
        return f"<{'a' if animated else ''}:{name}:{str(emoji_id)[:20]}>"
    return name


def poll_answer_text(
    text: str | None, emoji_name: str | None, emoji_id: str | int | None, animated: bool = False
) -> str:
    """What an answer says: its text, or its emoji when it has no text."""
    text = (text or "")[:MAX_POLL_ANSWER]
    return text if text.strip() else _emoji_text(emoji_name, emoji_id, animated)


@dataclass(frozen=True)
class MessageFacts:
    """What a message holds besides its text."""

    content: str = ""
    author: str = "someone"
    attachment_types: tuple[str, ...] = ()  # content types ("image/png"), "" when unknown
    stickers: int = 0
    reply_to: str | None = None  # the replied-to author's name
    forwarded: bool = False
    # posted by a webhook under a name a member goes by: said as a webhook's ("a webhook named
    # Alice said"); the same for the replied-to message's author
    author_webhook: bool = False
    reply_to_webhook: bool = False
    title: str = ""  # a forum post's title, read before its first message ('' elsewhere)
    poll: PollFacts | None = None  # the message's poll, read before its text


# ---- patterns ---------------------------------------------------------------------------------
_CODE_BLOCK = re.compile(r"```.*?```", re.DOTALL)
_SPOILER = re.compile(r"\|\|(.+?)\|\|", re.DOTALL)
_INLINE_CODE = re.compile(r"`+([^`]*?)`+", re.DOTALL)
# a link's text holds no "[": from each "[" the scan stops at the next one (a line of
# thousands of "[" scanned to its end from each would hold the event loop)
_MASKED_LINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*<?(https?://[^\s)>]*)>?\s*\)")
_URL = re.compile(r"<?(?:https?|ftp|steam|discord)://[^\s<>]*>?", re.IGNORECASE)
_USER = re.compile(r"<@!?(\d{1,20})>")
_ROLE = re.compile(r"<@&(\d{1,20})>")
_CHANNEL = re.compile(r"<#(\d{1,20})>")
_SLASH = re.compile(r"</([^:<>\n]{1,100}):\d{1,20}>")
_TIMESTAMP = re.compile(r"<t:(-?\d{1,20})(?::([tTdDfFR]))?>")
_CUSTOM_EMOJI = re.compile(r"<a?:(\w{1,64}):\d{1,20}>")
_GUILD_NAV = re.compile(r"<id:(customize|browse|guide|linked-roles)(?::\d+)?>")
_EVERYONE = re.compile(r"@(everyone|here)\b")
_LINE_MARKUP = re.compile(r"^[ \t]*(?:>>> ?|> ?|#{1,3}[ \t]+|-#[ \t]+|[-*+][ \t]+|\d+\.[ \t]+)")
_MARKERS = re.compile(r"\*+|~~+|\|\|+|`+|_+|\\(?=[^\w\s])")
# Emphasis also inside words. Its inside never holds its own marker: a marker with no match
# then costs a scan to the next marker, not to the end (`__a __a ...` was quadratic).
_EMPHASIS = re.compile(r"(\*{1,3}|~~)(?=\S)((?:(?!\1).)+?)(?<=\S)\1", re.DOTALL)
_UNDERSCORE_EMPHASIS = re.compile(r"(?<!\w)(_{1,2})(?=\S)((?:(?!\1).)+?)(?<=\S)\1(?!\w)", re.DOTALL)
_ESCAPED_INSIDE = re.compile(r"(?<=\w)(?:\\[*_~`|>#\-])+(?=\w)")
_ESCAPED = re.compile(r"(?:\\[*_~`|>#\-\\])+")
_HEART = re.compile(r"(?:(?<=\s)|^)<3+(?![\d.])", re.MULTILINE)
_SAME_COMPARISON = {"≥": ">=", "≤": "<="}
_COMPARISON = re.compile(  # only beside a number: "x > 5", "5<x"; "a > b" stays a symbol
    r"(?:(?<=[\w)])[ \t]*(>=|<=|≥|≤|≠|>|<)[ \t]*(?=-?\d))"
    r"|(?:(?<=\d)[ \t]*(>=|<=|≥|≤|≠|>|<)[ \t]*(?=[\w(-]))"
)
_TIMES = re.compile(r"(?<=\d)[ \t]*[*×][ \t]*(?=-?\d)")
_EQUALS = re.compile(r"(?<=\d)[ \t]*=[ \t]*(?=-?\d)")
_PLACEHOLDER_BASE, _PLACEHOLDERS = 0xE000, 0x1800  # Unicode's private use area
_PLACEHOLDER = re.compile("[\ue000-\uf7ff]")
# A word with a sound is held as SOUND_OPEN key SOUND_SAID words SOUND_CLOSE: its casefolded
# key, and what is said when the sound is not played. Private-use characters: `_plain` drops
# them from every typed text, so only the dictionary makes these marks.
SOUND_OPEN, SOUND_SAID, SOUND_CLOSE = "\uf8fd", "\uf8fe", "\uf8ff"
_SOUND = re.compile("\uf8fd([^\uf8fd-\uf8ff]*)\uf8fe([^\uf8fd-\uf8ff]*)\uf8ff")
_SOUND_MARK = re.compile("[\uf8fd-\uf8ff]")
MAX_SOUND_PLAYS = 3  # sounds played in one message; later words with a sound are spoken
# A pause is marked as a sound whose key is PAUSE_KEY and its milliseconds: a private-use
# character typed text never holds (`_plain` drops them), so no word's key starts with it.
PAUSE_KEY = "\uf8fcpause:"
MAX_PAUSE_S = 3.0  # the longest pause a writer may ask for ([pause 9s] is 3 s)
MAX_PAUSES = 10  # pauses made in one message; later ones are not
PAUSE_S = {"ellipsis": 0.5, "blank_line": 0.7, "asked": 1.0}  # each kind's length
_ASKED_PAUSE = re.compile(
    r"\[[ \t]*pause(?:[ \t]+([0-9]{1,4}(?:[.,][0-9]{1,3})?)[ \t]*(ms|s)?)?[ \t]*\]", re.IGNORECASE
)
# each starts only where its run starts, so that a long run of dots or spaces is read once
_ELLIPSIS_PAUSE = re.compile(r"(?<!\.)(?:\.{3,}|…)(?=[ \t]*\n|[ \t]+\S)")
_BLANK_LINE = re.compile(r"(?<![ \t])[ \t]*\n(?:[ \t]*\n)+[ \t]*")
_PAUSE_LEFT = re.compile("\uf8fcpause:[0-9]*")  # a pause's key that a length cut left alone
_RAW_MARKUP = re.compile(r"[<>*~`|]")  # what could still look like syntax after all else
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200a\u3000]+")
_ZERO_WIDTH = re.compile(r"[\u200b\u200c\u2060\ufeff\u00ad]")  # not ZWJ: emoji need it
_MANY_MARKS = re.compile(
    r"([\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]{2})[\u0300-\u036f\u0483-\u0489\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+"
)
_SENTENCE_END = re.compile(r"[.!?…。！？]$")


MAX_SPOKEN_NAME = 40  # characters of a spoken name ("NAME said", join notices)


def _clean(text: str) -> str:
    text = _ZERO_WIDTH.sub("", text)
    text = "".join(c for c in text if c in "\n\t" or unicodedata.category(c)[0] != "C")
    return _MANY_MARKS.sub(r"\1", text)


def _plain(text: str) -> str:
    """Remove control characters, zero-width marks and zalgo stacks; normalize. Emoji are
    found first, with the `emoji` package's data, and kept whole: ZWJ and tag sequences (flags
    of Scotland or Wales) are made of format characters, and emoji newer than Python's
    Unicode tables (🩷, 🪿) count as unassigned there."""
    text = unicodedata.normalize("NFC", text)
    parts, position = [], 0
    for found in emoji.emoji_list(text):
        parts.append(_clean(text[position : found["match_start"]]))
        parts.append(found["emoji"])
        position = found["match_end"]
    parts.append(_clean(text[position:]))
    return "".join(parts)


def _fold_letters(text: str) -> str:
    """Fancy-font, fullwidth and circled letters and digits (𝓙𝓪𝓴𝓮, ｈｅｌｌｏ, Ⓐ) as the
    plain ones they stand for (their compatibility form, NFKC)."""
    return "".join(_folded(c) if ord(c) >= 0x2100 else c for c in text)


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str:
    plain = unicodedata.normalize("NFKC", char)
    return plain if plain.isascii() and plain.isalnum() else char


def _host_phrase(url: str, book: Phrasebook) -> str:
    """'a link to youtube.com', or 'a link' when the host says nothing useful."""
    try:
        host = (urlsplit(url.strip("<>")).hostname or "").rstrip(".")
    except ValueError:
        return f" {book.link} "
    if host.startswith("www."):
        host = host[4:]
    with contextlib.suppress(UnicodeError):
        host = host.encode("ascii").decode("idna") if "xn--" in host else host
    useful = "." in host and len(host) <= 40 and any(c.isalpha() for c in host)
    try:
        ipaddress.ip_address(host)
        useful = False
    except ValueError:
        pass
    return f" {book.link_to.format(host=host)} " if useful else f" {book.link} "


def _emoji_name(name: str) -> str:
    return name.replace("_", " ").replace(":", "").strip()


def _timestamp(match: re.Match[str], options: ReadOptions, now: datetime) -> str:
    """A Discord timestamp by its style (f when none is given), in the server's zone."""
    said = read_timestamp(
        int(match.group(1)), match.group(2) or "f", options.language, options.timezone, now
    )
    return f" {said if said is not None else options.phrases.a_time} "


def _cut_repeats(text: str, limit: int) -> str:
    """Runs of one letter, mark or symbol cut to `limit`, and of one syllable (a laugh:
    "hahahaha…", "jajaja…", "rsrsrs…") to twice `limit` syllables; numbers never change."""
    if limit <= 0:
        return text
    text = _syllable_runs(2 * limit).sub(lambda m: m.group(1) * 2 * limit, text)
    return re.sub(rf"([^\d\s])\1{{{limit},}}", lambda m: m.group(1) * limit, text)


@functools.lru_cache(maxsize=16)
def _syllable_runs(limit: int) -> re.Pattern[str]:
    """A syllable of two or three letters said more than `limit` times in a row, any case."""
    return re.compile(rf"(?i)([^\W\d_]{{2,3}}?)\1{{{limit},}}")


_CUSTOM_RUN = re.compile(r"(<a?:\w{1,64}:\d{1,20}>)(?:[ \t]*\1)+")


def _emoji_runs(text: str, options: ReadOptions) -> str:
    """A run of one emoji (custom or not) longer than `repeated_characters`: said that many
    times then "and so on", as a reader says it, not read out eight times nor cut short
    without a word."""
    limit = options.repeated_characters
    if limit <= 0 or options.skip_emoji or (text.isascii() and "<" not in text):
        return text
    and_so_on = options.phrases.and_so_on

    def cut(what: str) -> str:
        return f" {' '.join([what] * limit)} {and_so_on} "

    def custom(match: re.Match[str]) -> str:
        n = match.group(0).count(match.group(1))
        return cut(match.group(1)) if n > limit else match.group(0)

    def same(match: re.Match[str]) -> str:
        unit = match.group(1)
        if not emoji.is_emoji(unit):
            return match.group(0)  # "ééééé", "日本日本": not emoji (runs of letters are cut later)
        return cut(unit)  # (the pattern asks for more than `limit` of it)

    text = _CUSTOM_RUN.sub(custom, text)
    return text if text.isascii() else _emoji_run(limit).sub(same, text)


@functools.lru_cache(maxsize=16)
def _emoji_run(limit: int) -> re.Pattern[str]:
    """One emoji (up to 8 code points: ❤️, 👍🏽, 👩‍💻, a flag) more than `limit` times in a
    row, spaces between allowed: found by the regular expression engine in one pass."""
    return re.compile(rf"([^\x00-\x7f][^\s\x00-\x7f]{{0,7}}?)(?:[ \t]*\1){{{limit},}}")


def _emoji_words(text: str, options: ReadOptions) -> str:
    """Emoji as their names (or nothing with `skip_emoji`). A run of one emoji, however many
    code points it has (❤️ is two), is cut to `repeated_characters` like a run of letters."""
    limit = options.repeated_characters
    parts: list[str] = []
    position, previous, run = 0, "", 0
    for found in emoji.emoji_list(text):
        between = text[position : found["match_start"]]
        same = found["emoji"] == previous and not between.strip()
        run = run + 1 if same else 1
        previous, position = found["emoji"], found["match_end"]
        parts.append(between)
        if limit and run > limit:
            continue
        if options.skip_emoji:
            parts.append(" ")
        else:
            name = _emoji_words_in(found["emoji"], options.phrases.emoji_code)
            parts.append(f" {_emoji_name(name)} ")
    parts.append(text[position:])
    return "".join(parts)


@functools.lru_cache(maxsize=4096)
def _emoji_words_in(found: str, code: str) -> str:
    """An emoji's name in the `emoji` package's language `code`, or in English without one."""
    if code != "en":
        name = emoji.demojize(found, language=code, delimiters=("", ""))
        if name != found:
            return name
    return str(emoji.EMOJI_DATA.get(found, {}).get("en", ""))


def _symbols(text: str, book: Phrasebook) -> str:
    """Symbols a person says: a heart, and comparisons beside numbers (found by the digits,
    so before the numbers are read)."""

    def comparison(match: re.Match[str]) -> str:
        symbol = match.group(1) or match.group(2)
        return f" {book.comparisons[_SAME_COMPARISON.get(symbol, symbol)]} "

    text = _HEART.sub(f" {book.heart} ", text)
    return _COMPARISON.sub(comparison, text)


def _products(text: str, book: Phrasebook) -> str:
    """ "5*3=15" as "5 times 3 equals 15" where the digits are kept (`numbers` off; read,
    the numbers reader says the whole sum)."""
    text = _TIMES.sub(f" {book.times} ", text)
    return _EQUALS.sub(f" {book.equals} ", text)


def _unmark(text: str) -> str:
    """Markdown emphasis goes and leaves its words whole ("**S**tar Wars" is "Star Wars");
    then stray markers become spaces."""
    for _ in range(3):  # nested: ***bold italic***, **_both_**
        text = _EMPHASIS.sub(r"\2", text)
        text = _UNDERSCORE_EMPHASIS.sub(r"\2", text)
    return _MARKERS.sub(" ", text)


class _Protected:
    """Text that later steps must not touch (the dictionary's output), held as private-use
    placeholders and put back at the end."""

    def __init__(self) -> None:
        self.values: list[str] = []

    def hold(self, value: str) -> str:
        if len(self.values) >= _PLACEHOLDERS:
            return value
        self.values.append(value)
        return chr(_PLACEHOLDER_BASE + len(self.values) - 1)

    def restore(self, text: str) -> str:
        if not self.values:
            return text
        return _PLACEHOLDER.sub(lambda m: self.values[ord(m.group(0)) - _PLACEHOLDER_BASE], text)


def _apply_dictionary(
    text: str,
    dictionary: Mapping[str, str],
    protected: _Protected | None = None,
    numbers_in: str | None = None,
    sounds: frozenset[str] = frozenset(),
) -> str:
    """Whole words (or emoji), any case, longest first: "New York" before "New". Applied to
    the text as written (so `snake_case` and 🔥 keys match), its output protected from the
    later steps, so it is, in effect, applied last; numbers in it are read in the language
    `numbers_in` (as the words around it will be), when given. A word with a sound
    (`sounds`) is marked with its key around what is said for it (see `sound_parts`)."""
    if not dictionary and not sounds:
        return text
    words = sorted({*dictionary, *sounds}, key=len, reverse=True)
    lookup = {w.casefold(): spoken for w, spoken in dictionary.items()}
    with_sound = {w.casefold() for w in sounds}
    pattern = re.compile(
        r"(?<!\w)(" + "|".join(re.escape(w) for w in words) + r")(?!\w)", re.IGNORECASE
    )

    def spoken(match: re.Match[str]) -> str:
        key = match.group(1).casefold()
        said = lookup.get(key, match.group(1))
        if numbers_in is not None:
            said = read_numbers(said, numbers_in)
        if key in with_sound and protected is not None:
            said = f"{SOUND_OPEN}{key}{SOUND_SAID}{said}{SOUND_CLOSE}"
        return protected.hold(said) if protected is not None else said

    return pattern.sub(spoken, text)


@dataclass(frozen=True)
class Sound:
    """A word's sound in a line (`sound_parts`): its casefolded word."""

    key: str


@dataclass(frozen=True)
class Pause:
    """A silence in a line (`sound_parts`), of `seconds`."""

    seconds: float


def pause_mark(seconds: float, said: str = "") -> str:
    """A pause of `seconds` (at most MAX_PAUSE_S) in a line, `said` where it is not made."""
    ms = round(min(max(seconds, 0.0), MAX_PAUSE_S) * 1000)
    return f"{SOUND_OPEN}{PAUSE_KEY}{ms}{SOUND_SAID}{said}{SOUND_CLOSE}"


def _asked_pause(match: re.Match[str]) -> float:
    """[pause] (a second), [pause 2s], [pause 1,5 s], [pause 500ms]: at most MAX_PAUSE_S."""
    if match.group(1) is None:
        return PAUSE_S["asked"]
    value = float(match.group(1).replace(",", "."))
    return value / 1000 if (match.group(2) or "s").lower() == "ms" else value


def _pauses(text: str, protected: _Protected) -> str:
    """[pause] and "..." before more words as pauses, held from the later steps (the digits
    of their lengths are no numbers to read)."""
    text = _ASKED_PAUSE.sub(lambda m: f" {protected.hold(pause_mark(_asked_pause(m)))} ", text)
    return _ELLIPSIS_PAUSE.sub(
        lambda m: m.group(0) + protected.hold(pause_mark(PAUSE_S["ellipsis"])), text
    )


def sound_parts(
    text: str, playable: Container[str] = frozenset(), most: int = MAX_SOUND_PLAYS
) -> list[str | Sound | Pause]:
    """A line's words, sounds and pauses, in order: the first `most` words marked with a sound
    that is `playable` become a `Sound`; any other is said as its dictionary says (or as
    written); the first MAX_PAUSES pauses become a `Pause`. A part with nothing to say (a
    comma between two sounds) is left out; a mark that a length cut left alone is dropped."""
    parts: list[str | Sound | Pause] = []
    words: list[str] = []
    played = paused = 0

    def said() -> None:
        line = _PAUSE_LEFT.sub("", "".join(words))
        line = _SPACES.sub(" ", _SOUND_MARK.sub("", line)).strip()
        words.clear()
        if any(c.isalnum() for c in line):
            parts.append(line)

    position = 0
    for match in _SOUND.finditer(text):
        words.append(text[position : match.start()])
        position = match.end()
        key = match.group(1)
        if key.startswith(PAUSE_KEY):
            if paused < MAX_PAUSES:
                said()
                parts.append(Pause(int(key[len(PAUSE_KEY) :] or 0) / 1000))
                paused += 1
            else:
                words.append(match.group(2))
            continue
        if played < most and key in playable:
            said()
            parts.append(Sound(key))
            played += 1
        else:
            words.append(match.group(2))
    words.append(text[position:])
    said()
    return parts


def without_sounds(text: str) -> str:
    """A line with its words' sounds said instead (as the dictionary says, or as written),
    and no pauses."""
    return _SOUND_MARK.sub("", _PAUSE_LEFT.sub("", _SOUND.sub(lambda m: m.group(2), text)))


def sound_keys(text: str, most: int = MAX_SOUND_PLAYS) -> list[str]:
    """The words whose sounds a line would play, in order (the first `most` marked)."""
    keys = (match.group(1) for match in _SOUND.finditer(text))
    return [key for key in keys if not key.startswith(PAUSE_KEY)][:most]


def has_sounds(text: str) -> bool:
    """Whether a line holds a marked part: a dictionary sound or a pause."""
    return _SOUND_MARK.search(text) is not None


def plays_sounds(text: str) -> bool:
    """Whether a line plays a dictionary sound (a pause is silence, not a sound)."""
    return bool(sound_keys(text, most=1))


def _sentences(text: str) -> str:
    """Lines become sentences; spaces collapse."""
    parts: list[str] = []
    for line in text.split("\n"):
        line = _SPACES.sub(" ", line).strip()
        if not line:
            continue
        if parts and not _SENTENCE_END.search(parts[-1]) and not parts[-1].endswith((",", ":")):
            parts[-1] += "."
        parts.append(line)
    return " ".join(parts)


def plain_name(name: str, options: ReadOptions | None = None) -> str:
    """A display name as speakable words: fancy letters folded (NFKC), decorations such as
    emoji and symbols ("🔥Blaze🔥", "📢┃announcements") dropped unless the name is nothing
    else, markup read as in messages, and the server's dictionary applied."""
    options = options or ReadOptions(max_length=100)
    if options.sounds:  # a name is said, never played: it starts lines ("NAME said")
        options = dataclasses.replace(options, sounds=frozenset())
    folded = unicodedata.normalize("NFKC", _plain(name))
    bare = "".join(
        " " if unicodedata.category(c) == "So" or emoji.is_emoji(c) else c
        for c in emoji.replace_emoji(folded, replace=" ")
    )
    if any(c.isalnum() for c in bare):
        folded = bare
    spoken = speakable(folded, Names(), options) or options.phrases.someone
    return _cut_name(spoken)


def _cut_name(spoken: str) -> str:
    """A name cut to MAX_SPOKEN_NAME characters, at a word where it can: 30 emoji in a
    nickname read as words are 700 characters, 47 s of "NAME joined" every minute."""
    if len(spoken) <= MAX_SPOKEN_NAME:
        return spoken
    head = spoken[: MAX_SPOKEN_NAME + 1]
    cut = head.rfind(" ")
    return (head[:cut] if cut > MAX_SPOKEN_NAME // 2 else head[:MAX_SPOKEN_NAME]).rstrip(" ,;:")


def mentioned_users(text: str) -> list[int]:
    """The ids of the users `text` mentions (`<@id>`), each once, in order."""
    return list(dict.fromkeys(int(found) for found in _USER.findall(text)))


def speakable(text: str, names: Names, options: ReadOptions, *, dictionary: bool = True) -> str:
    """Message text as the words to say (no announcement, no length cut)."""
    book = options.phrases
    named = ReadOptions(
        max_length=100, language=options.language, numbers=options.numbers
    )  # mentioned names
    text = _fold_letters(_plain(text))
    text = _CODE_BLOCK.sub(f" {book.code_block}. ", text)
    text = _SPOILER.sub(f" {book.spoiler} ", text)
    text = _INLINE_CODE.sub(lambda m: f" {m.group(1)} ", text)
    text = _MASKED_LINK.sub(lambda m: f" {m.group(1)} ", text)
    text = _URL.sub(lambda m: _host_phrase(m.group(0), book), text)

    said: dict[str, str] = {}  # a name mentioned 1,000 times is made speakable once

    def spoken_name(name: str) -> str:
        if name not in said:
            said[name] = plain_name(name, named)
        return said[name]

    def user(match: re.Match[str]) -> str:
        name = names.users.get(int(match.group(1)))
        return f" {spoken_name(name)} " if name else f" {book.someone} "

    def role(match: re.Match[str]) -> str:
        name = names.roles.get(int(match.group(1)))
        return f" {spoken_name(name)} " if name else f" {book.a_role} "

    def channel(match: re.Match[str]) -> str:
        name = names.channels.get(int(match.group(1)))
        return f" {spoken_name(name)} " if name else f" {book.a_channel} "

    text = _USER.sub(user, text)
    text = _ROLE.sub(role, text)
    text = _CHANNEL.sub(channel, text)
    text = _SLASH.sub(lambda m: f" {book.slash_command.format(name=m.group(1))} ", text)
    now = datetime.now(UTC)
    text = _TIMESTAMP.sub(lambda m: _timestamp(m, options, now), text)
    text = _GUILD_NAV.sub(f" {book.server_page} ", text)
    text = _EVERYONE.sub(lambda m: m.group(1), text)
    protected = _Protected()
    if options.pauses:
        text = _pauses(text, protected)
    if dictionary:
        numbers_in = options.language if options.numbers else None
        text = _apply_dictionary(text, options.dictionary, protected, numbers_in, options.sounds)
    text = _ESCAPED_INSIDE.sub(" ", text)  # snake\_case: two words
    text = _ESCAPED.sub("", text)  # \_\_init\_\_: init, without backslashes
    text = _emoji_runs(text, options)  # before runs are cut and emoji become words
    text = _cut_repeats(text, options.repeated_characters)
    if options.skip_emoji:
        text = _CUSTOM_EMOJI.sub(" ", text)
    else:
        text = _CUSTOM_EMOJI.sub(
            lambda m: f" {book.custom_emoji.format(name=_emoji_name(m.group(1)))} ", text
        )
    text = _emoji_words(text, options)
    text = "\n".join(_LINE_MARKUP.sub("", line) for line in text.split("\n"))  # "1. ", "> "
    text = _symbols(text, book)
    if options.numbers:  # past what is said (max_length), digits are left: it is cut there
        text = read_roman(text, options.language)
        text = read_numbers(text, options.language, limit=options.max_length)
    text = _products(text, book)
    text = _unmark(text)
    text = _RAW_MARKUP.sub(" ", text).replace("\u200d", "")
    text = _cut_repeats(text, options.repeated_characters)
    if options.pauses:  # (the line markup went first: a list after a blank line is no list)
        text = _BLANK_LINE.sub(f"\n{pause_mark(PAUSE_S['blank_line'])} ", text)
    return _sentences(protected.restore(text))


def _attachments_phrase(types: tuple[str, ...], stickers: int, options: ReadOptions) -> str:
    book = options.phrases

    def many(noun: Attachment, n: int) -> str:
        count = cardinal(n, options.language, feminine=noun.feminine) if options.numbers else n
        return noun.many.format(n=count)

    phrases = []
    if types:
        kinds = {t.split("/")[0] if t else "file" for t in types}
        kind = kinds.pop() if len(kinds) == 1 else "file"
        noun = book.attachments.get(kind, book.attachments["file"])
        phrases.append(noun.one if len(types) == 1 else many(noun, len(types)))
    if stickers:
        noun = book.attachments["sticker"]
        phrases.append(noun.one if stickers == 1 else many(noun, stickers))
    return book.and_.join(phrases)


def cut_to_length(text: str, limit: int, and_so_on: str = ENGLISH.and_so_on) -> str:
    """`text` if it fits, else cut at a sentence or word boundary + 'and so on'."""
    if len(text) <= limit:
        return text
    ending = f" {and_so_on}"
    room = max(0, limit - len(ending))
    head = text[:room]
    sentence = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if sentence >= room // 2:
        head = head[: sentence + 1]
    elif text[room] != " " and " " in head:  # mid-word: drop the partial word
        head = head[: head.rfind(" ")]
    head = head.rstrip(" ,;:")
    return (head + ending).strip()[:limit]


def lead_phrase(facts: MessageFacts, options: ReadOptions, *, say_name: bool) -> str:
    """The phrase `announce` starts a line with when the message has words ("Alice said"):
    the same audio every time, so it can be played from a cache ('' when there is none)."""
    author = _author(facts, options)
    book = options.phrases
    if facts.forwarded:
        return (
            book.forwarded_message.format(name=author)
            if say_name
            else (book.forwarded_message_alone)
        )
    return book.said.format(name=author) if say_name else ""


def presence_phrase(name: str, options: ReadOptions, *, joined: bool) -> str:
    """ "Alice joined" / "Alice left": a member came into or went out of the bot's voice
    channel, their name made speakable as in "NAME said"."""
    book = options.phrases
    return (book.joined if joined else book.left).format(name=plain_name(name, options))


def announce(facts: MessageFacts, names: Names, options: ReadOptions, *, say_name: bool) -> str:
    """The whole spoken line for a message ('' when there is nothing to say)."""
    body, poll = _body(facts, names, options), _poll(facts, names, options)
    return _line(body, _title(facts, names, options), poll, facts, options, say_name=say_name)


def announce_both(facts: MessageFacts, names: Names, options: ReadOptions) -> tuple[str, str]:
    """The line with its author's name and without (`announce` both ways, the message's words
    made speakable once): which one is said can then be decided when it is its turn."""
    body, title = _body(facts, names, options), _title(facts, names, options)
    poll = _poll(facts, names, options)
    return (
        _line(body, title, poll, facts, options, say_name=True),
        _line(body, title, poll, facts, options, say_name=False),
    )


def _body(facts: MessageFacts, names: Names, options: ReadOptions) -> str:
    body = speakable(facts.content, names, options)
    return body if any(c.isalnum() for c in body) else ""  # "...", "?!": nothing to read out


MAX_TITLE = 100  # characters of a forum post's title read (Discord's own limit)


def _title(facts: MessageFacts, names: Names, options: ReadOptions) -> str:
    """A forum post's title made speakable ('' when none, or nothing in it to read)."""
    if not facts.title:
        return ""
    title = speakable(facts.title[:MAX_TITLE], names, options).rstrip(" .")
    return title if any(c.isalnum() for c in title) else ""


def _poll_part(text: str, names: Names, options: ReadOptions) -> str:
    """A poll's question or answer as words ('' when nothing in it can be read)."""
    said = speakable(text, names, options)
    return said if any(c.isalnum() for c in said) else ""


def _poll(facts: MessageFacts, names: Names, options: ReadOptions) -> tuple[str, str]:
    """A poll's question and its answers as a list ("a, b, or c"), made speakable under the
    message's rules; ('', '') when it has nothing to read."""
    if facts.poll is None:
        return "", ""
    poll = poll_facts(facts.poll.question, facts.poll.answers)  # (bounded, whoever made it)
    question = _poll_part(poll.question, names, options)
    if question and not _SENTENCE_END.search(question):
        question += "?"
    answers = [a.rstrip(" .") for a in (_poll_part(a, names, options) for a in poll.answers)]
    answers = [a for a in answers if a]
    book = options.phrases
    if len(answers) > 2:
        listed = ", ".join(answers[:-1]) + book.or_last + answers[-1]
    else:
        listed = book.or_.join(answers)
    return question, book.options.format(answers=listed) if listed else ""


def poll_result_line(outcome: PollOutcome, names: Names, options: ReadOptions) -> str:
    """ "The poll “question” ended: X won with N votes" (or in a tie, or with no votes),
    under the message's reading rules and length ('' when the question has nothing to read)."""
    question = _poll_part(outcome.question[:MAX_POLL_QUESTION], names, options).rstrip(" .")
    if not question:
        return ""
    book = options.phrases
    winner = _poll_part(outcome.winner, names, options).rstrip(" .") if outcome.winner else ""
    if not outcome.total_votes:
        line = book.poll_no_votes.format(question=question)
    elif not winner:
        line = book.poll_tie.format(question=question)
    else:
        noun, n = book.votes, outcome.winner_votes
        count = cardinal(n, options.language, feminine=noun.feminine) if options.numbers else n
        votes = noun.one if n == 1 else noun.many.format(n=count)
        line = book.poll_won.format(question=question, answer=winner, votes=votes)
    return cut_to_length(line, options.max_length, book.and_so_on)


def _author(facts: MessageFacts, options: ReadOptions) -> str:
    """The author's name as said: a webhook's under a member's name says it is one."""
    name = plain_name(facts.author, options)
    return options.phrases.webhook_named.format(name=name) if facts.author_webhook else name


def _line(
    body: str,
    title: str,
    poll: tuple[str, str],
    facts: MessageFacts,
    options: ReadOptions,
    *,
    say_name: bool,
) -> str:
    """The line said for a message; a forum post's title first ("Alice posted: TITLE."),
    then its poll ("Alice asks: QUESTION? Options: a, b, or c."), then what the message holds
    (its author named once)."""
    question, answers = poll
    line = _message_line(body, facts, options, say_name=say_name and not (title or question))
    book = options.phrases
    if question:
        asked = (
            book.asks.format(name=_author(facts, options), question=question)
            if say_name and not title
            else book.poll.format(question=question)
        )
        asked = f"{asked} {answers}" if answers else asked
        line = f"{asked.rstrip('.')}. {line}" if line else asked
    if title:
        posted = (
            book.posted.format(name=_author(facts, options), title=title)
            if say_name
            else book.new_post.format(title=title)
        )
        line = f"{posted}. {line}" if line else posted
    return cut_to_length(line, options.max_length, options.phrases.and_so_on) if line else ""


def _message_line(body: str, facts: MessageFacts, options: ReadOptions, *, say_name: bool) -> str:
    author = _author(facts, options)
    book = options.phrases
    extras = _attachments_phrase(facts.attachment_types, facts.stickers, options)
    replying = book.replying_to_webhook if facts.reply_to_webhook else book.replying_to
    reply = replying.format(name=plain_name(facts.reply_to, options)) if facts.reply_to else ""
    if body:
        lead = lead_phrase(facts, options, say_name=say_name)
        line = ", ".join(p for p in (lead, reply, body) if p) if reply else f"{lead} {body}"
        line = line.strip()
        if extras:
            line = book.and_sent.format(line=line.rstrip("."), what=extras)
    elif extras:  # nothing written: always say who sent it
        said = book.forwarded_what if facts.forwarded else book.sent
        line = said.format(name=author, what=extras) + (f", {reply}" if reply else "")
    else:
        return ""
    return line
