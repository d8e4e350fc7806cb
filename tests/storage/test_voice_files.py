"""The voice store's files alone (`VoiceFiles`), no database nor model: the sweep deletes only
interrupted writes and deleted voices' files, moves any other stray voice file aside, and never
touches a named voice (its other models' states included) or a file not the store's; a deleted
voice's files are removed only inside the store. (With the database and the model:
tests/synthesis/test_voices.py.)"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

import pytest

from bot.storage.voice_files import VoiceFiles, model_state_path

NAMED, DELETED, CRASHED = "a" * 32, "d" * 32, "c" * 32


def write(path: Path, data: bytes = b"x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def stored(files: VoiceFiles) -> set[Path]:
    return {p for p in files.root.rglob("*") if p.is_file()}


async def deleted_tags(tags: Iterable[str]) -> set[str]:
    """The store's answer: of these tags, the deleted voices'."""
    return set(tags) & {DELETED}


async def test_the_sweep_deletes_only_interrupted_writes_and_deleted_voices(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = VoiceFiles(tmp_path)
    folder = files.root / "42"
    named = [write(folder / f"{NAMED}.safetensors"), write(folder / f"{NAMED}.flac")]
    named.append(write(model_state_path(named[0], "0123456789abcdef")))
    interrupted = write(folder / f".tmp-{CRASHED}.safetensors")
    deleted = [write(folder / f"{DELETED}.safetensors"), write(folder / f"{DELETED}.flac")]
    crashed = write(folder / f"{CRASHED}.flac", b"a clone cut short")
    foreign = [write(files.root / "README.md"), write(folder / "notes.txt")]
    removed = await files.sweep(
        [(files.relative(named[0]), files.relative(named[1]))], deleted_tags
    )
    assert sorted(removed) == sorted([interrupted, *deleted])
    assert stored(files) == {*named, *foreign}
    (aside,) = (tmp_path / "voices-quarantine").rglob("*.flac")
    assert aside.name == crashed.name and aside.read_bytes() == b"a clone cut short"
    assert aside.stat().st_mode & 0o777 == 0o600
    assert "1 of 4 voice files on disk are named by no voice" in caplog.text


async def test_a_sweep_while_running_spares_young_files(tmp_path: Path) -> None:
    files = VoiceFiles(tmp_path)
    young = write(files.root / "42" / f".tmp-{CRASHED}.safetensors")
    old = write(files.root / "42" / f"{DELETED}.flac")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert await files.sweep([], deleted_tags, min_age_s=600) == [old]
    assert stored(files) == {young}


async def test_a_deleted_voices_files_are_removed_only_inside_the_store(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    files = VoiceFiles(tmp_path / "data")
    state = write(files.root / "42" / f"{NAMED}.safetensors")
    other = write(model_state_path(state, "0123456789abcdef"))
    clip = write(files.root / "42" / f"{NAMED}.flac")
    outside = write(tmp_path / "elsewhere.flac")
    assert await files.drop(files.relative(state), "../elsewhere.flac") is None
    assert outside.is_file() and state.is_file()
    assert "outside the voice store: left alone" in caplog.text
    assert await files.drop(files.relative(state), files.relative(clip)) == (state, [other])
    assert stored(files) == set()
