"""The waiting messages share one copy of each dictionary sound's audio (issue 48, item 7):
each used to hold its own (100 waiting messages: 82 MB for one server). A sound replaced
since is read again. Real discord.py Messages from MESSAGE_CREATE; the sounds as /dict sound
keeps them."""

from __future__ import annotations

from tests.audio_samples import encode
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.test_sounds import CLIP, tone
from tests.services.wiring import Bot


async def test_waiting_messages_share_one_copy_of_a_sound(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), rate_limit=50, queue_limit=100)
    await bot.dictionary.sounds.set(guild.id, "boom", CLIP)
    await bot.dictionary.sounds.set(guild.id, "tada", CLIP)
    for n in range(30):
        text = "boom and tada" if n % 2 else "boom"
        assert await bot.autoread.handle(server.post("alice", text)) == "read"
    waiting = bot.speaker.queue
    assert len(waiting) == 30
    assert len({id(u.sounds["boom"]) for u in waiting}) == 1  # one copy for all thirty
    assert len({id(u.sounds["tada"]) for u in waiting if "tada" in u.sounds}) == 1
    (stored,) = (await bot.db.sounds.get(guild.id, ["boom"])).values()
    assert waiting[0].sounds["boom"] == stored.pcm
    # the sound replaced: the next message plays the new one, the waiting ones keep theirs
    await bot.dictionary.sounds.set(guild.id, "boom", encode(tone(0.25, hz=440.0), "wav"))
    assert await bot.autoread.handle(server.post("alice", "boom")) == "read"
    (new,) = (await bot.db.sounds.get(guild.id, ["boom"])).values()
    assert bot.speaker.queue[-1].sounds["boom"] == new.pcm != stored.pcm
