"""Audio of short phrases said again and again ("Alice said"), rendered once and kept.

An announced message starts with its lead phrase, which is the same audio every time for
the same member name, voice and model. Played from this cache, it leaves at once while the
model works on the body behind it, so the first audio no longer waits for the model at all.
Kept in memory (least recently used first out) and on disk under
`DATA_DIR/phrases/<model fingerprint>/<voice hash>/<text hash>.npy` (0700 folders, 0600
files), so it survives restarts; deleting a voice deletes its phrases.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path

import numpy as np

from bot.db import make_private_dir

log = logging.getLogger(__name__)

MAX_PHRASE_CHARS = 60  # only short phrases: a lead, not a message
MAX_PHRASE_SAMPLES = 24_000 * 6  # and their audio stays short (6 s at 24 kHz)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class PhraseCache:
    """(voice, phrase) -> 24 kHz float32 audio; thread-safe, bounded in memory and size."""

    def __init__(self, folder: Path, fingerprint: str, max_items: int = 512) -> None:
        self.folder = folder / fingerprint
        self.max_items = max_items
        self._memory: collections.OrderedDict[tuple[str, str], np.ndarray] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    def _path(self, voice: str, phrase: str) -> Path:
        return self.folder / _digest(voice) / f"{_digest(phrase)}.npy"

    def in_memory(self, voice: str, phrase: str) -> np.ndarray | None:
        """The phrase's audio if it is in memory (no I/O: safe on the event loop)."""
        key = (voice, phrase)
        with self._lock:
            audio = self._memory.get(key)
            if audio is not None:
                self._memory.move_to_end(key)
            return audio

    def get(self, voice: str, phrase: str) -> np.ndarray | None:
        """The phrase's audio from memory, else from disk (I/O: call it off the loop)."""
        audio = self.in_memory(voice, phrase)
        if audio is not None:
            return audio
        key = (voice, phrase)
        try:
            audio = np.load(self._path(voice, phrase), allow_pickle=False)
        except (OSError, ValueError):
            return None
        if audio.dtype != np.float32 or audio.ndim != 1 or len(audio) > MAX_PHRASE_SAMPLES:
            return None
        self._remember(key, audio)
        return audio

    def put(self, voice: str, phrase: str, audio: np.ndarray) -> None:
        """Keep a rendered phrase (in memory, and on disk if the disk lets us)."""
        if len(phrase) > MAX_PHRASE_CHARS or not 0 < len(audio) <= MAX_PHRASE_SAMPLES:
            return
        audio = np.ascontiguousarray(audio, dtype=np.float32)
        self._remember((voice, phrase), audio)
        path = self._path(voice, phrase)
        try:
            make_private_dir(path.parent)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(handle, "wb") as file:
                np.save(file, audio, allow_pickle=False)
            os.replace(temporary, path)
        except OSError as error:  # a full disk costs the cache, never the speech
            log.warning("could not keep a phrase on disk: %s", error)

    @property
    def bytes(self) -> int:
        """Memory held by the phrases kept in memory."""
        with self._lock:
            return sum(audio.nbytes for audio in self._memory.values())

    def forget_voice(self, voice: str) -> None:
        """Drop every phrase in `voice` (the voice was deleted or rebuilt)."""
        with self._lock:
            for key in [k for k in self._memory if k[0] == voice]:
                del self._memory[key]
        shutil.rmtree(self.folder / _digest(voice), ignore_errors=True)

    def _remember(self, key: tuple[str, str], audio: np.ndarray) -> None:
        with self._lock:
            self._memory[key] = audio
            self._memory.move_to_end(key)
            while len(self._memory) > self.max_items:
                self._memory.popitem(last=False)
