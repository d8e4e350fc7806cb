"""Pauses in the words (issue 50): "[pause]", "[pause 2s]", "..." before more words and a blank
line become `Pause` parts of the line where pauses are on (/say and /tts always, chat where the
server turns `pauses` on), bounded in length and in number; elsewhere the text reads as before."""

from __future__ import annotations

import time

import pytest

from bot.text.words import (
    MAX_PAUSE_S,
    MAX_PAUSES,
    MessageFacts,
    Names,
    Pause,
    ReadOptions,
    Sound,
    announce,
    sound_keys,
    sound_parts,
    without_sounds,
)

ON = ReadOptions(pauses=True, max_length=2_000)


def parts(text: str, options: ReadOptions = ON) -> list[object]:
    return list(sound_parts(announce(MessageFacts(content=text), Names(), options, say_name=False)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello [pause 2s] world", ["Hello", Pause(2.0), "world"]),
        ("Hello [pause] world", ["Hello", Pause(1.0), "world"]),
        ("Hello [Pause 500ms] world", ["Hello", Pause(0.5), "world"]),
        ("Hello [pause 1,5 s] world", ["Hello", Pause(1.5), "world"]),
        ("Hello [pause 2.25s] world", ["Hello", Pause(2.25), "world"]),
        ("Hello [pause 10s] world", ["Hello", Pause(MAX_PAUSE_S), "world"]),
        ("wait... what", ["wait...", Pause(0.5), "what"]),
        ("wait… what", ["wait…", Pause(0.5), "what"]),
        ("first line\n\nsecond line", ["first line.", Pause(0.7), "second line"]),
        ("first line\n\n\n- a list", ["first line.", Pause(0.7), "a list"]),
        ("the end...", ["the end..."]),  # nothing after it: no pause
        (
            "I have 3 cats [pause 2s] and 2 dogs",
            ["I have three cats", Pause(2.0), "and two dogs"],
        ),  # a pause's digits are no number
        ("[pause] first", [Pause(1.0), "first"]),
    ],
)
def test_pauses_are_parts_of_the_line(text: str, expected: list[object]) -> None:
    assert parts(text) == expected


def test_chat_keeps_its_dots_and_blank_lines_as_before_without_pauses() -> None:
    off = ReadOptions(max_length=2_000)
    assert parts("wait... what", off) == ["wait... what"]
    assert parts("first line\n\nsecond line", off) == ["first line. second line"]
    assert parts("Hello [pause 2s] world", off) == ["Hello [pause two seconds] world"]


def test_pauses_are_bounded_in_number_and_leave_sounds_alone() -> None:
    line = announce(MessageFacts(content="a [pause] " * 50), Names(), ON, say_name=False)
    found = sound_parts(line)
    assert sum(isinstance(p, Pause) for p in found) == MAX_PAUSES
    assert without_sounds(line).split() == ["a"] * 50
    assert sound_keys(line) == []  # no dictionary sound to fetch
    marked = ReadOptions(pauses=True, sounds=frozenset({"boom"}))
    line = announce(MessageFacts(content="[pause] a [pause] boom"), Names(), marked, say_name=False)
    assert sound_keys(line) == ["boom"]
    assert sound_parts(line, {"boom"}) == [Pause(1.0), "a", Pause(1.0), Sound("boom")]


def test_a_pause_cut_by_the_length_limit_says_nothing() -> None:
    short = ReadOptions(pauses=True, max_length=20)
    line = announce(
        MessageFacts(content="abcdefghijklmnop [pause 2s] more words here"),
        Names(),
        short,
        say_name=False,
    )
    for part in sound_parts(line):
        assert isinstance(part, Pause) or "pause" not in part


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        announce(MessageFacts(content=text), Names(), ON, say_name=False)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.timing  # a ratio of times: the load of other workers must not decide it
# (an unclosed "[pause " run is left to the masked links' bound: issue 48)
@pytest.mark.parametrize("unit", [".", " ", " \n", "\n \n", "[pause] ", "[pause 2s] ", "... a"])
def test_finding_pauses_stays_linear_in_the_length(unit: str) -> None:
    """Four times the text takes about four times as long (a ratio within one run, not a
    time limit): a run of dots or spaces is not searched again from each of its characters."""
    short, long = (unit * 5000)[:4000], (unit * 20000)[:16000]
    _seconds(short)
    ratio = _seconds(long) / _seconds(short)
    assert ratio < 9, f"{ratio:.1f}x the time for 4x the text"
