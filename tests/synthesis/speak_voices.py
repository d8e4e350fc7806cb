"""Speak one line in each of several voices, one after the other, through the engine with its
pipelines in worker processes, and say what became of each (a JSON line per voice).

`python -m tests.synthesis.speak_voices CONFIG CLIP VOICE...` runs it in a process of its own,
so that a test can run it where the process's surroundings differ: a `/dev/shm` of a few
kilobytes in a mount namespace of its own (test_worker_faults.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bot.core.config import load_config
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine

TEXT = "Hello there, this is my voice."
ENDS_WITHIN_S = 10.0  # what the issue asks of any request, whatever fails on its way


async def speak(engine: TTSEngine, voice: str) -> dict[str, Any]:
    """The line in `voice`: its audio's length, its error or "hung" past ENDS_WITHIN_S."""
    started = time.monotonic()
    samples, error = 0, None
    stream = engine.stream(TEXT, voice)
    try:
        async with asyncio.timeout(ENDS_WITHIN_S):
            async for chunk in stream:
                samples += len(chunk)
    except TimeoutError:
        error = "hung"
    except Exception as failed:
        error = f"{type(failed).__name__}: {failed}"
    finally:
        stream.cancel()
    took = time.monotonic() - started
    return {"voice": Path(voice).name, "samples": samples, "error": error, "took": took}


async def main(config: str, clip: str, voices: list[str]) -> None:
    shm = os.statvfs("/dev/shm")  # where the process runs: what it may share there
    print(json.dumps({"shm_bytes": shm.f_blocks * shm.f_frsize}), flush=True)
    settings = load_config(
        {
            "TTS_CONFIG": config,
            "DEFAULT_VOICE": clip,
            "TTS_PIPELINES": "2",
            "TTS_PIPELINE_MODE": "processes",
            "TTS_BATCH": "2",
        },
        dotenv_path=None,
        require_token=False,
    )
    engine = await load_engine(settings)
    try:
        for voice in voices:
            print(json.dumps(await speak(engine, voice)), flush=True)
    finally:
        await engine.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
