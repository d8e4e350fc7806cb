"""The speech service in the test's own loop, on the tests' tiny model: its real HTTP server
on a free port of 127.0.0.1, its own scheduler, a data folder of the test's."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

from bot.core.config import load_config
from bot.speech_api.server import SpeechServer, standalone_scheduler
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_pool import ModelPool
from tests.conftest import TinyModel

KEY = "test-key-0123456789abcdef"


@contextlib.asynccontextmanager
async def running_service(
    tmp_path: Path,
    engine: TTSEngine,
    tiny_model: TinyModel,
    *,
    wyoming: bool = False,
    **env: str,
) -> AsyncIterator[SpeechServer]:
    """`env`: the operator's settings beside the tiny model's (SPEECH_API_KEYS, ...);
    `wyoming`: Wyoming too (on a free port, `server.wyoming_port`)."""
    voices = tmp_path / "service-voices"
    voices.mkdir(exist_ok=True)
    shutil.copy(tiny_model.voice_state, voices / "narrator.safetensors")
    settings = load_config(
        {
            "TTS_CONFIG": str(tiny_model.config),
            "DEFAULT_VOICE": str(tiny_model.clip),
            "DATA_DIR": str(tmp_path),
            **env,
        },
        dotenv_path=None,
        require_token=False,
    )
    settings = settings.model_copy(
        update={"speech_port": 0, "wyoming_port": 0 if wyoming else None}
    )
    models = ModelPool(settings, engine, partial(load_engine, batch=1, background=True))
    scheduler = standalone_scheduler(engine, models)
    server = SpeechServer(settings, scheduler, models)
    await server.start()
    try:
        yield server
    finally:
        await server.close()
        await scheduler.close()
