"""Several read channels (`/setup add`, `/setup remove`), a read channel's own voice channel,
and the home voice channel (`/config joining home_voice`): which messages are read, where the
bot goes for them, and what it never leaves. Real discord.py messages from MESSAGE_CREATE
(tests/e2e/test_read_channels.py runs the same end to end)."""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from bot.i18n.translate import localize
from bot.services.replies import Reply
from bot.storage.database import MAX_READ_CHANNELS
from tests.services.discord_objects import (
    FORUM_ID,
    OTHER_TEXT_ID,
    TEXT_ID,
    VOICE2_ID,
    VOICE_ID,
    Server,
)
from tests.services.wiring import Bot

ADMIN = discord.Permissions(manage_guild=True)


async def setup_as_owner(
    bot: Bot,
    server: Server,
    permissions: discord.Permissions,
    guild: discord.Guild,
    *channels: discord.abc.GuildChannel,
) -> Reply:
    """/setup add by the server's owner (who sees every channel), as its callback gets her."""
    interaction, _ = server.slash_command("alice", "setup add")
    return await bot.settings.setup(permissions, guild, *channels, invoker=interaction.user)


def channel(server: Server, channel_id: str) -> discord.abc.GuildChannel:
    assert server.guild is not None
    found = server.guild.get_channel(int(channel_id))
    assert found is not None
    return found


async def test_messages_in_every_read_channel_are_read_until_one_is_removed(
    bot: Bot, server: Server
) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    for read in (TEXT_ID, OTHER_TEXT_ID):
        reply = await setup_as_owner(bot, server, ADMIN, guild, channel(server, read))
        assert reply.content.startswith(f"I will read <#{read}> aloud.")
    assert await bot.autoread.handle(server.post("alice", "first")) == "read"
    second = server.post("alice", "second", channel_id=OTHER_TEXT_ID)
    assert await bot.autoread.handle(second) == "read"
    assert bot.speaker.play() == ["Alice said first", "second"]
    shown = await bot.settings.show(guild)
    assert dict(shown.fields)["read_channels"] == (
        f"<#{TEXT_ID}>, <#{OTHER_TEXT_ID}> · /setup add, /setup remove"
    )
    removed = await bot.settings.setup_remove(ADMIN, guild, int(OTHER_TEXT_ID))
    assert removed.content == f"I no longer read <#{OTHER_TEXT_ID}>."
    third = server.post("alice", "third", channel_id=OTHER_TEXT_ID)
    assert await bot.autoread.handle(third) == "not a read channel"
    assert await bot.autoread.handle(server.post("alice", "fourth")) == "read"  # the other stays
    with pytest.raises(UserError) as error:
        await bot.settings.setup_remove(ADMIN, guild, int(OTHER_TEXT_ID))
    assert str(error.value) == f"I don't read <#{OTHER_TEXT_ID}>."


async def test_a_sixth_read_channel_is_refused_in_english_and_french(
    bot: Bot, server: Server
) -> None:
    guild = server.start()
    server.forum()
    for filler in range(1, MAX_READ_CHANNELS):  # four read already (channels made since gone)
        await bot.db.read_channels.add(guild.id, filler)
    await setup_as_owner(bot, server, ADMIN, guild, channel(server, TEXT_ID))  # the fifth
    with pytest.raises(UserError) as error:
        await setup_as_owner(bot, server, ADMIN, guild, channel(server, FORUM_ID))
    said = error.value.args[0]
    assert said == (
        "I already read 5 channels here, the most I can: remove one first (`/setup remove`)."
    )
    assert localize(said, "fr") == (
        "Je lis déjà 5 salons ici, le maximum : retirez-en un d'abord (`/setup remove`)."
    )
    # a channel read already takes another voice channel: that is no sixth
    reply = await setup_as_owner(
        bot, server, ADMIN, guild, channel(server, TEXT_ID), channel(server, VOICE2_ID)
    )
    assert reply.content.startswith(f"I will read <#{TEXT_ID}> aloud in <#{VOICE2_ID}>.")
    assert len(await bot.db.read_channels.list(guild.id)) == MAX_READ_CHANNELS
    with pytest.raises(UserError):  # setup needs Manage Server, here too
        await setup_as_owner(
            bot, server, discord.Permissions.none(), guild, channel(server, FORUM_ID)
        )
    with pytest.raises(UserError) as not_voice:
        await setup_as_owner(
            bot, server, ADMIN, guild, channel(server, TEXT_ID), channel(server, OTHER_TEXT_ID)
        )
    assert str(not_voice.value) == f"<#{OTHER_TEXT_ID}> is not a voice channel."


async def test_a_read_channel_with_its_own_voice_channel_is_read_there(
    bot: Bot, server: Server
) -> None:
    """#off-topic is read into Gaming: a member in Gaming brings the bot there; Alice in
    Lounge does not; #general (no voice channel of its own) still follows its author."""
    server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE2_ID)
    guild = server.start()
    await setup_as_owner(bot, server, ADMIN, guild, channel(server, TEXT_ID))
    await setup_as_owner(
        bot, server, ADMIN, guild, channel(server, OTHER_TEXT_ID), channel(server, VOICE2_ID)
    )
    from_alice = server.post("alice", "hi", channel_id=OTHER_TEXT_ID)
    assert await bot.autoread.handle(from_alice) == "author not in the read channel's voice channel"
    assert bot.connections.joined == []
    from_bob = server.post("bob", "hello", channel_id=OTHER_TEXT_ID)
    assert await bot.autoread.handle(from_bob) == "read"
    assert bot.connections.joined == [int(VOICE2_ID)]
    # #general follows its author: Alice is not in the bot's channel (require_voice)
    assert await bot.autoread.handle(server.post("alice", "here")) == (
        "author not in the bot's voice channel"
    )
    # the bot elsewhere (Lounge, for Alice): Bob's #off-topic brings it back to Gaming
    server.bot_joins(VOICE_ID)
    again = server.post("bob", "again", channel_id=OTHER_TEXT_ID)
    assert await bot.autoread.handle(again) == "read"
    assert bot.connections.joined == [int(VOICE2_ID), int(VOICE2_ID)]


async def test_a_webhook_is_read_in_the_home_channel_with_nobody_summoning(
    bot: Bot, server: Server
) -> None:
    """A webhook is never in voice, so it cannot bring the bot: without a home its message
    was dropped ("not in voice"); with one, it is read there."""
    guild = server.start()
    await bot.configure(read_channel=int(TEXT_ID), bot_ignore=False)
    hooked = server.webhook_message("Bridge", "from the other side")
    assert await bot.autoread.handle(server.message_create(hooked)) == "not in voice"
    with pytest.raises(UserError) as error:
        await bot.settings.set_server(ADMIN, guild, "home_voice", TEXT_ID)
    assert str(error.value) == "That is not a voice channel of this server."
    reply = await bot.settings.set_server(ADMIN, guild, "home_voice", VOICE_ID)
    assert reply.content == f"home_voice is now <#{VOICE_ID}>."
    assert bot.connections.home_of(guild.id) == int(VOICE_ID)  # taken up at once
    hooked = server.webhook_message("Bridge", "from the other side")
    assert await bot.autoread.handle(server.message_create(hooked)) == "read"
    assert bot.connections.joined == [int(VOICE_ID)]
    assert bot.speaker.play() == ["Bridge said from the other side"]
    await bot.settings.set_server(ADMIN, guild, "home_voice", "none")
    assert bot.connections.home_of(guild.id) is None


async def test_the_home_channel_is_never_left_idle_or_alone(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    bot.connections.set_home(guild.id, int(VOICE_ID))
    assert await bot.voice.leave_if_idle(guild, 1) is False  # quiet for long: stays home
    event = server.in_voice("alice", None)  # the last human leaves
    assert event is not None
    await bot.voice.on_voice_state_change(guild, event[0], None)
    assert guild.voice_client is not None  # still there
    with pytest.raises(UserError) as leave:  # /leave would be undone at once: it says so
        await bot.voice.leave(guild, event[0], ADMIN)
    assert str(leave.value).startswith(f"<#{VOICE_ID}> is my home channel here: I stay in it.")
    bot.connections.set_home(guild.id, int(VOICE2_ID))  # away from home: idle leave applies
    assert bot.voice.at_home(guild) is False
