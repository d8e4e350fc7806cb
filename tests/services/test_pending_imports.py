"""One pending `/dict import` a server (issue 48, item 14): each preview held its decoded
sounds (megabytes) for its button's five minutes, however many were asked. A newer preview
now replaces the older, whose button then changes nothing. The file is discord.py's
attachment from a slash command's payload, fetched over real TLS (tests/services/cdn.py)."""

from __future__ import annotations

import json

import discord
import pytest

from bot.core.errors import UserError
from tests.services.cdn import running_cdn
from tests.services.discord_objects import MANAGE_GUILD, Server
from tests.services.wiring import Bot

REPLACED = (
    "A newer import replaced this one, or it expired: the dictionary is unchanged. Use the "
    "newest import's button, or /dict import again."
)
ADMIN = discord.Permissions(MANAGE_GUILD)


async def test_a_newer_import_preview_replaces_the_older(bot: Bot, server: Server) -> None:
    guild = server.start()
    async with running_cdn() as cdn:
        bot.dictionary.ssl_context = cdn.client_ssl
        previews = []
        for name, said in (("old.json", "bee are bee"), ("new.json", "be right back")):
            cdn.serve(name, json.dumps([{"word": "brb", "spoken": said}]).encode())
            payload = dict(server.attachment(name, "application/json"), url=cdn.url(name))
            interaction, (file,) = server.slash_command(
                "alice", "dict", files=(payload,), permissions=MANAGE_GUILD
            )
            assert isinstance(file, discord.Attachment)
            reply = await bot.dictionary.dict_import(ADMIN, interaction.user, guild, file)
            assert reply.confirm is not None
            previews.append(reply.confirm)
    older, newer = previews
    with pytest.raises(UserError) as replaced:
        await older.apply(ADMIN)
    assert replaced.value.message == REPLACED
    assert await bot.db.dictionary.all(guild.id) == []
    done = await newer.apply(ADMIN)
    assert done.content == "Imported: 1 added, 0 changed; the dictionary has 1 word."
    (entry,) = await bot.db.dictionary.all(guild.id)
    assert (entry.word, entry.spoken) == ("brb", "be right back")
    with pytest.raises(UserError):  # pressed twice: once only
        await newer.apply(ADMIN)
