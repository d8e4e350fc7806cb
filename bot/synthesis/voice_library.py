"""The voice library: members' cloned voices on disk and in the database, and voice choice.

A voice is a row with its trimmed recording (FLAC) in the store, plus two files under
`DATA_DIR/voices/<user id>/`: `<tag>.safetensors` (the model state) and `<tag>.flac` (a copy
of the recording). The files are written and synced first, then the row and the recording are
inserted in one short write: a failure removes the files, and a crash between the two leaves
only files that no row names, which `reconcile()` moves aside at the next start (the sweep
deletes no voice's files but a deleted voice's: see `remove_orphans`).

With several processes sharing PostgreSQL, the store is the authority and each machine's
files are a cache: a voice cloned elsewhere gets its state from the store (states are kept
there by model fingerprint, since fetching one is much faster than rebuilding it: see
`bench/shards.py`), else rebuilds it from the recording; a deletion is announced (NOTIFY) and
every process drops its copies (`follow_deletions`).

Model work (clones, rebuilds) goes through the shared `DeadlineScheduler` as background work.
Data is private: folders 0700, files 0600.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import io
import itertools
import json
import logging
import os
import re
import shutil
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import soundfile

from bot.core.errors import UserError
from bot.core.files import make_private_dir, write_atomically
from bot.i18n.translate import tr
from bot.storage.database import (
    STORE_ERRORS,
    VOICE_DELETED,
    ConstraintError,
    Database,
    NameTakenError,
    QuotaError,
    VoiceRecord,
    file_tag,
    utc_now,
)
from bot.synthesis import clip as clips
from bot.synthesis import phrase_cache
from bot.synthesis.scheduler import DeadlineScheduler

if TYPE_CHECKING:  # the model's module imports torch: seconds the CLI's list/delete skip
    from bot.synthesis.engine import TTSEngine
    from bot.synthesis.model_pool import ModelPool

log = logging.getLogger(__name__)

Progress = Callable[[str], Awaitable[None]]
MAX_NAME_LENGTH = 32
RELISTEN_S = 2.0  # after the link to PostgreSQL is lost, listen again this soon
MAX_HEARD = 10_000  # deletions heard and not yet handled; past it, one sweep instead
# A sweep while the bot runs leaves younger files alone: they may be a clone being written,
# whose row is not in yet (a clone takes seconds; this is far longer).
SWEEP_MIN_AGE_S = 600.0
DECODE_NICE = 10  # the clip-decoding thread's niceness (0: as speech; 19: the lowest)
QUARANTINE = "voices-quarantine"  # under DATA_DIR, beside voices/


class VoiceLibraryError(UserError):
    """A refusal the member can act on; the message is shown as is."""


STORAGE_TROUBLE = tr(
    "I could not save your voice just now (a storage problem on the bot's side). Nothing was "
    "saved; please try again later."
)


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


def check_name(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise VoiceLibraryError(tr("Please give the voice a name."))
    if len(name) > MAX_NAME_LENGTH:
        raise VoiceLibraryError(tr(
            "That name is {length} characters long; please keep it to {most}.",
            length=len(name), most=MAX_NAME_LENGTH,
        ))  # fmt: skip
    if not name.isprintable():
        raise VoiceLibraryError(tr("Please use only printable characters in the name."))
    return name


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _encode_flac(samples: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    soundfile.write(buffer, samples, clips.MODEL_RATE, format="FLAC", subtype="PCM_16")
    return buffer.getvalue()


class VoiceLibrary:
    def __init__(
        self,
        db: Database,
        engine: TTSEngine | None,
        data_dir: Path,
        limits: VoiceLimits | None = None,
        deadlines: DeadlineScheduler | None = None,
    ) -> None:
        """`engine` may be None for storage-only work (listing, deleting) without the model.
        The bot passes its shared `deadlines`, so clones queue behind live speech; without
        one (the offline CLI, alone with its model) model work goes to the engine directly."""
        self.db = db
        self._engine = engine
        self.data_dir = data_dir
        self.limits = limits or VoiceLimits()
        self.deadlines = deadlines
        self.models: ModelPool | None = None  # other languages' models, when the bot has them
        # several processes share the store: states are kept there too, for the others
        self.shared = db.dialect == "postgresql"
        self._sweep_needed = False  # deletions were heard faster than handled
        self._cloning: dict[int, int | None] = {}  # member -> server, of the clones admitted
        # a lock lives while someone holds or waits for it: the table cannot only grow
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    @property
    def engine(self) -> TTSEngine:
        if self._engine is None:
            raise RuntimeError("this voice library was opened without the TTS engine")
        return self._engine

    @property
    def root(self) -> Path:
        return self.data_dir / "voices"

    @property
    def phrases_dir(self) -> Path:
        """The phrase cache's folder (see bot/synthesis/phrase_cache.py), every model's."""
        return self.data_dir / "phrases"

    def _lock(self, owner_id: int) -> asyncio.Lock:
        """One change at a time per member: quota and names stay consistent."""
        lock = self._locks.get(owner_id)
        if lock is None:
            lock = self._locks[owner_id] = asyncio.Lock()
        return lock

    async def _model_call(
        self, fn: Callable[[Any], int], owner: tuple[int, int | None],
        language: str | None = None, engine: TTSEngine | None = None,
    ) -> int:  # fmt: skip
        """Model work through the scheduler (the bot), or the engine itself (the CLI)."""
        if self.deadlines is not None:
            return await self.deadlines.background_call(fn, owner, language)
        return await (engine or self.engine).call(fn)

    # ---- creating --------------------------------------------------------------------------
    def _quota_reached(self) -> str:
        return tr(
            "You already have {quota} voices, the most allowed. Delete one with /voice delete "
            "first.",
            quota=self.limits.quota,
        )

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
            raise VoiceLibraryError(tr(
                "{count} voices are being made in this server right now. Please try again in "
                "a minute.",
                count=here,
            ))  # fmt: skip
        if len(self._cloning) >= self.limits.clones_in_all:
            raise VoiceLibraryError(
                tr("I am busy making other voices right now. Please try again in a minute.")
            )
        self._cloning[owner_id] = guild_id
        try:
            yield
        finally:
            del self._cloning[owner_id]

    async def check_can_create(self, owner_id: int, name: str) -> str:
        """The cheap checks, before any download or model work."""
        name = check_name(name)
        if await self.db.voices.count_for(owner_id) >= self.limits.quota:
            raise VoiceLibraryError(self._quota_reached())
        if await self.db.voices.get(owner_id, name) is not None:
            raise VoiceLibraryError(
                tr("You already have a voice named “{name}”. Pick another name.", name=name)
            )
        return name

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
        async with self._lock(owner_id):
            name = await self.check_can_create(owner_id, name)
            if progress:
                await progress(tr("Checking your clip…"))
            clip = await asyncio.get_running_loop().run_in_executor(
                decoder(), clips.prepare, data, self.limits.clip
            )
            if progress:
                await progress(tr(
                    "Learning your voice from {seconds:.1f} s of speech…",
                    seconds=len(clip) / clips.MODEL_RATE,
                ))  # fmt: skip
            record = await self._store(owner_id, name, clip, consented_at, upload_sha256, guild_id)
        log.info(
            "voice %s cloned by user %s in server %s (upload sha256 %s, %.1f s)",
            record.id, owner_id, guild_id, upload_sha256[:16], record.duration_s,
        )  # fmt: skip
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
        folder = self.root / str(owner_id)
        tag = uuid.uuid4().hex
        state_path, clip_path = folder / f"{tag}.safetensors", folder / f"{tag}.flac"
        tmp_state = folder / f".tmp-{tag}.safetensors"
        flac = await asyncio.to_thread(_encode_flac, clip)
        try:
            await asyncio.to_thread(make_private_dir, folder)
            state_bytes = await self._model_call(
                partial(self.engine.clone_sync, clip, tmp_state), (owner_id, guild_id)
            )
            await asyncio.to_thread(_finish_files, tmp_state, state_path, clip_path, flac)
            state = await asyncio.to_thread(state_path.read_bytes) if self.shared else None
            voice_id = await self.db.voices.insert(
                owner_id=owner_id,
                name=name,
                model_fingerprint=self.engine.fingerprint,
                state_path=str(state_path.relative_to(self.data_dir)),
                clip_path=str(clip_path.relative_to(self.data_dir)),
                sha256=hashlib.sha256(flac).hexdigest(),
                duration_s=len(clip) / clips.MODEL_RATE,
                state_bytes=state_bytes,
                clip_bytes=len(flac),
                consented_at=consented_at,
                upload_sha256=upload_sha256,
                consent_guild_id=guild_id,
                quota=self.limits.quota,
                recording=flac,
                state=state,
            )
        except BaseException as error:
            await asyncio.to_thread(_remove, [tmp_state, state_path, clip_path])
            if isinstance(error, NameTakenError):
                raise VoiceLibraryError(
                    tr("You already have a voice named “{name}”.", name=name)
                ) from None
            if isinstance(error, QuotaError):  # another process took the last place
                raise VoiceLibraryError(self._quota_reached()) from None
            if isinstance(error, STORE_ERRORS):
                log.error("storing a voice of user %s failed: %r", owner_id, error)
                raise VoiceLibraryError(STORAGE_TROUBLE) from error
            raise
        record = await self.db.voices.get_by_id(voice_id)
        assert record is not None
        return record

    # ---- reading ---------------------------------------------------------------------------
    async def list_for(self, owner_id: int) -> list[VoiceRecord]:
        return await self.db.voices.list_for(owner_id)

    async def own_voice(self, owner_id: int, name: str) -> VoiceRecord:
        """The member's own voice by name; other members' voices are invisible."""
        record = await self.db.voices.get(owner_id, name)
        if record is None:
            raise VoiceLibraryError(tr(
                "You have no voice named “{name}”. See /voice list for your voices.",
                name=" ".join(name.split())[:40],
            ))  # fmt: skip
        return record

    async def state_spec(self, record: VoiceRecord) -> str:
        """The path of the voice's state: fetched from the store or rebuilt first when this
        machine has none, rebuilt when another model made it."""
        path = self.data_dir / record.state_path
        if record.model_fingerprint == self.engine.fingerprint and await asyncio.to_thread(
            path.is_file
        ):
            return str(path)
        async with self._lock(record.owner_id):
            current = await self.db.voices.get_by_id(record.id)
            if current is None:
                raise VoiceLibraryError(tr("That voice was just deleted."))
            if current.model_fingerprint != self.engine.fingerprint:
                await self._rebuild(current)
            elif not path.is_file():
                await self._state_to_cache(current, path, self.engine)
        return str(path)

    async def _rebuild(self, record: VoiceRecord) -> None:
        log.info("rebuilding voice %s for the current model", record.id)
        state_path = self.data_dir / record.state_path
        size = await self._state_from_recording(record, state_path, self.engine)
        await self.engine.forget_voice(str(state_path))
        await self.db.voices.set_state(record.id, self.engine.fingerprint, size)
        if self.shared:  # kept for the other machines too
            await self._keep_state(record, self.engine, state_path)

    async def _keep_state(self, record: VoiceRecord, engine: TTSEngine, path: Path) -> None:
        data = await asyncio.to_thread(path.read_bytes)
        try:
            await self.db.voices.put_state(record.id, engine.fingerprint, data)
        except ConstraintError:  # deleted meanwhile; its files go with the notice
            log.info("voice %s was deleted while its state was made", record.id)

    async def _state_to_cache(
        self, record: VoiceRecord, path: Path, engine: TTSEngine, language: str | None = None
    ) -> None:
        """Put the voice's state for `engine` at `path`, on a machine that has none: from the
        store when another process kept it there, else made from the recording (and then
        kept in the store for the others)."""
        kept = await self.db.voices.state(record.id, engine.fingerprint) if self.shared else None
        if kept is not None:
            log.info("voice %s: state fetched from the store", record.id)
            await asyncio.to_thread(_write_cached, path, kept)
            return
        log.info("voice %s: making its state for this model from the recording", record.id)
        await self._state_from_recording(record, path, engine, language)
        if self.shared:
            await self._keep_state(record, engine, path)

    # ---- choosing --------------------------------------------------------------------------
    async def use(self, user_id: int, name: str, guild_id: int | None) -> str:
        """Choose a voice for this server (or everywhere when `guild_id` is None)."""
        name = " ".join(name.split())
        own = await self.db.voices.get(user_id, name)
        if own is not None:
            await self.db.choices.set(user_id, guild_id, voice_id=own.id)
            return own.name
        from bot.synthesis.engine import BUILTIN_VOICES  # loaded with the model already

        builtin = name.lower()
        if builtin in BUILTIN_VOICES:
            await self.db.choices.set(user_id, guild_id, builtin=builtin)
            return builtin
        raise VoiceLibraryError(tr(
            "There is no voice named “{name}” among yours or the built-in ones. See /voice list.",
            name=name[:40],
        ))  # fmt: skip

    async def state_for_language(self, record: VoiceRecord, language: str) -> str:
        """The voice's state for another language's model: made from its kept recording on
        first use (background work, behind live speech), then kept beside its own state."""
        assert self.models is not None
        engine = await self.models.ensure(language)
        path = self._state_path_for(record, engine)
        if await asyncio.to_thread(path.is_file):
            return str(path)
        async with self._lock(record.owner_id):
            if await self.db.voices.get_by_id(record.id) is None:
                raise VoiceLibraryError(tr("That voice was just deleted."))
            if not path.is_file():
                log.info("making voice %s for the %s model", record.id, language)
                await self._state_to_cache(record, path, engine, language)
        return str(path)

    async def needs_state(self, record: VoiceRecord, language: str) -> bool:
        """Whether the voice's state for `language`'s loaded model is still to be made from its
        recording (False while that model is not loaded: then there is nothing to tell yet)."""
        if self.models is None or not self.models.is_loaded(language):
            return False
        path = self._state_path_for(record, self.models.engine_for(language))
        return not await asyncio.to_thread(path.is_file)

    def _state_path_for(self, record: VoiceRecord, engine: TTSEngine) -> Path:
        """Where the voice's state for another language's model is kept, beside its own."""
        return model_state_path(self.data_dir / record.state_path, engine.fingerprint)

    async def _own_choice(self, user_id: int, voice_id: int | None) -> VoiceRecord | None:
        """The chosen cloned voice, while it exists and is the member's own."""
        record = await self.db.voices.get_by_id(voice_id) if voice_id is not None else None
        return record if record is not None and record.owner_id == user_id else None

    async def _state_from_recording(
        self, record: VoiceRecord, path: Path, engine: TTSEngine, language: str | None = None
    ) -> int:
        """Write `path`: the voice's state for `engine` (the model of `language`; None: the
        default one), made from its kept recording as background work; its size."""
        try:
            flac = await self._recording(record)  # from the shared store, maybe: bounded too
            clip = await asyncio.to_thread(clips.decode, flac, self.limits.clip)
        except (clips.ClipError, FileNotFoundError) as error:
            raise VoiceLibraryError(
                f"The recording behind the voice “{record.name}” is missing or damaged, so it "
                "cannot be rebuilt for the model in use. Please clone it again."
            ) from error
        tmp = path.with_name(f".tmp-{uuid.uuid4().hex}.safetensors")
        try:
            fn = partial(engine.clone_sync, clip, tmp)
            size = await self._model_call(fn, (record.owner_id, None), language, engine)
            await asyncio.to_thread(_finish_state, tmp, path)
        finally:
            await asyncio.to_thread(_remove, [tmp])
        return size

    async def _recording(self, record: VoiceRecord) -> bytes:
        """The voice's recording: this machine's copy, else the store's (copied here)."""
        path = self.data_dir / record.clip_path
        with contextlib.suppress(FileNotFoundError):
            return await asyncio.to_thread(path.read_bytes)
        flac = await self.db.voices.recording(record.id)
        if flac is None:
            raise FileNotFoundError(path)
        await asyncio.to_thread(_write_cached, path, flac)
        return flac

    async def chosen_voice(self, user_id: int, guild_id: int | None) -> str | VoiceRecord | None:
        """The member's voice choice: this server's, else their global one. A built-in voice's
        name, their own cloned voice, or None (no choice, or a voice that is not theirs)."""
        choice = await self.db.choices.for_user(user_id, guild_id)
        if choice is None:
            return None
        if choice.builtin_name is not None:
            return choice.builtin_name
        return await self._own_choice(user_id, choice.voice_id)

    async def usable_state(self, record: VoiceRecord, language: str | None = None) -> str | None:
        """The spec of the voice's state for `language`'s model (None: the default one),
        fetched or made first if need be; None when it cannot be used (logged)."""
        try:
            if language is not None and self.models is not None:
                return await self.state_for_language(record, language)
            return await self.state_spec(record)
        except VoiceLibraryError as error:
            log.warning("voice %s unusable, using the default: %s", record.id, error)
            return None

    # ---- changing and deleting -------------------------------------------------------------
    async def rename(self, owner_id: int, name: str, new_name: str) -> VoiceRecord:
        async with self._lock(owner_id):
            record = await self.own_voice(owner_id, name)
            new_name = check_name(new_name)
            other = await self.db.voices.get(owner_id, new_name)
            if other is not None and other.id != record.id:
                raise VoiceLibraryError(
                    tr("You already have a voice named “{name}”.", name=new_name)
                )
            try:
                await self.db.voices.rename(record.id, new_name)
            except NameTakenError:
                raise VoiceLibraryError(
                    tr("You already have a voice named “{name}”.", name=new_name)
                ) from None
            renamed = await self.db.voices.get_by_id(record.id)
            assert renamed is not None
            log.info("voice %s of user %s renamed", record.id, owner_id)
            return renamed

    async def delete(self, owner_id: int, name: str) -> VoiceRecord:
        async with self._lock(owner_id):
            record = await self.own_voice(owner_id, name)
            await self._delete(record)
            log.info("voice %s of user %s deleted", record.id, owner_id)
            return record

    async def _delete(self, record: VoiceRecord) -> None:
        await self.db.voices.delete(record)  # choices go with it (ON DELETE CASCADE)
        await self._drop_copies(record.state_path, record.clip_path)

    async def _drop_copies(self, state_path: str, clip_path: str) -> None:
        """Remove this machine's files of a deleted voice and forget its cached states."""
        root = self.root.resolve()
        state, clip = self.data_dir / state_path, self.data_dir / clip_path
        if not all(p.resolve().is_relative_to(root) for p in (state, clip)):
            log.warning("a deleted voice's files are outside the voice store: left alone")
            return
        others = await asyncio.to_thread(_model_states, state)  # other languages' states
        await asyncio.to_thread(_remove, [state, *others, clip])
        if self._engine is not None:
            await self._engine.forget_voice(str(state))  # its phrases too
        if self._engine is None or self._engine.phrases is None:  # the CLI: only on disk
            await asyncio.to_thread(phrase_cache.drop_voice, self.phrases_dir, str(state))
        if self.models is not None:
            for other in others:
                await self.models.forget_voice(str(other))

    async def follow_deletions(self) -> None:
        """For good (supervised), with a shared store: when another process deletes a voice
        (or forgets a member), drop this machine's copies at once. After the link to the
        store is lost, one sweep catches up on what was missed."""
        heard: asyncio.Queue[str] = asyncio.Queue(MAX_HEARD)
        sweep = ""  # the marker for "sweep everything"

        def hear(payload: str) -> None:
            try:
                heard.put_nowait(payload)
            except asyncio.QueueFull:  # a sweep catches up on everything dropped here
                self._sweep_needed = True

        handler = asyncio.create_task(self._handle_deletions(heard))
        try:
            while True:
                try:
                    await self.db.listen(VOICE_DELETED, hear, lambda: hear(sweep))
                    log.warning("lost the link to the store's notices; listening again")
                except STORE_ERRORS as error:
                    log.warning("cannot listen to the store's notices: %r", error)
                await asyncio.sleep(RELISTEN_S)
        finally:
            handler.cancel()

    async def _handle_deletions(self, heard: asyncio.Queue[str]) -> None:
        while True:
            payload = await heard.get()
            try:
                if not payload or self._sweep_needed:
                    self._sweep_needed = False
                    await self.remove_orphans(min_age_s=SWEEP_MIN_AGE_S)
                    continue
                gone = json.loads(payload)
                await self._drop_copies(str(gone["state_path"]), str(gone["clip_path"]))
                log.info("voice %s was deleted by another process: copies dropped", gone["id"])
            except Exception:  # one bad notice must not stop the rest
                log.exception("handling a voice deletion failed")

    async def forget_user(self, user_id: int) -> int:
        """Delete every voice, clip, choice and member setting of a member, in every server."""
        async with self._lock(user_id):
            records = await self.db.voices.list_for(user_id)
            for record in records:
                await self._delete(record)
            await self.db.choices.delete_for_user(user_id)
            await self.db.members.forget_user(user_id)
            folder = self.root / str(user_id)
            await asyncio.to_thread(_remove_tree, folder)
            await asyncio.to_thread(self._forget_phrases)
            log.info("user %s asked to forget them: %d voices deleted", user_id, len(records))
            return len(records)

    def _forget_phrases(self) -> None:
        """Every cached lead phrase goes with a forgotten member: a lead ("Alice said") names
        a member, and neither the cache nor the store knows whose name it holds or which
        names (nicknames since changed) they had. They are rendered again when next needed."""
        phrases = self._engine.phrases if self._engine is not None else None
        if phrases is not None:
            phrases.forget_all()
        else:
            phrase_cache.drop_all(self.phrases_dir)

    # ---- consistency -----------------------------------------------------------------------
    async def reconcile(self) -> tuple[list[Path], list[VoiceRecord]]:
        """At start: sweep the files that no row references (`remove_orphans`); keep in the
        store the recordings of voices made before it kept them; report voices whose
        recording is gone (they cannot be rebuilt)."""
        orphans = await self.remove_orphans()
        missing = await keep_old_recordings(self.db, self.data_dir)
        for record in missing:
            log.warning(
                "voice %s (%r of user %s) has lost its recording",
                record.id, record.name, record.owner_id,
            )  # fmt: skip
        return orphans, missing

    async def remove_orphans(self, min_age_s: float = 0.0) -> list[Path]:
        """Sweep the store's files that no row names, of those last changed at least
        `min_age_s` ago; the files deleted.

        Deleted are only files that never were a voice or whose member deleted it: leftovers
        of an interrupted write (`.tmp-…`), and the files of a voice deleted while this
        process was not listening (the store keeps their tag). Every other such file is
        moved aside to `DATA_DIR/voices-quarantine/<time>/`, private, and a warning says how
        many and where: a clone cut short by a crash cannot be told from the voices that a
        database restored from an older backup (or the wrong one) does not name, and a
        member's voice is the one thing that cannot be made again."""
        records = await self.db.voices.list_all()
        referenced = {self.data_dir / r.state_path for r in records} | {
            self.data_dir / r.clip_path for r in records
        }
        for record in records:  # other languages' states of a voice are its own too
            referenced.update(
                await asyncio.to_thread(_model_states, self.data_dir / record.state_path)
            )
        orphans = await asyncio.to_thread(_files_not_in, self.root, referenced, min_age_s)
        if not orphans:
            return []
        deleted = await self.db.voices.deleted_tags(file_tag(p) for p in orphans)
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
                len(aside), present, "" if records else " (it holds no voices)", folder,
                self.root,
            )  # fmt: skip
        return doomed


async def keep_old_recordings(db: Database, data_dir: Path) -> list[VoiceRecord]:
    """Store the recordings of voices made before the store kept them, from their files in
    `data_dir`; the voices whose recording is nowhere (they cannot be rebuilt)."""
    lost = []
    for record in await db.voices.without_recording():
        try:
            flac = await asyncio.to_thread((data_dir / record.clip_path).read_bytes)
        except FileNotFoundError:
            lost.append(record)
            continue
        with contextlib.suppress(ConstraintError):  # deleted meanwhile
            await db.voices.put_recording(record.id, flac)
    return lost


def consent_now() -> str:
    return utc_now()


def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as file:
        os.fsync(file.fileno())


def _finish_state(tmp_state: Path, state_path: Path) -> None:
    os.chmod(tmp_state, 0o600)
    _fsync_file(tmp_state)
    tmp_state.replace(state_path)
    _fsync_dir(state_path.parent)


def _write_cached(path: Path, data: bytes) -> None:
    """A machine's copy of what the store holds (a state, a recording): private, complete."""
    make_private_dir(path.parent)
    write_atomically(path, data)
    _fsync_dir(path.parent)


def _finish_files(tmp_state: Path, state_path: Path, clip_path: Path, flac: bytes) -> None:
    """Both files complete, private and synced, before any row names them."""
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


def model_state_path(state: Path, fingerprint: str) -> Path:
    """Where a voice's state for another language's model lives, beside its own state."""
    return state.with_name(f"{state.stem}.model-{fingerprint}.safetensors")


def _model_states(state: Path) -> list[Path]:
    return sorted(state.parent.glob(f"{state.stem}.model-*.safetensors"))


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
