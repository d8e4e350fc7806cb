"""The voice library with the real engine (tiny model), the real SQLite file and real files."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

import discord
import numpy as np
import pytest
import soundfile
import torch

from bot.core.errors import UserError
from bot.services.blocks import BlockService
from bot.services.replies import Reply
from bot.services.speech_plan import SpeechPlanner
from bot.services.voices import VoiceService
from bot.storage.database import Database, VoiceRepository
from bot.storage.voice_records import VoiceLibraryError
from bot.synthesis import clip as clips
from bot.synthesis.engine import StateCache, TTSEngine, UnusableVoiceError
from bot.synthesis.voice_library import DECODE_NICE, VoiceLibrary, VoiceLimits, consent_now
from tests.audio_samples import encode, speech_like
from tests.services.cdn import CDN, running_cdn

ALICE, BOB = 101, 202
CLIP = encode(speech_like(4.0), "wav")


@pytest.fixture
async def library(tmp_path: Path, engine: TTSEngine) -> AsyncIterator[VoiceLibrary]:
    db = await Database.open(tmp_path / "pocketvoice.db")
    yield VoiceLibrary(db, engine, tmp_path, VoiceLimits(quota=2))
    await db.close()


async def create(library: VoiceLibrary, owner: int, name: str, data: bytes = CLIP):
    return await library.create(owner, name, data, consented_at=consent_now())


async def voice_for(library: VoiceLibrary, user_id: int, guild_id: int | None) -> str | None:
    """The voice spec a member speaks with there, in the default language, as the bot
    resolves it (their server choice, their global one, the server's default, else None)."""
    planner = SpeechPlanner(library.records, library.states, "english", ("english",))
    return (await planner.plan(await planner.resolve(user_id, guild_id))).voice


def stored_files(library: VoiceLibrary) -> list[Path]:
    return (
        sorted(p for p in library.files.root.rglob("*") if p.is_file())
        if library.files.root.exists()
        else []
    )


async def test_create_stores_state_and_trimmed_clip(library: VoiceLibrary) -> None:
    steps: list[str] = []

    async def progress(step: str) -> None:
        steps.append(step)

    record = await library.create(ALICE, " My  voice ", CLIP, consented_at="t", progress=progress)
    assert record.name == "My voice" and record.owner_id == ALICE
    assert record.model_fingerprint == library.states.engine.fingerprint
    state = library.files.data_dir / record.state_path
    clip = library.files.data_dir / record.clip_path
    assert state.parent == clip.parent == library.files.root / str(ALICE)
    assert state.suffix == ".safetensors" and clip.suffix == ".flac" and state.stem == clip.stem
    assert stored_files(library) == sorted([state, clip])
    assert state.stat().st_size == record.state_bytes > 0
    assert clip.stat().st_size == record.clip_bytes
    assert 4.0 <= record.duration_s <= 4.3  # 1 s of quiet trimmed on each side
    assert soundfile.info(str(clip)).samplerate == 24_000
    assert steps[0] == "Checking your clip…" and steps[1].startswith("Learning your voice")
    assert len(await library.states.engine.synthesize("Hello", voice=str(state))) > 0


async def test_name_quota_and_duplicate_refusals_leave_nothing(library: VoiceLibrary) -> None:
    for bad, message in [("", "give the voice a name"), ("x" * 40, "40 characters")]:
        with pytest.raises(VoiceLibraryError, match=message):
            await create(library, ALICE, bad)
    assert stored_files(library) == [] and await library.records.list_for(ALICE) == []
    await create(library, ALICE, "One")
    with pytest.raises(VoiceLibraryError, match="already have a voice named “one”"):
        await create(library, ALICE, "one")
    await create(library, ALICE, "Two")
    with pytest.raises(VoiceLibraryError, match="already have 2 voices"):
        await create(library, ALICE, "Three")
    assert [v.name for v in await library.records.list_for(ALICE)] == ["One", "Two"]
    assert len(stored_files(library)) == 4


async def test_bad_clip_leaves_no_file_and_no_row(library: VoiceLibrary) -> None:
    with pytest.raises(UserError, match="sounds silent"):
        await create(library, ALICE, "Quiet", encode(speech_like(0.0, lead_s=3), "wav"))
    assert stored_files(library) == [] and await library.records.list_for(ALICE) == []


async def test_error_between_files_and_commit_leaves_nothing(
    library: VoiceLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def disk_full(*args: object, **kwargs: object) -> None:
        assert len(stored_files(library)) >= 2  # the files were written by now
        raise OSError("disk full")

    monkeypatch.setattr(VoiceRepository, "insert", disk_full)
    with pytest.raises(VoiceLibraryError, match="storage problem"):
        await create(library, ALICE, "Doomed")
    assert stored_files(library) == []
    assert await library.records.list_for(ALICE) == []
    monkeypatch.undo()
    # a restart finds a consistent store, and the name is free
    restarted = VoiceLibrary(library.records.db, library.states.engine, library.files.data_dir)
    assert await restarted.reconcile() == ([], [])
    assert (await create(restarted, ALICE, "Doomed")).name == "Doomed"


async def test_restart_sweeps_orphan_files_and_reports_lost_ones(library: VoiceLibrary) -> None:
    kept = await create(library, ALICE, "Kept")
    lost = await create(library, BOB, "Lost")
    (library.files.data_dir / lost.clip_path).unlink()  # an operator deleted a file by hand, in a
    await library.records.db.execute(
        "DELETE FROM voice_recordings WHERE voice_id = ?", lost.id
    )  # store
    # made before recordings were kept in it: nothing left to rebuild the voice from
    orphan_folder = library.files.root / str(ALICE)  # a crash after the rename, before the commit
    tag = "0123456789abcdef" * 2
    crashed = orphan_folder / f"{tag}.safetensors"  # complete: moved aside, never deleted
    orphans = [orphan_folder / f".tmp-{tag}.safetensors", orphan_folder / f".tmp-{tag}-{tag}.flac"]
    for path in [crashed, *orphans]:
        path.write_bytes(b"partial")
    # Not the store's: the folder's README, an operator's notes and backup, a stray folder.
    foreign = [
        library.files.root / "README.md",
        orphan_folder / "notes.txt",
        orphan_folder / f"{tag}.flac.bak",
        library.files.root / "backup" / f"{tag}.flac",
    ]
    for path in foreign:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"keep me")
    removed, missing = await library.reconcile()
    assert sorted(removed) == sorted(orphans)  # interrupted writes: never a voice
    assert [r.id for r in missing] == [lost.id]
    assert all(not p.exists() for p in [crashed, *orphans])
    assert [p.name for p in _quarantined(library)] == [crashed.name]
    assert all(p.read_bytes() == b"keep me" for p in foreign)
    assert (library.files.data_dir / kept.state_path).is_file()


def _quarantined(library: VoiceLibrary) -> list[Path]:
    folder = library.files.data_dir / "voices-quarantine"
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


async def test_start_against_an_empty_store_moves_the_voice_files_aside(
    library: VoiceLibrary, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """DATABASE_URL set before `db copy`, or pointing at the wrong database: the store holds
    no voice, the disk does. Nothing is deleted; the files are moved aside, and the log
    says where and why."""
    made = [await create(library, ALICE, "One"), await create(library, BOB, "Two")]
    files = {p.name: p.read_bytes() for p in stored_files(library)}
    assert len(files) == 4
    empty = await Database.open(tmp_path / "empty.db")
    try:
        fresh = VoiceLibrary(
            empty, library.states.engine, library.files.data_dir, VoiceLimits(quota=2)
        )
        with caplog.at_level("WARNING", logger="bot.storage.voice_files"):
            removed, _ = await fresh.reconcile()
    finally:
        await empty.close()
    assert removed == []
    moved = _quarantined(library)
    assert {p.name: p.read_bytes() for p in moved} == files  # every byte kept
    assert stored_files(library) == []  # out of the store's way
    for path in moved:
        assert path.stat().st_mode & 0o777 == 0o600
        for folder in path.relative_to(library.files.data_dir).parents[:-1]:
            assert (library.files.data_dir / folder).stat().st_mode & 0o777 == 0o700
    warning = next(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    assert "4 of 4" in warning and "holds no voices" in warning
    assert str(moved[0].parents[1]) in warning
    # the operator moves them back and points at the right store: all is as it was
    for path in moved:
        back = library.files.root / path.relative_to(moved[0].parents[1])
        back.parent.mkdir(parents=True, exist_ok=True)
        path.rename(back)
    assert (await library.reconcile())[0] == []
    assert all((library.files.data_dir / r.state_path).is_file() for r in made)


async def test_a_sweep_that_would_remove_most_files_moves_them_aside(
    library: VoiceLibrary, caplog: pytest.LogCaptureFixture
) -> None:
    kept = await create(library, ALICE, "Kept")
    folder = library.files.root / str(BOB)
    folder.mkdir(parents=True)
    strays = []
    for n in range(3):  # three voices' files that no row names: most of the store
        tag = f"{n:032x}"
        strays += [folder / f"{tag}.safetensors", folder / f"{tag}.flac"]
    for path in strays:
        path.write_bytes(b"a voice")
    with caplog.at_level("WARNING", logger="bot.storage.voice_files"):
        removed, _ = await library.reconcile()
    assert removed == []
    assert sorted(p.name for p in _quarantined(library)) == sorted(p.name for p in strays)
    assert (library.files.data_dir / kept.state_path).is_file()
    assert any("6 of 8" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
async def test_a_database_restored_from_an_older_backup_loses_no_voice(
    library: VoiceLibrary, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The store names some voices but not others (a backup older than the newest voices):
    those are moved aside, every byte of them, privately; none is deleted, however few."""
    older = [await create(library, ALICE, "One"), await create(library, ALICE, "Two")]
    backup = tmp_path / "backup.db"
    await library.records.db.execute("VACUUM INTO ?", str(backup))
    newer = await create(library, BOB, "Three")  # made after the backup
    files = {p.name: p.read_bytes() for p in stored_files(library)}
    newer_files = {Path(newer.state_path).name, Path(newer.clip_path).name}
    os.chmod(library.files.data_dir / newer.clip_path, 0o644)  # a restore that loosened a file
    restored = await Database.open(backup)
    try:
        after_restore = VoiceLibrary(restored, library.states.engine, library.files.data_dir)
        with caplog.at_level("INFO", logger="bot.storage.voice_files"):
            removed, _ = await after_restore.reconcile()
    finally:
        await restored.close()
    assert removed == []
    moved = _quarantined(library)
    assert {p.name for p in moved} == newer_files
    assert {p.name: p.read_bytes() for p in moved + stored_files(library)} == files
    assert all((library.files.data_dir / r.state_path).is_file() for r in older)
    for path in moved:
        assert path.stat().st_mode & 0o777 == 0o600
        for folder in path.relative_to(library.files.data_dir).parents[:-1]:
            assert (library.files.data_dir / folder).stat().st_mode & 0o777 == 0o700
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "2 of 6 voice files" in warning and str(moved[0].parents[1]) in warning
    assert "not deleted" in warning
    assert not [r for r in caplog.records if r.getMessage().startswith("removed")]


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
async def test_a_voice_deleted_while_this_process_missed_it_is_deleted_at_its_sweep(
    library: VoiceLibrary, tmp_path: Path
) -> None:
    """Another process sharing the store deleted voices (most of the files here) while this
    one was not listening: their files go at the next sweep, not aside. A voice still named
    stays, and a crashed clone's files are moved aside."""
    alice = [await create(library, ALICE, "One"), await create(library, ALICE, "Two")]
    bob = [await create(library, BOB, "Three"), await create(library, BOB, "Four")]
    for record in [*alice, bob[0]]:  # as `VoiceLibrary.delete` elsewhere: the row only
        await library.records.db.voices.delete(record)
    gone = sorted(
        library.files.data_dir / p for r in [*alice, bob[0]] for p in (r.state_path, r.clip_path)
    )
    crashed = library.files.root / str(BOB) / f"{'cd' * 16}.flac"
    crashed.write_bytes(b"a clone cut short")
    removed, _ = await library.reconcile()
    assert sorted(removed) == gone and not any(p.exists() for p in gone)
    assert stored_files(library) == sorted(
        library.files.data_dir / p for p in (bob[1].state_path, bob[1].clip_path)
    )
    assert [p.name for p in _quarantined(library)] == [crashed.name]


async def test_a_voice_from_another_model_is_rebuilt_on_first_use(library: VoiceLibrary) -> None:
    record = await create(library, ALICE, "Mine")
    await library.use(ALICE, "mine", guild_id=None)
    await library.records.db.execute(
        "UPDATE voices SET model_fingerprint = 'older-model' WHERE id = ?", record.id
    )
    state = library.files.data_dir / record.state_path
    os.utime(state, (0, 0))
    spec = await voice_for(library, ALICE, guild_id=7)
    assert spec == str(state)
    assert state.stat().st_mtime > 0  # written anew
    rebuilt = await library.records.db.voices.get_by_id(record.id)
    assert rebuilt is not None and rebuilt.model_fingerprint == library.states.engine.fingerprint
    assert len(await library.states.engine.synthesize("Hi", voice=spec)) > 0


async def test_a_recording_is_bounded_before_a_rebuild_decodes_it(
    library: VoiceLibrary, caplog: pytest.LogCaptureFixture
) -> None:
    """The kept recording (a shared store's, maybe) is read by the one clip reader: one whose
    header promises ten minutes is refused before decoding, and the member falls back to
    the default voice."""
    record = await create(library, ALICE, "Mine")
    await library.use(ALICE, "mine", guild_id=None)
    await library.records.db.execute(
        "UPDATE voices SET model_fingerprint = 'older-model' WHERE id = ?", record.id
    )
    state = library.files.data_dir / record.state_path
    before = state.read_bytes()
    ten_minutes = np.zeros(24_000 * 600, np.float32)
    soundfile.write(library.files.data_dir / record.clip_path, ten_minutes, 24_000, format="FLAC")
    assert await voice_for(library, ALICE, guild_id=7) is None
    assert state.read_bytes() == before  # not rebuilt
    assert any("is missing or damaged" in r.getMessage() for r in caplog.records)


async def test_voice_choice_order(library: VoiceLibrary) -> None:
    mine = await create(library, ALICE, "Mine")
    assert await voice_for(library, ALICE, 7) is None  # the operator's DEFAULT_VOICE
    await library.records.db.guilds.set_default_voice(7, "marius")
    assert await voice_for(library, ALICE, 7) == "marius"
    await library.use(ALICE, "Alba", guild_id=None)
    assert await voice_for(library, ALICE, 7) == "alba"
    await library.use(ALICE, "mine", guild_id=7)
    assert await voice_for(library, ALICE, 7) == str(library.files.data_dir / mine.state_path)
    assert await voice_for(library, ALICE, 8) == "alba"  # other servers keep the global one
    with pytest.raises(VoiceLibraryError, match="no voice named “nobody”"):
        await library.use(ALICE, "nobody", guild_id=7)


async def test_members_see_and_touch_only_their_own_voices(library: VoiceLibrary) -> None:
    alices = await create(library, ALICE, "Secret")
    for attempt in (
        library.records.own_voice(BOB, "Secret"),
        library.use(BOB, "Secret", guild_id=None),
        library.records.rename(BOB, "Secret", "Stolen"),
        library.delete(BOB, "Secret"),
    ):
        with pytest.raises(VoiceLibraryError, match="no voice named “Secret”"):
            await attempt
    assert await library.records.list_for(BOB) == []
    assert [v.name for v in await library.records.list_for(ALICE)] == ["Secret"]
    assert (library.files.data_dir / alices.state_path).is_file()
    # even a choice row pointing at someone else's voice is ignored
    await library.records.db.choices.set(BOB, None, voice_id=alices.id)
    assert await voice_for(library, BOB, None) is None


@pytest.mark.slow
async def test_rename_delete_and_forget(library: VoiceLibrary) -> None:
    one = await create(library, ALICE, "One")
    await create(library, ALICE, "Two")
    with pytest.raises(VoiceLibraryError, match="already have a voice named “two”"):
        await library.records.rename(ALICE, "One", "two")
    assert (await library.records.rename(ALICE, "one", "First")).name == "First"
    deleted = await library.delete(ALICE, "FIRST")
    assert deleted.id == one.id
    assert not (library.files.data_dir / one.state_path).exists()
    assert not (library.files.data_dir / one.clip_path).exists()
    await library.use(ALICE, "two", guild_id=None)
    bobs = await create(library, BOB, "Bob's")
    assert await library.forget_user(ALICE) == 1
    assert await library.records.list_for(ALICE) == []
    assert await library.records.db.choices.for_user(ALICE, None) is None
    assert not (library.files.root / str(ALICE)).exists()
    assert (library.files.data_dir / bobs.state_path).is_file()  # nobody else's data goes


async def test_weights_without_cloning_refuse_clearly(
    library: VoiceLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(library.states.engine, "_can_clone", False)
    with pytest.raises(UnusableVoiceError, match="HF_TOKEN"):
        await create(library, ALICE, "Mine")
    assert stored_files(library) == [] and await library.records.list_for(ALICE) == []


def test_state_cache_is_bounded_by_count_and_bytes() -> None:
    def state(kilobytes: int) -> dict:
        return {"layer": {"cache": torch.zeros(kilobytes * 256, dtype=torch.float32)}}

    cache = StateCache(max_items=3, max_bytes=10 * 1024)
    for key in "abc":
        cache.put(key, state(2))
    assert len(cache) == 3 and cache.bytes == 6 * 1024
    assert cache.get("a") is not None  # a is now the most recent
    cache.put("d", state(2))  # over the count: b (least recent) goes
    assert "b" not in cache and "a" in cache
    cache.put("e", state(6))  # 12 KB, over the bytes: c (least recent) goes
    assert sorted(cache._items) == ["a", "d", "e"] and cache.bytes == 10 * 1024
    cache.put("f", state(4))  # 14 KB: a and d go
    assert sorted(cache._items) == ["e", "f"] and cache.bytes == 10 * 1024
    cache.pop("e")
    assert cache.bytes == 4 * 1024 and cache.get("e") is None
    assert cache.hits == 1 and cache.misses == 1


class HeldUpload:
    """An attachment whose download waits for the test: a slow CDN, held in its hands (served
    over TLS: /clone reads it with the capped reader)."""

    def __init__(self, cdn: CDN, data: bytes = CLIP) -> None:
        name = f"clip{next(_uploads)}.wav"
        self.served = cdn.serve(name, data, held=True)
        self.url, self.size = cdn.url(name), len(data)
        self.started, self.release = self.served.started, self.served.release

    @property
    def reads(self) -> int:
        return self.served.reads


_uploads = itertools.count()


class NotInVoice:
    """Where the service would speak a sample: the member is in no voice channel."""

    def __init__(self, db: Database) -> None:
        self.blocks = BlockService(db)  # no one is blocked
        self.planner: Any = None  # (a clone needs no plan)

    def speaking_channel(self, *_: object) -> None:
        raise UserError("not in a voice channel")


@pytest.mark.slow
async def test_clones_are_admitted_before_downloading_per_member_server_and_in_all(
    library: VoiceLibrary,
) -> None:
    """Downloads and decodes used to start before any limit, and wait without bound behind
    the member's lock. Now a clone is admitted first, or refused at once, unread."""
    async with running_cdn() as cdn:
        await _admitted_before_downloading(library, cdn)


async def _admitted_before_downloading(library: VoiceLibrary, cdn: CDN) -> None:
    speech = NotInVoice(library.records.db)
    service = VoiceService(
        library,
        speech,  # type: ignore[arg-type]
        library.states.engine,
        cdn.client_ssl,
        planner=speech.planner,
        blocks=speech.blocks,
    )

    async def progress(_: str) -> None:
        return None

    def clone(user: int, guild: int, upload: HeldUpload) -> Awaitable[Reply]:
        member, server = discord.Object(user), discord.Object(guild)
        return service.clone(member, server, f"v{user}", upload, True, progress)  # type: ignore[arg-type]

    held: dict[int, tuple[HeldUpload, asyncio.Task[Reply]]] = {}
    for user, guild in ((ALICE, 1), (BOB, 1), (303, 2), (404, 2)):  # two servers' worth
        upload = HeldUpload(cdn)
        held[user] = (upload, asyncio.create_task(clone(user, guild, upload)))
        await upload.started.wait()
    refused = [
        (ALICE, 3, "already making a voice"),
        (505, 1, "2 voices are being made in this server"),
        (606, 3, "busy making other voices"),
    ]
    for user, guild, message in refused:
        upload = HeldUpload(cdn)
        with pytest.raises(VoiceLibraryError, match=message):
            await asyncio.wait_for(clone(user, guild, upload), 30)  # (it used to wait for good)
        assert upload.reads == 0  # refused before any download
    upload, task = held.pop(ALICE)
    upload.release.set()
    assert "is ready" in (await task).content
    for _, task in held.values():  # given up while downloading: their places are free again
        task.cancel()
    await asyncio.gather(*(task for _, task in held.values()), return_exceptions=True)
    for upload, _ in held.values():  # the CDN's side of those downloads still waits: without
        upload.release.set()  # this its close waits for them, aiohttp's 60 s shutdown_timeout
    for user, guild in ((505, 1), (606, 3)):
        upload = HeldUpload(cdn)
        upload.release.set()
        assert "is ready" in (await clone(user, guild, upload)).content


async def test_clips_are_decoded_on_one_low_priority_thread(
    library: VoiceLibrary, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the default executor, which speech shares: one thread, niced, clips in turn."""
    seen: list[tuple[str, int]] = []
    real = clips.prepare

    def prepare(data: bytes, limits: clips.ClipLimits) -> np.ndarray:
        me = threading.current_thread()
        seen.append((me.name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        return real(data, limits)

    monkeypatch.setattr(clips, "prepare", prepare)
    await asyncio.gather(create(library, ALICE, "One"), create(library, BOB, "Two"))
    assert len(seen) == 2 and len(set(seen)) == 1
    name, nice = seen[0]
    assert name.startswith("clip-decode") and nice >= DECODE_NICE
