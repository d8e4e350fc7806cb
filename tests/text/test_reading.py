"""The kinds of message an independent review found read wrong (issue: reading that sounds
right), each with cases of our own: the fix is at the root, so every case of a kind passes."""

from __future__ import annotations

import pytest

from bot.text.words import (
    MAX_SPOKEN_NAME,
    MessageFacts,
    Names,
    ReadOptions,
    announce,
    lead_phrase,
    plain_name,
    presence_phrase,
    speakable,
)

NAMES = Names(users={1: "🔥Blaze🔥"}, channels={7: "📢┃announcements"}, roles={8: "⭐ VIP ⭐"})
DEFAULT = ReadOptions()
# The rules below hold where digits are left as written (numbers off): the run cutter never
# touches them, and the symbols between them are said. With numbers read (the default), the
# same texts are in tests/text/test_numbers.py.
DIGITS = ReadOptions(numbers=False)

NUMBERS_NEVER_CHANGE = [
    ("1000000 downloads", "1000000 downloads"),
    ("call 5555555", "call 5555555"),
    ("0.00000001 btc", "0.00000001 btc"),
    ("99999!!!!!!!", "99999!!!!"),  # the run of marks is still cut
    ("nooooooooo 2222222", "noooo 2222222"),
]
SYMBOLS_ARE_SAID = [
    ("5*3=15", "5 times 3 equals 15"),
    ("2 * 4 = 8", "2 times 4 equals 8"),
    ("i <3 you", "i heart you"),
    ("<3", "heart"),
    ("x > 5", "x greater than 5"),
    ("if n<10 then", "if n less than 10 then"),
    ("10 >= 3", "10 greater than or equal to 3"),
    ("a > b", "a b"),  # no number: the symbol is dropped, as before
]
NEW_EMOJI_ARE_NAMED = [
    ("🩷", "pink heart"),
    ("a 🪿 honks", "a goose honks"),
    ("🏴󠁧󠁢󠁳󠁣󠁴󠁿 and 🏴󠁧󠁢󠁷󠁬󠁳󠁿", "Scotland and Wales"),
    ("🏴󠁧󠁢󠁥󠁮󠁧󠁿 won", "England won"),
    ("👩‍💻 at work", "woman technologist at work"),
]
EMOJI_RUNS_ARE_CUT = [  # (said cut: "and so on", issue 61)
    ("❤️" * 8, " ".join(["red heart"] * 4) + " and so on"),
    ("👍🏽" * 6, " ".join(["thumbs up medium skin tone"] * 4) + " and so on"),
    ("😀" * 9, " ".join(["grinning face"] * 4) + " and so on"),
    ("❤️ ❤️ ❤️ ❤️ ❤️ ❤️", " ".join(["red heart"] * 4) + " and so on"),  # spaced out, one run
    ("❤️❤️🩷❤️", "red heart red heart pink heart red heart"),  # broken runs are kept
]
MARKERS_KEEP_WORDS_WHOLE = [
    ("**S**tar Wars", "Star Wars"),
    ("un*believ*able", "unbelievable"),
    ("***very*** good", "very good"),
    ("~~strike~~through", "strikethrough"),
    ("\\_\\_init\\_\\_", "init"),
    ("snake\\_case", "snake case"),
    ("\\*not bold\\*", "not bold"),
    ("_italic_ and __underline__", "italic and underline"),
]


@pytest.mark.parametrize(
    ("text", "spoken"),
    NUMBERS_NEVER_CHANGE
    + SYMBOLS_ARE_SAID
    + NEW_EMOJI_ARE_NAMED
    + EMOJI_RUNS_ARE_CUT
    + MARKERS_KEEP_WORDS_WHOLE,
)
def test_reading(text: str, spoken: str) -> None:
    assert speakable(text, NAMES, DIGITS) == spoken


DICTIONARY = ReadOptions(
    dictionary={"my_var": "my variable", "🔥": "lit", "Blaze": "Blaise", "NY": "New York"}
)


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("set my_var now", "set my variable now"),
        ("**my_var**", "my variable"),
        ("that is 🔥", "that is lit"),
        ("NY, NY!", "New York, New York!"),
        ("hi <@1>", "hi Blaise"),  # a mentioned name goes through it too
    ],
)
def test_the_dictionary_matches_what_was_written(text: str, spoken: str) -> None:
    assert speakable(text, NAMES, DICTIONARY) == spoken


def test_the_dictionary_applies_to_the_announced_name() -> None:
    facts = MessageFacts(content="hello", author="Blaze")
    assert announce(facts, NAMES, DICTIONARY, say_name=True) == "Blaise said hello"


@pytest.mark.parametrize(
    ("name", "spoken"),
    [
        ("🔥Blaze🔥", "Blaze"),
        ("📢┃announcements", "announcements"),
        ("𝓙𝓪𝓴𝓮", "Jake"),
        ("ｈｅｌｌｏ", "hello"),
        ("★彡 Mia 彡★", "彡 Mia 彡"),  # 彡 is a letter (CJK); only the symbols go
        ("ⓐⓛⓔⓧ", "alex"),
        ("🎮", "video game"),  # nothing but decoration: then its name is read
        ("✨✨", "sparkles sparkles"),
        ("Zoë ✨", "Zoë"),
    ],
)
def test_decorated_names_are_read_plainly(name: str, spoken: str) -> None:
    assert plain_name(name) == spoken


def test_decorated_mentions_and_fancy_text_in_messages() -> None:
    assert speakable("see <#7> and <@&8>", NAMES, DEFAULT) == "see announcements and VIP"
    assert speakable("𝐁𝐨𝐥𝐝 ｔｅｘｔ", NAMES, DEFAULT) == "Bold text"


@pytest.mark.parametrize("content", ["...", "?!", "!!!!!!", "- - -", "***", "`.`", "> ..."])
def test_punctuation_only_messages_are_not_announced(content: str) -> None:
    facts = MessageFacts(content=content, author="Alice")
    assert announce(facts, NAMES, DEFAULT, say_name=True) == ""


def test_punctuation_only_with_an_attachment_still_says_what_was_sent() -> None:
    facts = MessageFacts(content="...", author="Alice", attachment_types=("image/png",))
    assert announce(facts, NAMES, DEFAULT, say_name=True) == "Alice sent an image"


@pytest.mark.parametrize(
    ("name", "most"),
    [
        ("🔥" * 30, MAX_SPOKEN_NAME),
        ("Alexandria " * 10, MAX_SPOKEN_NAME),
        ("x" * 200, MAX_SPOKEN_NAME),
        ("Bob", 3),
    ],
)
def test_a_spoken_name_is_cut_to_a_few_dozen_characters(name: str, most: int) -> None:
    """A nickname of 30 emoji was read as a 703-character join notice, each minute."""
    options = ReadOptions(max_length=100)
    spoken = plain_name(name, options)
    assert 0 < len(spoken) <= most
    notice = presence_phrase(name, options, joined=True)
    assert len(notice) <= MAX_SPOKEN_NAME + 20
    said = lead_phrase(MessageFacts(content="hi", author=name), options, say_name=True)
    assert len(said) <= MAX_SPOKEN_NAME + 20
