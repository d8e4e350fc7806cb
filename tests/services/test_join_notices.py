"""Spoken join and leave notices (`bot/services/join_notices.py`), each decided on the member
and the voice states discord.py dispatches for a VOICE_STATE_UPDATE (tests/e2e/
test_join_notices.py runs them end to end)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from bot.services.join_notices import NOTICE_QUIET_S
from tests.services.discord_objects import STAGE_ID, VOICE2_ID, VOICE_ID, Server
from tests.services.wiring import Bot


@dataclass(frozen=True)
class Move:
    """`who` moves from `before` to `after`; what the notices decide and say."""

    outcome: str
    before: str | None = None
    after: str | None = VOICE_ID
    said: str | None = None  # the notice's words, when one is queued
    who: str = "bob"
    settings: dict[str, Any] = field(default_factory=lambda: {"join_leave": True})
    listener: bool = True  # alice stays in the bot's channel
    bot_voice: str | None = VOICE_ID
    nick: str | None = None  # their server nickname
    reading_name: str | None = None  # their /set nick
    ignored: bool = False
    opted_out: bool = False
    blocked: bool = False
    own_language: str | None = None  # the member's own language here


CASES = {
    "joins the bot's channel": Move("joined", said="Bob joined"),
    "comes from another channel": Move("joined", before=VOICE2_ID, said="Bob joined"),
    "leaves voice": Move("left", before=VOICE_ID, after=None, said="Bob left"),
    "moves to another channel": Move("left", before=VOICE_ID, after=VOICE2_ID, said="Bob left"),
    "leaves another channel": Move("not the bot's channel", before=VOICE2_ID, after=None),
    "moves between other channels": Move("not the bot's channel", before=VOICE2_ID, after=STAGE_ID),
    "joins another channel": Move("not the bot's channel", after=VOICE2_ID),
    "the last one leaves": Move("nobody left to tell", before=VOICE_ID, after=None, listener=False),
    "notices are off by default": Move("notices off", settings={}),
    "the bot is not in voice": Move("not in voice", bot_voice=None),
    "another bot": Move("a bot", who="otherbot"),
    "has the ignored role": Move("has the ignored role", ignored=True),
    "opted out of reading": Move("member opted out", opted_out=True),
    "blocked by a moderator": Move("blocked by a moderator", blocked=True),
    "by their server nickname": Move("joined", nick="Bobby", said="Bobby joined"),
    "by their reading name": Move(
        "joined", nick="Bobby", reading_name="Robert", said="Robert joined"
    ),
    "a name made speakable": Move("joined", nick="🔥𝓑𝓸𝓫🔥", said="Bob joined"),
    "in the server's language": Move(
        "joined",
        settings={"join_leave": True, "language": "french"},
        said="Bob a rejoint le salon",
        own_language="german",  # the bot speaks to the channel: not in the member's
    ),
}


async def _moved(bot: Bot, server: Server, case: Move) -> str:
    muted = server.role("No TTS")
    person = server.add(
        case.who, nick=case.nick, bot=case.who == "otherbot", roles=(muted,) if case.ignored else ()
    )
    if case.listener:
        server.in_voice("alice", VOICE_ID)
    if case.before is not None:
        server.in_voice(case.who, case.before)
    guild = server.start()
    if case.bot_voice is not None:
        server.bot_joins(case.bot_voice)
    await bot.configure(**case.settings, ignored_role=int(muted.id))
    member_id = int(person.id)
    if case.reading_name is not None:
        await bot.db.members.set_nick(member_id, guild.id, case.reading_name)
    if case.opted_out:
        await bot.db.members.set_autoread(member_id, guild.id, False)
    if case.blocked:
        await bot.db.blocks.add(guild.id, member_id, int(server.owner.id), None)
    if case.own_language is not None:
        await bot.db.members.set_language(member_id, guild.id, case.own_language)
    event = server.in_voice(case.who, case.after)
    assert event is not None
    member, before, after = event
    return await bot.notices.on_voice_state(member, before.channel, after.channel)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_join_and_leave_notices(bot: Bot, server: Server, case: Move) -> None:
    assert await _moved(bot, server, case) == case.outcome
    queued = bot.speakers.get(bot.guild_id)
    texts = [u.text for u in queued.queue] if queued is not None else []
    assert texts == ([case.said] if case.said else [])


async def test_a_notice_is_a_phrase_in_the_servers_voice_and_language(
    bot: Bot, server: Server
) -> None:
    settings = {"join_leave": True, "language": "french", "default_voice": "marius"}
    await _moved(bot, server, Move("joined", settings=settings, own_language="german"))
    (notice,) = bot.speaker.queue
    assert (notice.text, notice.plan.voice, notice.plan.model, notice.phrase) == (
        "Bob a rejoint le salon",
        "marius",
        "french",
        True,
    )
    assert bot.speaker.phrases_loaded == ["Bob a rejoint le salon"]  # from the cache if there


async def test_never_the_bot_itself(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(join_leave=True)
    assert guild.me is not None
    channels = guild.get_channel(int(VOICE_ID)), guild.get_channel(int(VOICE2_ID))
    outcome = await bot.notices.on_voice_state(guild.me, *channels)  # type: ignore[arg-type]
    assert outcome == "the bot itself"


async def test_a_member_is_announced_at_most_once_a_minute(bot: Bot, server: Server) -> None:
    assert await _moved(bot, server, Move("joined")) == "joined"

    async def move(channel: str | None) -> str:
        event = server.in_voice("bob", channel)
        assert event is not None
        member, before, after = event
        return await bot.notices.on_voice_state(member, before.channel, after.channel)

    assert [await move(None), await move(VOICE_ID)] == ["announced lately"] * 2
    bot.clock.advance(NOTICE_QUIET_S + 1)
    assert await move(None) == "left"
    bot.notices.forget_guild(bot.guild_id)  # the bot left the server: nothing remembered
    assert await move(VOICE_ID) == "joined"
    assert [u.text for u in bot.speaker.queue] == ["Bob joined", "Bob left", "Bob joined"]


async def test_a_refusal_does_not_count_as_an_announcement(bot: Bot, server: Server) -> None:
    assert await _moved(bot, server, Move("member opted out", opted_out=True)) == (
        "member opted out"
    )
    await bot.db.members.set_autoread(int(server["bob"].id), bot.guild_id, True)
    event = server.in_voice("bob", None)
    assert event is not None
    member, before, after = event
    assert await bot.notices.on_voice_state(member, before.channel, after.channel) == "left"


async def test_a_notice_never_pushes_a_message_out(bot: Bot, server: Server) -> None:
    server.add("carol")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("carol", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(join_leave=True, queue_limit=1, read_channel=int(VOICE_ID))
    assert await bot.autoread.handle(server.post("alice", "hello", channel_id=VOICE_ID)) == "read"
    event = server.in_voice("carol", None)
    assert event is not None
    member, before, after = event
    assert await bot.notices.on_voice_state(member, before.channel, after.channel) == ("queue full")
    assert bot.speaker.play() == ["Alice said hello"]
