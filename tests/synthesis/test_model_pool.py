"""The languages' models: loaded once on demand, least recently used idle ones unloaded
within the budget, the default one never. Real tiny models, one config per language."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import pytest
import yaml

from bot.core.config import Config
from bot.playback.speakers import Speakers
from bot.synthesis.engine import TTSEngine, weights_nbytes
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_pool import (
    OTHER_MODEL_STATE_MB,
    OTHER_MODEL_STATES,
    LanguageError,
    ModelNotLoadedError,
    ModelPool,
    ModelsBusyError,
    available_languages,
    held_bytes,
)
from bot.synthesis.model_size import config_weights_bytes
from tests.conftest import TinyModel, engine_settings
from tests.e2e.test_languages import language_configs


def test_the_languages_come_from_the_installed_package() -> None:
    languages = available_languages()
    for language in ("english", "french", "german", "italian", "spanish", "portuguese", "dutch"):
        assert language in languages
    assert "french_24l" in languages
    assert not any(name.startswith("english_20") for name in languages)  # dated variants


async def pool_of(tmp_path: Path, tiny_model: TinyModel, **env: str) -> ModelPool:
    folder = language_configs(tmp_path, tiny_model.config, ("french", "german", "italian"))
    settings = engine_settings(
        tiny_model.config,
        tiny_model.clip,
        TTS_CONFIG_DIR=str(folder),
        TTS_LANGUAGES="french,german,italian",
        TTS_BATCH="1",
        **env,
    )
    default = await load_engine(settings)
    return ModelPool(
        settings,
        default,
        partial(load_engine, batch=1, background=True),
        idle_before_unload_s=0.0,
    )


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
async def test_a_language_loads_once_however_many_ask(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    pool = await pool_of(tmp_path, tiny_model)
    try:
        engines = await asyncio.gather(*(pool.ensure("french") for _ in range(3)))
        assert len({id(e) for e in engines}) == 1 and pool.loads == 1
        assert pool.loaded() == ["english", "french"]
        assert engines[0].fingerprint != pool.default.fingerprint
        with pytest.raises(LanguageError, match="one of: english, french, german, italian"):
            await pool.ensure("spanish")  # installed, but not among TTS_LANGUAGES
        async with pool.stream("Bonjour.", language="french") as stream:
            audio = [chunk async for chunk in stream]
        assert sum(len(c) for c in audio) > 0
    finally:
        await pool.close()
        await pool.default.close()


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
async def test_over_the_model_count_the_least_recently_used_idle_model_goes(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    pool = await pool_of(tmp_path, tiny_model, TTS_MODELS="3")
    try:
        french = await pool.ensure("french")
        await pool.ensure("german")
        pool.engine_for("french")  # french was used last: german is the older one
        await pool.ensure("italian")
        assert pool.loaded() == ["english", "french", "italian"] and pool.unloads == 1
        assert french.idle  # loaded, nothing running
        # a busy model stays, even over the budget
        stream = pool.stream("A long sentence that keeps the french model busy.", language="french")
        assert not french.idle
        await pool.ensure("german")
        assert "french" in pool.loaded() and "italian" not in pool.loaded()
        stream.cancel()
    finally:
        await pool.close()
        await pool.default.close()


async def test_the_memory_budget_counts_the_models_weights(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    pool = await pool_of(tmp_path, tiny_model)
    size_mb = pool.default.model_bytes >> 20
    assert size_mb > 10  # the tiny model's weights: tens of MB
    two_models_mb = (2 * pool.default.model_bytes >> 20) + 1
    pool.config = pool.config.model_copy(update={"tts_memory_mb": two_models_mb})
    try:
        await pool.ensure("french")
        await pool.ensure("german")  # three models do not fit: french, idle, goes
        assert pool.loaded() == ["english", "german"]
        # an unloaded language's speech is never the default model's
        with pytest.raises(ModelNotLoadedError, match="french"):
            pool.engine_for("french")
    finally:
        await pool.close()
        await pool.default.close()


@pytest.mark.process  # two pipelines: worker processes
async def test_the_memory_budget_counts_each_pipelines_caches(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """Every pipeline has its own attention caches and decoder states: they count against
    TTS_MEMORY_MB beside the weights, once per pipeline; and each worker process's copy of
    the weights (two pipelines: worker processes) beside this process's."""
    settings = engine_settings(tiny_model.config, tiny_model.clip, TTS_PIPELINES="2")
    default = await load_engine(settings, batch=2)
    pool = ModelPool(settings, default, partial(load_engine, batch=2, background=True))
    try:
        assert default.pipelines is not None and len(default.pipelines) == 2
        assert default.model_bytes == 3 * weights_nbytes(default.model)
        one = default.pipelines.pipelines[0].cache_bytes()
        assert one > 1 << 20  # the tiny model's, at 2 rows: about 10 MB
        assert default.cache_bytes() == 2 * one
        assert held_bytes(default) == default.model_bytes + 2 * one
        weights_mb = default.model_bytes >> 20
        pool.config = settings.model_copy(update={"tts_memory_mb": weights_mb + 1})
        assert pool.over_budget()  # the weights fit; with both pipelines' caches they do not
        enough_mb = (held_bytes(default) >> 20) + 1
        pool.config = settings.model_copy(update={"tts_memory_mb": enough_mb})
        assert not pool.over_budget()
    finally:
        await pool.close()
        await default.close()


async def test_the_budget_is_checked_before_loading_counting_the_loads_in_flight(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """A burst of languages never loads past TTS_MODELS: a load that would not fit, with
    every other model in use, is refused with a clear reply instead of loaded anyway."""
    pool = await pool_of(tmp_path, tiny_model, TTS_MODELS="2")
    pool.idle_before_unload_s = 3600.0  # every loaded model counts as in use
    try:
        results = await asyncio.gather(
            *(pool.ensure(language) for language in ("french", "german", "italian")),
            return_exceptions=True,
        )
        loaded = [r for r in results if isinstance(r, TTSEngine)]
        refused = [r for r in results if isinstance(r, ModelsBusyError)]
        assert len(loaded) == 1 and len(refused) == 2, results
        assert len(pool.loaded()) == 2 and pool.loads == 1
        assert "all in use" in refused[0].message and "try again" in refused[0].message
        # once a model is idle long enough, the next language takes its place
        pool.idle_before_unload_s = 0.0
        await pool.ensure("italian")
        assert len(pool.loaded()) == 2 and "italian" in pool.loaded()
    finally:
        await pool.close()
        await pool.default.close()


async def test_the_memory_budget_is_checked_before_loading(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    pool = await pool_of(tmp_path, tiny_model)
    two_models_mb = (2 * pool.default.model_bytes >> 20) + 1
    pool.config = pool.config.model_copy(update={"tts_memory_mb": two_models_mb})
    pool.idle_before_unload_s = 3600.0
    try:
        await pool.ensure("french")
        with pytest.raises(ModelsBusyError):
            await pool.ensure("german")  # a third would not fit, and french is in use
        assert pool.loaded() == ["english", "french"] and pool.loads == 1
    finally:
        await pool.close()
        await pool.default.close()


def widen(config: Path, dim_feedforward: int = 8192) -> None:
    """The tiny model with wider feed-forward layers: about 2.2 times its weights (100 MB
    against 45), as a `_24l` model is about 3 times an ordinary one."""
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["flow_lm"]["transformer"]["dim_feedforward"] = dim_feedforward
    config.write_text(f"# {config.stem}, wider\n{yaml.safe_dump(settings)}", encoding="utf-8")


async def test_a_larger_model_is_counted_at_its_size_before_it_loads(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """Two larger languages asked at once, with room for the default model and one of them:
    the second is refused before it loads, its size read from its config. It was guessed
    from the largest model loaded so far (the default), so both loaded: 2,982 MB against
    TTS_MEMORY_MB=2000 with two `_24l` models beside `english`."""
    pool = await pool_of(tmp_path, tiny_model, TTS_QUANTIZE="0")  # int8 would narrow them
    folder = pool.config.tts_config_dir
    assert folder is not None
    for language in ("french", "german"):
        widen(folder / f"{language}.yaml")
    wide = config_weights_bytes(folder / "french.yaml")
    assert wide > 2 * pool.default.model_bytes
    budget_mb = (pool.default.model_bytes + wide >> 20) + 2
    pool.config = pool.config.model_copy(update={"tts_memory_mb": budget_mb})
    pool.idle_before_unload_s = 3600.0  # nothing may be unloaded to make room
    try:
        results = await asyncio.gather(
            pool.ensure("french"), pool.ensure("german"), return_exceptions=True
        )
        loaded = [r for r in results if isinstance(r, TTSEngine)]
        refused = [r for r in results if isinstance(r, ModelsBusyError)]
        assert len(loaded) == 1 and len(refused) == 1, results
        assert loaded[0].model_bytes == wide  # the size read was the size loaded
        weights = sum(pool.engine_for(name).model_bytes for name in pool.loaded())
        assert weights <= budget_mb << 20 and pool.loads == 1
    finally:
        await pool.close()
        await pool.default.close()


def test_only_the_operators_languages_are_offered_by_default(tiny_model: TinyModel) -> None:
    settings = engine_settings(tiny_model.config, tiny_model.clip, TTS_LANGUAGE="french")
    assert ModelPool.offered(settings) == ("french",)
    every = engine_settings(tiny_model.config, tiny_model.clip, TTS_LANGUAGES="all")
    assert ModelPool.offered(every) == available_languages()


@pytest.mark.slow
async def test_another_languages_voice_states_are_bounded(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """Each language's model keeps its own state per voice (~6 MB each for the real model):
    another language's model keeps only a few, so many voices times many languages stay
    within a bound."""
    pool = await pool_of(tmp_path, tiny_model)
    try:
        french = await pool.ensure("french")
        clips = []
        for number in range(OTHER_MODEL_STATES + 3):
            clip = tmp_path / f"voice-{number}.wav"
            clip.write_bytes(tiny_model.clip.read_bytes())
            clips.append(clip)
        for clip in clips:
            await french.voice_state(str(clip))
        assert len(french.voice_cache) == OTHER_MODEL_STATES
        assert french.voice_cache.max_bytes == OTHER_MODEL_STATE_MB << 20
        assert str(clips[-1]) in french.voice_cache and str(clips[0]) not in french.voice_cache
    finally:
        await pool.close()
        await pool.default.close()


@pytest.mark.slow
async def test_speech_whose_model_was_unloaded_meanwhile_loads_it_again(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """A message planned for french (its model loaded then) waits; meanwhile french, idle,
    is unloaded to make room for german. Its speech loads french again: it is never spoken
    by another model (it once fell back to the default one, with a warning)."""
    pool = await pool_of(tmp_path, tiny_model, TTS_MODELS="2")
    speakers = Speakers(pool.default, models=pool)
    try:
        french = await pool.ensure("french")  # the plan: french's model, its voice state
        await pool.ensure("german")  # french, idle, goes
        assert pool.loaded() == ["english", "german"]
        with pytest.raises(ModelNotLoadedError, match="french"):
            pool.engine_for("french")  # no quiet fallback to the default model
        audio = await speakers.scheduler.background_speech(
            "Bonjour.", None, (1, None), language="french"
        )
        assert len(audio) > 0
        assert pool.loaded() == ["english", "french"] and pool.loads == 3
        assert pool.engine_for("french") is not french  # loaded again, not the default
        assert pool.engine_for("french").fingerprint == french.fingerprint
    finally:
        await speakers.close()
        await pool.close()
        await pool.default.close()


@pytest.mark.slow
async def test_speech_whose_model_cannot_be_loaded_again_is_refused_clearly(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """The same, but every other model is in use: the speech is refused with the pool's
    reply, not spoken by the default model."""
    pool = await pool_of(tmp_path, tiny_model, TTS_MODELS="2")
    speakers = Speakers(pool.default, models=pool)
    try:
        await pool.ensure("french")
        await pool.ensure("german")
        pool.idle_before_unload_s = 3600.0  # german is in use now: nothing may go
        with pytest.raises(ModelsBusyError, match="all in use"):
            await speakers.scheduler.background_speech(
                "Bonjour.", None, (1, None), language="french"
            )
        assert pool.loaded() == ["english", "german"] and pool.loads == 2
        assert speakers.scheduler.jobs == []
    finally:
        await speakers.close()
        await pool.close()
        await pool.default.close()


@pytest.mark.slow
async def test_a_model_loading_again_holds_up_no_other_speech(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """While french loads again for its waiting message, the one lane goes on with the
    default language's work: the job waiting for its model is set aside, not run."""
    folder = language_configs(tmp_path, tiny_model.config, ("french", "german"))
    settings = engine_settings(
        tiny_model.config,
        tiny_model.clip,
        TTS_CONFIG_DIR=str(folder),
        TTS_LANGUAGES="french,german",
        TTS_BATCH="1",
        TTS_MODELS="2",
    )
    french_loads: list[Config] = []
    waiting, release = asyncio.Event(), asyncio.Event()

    async def loader(settings: Config) -> TTSEngine:
        if settings.tts_language == "french":
            french_loads.append(settings)
            if len(french_loads) == 2:  # loading it again: slow
                waiting.set()
                await release.wait()
        return await load_engine(settings, batch=1, background=True)

    pool = ModelPool(settings, await load_engine(settings), loader, idle_before_unload_s=0.0)
    speakers = Speakers(pool.default, models=pool)
    scheduler = speakers.scheduler
    try:
        await pool.ensure("french")
        await pool.ensure("german")  # french goes
        french = asyncio.create_task(
            scheduler.background_speech("Bonjour.", None, (1, None), language="french")
        )
        async with asyncio.timeout(60):
            await waiting.wait()
            english = await scheduler.background_speech("Hello.", None, (2, None))
        assert len(english) > 0 and not french.done()  # spoken while french still loads
        release.set()
        async with asyncio.timeout(60):
            assert len(await french) > 0
        assert pool.loaded() == ["english", "french"] and pool.loads == 3
    finally:
        release.set()
        await speakers.close()
        await pool.close()
        await pool.default.close()
