"""Two bot processes, shards 0 and 1 of 2, against one fake Discord and one real PostgreSQL:
each machine has its own DATA_DIR, so what they share goes through the database."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from tests.audio_samples import encode, speech_like
from tests.bot_process import BotProcess
from tests.conftest import TinyModel
from tests.fakediscord import FakeDiscord, ReceivedPacket
from tests.fakediscord.server import shard_of
from tests.postgres_server import PostgresServer

CLIP = encode(speech_like(4.0), "wav")
LONG = " ".join(["Each server hears its own message while the other one speaks too."] * 3)


def voiced(fake: FakeDiscord, guild: str, since: float = 0.0) -> list[ReceivedPacket]:
    """The speech (not silence) that reached `guild`'s voice channel after `since`."""
    return [
        p
        for p in fake.udp.packets
        if fake.ssrc_guild.get(p.ssrc) == guild and not p.is_silence and p.arrived > since
    ]


async def test_two_shard_processes_share_voices_and_survive_each_other(
    tmp_path: Path, tiny_model: TinyModel, postgres: PostgresServer
) -> None:
    fake = FakeDiscord(tmp_path, shards=2)
    guild0 = fake.add_guild(0)  # member0's server
    guild1 = fake.GUILD_ID  # alice's and bob's
    assert (shard_of(guild0, 2), shard_of(guild1, 2)) == (0, 1)
    voice0, voice1 = fake.channels[guild0][1], fake.channels[guild1][1]
    await fake.start()
    url = await postgres.new_database()
    base = {
        **fake.env,
        "TTS_CONFIG": str(tiny_model.full_length_config),
        "SHARD_COUNT": "2",
        "DEFAULT_VOICE": str(tiny_model.clip),
        "DATABASE_URL": url,
    }
    bots = [
        BotProcess(
            {**base, "SHARD_IDS": str(n), "DATA_DIR": str(tmp_path / f"m{n}")},
            tmp_path / f"m{n}",
            f"shard{n}",
        )
        for n in (0, 1)
    ]
    try:
        await asyncio.gather(*(bot.start() for bot in bots))
        await fake.wait_for(lambda: fake.identified_shards == {0, 1}, 120, "both shards")
        for guild, channel in ((guild0, voice0), (guild1, voice1)):
            await fake.set_voice_state("alice", channel, guild)

        # alice clones her voice in the server of shard 0, for every server
        clip = fake.attachment("me.wav", CLIP)
        cloned = await fake.interaction(
            "clone", {"name": "Mine", "clip": clip, "consent": True}, guild=guild0
        )
        await cloned.wait_content("is ready", 90)
        used = await fake.interaction(
            "voice use", {"name": "mine", "everywhere": True}, guild=guild0
        )
        assert "“Mine”" in (await used.wait_final())["content"]
        assert list((tmp_path / "m1").rglob("*.safetensors")) == []  # nothing on machine 1 yet

        # ... and speaks with it in the server of shard 1, held by the other process
        said = await fake.interaction("say", {"text": "Hello from the other shard."}, guild=guild1)
        assert (await said.wait_final(60))["content"] == f"Speaking in <#{voice1}>."
        await fake.wait_for(lambda: "cloned voice 1 used for" in bots[1].log, 60, "her voice")
        assert "voice 1: state fetched from the store" in bots[1].log
        assert len(list((tmp_path / "m1").rglob("*.safetensors"))) == 1
        await fake.wait_for(lambda: len(voiced(fake, guild1)) > 10, 60, "speech on shard 1")

        # a /voice delete on shard 1 stops the voice on shard 0 too, files and all
        m0_voices = tmp_path / "m0" / "voices"
        assert len(list(m0_voices.rglob("*.*"))) == 2  # the state and the recording
        heard_before = bots[0].log.count("cloned voice")  # (the clone greeted her in it)
        gone = await fake.interaction("voice delete", {"name": "Mine"}, guild=guild1)
        assert (await gone.wait_final())["content"] == "Deleted “Mine” and its recording."
        dropped = "voice 1 was deleted by another process: copies dropped"
        await fake.wait_for(lambda: dropped in bots[0].log, 2, "the copies on m0 dropped")
        assert list(m0_voices.rglob("*.*")) == []
        assert list((tmp_path / "m1").rglob("*.safetensors")) == []
        mine = await fake.interaction("say", {"text": "Which voice now?"}, guild=guild0)
        assert (await mine.wait_final(60))["content"].startswith(("Speaking in", "Queued"))
        await fake.wait_for(lambda: len(voiced(fake, guild0)) > 10, 60, "speech on shard 0")
        assert bots[0].log.count("cloned voice") == heard_before  # the default voice now

        # a guild on each shard speaks at once
        await asyncio.sleep(3)  # the short messages are over
        started = time.monotonic()
        await fake.set_voice_state("bob", voice1, guild1)
        await fake.set_voice_state("member0", voice0, guild0)
        both = [
            await fake.interaction("say", {"text": LONG}, user="member0", guild=guild0),
            await fake.interaction("say", {"text": LONG}, user="bob", guild=guild1),
        ]
        for inter in both:  # (or queued behind a join announcement)
            assert (await inter.wait_final(60))["content"].startswith(("Speaking in", "Queued"))
        await fake.wait_for(
            lambda: all(len(voiced(fake, g, started)) > 50 for g in (guild0, guild1)),
            90,
            "both shards speaking",
        )
        first = {g: voiced(fake, g, started)[0].arrived for g in (guild0, guild1)}
        assert max(first.values()) - min(first.values()) < 10  # at once, not one after another

        # killing the process of shard 0 leaves shard 1's server speaking
        killed_at = time.monotonic()
        assert await bots[0].stop(signal.SIGKILL) == -signal.SIGKILL
        await asyncio.sleep(2.0)
        assert len(voiced(fake, guild1, killed_at + 1.0)) > 25  # still speaking, 1-2 s later
        assert voiced(fake, guild0, killed_at + 1.0) == []  # shard 0 went silent

        # shard 0 restarted (by its supervisor, here by hand) speaks again in its server
        restarted = BotProcess(bots[0].env, tmp_path / "m0", "shard0-again")
        bots.append(restarted)
        await restarted.start()
        await fake.wait_for(lambda: fake.identifies.count(0) == 2, 120, "shard 0 again")
        back = time.monotonic()
        again = await fake.interaction("say", {"text": "Back again."}, guild=guild0)
        assert (await again.wait_final(90))["content"].startswith(("Speaking in", "Queued"))
        await fake.wait_for(lambda: len(voiced(fake, guild0, back)) > 10, 60, "shard 0 again")
    finally:
        codes = [await bot.stop() for bot in bots if bot.process is not None]
        await fake.close()
    logs = "".join(bot.log for bot in bots)
    assert "Traceback" not in logs, logs[-4000:]
    assert fake.token not in logs
    assert codes[1:] == [0, 0], logs[-4000:]
