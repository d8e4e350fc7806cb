"""Voices shared by processes on several machines through one real PostgreSQL: each library
here has its own DATA_DIR (its machine's cache) and its own store connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.supervisor import supervise
from bot.storage.database import Database, VoiceRecord
from bot.synthesis.engine import TTSEngine
from bot.synthesis.voice_library import VoiceLibrary, consent_now
from tests.audio_samples import encode, speech_like
from tests.postgres_server import PostgresServer
from tests.synthesis.test_voices import voice_for

ALICE = 101
CLIP = encode(speech_like(4.0), "wav")


@contextlib.asynccontextmanager
async def machine(url: str, data_dir: Path, engine: TTSEngine) -> AsyncIterator[VoiceLibrary]:
    db = await Database.open(url)
    try:
        yield VoiceLibrary(db, engine, data_dir)
    finally:
        await db.close()


def files(library: VoiceLibrary) -> list[Path]:
    return (
        sorted(p for p in library.files.root.rglob("*") if p.is_file())
        if library.files.root.exists()
        else []
    )


async def wait_until(predicate: object, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():  # type: ignore[operator]
            await asyncio.sleep(0.02)


@pytest.fixture
async def url(postgres: PostgresServer) -> str:
    return await postgres.new_database()


@pytest.fixture
async def cloned_on_a(
    url: str, tmp_path: Path, engine: TTSEngine, caplog: pytest.LogCaptureFixture
) -> AsyncIterator[tuple[VoiceLibrary, VoiceLibrary, VoiceRecord]]:
    """Machines a and b; alice's voice cloned on a."""
    caplog.set_level(logging.INFO, "bot.synthesis.voice_states")
    async with machine(url, tmp_path / "a", engine) as a, machine(url, tmp_path / "b", engine) as b:
        yield a, b, await a.create(ALICE, "Mine", CLIP, consented_at=consent_now())


async def test_a_voice_cloned_on_one_machine_is_fetched_on_another(
    cloned_on_a: tuple[VoiceLibrary, VoiceLibrary, VoiceRecord],
    engine: TTSEngine,
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, b, record = cloned_on_a
    await b.use(ALICE, "mine", guild_id=None)
    assert files(b) == []  # nothing of it on machine b yet
    spec = await voice_for(b, ALICE, guild_id=7)
    assert spec == str(b.files.data_dir / record.state_path)
    assert Path(spec).read_bytes() == (a.files.data_dir / record.state_path).read_bytes()
    assert f"voice {record.id}: state fetched from the store" in caplog.text
    assert "making its state" not in caplog.text
    assert oct(Path(spec).stat().st_mode & 0o777) == "0o600"
    assert len(await engine.synthesize("Hello", voice=spec)) > 0


async def test_without_a_kept_state_another_machine_rebuilds_it_from_the_recording(
    cloned_on_a: tuple[VoiceLibrary, VoiceLibrary, VoiceRecord],
    engine: TTSEngine,
    caplog: pytest.LogCaptureFixture,
) -> None:
    a, b, record = cloned_on_a
    await a.records.db.execute("DELETE FROM voice_states WHERE voice_id = ?", record.id)
    state = Path(await b.states.state_spec(record))
    assert f"voice {record.id}: making its state for this model" in caplog.text
    # the recording came from the store, and the new state is kept there for the others
    assert (
        b.files.data_dir / record.clip_path
    ).read_bytes() == await a.records.db.voices.recording(record.id)
    assert await a.records.db.voices.state(record.id, engine.fingerprint) == state.read_bytes()


async def test_a_deletion_on_one_machine_removes_the_copies_on_the_others(
    url: str, tmp_path: Path, engine: TTSEngine
) -> None:
    async with machine(url, tmp_path / "a", engine) as a, machine(url, tmp_path / "b", engine) as b:
        kept = await a.create(ALICE, "Kept", CLIP, consented_at=consent_now())
        gone = await a.create(ALICE, "Gone", CLIP, consented_at=consent_now())
        for record in (kept, gone):
            await b.states.state_spec(record)
        assert len(files(b)) == 2  # b holds the two states (fetched; the recordings stay away)
        listening = supervise(b.follow_deletions, "voice-deletions")
        try:
            await asyncio.sleep(0.5)  # b is listening
            await a.delete(ALICE, "Gone")
            await wait_until(lambda: files(b) == [b.files.data_dir / kept.state_path], 2.0)
            assert await b.records.db.voices.get_by_id(gone.id) is None
        finally:
            listening.cancel()

        # A deletion while b is not listening (its link was down): caught up when it listens,
        # sparing a recent file that no row names yet (a clone being written).
        await a.forget_user(ALICE)
        (old,) = files(b)
        os.utime(old, (time.time() - 3600, time.time() - 3600))
        writing = b.files.root / str(ALICE) / f".tmp-{'ab' * 16}.safetensors"
        writing.write_bytes(b"a clone being written")
        listening = supervise(b.follow_deletions, "voice-deletions")
        try:
            await wait_until(lambda: files(b) == [writing], 5.0)
        finally:
            listening.cancel()
