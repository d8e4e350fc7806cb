"""The dictionary's sounds in both stores (migration 0012): kept, replaced, counted under the
server's lock (the most allowed: nothing changed past it), listed without their audio, removed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from bot.storage.database import Database, DictionarySound, SoundsFullError


def sound(word: str, value: int = 1) -> DictionarySound:
    pcm = value.to_bytes(2, "little", signed=True) * 4_800  # 0.1 s at 48 kHz
    return DictionarySound(word, pcm, hashlib.sha256(pcm).hexdigest())


async def test_sounds_are_kept_replaced_limited_and_removed(database_at: Path | str) -> None:
    db = await Database.open(database_at)
    try:
        guild, other = 1100000000000000009, 42
        await db.sounds.put(guild, [sound("Boom"), sound("tada", -2)], 3)
        await db.sounds.put(other, [sound("boom", 5)], 3)
        assert await db.sounds.words(guild) == ["Boom", "tada"]
        assert await db.sounds.lengths(guild) == [("Boom", 0.1), ("tada", 0.1)]
        found = await db.sounds.get(guild, ["boom", "nothing"])
        assert found == {"boom": sound("Boom")}  # its key: the word casefolded
        await db.sounds.put(guild, [sound("BOOM", 7)], 3)  # the same word: replaced
        assert await db.sounds.all(guild) == [sound("BOOM", 7), sound("tada", -2)]
        with pytest.raises(SoundsFullError):
            await db.sounds.put(guild, [sound("a"), sound("b")], 3)
        assert await db.sounds.count(guild) == 2  # nothing of a refused put is kept
        assert await db.sounds.remove(guild, "Boom") and not await db.sounds.remove(guild, "boom")
        assert await db.sounds.words(guild) == ["tada"] and await db.sounds.words(other) == ["boom"]
    finally:
        await db.close()
