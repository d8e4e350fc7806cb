"""Polls in words (issue 36, item 3): a message's poll ("Alice asks: QUESTION? Options: a, b,
or c") and a poll's end ("The poll “QUESTION” ended: X won with N votes"), under the message's
reading rules, bounded as Discord bounds a poll, in each language's own words."""

from __future__ import annotations

import pytest

from bot.text.phrasebook import PHRASEBOOKS as BOOKS
from bot.text.words import (
    MAX_POLL_ANSWER,
    MAX_POLL_ANSWERS,
    MAX_POLL_QUESTION,
    MessageFacts,
    Names,
    ReadOptions,
    announce_both,
    poll_answer_text,
    poll_facts,
    poll_outcome,
    poll_result_line,
)

FRENCH = ReadOptions(language="french")


def asked(question: str, *answers: str, **facts: object) -> MessageFacts:
    return MessageFacts(author="Alice", poll=poll_facts(question, answers), **facts)  # type: ignore[arg-type]


def ended(question: str, total: int, winner: str | None = None, votes: int = 0) -> dict:
    fields = {
        "poll_question_text": question,
        "total_votes": str(total),
        "victor_answer_votes": str(votes),
    }
    if winner is not None:
        fields |= {"victor_answer_id": "1", "victor_answer_text": winner}
    return fields


# ---- a poll ------------------------------------------------------------------------------------
def test_a_poll_is_read_with_its_question_and_options() -> None:
    named, unnamed = announce_both(
        asked("Pizza or pasta?", "pizza", "pasta", "tacos"), Names(), ReadOptions()
    )
    assert named == "Alice asks: Pizza or pasta? Options: pizza, pasta, or tacos"
    assert unnamed == "a poll: Pizza or pasta? Options: pizza, pasta, or tacos"


def test_a_poll_in_french() -> None:
    named, unnamed = announce_both(
        asked("Pizza ou pâtes ?", "pizza", "pâtes", "tacos"), Names(), FRENCH
    )
    assert named == "Alice demande : Pizza ou pâtes ? Choix : pizza, pâtes ou tacos"
    assert unnamed == "un sondage : Pizza ou pâtes ? Choix : pizza, pâtes ou tacos"


def test_two_options_one_option_and_a_question_without_its_mark() -> None:
    two = announce_both(asked("Tea", "yes", "no"), Names(), ReadOptions())[0]
    assert two == "Alice asks: Tea? Options: yes or no"
    one = announce_both(asked("Tea?", "yes"), Names(), FRENCH)[0]
    assert one == "Alice demande : Tea? Choix : yes"
    assert announce_both(asked("Prêts ?", "oui", "non"), Names(), FRENCH)[0] == (
        "Alice demande : Prêts ? Choix : oui ou non"
    )


def test_the_message_text_follows_the_poll_and_its_author_is_named_once() -> None:
    named = announce_both(asked("Tea?", "yes", "no", content="vote!"), Names(), ReadOptions())[0]
    assert named == "Alice asks: Tea? Options: yes or no. vote!"


def test_a_poll_is_read_under_the_reading_rules() -> None:
    """The dictionary, emoji (named or skipped), mentions and numbers, as in a message (a
    mention or an emoji is set apart by spaces there too: "Bob ?")."""
    facts = asked("Best day 🎉 for <@1>?", "Sat 🍕", "the 2nd", "🌮")
    rules = ReadOptions(dictionary={"Sat": "Saturday"})
    assert announce_both(facts, Names(users={1: "Bob"}), rules)[0] == (
        "Alice asks: Best day party popper for Bob ? Options: Saturday pizza, the second, or taco"
    )
    skipped = announce_both(facts, Names(), ReadOptions(skip_emoji=True))[0]
    assert skipped == "Alice asks: Best day for someone ? Options: Sat or the second"


def test_a_poll_is_cut_to_the_length_limit() -> None:
    named = announce_both(
        asked("Which?", *(f"option {n}" for n in "abcdefghij")), Names(), ReadOptions(max_length=60)
    )[0]
    assert len(named) <= 60 and named.endswith("and so on")
    assert named.startswith("Alice asks: Which? Options: option a")


def test_a_poll_is_bounded_as_discord_bounds_it() -> None:
    """300 characters of question, 10 answers of 55 each, whatever the payload held."""
    poll = poll_facts("why " * 1_000, [("x" * 500) for _ in range(100)])
    assert len(poll.question) == MAX_POLL_QUESTION
    assert len(poll.answers) == MAX_POLL_ANSWERS
    assert {len(a) for a in poll.answers} == {MAX_POLL_ANSWER}
    named = announce_both(
        MessageFacts(author="Alice", poll=poll), Names(), ReadOptions(max_length=100_000)
    )[0]
    assert named.count("why") == MAX_POLL_QUESTION // len("why ")


def test_an_answer_with_only_an_emoji_says_the_emoji() -> None:
    assert poll_answer_text("Pizza", "🍕", None) == "Pizza"
    assert poll_answer_text("", "🍕", None) == "🍕"
    assert poll_answer_text(None, "blob", 123, animated=True) == "<a:blob:123>"
    assert poll_answer_text(None, None, None) == ""
    facts = asked("Lunch?", poll_answer_text("", "party", 1), poll_answer_text("", "🍕", None))
    assert announce_both(facts, Names(), ReadOptions())[0] == (
        "Alice asks: Lunch? Options: emoji party or pizza"
    )


def test_a_poll_with_nothing_to_read_leaves_the_message_as_it_is() -> None:
    facts = asked("🎉", "🎉", content="hello")
    assert announce_both(facts, Names(), ReadOptions(skip_emoji=True))[0] == "Alice said hello"


# ---- its end -----------------------------------------------------------------------------------
def test_a_winner_in_english_and_french() -> None:
    outcome = poll_outcome(ended("Pizza or pasta?", 5, "pizza", 3))
    assert poll_result_line(outcome, Names(), ReadOptions()) == (
        "The poll “Pizza or pasta?” ended: pizza won with three votes"
    )
    assert poll_result_line(outcome, Names(), FRENCH) == (
        "Le sondage « Pizza or pasta? » est terminé : pizza l'emporte avec trois voix"
    )
    one = poll_outcome(ended("Tea?", 1, "yes", 1))
    assert poll_result_line(one, Names(), ReadOptions()).endswith("yes won with one vote")
    assert poll_result_line(one, Names(), FRENCH).endswith("yes l'emporte avec une voix")
    twenty_one = poll_outcome(ended("Tea?", 30, "oui", 21))
    assert poll_result_line(twenty_one, Names(), FRENCH).endswith("avec vingt et une voix")
    digits = ReadOptions(numbers=False)
    assert poll_result_line(outcome, Names(), digits).endswith("pizza won with 3 votes")


def test_a_tie_and_no_votes() -> None:
    tie = poll_outcome(ended("Tea?", 4, votes=2))  # Discord names no victor in a tie
    assert tie.winner is None
    assert poll_result_line(tie, Names(), ReadOptions()) == "The poll “Tea?” ended in a tie"
    assert poll_result_line(tie, Names(), FRENCH) == (
        "Le sondage « Tea? » s'est terminé sur une égalité"
    )
    none = poll_outcome(ended("Tea?", 0))
    assert poll_result_line(none, Names(), ReadOptions()) == ("The poll “Tea?” ended with no votes")
    assert poll_result_line(none, Names(), FRENCH) == (
        "Le sondage « Tea? » s'est terminé sans aucun vote"
    )


def test_a_result_is_read_under_the_rules_and_bounded() -> None:
    fields = ended("Best 🎉?", 2, "Sat", 2) | {"victor_answer_votes": "9" * 40}
    outcome = poll_outcome(fields)
    assert outcome.winner_votes == 0  # not a count: past any vote a poll can have
    line = poll_result_line(
        poll_outcome(ended("Best 🎉?", 2, "Sat", 2)),
        Names(),
        ReadOptions(dictionary={"Sat": "Saturday"}),
    )
    assert line == "The poll “Best party popper ?” ended: Saturday won with two votes"
    huge = poll_outcome(ended("why " * 1_000, 1, "y" * 1_000, 1))
    assert len(huge.question) == MAX_POLL_QUESTION and len(huge.winner or "") == MAX_POLL_ANSWER
    assert len(poll_result_line(huge, Names(), ReadOptions(max_length=80))) <= 80


def test_a_winner_with_only_an_emoji() -> None:
    fields = ended("Lunch?", 3, "", 3) | {"victor_answer_emoji_name": "🍕"}
    line = poll_result_line(poll_outcome(fields), Names(), ReadOptions())
    assert line == "The poll “Lunch?” ended: pizza won with three votes"
    custom = ended("Lunch?", 3, "", 3) | {
        "victor_answer_emoji_id": "42",
        "victor_answer_emoji_name": "tacos",
        "victor_answer_emoji_animated": "false",
    }
    assert poll_result_line(poll_outcome(custom), Names(), ReadOptions()).endswith(
        "emoji tacos won with three votes"
    )


def test_a_result_without_a_question_to_read_is_not_read() -> None:
    assert (
        poll_result_line(
            poll_outcome(ended("🎉", 1, "x", 1)), Names(), ReadOptions(skip_emoji=True)
        )
        == ""
    )


# ---- every language ----------------------------------------------------------------------------
@pytest.mark.parametrize("language", sorted(BOOKS))
def test_each_language_says_a_poll_and_its_end(language: str) -> None:
    book, options = BOOKS[language], ReadOptions(language=language)
    named, unnamed = announce_both(asked("Q?", "a", "b", "c"), Names(), options)
    assert named.startswith(book.asks.format(name="Alice", question="Q?"))
    assert unnamed.startswith(book.poll.format(question="Q?"))
    listed = f"a, b{book.or_last}c"
    assert named.endswith(book.options.format(answers=listed))
    won = poll_result_line(poll_outcome(ended("Q?", 3, "a", 2)), Names(), options)
    assert won.startswith(book.poll_won.split("{answer}")[0].format(question="Q?"))
    tie = poll_result_line(poll_outcome(ended("Q?", 2, votes=1)), Names(), options)
    assert tie == book.poll_tie.format(question="Q?")
    none = poll_result_line(poll_outcome(ended("Q?", 0)), Names(), options)
    assert none == book.poll_no_votes.format(question="Q?")
    assert "{" not in named + unnamed + won + tie + none and not any(c.isdigit() for c in won)
