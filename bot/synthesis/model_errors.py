"""The model's errors, in a module of their own so that commands that never load the model
(`migrate`, `voices list`) can name them without importing torch and pocket-tts (seconds)."""

from __future__ import annotations

from bot.core.errors import OperatorError


class ModelUnavailableError(OperatorError, RuntimeError):
    """The model weights could not be fetched; the message tells the operator the ways out."""


class UnusableVoiceError(OperatorError, ValueError):
    """A voice that cannot be used: unknown name, unreadable clip or state file (the
    operator's DEFAULT_VOICE or a command line's; a member's own voice falls back)."""

    label = "Voice error"
