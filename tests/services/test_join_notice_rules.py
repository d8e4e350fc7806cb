"""Join notices keep the server's reading rules (issue 48, item 18): a member without the
required role is not named, nor (with `audience_ignore`) one joining a stage's audience,
as their messages are not read. The member and voice states are discord.py's, from the
VOICE_STATE_UPDATE the server sends."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.services.discord_objects import STAGE_ID, VOICE_ID, Server
from tests.services.wiring import Bot


@dataclass(frozen=True)
class Join:
    outcome: str
    required: bool = False  # the server has a required role
    has_role: bool = False
    channel: str = VOICE_ID  # where the bot is and bob joins
    suppressed: bool = False  # bob joins the stage's audience
    audience_ignore: bool = True


CASES = {
    "without the required role": Join("missing the required role", required=True),
    "with the required role": Join("joined", required=True, has_role=True),
    "no role required": Join("joined"),
    "into a stage's audience": Join("in the stage audience", channel=STAGE_ID, suppressed=True),
    "onto a stage as a speaker": Join("joined", channel=STAGE_ID),
    "into the audience, audience_ignore off": Join(
        "joined", channel=STAGE_ID, suppressed=True, audience_ignore=False
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_a_notice_keeps_the_reading_rules(bot: Bot, server: Server, case: Join) -> None:
    readers = server.role("Readers")
    server.add("bob", roles=(readers,) if case.has_role else ())
    server.in_voice("alice", case.channel)
    guild = server.start()
    server.bot_joins(case.channel)
    settings: dict[str, object] = {"join_leave": True, "audience_ignore": case.audience_ignore}
    if case.required:
        settings["required_role"] = int(readers.id)
    await bot.configure(**settings)
    event = server.in_voice("bob", case.channel, suppress=case.suppressed)
    assert event is not None
    member, before, after = event
    assert await bot.notices.on_voice_state(member, before.channel, after.channel) == case.outcome
    said = [u.text for u in bot.speaker.queue]
    assert said == (["Bob joined"] if case.outcome == "joined" else [])
    assert guild.id == bot.guild_id
