"""Who may do what, and who is named: control commands, cloned voices, opt-outs, leaving a
server. Each failed on the code before the hardening (commit 1c0224a)."""

from __future__ import annotations

import logging
from typing import Any

from tests.conftest import RunningBot
from tests.e2e.test_autoread import speaker
from tests.e2e.test_voices import clone
from tests.fakediscord import FakeDiscord

VOICE, VOICE2 = FakeDiscord.VOICE_ID, FakeDiscord.VOICE2_ID
MOVE_MEMBERS = 1 << 24


async def test_only_members_in_the_channel_control_the_speech(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("say", {"text": "Hello everyone."})).wait_final()
    await fake.set_voice_state("bob", VOICE2)
    for command in ("skip", "stop", "clear", "leave"):
        reply = await (await fake.interaction(command, user="bob")).wait_final()
        assert reply["content"].startswith(f"Only members in <#{VOICE}>"), command
    assert fake.bot_voice_channel == VOICE
    # Move Members where the command was typed only (a temp-voice bot's grant on a channel of
    # bob's): not in the bot's channel, so refused (issue 48 item 4)
    typed_there = fake.EVERYONE_PERMISSIONS | MOVE_MEMBERS
    refused = await fake.interaction("leave", user="bob", permissions=typed_there)
    assert (await refused.wait_final())["content"].startswith(f"Only members in <#{VOICE}>")
    assert fake.bot_voice_channel == VOICE
    # a server role with Move Members reaches the bot's channel too
    moderators = await fake.add_role("moderators", permissions=MOVE_MEMBERS)
    fake.give_role("bob", moderators)
    left = await fake.interaction("leave", user="bob")
    assert (await left.wait_final())["content"] == "Left the voice channel."


async def test_say_in_a_cloned_voice_is_announced_and_logged(
    running_bot: RunningBot, caplog: Any
) -> None:
    caplog.set_level(logging.INFO)
    fake, bot = running_bot.fake, running_bot.bot
    await (await clone(fake, "Mine")).wait_content("is ready")
    await (await fake.interaction("voice use", {"name": "Mine"})).wait_final()
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("say", {"text": "A secret sentence."})).wait_final()
    await fake.wait_for(lambda: len(speaker(running_bot).history) == 1, 20, "speech")
    assert speaker(running_bot).history[0].text == "alice said: A secret sentence."  # username
    (record,) = await bot.app.voices.library.records.list_for(int(fake.humans["alice"].id))
    assert f"cloned voice {record.id} used for /say by user" in caplog.text
    assert "A secret sentence" not in caplog.text  # never the text
    assert record.consent_guild_id == int(fake.GUILD_ID) and record.upload_sha256
    assert f"voice {record.id} cloned by user" in caplog.text


async def test_speak_this_message_respects_the_authors_opt_out(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)
    opt_out = await fake.interaction("set autoread", {"value": "off"}, user="bob")
    await opt_out.wait_final()
    message = await fake.post("bob", "do not read me")
    menu = await fake.interaction("Speak this message", user="alice", target=message)
    assert "asked not to have their messages read" in (await menu.wait_final())["content"]
    bot_message = await fake.post("otherbot", "beep")
    menu = await fake.interaction("Speak this message", user="alice", target=bot_message)
    assert "messages from bots" in (await menu.wait_final())["content"]
    forget = await fake.interaction("voice forget-me", user="bob")
    asked = await forget.wait_final()
    done = await fake.click(asked, "pv:forget:" + fake.humans["bob"].id, user="bob")
    await done.wait_final()
    menu = await fake.interaction("Speak this message", user="alice", target=message)
    assert "asked not to have their messages read" in (await menu.wait_final())["content"]


async def test_leaving_a_server_forgets_its_state(running_bot: RunningBot) -> None:
    fake, bot = running_bot.fake, running_bot.bot
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("say", {"text": "Hello."})).wait_final()
    assert bot.app.speakers.get(int(fake.GUILD_ID)) is not None
    await fake.remove_guild(fake.GUILD_ID)
    await fake.wait_for(
        lambda: bot.app.speakers.get(int(fake.GUILD_ID)) is None,
        10,
        "the server's speaker to go",
    )
    # Discord never confirms a voice leave in a server the bot is no longer in: it gives up
    await fake.wait_for(lambda: not bot.voice_clients, 10, "the voice link to go")
