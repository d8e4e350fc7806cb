"""Words with a sound (/dict sound) in the words: marked where the word stands whole, any case,
and split into the speech and the sounds a message plays (at most MAX_SOUND_PLAYS)."""

from __future__ import annotations

import pytest

from bot.text.words import (
    MAX_SOUND_PLAYS,
    MessageFacts,
    Names,
    ReadOptions,
    Sound,
    announce,
    has_sounds,
    plain_name,
    sound_keys,
    sound_parts,
    speakable,
    without_sounds,
)

BOOM = ReadOptions(sounds=frozenset({"Boom"}), dictionary={"lol": "laughing"})


def parts(
    text: str, options: ReadOptions = BOOM, playable: frozenset[str] = frozenset({"boom"})
) -> list[str | Sound]:
    return sound_parts(speakable(text, Names(), options), playable)


WHOLE_WORDS = {
    "alone": ("boom", [Sound("boom")]),
    "any case, between words": ("well BOOM then", ["well", Sound("boom"), "then"]),
    "beside punctuation": ("boom! yes", [Sound("boom"), "! yes"]),
    "not inside a longer word": ("boomer booms kaboom", ["boomer booms kaboom"]),
    "with the dictionary around it": ("lol boom lol", ["laughing", Sound("boom"), "laughing"]),
}


@pytest.mark.parametrize(("text", "expected"), WHOLE_WORDS.values(), ids=WHOLE_WORDS.keys())
def test_a_sound_plays_where_its_word_stands_whole(text: str, expected: list[object]) -> None:
    assert parts(text) == expected


def test_at_most_three_sounds_a_message_then_the_word_is_spoken() -> None:
    assert MAX_SOUND_PLAYS == 3
    found = parts("boom a boom b boom c boom d boom")
    assert found == [Sound("boom"), "a", Sound("boom"), "b", Sound("boom"), "c boom d boom"]
    assert sound_keys(speakable("boom boom boom boom", Names(), BOOM)) == ["boom"] * 3


def test_a_word_whose_sound_is_not_there_is_said_as_the_dictionary_says() -> None:
    options = ReadOptions(sounds=frozenset({"gg"}), dictionary={"gg": "good game"})
    assert parts("gg all", options, playable=frozenset()) == ["good game all"]
    assert parts("gg all", options, playable=frozenset({"gg"})) == [Sound("gg"), "all"]


def test_without_sounds_the_words_are_plain_and_unmarked() -> None:
    marked = speakable("boom it is", Names(), BOOM)
    assert has_sounds(marked) and not has_sounds(without_sounds(marked))
    assert without_sounds(marked) == "boom it is"
    assert speakable("boom it is", Names(), ReadOptions()) == "boom it is"  # (no sounds asked)


def test_typed_text_cannot_forge_a_mark() -> None:
    forged = "\uf8fdboom\uf8feboom\uf8ff hello"  # private-use characters are dropped as typed
    assert not has_sounds(speakable(forged, Names(), ReadOptions()))
    assert parts(forged, ReadOptions()) == ["boomboom hello"]


def test_a_name_is_never_played_and_a_cut_mark_is_dropped() -> None:
    assert plain_name("Boom", BOOM) == "Boom"
    line = announce(MessageFacts(content="boom", author="Boom"), Names(), BOOM, say_name=True)
    assert sound_parts(line, {"boom"}) == ["Boom said", Sound("boom")]
    cut = line[: line.index("\uf8fe")]  # a length cut inside the marks
    assert sound_parts(cut, {"boom"}) == ["Boom said boom"]
