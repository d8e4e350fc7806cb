"""One member's /say and /voice preview count against the server's `rate_limit` (issue 48,
item 9): twenty /say in a row used to fill the queue, and everyone else got "The queue is
full". ("Speak this message" counts against the invoker's already:
tests/services/test_speak_this_message.py::test_the_invokers_rate_limit.)"""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from tests.services.discord_objects import VOICE_ID, Server
from tests.services.wiring import Bot

TOO_MUCH = "That is a lot of speaking at once: please wait a few seconds."


def _member(server: Server, username: str) -> discord.Member:
    assert server.guild is not None
    member = server.guild.get_member(int(server[username].id))
    assert member is not None
    return member


@pytest.mark.parametrize("command", ["/say", "/voice preview"])
async def test_a_members_burst_is_limited_not_the_others(
    bot: Bot, server: Server, command: str
) -> None:
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    server.start()
    await bot.configure(rate_limit=3)
    voices = bot.voice_service()

    async def ask(username: str, text: str) -> str:
        member = _member(server, username)
        try:
            if command == "/say":
                return await bot.speech.say(member, text)
            return (await voices.preview(member, "alba", text, member.guild.id)).content
        except UserError as error:
            return error.message

    answers = [await ask("bob", f"line {n}") for n in "abcde"]
    assert answers[3:] == [TOO_MUCH, TOO_MUCH]
    assert TOO_MUCH not in answers[:3]
    assert await ask("alice", "my turn") != TOO_MUCH  # another member's share is whole
    assert bot.speaker.play() == ["line a", "line b", "line c", "my turn"]
