"""What the fake Discord sends, checked against Discord's own typings.

`schemas/discord.schema.json` holds JSON Schemas generated from discord-api-types
(`schemas/generate.mjs`); every object in them refuses a property the typings do not name. The
fake checks each payload before it sends it: every gateway payload (each dispatch, interactions
included), every voice websocket payload and every JSON body of a REST response. A field that
Discord never sends (a `member` on the messages of an interaction's `data.resolved`, which hid
a security hole) so fails the test that made the fake send it:

- at once, in the test's own task (`await fake.post(...)` raises `InvalidPayloadError`);
- else (inside one of the fake's aiohttp handlers, where an exception is swallowed) at the
  test's teardown: the payload is sent, the error is kept, and the autouse fixture at the end
  of tests/conftest.py fails the test with it (`fail_on_invalid_payloads`).

A field the fake must send although the typings lack it goes in `ALLOWED`, with its reason.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when first used: the benchmarks' fake runs without test tools
    from jsonschema.exceptions import ValidationError

SCHEMA_FILE = Path(__file__).parent / "schemas" / "discord.schema.json"

# ---- what is checked against what --------------------------------------------------------------
GATEWAY_EVENTS = {  # a dispatch's event name (`t`, op 0) -> its whole payload's definition
    "READY": "GatewayReadyDispatch",
    "RESUMED": "GatewayResumedDispatch",
    "GUILD_CREATE": "GatewayGuildCreateDispatch",
    "GUILD_DELETE": "GatewayGuildDeleteDispatch",
    "GUILD_ROLE_CREATE": "GatewayGuildRoleCreateDispatch",
    "CHANNEL_CREATE": "GatewayChannelCreateDispatch",
    "CHANNEL_DELETE": "GatewayChannelDeleteDispatch",
    "THREAD_CREATE": "GatewayThreadCreateDispatch",
    "MESSAGE_CREATE": "GatewayMessageCreateDispatch",
    "MESSAGE_UPDATE": "GatewayMessageUpdateDispatch",
    "MESSAGE_DELETE": "GatewayMessageDeleteDispatch",
    "VOICE_STATE_UPDATE": "GatewayVoiceStateUpdateDispatch",
    "VOICE_SERVER_UPDATE": "GatewayVoiceServerUpdateDispatch",
    "INTERACTION_CREATE": "GatewayInteractionCreateDispatch",
}
GATEWAY_OPS = {10: "GatewayHello", 11: "GatewayHeartbeatAck", 9: "GatewayInvalidSession"}
VOICE_OPS = {
    2: "VoiceReady",
    4: "VoiceSessionDescription",
    6: "VoiceHeartbeatAck",
    8: "VoiceHello",
    9: "VoiceResumed",
    21: "VoiceDavePrepareTransition",  # DAVE's JSON ops (tests/fakediscord/dave.py)
    22: "VoiceDaveExecuteTransition",
    24: "VoiceDavePrepareEpoch",
}
_ID = r"[0-9]+"
_TOKEN = r"[^/]+"
_APP = f"applications/{_ID}"
REST_ROUTES: list[tuple[str, str, str]] = [  # method, path after /api/v10/, definition
    ("GET", "users/@me", "RESTGetAPICurrentUserResult"),
    ("GET", "users/@me/guilds", "RESTGetAPICurrentUserGuildsResult"),
    ("GET", "gateway/bot", "RESTGetAPIGatewayBotResult"),
    ("GET", "oauth2/applications/@me", "RESTGetAPIOAuth2CurrentApplicationResult"),
    ("GET", f"guilds/{_ID}", "RESTGetAPIGuildResult"),
    # RESTGetAPIGuildChannelsResult is `APIGuildChannel[]`, the base that every guild channel
    # extends: it lacks `position`, a voice channel's `bitrate`... Discord sends whole channels.
    ("GET", f"guilds/{_ID}/channels", "APIChannel[]"),
    ("GET", f"guilds/{_ID}/members/{_ID}", "RESTGetAPIGuildMemberResult"),
    ("GET", f"{_APP}/commands", "RESTGetAPIApplicationCommandsResult"),
    ("PUT", f"{_APP}/commands", "RESTPutAPIApplicationCommandsResult"),
    ("GET", f"{_APP}/guilds/{_ID}/commands", "RESTGetAPIApplicationGuildCommandsResult"),
    ("PUT", f"{_APP}/guilds/{_ID}/commands", "RESTPutAPIApplicationGuildCommandsResult"),
    ("POST", f"channels/{_ID}/messages", "RESTPostAPIChannelMessageResult"),
    (
        "POST",
        f"interactions/{_ID}/{_TOKEN}/callback",
        "RESTPostAPIInteractionCallbackWithResponseResult",
    ),
    ("POST", f"webhooks/{_ID}/{_TOKEN}", "RESTPostAPIWebhookWithTokenWaitResult"),
    (
        "GET",
        f"webhooks/{_ID}/{_TOKEN}/messages/(@original|{_ID})",
        "RESTGetAPIWebhookWithTokenMessageResult",
    ),
    (
        "PATCH",
        f"webhooks/{_ID}/{_TOKEN}/messages/(@original|{_ID})",
        "RESTPatchAPIWebhookWithTokenMessageResult",
    ),
]
REST_ERROR = "RESTError"  # the body of every 4xx/5xx

# ---- the allow-list ----------------------------------------------------------------------------
# Fields the fake must send that the typings lack: (definition, property) -> (the schema the
# property gets, why). They are applied when the schemas are loaded; nothing else is.
ALLOWED: dict[tuple[str, str], tuple[dict[str, Any], str]] = {
    ("GatewayResumedDispatch", "d"): (
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"_trace": {"type": "array", "items": {"type": "string"}}},
        },
        "the typings give RESUMED no data (`d: undefined`), but Discord sends an object "
        '(`{"_trace": [...]}`) and discord.py writes the shard\'s id into it '
        "(`data['__shard_id__'] = ...` in DiscordWebSocket.received_message): with null it fails",
    ),
    ("VoiceDavePrepareEpoch", "seq"): (
        {"type": "number"},
        "voice gateway v8 numbers what it sends for a resume's `seq_ack`, and the typings give "
        "21 and 22 their `seq` (`_DataPayload`), but 24 is an interface of its own without it",
    ),
}


# ---- what the typings cannot say ---------------------------------------------------------------
def _no_member_on_webhook_messages(payload: Any) -> list[str]:
    """A webhook's message has no `member` ("Missing for ephemeral messages and messages from
    webhooks": the message object's documentation). The typings make `member` and `webhook_id`
    optional each, apart, so no schema refuses both together. An application's interaction
    response also has a `webhook_id` (the application's id), and an `application_id`: it is not
    a webhook's message."""
    if payload.get("op") != 0 or payload.get("t") not in ("MESSAGE_CREATE", "MESSAGE_UPDATE"):
        return []
    message = payload.get("d") or {}
    if message.get("webhook_id") and not message.get("application_id") and "member" in message:
        return [
            f"gateway {payload['t']}: a webhook's message (webhook_id "
            f"{message['webhook_id']}) has a `member`: Discord sends none"
        ]
    return []


# The fields of a poll result embed, name -> what its value (always a string) holds: the "Poll
# Result Embed Fields" table of the message resource's documentation
# (https://discord.com/developers/docs/resources/message#embed-fields-by-embed-type-poll-result-embed-fields).
# discord-api-types 0.38.57 does not type them (an embed field is any name and value), so
# the typings cannot refuse a field Discord never sends there.
POLL_RESULT_FIELDS = {
    "poll_question_text": r"(?s).{0,300}",
    "victor_answer_votes": r"[0-9]+",
    "total_votes": r"[0-9]+",
    "victor_answer_id": r"[0-9]+",
    "victor_answer_text": r"(?s).{0,55}",
    "victor_answer_emoji_id": r"[0-9]+",
    "victor_answer_emoji_name": r"(?s).+",
    "victor_answer_emoji_animated": r"true|false",
}
POLL_RESULT_REQUIRED = ("poll_question_text", "victor_answer_votes", "total_votes")


def _poll_results_as_documented(payload: Any) -> list[str]:
    """A POLL_RESULT message (type 46) holds a `poll_result` embed whose fields are those
    documented, values as text, the three unmarked ones always there, and a reference to the
    poll's message; a `poll_result` embed is on no other message."""
    if payload.get("op") != 0 or payload.get("t") not in ("MESSAGE_CREATE", "MESSAGE_UPDATE"):
        return []
    message = payload.get("d") or {}
    results = [e for e in message.get("embeds") or [] if e.get("type") == "poll_result"]
    where = f"gateway {payload['t']}"
    if message.get("type") != 46:
        return (
            [f"{where}: a poll_result embed on a message of type {message.get('type')}"]
            if results
            else []
        )
    errors = [] if results else [f"{where}: a POLL_RESULT message without a poll_result embed"]
    if not (message.get("message_reference") or {}).get("message_id"):
        errors.append(f"{where}: a POLL_RESULT message that references no poll")
    for embed in results:
        names = [field.get("name") for field in embed.get("fields") or []]
        for field in embed.get("fields") or []:
            pattern = POLL_RESULT_FIELDS.get(field.get("name"))
            if pattern is None:
                errors.append(
                    f"{where}: a poll_result field Discord has not: {field.get('name')!r}"
                )
            elif not re.fullmatch(pattern, str(field.get("value"))):
                errors.append(f"{where}: poll_result {field['name']}={field.get('value')!r}")
        errors += [
            f"{where}: a poll_result embed without {name}"
            for name in POLL_RESULT_REQUIRED
            if name not in names
        ]
    return errors


GATEWAY_RULES = (_no_member_on_webhook_messages, _poll_results_as_documented)


class InvalidPayloadError(AssertionError):
    """The fake Discord was about to send a payload that Discord's typings refuse."""


# ---- the schemas -------------------------------------------------------------------------------
def _known_bits(
    validator: Any, bits: list[int], value: Any, schema: Any
) -> Iterator[ValidationError]:
    """`x-known-bits` (generate.mjs): a bitfield holds only its flags' bits."""
    from jsonschema.exceptions import ValidationError

    if validator.is_type(value, "integer") and value & ~sum(bits):
        yield ValidationError(f"{value} has bits that no flag names: {value & ~sum(bits)}")


@cache
def _validator_class() -> Any:
    import jsonschema
    from jsonschema import validators

    return validators.extend(jsonschema.Draft7Validator, {"x-known-bits": _known_bits})


@cache
def _root() -> dict[str, Any]:
    root = json.loads(SCHEMA_FILE.read_text())
    definitions = root["definitions"]
    for (name, field), (allowed, _reason) in ALLOWED.items():
        schema = definitions[name]
        assert "properties" in schema, f"ALLOWED: {name} is not an object with properties"
        schema["properties"][field] = allowed
    return root


@cache
def validator(definition: str) -> Any:
    """The validator of one definition; `Name[]` is an array of them."""
    root = _root()
    if definition.endswith("[]"):
        item = definition.removesuffix("[]")
        if item not in root["definitions"]:
            raise KeyError(f"no definition {item!r} in {SCHEMA_FILE.name}")
        schema = {"type": "array", "items": {"$ref": f"#/definitions/{item}"}}
    else:
        if definition not in root["definitions"]:
            raise KeyError(f"no definition {definition!r} in {SCHEMA_FILE.name}")
        schema = {"$ref": f"#/definitions/{definition}"}
    return _validator_class()({**schema, "definitions": root["definitions"]})


def _closest(error: ValidationError) -> list[ValidationError]:
    """What a payload lacks to be valid: for a union (anyOf), what the member that came
    closest refused (the fewest errors, the deepest), and so on down."""
    if not error.context:
        return [error]
    by_member: dict[Any, list[ValidationError]] = {}
    for sub in error.context:
        by_member.setdefault(sub.relative_schema_path[0], []).append(sub)
    member = min(by_member.values(), key=_distance)
    return [leaf for sub in member for leaf in _closest(sub)]


def _distance(errors: list[ValidationError]) -> tuple[bool, int, int]:
    """How far a union's member is from a payload: first whether the payload is not even of
    its kind (another JSON type, or another `type`/`op`/`t` constant near its top, as a null
    for a message, or a component interaction for a command), then how many errors, the
    deepest first."""
    other_kind = any(e.validator in ("type", "const") and len(e.relative_path) <= 2 for e in errors)
    return other_kind, len(errors), -max(len(e.absolute_path) for e in errors)


def errors_of(payload: Any, definition: str) -> list[str]:
    """Why `payload` is not a `definition` (nothing when it is), as readable lines."""
    lines = []
    for error in validator(definition).iter_errors(payload):
        for leaf in _closest(error):
            where = "".join(f"[{p!r}]" for p in leaf.absolute_path) or "(the payload)"
            lines.append(f"{definition}: at {where}: {leaf.message}")
    return list(dict.fromkeys(lines))


# ---- what each kind of payload is ---------------------------------------------------------------
def gateway_errors(payload: Any) -> list[str]:
    """A payload the gateway sends (op, t, s, d)."""
    op = payload.get("op")
    if op == 0:
        definition = GATEWAY_EVENTS.get(payload.get("t"))
        if definition is None:
            return [
                f"gateway: no schema for the event {payload.get('t')!r}: add it to "
                f"generate.mjs and GATEWAY_EVENTS"
            ]
    else:
        definition = GATEWAY_OPS.get(op)
        if definition is None:
            return [f"gateway: no schema for op {op!r}: add it to generate.mjs and GATEWAY_OPS"]
    errors = [f"gateway {payload.get('t') or op}: {e}" for e in errors_of(payload, definition)]
    return errors + [error for rule in GATEWAY_RULES for error in rule(payload)]


def voice_errors(payload: Any) -> list[str]:
    """A payload the voice websocket sends."""
    definition = VOICE_OPS.get(payload.get("op"))
    if definition is None:
        return [f"voice: no schema for op {payload.get('op')!r}: add it to VOICE_OPS"]
    return [f"voice op {payload['op']}: {e}" for e in errors_of(payload, definition)]


def rest_definition(method: str, path: str, status: int) -> str | None:
    if status >= 400:
        return REST_ERROR
    for route_method, pattern, definition in REST_ROUTES:
        if route_method == method and re.fullmatch(pattern, path):
            return definition
    return None


def rest_errors(method: str, path: str, status: int, body: Any) -> list[str]:
    """The JSON body of a REST response to `method` /api/v10/`path`."""
    definition = rest_definition(method, path, status)
    if definition is None:
        return [f"REST {method} {path}: no schema for this route: add it to REST_ROUTES"]
    return [f"REST {method} {path} ({status}): {e}" for e in errors_of(body, definition)]


# ---- how a failure reaches the test ------------------------------------------------------------
# Errors found inside the fake's handlers, which the test that started them fails with.
UNRAISED: list[str] = []
_in_handler: contextvars.ContextVar[bool] = contextvars.ContextVar("in_handler", default=False)


@contextlib.contextmanager
def handling() -> Iterator[None]:
    """Around one of the fake's aiohttp handlers: what it finds is kept, not raised."""
    token = _in_handler.set(True)
    try:
        yield
    finally:
        _in_handler.reset(token)


def report(errors: list[str], kept: list[str]) -> None:
    """Raise `errors` in the test's own task; keep them for its teardown in a handler's."""
    if not errors:
        return
    kept.extend(errors)
    if _in_handler.get():
        UNRAISED.extend(errors)
    else:
        raise InvalidPayloadError(
            "the fake Discord sent what Discord never sends:\n" + "\n".join(errors)
        )


@contextlib.contextmanager
def fail_on_invalid_payloads() -> Iterator[None]:
    """Around one test: fail it if a fake Discord's handler sent an invalid payload meanwhile."""
    start = len(UNRAISED)
    yield
    found = UNRAISED[start:]
    del UNRAISED[start:]
    if found:
        import pytest

        pytest.fail(
            "the fake Discord sent what Discord never sends (tests/fakediscord/"
            "payload_check.py):\n" + "\n".join(found),
            pytrace=False,
        )
