"""One model per language, loaded when first needed, least recently used unloaded.

The operator's `TTS_LANGUAGE` model is loaded at start and never unloaded. Another language's
model loads the first time a server or member speaks it: in the engine's own threads, never
on the event loop, while every other server keeps speaking. `TTS_MODELS` (a count) and
`TTS_MEMORY_MB` (the models' weights) bound what stays loaded; past them, the idle model used
least recently is closed. All models' units go through the one `DeadlineScheduler`: a unit
names its language and `stream()` hands it to that language's engine.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from bot.config import Settings
from bot.engine import SynthesisStream, TTSEngine
from bot.replies import UserError, tr

log = logging.getLogger(__name__)

T = TypeVar("T")
Loader = Callable[[Settings], Awaitable[TTSEngine]]
IDLE_BEFORE_UNLOAD_S = 60.0  # a model used this recently is kept: its queued units need it


def available_languages() -> tuple[str, ...]:
    """The languages the installed pocket-tts ships a config for (its `config/` folder):
    plain names such as `french`, and `_24l` variants; not the dated english variants."""
    from pocket_tts.utils.config import CONFIGS_DIR

    names = sorted(path.stem for path in Path(CONFIGS_DIR).glob("*.yaml"))
    plain = [n for n in names if "_" not in n or (n.endswith("_24l") and n.count("_") == 1)]
    return tuple(plain)


class LanguageError(UserError):
    """A language this bot does not offer."""


class ModelPool:
    """The loaded models by language; the scheduler's `synthesize` and `run_call`."""

    def __init__(
        self, settings: Settings, default: TTSEngine, loader: Loader,
        idle_before_unload_s: float = IDLE_BEFORE_UNLOAD_S,
    ) -> None:  # fmt: skip
        self.settings = settings
        self.idle_before_unload_s = idle_before_unload_s
        self.default_language = settings.tts_language
        self.default = default
        self.languages: tuple[str, ...] = settings.tts_languages or available_languages()
        if self.default_language not in self.languages:
            self.languages = (self.default_language, *self.languages)
        self._engines: OrderedDict[str, TTSEngine] = OrderedDict({self.default_language: default})
        self._used: dict[str, float] = {self.default_language: time.monotonic()}
        self._loading: dict[str, asyncio.Task[TTSEngine]] = {}
        self._loader = loader
        self.loads = 0
        self.unloads = 0

    # ---- what is loaded --------------------------------------------------------------------
    def loaded(self) -> list[str]:
        return list(self._engines)

    def last_used(self, language: str) -> float:
        """When a loaded language's model was last asked for (time.monotonic())."""
        return self._used.get(language, 0.0)

    def is_loaded(self, language: str | None) -> bool:
        return language is None or language in self._engines

    def settings_for(self, language: str) -> Settings:
        """The default model's settings with another language: its config from
        `TTS_CONFIG_DIR` when there is one, else the language's weights by name."""
        config = None
        if self.settings.tts_config_dir is not None:
            candidate = self.settings.tts_config_dir / f"{language}.yaml"
            config = candidate if candidate.is_file() else None
        return dataclasses.replace(self.settings, tts_language=language, tts_config=config)

    def engine_for(self, language: str | None) -> TTSEngine:
        """The engine of a loaded language (marked as used). One that was unloaded meanwhile
        falls back to the default model: the words are still spoken."""
        if language is None or language == self.default_language:
            return self.default
        engine = self._engines.get(language)
        if engine is None:
            log.warning("the %s model was unloaded before its speech: using the default", language)
            return self.default
        self._engines.move_to_end(language)
        self._used[language] = time.monotonic()
        return engine

    def check(self, language: str) -> str:
        if language not in self.languages:
            raise LanguageError(tr(
                "I don't speak “{name}” here. Languages: {languages}.",
                name=language[:30], languages=", ".join(self.languages),
            ))  # fmt: skip
        return language

    # ---- loading and unloading -------------------------------------------------------------
    async def ensure(self, language: str) -> TTSEngine:
        """The engine for `language`, loading it first if needed (once, however many ask)."""
        self.check(language)
        if language in self._engines:
            return self.engine_for(language)
        task = self._loading.get(language)
        if task is None:
            task = asyncio.create_task(self._load(language), name=f"load-{language}")
            self._loading[language] = task
        return await asyncio.shield(task)

    async def _load(self, language: str) -> TTSEngine:
        started = time.monotonic()
        try:
            engine = await self._loader(self.settings_for(language))
        finally:
            self._loading.pop(language, None)
        self._engines[language] = engine
        self._used[language] = time.monotonic()
        self.loads += 1
        log.info(
            "loaded the %s model in %.1f s (%d MB of weights); loaded now: %s",
            language, time.monotonic() - started, engine.model_bytes >> 20,
            ", ".join(self._engines),
        )  # fmt: skip
        await self.unload_over_budget(keep=language)
        return engine

    def over_budget(self) -> bool:
        if len(self._engines) > self.settings.tts_models:
            return True
        budget = self.settings.tts_memory_mb << 20
        return bool(budget) and sum(e.model_bytes for e in self._engines.values()) > budget

    async def unload_over_budget(self, keep: str | None = None) -> list[str]:
        """Close idle models, least recently used first, until within the budget."""
        unloaded: list[str] = []
        now = time.monotonic()
        while self.over_budget():
            victim = next(
                (
                    language
                    for language, engine in self._engines.items()
                    if language not in (self.default_language, keep)
                    and engine.idle
                    and now - self._used.get(language, 0.0) >= self.idle_before_unload_s
                ),
                None,
            )
            if victim is None:
                log.info("over the model budget, but every other model is in use")
                break
            engine = self._engines.pop(victim)
            self._used.pop(victim, None)
            await engine.close()
            self.unloads += 1
            unloaded.append(victim)
            log.info("unloaded the idle %s model (least recently used)", victim)
        return unloaded

    async def forget_voice(self, voice: str) -> None:
        """A voice state file was deleted: no loaded model keeps it cached."""
        for engine in list(self._engines.values()):
            await engine.forget_voice(voice)

    # ---- the scheduler's way in ------------------------------------------------------------
    def stream(
        self, text: str, voice: str | None = None, *, background: bool = False,
        language: str | None = None,
    ) -> SynthesisStream:  # fmt: skip
        return self.engine_for(language).stream(text, voice, background=background)

    async def call(
        self, fn: Callable[[Any], T], language: str | None = None, *, background: bool = False
    ) -> T:
        return await self.engine_for(language).call(fn, background=background)

    async def close(self) -> None:
        """Close every model but the default one (its owner closes it)."""
        for task in list(self._loading.values()):
            task.cancel()
        for language, engine in list(self._engines.items()):
            if language != self.default_language:
                await engine.close()
        self._engines = OrderedDict({self.default_language: self.default})
