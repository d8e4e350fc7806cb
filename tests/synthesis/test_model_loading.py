"""Loading another language's model, successful or failed, never stalls the event loop:
a probe task sleeps 10 ms at a time and records how late it wakes up, while the default
model speaks (the CPU is busy, as on a bot in use) and another model loads."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
import yaml

from bot.core import gc_pauses
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_pool import ModelPool
from tests.conftest import TinyModel, bot_on_fake_discord, engine_settings
from tests.e2e.test_languages import language_configs
from tests.e2e.test_speech import audio_packets
from tests.fakediscord import FakeDiscord

STALL_LIMIT_S = 0.1


@contextlib.asynccontextmanager
async def loop_stalls() -> AsyncIterator[list[float]]:
    """The probe: how late each 10 ms sleep woke up (the loop's stalls), while inside.

    As the bot does after start-up (`bot.core.gc_pauses`), what is alive is first frozen out
    of the collector's sight: in the test process, hundreds of tests' objects are alive, and
    a full collection that a load's allocations set off walked them all with the loop
    stopped (263 ms once in a full run, against 5-8 ms for the same test alone). That is the
    test process's heap, not the load path; the bot's own heap is frozen after start."""
    gc_pauses.freeze_after_startup()
    lateness: list[float] = []

    async def probe() -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.01)
            lateness.append(time.monotonic() - before - 0.01)

    task = asyncio.create_task(probe())
    try:
        yield lateness
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        gc.unfreeze()


async def keep_speaking(engine: TTSEngine, stop: asyncio.Event) -> None:
    """The default model speaks all along, so the CPU is as busy as on a bot in use."""
    while not stop.is_set():
        async with engine.stream("A sentence that keeps the default model busy, again.") as s:
            async for _ in s:
                if stop.is_set():
                    break


def broken_config(folder: Path, base: Path, language: str) -> None:
    """A config whose weights file is missing: the load fails after building the model."""
    config = yaml.safe_load(base.read_text())
    config["weights_path"] = str(folder / "missing.safetensors")
    (folder / f"{language}.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


@pytest.mark.parametrize("outcome", ["loads", "fails"])
@pytest.mark.slow
@pytest.mark.timing
async def test_a_model_load_never_stalls_the_event_loop(
    tmp_path: Path, tiny_model: TinyModel, outcome: str
) -> None:
    folder = language_configs(tmp_path, tiny_model.config, ("french",))
    broken_config(folder, tiny_model.config, "german")
    settings = engine_settings(
        tiny_model.full_length_config,
        tiny_model.clip,
        TTS_CONFIG_DIR=str(folder),
        TTS_LANGUAGES="french,german",
        TTS_BATCH="1",
    )
    default = await load_engine(settings)
    pool = ModelPool(settings, default, partial(load_engine, batch=1, background=True))
    stop = asyncio.Event()
    speaking = asyncio.create_task(keep_speaking(default, stop))
    try:
        await asyncio.sleep(0.3)  # speech under way
        async with loop_stalls() as lateness:
            if outcome == "loads":
                await pool.ensure("french")
            else:
                with pytest.raises(Exception):  # noqa: B017
                    await pool.ensure("german")
        longest = max(lateness)
        print(f"{outcome}: longest loop stall {longest * 1000:.1f} ms over {len(lateness)} probes")
        assert longest < STALL_LIMIT_S
    finally:
        stop.set()
        await speaking
        await pool.close()
        await default.close()


@pytest.mark.timing
async def test_loads_in_a_running_bot_never_stall_its_event_loop(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """End to end: one server speaks while a member's /say loads french, then while another
    member's load of a language whose weights went missing after /set (german) fails."""
    folder = language_configs(tmp_path, tiny_model.config, ("french",))
    env = {
        "TTS_CONFIG_DIR": str(folder),
        "TTS_LANGUAGES": "french,german",
        "TTS_CONFIG": str(tiny_model.full_length_config),
    }
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as run:
        fake, bot = run.fake, run.bot
        # Not asyncio's debug mode: it names slow callbacks, but it also extracts a stack for
        # every callback (each chunk a synthesis thread hands the loop), and that alone made
        # the probe's stalls 24-74 ms where they are 18-37 ms without it.
        await fake.set_voice_state("alice", FakeDiscord.VOICE_ID)
        await fake.set_voice_state("bob", FakeDiscord.GUILD2_VOICE_ID)
        long_text = "This message keeps one server talking while a model loads. " * 4
        say = await fake.interaction("say", {"text": long_text}, user="bob", guild=fake.GUILD2_ID)
        assert (await say.wait_final())["content"].startswith("Speaking in")
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 50, 30, "speech")
        longest: dict[str, float] = {}
        for language, outcome in (("french", "loads"), ("german", "fails")):
            if outcome == "fails":  # checked at /set, broken since
                broken_config(folder, tiny_model.config, language)
            guild, alice = int(fake.GUILD_ID), int(fake.humans["alice"].id)
            await bot.app.db.members.set_language(alice, guild, language)
            async with loop_stalls() as lateness:
                say = await fake.interaction("say", {"text": "Hello there."})
                assert (await say.wait_final())["content"].startswith(f"Loading {language}")
                await fake.wait_for(
                    lambda language=language: (
                        language in bot.app.models.loaded() or bot.app.models.failures > 0
                    ),
                    60,
                    f"the {language} load",
                )
                await asyncio.sleep(0.5)  # and what follows it
            longest[outcome] = max(lateness)
        print(", ".join(f"{k}: longest loop stall {v * 1000:.1f} ms" for k, v in longest.items()))
        assert all(stall < STALL_LIMIT_S for stall in longest.values()), longest
        assert "german" not in bot.app.models.loaded() and "french" in bot.app.models.loaded()
