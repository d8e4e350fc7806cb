"""LOG_LEVEL and DISCORD_LOG_LEVEL: what the process logs, and what it must never log."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.__main__ import DATABASE_DRIVERS, configure_logging
from bot.core.config import ConfigError, load_config
from bot.storage.database import Database

TOKEN = "MTAx.secret-token-value"
# What discord.py 2.7.1's gateway logs at DEBUG for each event (gateway.py, received_message):
# the whole payload, a member's message included.
MESSAGE = '{"t": "MESSAGE_CREATE", "d": {"content": "my secret words"}}'


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """configure_logging changes the process's loggers: put them back for the other tests."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    names = ("discord", "pocket_tts", "bot", *DATABASE_DRIVERS)
    named = {name: logging.getLogger(name).level for name in names}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, old in named.items():
        logging.getLogger(name).setLevel(old)


def _logged(settings_env: dict[str, str]) -> str:
    """Configure logging as the CLI does, then log as discord.py and the bot do; the output."""
    settings = load_config({"DISCORD_TOKEN": TOKEN, **settings_env}, dotenv_path=None)
    configure_logging(settings.log_level, settings.log_format, settings.discord_log_level)
    stream = io.StringIO()
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(stream)
    logging.getLogger("discord.gateway").debug("For Shard ID %s: WebSocket Event: %s", 0, MESSAGE)
    logging.getLogger("discord.voice_state").debug("voice key %s", "secret-key")
    logging.getLogger("discord.client").info("logging in using static token")
    logging.getLogger("bot.engine").debug("a bot debug line")
    return stream.getvalue()


def test_debug_logs_the_bot_but_not_what_discord_py_sees(restored_logging: None) -> None:
    out = _logged({"LOG_LEVEL": "DEBUG"})
    assert "a bot debug line" in out
    assert "logging in using static token" in out  # discord.py's INFO lines stay
    assert "my secret words" not in out and "secret-key" not in out


def test_discord_py_debug_only_when_the_operator_asks_for_it(restored_logging: None) -> None:
    out = _logged({"LOG_LEVEL": "INFO", "DISCORD_LOG_LEVEL": "DEBUG"})
    assert "my secret words" in out  # asked for separately, knowingly
    assert "a bot debug line" not in out


def test_a_quieter_log_level_quiets_discord_py_too(restored_logging: None) -> None:
    out = _logged({"LOG_LEVEL": "WARNING"})
    assert out == ""


async def test_at_debug_the_database_drivers_never_log_what_members_wrote(
    restored_logging: None, tmp_path: Path
) -> None:
    """aiosqlite logs each statement with its parameters at DEBUG: kept at INFO, whatever
    LOG_LEVEL says (a real SQLite store, written through the bot's own repositories)."""
    settings = load_config({"DISCORD_TOKEN": TOKEN, "LOG_LEVEL": "DEBUG"}, dotenv_path=None)
    configure_logging(settings.log_level, settings.log_format, settings.discord_log_level)
    stream = io.StringIO()
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(stream)
    database = await Database.open(tmp_path / "pv.db")
    try:
        await database.members.set_nick(1, 2, "my secret nickname")
        await database.dictionary.add(2, "secretword", "my secret reading")
    finally:
        await database.close()
    logging.getLogger("bot.engine").debug("a bot debug line")
    out = stream.getvalue()
    assert "a bot debug line" in out  # DEBUG is on
    assert "secret" not in out.replace(TOKEN, ""), out


def test_a_bad_discord_log_level_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="DISCORD_LOG_LEVEL"):
        load_config({"DISCORD_TOKEN": TOKEN, "DISCORD_LOG_LEVEL": "LOUD"}, dotenv_path=None)
