"""Which gateway shards this process holds, and how loaded each is (/botstats, metrics).

Discord sends a guild's events to shard `(guild_id >> 22) % shard_count`; each process holds
some shards (SHARD_IDS), so an operator reads each process's load per shard.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bot.i18n.translate import Phrase, plural, tr


@dataclass
class ShardLoad:
    shard_id: int
    latency: float  # gateway heartbeat round trip in seconds; nan or inf before the first
    closed: bool
    servers: int = 0
    voice_connections: int = 0


@dataclass(frozen=True)
class ProcessShards:
    count: int  # shards across every process
    loads: list[ShardLoad] = field(default_factory=list)

    @property
    def ids(self) -> list[int]:
        return [load.shard_id for load in self.loads]

    def summary(self) -> Phrase:
        return tr(
            "{ids} of {count} · {servers} · {voice} in voice",
            ids=compact_ids(self.ids),
            count=self.count,
            servers=plural(sum(load.servers for load in self.loads), "server"),
            voice=sum(load.voice_connections for load in self.loads),
        )

    def lines(self) -> list[Phrase]:
        return [
            tr(
                "shard {shard}: {servers}, {voice} in voice, {latency}",
                shard=load.shard_id,
                servers=plural(load.servers, "server"),
                voice=load.voice_connections,
                latency=_latency(load),
            )
            for load in self.loads
        ]


def _latency(load: ShardLoad) -> str:
    if load.closed:
        return tr("disconnected")
    if not math.isfinite(load.latency):
        return tr("no heartbeat yet")
    return f"{load.latency * 1000:.0f} ms"


def compact_ids(ids: list[int]) -> str:
    """0, 1, 2, 5 -> '0-2, 5': the shape SHARD_IDS takes."""
    runs: list[list[int]] = []
    for shard in sorted(ids):
        if runs and shard == runs[-1][-1] + 1:
            runs[-1].append(shard)
        else:
            runs.append([shard])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
