"""The check of the fake Discord's payloads (payload_check.py): it refuses what Discord never
sends, the unreal payloads the fake used to send first, and accepts what the fake sends now, of
every kind. No socket: the fake is never started; its gateway is a list, its REST handler is
called with requests built in memory."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from aiohttp import streams, web
from aiohttp.test_utils import make_mocked_request

from tests.fakediscord import payload_check
from tests.fakediscord.payload_check import (
    GATEWAY_EVENTS,
    REST_ROUTES,
    InvalidPayloadError,
    errors_of,
    gateway_errors,
    rest_errors,
    voice_errors,
)
from tests.fakediscord.server import FakeDiscord, without

JSON = dict[str, Any]


class Gateway:
    """A connected shard's websocket, which keeps what it is sent."""

    closed = False

    def __init__(self) -> None:
        self.sent: list[JSON] = []

    async def send_json(self, payload: JSON) -> None:
        self.sent.append(payload)


@pytest.fixture
def fake(tmp_path: Path) -> FakeDiscord:
    """A fake Discord, never started (its payload builders only), whose shard 0 is connected."""
    fake = FakeDiscord(tmp_path)
    fake.port = 4443
    fake._gateways[0] = Gateway()  # type: ignore[assignment]
    fake.udp.transport = mock.Mock(get_extra_info=lambda key: ("127.0.0.1", 50004))
    return fake


def sent(fake: FakeDiscord) -> list[JSON]:
    return fake._gateways[0].sent  # type: ignore[attr-defined]


def last(fake: FakeDiscord, event: str) -> JSON:
    return next(p for p in reversed(sent(fake)) if p.get("t") == event)


def dispatch(event: str, data: JSON) -> JSON:
    return {"op": 0, "t": event, "s": 1, "d": data}


def test_every_object_of_the_schemas_refuses_unknown_properties() -> None:
    definitions = json.loads(payload_check.SCHEMA_FILE.read_text())["definitions"]
    open_objects = []

    def walk(schema: Any, where: str) -> None:
        if isinstance(schema, dict):
            if "properties" in schema and schema.get("additionalProperties") is not False:
                open_objects.append(where)
            for key, value in schema.items():
                walk(value, f"{where}/{key}")
        elif isinstance(schema, list):
            for i, value in enumerate(schema):
                walk(value, f"{where}/{i}")

    walk(definitions, "definitions")
    assert open_objects == []
    for definition in {*GATEWAY_EVENTS.values(), *(d for _, _, d in REST_ROUTES)}:
        payload_check.validator(definition)  # each named definition exists


# ---- what it refuses ---------------------------------------------------------------------------
async def test_a_resolved_message_with_a_member_is_refused(fake: FakeDiscord) -> None:
    """The hole: the messages of a message command's `data.resolved` carried the author's
    `member`, which Discord sends only in MESSAGE_CREATE/MESSAGE_UPDATE."""
    message = await fake.post("bob", "read me", mentions=("alice",))
    await fake.interaction("Speak this message", user="alice", target=message)
    interaction = last(fake, "INTERACTION_CREATE")
    assert gateway_errors(interaction) == []
    resolved = interaction["d"]["data"]["resolved"]["messages"][message["id"]]
    assert "member" not in resolved and resolved["author"]["id"] == fake.humans["bob"].id

    with_member = copy.deepcopy(interaction)
    with_member["d"]["data"]["resolved"]["messages"][message["id"]]["member"] = message["member"]
    (error,) = gateway_errors(with_member)
    assert "['resolved']['messages']" in error and "'member' was unexpected" in error
    # the old fake's: the MESSAGE_CREATE payload itself (member, guild_id, mentions' members)
    as_dispatched = copy.deepcopy(interaction)
    as_dispatched["d"]["data"]["resolved"]["messages"][message["id"]] = message
    errors = gateway_errors(as_dispatched)
    assert any("'guild_id', 'member' were unexpected" in e for e in errors), errors
    assert any("['mentions'][0]" in e and "'member' was unexpected" in e for e in errors), errors


async def test_a_webhook_message_with_a_member_is_refused_by_a_rule(fake: FakeDiscord) -> None:
    """The typings make a message's `member` and `webhook_id` optional each, apart: no schema
    can refuse them together, so a rule of payload_check.py does (GATEWAY_RULES)."""
    await fake.post_webhook("Tupperbox", "hello from a bridge")
    message = last(fake, "MESSAGE_CREATE")
    assert gateway_errors(message) == []
    assert "member" not in message["d"]

    with_member = copy.deepcopy(message)
    with_member["d"]["member"] = fake._author_member_json(fake.humans["alice"])
    assert errors_of(with_member, "GatewayMessageCreateDispatch") == []  # the typings allow it
    (error,) = gateway_errors(with_member)
    assert "a webhook's message" in error and "`member`" in error
    # an application's interaction response has a webhook_id too, and may have a member
    response = copy.deepcopy(with_member)
    response["d"]["application_id"] = fake.app_id
    assert gateway_errors(response) == []


def old(data: JSON, **changes: Any) -> JSON:
    return {**copy.deepcopy(data), **changes}


async def test_the_old_unreal_payloads_are_refused(fake: FakeDiscord) -> None:
    """What the check found in the fake, each as the fake used to send it."""
    ready = fake._ready_json(0)
    guild = fake._guild_json(fake.GUILD_ID)
    fake.voice_by_guild[fake.GUILD_ID][fake.humans["alice"].id] = fake.VOICE_ID
    member = fake._member_json(fake.humans["bob"])
    message = await fake.post("bob", "hi", mentions=("alice",))
    with_permissions = dict(member, permissions="0")
    resolved_member = fake._resolved_member_json(fake.humans["bob"])
    await fake.interaction("say", {"member": "bob", "channel": fake.VOICE_ID})
    command = last(fake, "INTERACTION_CREATE")
    webhook = await fake.post_webhook("hook", "hi")
    role = (await fake.add_role("Mods")).to_json()
    asked = await fake.post("bob", "", poll=FakeDiscord.poll_json("Q?", ["Pizza", "Pasta"]))
    result = await fake.end_poll(asked, {1: 2})
    cases: dict[str, tuple[JSON, str]] = {
        "READY with a user account's fields": (
            dispatch("READY", old(ready, private_channels=[], relationships=[])),
            "'private_channels', 'relationships' were unexpected",
        ),
        "READY's application without flags_new": (
            dispatch("READY", old(ready, application={"id": fake.app_id, "flags": 0})),
            "'flags_new' is a required property",
        ),
        "a role without its colors": (
            dispatch(
                "GUILD_ROLE_CREATE",
                {
                    "guild_id": fake.GUILD_ID,
                    "role": {k: v for k, v in role.items() if k != "colors"},
                },
            ),
            "'colors' is a required property",
        ),
        "GUILD_CREATE's members with permissions": (
            dispatch("GUILD_CREATE", old(guild, members=[with_permissions])),
            "'permissions' was unexpected",
        ),
        "GUILD_CREATE's voice states with their guild_id": (
            dispatch(
                "GUILD_CREATE",
                old(
                    guild,
                    voice_states=[fake._voice_state_json(fake.humans["alice"], fake.VOICE_ID)],
                ),
            ),
            "'guild_id' was unexpected",
        ),
        "GUILD_CREATE without what every guild has": (
            dispatch("GUILD_CREATE", {k: v for k, v in guild.items() if k != "afk_timeout"}),
            "'afk_timeout' is a required property",
        ),
        "a message's member with permissions": (
            dispatch(
                "MESSAGE_CREATE", old(message, member=dict(message["member"], permissions="0"))
            ),
            "'permissions' was unexpected",
        ),
        "a mention's member with its user": (
            dispatch(
                "MESSAGE_CREATE",
                old(message, mentions=[dict(fake.humans["alice"].to_json(), member=member)]),
            ),
            "'user' was unexpected",
        ),
        "a reply's referenced message as dispatched": (
            dispatch("MESSAGE_CREATE", old(message, type=19, referenced_message=message)),
            "'guild_id', 'member' were unexpected",
        ),
        "a webhook's author without global_name": (
            dispatch(
                "MESSAGE_CREATE",
                old(
                    webhook,
                    author={k: v for k, v in webhook["author"].items() if k != "global_name"},
                ),
            ),
            "'global_name' is a required property",
        ),
        "a resolved member with deaf and mute": (
            patched(
                command,
                ["d", "data", "resolved", "members", fake.humans["bob"].id],
                dict(resolved_member, deaf=False, mute=False),
            ),
            "'deaf', 'mute' were unexpected",
        ),
        "a resolved channel with its guild_id": (
            patched(
                command,
                ["d", "data", "resolved", "channels", fake.VOICE_ID, "guild_id"],
                fake.GUILD_ID,
            ),
            "'guild_id' was unexpected",
        ),
        "RESUMED's data as null (discord.py writes into it)": (
            dispatch("RESUMED", None),  # type: ignore[arg-type]
            "None is not of type 'object'",
        ),
        "a poll as a bot creates it (its duration), not as Discord sends it": (
            dispatch(
                "MESSAGE_CREATE",
                old(
                    message,
                    poll=dict(
                        without(FakeDiscord.poll_json("Q?", ["a", "b"]), "expiry", "results"),
                        duration=24,
                    ),
                ),
            ),
            "'duration' was unexpected",
        ),
        "a poll result's winner by a field name Discord has not": (
            dispatch(
                "MESSAGE_CREATE",
                old(
                    result,
                    embeds=[
                        {
                            "type": "poll_result",
                            "fields": [
                                *result["embeds"][0]["fields"],
                                {"name": "winner", "value": "Pizza"},
                            ],
                        }
                    ],
                ),
            ),
            "a poll_result field Discord has not: 'winner'",
        ),
        "a poll result's count as a word": (
            dispatch(
                "MESSAGE_CREATE",
                old(
                    result,
                    embeds=[
                        {
                            "type": "poll_result",
                            "fields": [
                                {"name": "poll_question_text", "value": "Q?"},
                                {"name": "victor_answer_votes", "value": "two"},
                                {"name": "total_votes", "value": "3"},
                            ],
                        }
                    ],
                ),
            ),
            "poll_result victor_answer_votes='two'",
        ),
        "a poll result without the poll it ends": (
            dispatch("MESSAGE_CREATE", without(result, "message_reference")),
            "references no poll",
        ),
        "a poll result embed on a plain message": (
            dispatch("MESSAGE_CREATE", old(message, embeds=result["embeds"])),
            "a poll_result embed on a message of type 0",
        ),
        "a poll result embed of a type Discord has not": (
            dispatch(
                "MESSAGE_CREATE",
                old(message, type=46, embeds=[{"type": "poll_results", "fields": []}]),
            ),
            "'poll_results' is not one of",
        ),
        "a message flag that Discord has not": (
            dispatch("MESSAGE_CREATE", old(message, flags=1 << 40)),
            "has bits that no flag names",
        ),
    }
    for what, (payload, expected) in cases.items():
        errors = gateway_errors(payload)
        assert any(expected in e for e in errors), f"{what}: {errors}"
    the_voice_hello_before = {"op": 8, "d": {"heartbeat_interval": 13750}}
    assert "'v' is a required property" in voice_errors(the_voice_hello_before)[0]
    application = {k: v for k, v in fake._application_json().items() if k != "summary"}
    (error,) = rest_errors("GET", "oauth2/applications/@me", 200, application)
    assert "'summary' is a required property" in error
    rest_guild = {k: v for k, v in guild.items() if k not in fake.GUILD_CREATE_ONLY}
    (error,) = rest_errors("GET", f"guilds/{fake.GUILD_ID}", 200, dict(rest_guild, large=False))
    assert "'large' was unexpected" in error
    (error,) = rest_errors("POST", "interactions/1/t/callback", 400, {"message": "no code"})
    assert "'code' is a required property" in error
    command_as_sent = {
        "name": "x",
        "type": 1,
        "description": "d",
        "id": "1",
        "version": "1",
        "application_id": fake.app_id,
        "default_member_permissions": 32,
        "integration_types": None,
    }
    errors = rest_errors("PUT", f"applications/{fake.app_id}/commands", 200, [command_as_sent])
    assert any("32 is not of type 'string'" in e for e in errors), errors
    assert any("None is not of type 'array'" in e for e in errors), errors
    (error,) = rest_errors("GET", "users/@me/relationships", 200, [])
    assert "no schema for this route" in error


def patched(payload: JSON, path: list[str], value: Any) -> JSON:
    changed = copy.deepcopy(payload)
    node = changed
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return changed


# ---- what it accepts: the fake's payloads of every kind ----------------------------------------
async def test_the_fakes_dispatches_of_every_event_are_accepted(fake: FakeDiscord) -> None:
    fake.voice_by_guild[fake.GUILD_ID][fake.humans["bob"].id] = fake.VOICE_ID
    await fake.dispatch("READY", fake._ready_json(0), 0)
    await fake.resend_guild()
    await fake.join_guild(7)
    await fake.set_voice_state("alice", fake.VOICE_ID)
    await fake.set_voice_state("alice", fake.STAGE_ID, suppress=True)
    await fake.set_voice_state("alice", None)
    role = await fake.add_role("No TTS")
    fake.give_role("bob", role)
    fake.nicks[fake.humans["bob"].id] = "Bobby"
    clip = fake.attachment("clip.wav", b"RIFF")
    message = await fake.post("bob", "hello <@1>", mentions=("alice",), attachments=(clip,))
    reply = await fake.post("alice", "a reply", reply_to=message, flags=1 << 12)
    await fake.post("otherbot", "beep")
    await fake.post_webhook("Tupperbox", "a persona", hook="tupper")
    poll = FakeDiscord.poll_json("Pizza or pasta?", [("Pizza", "🍕"), "Pasta"])
    asked = await fake.post("bob", "", poll=poll)
    await fake.end_poll(asked, {1: 2, 2: 1})  # a winner, with its emoji
    await fake.end_poll(asked, {1: 1, 2: 1})  # a tie
    await fake.end_poll(asked, {})  # no votes
    thread = await fake.create_thread("bob", fake.TEXT_ID, "Plans")  # a thread of #general
    await fake.post("alice", "in the thread", thread["id"])
    await fake.add_forum()  # a forum, and a post in it: a thread with its starter message
    await fake.post_in_forum("bob", "Weekend plans", "Who is in?")
    await fake.resend_guild()  # (with the forum in its channels, the threads in its threads)
    await fake.interaction("setup add", {"channel": fake.FORUM_ID}, permissions=8)
    await fake.edit(reply, "an edited reply")
    await fake.delete(message)
    await fake.interaction("say", {"text": "hi", "speed": 1.5, "count": 2, "loud": True})
    await fake.interaction("voice use", {"name": "al"}, focused="name", locale="fr")
    await fake.interaction("config reading ignored_role", {"value": role}, permissions=8)
    await fake.interaction("block", {"member": "bob", "channel": fake.TEXT_ID})
    await fake.interaction("xsaid", {"user": fake.humans["bob"]}, guild=fake.GUILD2_ID)
    await fake.interaction("clone", {"name": "Mine", "clip": clip, "consent": True})
    await fake.interaction("Speak this message", target=reply)
    await fake.interaction("Speak this message", target=last(fake, "MESSAGE_CREATE")["d"])
    shown = {
        "id": "1300000000000009999",
        "content": "Press Preview",
        "flags": 64,
        "components": [
            {
                "type": 1,
                "components": [
                    {
                        "type": 2,
                        "style": 1,
                        "label": "Preview",
                        "custom_id": "pv:preview:1",
                        "emoji": {"id": None, "name": "▶"},
                    }
                ],
            }
        ],
    }  # (as discord.py sends)
    await fake.click(shown, "pv:preview:1", user="bob")
    await fake._bot_voice_state({"guild_id": fake.GUILD_ID, "channel_id": int(fake.VOICE_ID)})
    fake.server_update_first = True
    await fake._bot_voice_state({"guild_id": fake.GUILD_ID, "channel_id": fake.STAGE_ID})
    await fake.move_voice_server(fake.GUILD_ID)
    await fake._bot_voice_state({"guild_id": fake.GUILD_ID, "channel_id": None})
    await fake.move_bot(fake.VOICE2_ID)
    await fake.delete_channel(fake.VOICE2_ID)
    await fake.remove_guild(fake.GUILD2_ID)
    await fake.dispatch("RESUMED", {}, 0)  # as _gateway answers a RESUME
    assert fake.payload_errors == []
    assert {p["t"] for p in sent(fake)} == set(GATEWAY_EVENTS)  # every event the check knows
    for payload in sent(fake):  # checked as sent; again here, whatever the fake did
        assert gateway_errors(payload) == [], payload["t"]


def test_the_fakes_other_gateway_and_voice_payloads_are_accepted(fake: FakeDiscord) -> None:
    for payload in (
        fake._control(10, {"heartbeat_interval": 41250}),
        fake._control(11, None),
        fake._control(9, False),
    ):
        assert gateway_errors(payload) == [], payload
    for payload in (
        fake._voice_hello(),
        fake._voice_ready(4242),
        fake._voice_description("aead_aes256_gcm_rtpsize", bytes(32)),
        fake._voice_heartbeat_ack(1234),
        fake._voice_resumed(),
    ):
        assert voice_errors(payload) == [], payload


async def rest(
    fake: FakeDiscord, method: str, path: str, body: Any = None, token: str | None = None
) -> web.StreamResponse:
    """The fake's answer to a REST request, through the middleware that checks it."""
    headers = {"Authorization": f"Bot {token or fake.token}"}
    extra: dict[str, Any] = {}
    if body is not None:
        data = json.dumps(body).encode()
        headers |= {"Content-Type": "application/json", "Content-Length": str(len(data))}
        payload = streams.StreamReader(
            mock.Mock(_reading_paused=False), 2**16, loop=asyncio.get_running_loop()
        )
        payload.feed_data(data)
        payload.feed_eof()
        extra["payload"] = payload
    request = make_mocked_request(
        method,
        f"/api/v10/{path}",
        headers=headers,
        **extra,
        match_info={"tail": path.partition("?")[0]},
    )
    return await fake._checked(request, fake._rest)


async def test_the_fakes_rest_answers_of_every_route_are_accepted(fake: FakeDiscord) -> None:
    fake.allow_the_bot(fake.STAGE_ID, 1 << 22)  # a stage moderator, in the stage
    fake.voice_by_guild[fake.GUILD_ID][fake.bot.id] = fake.STAGE_ID
    app, bot, bob = fake.app_id, fake.bot.id, fake.humans["bob"].id
    inter = await fake.interaction("say", {"text": "hi"})
    later = await fake.interaction("join")
    commands = [
        {
            "name": "say",
            "type": 1,
            "description": "Say it",
            "options": [{"name": "text", "type": 3, "description": "What", "required": True}],
            "default_member_permissions": None,
            "integration_types": None,
            "contexts": None,
            "nsfw": False,
            "name_localizations": {"fr": "dire"},
        },
        {"name": "config", "type": 1, "description": "Set up", "default_member_permissions": 32},
        {"name": "Speak this message", "type": 3},
    ]
    routes: set[str] = set()
    for method, path, body in [
        ("GET", "users/@me", None),
        ("GET", "users/@me/guilds", None),
        ("GET", "gateway/bot", None),
        ("GET", "oauth2/applications/@me", None),
        ("GET", f"guilds/{fake.GUILD_ID}", None),
        ("GET", f"guilds/{fake.GUILD_ID}/channels", None),
        ("GET", f"guilds/{fake.GUILD_ID}/members/{bot}", None),
        ("GET", f"guilds/{fake.GUILD_ID}/members/{bob}", None),
        ("PUT", f"applications/{app}/commands", commands),
        ("GET", f"applications/{app}/commands", None),
        ("PUT", f"applications/{app}/guilds/{fake.GUILD_ID}/commands", commands),
        ("GET", f"applications/{app}/guilds/{fake.GUILD_ID}/commands", None),
        ("POST", f"channels/{fake.TEXT_ID}/messages", {"content": "Joined."}),
        (
            "POST",
            f"interactions/{inter.id}/{inter.token}/callback?with_response=true",
            {"type": 5, "data": {"flags": 64}},
        ),
        ("POST", f"interactions/{later.id}/{later.token}/callback", {"type": 4, "data": {}}),
        ("PATCH", f"webhooks/{app}/{inter.token}/messages/@original", {"content": "Said."}),
        ("GET", f"webhooks/{app}/{inter.token}/messages/@original", None),
        ("POST", f"webhooks/{app}/{inter.token}?wait=true", {"content": "More", "flags": 64}),
        ("DELETE", f"webhooks/{app}/{inter.token}/messages/@original", None),
        ("PATCH", f"guilds/{fake.GUILD_ID}/voice-states/@me", {"suppress": False}),
        # Discord's errors
        ("POST", f"interactions/{inter.id}/{inter.token}/callback", {"type": 4, "data": {}}),
        ("POST", f"interactions/{inter.id}/wrong/callback", {"type": 4, "data": {}}),
        ("GET", f"guilds/{fake.GUILD_ID}/members/1", None),
        ("GET", "users/@me/relationships", None),
    ]:
        response = await rest(fake, method, path, body)
        assert fake.payload_errors == [], f"{method} {path}"
        definition = payload_check.rest_definition(method, path.partition("?")[0], response.status)
        if definition is not None:
            routes.add(definition)
    assert (await rest(fake, "GET", "users/@me", token="wrong")).status == 401
    assert fake.payload_errors == []
    unused = {d for _, _, d in REST_ROUTES} - routes
    assert unused == set(), "routes of REST_ROUTES that this test does not call"


# ---- how an error reaches the test -------------------------------------------------------------
async def test_an_invalid_payload_fails_the_test_that_sent_it(fake: FakeDiscord) -> None:
    """In the test's own task the fake raises before it sends; in one of its handlers (where
    aiohttp would swallow an exception) it sends, keeps the error, and the test fails at its
    teardown (tests/conftest.py's autouse fixture)."""
    guild = fake._guild_json(fake.GUILD_ID)
    guild["members"][0]["permissions"] = "8"
    with pytest.raises(InvalidPayloadError, match="'permissions' was unexpected"):
        await fake.dispatch("GUILD_CREATE", guild)
    assert sent(fake) == [] and len(fake.payload_errors) == 1

    async def in_a_handler() -> None:
        with payload_check.handling():
            await fake.dispatch("GUILD_CREATE", guild)

    failed = pytest.raises(pytest.fail.Exception, match="'permissions' was unexpected")
    with failed, payload_check.fail_on_invalid_payloads():
        await asyncio.create_task(in_a_handler())
        assert len(sent(fake)) == 1  # sent all the same
    assert payload_check.UNRAISED == []  # reported once, to this test


def test_every_test_checks_the_fakes_payloads() -> None:
    """Only the benchmarks, which run without jsonschema, turn the check off."""
    tests = Path(__file__).resolve().parent.parent
    turned_off = [
        p.relative_to(tests).as_posix()
        for p in tests.rglob("*.py")
        if "check_payloads=False" in p.read_text()
        and p.name not in (Path(__file__).name, "server.py")
    ]
    assert turned_off == []
