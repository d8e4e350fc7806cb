"""`/config text timezone` (issue 50): an admin sets the server's zone, in English or French
replies, and Discord's timestamps in the chat are then read in it."""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from bot.i18n.translate import localize
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

ADMIN = discord.Permissions(manage_guild=True)
MEMBER = discord.Permissions()


async def test_timestamps_are_read_in_the_zone_the_server_set(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID))
    assert await bot.autoread.handle(server.post("alice", "at <t:1700000000:t>")) == "read"
    with pytest.raises(UserError):
        await bot.settings.set_server(MEMBER, guild, "timezone", "Asia/Tokyo")
    with pytest.raises(UserError) as error:
        await bot.settings.set_server(ADMIN, guild, "timezone", "Moon/Base")
    assert str(error.value) == "timezone is a time zone such as Europe/Paris or America/New_York."
    assert localize(error.value.message, "fr") == (
        "timezone est un fuseau horaire comme Europe/Paris ou America/New_York."
    )
    reply = await bot.settings.set_server(ADMIN, guild, "timezone", "Asia/Tokyo")
    assert reply.content == "timezone is now Asia/Tokyo."
    assert localize(reply.content, "fr") == "timezone vaut maintenant Asia/Tokyo."
    assert await bot.autoread.handle(server.post("alice", "at <t:1700000000:t>")) == "read"
    assert bot.speaker.play() == [
        "Alice said at ten thirteen p.m. UTC",
        "at seven thirteen a.m.",
    ]
