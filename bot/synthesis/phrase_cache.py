"""Audio of short phrases said again and again ("Alice said"), rendered once and kept.

An announced message starts with its lead phrase, which is the same audio every time for
the same member name, voice and model. Played from this cache, it leaves at once while the
model works on the body behind it, so the first audio no longer waits for the model at all.
Kept in memory (least recently used first out, within `max_memory_bytes`) and on disk under
`DATA_DIR/phrases/<model fingerprint>/<voice hash>/<text hash>.npy` (0700 folders, 0600
files), so it survives restarts. A phrase at another speaking rate is another entry, its audio
already stretched (`<text hash>-x<rate in hundredths>.npy`), as is one at another pitch
(`-p+3`, in semitones). The disk copy is bounded by
size: past `max_disk_bytes` (every model's folder counted) the least recently used files go.
Deleting a voice deletes its phrases under every model; forgetting a member deletes every
phrase (`forget_all`), since a lead names a member and the cache cannot tell whose name it
holds, nor the names they had.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np

from bot.core.files import make_private_dir
from bot.synthesis.audio_files import MODEL_RATE

log = logging.getLogger(__name__)

MAX_PHRASE_CHARS = 60  # only short phrases: a lead, not a message
MAX_PHRASE_SAMPLES = MODEL_RATE * 6  # and their audio stays short (6 s at 24 kHz)
# ~700 one-second leads ("Alice said" is ~96 KB of float32): every member of a busy server
MAX_DISK_BYTES = 64 * 1024 * 1024
# The same in memory. A bound by count was no bound: 512 of the longest phrases (6 s said at
# half speed, 12 s, 1.1 MB) held 590 MB.
MAX_MEMORY_BYTES = 64 * 1024 * 1024


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _rate_key(rate: float) -> float:
    return round(rate * 100) / 100


def _longest(rate: float) -> int:
    """The most samples of a phrase said at `rate` (slower speech is longer)."""
    return round(MAX_PHRASE_SAMPLES / min(rate, 1.0))


class PhraseCache:
    """(voice, phrase, rate, pitch) -> 24 kHz float32 audio; thread-safe, bounded in bytes in memory
    and on disk."""

    def __init__(
        self,
        folder: Path,
        fingerprint: str,
        max_memory_bytes: int = MAX_MEMORY_BYTES,
        max_disk_bytes: int = MAX_DISK_BYTES,
    ) -> None:
        self.root = folder  # every model's phrases: the disk bound counts them all
        self.folder = folder / fingerprint
        self.max_memory_bytes = max_memory_bytes
        self.max_disk_bytes = max_disk_bytes
        # (voice, phrase, rate, pitch) -> audio
        self._memory: collections.OrderedDict[tuple[str, str, float, int], np.ndarray] = (
            collections.OrderedDict()
        )
        self._memory_bytes = 0  # the audio in `_memory`
        self._lock = threading.Lock()  # memory only: taken on the event loop, never over I/O
        # the files on disk, least recently used first, with their sizes (None: not read yet)
        self._disk: collections.OrderedDict[Path, int] | None = None
        self._disk_bytes = 0
        self._disk_lock = threading.Lock()  # the disk index: taken in threads only

    def _path(self, voice: str, phrase: str, rate: float = 1.0, pitch: int = 0) -> Path:
        tempo = "" if round(rate * 100) == 100 else f"-x{round(rate * 100)}"
        tempo += f"-p{pitch:+d}" if pitch else ""
        return self.folder / _digest(voice) / f"{_digest(phrase)}{tempo}.npy"

    def in_memory(
        self, voice: str, phrase: str, *, rate: float = 1.0, pitch: int = 0
    ) -> np.ndarray | None:
        """The phrase's audio if it is in memory (no I/O: safe on the event loop)."""
        key = (voice, phrase, _rate_key(rate), pitch)
        with self._lock:
            audio = self._memory.get(key)
            if audio is not None:
                self._memory.move_to_end(key)
            return audio

    def get(
        self, voice: str, phrase: str, *, rate: float = 1.0, pitch: int = 0
    ) -> np.ndarray | None:
        """The phrase's audio from memory, else from disk (I/O: call it off the loop)."""
        audio = self.in_memory(voice, phrase, rate=rate, pitch=pitch)
        if audio is not None:
            return audio
        key = (voice, phrase, _rate_key(rate), pitch)
        path = self._path(voice, phrase, rate, pitch)
        try:
            audio = np.asarray(np.load(path, allow_pickle=False))
        except (OSError, ValueError):
            return None
        if audio.dtype != np.float32 or audio.ndim != 1 or len(audio) > _longest(rate):
            return None
        self._remember(key, audio)
        self._used(path)
        return audio

    def put(
        self, voice: str, phrase: str, audio: np.ndarray, *, rate: float = 1.0, pitch: int = 0
    ) -> None:
        """Keep a rendered phrase, its audio at `rate` and `pitch` (in memory, and on disk if
        the disk lets us)."""
        if len(phrase) > MAX_PHRASE_CHARS or not 0 < len(audio) <= _longest(rate):
            return
        audio = np.ascontiguousarray(audio, dtype=np.float32)
        self._remember((voice, phrase, _rate_key(rate), pitch), audio)
        path = self._path(voice, phrase, rate, pitch)
        try:
            make_private_dir(path.parent)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(handle, "wb") as file:
                np.save(file, audio, allow_pickle=False)
            os.replace(temporary, path)
            self._added(path)
        except OSError as error:  # a full disk costs the cache, never the speech
            log.warning("could not keep a phrase on disk: %s", error)

    @property
    def bytes(self) -> int:
        """Memory held by the phrases kept in memory."""
        with self._lock:
            return self._memory_bytes

    @property
    def disk_bytes(self) -> int:
        """Bytes of the phrase files on disk, every model's (I/O the first time)."""
        with self._disk_lock:
            self._index()
            return self._disk_bytes

    def forget_voice(self, voice: str) -> None:
        """Drop every phrase in `voice` (the voice was deleted or rebuilt), under every model."""
        with self._lock:
            for key in [k for k in self._memory if k[0] == voice]:
                self._memory_bytes -= self._memory.pop(key).nbytes
        with self._disk_lock:
            for folder in drop_voice(self.root, voice):
                if self._disk is not None:
                    for path in [p for p in self._disk if p.parent == folder]:
                        self._disk_bytes -= self._disk.pop(path)

    def forget_all(self) -> None:
        """Drop every phrase, in memory and on disk (a member asked to be forgotten)."""
        with self._lock:
            self._memory.clear()
            self._memory_bytes = 0
        with self._disk_lock:
            drop_all(self.root)
            self._disk, self._disk_bytes = collections.OrderedDict(), 0

    # ---- the disk bound (these run in threads, off the event loop) ----------------------------
    def _index(self) -> collections.OrderedDict[Path, int]:
        """The phrase files on disk, least recently used first; read once (hold _disk_lock)."""
        if self._disk is None:
            found: list[tuple[float, Path, int]] = []
            for path in self.root.glob("*/*/*.npy"):
                try:
                    stat = path.stat()
                except OSError:
                    continue
                found.append((stat.st_mtime, path, stat.st_size))
            found.sort()
            self._disk = collections.OrderedDict((path, size) for _, path, size in found)
            self._disk_bytes = sum(size for _, _, size in found)
        return self._disk

    def _used(self, path: Path) -> None:
        """A file was read: the most recently used now (its mtime says so after a restart)."""
        with self._disk_lock:
            index = self._index()
            if path in index:
                index.move_to_end(path)
        with contextlib.suppress(OSError):
            os.utime(path)

    def _added(self, path: Path) -> None:
        """A file was written: count it, then evict the least recently used past the bound."""
        try:
            size = path.stat().st_size
        except OSError:
            return
        with self._disk_lock:
            index = self._index()
            self._disk_bytes += size - index.pop(path, 0)
            index[path] = size
            while self._disk_bytes > self.max_disk_bytes and len(index) > 1:
                oldest, oldest_size = index.popitem(last=False)
                self._disk_bytes -= oldest_size
                with contextlib.suppress(OSError):  # (memory has its own bound)
                    oldest.unlink(missing_ok=True)
                    oldest.parent.rmdir()  # when it was the voice's last phrase

    def _remember(self, key: tuple[str, str, float, int], audio: np.ndarray) -> None:
        with self._lock:
            replaced = self._memory.pop(key, None)
            if replaced is not None:
                self._memory_bytes -= replaced.nbytes
            self._memory[key] = audio
            self._memory_bytes += audio.nbytes
            while self._memory_bytes > self.max_memory_bytes and self._memory:
                self._memory_bytes -= self._memory.popitem(last=False)[1].nbytes


def drop_voice(root: Path, voice: str) -> list[Path]:
    """Delete `voice`'s phrases under every model's folder of `root` (DATA_DIR/phrases), also
    without a cache (the CLI deletes voices without loading a model); the folders removed."""
    folders = [model / _digest(voice) for model in root.glob("*") if model.is_dir()]
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return folders


def drop_all(root: Path) -> None:
    """Delete every phrase under `root` (DATA_DIR/phrases); the folder itself stays."""
    for model in root.glob("*"):
        if model.is_dir():
            shutil.rmtree(model, ignore_errors=True)
