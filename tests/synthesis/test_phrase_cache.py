"""The phrase cache on disk: bounded by size, and cleaned when a voice or a member goes."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from bot.storage.database import Database
from bot.synthesis.engine import TTSEngine
from bot.synthesis.phrase_cache import MAX_MEMORY_BYTES, MAX_PHRASE_SAMPLES, PhraseCache
from bot.synthesis.voice_library import VoiceLibrary, VoiceLimits, consent_now
from tests.audio_samples import encode, speech_like

ALICE, BOB = 101, 202
SECOND = np.full(24_000, 0.1, np.float32)  # a one-second lead's audio: 96 KB on disk
FILE_BYTES = SECOND.nbytes + 128  # and the .npy header


def files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.npy")) if folder.exists() else []


def test_the_disk_copy_is_bounded_by_size_least_recently_used_first(tmp_path: Path) -> None:
    """700 nicknames made 700 files: now the oldest go past the bound."""
    cache = PhraseCache(tmp_path, "model", max_disk_bytes=3 * FILE_BYTES)
    for n in range(3):
        cache.put("alba", f"member {n} said", SECOND)
    assert cache.disk_bytes == 3 * FILE_BYTES
    fresh = PhraseCache(tmp_path, "model", max_disk_bytes=3 * FILE_BYTES)  # after a restart
    assert fresh.get("alba", "member 0 said") is not None  # read: the most recent now
    fresh.put("alba", "member 3 said", SECOND)  # over the bound: member 1's goes
    kept = PhraseCache(tmp_path, "model")
    assert kept.get("alba", "member 1 said") is None
    assert all(kept.get("alba", f"member {n} said") is not None for n in (0, 2, 3))
    assert len(files(tmp_path)) == 3 and fresh.disk_bytes <= 3 * FILE_BYTES
    for n in range(4, 700):
        fresh.put("alba", f"member {n} said", SECOND)
    assert len(files(tmp_path)) == 3


def test_after_a_restart_the_bound_counts_every_models_files_oldest_first(tmp_path: Path) -> None:
    old = PhraseCache(tmp_path, "old-model")
    for n in range(3):
        old.put("alba", f"member {n} said", SECOND)
    for age, path in enumerate(reversed(files(tmp_path))):  # a stated order, not the clock's
        os.utime(path, (1_000_000 - age, 1_000_000 - age))
    oldest = min(files(tmp_path), key=lambda p: p.stat().st_mtime)
    cache = PhraseCache(tmp_path, "new-model", max_disk_bytes=3 * FILE_BYTES)
    cache.put("alba", "member 9 said", SECOND)
    assert not oldest.exists() and len(files(tmp_path)) == 3
    assert not oldest.parent.exists() or any(oldest.parent.iterdir())


@pytest.fixture
async def library(tmp_path: Path, engine: TTSEngine) -> AsyncIterator[VoiceLibrary]:
    db = await Database.open(tmp_path / "pocketvoice.db")
    yield VoiceLibrary(db, engine, tmp_path, VoiceLimits(quota=2))
    await db.close()


async def _cloned(library: VoiceLibrary, owner: int, name: str) -> str:
    record = await library.create(
        owner, name, encode(speech_like(4.0), "wav"), consented_at=consent_now()
    )
    return await library.states.state_spec(record)


@pytest.mark.slow
async def test_deleting_a_voice_drops_its_phrases_under_every_model(
    library: VoiceLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    phrases = library.files.data_dir / "phrases"
    cache = PhraseCache(phrases, library.states.engine.fingerprint)
    monkeypatch.setattr(library.states.engine, "phrases", cache)
    mine, bobs = await _cloned(library, ALICE, "Mine"), await _cloned(library, BOB, "Bob's")
    cache.put(mine, "Alice said", SECOND)
    PhraseCache(phrases, "an-older-model").put(mine, "Alice said", SECOND)  # before a change
    cache.put(bobs, "Bob said", SECOND)
    await library.delete(ALICE, "Mine")
    assert cache.in_memory(mine, "Alice said") is None
    assert [cache.get(bobs, "Bob said") is not None] == [True]
    assert len(files(phrases)) == 1  # Bob's alone, under every model


async def test_a_voice_deleted_from_the_command_line_loses_its_phrases(
    library: VoiceLibrary,
) -> None:
    """`./run.sh voices delete` opens the library without the model, nor a phrase cache."""
    spec = await _cloned(library, ALICE, "Mine")
    PhraseCache(library.files.data_dir / "phrases", library.states.engine.fingerprint).put(
        spec, "Alice said", SECOND
    )
    offline = VoiceLibrary(library.records.db, None, library.files.data_dir)
    await offline.delete(ALICE, "Mine")
    assert files(library.files.data_dir / "phrases") == []


async def test_forgetting_a_member_drops_the_phrases_that_name_them(
    library: VoiceLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A built-in voice's "Alice said" names Alice as much as her own voice's does; the cache
    cannot tell whose name a phrase holds (nor Alice's earlier nicknames): all go."""
    phrases = library.files.data_dir / "phrases"
    cache = PhraseCache(phrases, library.states.engine.fingerprint)
    monkeypatch.setattr(library.states.engine, "phrases", cache)
    mine = await _cloned(library, ALICE, "Mine")
    cache.put(mine, "Alice said", SECOND)
    cache.put("alba", "Alice said", SECOND)
    cache.put("alba", "Ally said", SECOND)  # the nickname she had last week
    await library.forget_user(ALICE)
    assert files(phrases) == [] and cache.bytes == 0
    assert cache.get("alba", "Alice said") is None
    cache.put("alba", "Bob said", SECOND)  # the cache goes on working
    assert cache.get("alba", "Bob said") is not None and cache.disk_bytes == FILE_BYTES


async def test_forgetting_a_member_from_the_command_line_drops_phrases_too(
    library: VoiceLibrary,
) -> None:
    PhraseCache(library.files.data_dir / "phrases", "model").put("alba", "Alice said", SECOND)
    await VoiceLibrary(library.records.db, None, library.files.data_dir).forget_user(ALICE)
    assert files(library.files.data_dir / "phrases") == []


def test_a_phrase_is_kept_per_speaking_rate(tmp_path: Path) -> None:
    """A lead at 1.5x is other audio than at 1x: each has its own entry and file."""
    cache = PhraseCache(tmp_path, "model")
    cache.put("alba", "Alice said", SECOND)
    assert cache.in_memory("alba", "Alice said", rate=1.5) is None
    cache.put("alba", "Alice said", SECOND[:16_000], rate=1.5)
    assert len(cache.in_memory("alba", "Alice said", rate=1.5)) == 16_000
    assert len(cache.in_memory("alba", "Alice said")) == 24_000
    fresh = PhraseCache(tmp_path, "model")  # after a restart: from disk
    assert len(fresh.get("alba", "Alice said", rate=1.5)) == 16_000
    assert len(fresh.get("alba", "Alice said", rate=1.0)) == 24_000
    assert fresh.get("alba", "Alice said", rate=0.5) is None
    slow = np.full(24_000 * 10, 0.1, np.float32)  # 5 s of lead at half speed fits
    fresh.put("alba", "Alice said", slow, rate=0.5)
    assert fresh.get("alba", "Alice said", rate=0.5) is not None
    fresh.forget_voice("alba")  # every rate goes with the voice
    assert files(tmp_path) == []
    assert PhraseCache(tmp_path, "model").get("alba", "Alice said", rate=1.5) is None


def test_memory_is_bounded_by_bytes_least_recently_used_first(tmp_path: Path) -> None:
    """The longest phrase (6 s said at half speed: 12 s, 1.1 MB): 512 of them held 590 MB
    when the bound was a count; now at most 64 MB, the most recently used kept."""
    (tmp_path / "a-file").write_text("not a folder")  # memory only: no disk copy to write
    cache = PhraseCache(tmp_path / "a-file", "model")
    longest = np.full(MAX_PHRASE_SAMPLES * 2, 0.1, np.float32)
    fit = MAX_MEMORY_BYTES // longest.nbytes
    for n in range(512):
        cache.put("alba", f"member {n} said", longest, rate=0.5)
    assert cache.bytes == fit * longest.nbytes <= MAX_MEMORY_BYTES == 64 * 1024 * 1024
    assert cache.in_memory("alba", f"member {512 - fit} said", rate=0.5) is not None
    assert cache.in_memory("alba", f"member {511 - fit} said", rate=0.5) is None
    cache.put("alba", "member 511 said", longest, rate=0.5)  # kept again: counted once
    assert cache.bytes == fit * longest.nbytes
    room = (MAX_MEMORY_BYTES - cache.bytes) // SECOND.nbytes
    for n in range(room + 1):  # short ones fill the room left, then push the oldest out
        cache.put("alba", f"short {n} said", SECOND)
    assert cache.bytes == (fit - 1) * longest.nbytes + (room + 1) * SECOND.nbytes
    assert cache.in_memory("alba", f"member {513 - fit} said", rate=0.5) is None
    assert cache.in_memory("alba", f"member {512 - fit} said", rate=0.5) is not None  # used
    cache.forget_voice("alba")
    assert cache.bytes == 0


def test_a_folder_that_cannot_be_made_costs_the_disk_copy_not_the_phrase(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    cache = PhraseCache(tmp_path / "a-file", "model")
    cache.put("voice", "Alice said", SECOND)  # no error: kept in memory only
    assert cache.get("voice", "Alice said") is not None
