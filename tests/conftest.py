"""Shared fixtures: a tiny random-weight Pocket TTS model, engines, and a bot on a fake Discord."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.client import PocketVoiceBot
from bot.core.config import Config, load_config
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from tests.audio_samples import make_clip
from tests.fakediscord import FakeDiscord
from tests.postgres_server import PostgresServer, PostgresUnavailableError
from tests.tiers import MARKERS, guard_unit_tier, mark
from tests.tiny_model import train_tokenizer, write_random_config, write_voice_state

__all__ = ["guard_unit_tier"]  # an autouse fixture of every test

TINY_BASE = "english_2m_2026-10"
GUILD_READY_TIMEOUT_S = 0.5


def pytest_configure(config: pytest.Config) -> None:
    for name, what in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mark(items)


@dataclass(frozen=True)
class TinyModel:
    config: Path  # stops after ~0.7 s of audio, like random weights do
    full_length_config: Path  # no end-of-speech: each text runs to its natural length
    clip: Path  # a 3 s voice clip (WAV, 24 kHz)
    # The clip's voice state (.safetensors, as /clone saves): the bots on the fake Discord
    # start with it as their default voice. Encoding the clip took a quarter of a bot's start
    # (0.25 of 1.0 CPU-s, 2026-12-03), at every one of the suite's ~150 starts. The engines
    # below, the capacity test and the shards' processes start from the clip itself.
    voice_state: Path


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> TinyModel:
    folder = tmp_path_factory.mktemp("tiny-model")
    tokenizer = train_tokenizer(folder, 4000)
    config = write_random_config(TINY_BASE, folder, tokenizer=tokenizer)
    clip = make_clip(folder / "voice.wav")
    return TinyModel(
        config=config,
        full_length_config=write_random_config(
            TINY_BASE, folder, tokenizer=tokenizer, full_length=True
        ),
        clip=clip,
        voice_state=write_voice_state(config, clip, folder / "voice.safetensors"),
    )


def engine_settings(config: Path, clip: Path, **env: str) -> Config:
    return load_config(
        {"TTS_CONFIG": str(config), "DEFAULT_VOICE": str(clip), **env},
        dotenv_path=None,
        require_token=False,
    )


@pytest.fixture(scope="session")
async def engine(tiny_model: TinyModel) -> AsyncIterator[TTSEngine]:
    engine = await load_engine(engine_settings(tiny_model.config, tiny_model.clip))
    yield engine
    await engine.close()


@pytest.fixture(scope="session")
async def full_engine(tiny_model: TinyModel) -> AsyncIterator[TTSEngine]:
    engine = await load_engine(engine_settings(tiny_model.full_length_config, tiny_model.clip))
    yield engine
    await engine.close()


class ReadDecisions(logging.Handler):
    """What the bot decided about each chat message ('read', 'rate limited', ...), as it logs
    it: the line "message ID: decision" of `cogs.autoread` at DEBUG (never the text)."""

    LOGGER = "cogs.autoread"
    LINE = re.compile(r"message (\d+): (.+)")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.by_message: dict[int, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        found = self.LINE.fullmatch(record.getMessage())
        if found is not None:
            self.by_message[int(found[1])] = found[2]

    def listen(self) -> None:
        logger = logging.getLogger(self.LOGGER)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(self)

    def stop(self) -> None:
        logger = logging.getLogger(self.LOGGER)
        logger.removeHandler(self)
        if not any(isinstance(h, ReadDecisions) for h in logger.handlers):  # no other bot's
            logger.setLevel(logging.NOTSET)


@dataclass
class RunningBot:
    bot: PocketVoiceBot
    fake: FakeDiscord
    task: asyncio.Task[None]
    decisions: ReadDecisions


@contextlib.asynccontextmanager
async def bot_on_fake_discord(
    tmp_path: Path,
    tiny_model: TinyModel,
    extra_env: dict[str, str] | None = None,
    extra_guilds: int = 0,
    shards: int = 1,
) -> AsyncIterator[RunningBot]:
    """Start a fake Discord and the real bot pointed at it through the operator settings.

    `extra_guilds`: more servers beside the two standard ones (`fake.add_guild(n)`);
    `shards`: the shard count the fake Discord recommends (automatic sharding)."""
    fake = FakeDiscord(tmp_path, shards=shards)
    for number in range(extra_guilds):
        fake.add_guild(number)
    await fake.start()
    env = {
        **fake.env,
        "TTS_CONFIG": str(tiny_model.config),
        "DEFAULT_VOICE": str(tiny_model.voice_state),
        "DATA_DIR": str(tmp_path),
        **(extra_env or {}),
    }
    bot = PocketVoiceBot(load_config(env, dotenv_path=None))
    # discord.py waits this long after the last GUILD_CREATE before READY (2 s): the fake sends
    # its guilds at once after READY, as Discord does for a small bot
    bot._connection.guild_ready_timeout = GUILD_READY_TIMEOUT_S
    decisions = ReadDecisions()
    decisions.listen()
    task = asyncio.create_task(bot.start(env["DISCORD_TOKEN"]))
    try:
        ready = asyncio.create_task(bot.wait_until_ready())
        await asyncio.wait({ready, task}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        if task.done():  # start-up failed: show why, not a timeout
            ready.cancel()
            task.result()
            raise RuntimeError("the bot stopped during start-up")
        await asyncio.wait_for(ready, 0.1)
        yield RunningBot(bot, fake, task, decisions)
    finally:
        await bot.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)
        await fake.close()
        decisions.stop()
        gc.unfreeze()  # the bot froze what was alive at its start: let this test's go


@pytest.fixture
async def running_bot(tmp_path: Path, tiny_model: TinyModel) -> AsyncIterator[RunningBot]:
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        yield running


# ---- PostgreSQL ---------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server for the whole run; it is never skipped: if it cannot start,
    the tests that need it fail with the reason."""
    try:
        server = PostgresServer()
        server.start()
    except PostgresUnavailableError as error:
        pytest.fail(f"PostgreSQL could not be started for the tests: {error}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_at(request: pytest.FixtureRequest, tmp_path: Path) -> str | Path:
    """Where a test's store is: a SQLite file, or a new database on the test PostgreSQL."""
    if request.param == "sqlite":
        return tmp_path / "pv.db"
    server: PostgresServer = request.getfixturevalue("postgres")
    return await server.new_database()


# ---- the fake Discord's payloads ----------------------------------------------------------------
@pytest.fixture(autouse=True)
def fake_discord_payloads_checked() -> Iterator[None]:
    """Fails a test whose fake Discord sent, from one of its handlers, a payload that Discord's
    typings refuse (tests/fakediscord/payload_check.py; in the test's own task it raises)."""
    from tests.fakediscord.payload_check import fail_on_invalid_payloads

    with fail_on_invalid_payloads():
        yield


@pytest.fixture(autouse=True)
def fake_discord_heard_every_packet() -> Iterator[None]:
    """Fails a test during which a fake Discord's UDP socket overflowed: the kernel dropped
    packets the bot had sent, so any count of what was heard would blame the bot."""
    from tests.fakediscord.voice_udp import VoiceUDPServer

    before = VoiceUDPServer.kernel_drops_at_close
    yield
    dropped = VoiceUDPServer.kernel_drops_at_close - before
    assert dropped == 0, f"the fake Discord's UDP socket overflowed: {dropped} packets lost"


def shown_settings(message: dict[str, object]) -> dict[str, str]:
    """/settings' embed as {setting: "value · description"}: each group's field holds a line
    `name: value · description` per setting (French: `name : ...`); other fields (the
    dictionary) by their name."""
    shown: dict[str, str] = {}
    for field in message["embeds"][0]["fields"]:  # type: ignore[index]
        lines = [re.match(r"([a-z_]+) ?: (.*)", line) for line in field["value"].split("\n")]
        if all(lines):
            shown.update(line.group(1, 2) for line in lines if line)
        else:
            shown[field["name"]] = field["value"]
    return shown
