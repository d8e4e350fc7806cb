"""The reading rules as one pure function (bot/services/message_reading.py): each rule alone, the
ones a member's request sets aside, and their order when several apply."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.services.message_reading import Posted, Verdict, verdict
from bot.storage.server_settings import ServerSettings

READER, IGNORED = 11, 12
# nothing skipped but by the author (the defaults skip bots, @silent, "-" and the audience)
SERVER = ServerSettings(
    1, bot_ignore=False, skip_silent=False, skip_prefix="", audience_ignore=False
)
STRICT = ServerSettings(
    1,
    bot_ignore=True,
    skip_silent=True,
    skip_prefix="!",
    required_role=READER,
    ignored_role=IGNORED,
    audience_ignore=True,
)
MEMBER = Posted("hello", roles=frozenset({READER}))

CASES: dict[str, tuple[Posted, ServerSettings, Verdict, Verdict]] = {
    # (what was posted, the server's settings, in chat, asked for with "Speak this message")
    "a plain message": (Posted("hello"), SERVER, Verdict.READ, Verdict.READ),
    "a member with the reading role": (MEMBER, STRICT, Verdict.READ, Verdict.READ),
    "a private thread": (
        Posted("hello", private_thread=True),
        SERVER,
        Verdict.PRIVATE_THREAD,
        Verdict.PRIVATE_THREAD,
    ),
    "a bot, bot_ignore on": (
        Posted("hi", from_bot=True, roles=MEMBER.roles),
        STRICT,
        Verdict.FROM_A_BOT,
        Verdict.FROM_A_BOT,
    ),
    "a bot, bot_ignore off": (Posted("hi", from_bot=True), SERVER, Verdict.READ, Verdict.READ),
    "a webhook, bot_ignore on": (
        Posted("hi", webhook=True),
        STRICT,
        Verdict.FROM_A_BOT,
        Verdict.FROM_A_BOT,
    ),
    "a system message": (Posted("", system=True), SERVER, Verdict.SYSTEM_MESSAGE, Verdict.READ),
    "@silent, skip_silent on": (
        Posted("hi", silent=True, roles=MEMBER.roles),
        STRICT,
        Verdict.SILENT,
        Verdict.READ,
    ),
    "@silent, skip_silent off": (Posted("hi", silent=True), SERVER, Verdict.READ, Verdict.READ),
    "the skip prefix": (
        Posted("!play", roles=MEMBER.roles),
        STRICT,
        Verdict.SKIP_PREFIX,
        Verdict.SKIP_PREFIX,
    ),
    "without the reading role": (Posted("hi"), STRICT, Verdict.MISSING_ROLE, Verdict.MISSING_ROLE),
    "a webhook has no roles": (
        Posted("hi", webhook=True),
        replace(SERVER, required_role=READER),
        Verdict.MISSING_ROLE,
        Verdict.MISSING_ROLE,
    ),
    "with the ignored role": (
        Posted("hi", roles=frozenset({READER, IGNORED})),
        STRICT,
        Verdict.IGNORED_ROLE,
        Verdict.IGNORED_ROLE,
    ),
    "in the stage audience": (
        Posted("hi", roles=MEMBER.roles, stage_audience=True),
        STRICT,
        Verdict.STAGE_AUDIENCE,
        Verdict.READ,
    ),
    "blocked": (Posted("hi", blocked=True), SERVER, Verdict.BLOCKED, Verdict.BLOCKED),
    "opted out": (Posted("hi", opted_out=True), SERVER, Verdict.OPTED_OUT, Verdict.OPTED_OUT),
    "a webhook is never a blocked or opted-out member": (
        Posted("hi", webhook=True, blocked=True, opted_out=True),
        SERVER,
        Verdict.READ,
        Verdict.READ,
    ),
    "the server's rules before the member's": (
        Posted("!x", blocked=True, opted_out=True),
        ServerSettings(1, skip_prefix="!"),
        Verdict.SKIP_PREFIX,
        Verdict.SKIP_PREFIX,
    ),
    "a private thread before everything": (
        Posted("!x", from_bot=True, private_thread=True, blocked=True),
        STRICT,
        Verdict.PRIVATE_THREAD,
        Verdict.PRIVATE_THREAD,
    ),
}


@pytest.mark.parametrize(
    ("posted", "settings", "in_chat", "asked"), CASES.values(), ids=CASES.keys()
)
def test_the_reading_rules(
    posted: Posted, settings: ServerSettings, in_chat: Verdict, asked: Verdict
) -> None:
    assert verdict(posted, settings) is in_chat
    assert verdict(posted, settings, asked=True) is asked


def test_a_verdict_reads_as_the_logs_words() -> None:
    assert Verdict.READ == "read" and f"{Verdict.SKIP_PREFIX}" == "skip prefix"
