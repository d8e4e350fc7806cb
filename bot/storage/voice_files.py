"""The voice store's files on this machine: `DATA_DIR/voices/<user id>/<tag>.safetensors` (a
model state), `<tag>.flac` (a copy of the recording) and `<tag>.model-<fingerprint>.safetensors`
(the state for another language's model). No database here: the records say which files a
voice owns (`bot/storage/voice_records.py`); this module only writes, moves and removes them.

Files are private (folders 0700, files 0600), written whole and synced before any record names
them. A member's voice is the one thing that cannot be made again, so the sweep deletes no
voice's files but a deleted voice's: see `VoiceFiles.sweep`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from bot.core.files import make_private_dir, write_atomically
from bot.storage.database import file_tag

log = logging.getLogger(__name__)

QUARANTINE = "voices-quarantine"  # under DATA_DIR, beside voices/
# A sweep while the bot runs leaves younger files alone: they may be a clone being written,
# whose row is not in yet (a clone takes seconds; this is far longer).
SWEEP_MIN_AGE_S = 600.0


@dataclass(frozen=True)
class NewVoiceFiles:
    """Where a new voice's files go: the state is written to `tmp_state`, then renamed."""

    state: Path
    clip: Path
    tmp_state: Path

    @property
    def all(self) -> list[Path]:
        return [self.tmp_state, self.state, self.clip]


class VoiceFiles:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir

    @property
    def root(self) -> Path:
        return self.data_dir / "voices"

    def path(self, relative: str) -> Path:
        """A record's path (relative to DATA_DIR) on this machine."""
        return self.data_dir / relative

    def relative(self, path: Path) -> str:
        """How a record names `path`."""
        return str(path.relative_to(self.data_dir))

    def new_voice(self, owner_id: int) -> NewVoiceFiles:
        """Fresh names for a new voice of `owner_id`, in their folder (`make_folder`)."""
        folder = self.root / str(owner_id)
        tag = uuid.uuid4().hex
        return NewVoiceFiles(
            folder / f"{tag}.safetensors",
            folder / f"{tag}.flac",
            folder / f".tmp-{tag}.safetensors",
        )

    @staticmethod
    async def make_folder(new: NewVoiceFiles) -> None:
        await asyncio.to_thread(make_private_dir, new.state.parent)

    async def finish_voice(self, new: NewVoiceFiles, flac: bytes) -> None:
        """Both files complete, private and synced, before any row names them."""
        await asyncio.to_thread(_finish_files, new.tmp_state, new.state, new.clip, flac)

    @staticmethod
    def tmp_beside(path: Path) -> Path:
        """A temporary name for a state being made for `path` (the sweep knows it)."""
        return path.with_name(f".tmp-{uuid.uuid4().hex}.safetensors")

    @staticmethod
    async def finish_state(tmp: Path, path: Path) -> None:
        """A state written at `tmp`: private, synced, then renamed to `path`."""
        await asyncio.to_thread(_finish_state, tmp, path)

    @staticmethod
    async def write_cached(path: Path, data: bytes) -> None:
        """A machine's copy of what the store holds (a state, a recording): private, complete."""
        await asyncio.to_thread(_write_cached, path, data)

    @staticmethod
    async def read(path: Path) -> bytes:
        return await asyncio.to_thread(path.read_bytes)

    @staticmethod
    async def exists(path: Path) -> bool:
        return await asyncio.to_thread(path.is_file)

    @staticmethod
    async def remove(paths: list[Path]) -> None:
        await asyncio.to_thread(_remove, paths)

    async def drop(self, state_path: str, clip_path: str) -> tuple[Path, list[Path]] | None:
        """Remove this machine's files of a deleted voice (its state, its other models'
        states, its recording): (its state, the other states), whose caches the caller
        forgets; None (nothing removed) when a path points outside the voice store."""
        root = self.root.resolve()
        state, clip = self.path(state_path), self.path(clip_path)
        if not all(p.resolve().is_relative_to(root) for p in (state, clip)):
            log.warning("a deleted voice's files are outside the voice store: left alone")
            return None
        others = await asyncio.to_thread(_model_states, state)  # other languages' states
        await asyncio.to_thread(_remove, [state, *others, clip])
        return state, others

    async def remove_member(self, owner_id: int) -> None:
        """A forgotten member's folder, once their voices' files are gone."""
        await asyncio.to_thread(_remove_tree, self.root / str(owner_id))

    async def sweep(
        self,
        named: Iterable[tuple[str, str]],
        deleted_tags: Callable[[Iterable[str]], Awaitable[set[str]]],
        min_age_s: float = 0.0,
    ) -> list[Path]:
        """Sweep the store's files that no voice names (`named`: each voice's state and clip
        paths, as its record says), of those last changed at least `min_age_s` ago; the files
        deleted.

        Deleted are only files that never were a voice or whose member deleted it: leftovers
        of an interrupted write (`.tmp-…`), and the files of a voice deleted while this
        process was not listening (`deleted_tags`: of these tags, the deleted voices'). Every
        other such file is moved aside to `DATA_DIR/voices-quarantine/<time>/`, private, and a
        warning says how many and where: a clone cut short by a crash cannot be told from the
        voices that a database restored from an older backup (or the wrong one) does not name,
        and a member's voice is the one thing that cannot be made again."""
        named = list(named)
        referenced = {self.path(p) for pair in named for p in pair}
        for state_path, _ in named:  # other languages' states of a voice are its own too
            referenced.update(await asyncio.to_thread(_model_states, self.path(state_path)))
        orphans = await asyncio.to_thread(_files_not_in, self.root, referenced, min_age_s)
        if not orphans:
            return []
        deleted = await deleted_tags(file_tag(p) for p in orphans)
        doomed = [p for p in orphans if p.name.startswith(".tmp-") or file_tag(p) in deleted]
        await asyncio.to_thread(_remove, doomed)
        for path in doomed:
            why = "an interrupted write" if path.name.startswith(".tmp-") else "a deleted voice's"
            log.info("removed %s: %s", path, why)
        aside = [p for p in orphans if p not in doomed]
        if aside:
            present = len(await asyncio.to_thread(_files_not_in, self.root, set()))
            folder = await asyncio.to_thread(_quarantine, self.data_dir, self.root, aside)
            log.warning(
                "%d of %d voice files on disk are named by no voice in the store%s: moved "
                "aside to %s, not deleted. A clone cut short by a crash leaves two; more mean "
                "a database restored from an older backup or the wrong one (is DATABASE_URL "
                "right, or was it set before `db copy`?). Move them back into %s once the "
                "store is right, or delete them.",
                len(aside),
                present,
                "" if named else " (it holds no voices)",
                folder,
                self.root,
            )
        return doomed


def model_state_path(state: Path, fingerprint: str) -> Path:
    """Where a voice's state for another language's model lives, beside its own state."""
    return state.with_name(f"{state.stem}.model-{fingerprint}.safetensors")


def _model_states(state: Path) -> list[Path]:
    return sorted(state.parent.glob(f"{state.stem}.model-*.safetensors"))


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as file:
        os.fsync(file.fileno())


def _finish_state(tmp_state: Path, state_path: Path) -> None:
    os.chmod(tmp_state, 0o600)
    _fsync_file(tmp_state)
    tmp_state.replace(state_path)
    _fsync_dir(state_path.parent)


def _write_cached(path: Path, data: bytes) -> None:
    make_private_dir(path.parent)
    write_atomically(path, data)
    _fsync_dir(path.parent)


def _finish_files(tmp_state: Path, state_path: Path, clip_path: Path, flac: bytes) -> None:
    write_atomically(clip_path, flac)
    _finish_state(tmp_state, state_path)


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _quarantine(data_dir: Path, root: Path, paths: list[Path]) -> Path:
    """Move `paths` (files under `root`) to a new private folder under
    `data_dir/voices-quarantine/`, keeping their place under `root`; that folder."""
    base = data_dir / QUARANTINE
    make_private_dir(base)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    folder = base / stamp
    for n in itertools.count(2):
        try:
            folder.mkdir(mode=0o700)
            break
        except FileExistsError:
            folder = base / f"{stamp}-{n}"
    os.chmod(folder, 0o700)
    for path in paths:
        target = folder / path.relative_to(root)
        make_private_dir(target.parent)
        shutil.move(path, target)
        os.chmod(target, 0o600)  # private even if a restore loosened it
    for place in {folder, *(folder / p.relative_to(root).parent for p in paths)}:
        _fsync_dir(place)
    _fsync_dir(base)
    return folder


def _remove_tree(folder: Path) -> None:
    if folder.is_dir():
        for path in folder.iterdir():
            path.unlink(missing_ok=True)
        folder.rmdir()


# What the store writes: voices/<user id>/<hex>.safetensors|.flac, and .tmp-… while writing.
_STORE_FILE = re.compile(
    r"^(\.tmp-)?[0-9a-f]{32}(-[0-9a-f]{32})?(\.model-[0-9a-f]{16})?\.(safetensors|flac)$"
)


def _files_not_in(root: Path, referenced: set[Path], min_age_s: float = 0.0) -> list[Path]:
    """The store's own files that no row names, changed at least `min_age_s` ago. Anything
    else in the folder (a README, an operator's backup) is not the store's to remove."""
    if not root.is_dir():
        return []
    newest = time.time() - min_age_s
    return [
        path
        for folder in root.iterdir()
        if folder.is_dir() and folder.name.isdigit()
        for path in folder.iterdir()
        if path.is_file()
        and _STORE_FILE.match(path.name)
        and path not in referenced
        and (not min_age_s or path.stat().st_mtime <= newest)
    ]
