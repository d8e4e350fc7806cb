"""Cloned voices' model states, one per (voice, model fingerprint): made from a clip, fetched
from a shared store, or rebuilt from the voice's kept recording when this machine has none for
the model in use (another model made it, another language's model needs it, or the voice was
cloned on another machine). Fetching is much faster than rebuilding: `bench/shards.py`.

A voice's own state is `<tag>.safetensors`; other languages' models' states sit beside it
(`model_state_path`). All model work goes through the shared `DeadlineScheduler` as background
work, behind live speech. The records are `VoiceRecords`' and the files `VoiceFiles`'
(bot/storage/): nothing here speaks to the database itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bot.storage.database import VoiceRecord
from bot.storage.voice_files import VoiceFiles, model_state_path
from bot.storage.voice_records import VoiceLibraryError, VoiceRecords
from bot.synthesis import clip as clips
from bot.synthesis import phrase_cache
from bot.synthesis.scheduler import DeadlineScheduler

if TYPE_CHECKING:  # the model's module imports torch: seconds the CLI's list/delete skip
    from bot.synthesis.engine import TTSEngine
    from bot.synthesis.model_pool import ModelPool

log = logging.getLogger(__name__)


class VoiceStates:
    def __init__(
        self,
        records: VoiceRecords,
        files: VoiceFiles,
        engine: TTSEngine | None,
        clip_limits: clips.ClipLimits,
        scheduler: DeadlineScheduler | None = None,
        models: ModelPool | None = None,
    ) -> None:
        """`engine` (the default language's model) may be None for work without the model
        (listing, deleting). With `scheduler` (the bot's), model work queues behind live
        speech; without (the offline CLI, alone with its model) it goes to the engine
        directly. `models`: other languages' models, when the bot has them."""
        self.records = records
        self.files = files
        self._engine = engine
        self.clip_limits = clip_limits
        self.scheduler = scheduler
        self.models = models

    @property
    def engine(self) -> TTSEngine:
        if self._engine is None:
            raise RuntimeError("this voice library was opened without the TTS engine")
        return self._engine

    @property
    def phrases_dir(self) -> Path:
        """The phrase cache's folder (see bot/synthesis/phrase_cache.py), every model's."""
        return self.files.data_dir / "phrases"

    async def _model_call(
        self,
        fn: Callable[[Any], int],
        owner: tuple[int, int | None],
        language: str | None = None,
        engine: TTSEngine | None = None,
    ) -> int:
        """Model work through the scheduler (the bot), or the engine itself (the CLI)."""
        if self.scheduler is not None:
            return await self.scheduler.background_call(fn, owner, language)
        return await (engine or self.engine).call(fn)

    async def clone(self, clip: np.ndarray, path: Path, owner: tuple[int, int | None]) -> int:
        """A new voice's state for the default model, written at `path`; its size."""
        return await self._model_call(partial(self.engine.clone_sync, clip, path), owner)

    # ---- the state a voice speaks with -----------------------------------------------------
    async def state_spec(self, record: VoiceRecord) -> str:
        """The path of the voice's state: fetched from the store or rebuilt first when this
        machine has none, rebuilt when another model made it."""
        path = self.files.path(record.state_path)
        if record.model_fingerprint == self.engine.fingerprint and await self.files.exists(path):
            return str(path)
        async with self.records.lock(record.owner_id):
            current = await self.records.current(record)
            if current.model_fingerprint != self.engine.fingerprint:
                await self._rebuild(current)
            elif not path.is_file():
                await self._state_to_cache(current, path, self.engine)
        return str(path)

    async def state_for_language(self, record: VoiceRecord, language: str) -> str:
        """The voice's state for another language's model: made from its kept recording on
        first use (background work, behind live speech), then kept beside its own state."""
        assert self.models is not None
        engine = await self.models.ensure(language)
        path = self._state_path_for(record, engine)
        if await self.files.exists(path):
            return str(path)
        async with self.records.lock(record.owner_id):
            await self.records.current(record)
            if not path.is_file():
                log.info("making voice %s for the %s model", record.id, language)
                await self._state_to_cache(record, path, engine, language)
        return str(path)

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

    async def needs_state(self, record: VoiceRecord, language: str) -> bool:
        """Whether the voice's state for `language`'s loaded model is still to be made from its
        recording (False while that model is not loaded: then there is nothing to tell yet)."""
        if self.models is None or not self.models.is_loaded(language):
            return False
        path = self._state_path_for(record, self.models.engine_for(language))
        return not await self.files.exists(path)

    def _state_path_for(self, record: VoiceRecord, engine: TTSEngine) -> Path:
        """Where the voice's state for another language's model is kept, beside its own."""
        return model_state_path(self.files.path(record.state_path), engine.fingerprint)

    # ---- making a state this machine lacks -------------------------------------------------
    async def _rebuild(self, record: VoiceRecord) -> None:
        log.info("rebuilding voice %s for the current model", record.id)
        state_path = self.files.path(record.state_path)
        size = await self._state_from_recording(record, state_path, self.engine)
        await self.engine.forget_voice(str(state_path))
        await self.records.set_state(record, self.engine.fingerprint, size)
        if self.records.shared:  # kept for the other machines too
            await self._keep_state(record, self.engine, state_path)

    async def _keep_state(self, record: VoiceRecord, engine: TTSEngine, path: Path) -> None:
        await self.records.keep_state(record, engine.fingerprint, await self.files.read(path))

    async def _state_to_cache(
        self, record: VoiceRecord, path: Path, engine: TTSEngine, language: str | None = None
    ) -> None:
        """Put the voice's state for `engine` at `path`, on a machine that has none: from the
        store when another process kept it there, else made from the recording (and then
        kept in the store for the others)."""
        kept = await self.records.kept_state(record, engine.fingerprint)
        if kept is not None:
            log.info("voice %s: state fetched from the store", record.id)
            await self.files.write_cached(path, kept)
            return
        log.info("voice %s: making its state for this model from the recording", record.id)
        await self._state_from_recording(record, path, engine, language)
        if self.records.shared:
            await self._keep_state(record, engine, path)

    async def _state_from_recording(
        self, record: VoiceRecord, path: Path, engine: TTSEngine, language: str | None = None
    ) -> int:
        """Write `path`: the voice's state for `engine` (the model of `language`; None: the
        default one), made from its kept recording as background work; its size."""
        try:
            flac = await self._recording(record)  # from the shared store, maybe: bounded too
            clip = await asyncio.to_thread(clips.decode, flac, self.clip_limits)
        except (clips.ClipError, FileNotFoundError) as error:
            raise VoiceLibraryError(
                f"The recording behind the voice “{record.name}” is missing or damaged, so it "
                "cannot be rebuilt for the model in use. Please clone it again."
            ) from error
        tmp = self.files.tmp_beside(path)
        try:
            fn = partial(engine.clone_sync, clip, tmp)
            size = await self._model_call(fn, (record.owner_id, None), language, engine)
            await self.files.finish_state(tmp, path)
        finally:
            await self.files.remove([tmp])
        return size

    async def _recording(self, record: VoiceRecord) -> bytes:
        """The voice's recording: this machine's copy, else the store's (copied here)."""
        path = self.files.path(record.clip_path)
        with contextlib.suppress(FileNotFoundError):
            return await self.files.read(path)
        flac = await self.records.recording(record)
        if flac is None:
            raise FileNotFoundError(path)
        await self.files.write_cached(path, flac)
        return flac

    # ---- forgetting ------------------------------------------------------------------------
    async def forget(self, state: Path, others: list[Path]) -> None:
        """Forget the cached states (and phrases) of a deleted voice whose files are gone:
        `state` its own, `others` other languages' models'."""
        if self._engine is not None:
            await self._engine.forget_voice(str(state))  # its phrases too
        if self._engine is None or self._engine.phrases is None:  # the CLI: only on disk
            await asyncio.to_thread(phrase_cache.drop_voice, self.phrases_dir, str(state))
        if self.models is not None:
            for other in others:
                await self.models.forget_voice(str(other))

    def forget_phrases(self) -> None:
        """Every cached lead phrase goes with a forgotten member: a lead ("Alice said") names
        a member, and neither the cache nor the store knows whose name it holds or which
        names (nicknames since changed) they had. They are rendered again when next needed."""
        phrases = self._engine.phrases if self._engine is not None else None
        if phrases is not None:
            phrases.forget_all()
        else:
            phrase_cache.drop_all(self.phrases_dir)
