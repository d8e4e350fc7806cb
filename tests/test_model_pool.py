"""The languages' models: loaded once on demand, least recently used idle ones unloaded
within the budget, the default one never. Real tiny models, one config per language."""

from __future__ import annotations

import asyncio
import dataclasses
from functools import partial
from pathlib import Path

import pytest

from bot.engine import TTSEngine
from bot.model_pool import LanguageError, ModelPool, available_languages
from tests.conftest import TinyModel, engine_settings
from tests.test_e2e_languages import language_configs


def test_the_languages_come_from_the_installed_package() -> None:
    languages = available_languages()
    for language in ("english", "french", "german", "italian", "spanish", "portuguese", "dutch"):
        assert language in languages
    assert "french_24l" in languages
    assert not any(name.startswith("english_20") for name in languages)  # dated variants


async def pool_of(tmp_path: Path, tiny_model: TinyModel, **env: str) -> ModelPool:
    folder = language_configs(tmp_path, tiny_model.config, ("french", "german", "italian"))
    settings = engine_settings(
        tiny_model.config, tiny_model.clip, TTS_CONFIG_DIR=str(folder),
        TTS_LANGUAGES="french,german,italian", TTS_BATCH="1", **env,
    )  # fmt: skip
    default = await TTSEngine.load(settings)
    return ModelPool(
        settings, default, partial(TTSEngine.load, batch=1, background=True),
        idle_before_unload_s=0.0,
    )  # fmt: skip


async def test_a_language_loads_once_however_many_ask(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    pool = await pool_of(tmp_path, tiny_model)
    try:
        engines = await asyncio.gather(*(pool.ensure("french") for _ in range(3)))
        assert len({id(e) for e in engines}) == 1 and pool.loads == 1
        assert pool.loaded() == ["english", "french"]
        assert engines[0].fingerprint != pool.default.fingerprint
        with pytest.raises(LanguageError, match="Languages: english, french, german, italian"):
            await pool.ensure("spanish")  # installed, but not among TTS_LANGUAGES
        async with pool.stream("Bonjour.", language="french") as stream:
            audio = [chunk async for chunk in stream]
        assert sum(len(c) for c in audio) > 0
    finally:
        await pool.close()
        await pool.default.close()


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
    pool.settings = dataclasses.replace(pool.settings, tts_memory_mb=2 * size_mb + 1)
    try:
        await pool.ensure("french")
        await pool.ensure("german")  # three models do not fit: french, idle, goes
        assert pool.loaded() == ["english", "german"]
        # an unloaded language's queued speech falls back to the default model
        assert pool.engine_for("french") is pool.default
    finally:
        await pool.close()
        await pool.default.close()
