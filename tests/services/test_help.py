"""/help ends with its about line: the attribution Kyutai's weights ask for (CC BY 4.0) and
PocketVoice's own licence, in a server and in a DM, in English and in French."""

from __future__ import annotations

from bot.i18n.translate import localize
from bot.services.help import help_reply
from bot.storage.database import Database
from tests.services.discord_objects import FORUM_ID, TEXT_ID, VOICE_ID, Server


async def test_help_ends_with_the_weights_attribution_and_the_licence(
    server: Server, db: Database
) -> None:
    in_server = await help_reply(db, server.start(), can_clone=True)
    in_dm = await help_reply(None, None, can_clone=True)
    for reply in (in_server, in_dm):
        name, value = reply.fields[-1]
        assert name == "About"
        assert "[Kyutai's Pocket TTS](https://huggingface.co/kyutai/pocket-tts)" in value
        assert "model weights © Kyutai" in value
        assert "[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/)" in value
        assert "GPL-3.0-or-later" in value
        assert localize(name, "fr") == "À propos"
        french = localize(value, "fr")
        assert "© Kyutai" in french and "CC BY 4.0" in french and "logiciel libre" in french
    assert [name for name, _ in in_server.fields][-3:] == ["In this server", "What next", "About"]


async def test_help_says_threads_and_forum_posts_are_read(server: Server, db: Database) -> None:
    guild = server.start()

    async def in_this_server() -> str:
        reply = await help_reply(db, guild, can_clone=True)
        return dict(reply.fields)["In this server"]

    await db.read_channels.add(guild.id, int(TEXT_ID))
    said = await in_this_server()
    assert f"I read <#{TEXT_ID}> aloud. Its threads are read too." in said
    assert f"Je lis <#{TEXT_ID}> à voix haute. Ses fils sont lus aussi." in localize(said, "fr")
    assert "Polls are read with their options, and their results while I am in voice." in said
    assert "Les sondages sont lus avec leurs choix" in localize(said, "fr")
    await db.guilds.set(guild.id, "read_threads", False)
    assert "threads" not in await in_this_server()
    server.forum()
    await db.read_channels.remove(guild.id, int(TEXT_ID))
    await db.read_channels.add(guild.id, int(FORUM_ID))
    said = await in_this_server()
    assert f"I read <#{FORUM_ID}> aloud. Its posts are read, each title first." in said
    assert "chacune précédée de son titre" in localize(said, "fr")


async def test_help_says_messages_are_read_in_their_own_language(
    server: Server, db: Database
) -> None:
    guild = server.start()
    await db.read_channels.add(guild.id, int(TEXT_ID))
    line = "Each message is read in the language it is written in"
    assert line not in dict((await help_reply(db, guild, can_clone=True)).fields)["In this server"]
    await db.guilds.set(guild.id, "detect_language", True)
    said = dict((await help_reply(db, guild, can_clone=True)).fields)["In this server"]
    assert (
        f"{line} (of those I speak), unless its author chose theirs with `/set my_language`."
        in (said)
    )
    assert "Chaque message est lu dans la langue où il est écrit" in localize(said, "fr")


async def test_help_shows_every_read_channel_its_voice_channel_and_the_home(
    server: Server, db: Database
) -> None:
    guild = server.start()
    server.forum()
    await db.read_channels.add(guild.id, int(TEXT_ID), int(VOICE_ID))
    await db.read_channels.add(guild.id, int(FORUM_ID))
    await db.guilds.set(guild.id, "home_voice", int(VOICE_ID))
    reply = await help_reply(db, guild, can_clone=True)
    said = dict(reply.fields)["In this server"]
    assert said.startswith(
        f"I read <#{TEXT_ID}> in <#{VOICE_ID}>, <#{FORUM_ID}> aloud. A forum's posts are read, "
        "each title first. Threads are read too."
    )
    assert f"I stay in <#{VOICE_ID}>, where webhooks' messages are read too." in said
    french = localize(said, "fr")
    assert french.startswith(f"Je lis <#{TEXT_ID}> dans <#{VOICE_ID}>, <#{FORUM_ID}> à voix haute.")
    assert f"Je reste dans <#{VOICE_ID}>, où les messages des webhooks sont lus aussi." in french
    commands = dict(reply.fields)["Server (Manage Server)"]
    assert "`/setup add`" in commands and "`/setup remove`" in commands
    assert "`/config joining home_voice`" in commands
