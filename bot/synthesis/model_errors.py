"""The model's errors, in a module of their own so that commands that never load the model
(`migrate`, `voices list`) can name them without importing torch and pocket-tts (seconds)."""

from __future__ import annotations

from bot.core.errors import InternalError, OperatorError


class ModelUnavailableError(OperatorError, RuntimeError):
    """The model weights could not be fetched; the message tells the operator the ways out."""


class UnusableVoiceError(OperatorError, ValueError):
    """A voice that cannot be used: unknown name, unreadable clip or state file (the
    operator's DEFAULT_VOICE or a command line's; a member's own voice falls back)."""

    label = "Voice error"


class StreamRefused(InternalError, RuntimeError):
    """A stream the synthesis pipelines could not take or carry to its end (a worker process
    that died or refused it, a stream that stalled): that stream ends with it, the pipelines
    go on. The caller falls back or answers with an error."""
