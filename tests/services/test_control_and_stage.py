"""Who may control the bot and speak through it (issue 48, items 4 and 5): Move Members counts
in the bot's voice channel, not in the channel a command is typed in (a temp-voice bot grants
it on a member's own channel); a stage's audience does not speak on the stage through the bot
(/say, a preview, "Speak this message").

Each member is a discord.py Member of an INTERACTION_CREATE (its `member.permissions`: the
channel it was typed in, overwrites applied), the channels' overwrites from GUILD_CREATE."""

from __future__ import annotations

from dataclasses import dataclass

import discord
import pytest

from bot.core.errors import UserError
from bot.synthesis.speech_plan import SpeechPlan
from tests.services.discord_objects import (
    EVERYONE,
    MANAGE_GUILD,
    MOVE_MEMBERS,
    STAGE_ID,
    TEXT_ID,
    VOICE2_ID,
    VOICE_ID,
    Server,
)
from tests.services.wiring import Bot

REFUSED = f"Only members in <#{VOICE_ID}> (or with the Move Members permission) can do that."
ALLOWED = {  # each command's answer with nothing queued, once past the check
    "stop": "Nothing is being spoken or queued.",
    "skip": "Nothing is being spoken right now.",
    "clear": "Nothing is waiting to be read.",
    "leave": "Left the voice channel.",
}


@dataclass(frozen=True)
class Control:
    move_members_in: str | None  # the channel whose overwrite grants her Move Members
    typed_with: int  # her permissions where she typed the command
    allowed: bool


CONTROLS = {
    "Move Members on her own Gaming, typed in Gaming's chat": Control(
        VOICE2_ID, EVERYONE | MOVE_MEMBERS, False
    ),
    "Move Members on her own Gaming, typed in #general": Control(VOICE2_ID, EVERYONE, False),
    "Move Members in the bot's Lounge, typed in #general": Control(VOICE_ID, EVERYONE, True),
    "Manage Server": Control(None, EVERYONE | MANAGE_GUILD, True),
    "nothing": Control(None, EVERYONE, False),
}


@pytest.mark.parametrize("command", ALLOWED)
@pytest.mark.parametrize("case", CONTROLS.values(), ids=CONTROLS.keys())
async def test_move_members_counts_in_the_bots_channel(
    bot: Bot, server: Server, case: Control, command: str
) -> None:
    """Carol, not in the bot's channel, uses /stop, /skip, /clear or /leave (Alice owns the
    server: she may do anything)."""
    carol = server.add("carol")
    server.add("bob")
    server.in_voice("bob", VOICE_ID)
    server.in_voice("carol", VOICE2_ID)
    if case.move_members_in is not None:
        server.deny(case.move_members_in, 0, carol, allow=MOVE_MEMBERS)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    interaction, _ = server.slash_command("carol", command, permissions=case.typed_with)
    member = interaction.user
    assert isinstance(member, discord.Member)
    try:
        answer = await getattr(bot.voice, command)(guild, member, interaction.permissions)
    except UserError as error:
        answer = error.message
    assert answer == (ALLOWED[command] if case.allowed else REFUSED)


AUDIENCE = "You are in the stage's audience: I speak on the stage only for its speakers."


@dataclass(frozen=True)
class OnStage:
    suppressed: bool
    answer: str


STAGE = {
    "in the audience": OnStage(True, AUDIENCE),
    "a speaker": OnStage(False, f"Speaking in <#{STAGE_ID}>."),
}


@pytest.mark.parametrize("what", ["/say", "Speak this message", "/voice preview"])
@pytest.mark.parametrize("case", STAGE.values(), ids=STAGE.keys())
async def test_the_audience_does_not_speak_on_the_stage(
    bot: Bot, server: Server, case: OnStage, what: str
) -> None:
    server.add("bob")
    server.in_voice("alice", STAGE_ID, suppress=case.suppressed)
    server.start()
    server.bot_joins(STAGE_ID)
    await bot.configure(read_channel=int(TEXT_ID))
    try:
        if what == "/say":
            answer = await bot.speech.say(_member(server, "alice"), "hello there")
        elif what == "/voice preview":  # (its path; refused, VoiceService sends a file instead)
            channel = await bot.speech.speak_in_callers_channel(
                _member(server, "alice"), "hello there", SpeechPlan(voice="alba")
            )
            answer = f"Speaking in {channel.mention}."
        else:
            target = server.message(server["bob"], "hello there")
            interaction, message = server.message_command("alice", target)
            assert isinstance(interaction.user, discord.Member)
            answer = await bot.speak_message.speak(interaction.user, message)
    except UserError as error:
        answer = error.message
    spoken = "Speaking that message in" if what == "Speak this message" else "Speaking in"
    assert answer == case.answer.replace("Speaking in", spoken)
    said = "Bob said hello there" if what == "Speak this message" else "hello there"
    assert bot.speaker.play() == ([] if case.suppressed else [said])


def _member(server: Server, username: str) -> discord.Member:
    assert server.guild is not None
    member = server.guild.get_member(int(server[username].id))
    assert member is not None
    return member
