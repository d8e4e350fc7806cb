"""The voice library: members' cloned voices, where a voice's record, its files and its model
states come together (cloning, deleting, forgetting a member, the start-up sweep, following
other processes' deletions). Each part has a home of its own:

- `VoiceRecords` (bot/storage/voice_records.py): names, the quota, ownership, voice choices;
- `VoiceFiles` (bot/storage/voice_files.py): the files, written atomically, and the sweep that
  deletes no member's voice but a deleted one's (the rest goes to a quarantine);
- `follow_deletions` (bot/storage/voice_deletions.py): PostgreSQL's notices of deletions;
- `VoiceStates` (bot/synthesis/voice_states.py): the model states per model fingerprint.

A voice is a row with its trimmed recording (FLAC) in the store, plus two files under
`DATA_DIR/voices/<user id>/`: `<tag>.safetensors` (the model state) and `<tag>.flac` (a copy
of the recording). The files are written and synced first, then the row and the recording are
inserted in one short write: a failure removes the files, and a crash between the two leaves
only files that no row names, which `reconcile()` moves aside at the next start (the sweep
deletes no voice's files but a deleted voice's: see `VoiceFiles.sweep`).

With several processes sharing PostgreSQL, the store is the authority and each machine's
files are a cache: a voice cloned elsewhere gets its state from the store, else rebuilds it
from the recording (`VoiceStates`); a deletion is announced (NOTIFY) and every process drops
its copies (`follow_deletions`).

Model work (clones, rebuilds) goes through the shared `DeadlineScheduler` as background work.
Data is private: folders 0700, files 0600.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import io
import logging
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import soundfile

from bot.i18n.translate import tr
from bot.storage.database import Database, VoiceRecord, utc_now
from bot.storage.voice_deletions import DeletedVoice, follow_deletions
from bot.storage.voice_files import SWEEP_MIN_AGE_S, VoiceFiles
from bot.storage.voice_records import VoiceLibraryError, VoiceRecords, keep_old_recordings
from bot.synthesis import clip as clips
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.voice_states import VoiceStates

if TYPE_CHECKING:  # the model's module imports torch: seconds the CLI's list/delete skip
    from bot.synthesis.engine import TTSEngine
    from bot.synthesis.model_pool import ModelPool

log = logging.getLogger(__name__)

Progress = Callable[[str], Awaitable[None]]
DECODE_NICE = 10  # the clip-decoding thread's niceness (0: as speech; 19: the lowest)


@dataclass(frozen=True)
class VoiceLimits:
    quota: int = 3
    clip: clips.ClipLimits = field(default_factory=clips.ClipLimits)
    # clones in flight (download, decode, model work): one per member, and at most these
    clones_per_server: int = 2
    clones_in_all: int = 4


_decoder: concurrent.futures.ThreadPoolExecutor | None = None
_decoder_lock = threading.Lock()


def _lower_priority() -> None:
    """The decoding thread yields the CPU to speech: Linux gives each thread its own nice."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), DECODE_NICE)


def decoder() -> concurrent.futures.ThreadPoolExecutor:
    """The one thread that decodes uploaded clips, at a low priority: clips wait for each
    other there, never for or ahead of speech (the default executor serves everything)."""
    global _decoder
    with _decoder_lock:
        if _decoder is None:
            _decoder = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="clip-decode", initializer=_lower_priority
            )
        return _decoder


def _encode_flac(samples: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, MODEL_RATE, format="FLAC", subtype="PCM_16")
    return buffer.getvalue()


class VoiceLibrary:
    def __init__(
        self,
        db: Database,
        engine: TTSEngine | None,
        data_dir: Path,
        limits: VoiceLimits | None = None,
        scheduler: DeadlineScheduler | None = None,
        models: ModelPool | None = None,
    ) -> None:
        """`engine` may be None for storage-only work (listing, deleting) without the model.
        The bot passes its shared `scheduler`, so clones queue behind live speech; without
        one (the offline CLI, alone with its model) model work goes to the engine directly.
        `models`: other languages' models, when the bot has them."""
        self.limits = limits or VoiceLimits()
        self.records = VoiceRecords(db, self.limits.quota)
        self.files = VoiceFiles(data_dir)
        self.states = VoiceStates(
            self.records, self.files, engine, self.limits.clip, scheduler, models
        )
        self._cloning: dict[int, int | None] = {}  # member -> server, of the clones admitted

    @property
    def shared(self) -> bool:
        """Several processes share the store (PostgreSQL): they delete voices too."""
        return self.records.shared

    # ---- creating --------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def admitted(self, owner_id: int, guild_id: int | None) -> AsyncIterator[None]:
        """A clone may start (its download, decode and model work), or a clear refusal: one
        at a time per member, and a few per server and in all. Asked before the download,
        so waiting clones can never pile up behind the lock, the decoder or the model."""
        if owner_id in self._cloning:
            raise VoiceLibraryError(
                tr("You are already making a voice. Please wait until it is ready.")
            )
        here = sum(1 for g in self._cloning.values() if guild_id is not None and g == guild_id)
        if here >= self.limits.clones_per_server:
            raise VoiceLibraryError(
                tr(
                    "{count} voices are being made in this server right now. Please try again in "
                    "a minute.",
                    count=here,
                )
            )
        if len(self._cloning) >= self.limits.clones_in_all:
            raise VoiceLibraryError(
                tr("I am busy making other voices right now. Please try again in a minute.")
            )
        self._cloning[owner_id] = guild_id
        try:
            yield
        finally:
            del self._cloning[owner_id]

    async def create(
        self,
        owner_id: int,
        name: str,
        data: bytes,
        *,
        consented_at: str,
        progress: Progress | None = None,
        guild_id: int | None = None,
    ) -> VoiceRecord:
        """Validate the clip, extract the state (background model work), store files then
        row. The consent record keeps the upload's sha256, the server and the time."""
        upload_sha256 = hashlib.sha256(data).hexdigest()
        async with self.records.lock(owner_id):
            name = await self.records.check_can_create(owner_id, name)
            if progress:
                await progress(tr("Checking your clip…"))
            clip = await asyncio.get_running_loop().run_in_executor(
                decoder(), clips.prepare, data, self.limits.clip
            )
            if progress:
                await progress(
                    tr(
                        "Learning your voice from {seconds:.1f} s of speech…",
                        seconds=len(clip) / MODEL_RATE,
                    )
                )
            record = await self._store(owner_id, name, clip, consented_at, upload_sha256, guild_id)
        log.info(
            "voice %s cloned by user %s in server %s (upload sha256 %s, %.1f s)",
            record.id,
            owner_id,
            guild_id,
            upload_sha256[:16],
            record.duration_s,
        )
        return record

    async def _store(
        self,
        owner_id: int,
        name: str,
        clip: np.ndarray,
        consented_at: str,
        upload_sha256: str | None,
        guild_id: int | None,
    ) -> VoiceRecord:
        """The files complete first, then the row: a failure removes the files."""
        new = self.files.new_voice(owner_id)
        flac = await asyncio.to_thread(_encode_flac, clip)
        with self.records.saving(owner_id, name):
            try:
                await self.files.make_folder(new)
                state_bytes = await self.states.clone(clip, new.tmp_state, (owner_id, guild_id))
                await self.files.finish_voice(new, flac)
                state = await self.files.read(new.state) if self.records.shared else None
                voice_id = await self.records.insert(
                    owner_id=owner_id,
                    name=name,
                    model_fingerprint=self.states.engine.fingerprint,
                    state_path=self.files.relative(new.state),
                    clip_path=self.files.relative(new.clip),
                    sha256=hashlib.sha256(flac).hexdigest(),
                    duration_s=len(clip) / MODEL_RATE,
                    state_bytes=state_bytes,
                    clip_bytes=len(flac),
                    consented_at=consented_at,
                    upload_sha256=upload_sha256,
                    consent_guild_id=guild_id,
                    recording=flac,
                    state=state,
                )
            except BaseException:
                await self.files.remove(new.all)
                raise
        return await self.records.by_id(voice_id)

    # ---- choosing --------------------------------------------------------------------------
    async def use(self, user_id: int, name: str, guild_id: int | None) -> str:
        """Choose one of the member's voices or a built-in one, for this server (or everywhere
        when `guild_id` is None)."""
        from bot.synthesis.engine import BUILTIN_VOICES  # loaded with the model already

        return await self.records.use(user_id, name, guild_id, BUILTIN_VOICES)

    # ---- deleting --------------------------------------------------------------------------
    async def delete(self, owner_id: int, name: str) -> VoiceRecord:
        async with self.records.lock(owner_id):
            record = await self.records.own_voice(owner_id, name)
            await self._delete(record)
            log.info("voice %s of user %s deleted", record.id, owner_id)
            return record

    async def _delete(self, record: VoiceRecord) -> None:
        await self.records.delete(record)  # choices go with it (ON DELETE CASCADE)
        await self._drop_copies(record.state_path, record.clip_path)

    async def _drop_copies(self, state_path: str, clip_path: str) -> None:
        """Remove this machine's files of a deleted voice and forget its cached states."""
        dropped = await self.files.drop(state_path, clip_path)
        if dropped is not None:
            await self.states.forget(*dropped)

    async def forget_user(self, user_id: int) -> int:
        """Delete every voice, clip, choice and member setting of a member, in every server."""
        async with self.records.lock(user_id):
            records = await self.records.list_for(user_id)
            for record in records:
                await self._delete(record)
            await self.records.forget_member(user_id)
            await self.files.remove_member(user_id)
            await asyncio.to_thread(self.states.forget_phrases)
            log.info("user %s asked to forget them: %d voices deleted", user_id, len(records))
            return len(records)

    async def follow_deletions(self) -> None:
        """For good (supervised), with a shared store: when another process deletes a voice
        (or forgets a member), drop this machine's copies at once. After the link to the
        store is lost, one sweep catches up on what was missed."""

        async def dropped(gone: DeletedVoice) -> None:
            await self._drop_copies(gone.state_path, gone.clip_path)
            log.info("voice %s was deleted by another process: copies dropped", gone.id)

        await follow_deletions(
            self.records.db, dropped, lambda: self.remove_orphans(min_age_s=SWEEP_MIN_AGE_S)
        )

    # ---- consistency -----------------------------------------------------------------------
    async def reconcile(self) -> tuple[list[Path], list[VoiceRecord]]:
        """At start: sweep the files that no row references (`remove_orphans`); keep in the
        store the recordings of voices made before it kept them; report voices whose
        recording is gone (they cannot be rebuilt)."""
        orphans = await self.remove_orphans()
        missing = await keep_old_recordings(self.records.db, self.files.data_dir)
        for record in missing:
            # (never its name: a member wrote it, and logs keep no member's words)
            log.warning("voice %s of user %s has lost its recording", record.id, record.owner_id)
        return orphans, missing

    async def remove_orphans(self, min_age_s: float = 0.0) -> list[Path]:
        """Sweep the store's files that no row names (`VoiceFiles.sweep`); the files deleted."""
        named = [(r.state_path, r.clip_path) for r in await self.records.list_all()]
        return await self.files.sweep(named, self.records.deleted_tags, min_age_s)


def consent_now() -> str:
    return utc_now()
