"""Polls as the reader meets them (issue 36, item 3): real discord.py Messages parsed from
MESSAGE_CREATE, the poll as the message's `poll` object and its end as Discord's POLL_RESULT
message (type 46, a `poll_result` embed), both shaped by the fake Discord's builders and
checked against Discord's typings. tests/e2e/test_polls.py runs the same end to end."""

from __future__ import annotations

from typing import Any

from bot.services.message_reading import poll_of, poll_result_of
from bot.text.words import MAX_POLL_ANSWER, MAX_POLL_ANSWERS, MAX_POLL_QUESTION
from tests.fakediscord import payload_check
from tests.fakediscord.server import FakeDiscord
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

JSON = dict[str, Any]


def poll_message(server: Server, question: str, answers: list[Any]) -> JSON:
    data = server.message(server["alice"], "")
    data["poll"] = FakeDiscord.poll_json(question, answers)
    return data


def result_message(server: Server, poll: JSON, fields: list[tuple[str, str]]) -> JSON:
    """Discord's POLL_RESULT message for `poll`: by its author, referencing it."""
    data = server.message(server["alice"], "", kind=46)
    data["embeds"] = [
        {
            "type": "poll_result",
            "fields": [{"name": name, "value": value, "inline": False} for name, value in fields],
        }
    ]
    data["message_reference"] = {
        "type": 0,
        "message_id": poll["id"],
        "channel_id": poll["channel_id"],
        "guild_id": server.id,
    }
    return data


WON = [
    ("poll_question_text", "Pizza or pasta?"),
    ("victor_answer_votes", "2"),
    ("total_votes", "3"),
    ("victor_answer_id", "1"),
    ("victor_answer_text", "Pizza"),
]


def as_dispatched(server: Server, data: JSON) -> JSON:
    event = server._gateway_message(data)
    assert payload_check.errors_of(event, "GatewayMessageCreateDispatchData") == []
    return event


async def _in_voice(bot: Bot, server: Server, **settings: object) -> None:
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(**{"read_channel": int(TEXT_ID), **settings})


async def test_a_poll_is_read_and_its_result_in_voice(bot: Bot, server: Server) -> None:
    await _in_voice(bot, server)
    poll = poll_message(server, "Pizza or pasta?", [("Pizza", "🍕"), "pasta"])
    as_dispatched(server, poll)
    assert await bot.autoread.handle(server.message_create(poll)) == "read"
    result = result_message(server, poll, WON)
    as_dispatched(server, result)
    assert await bot.autoread.handle(server.message_create(result)) == "read"
    assert bot.speaker.play() == [
        "Alice asks: Pizza or pasta? Options: Pizza or pasta",
        "The poll “Pizza or pasta?” ended: Pizza won with two votes",
    ]


async def test_a_result_is_never_the_authors_speech(bot: Bot, server: Server) -> None:
    """Its words are Discord's: it does not name its author, nor count as them speaking, so
    their next message is named again ("NAME said" is said once in a row otherwise)."""
    await _in_voice(bot, server)
    poll = poll_message(server, "Tea?", ["yes", "no"])
    assert await bot.autoread.handle(server.message_create(poll)) == "read"
    assert await bot.autoread.handle(server.post("alice", "first")) == "read"
    result = result_message(
        server,
        poll,
        [("poll_question_text", "Tea?"), ("victor_answer_votes", "1"), ("total_votes", "2")],
    )
    assert await bot.autoread.handle(server.message_create(result)) == "read"
    assert await bot.autoread.handle(server.post("alice", "then")) == "read"
    assert bot.speaker.play() == [
        "Alice asks: Tea? Options: yes or no",
        "first",
        "The poll “Tea?” ended in a tie",
        "Alice said then",
    ]


async def test_a_result_is_read_only_where_the_bot_already_is(bot: Bot, server: Server) -> None:
    """No autojoin for a poll's end (it comes on a timer, nobody asked for it); in voice, its
    author need not be there (`require_voice` is about who writes)."""
    server.in_voice("alice", VOICE_ID)
    server.start()
    await bot.configure(read_channel=int(TEXT_ID))
    poll = poll_message(server, "Tea?", ["yes", "no"])
    result = server.message_create(result_message(server, poll, WON))
    assert await bot.autoread.handle(result) == "not in voice"
    assert bot.speaker.queue == []
    server.bot_joins(VOICE_ID)
    server.in_voice("alice", None)
    assert await bot.autoread.handle(server.message_create(result_message(server, poll, WON))) == (
        "read"
    )


async def test_a_result_elsewhere_or_without_its_embed_is_not_read(
    bot: Bot, server: Server
) -> None:
    await _in_voice(bot, server)
    poll = poll_message(server, "Tea?", ["yes", "no"])
    bare = result_message(server, poll, WON)
    bare["embeds"] = []
    assert await bot.autoread.handle(server.message_create(bare)) == "nothing to say"
    elsewhere = result_message(server, poll, WON)
    elsewhere["channel_id"] = "1100000000000000099"
    assert await bot.autoread.handle(server.message_create(elsewhere)) == "not a read channel"


async def test_a_poll_past_discords_limits_is_bounded(server: Server) -> None:
    """A payload past Discord's limits (a fake or a broken gateway) costs what one within
    them costs: 300 characters of question, 10 answers of 55."""
    server.start()
    poll = poll_message(server, "q" * 5_000, ["a" * 500] * 40)
    message = server.message_create(poll)
    facts = poll_of(message)
    assert facts is not None
    assert len(facts.question) == MAX_POLL_QUESTION and len(facts.answers) == MAX_POLL_ANSWERS
    assert {len(a) for a in facts.answers} == {MAX_POLL_ANSWER}
    assert poll_result_of(message) is None  # not a result
    result = result_message(
        server, poll, [("poll_question_text", "q" * 1_024), ("total_votes", "9" * 1_000)]
    )
    outcome = poll_result_of(server.message_create(result))
    assert outcome is not None and len(outcome.question) == MAX_POLL_QUESTION
    assert outcome.total_votes == 0


async def test_a_poll_is_read_in_french(bot: Bot, server: Server) -> None:
    await _in_voice(bot, server, language="french")
    poll = poll_message(server, "Pizza ou pâtes ?", ["pizza", "pâtes", "tacos"])
    assert await bot.autoread.handle(server.message_create(poll)) == "read"
    assert await bot.autoread.handle(server.message_create(result_message(server, poll, WON))) == (
        "read"
    )
    assert bot.speaker.play() == [
        "Alice demande : Pizza ou pâtes ? Choix : pizza, pâtes ou tacos",
        "Le sondage « Pizza or pasta? » est terminé : Pizza l'emporte avec deux voix",
    ]
