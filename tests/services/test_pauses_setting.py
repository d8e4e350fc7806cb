"""Where pauses are made (issue 50): what a member types to `/say` and `/tts` always has its
pauses ("[pause 2s]", "...", a blank line); a /tts file holds them as silence of their length
between the words' speech; chat keeps "..." as it reads it until an admin turns
`/config text pauses` on."""

from __future__ import annotations

import io

import discord
import soundfile

from bot.synthesis.audio_files import MODEL_RATE
from bot.text.words import Pause, sound_parts
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

ADMIN = discord.Permissions(manage_guild=True)


async def _bob(server: Server) -> discord.Member:
    server.add("bob")
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    bob = guild.get_member(int(server["bob"].id))
    assert bob is not None
    return bob


async def test_say_makes_the_pauses_it_is_given(bot: Bot, server: Server) -> None:
    bob = await _bob(server)
    await bot.speech.say(bob, "Hello [pause 2s] world... and more\n\nthe end")
    (utterance,) = bot.speaker.queue
    assert sound_parts(utterance.text) == [
        "Hello",
        Pause(2.0),
        "world...",
        Pause(0.5),
        "and more.",
        Pause(0.7),
        "the end",
    ]


async def test_a_tts_file_holds_its_pauses_as_silence(bot: Bot, server: Server) -> None:
    bob = await _bob(server)
    reply = await bot.speech.tts_file(bob, bob.guild, "Hello [pause 2s] world")
    assert bot.speakers.scheduler.asked == ["Hello", "world"]  # each part in turn
    assert reply.file is not None
    audio, rate = soundfile.read(io.BytesIO(reply.file[1]))
    # each part's speech is 0.1 s here (tests/services/wiring.py): 0.1 + 2 + 0.1
    assert rate == MODEL_RATE and abs(len(audio) / rate - 2.2) < 0.03


async def test_chat_makes_pauses_once_the_server_turns_them_on(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID))
    assert await bot.autoread.handle(server.post("alice", "wait... what")) == "read"
    reply = await bot.settings.set_server(ADMIN, guild, "pauses", "on")
    assert reply.content == "pauses is now on."
    assert await bot.autoread.handle(server.post("alice", "wait... what")) == "read"
    first, second = bot.speaker.play()
    assert sound_parts(first) == ["Alice said wait... what"]
    assert sound_parts(second) == ["wait...", Pause(0.5), "what"]
