"""Gateway shards: what a process reports of its own, and automatic sharding end to end."""

from __future__ import annotations

import math
from pathlib import Path

from bot.ops.shards import ProcessShards, ShardLoad, compact_ids
from tests.conftest import TinyModel, bot_on_fake_discord
from tests.fakediscord.server import shard_of


def test_shard_ids_are_shown_as_settings_write_them() -> None:
    assert compact_ids([]) == ""
    assert compact_ids([3]) == "3"
    assert compact_ids([5, 0, 1, 2, 7, 8]) == "0-2, 5, 7-8"


def test_a_process_sums_its_shards_and_names_each() -> None:
    loads = [
        ShardLoad(1, 0.0421, False, servers=3, voice_connections=1),
        ShardLoad(2, math.nan, False, servers=1),
        ShardLoad(3, 0.01, True),
        ShardLoad(4, math.inf, False),
    ]
    shards = ProcessShards(5, loads)
    assert shards.summary() == "1-4 of 5 · 4 servers · 1 in voice"
    assert shards.lines() == [
        "shard 1: 3 servers, 1 in voice, 42 ms",
        "shard 2: 1 server, 0 in voice, no heartbeat yet",
        "shard 3: 0 servers, 0 in voice, disconnected",
        "shard 4: 0 servers, 0 in voice, no heartbeat yet",  # discord.py's inf before one
    ]


async def test_unset_the_bot_holds_every_shard_discord_recommends(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, extra_guilds=1, shards=2) as running:
        fake, bot = running.fake, running.bot
        assert bot.shard_count == 2 and sorted(bot.shards) == [0, 1]
        assert sorted(fake.identifies) == [0, 1]
        guild0 = next(g for g in fake.channels if shard_of(g, 2) == 0)
        for guild in (guild0, fake.GUILD_ID):  # each shard's server answers
            stats = await (await fake.interaction("botstats", guild=guild)).wait_final()
            fields = {f["name"]: f["value"] for f in stats["embeds"][0]["fields"]}
            summary, *lines = fields["Shards in this process"].split("\n")
            assert summary == "0-1 of 2 · 3 servers · 0 in voice"
            assert [line.split(":")[0] for line in lines] == ["shard 0", "shard 1"]
            assert lines[0].startswith("shard 0: 1 server, 0 in voice, ")
            assert lines[1].startswith("shard 1: 2 servers, 0 in voice, ")
        assert bot.not_ready_reason() is None
