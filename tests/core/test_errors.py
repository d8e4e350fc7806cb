"""The one error tree (issue 21): every exception class of `bot/` stands on `OperatorError`,
`UserError` or `InternalError`, and one function turns any error into a reply."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from bot.core.errors import InternalError, OperatorError, PocketVoiceError, UserError

ROOT = Path(__file__).resolve().parents[2]
LIGHT = (  # the modules raising our errors (the engine's torch stays out: errors.py names it)
    "bot.core.config",
    "bot.ops.endpoints",
    "bot.playback.audio_source",
    "bot.playback.speakers",
    "bot.storage.copy_to_postgres",
    "bot.storage.server_settings",
    "bot.storage.database",
    "bot.storage.stores",
    "bot.storage.migrations",
    "bot.storage.voice_records",
    "bot.synthesis.model_errors",
    "bot.synthesis.voice_library",
    "bot.synthesis.model_pool",
    "bot.synthesis.scheduler",
    "bot.synthesis.clip",
)


def test_every_error_class_of_bot_is_on_the_tree() -> None:
    found = {}
    for name in LIGHT:
        module = importlib.import_module(name)
        for value in vars(module).values():
            ours = inspect.isclass(value) and value.__module__ == name
            if ours and issubclass(value, Exception):
                found[value.__qualname__] = value
    assert len(found) >= 17
    bases = (OperatorError, UserError, InternalError)
    off = [name for name, cls in found.items() if not issubclass(cls, bases)]
    assert not off, f"not on the error tree: {off}"
    assert all(issubclass(base, PocketVoiceError) for base in bases)


def test_reply_for_says_a_users_error_and_names_any_other_by_id() -> None:
    from bot.services.replies import reply_for

    assert reply_for(UserError("Give a name."), "/clone").content == "Give a name."
    for error in (OperatorError("METRICS_PORT"), InternalError(), KeyError("x")):
        assert "error id" in reply_for(error, "/say").content
