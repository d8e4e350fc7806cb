"""One model per language, loaded when first needed, least recently used unloaded.

The operator's `TTS_LANGUAGE` model is loaded at start and never unloaded. Another language's
model loads the first time a server or member speaks it: in the engine's own threads, never
on the event loop, while every other server keeps speaking. `TTS_MODELS` (a count) and
`TTS_MEMORY_MB` (the models' weights) bound what is loaded, the loads in flight included: the
budget is checked before a load starts, with each model's size read from its config
(`model_size`), making room by closing the idle models used least recently; when none can
go, the load is refused with a reply saying so (`ModelsBusyError`).
All models' units go through the one `DeadlineScheduler`: a unit names its language and
`stream()` hands it to that language's engine.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from bot.core.config import Config
from bot.core.errors import InternalError, UserError
from bot.i18n.translate import language_name, tr
from bot.synthesis.engine import SynthesisStream, TTSEngine
from bot.synthesis.model_size import config_weights_bytes
from bot.synthesis.tempo import Tempo

log = logging.getLogger(__name__)

T = TypeVar("T")
Loader = Callable[[Config], Awaitable[TTSEngine]]
IDLE_BEFORE_UNLOAD_S = 60.0  # a model used this recently is kept: its queued units need it
# Another language's model keeps fewer voice states in memory than the default one (its own
# per voice: ~6 MB each for the real model), so voices x languages stay bounded.
OTHER_MODEL_STATES = 8
OTHER_MODEL_STATE_MB = 64
CHECK_TIMEOUT_S = 5.0  # asking Hugging Face whether a weights file can be downloaded
CHECK_FAILURE_KEPT_S = 60.0  # a language found unloadable is not checked again for this long


def held_bytes(engine: TTSEngine) -> int:
    """What a loaded model counts against TTS_MEMORY_MB: its weights, and its pipelines'
    attention caches and decoder states (one set per pipeline)."""
    return engine.model_bytes + engine.cache_bytes()


def available_languages() -> tuple[str, ...]:
    """The languages the installed pocket-tts ships a config for (its `config/` folder):
    plain names such as `french`, and `_24l` variants; not the dated english variants."""
    from bot.synthesis.pocket_tts_adapter import CONFIGS_DIR

    names = sorted(path.stem for path in Path(CONFIGS_DIR).glob("*.yaml"))
    plain = [n for n in names if "_" not in n or (n.endswith("_24l") and n.count("_") == 1)]
    return tuple(plain)


class LanguageError(UserError):
    """A language this bot does not offer, or whose model cannot be loaded now."""


def check_language(raw: str, offered: tuple[str, ...]) -> str:
    """The offered language `raw` names (any case, spaces around), else a LanguageError
    listing the offered ones: the one check, for the pool and the settings commands."""
    language = raw.strip().lower()
    if language not in offered:
        raise LanguageError(
            tr(
                "I don't speak “{name}” on this bot. Choose one of: {languages}.",
                name=raw[:30],
                languages=", ".join(offered),
            )
        )
    return language


def _reachable(path: str) -> bool:
    """Whether a file a model config names can be had without loading the model: a local
    file that exists, or an `hf://` file in the Hugging Face cache or that Hugging Face says
    it would serve now (one request, no retries), or an https file pocket-tts cached."""
    if path.startswith("hf://"):
        import huggingface_hub

        repo_and_file, _, revision = path.removeprefix("hf://").partition("@")
        parts = repo_and_file.split("/")
        repo, filename = "/".join(parts[:2]), "/".join(parts[2:])
        cached = huggingface_hub.try_to_load_from_cache(repo, filename, revision=revision or None)
        if isinstance(cached, str):
            return True
        url = huggingface_hub.hf_hub_url(repo, filename, revision=revision or None)
        try:
            huggingface_hub.get_hf_file_metadata(url, timeout=CHECK_TIMEOUT_S)
        except Exception as error:  # offline, gated, missing, timed out: not loadable now
            log.info("cannot fetch %s: %s", path, type(error).__name__)
            return False
        return True
    if path.startswith(("http://", "https://")):
        import hashlib
        from urllib.parse import urlparse

        import requests

        from bot.synthesis.pocket_tts_adapter import make_cache_directory

        suffix = Path(urlparse(path).path).suffix  # where pocket-tts keeps what it fetched
        name = hashlib.sha256(path.encode()).hexdigest() + suffix
        if (make_cache_directory() / name).is_file():
            return True
        try:
            response = requests.head(path, timeout=CHECK_TIMEOUT_S, allow_redirects=True)
        except requests.RequestException:
            return False
        return response.ok
    return Path(path).expanduser().is_file()


def unloadable_reason(config: Path) -> str | None:
    """Why the model of this pocket-tts config cannot be loaded now, checked without loading
    it (seconds and hundreds of MB): the config must parse, and its tokenizer and weights be
    on disk or downloadable. None: it can, as far as that shows. Blocking: run in a thread."""
    from bot.synthesis.pocket_tts_adapter import load_config

    try:
        model = load_config(config)
    except Exception as error:  # a broken config, whatever pocket-tts raises
        log.info("the model config %s is not usable: %s", config, error)
        return tr(
            "its model config {config} is broken ({error})",
            config=config.name,
            error=type(error).__name__,
        )
    flow_lm, mimi = model.flow_lm, model.mimi
    needed = [
        str(p)
        for p in (flow_lm.lookup_table.tokenizer_path, flow_lm.weights_path, mimi.weights_path)
        if p is not None
    ]
    bundles = [str(p) for p in (model.weights_path, model.weights_path_without_voice_cloning) if p]
    missing = [p for p in needed if not _reachable(p)]
    if bundles and not any(_reachable(p) for p in bundles):
        missing.append(bundles[-1])
    if missing:
        log.info("the model of %s needs files it cannot get now: %s", config, ", ".join(missing))
        return tr(
            "its weights are not downloaded here and cannot be fetched now ({file})",
            file=missing[0].rsplit("/", 1)[-1].split("@")[0],
        )
    return None


class ModelsBusyError(UserError):
    """Another model would go past TTS_MODELS or TTS_MEMORY_MB, and none can be unloaded."""


class ModelNotLoadedError(InternalError, RuntimeError):
    """Work for a language whose model is not loaded (unloaded since it was planned): the
    scheduler loads it again first (`ensure`); no other model speaks in its place."""


class ModelPool:
    """The loaded models by language; the scheduler's `synthesize` and `run_call`."""

    def __init__(
        self,
        config: Config,
        default: TTSEngine,
        loader: Loader,
        idle_before_unload_s: float = IDLE_BEFORE_UNLOAD_S,
    ) -> None:
        self.config = config
        self.idle_before_unload_s = idle_before_unload_s
        self.default_language = config.tts_language
        self.default = default
        self.languages: tuple[str, ...] = self.offered(config)
        if self.default_language not in self.languages:
            self.languages = (self.default_language, *self.languages)
        self._engines: OrderedDict[str, TTSEngine] = OrderedDict({self.default_language: default})
        self._used: dict[str, float] = {self.default_language: time.monotonic()}
        self._loading: dict[str, asyncio.Task[TTSEngine]] = {}
        self._sizes: dict[str, int] = {self.default_language: default.model_bytes}
        self._unloadable: dict[str, tuple[float, str]] = {}  # language: (checked at, why)
        self._loader = loader
        self.loads = 0
        self.failures = 0  # loads that raised
        self.unloads = 0

    @staticmethod
    def offered(config: Config) -> tuple[str, ...]:
        """The languages servers and members may choose: `TTS_LANGUAGES` (`all`: every one
        pocket-tts ships), else only `TTS_LANGUAGE`; each one offered can cost a model."""
        if "all" in config.tts_languages:
            return available_languages()
        return config.tts_languages or (config.tts_language,)

    # ---- what is loaded --------------------------------------------------------------------
    def loaded(self) -> list[str]:
        return list(self._engines)

    def last_used(self, language: str) -> float:
        """When a loaded language's model was last asked for (time.monotonic())."""
        return self._used.get(language, 0.0)

    def is_loaded(self, language: str | None) -> bool:
        return language is None or language in self._engines

    def is_loading(self, language: str) -> bool:
        """Being loaded now: one more asking for it costs no other load (`ensure`)."""
        return language in self._loading

    def settings_for(self, language: str) -> Config:
        """The default model's settings with another language: its config from
        `TTS_CONFIG_DIR` when there is one, else the language's weights by name."""
        config = None
        if self.config.tts_config_dir is not None:
            candidate = self.config.tts_config_dir / f"{language}.yaml"
            config = candidate if candidate.is_file() else None
        return self.config.model_copy(update={"tts_language": language, "tts_config": config})

    def engine_for(self, language: str | None) -> TTSEngine:
        """The engine of a loaded language (marked as used). Never another model's: one that
        is not loaded raises ModelNotLoadedError (the scheduler `ensure`s it first)."""
        if language is None or language == self.default_language:
            return self.default
        engine = self._engines.get(language)
        if engine is None:
            raise ModelNotLoadedError(f"the {language} model is not loaded")
        self._engines.move_to_end(language)
        self._used[language] = time.monotonic()
        return engine

    def config_for(self, language: str) -> Path:
        """The config a language's model is loaded from (see `settings_for`)."""
        config = self.settings_for(language).tts_config
        if config is not None:
            return config
        from bot.synthesis.pocket_tts_adapter import CONFIGS_DIR

        return Path(CONFIGS_DIR) / f"{language}.yaml"

    async def check_loadable(self, language: str) -> None:
        """Refuse (LanguageError, with the reason) a language whose model cannot be loaded
        now, checked without loading it (in a thread; a failure is remembered a minute)."""
        language = check_language(language, self.languages)
        if language in self._engines or language in self._loading:
            return
        failed = self._unloadable.get(language)
        reason: str | None
        if failed is not None and time.monotonic() - failed[0] < CHECK_FAILURE_KEPT_S:
            reason = failed[1]
        else:
            try:
                async with asyncio.timeout(4 * CHECK_TIMEOUT_S):
                    reason = await asyncio.to_thread(unloadable_reason, self.config_for(language))
            except TimeoutError:
                reason = tr("its weights could not be checked in time")
            if reason is None:
                self._unloadable.pop(language, None)
                return
            self._unloadable[language] = (time.monotonic(), reason)
        message = tr(
            "I cannot speak {name} on this bot now: {reason}.",
            name=language_name(language),
            reason=reason,
        )
        raise LanguageError(message)

    # ---- loading and unloading -------------------------------------------------------------
    async def ensure(self, language: str) -> TTSEngine:
        """The engine for `language`, loading it first if needed (once, however many ask)."""
        language = check_language(language, self.languages)
        if language in self._engines:
            return self.engine_for(language)
        if language not in self._loading and language not in self._sizes:
            await self._estimate(language)
            if language in self._engines:  # loaded by another caller meanwhile
                return self.engine_for(language)
        task = self._loading.get(language)
        if task is None:
            victims = self._make_room(language)  # no await before the load is counted
            task = asyncio.create_task(self._load(language, victims), name=f"load-{language}")
            self._loading[language] = task
        return await asyncio.shield(task)

    async def _estimate(self, language: str) -> None:
        """Learn a model's size from its config before its first load (in a thread: tens
        of milliseconds). A config that cannot be read leaves the guess (the load fails)."""
        config, quantize = self.config_for(language), self.config.tts_quantize
        try:
            size = await asyncio.to_thread(config_weights_bytes, config, quantize)
        except Exception as error:  # a broken config, whatever pocket-tts raises
            log.info("cannot size the %s model from %s: %r", language, config, error)
            return
        self._sizes.setdefault(language, size)

    def estimated_bytes(self, language: str) -> int:
        """A model's weights before it is loaded: its size when it was last loaded, else
        the size its config gives (`model_size`), else the largest size seen (a guess, for
        a config that could not be read; the budget is checked again once it is loaded)."""
        return self._sizes.get(language) or max(self._sizes.values())

    def _make_room(self, language: str) -> list[TTSEngine]:
        """Take out of use (and return, to be closed) the idle models that must go so that
        `language`'s fits beside what is loaded and loading; refuse when it cannot fit."""
        count = len(self._engines) + len(self._loading) + 1
        weights = sum(held_bytes(e) for e in self._engines.values())
        weights += sum(self.estimated_bytes(name) for name in [*self._loading, language])
        budget = self.config.tts_memory_mb << 20

        def over() -> bool:
            return count > self.config.tts_models or (bool(budget) and weights > budget)

        victims: list[str] = []
        for name in self._evictable():
            if not over():
                break
            victims.append(name)
            count -= 1
            weights -= held_bytes(self._engines[name])
        if over():
            log.info("not loading %s: the model budget is taken by models in use", language)
            raise ModelsBusyError(
                tr(
                    "The language models I can keep loaded are all in use, so I cannot load {name} "
                    "now. Please try again in a minute.",
                    name=language_name(language),
                )
            )
        engines = [self._engines.pop(name) for name in victims]
        for name in victims:
            self._used.pop(name, None)
            log.info("unloading the idle %s model (least recently used) for %s", name, language)
        return engines

    def _evictable(self) -> list[str]:
        """The loaded models that may be closed, least recently used first."""
        now = time.monotonic()
        return [
            language
            for language, engine in self._engines.items()
            if language != self.default_language
            and engine.idle
            and now - self._used.get(language, 0.0) >= self.idle_before_unload_s
        ]

    async def _load(self, language: str, victims: list[TTSEngine]) -> TTSEngine:
        started = time.monotonic()
        try:
            for old in victims:
                await old.close()
                self.unloads += 1
            engine = await self._loader(self.settings_for(language))
        except Exception as error:
            self.failures += 1
            log.warning("could not load the %s model: %s", language, error)
            raise
        finally:
            self._loading.pop(language, None)
        engine.voice_cache.max_items = OTHER_MODEL_STATES
        engine.voice_cache.max_bytes = OTHER_MODEL_STATE_MB << 20
        self._engines[language] = engine
        self._used[language] = time.monotonic()
        self._sizes[language] = engine.model_bytes
        self.loads += 1
        log.info(
            "loaded the %s model in %.1f s (%d MB of weights); loaded now: %s",
            language,
            time.monotonic() - started,
            engine.model_bytes >> 20,
            ", ".join(self._engines),
        )
        await self.unload_over_budget(keep=language)
        return engine

    def over_budget(self) -> bool:
        if len(self._engines) > self.config.tts_models:
            return True
        budget = self.config.tts_memory_mb << 20
        return bool(budget) and sum(held_bytes(e) for e in self._engines.values()) > budget

    async def unload_over_budget(self, keep: str | None = None) -> list[str]:
        """Close idle models, least recently used first, until within the budget (a loaded
        model may be larger than its estimate)."""
        unloaded: list[str] = []
        while self.over_budget():
            victim = next((name for name in self._evictable() if name != keep), None)
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
        self,
        text: str,
        voice: str | None = None,
        *,
        background: bool = False,
        language: str | None = None,
        tempo: Tempo | None = None,
        last: bool = True,
        slack: Callable[[], float] | None = None,
    ) -> SynthesisStream:
        return self.engine_for(language).stream(
            text, voice, background=background, tempo=tempo, last=last, slack=slack
        )

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
