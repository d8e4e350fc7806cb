"""What the speech service refuses, each with its HTTP status and OpenAI's error shape."""

from __future__ import annotations

from typing import Any

from bot.core.errors import UserError


class ServiceRefusal(UserError):
    """A request the client can fix (or retry later): said to it as OpenAI says errors."""

    status = 400
    kind = "invalid_request_error"

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.param, self.code, self.retry_after = param, code, retry_after

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }


class BadRequest(ServiceRefusal):
    """400: a field missing or out of range, an unknown voice or format."""


class Unauthorized(ServiceRefusal):
    status = 401
    kind = "invalid_request_error"


class Forbidden(ServiceRefusal):
    """403: a form sent by a page of another site (a browser sends those without asking)."""

    status = 403


class LengthRequired(ServiceRefusal):
    """411: a form whose length is not said first (its bound is checked before it is read)."""

    status = 411


class TooLarge(ServiceRefusal):
    status = 413


class TooSlow(ServiceRefusal):
    """408: the body did not come in time (a client holding its connection open)."""

    status = 408


class TooMany(ServiceRefusal):
    """429: the key's limits, or no room for another stream now (`retry_after` seconds)."""

    status = 429
    kind = "rate_limit_error"


class SpeechFailed(ServiceRefusal):
    """500: the speech could not be made (a voice that cannot be loaded here, the model
    failing), said before any audio was sent, so the client gets an error and its status
    instead of a 200 and a cut stream. The client may try another voice or later."""

    status = 500
    kind = "server_error"


class Busy(SpeechFailed):
    """503: no audio came in time (the model busy with others): try again later."""

    status = 503
