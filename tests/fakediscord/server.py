"""A fake Discord for end-to-end tests: what PocketVoice uses of REST, gateway and voice.

Everything listens on 127.0.0.1 behind TLS with a throwaway CA (trustme), because discord.py
hard-codes `wss://` for the voice websocket. The bot is pointed here with the operator
settings `DISCORD_API_BASE`, `DISCORD_GATEWAY_URL` and `DISCORD_CA_FILE`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import ssl
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import trustme
from aiohttp import WSMsgType, web

from tests.fakediscord import payload_check
from tests.fakediscord.dave import DAVE_PROTOCOL_VERSION, INVALID_COMMIT_WELCOME, TRANSITION_READY
from tests.fakediscord.dave_wiring import DaveVoice
from tests.fakediscord.voice_udp import VoiceUDPServer

JSON = dict[str, Any]
MESSAGE_CONTENT_LIMITED = 1 << 19  # application flag: the Message Content intent is on
MUTE_MEMBERS = 1 << 22  # on a stage: a stage moderator, who may speak without asking
RESUME_MODE = "aead_xchacha20_poly1305_rtpsize"  # the voice encryption a resumed session keeps
NO_COLORS = {"primary_color": 0, "secondary_color": None, "tertiary_color": None}  # a role's
_ids = itertools.count(1_300_000_000_000_000_000)
# Whether the voice gateway speaks DAVE unless a test says (`FakeDiscord(dave=...)`, or
# `fake.dave.version` before the bot joins voice): as Discord, which requires it since
# 2026-03-02. FAKE_DISCORD_DAVE=1 or 0 overrides it, to run a file of tests either way.
DAVE_BY_DEFAULT = True


def dave_by_default() -> bool:
    switch = os.environ.get("FAKE_DISCORD_DAVE")
    return DAVE_BY_DEFAULT if switch is None else switch == "1"


def snowflake() -> str:
    return str(next(_ids))


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def without(data: JSON, *keys: str) -> JSON:
    return {k: v for k, v in data.items() if k not in keys}


def as_discord_sends(components: Any) -> Any:
    """Components the bot sent, as Discord then sends them in the message: an emoji's null
    `id` (discord.py sends `{"id": null, "name": "▶"}` for a Unicode emoji) is left out."""
    if isinstance(components, list):
        return [as_discord_sends(c) for c in components]
    if isinstance(components, dict):
        return {
            k: {e: x for e, x in v.items() if x is not None}
            if k == "emoji"
            else as_discord_sends(v)
            for k, v in components.items()
        }
    return components


def json_response(data: Any, status: int = 200) -> web.Response:
    # discord.py wants exactly "application/json" (aiohttp would add "; charset=utf-8").
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


@dataclass
class FakeUser:
    id: str
    username: str
    bot: bool = False

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "username": self.username,
            "global_name": self.username.title(),
            "discriminator": "0",
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
            "flags": 0,
        }


@dataclass
class FakeRole:
    id: str
    name: str
    guild: str
    permissions: int = 0
    position: int = 1  # higher ranks higher (@everyone is 0)

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": 0,
            "colors": dict(NO_COLORS),
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }


@dataclass
class FakeFile:
    id: str
    filename: str
    data: bytes
    content_type: str
    downloads: int = 0
    declared_size: int | None = None  # what Discord says of its size (default: its length)


@dataclass
class FakeInteraction:
    id: str
    token: str
    name: str
    user: FakeUser
    responses: list[JSON] = field(default_factory=list)  # callback bodies, then webhook edits
    message_id: str = field(default_factory=snowflake)  # of the original response
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_response(self, count: int = 1, timeout: float = 20.0) -> JSON:
        """The `count`-th message the bot sent for this interaction (callback or edit)."""
        deadline = time.monotonic() + timeout
        while len(self.responses) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"/{self.name}: {len(self.responses)} responses, wanted {count}")
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining)
        return self.responses[count - 1]

    async def wait_content(self, fragment: str, timeout: float = 30.0) -> JSON:
        """The first response whose content contains `fragment`."""
        deadline = time.monotonic() + timeout
        count = 1
        while True:
            response = await self.wait_response(count, deadline - time.monotonic())
            if fragment in (response.get("content") or ""):
                return response
            count += 1

    @property
    def contents(self) -> list[str]:
        return [r.get("content") or "" for r in self.responses]

    async def wait_final(self, timeout: float = 30.0) -> JSON:
        """The first response that is not a bare 'thinking…' defer."""
        deadline = time.monotonic() + timeout
        count = 1
        while True:
            response = await self.wait_response(count, deadline - time.monotonic())
            if response.get("content") or response.get("embeds"):
                return response
            count += 1


def shard_of(guild_id: str, shard_count: int) -> int:
    """The shard Discord sends a guild's events on."""
    return (int(guild_id) >> 22) % shard_count


class FakeDiscord:
    """One application, one bot user, one guild with a text and two voice channels.

    Sharded like Discord: each gateway connection IDENTIFYs as one shard `[id, count]`, gets
    READY and GUILD_CREATE for its own guilds only, and each guild's events go to the
    connection of `shard_of(guild, count)`, so several bot processes can share this fake.
    `GET /gateway/bot` recommends `shards` shards (discord.py's automatic sharding).
    """

    GUILD_ID = "1100000000000000001"
    TEXT_ID = "1100000000000000002"
    VOICE_ID = "1100000000000000003"
    VOICE2_ID = "1100000000000000004"
    STAGE_ID = "1100000000000000005"  # the first server's stage channel
    FORUM_ID = "1100000000000000006"  # the first server's forum channel, once `add_forum()`
    GUILD2_ID = "2100000000000000001"  # a second server, for tests of several at once
    GUILD2_TEXT_ID = "2100000000000000002"
    GUILD2_VOICE_ID = "2100000000000000003"
    GUILD2_VOICE2_ID = "2100000000000000004"
    # View Channel, Send Messages, Read Message History, Connect, Speak, Use Application Commands
    LATE_LEAVE_S = 1.0  # `late_leave_answers`: the longest a leave waits for its answer
    EVERYONE_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 16) | (1 << 20) | (1 << 21) | (1 << 31)

    def __init__(
        self,
        tmp_dir: Path,
        token: str = "fake.bot.token",
        shards: int = 1,
        check_payloads: bool = True,
        dave: bool | None = None,
    ) -> None:
        """`check_payloads=False` is for the benchmarks, which run in the app's environment,
        without the test tools (jsonschema): tests always check. `dave`: whether the voice
        gateway speaks DAVE (None: `dave_by_default()`)."""
        self.tmp_dir = tmp_dir
        self.check_payloads = check_payloads
        self.recommended_shards = shards
        self.token = token
        self.app_id = "1000000000000000001"
        self.bot = FakeUser("1000000000000000001", "pocketvoice", bot=True)
        self.other_bot = FakeUser("1000000000000000002", "otherbot", bot=True)
        self.humans = {
            "alice": FakeUser("1200000000000000001", "alice"),
            "bob": FakeUser("1200000000000000002", "bob"),
        }
        self.channels = {  # guild -> (text, voice, second voice) channel ids
            self.GUILD_ID: (self.TEXT_ID, self.VOICE_ID, self.VOICE2_ID),
            self.GUILD2_ID: (self.GUILD2_TEXT_ID, self.GUILD2_VOICE_ID, self.GUILD2_VOICE2_ID),
        }
        self.stages = {self.GUILD_ID: self.STAGE_ID}  # guild -> its stage channel
        self.forums: dict[str, JSON] = {}  # forum channel id -> the channel (`add_forum`)
        self.texts: dict[str, JSON] = {}  # more text channels: id -> it (`add_text_channel`)
        self.threads: dict[str, JSON] = {}  # thread id -> the thread, as GUILD_CREATE lists it
        # guild -> user id -> voice channel id
        self.voice_by_guild: dict[str, dict[str, str]] = {g: {} for g in self.channels}
        self.suppressed: set[tuple[str, str]] = set()  # (guild, user id): a stage's audience
        self.speak_requests: list[str] = []  # guilds where the bot asked to speak on stage
        self.roles: dict[str, list[FakeRole]] = {g: [] for g in self.channels}  # beyond @everyone
        self.member_roles: dict[tuple[str, str], list[str]] = {}  # (guild, user id) -> role ids
        self.webhooks: dict[str, str] = {}  # a webhook's name -> its id
        self.ssrc_guild: dict[int, str] = {}
        self._ssrcs = itertools.count(4242)
        self.voice_channel_overwrites: dict[str, list[JSON]] = {}  # any channel's, in fact
        self.nicks: dict[str, str] = {}  # user id -> their server nickname (every server's)
        self.application_flags = MESSAGE_CONTENT_LIMITED
        self.channel_messages: list[JSON] = []  # what the bot posted in channels (not replies)
        self.interactions: dict[str, FakeInteraction] = {}
        self.files: dict[str, FakeFile] = {}
        self.unknown_routes: list[str] = []
        # what the payload check refused of what this fake sent (tests/fakediscord/payload_check.py)
        self.payload_errors: list[str] = []
        self.registered_commands: list[JSON] = []
        self.gateway_log: list[JSON] = []  # what the bot sent on the gateway
        self.voice_log: list[JSON] = []  # what the bot sent on the voice websocket
        self.identified = asyncio.Event()
        self.ready_allowed = asyncio.Event()  # clear it to hold READY back after IDENTIFY
        self.ready_allowed.set()
        self.udp = VoiceUDPServer()
        on = dave_by_default() if dave is None else dave
        self.dave = DaveVoice(
            int(self.bot.id), self._send_voice, DAVE_PROTOCOL_VERSION if on else 0
        )
        self.udp.listeners = self.dave.hear
        # the bot in a stage's audience is not heard, like any listener
        self.udp.muted = lambda ssrc: (self.ssrc_guild.get(ssrc), self.bot.id) in self.suppressed
        self._gateways: dict[int, web.WebSocketResponse] = {}  # shard id -> its connection
        self.shard_count = shards  # as the bots identified (they must agree)
        self.identified_shards: set[int] = set()
        self.identifies: list[int] = []  # the shard of each IDENTIFY, in order
        self.voice_ws: dict[str, web.WebSocketResponse] = {}  # guild -> voice websocket
        self.invalidate_resume = False  # answer the next RESUME with INVALID_SESSION
        self.unanswered_voice_joins = 0  # this many joins get no voice events (stuck signalling)
        # Discord sends VOICE_STATE_UPDATE and VOICE_SERVER_UPDATE for a join in either order
        self.server_update_first = False
        self.voice_resume_fails = False  # answer a voice RESUME (op 7) with close 4006
        # Answer the bot's leave (op 4, `channel_id: null`) late: its VOICE_STATE_UPDATE comes
        # only after the bot's next op 4 (before that op's own answer, in the order Discord
        # handled them), or after `LATE_LEAVE_S` when no op 4 follows. Discord may do this.
        self.late_leave_answers = False
        self._held_leaves: dict[str, tuple[JSON, asyncio.TimerHandle]] = {}  # guild -> its answer
        self._late_tasks: set[asyncio.Task[bool]] = set()
        self.leaves_answered_after_a_join = 0  # held leaves answered after the next join's op 4
        self.voice_hosts: list[str] = []  # the endpoint host of each voice websocket opened
        self._sessions: set[int] = set()  # shards that identified (a new one replaces theirs)
        self._voice_ssrc: dict[str, int] = {}  # guild -> ssrc of the bot's voice session
        self.resumed = 0  # sessions resumed (gateway)
        self.voice_resumed = 0  # voice sessions resumed (op 7)
        self._seq = 0
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.ca_file = tmp_dir / "fake-discord-ca.pem"

    # ---- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        ca = trustme.CA()
        ca.cert_pem.write_to_path(str(self.ca_file))
        server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1", "localhost").configure_cert(server_ctx)
        app = web.Application(  # client_max_size: attachment_size_limit
            client_max_size=25 * 1024 * 1024, middlewares=[self._checked]
        )
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/", self._voice_gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        app.router.add_get("/attachments/{id}/{filename}", self._cdn)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=server_ctx)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: self.udp, local_addr=("127.0.0.1", 0))

    async def close(self) -> None:
        self.dave.close()
        for _, later in self._held_leaves.values():
            later.cancel()
        for ws in list(self._gateways.values()):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
        self.udp.close()

    @property
    def env(self) -> dict[str, str]:
        """The operator settings that point a bot here."""
        return {
            "DISCORD_TOKEN": self.token,
            "DISCORD_API_BASE": f"https://127.0.0.1:{self.port}/api/v10",
            "DISCORD_GATEWAY_URL": f"wss://127.0.0.1:{self.port}/gateway",
            "DISCORD_CA_FILE": str(self.ca_file),
        }

    # ---- test controls ---------------------------------------------------------------------
    def add_guild(self, number: int) -> str:
        """Another server (before the bot connects), with its own member `member<number>`."""
        guild = f"{3000 + number}00000000000001"
        self.channels[guild] = (
            f"{3000 + number}00000000000002",
            f"{3000 + number}00000000000003",
            f"{3000 + number}00000000000004",
        )
        self.voice_by_guild[guild] = {}
        self.roles[guild] = []
        name = f"member{number}"
        self.humans[name] = FakeUser(f"{1300 + number}000000000000001", name)
        return guild

    async def join_guild(self, number: int, deny_in_system_channel: int = 0) -> str:
        """The bot is invited to a new server while running (`on_guild_join`); its system
        channel is the text channel, where @everyone may be denied some permissions."""
        guild = self.add_guild(number)
        if deny_in_system_channel:
            self.deny_voice_permissions(self.channels[guild][0], deny_in_system_channel)
        data = self._guild_json(guild)
        del data["unavailable"]  # as Discord sends it for a new server (not an outage's end)
        await self.dispatch("GUILD_CREATE", data)
        return guild

    def attachment(self, filename: str, data: bytes, content_type: str = "audio/wav") -> FakeFile:
        """A file uploaded to the fake CDN, to pass as a slash-command option value."""
        file = FakeFile(snowflake(), filename, data, content_type)
        self.files[file.id] = file
        return file

    async def interaction(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        user: str = "alice",
        permissions: int | None = None,
        *,
        focused: str | None = None,
        target: JSON | None = None,
        guild: str | None = None,
        locale: str = "en-US",
    ) -> FakeInteraction:
        """Send a slash command as `user` would, through the gateway, from a Discord client
        in `locale`.

        `name` may hold a subcommand ("voice use"), or a group and its subcommand
        ("config speech language"). With `focused`, it is an autocomplete
        request for that option instead of an invocation; with `target`, a message command
        (context menu) on that message. A channel option is given as its id string when the
        option is named "channel", a member as their name ("bob") when it is named "member".
        """
        member = self.humans[user]
        inter = FakeInteraction(snowflake(), f"itoken-{snowflake()}", name, member)
        self.interactions[inter.id] = inter
        typed = {str: 3, int: 4, bool: 5, FakeUser: 6, FakeRole: 8, float: 10, FakeFile: 11}
        resolved: JSON = {}
        option_list = []
        for key, value in (options or {}).items():
            option = {"name": key, "type": typed[type(value)], "value": value}
            picked_channel = self._channel_named(value) if isinstance(value, str) else None
            if key == "channel" or picked_channel is not None:
                option["type"] = 7
                kind, channel_name = picked_channel or (0, "general")
                resolved.setdefault("channels", {})[value] = {  # a partial channel
                    "id": value,
                    "type": kind,
                    "name": channel_name,
                    "permissions": str(self.EVERYONE_PERMISSIONS),
                }
            if key == "member" and isinstance(value, str):  # a member by name ("bob"):
                # a user option, which Discord resolves to the user and the member
                picked = self.humans[value]
                option.update(type=6, value=picked.id)
                resolved.setdefault("users", {})[picked.id] = picked.to_json()
                resolved.setdefault("members", {})[picked.id] = self._resolved_member_json(
                    picked, guild
                )
            if isinstance(value, FakeFile):
                option["value"] = value.id
                resolved.setdefault("attachments", {})[value.id] = self._attachment_json(value)
            if isinstance(value, FakeUser):  # as Discord resolves a user option in a server
                option["value"] = value.id
                resolved.setdefault("users", {})[value.id] = value.to_json()
                resolved.setdefault("members", {})[value.id] = self._resolved_member_json(
                    value, guild
                )
            if isinstance(value, FakeRole):
                option["value"] = value.id
                resolved.setdefault("roles", {})[value.id] = value.to_json()
            if key == focused:
                option["focused"] = True
            option_list.append(option)
        command, *subcommand = name.split() if target is None else [name]
        if subcommand:  # "voice use": a subcommand; "config speech language": one in a group
            option_list = [{"name": subcommand[-1], "type": 1, "options": option_list}]
            if len(subcommand) == 2:
                option_list = [{"name": subcommand[0], "type": 2, "options": option_list}]
        data: JSON = {"id": snowflake(), "name": command, "type": 1, "options": option_list}
        if target is not None:
            data = {"id": snowflake(), "name": name, "type": 3, "target_id": target["id"]}
            resolved = {"messages": {target["id"]: self._message_object_json(target)}}
        if resolved:
            data["resolved"] = resolved
        kind = 4 if focused else 2
        await self._send_interaction(inter, kind, data, permissions, guild=guild, locale=locale)
        return inter

    def _channel_named(self, channel_id: str) -> tuple[int, str] | None:
        """A channel of the fake's servers by its id: (its type, its name); None for any other
        string (a channel option is given as its channel's id)."""
        made = self.forums.get(channel_id) or self.texts.get(channel_id)
        if made is not None:
            return int(made["type"]), str(made["name"])
        for guild, (text_id, voice_id, voice2_id) in self.channels.items():
            named = {text_id: (0, "general"), voice_id: (2, "Lounge"), voice2_id: (2, "Gaming")}
            if guild in self.stages:
                named[self.stages[guild]] = (13, "Town Hall")
            if channel_id in named:
                return named[channel_id]
        return None

    async def click(
        self, message: JSON, custom_id: str, user: str = "alice", permissions: int | None = None
    ) -> FakeInteraction:
        """Press the button `custom_id` on a message the bot sent, as `user` with
        `permissions` in the channel (default: everyone's)."""
        member = self.humans[user]
        inter = FakeInteraction(snowflake(), f"itoken-{snowflake()}", custom_id, member)
        self.interactions[inter.id] = inter
        shown = self._message_json(message.get("content", ""), message.get("flags", 0))
        shown["id"] = message.get("id", shown["id"])  # the message the bot sent, by its id
        shown["components"] = as_discord_sends(message.get("components", []))
        inter.message_id = shown["id"]  # its original response is that message
        data = {"custom_id": custom_id, "component_type": 2}
        await self._send_interaction(inter, 3, data, permissions, message=shown)
        return inter

    async def _send_interaction(
        self,
        inter: FakeInteraction,
        kind: int,
        data: JSON,
        permissions: int | None,
        message: JSON | None = None,
        guild: str | None = None,
        locale: str = "en-US",
    ) -> None:
        member = inter.user
        guild = guild or self.GUILD_ID
        text_id = self.channels[guild][0]
        payload = {
            "id": inter.id,
            "application_id": self.app_id,
            "type": kind,
            "data": data,
            "guild_id": guild,
            "channel_id": text_id,
            "channel": {"id": text_id, "type": 0, "guild_id": guild},
            "member": self._interaction_member_json(member, permissions, guild),
            "token": inter.token,
            "version": 1,
            "locale": locale,
            "guild_locale": "en-US",
            "app_permissions": str(self.EVERYONE_PERMISSIONS),
            "entitlements": [],
            "authorizing_integration_owners": {"0": guild},
            "context": 0,
            "attachment_size_limit": 25 * 1024 * 1024,
        }
        if message is not None:
            payload["message"] = message
        await self.dispatch("INTERACTION_CREATE", payload)

    @property
    def voice_states(self) -> dict[str, str]:
        """The first server's voice states: user id -> voice channel id."""
        return self.voice_by_guild[self.GUILD_ID]

    def _guild_of(self, channel_id: str | None, guild: str | None) -> str:
        if guild is not None:
            return guild
        if channel_id is None:
            return self.GUILD_ID
        made = (
            self.forums.get(channel_id)
            or self.texts.get(channel_id)
            or self.threads.get(channel_id)
        )
        if made is not None:
            return str(made["guild_id"])
        for g, ids in self.channels.items():
            if channel_id in ids or channel_id == self.stages.get(g):
                return g
        return self.GUILD_ID

    async def set_voice_state(
        self,
        user: str,
        channel_id: str | None,
        guild: str | None = None,
        *,
        suppress: bool = False,
    ) -> None:
        """A human (or 'otherbot') joins (or with None leaves) a voice channel: Discord sends
        VOICE_STATE_UPDATE with the new channel (null when they left) and the member. In a
        stage, `suppress` puts them in the audience, else they are a speaker."""
        member = self.other_bot if user == "otherbot" else self.humans[user]
        guild = self._guild_of(channel_id, guild)
        states = self.voice_by_guild[guild]
        if channel_id is None:
            states.pop(member.id, None)
        else:
            states[member.id] = channel_id
        if suppress and channel_id is not None:
            self.suppressed.add((guild, member.id))
        else:
            self.suppressed.discard((guild, member.id))
        await self.dispatch("VOICE_STATE_UPDATE", self._voice_state_json(member, channel_id, guild))
        self.dave.member_moved(int(member.id), guild, channel_id)  # its client's voice session

    async def add_role(
        self, name: str, guild: str | None = None, *, permissions: int = 0, position: int = 1
    ) -> FakeRole:
        """An admin creates a role (GUILD_ROLE_CREATE, as Discord sends it)."""
        guild = guild or self.GUILD_ID
        role = FakeRole(snowflake(), name, guild, permissions, position)
        self.roles[guild].append(role)
        await self.dispatch("GUILD_ROLE_CREATE", {"guild_id": guild, "role": role.to_json()})
        return role

    def give_role(self, user: str, role: FakeRole) -> None:
        """A member gets a role. Without the members intent the bot hears of it in the
        `member` of their next message (or voice state), as with Discord."""
        self.member_roles.setdefault((role.guild, self.humans[user].id), []).append(role.id)

    async def post(
        self,
        user: str,
        content: str,
        channel_id: str | None = None,
        *,
        mentions: tuple[str, ...] = (),
        attachments: tuple[FakeFile, ...] = (),
        reply_to: JSON | None = None,
        flags: int = 0,
        message_id: str | None = None,
        poll: JSON | None = None,
    ) -> JSON:
        """`user` (a human's name, or 'otherbot') writes in a channel (default: #general; a
        thread's id: in that thread); `flags`: the message's flags (1 << 12: sent with
        @silent); `message_id`: its id (a forum post's first message has the post's); `poll`:
        the message's poll object (`poll_json`)."""
        author = self.other_bot if user == "otherbot" else self.humans[user]
        guild = self._guild_of(channel_id, None)
        message = self._message_json(content, flags, author=author, channel_id=channel_id)
        if message_id is not None:
            message["id"] = message_id
        message["member"] = self._author_member_json(author, guild)
        message["mentions"] = [
            dict(self.humans[m].to_json(), member=self._author_member_json(self.humans[m], guild))
            for m in mentions
        ]
        message["attachments"] = [self._attachment_json(f) for f in attachments]
        message["guild_id"] = guild
        message["type"] = 0
        if poll is not None:
            message["poll"] = poll
        if reply_to is not None:
            message["type"] = 19
            message["message_reference"] = {
                "message_id": reply_to["id"],
                "channel_id": reply_to["channel_id"],
                "guild_id": self.GUILD_ID,
            }
            # a message object: the extra fields of MESSAGE_CREATE are not in it
            message["referenced_message"] = self._message_object_json(reply_to)
        await self.dispatch("MESSAGE_CREATE", message)
        return message

    @staticmethod
    def poll_json(
        question: str,
        answers: list[str | tuple[str, str]],
        hours: int = 24,
        multiselect: bool = False,
    ) -> JSON:
        """A message's poll object as Discord sends it in MESSAGE_CREATE (the poll resource's
        documentation): the question (text only), the answers numbered from 1, each its
        `poll_media` (text, and an emoji for a (text, emoji) pair: a Unicode one, id null),
        the expiry, layout 1 (the only one), and results with no votes counted yet."""
        expiry = datetime.now(UTC) + timedelta(hours=hours)
        listed = []
        for number, answer in enumerate(answers, start=1):
            text, emoji = (answer, None) if isinstance(answer, str) else answer
            media: JSON = {"text": text}
            if emoji is not None:
                media["emoji"] = {"id": None, "name": emoji}
            listed.append({"answer_id": number, "poll_media": media})
        return {
            "question": {"text": question},
            "answers": listed,
            "expiry": expiry.isoformat(),
            "allow_multiselect": multiselect,
            "layout_type": 1,
            "results": {"is_finalized": False, "answer_counts": []},
        }

    async def end_poll(self, message: JSON, votes: dict[int, int]) -> JSON:
        """A poll's time is up: Discord posts a POLL_RESULT message (type 46) in its channel,
        by the poll's author, referencing the poll's message, with one `poll_result` embed
        whose fields (name/value, values as text) are the poll result embed fields of the
        message resource's documentation: the question, the total, the most votes any answer
        had, and the winner's id, text and emoji only when one answer had them alone.
        `votes`: answer id -> votes."""
        poll = message["poll"]
        top = max(votes.values(), default=0)
        leaders = [answer for answer, count in votes.items() if count == top and top]
        fields = [
            ("poll_question_text", poll["question"]["text"]),
            ("victor_answer_votes", str(top)),
            ("total_votes", str(sum(votes.values()))),
        ]
        if len(leaders) == 1:
            winner = next(a for a in poll["answers"] if a["answer_id"] == leaders[0])
            fields += [
                ("victor_answer_id", str(leaders[0])),
                ("victor_answer_text", winner["poll_media"].get("text", "")),
            ]
            emoji = winner["poll_media"].get("emoji")
            if emoji is not None:
                if emoji["id"] is not None:
                    fields.append(("victor_answer_emoji_id", emoji["id"]))
                fields += [
                    ("victor_answer_emoji_name", emoji["name"]),
                    ("victor_answer_emoji_animated", "false"),
                ]
        author = next(u for u in self.humans.values() if u.id == message["author"]["id"])
        guild = message["guild_id"]
        result = self._message_json("", author=author, channel_id=message["channel_id"])
        result["type"] = 46
        result["guild_id"] = guild
        result["member"] = self._author_member_json(author, guild)
        result["embeds"] = [
            {
                "type": "poll_result",
                "fields": [{"name": n, "value": v, "inline": False} for n, v in fields],
            }
        ]
        result["message_reference"] = {
            "type": 0,
            "message_id": message["id"],
            "channel_id": message["channel_id"],
            "guild_id": guild,
        }
        await self.dispatch("MESSAGE_CREATE", result)
        return result

    async def post_webhook(
        self, name: str, content: str, channel_id: str | None = None, *, hook: str | None = None
    ) -> JSON:
        """A webhook named `name` (a bridge, Tupperbox, StreamerBot) posts in a channel, as
        Discord sends it: the author is the webhook (its id, its name, discriminator "0000",
        `bot` true), `webhook_id` is set, and there is no `member`. With `hook`, the webhook
        called so posts under the name `name` (as Tupperbox posts each persona through one
        webhook, with the same id: a name given with each message)."""
        webhook_id = self.webhooks.setdefault(hook or name, snowflake())
        message = self._message_json(content, channel_id=channel_id)
        message["author"] = {
            "id": webhook_id,
            "username": name,
            "global_name": None,
            "avatar": None,
            "discriminator": "0000",
            "bot": True,
        }
        message["webhook_id"] = webhook_id
        message["guild_id"] = self._guild_of(channel_id, None)
        message["type"] = 0
        await self.dispatch("MESSAGE_CREATE", message)
        return message

    async def add_forum(self, name: str = "ideas", guild: str | None = None) -> str:
        """An admin creates a forum channel (type 15, a channel of posts only): CHANNEL_CREATE,
        and in GUILD_CREATE from then on. Its id (FORUM_ID in the first server)."""
        guild = guild or self.GUILD_ID
        forum_id = self.FORUM_ID if guild == self.GUILD_ID else snowflake()
        self.forums[forum_id] = {
            "id": forum_id,
            "type": 15,
            "guild_id": guild,
            "name": name,
            "position": 4,
            "permission_overwrites": [],
            "parent_id": None,
            "nsfw": False,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
            "available_tags": [],
            "default_reaction_emoji": None,
            "default_sort_order": None,
            "default_forum_layout": 0,
            "default_thread_rate_limit_per_user": 0,
        }
        await self.dispatch("CHANNEL_CREATE", self.forums[forum_id])
        return forum_id

    async def add_text_channel(self, name: str, guild: str | None = None) -> str:
        """An admin creates another text channel (type 0): CHANNEL_CREATE, and in
        GUILD_CREATE from then on. Its id."""
        guild = guild or self.GUILD_ID
        channel_id = snowflake()
        self.texts[channel_id] = {
            "id": channel_id,
            "type": 0,
            "guild_id": guild,
            "name": name,
            "position": 5 + len(self.texts),
            "permission_overwrites": [],
            "parent_id": None,
            "nsfw": False,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }
        await self.dispatch("CHANNEL_CREATE", self.texts[channel_id])
        return channel_id

    async def create_thread(self, user: str, parent_id: str, name: str) -> JSON:
        """`user` starts a public thread (type 11) in a text channel, or a post in a forum:
        THREAD_CREATE as a bot with the guilds intent gets it (`newly_created`, no thread
        `member`: the bot has not joined it), and in GUILD_CREATE's active `threads` from
        then on. The thread object (as GUILD_CREATE lists it)."""
        created = now_iso()
        thread: JSON = {
            "id": snowflake(),
            "type": 11,
            "guild_id": self._guild_of(parent_id, None),
            "name": name,
            "parent_id": parent_id,
            "owner_id": self.humans[user].id,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
            "message_count": 0,
            "member_count": 1,
            "total_message_sent": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 4320,
                "archive_timestamp": created,
                "locked": False,
                "create_timestamp": created,
            },
        }
        if parent_id in self.forums:
            thread["applied_tags"] = []  # a forum post's tags (the forum has none)
        self.threads[thread["id"]] = thread
        await self.dispatch("THREAD_CREATE", dict(thread, newly_created=True))
        return thread

    async def post_in_forum(
        self, user: str, title: str, content: str, forum_id: str | None = None
    ) -> tuple[JSON, JSON]:
        """`user` posts in a forum as Discord sends it: THREAD_CREATE of the post (a thread
        named `title` in the forum), then MESSAGE_CREATE of its first message, the starter,
        whose id is the thread's. (the thread, the message)."""
        thread = await self.create_thread(user, forum_id or self.FORUM_ID, title)
        first = await self.post(user, content, thread["id"], message_id=thread["id"])
        return thread, first

    async def edit(self, message: JSON, content: str) -> JSON:
        edited = dict(message, content=content, edited_timestamp=now_iso())
        await self.dispatch("MESSAGE_UPDATE", edited)
        return edited

    async def delete(self, message: JSON) -> None:
        await self.dispatch(
            "MESSAGE_DELETE",
            {"id": message["id"], "channel_id": message["channel_id"], "guild_id": self.GUILD_ID},
        )

    async def move_bot(self, channel_id: str | None) -> None:
        """An admin moves the bot to another voice channel, or (None) disconnects it."""
        if channel_id is None:
            self.voice_states.pop(self.bot.id, None)
        else:
            self.voice_states[self.bot.id] = channel_id
        await self.dispatch(
            "VOICE_STATE_UPDATE", self._voice_state_json(self.bot, channel_id, self.GUILD_ID)
        )
        if channel_id is not None and self.dave.version:
            # A DAVE group is a channel's: the moved bot gets a voice session there.
            await self.dispatch("VOICE_SERVER_UPDATE", self._voice_server_json(self.GUILD_ID))

    def _voice_server_json(self, guild: str) -> JSON:
        return {"token": "voice-token", "guild_id": guild, "endpoint": f"127.0.0.1:{self.port}"}

    async def delete_channel(self, channel_id: str) -> None:
        await self.dispatch(
            "CHANNEL_DELETE",
            {
                "id": channel_id,
                "type": 2,
                "guild_id": self.GUILD_ID,
                "name": "gone",
                "position": 0,
                "permission_overwrites": [],
            },
        )

    def allow_the_bot(self, channel_id: str, allow: int) -> None:
        """A channel overwrite for the bot's member (e.g. Mute Members on a stage: a stage
        moderator), applied when the guild is next sent or fetched."""
        self.voice_channel_overwrites.setdefault(channel_id, []).append(
            {"id": self.bot.id, "type": 1, "allow": str(allow), "deny": "0"}
        )

    def deny_voice_permissions(self, channel_id: str, deny: int) -> None:
        """Add a channel overwrite for @everyone (any channel's), applied when the guild is
        next sent or fetched."""
        everyone = self._guild_of(channel_id, None)  # @everyone's role id is the guild's
        self.voice_channel_overwrites[channel_id] = [
            {"id": everyone, "type": 0, "allow": "0", "deny": str(deny)}
        ]

    async def resend_guild(self) -> None:
        await self.dispatch("GUILD_CREATE", self._guild_json(self.GUILD_ID))

    @property
    def bot_voice_channel(self) -> str | None:
        return self.voice_states.get(self.bot.id)

    def bot_channel_in(self, guild: str) -> str | None:
        return self.voice_by_guild[guild].get(self.bot.id)

    async def wait_for(self, predicate: Any, timeout: float = 10.0, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out waiting for {what or predicate}")
            await asyncio.sleep(0.01)

    # ---- gateway ---------------------------------------------------------------------------
    async def _send_gateway(self, ws: web.WebSocketResponse, payload: JSON) -> None:
        if self.check_payloads:
            payload_check.report(payload_check.gateway_errors(payload), self.payload_errors)
        await ws.send_json(payload)

    async def _send_voice(self, ws: web.WebSocketResponse, payload: JSON) -> None:
        if self.check_payloads:
            payload_check.report(payload_check.voice_errors(payload), self.payload_errors)
        await ws.send_json(payload)

    @web.middleware
    async def _checked(self, request: web.Request, handler: Any) -> web.StreamResponse:
        """Every handler: what it sends is checked, and what it finds is kept for the test's
        teardown (an exception here would be swallowed); a REST response's JSON body too."""
        with payload_check.handling():
            response = await handler(request)
            if (
                self.check_payloads
                and request.path.startswith("/api/v10/")
                and isinstance(response, web.Response)
                and response.content_type == "application/json"
                and response.body is not None
            ):
                body = json.loads(response.body)  # type: ignore[arg-type]
                path = request.match_info["tail"]
                errors = payload_check.rest_errors(request.method, path, response.status, body)
                payload_check.report(errors, self.payload_errors)
        return response

    def guilds_of_shard(self, shard: int) -> list[str]:
        return [g for g in self.channels if shard_of(g, self.shard_count) == shard]

    async def dispatch(self, event: str, data: JSON, shard: int | None = None) -> None:
        """Send an event on the connection of the shard that holds its guild."""
        if shard is None:
            guild = data.get("guild_id") or (data.get("id") if event.startswith("GUILD_") else None)
            shard = 0 if guild is None else shard_of(str(guild), self.shard_count)
        ws = self._gateways.get(shard)
        if ws is None or ws.closed:
            raise RuntimeError(f"the bot is not connected to the gateway (shard {shard})")
        self._seq += 1
        await self._send_gateway(ws, {"op": 0, "t": event, "s": self._seq, "d": data})

    @staticmethod
    def _control(op: int, data: Any) -> JSON:
        """A gateway payload that is not a dispatch (hello, heartbeat ACK, invalid session)."""
        return {"op": op, "d": data, "s": None, "t": None}

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await self._send_gateway(ws, self._control(10, {"heartbeat_interval": 41250}))
        async for msg in ws:
            if msg.type != WSMsgType.TEXT:
                continue
            payload = json.loads(msg.data)
            self.gateway_log.append(payload)
            op, data = payload["op"], payload.get("d")
            if op == 1:
                await self._send_gateway(ws, self._control(11, None))  # heartbeat ACK
            elif op == 2:
                if data["token"] != self.token:
                    await ws.close(code=4004, message=b"Authentication failed.")
                    break
                shard, count = data.get("shard") or [0, 1]
                if count != self.shard_count and self._gateways:
                    await ws.close(code=4011, message=b"Sharding required.")  # counts disagree
                    break
                self.shard_count = count
                if shard in self._sessions:  # a new session: the old one's voice is gone
                    await self._end_voice_sessions(shard)
                self._sessions.add(shard)
                self._gateways[shard] = ws
                self.identified_shards.add(shard)
                self.identifies.append(shard)
                self.identified.set()
                await self.ready_allowed.wait()
                await self.dispatch("READY", self._ready_json(shard), shard)
                for guild in self.guilds_of_shard(shard):
                    await self.dispatch("GUILD_CREATE", self._guild_json(guild), shard)
            elif op == 4:
                if await self._answer_held_leave(str(data["guild_id"])) and data["channel_id"]:
                    self.leaves_answered_after_a_join += 1
                await self._bot_voice_state(data)
            elif op == 6:
                if self.invalidate_resume:
                    self.invalidate_resume = False
                    await self._send_gateway(ws, self._control(9, False))  # not resumable
                else:
                    self.resumed += 1
                    shard = int(data["session_id"].rpartition("-")[2])
                    self._gateways[shard] = ws
                    await self.dispatch("RESUMED", {}, shard)
        return ws

    # ---- faults ----------------------------------------------------------------------------
    async def close_gateway(self, code: int = 4000, shard: int = 0) -> None:
        """Drop the bot's gateway connection (it resumes, or re-identifies if told to)."""
        await self._gateways[shard].close(code=code)

    async def close_voice(self, guild: str, code: int) -> None:
        """Close the bot's voice websocket in `guild` with `code` (4015: voice server crashed;
        4014: removed from the channel)."""
        await self.voice_ws[guild].close(code=code)

    def abort_voice(self, guild: str) -> None:
        """Cut the voice websocket's TCP connection without a close frame (code 1006)."""
        transport = self.voice_ws[guild]._req.transport  # type: ignore[union-attr]
        assert transport is not None
        transport.abort()

    async def kick_from_voice(self, guild: str) -> None:
        """Discord removes the bot from its voice channel: a voice state, then close 4014."""
        self.voice_by_guild[guild].pop(self.bot.id, None)
        await self.dispatch("VOICE_STATE_UPDATE", self._voice_state_json(self.bot, None, guild))
        await self.close_voice(guild, 4014)

    async def _end_voice_sessions(self, shard: int) -> None:
        """What Discord does to the voice of a gateway session it replaced: the bot is in no
        voice channel any more, and its voice websockets close with 4014."""
        for guild in self.guilds_of_shard(shard):
            self.voice_by_guild[guild].pop(self.bot.id, None)
            ssrc = self._voice_ssrc.pop(guild, None)
            if ssrc is not None:
                self.udp.ended.add(ssrc)
            ws = self.voice_ws.pop(guild, None)
            if ws is not None and not ws.closed:
                await ws.close(code=4014, message=b"Disconnected.")

    async def move_voice_server(self, guild: str) -> None:
        """Discord moves the guild's voice to another server while the bot speaks: a new
        VOICE_SERVER_UPDATE names another endpoint (here `localhost`, the same fake)."""
        await self.dispatch(
            "VOICE_SERVER_UPDATE",
            {"token": "voice-token", "guild_id": guild, "endpoint": f"localhost:{self.port}"},
        )

    async def remove_guild(self, guild: str) -> None:
        """The bot is removed from a server."""
        await self.dispatch("GUILD_DELETE", {"id": guild})

    async def _bot_voice_state(self, data: JSON) -> None:
        raw = data.get("channel_id")
        channel_id = None if raw is None else str(raw)  # discord.py sends an int
        if channel_id is not None and self.unanswered_voice_joins > 0:
            self.unanswered_voice_joins -= 1
            return
        guild = str(data["guild_id"])
        states = self.voice_by_guild[guild]
        if channel_id is None:
            states.pop(self.bot.id, None)
        else:
            states[self.bot.id] = channel_id
        if channel_id is not None and channel_id == self.stages.get(guild):
            self.suppressed.add((guild, self.bot.id))  # Discord puts everyone in the audience
        else:
            self.suppressed.discard((guild, self.bot.id))
        server_update = self._voice_server_json(guild)
        state = self._voice_state_json(self.bot, channel_id, guild)
        if channel_id is None and self.late_leave_answers:
            later = asyncio.get_running_loop().call_later(
                self.LATE_LEAVE_S, self._answer_held_leave_soon, guild
            )
            self._held_leaves[guild] = (state, later)
        elif channel_id is None:
            await self.dispatch("VOICE_STATE_UPDATE", state)
        elif self.server_update_first:
            await self.dispatch("VOICE_SERVER_UPDATE", server_update)
            await self.dispatch("VOICE_STATE_UPDATE", state)
        else:
            await self.dispatch("VOICE_STATE_UPDATE", state)
            await self.dispatch("VOICE_SERVER_UPDATE", server_update)

    def _answer_held_leave_soon(self, guild: str) -> None:
        task = asyncio.create_task(self._answer_held_leave(guild))
        self._late_tasks.add(task)
        task.add_done_callback(self._late_tasks.discard)

    async def _answer_held_leave(self, guild: str) -> bool:
        """Send the guild's held leave answer, if any (True)."""
        held = self._held_leaves.pop(guild, None)
        if held is None:
            return False
        state, later = held
        later.cancel()
        await self.dispatch("VOICE_STATE_UPDATE", state)
        return True

    async def _own_stage_state(self, guild: str, body: JSON) -> web.Response:
        """The bot leaves a stage's audience (`suppress: false`, for stage moderators: Mute
        Members there) or asks to speak (`request_to_speak_timestamp`)."""
        stage = self.stages.get(guild)
        if stage is None or self.voice_by_guild[guild].get(self.bot.id) != stage:
            return json_response({"message": "Unknown Voice State", "code": 10065}, 404)
        if body.get("suppress") is False:
            allowed = sum(
                int(o["allow"])
                for o in self.voice_channel_overwrites.get(stage, [])
                if o["id"] == self.bot.id
            )
            if not allowed & MUTE_MEMBERS:
                return json_response({"message": "Missing Permissions", "code": 50013}, 403)
            self.suppressed.discard((guild, self.bot.id))
        elif body.get("request_to_speak_timestamp"):
            self.speak_requests.append(guild)
        state = self._voice_state_json(self.bot, stage, guild)
        state["request_to_speak_timestamp"] = body.get("request_to_speak_timestamp")
        await self.dispatch("VOICE_STATE_UPDATE", state)
        return web.Response(status=204)

    # ---- voice websocket -------------------------------------------------------------------
    async def _voice_gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        ssrc = next(self._ssrcs)  # one per voice session
        self.voice_hosts.append(request.host.rpartition(":")[0])
        await self._send_voice(ws, self._voice_hello())
        try:
            await self._voice_session(ws, ssrc)
        finally:  # closed by either side, or cut: the bot left its DAVE group
            self.dave.bot_closed(ws)
        return ws

    async def _voice_session(self, ws: web.WebSocketResponse, ssrc: int) -> None:
        async for msg in ws:
            if msg.type == WSMsgType.BINARY:  # DAVE's MLS messages (26, 28)
                self.dave.bot_message(ws, msg.data)
                continue
            if msg.type != WSMsgType.TEXT:
                continue
            payload = json.loads(msg.data)
            self.voice_log.append(payload)
            op, data = payload["op"], payload.get("d")
            if op == 0:
                if data["token"] != "voice-token" or data["server_id"] not in self.channels:
                    await ws.close(code=4004, message=b"Authentication failed.")
                    break
                self.ssrc_guild[ssrc] = data["server_id"]
                self.voice_ws[data["server_id"]] = ws
                self._voice_ssrc[data["server_id"]] = ssrc
                await self._send_voice(ws, self._voice_ready(ssrc))
            elif op == 1:
                key = self.udp.keys[ssrc] = os.urandom(32)
                await self._send_voice(ws, self._voice_description(data["data"]["mode"], key))
                self._start_dave(ws, ssrc)
            elif op == 3:
                nonce = data["t"] if isinstance(data, dict) else data
                await self._send_voice(ws, self._voice_heartbeat_ack(nonce))
            elif op == 7:  # resume after 4015: same session, same ssrc and key
                if self.voice_resume_fails:  # the voice server lost the session meanwhile
                    await ws.close(code=4006, message=b"Session is no longer valid.")
                    break
                self.voice_resumed += 1
                guild = data["server_id"]
                self.voice_ws[guild] = ws
                session_ssrc = next(s for s, g in reversed(self.ssrc_guild.items()) if g == guild)
                await self._send_voice(ws, self._voice_resumed())
                # discord.py 2.7 waits for the key again before it calls a resume complete
                key = self.udp.keys[session_ssrc]
                await self._send_voice(ws, self._voice_description(RESUME_MODE, key))
                self._start_dave(ws, session_ssrc)
            elif op in (TRANSITION_READY, INVALID_COMMIT_WELCOME):
                self.dave.bot_message(ws, payload)

    def _start_dave(self, ws: web.WebSocketResponse, ssrc: int) -> None:
        """After SESSION_DESCRIPTION with DAVE: the bot joins its channel's group (the
        external sender goes first; discord.py has sent its key package already)."""
        channel = self.voice_by_guild[self.ssrc_guild[ssrc]].get(self.bot.id)
        if self.dave.version and channel is not None:
            self.dave.bot_connected(ws, channel, ssrc)

    @staticmethod
    def _voice_hello() -> JSON:
        return {"op": 8, "d": {"v": 8, "heartbeat_interval": 13750}}  # discord.py asks v=8

    @staticmethod
    def _voice_resumed() -> JSON:
        return {"op": 9, "d": None}

    def _voice_ready(self, ssrc: int) -> JSON:
        modes = ["aead_aes256_gcm_rtpsize", "aead_xchacha20_poly1305_rtpsize"]
        return {
            "op": 2,
            "d": {"ssrc": ssrc, "ip": "127.0.0.1", "port": self.udp.port, "modes": modes},
        }

    def _voice_description(self, mode: str, key: bytes) -> JSON:
        dave = self.dave.version
        return {
            "op": 4,
            "d": {"mode": mode, "secret_key": list(key), "dave_protocol_version": dave},
        }

    @staticmethod
    def _voice_heartbeat_ack(nonce: int) -> JSON:
        return {"op": 6, "d": {"t": nonce}}

    # ---- REST ------------------------------------------------------------------------------
    async def _rest(self, request: web.Request) -> web.Response:
        path = request.match_info["tail"]
        if request.headers.get("Authorization") != f"Bot {self.token}" and not path.startswith(
            ("interactions/", "webhooks/")
        ):
            return json_response({"message": "401: Unauthorized", "code": 0}, 401)
        parts = path.split("/")
        body, files = await self._read_body(request)
        if path == "users/@me":
            return json_response(self.bot.to_json())
        if path == "gateway/bot":
            limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
            # Discord's own gateway, elsewhere: a bot must keep to the one it was told to use
            return json_response(
                {
                    "url": f"wss://127.0.0.1:{self.port}/elsewhere",
                    "shards": self.recommended_shards,
                    "session_start_limit": limit,
                }
            )
        if path == "oauth2/applications/@me":
            return json_response(self._application_json())
        if parts[0] == "interactions" and parts[-1] == "callback":
            return self._interaction_callback(parts[1], parts[2], body, files, request)
        if parts[0] == "webhooks" and len(parts) >= 3:
            return self._webhook(parts[2], parts[3:], request.method, body, files)
        if path == "users/@me/guilds" and request.method == "GET":
            return json_response(
                [
                    {
                        "id": g,
                        "name": self._guild_json(g)["name"],
                        "icon": None,
                        "banner": None,
                        "owner": False,
                        "permissions": "0",
                        "features": [],
                    }
                    for g in self.channels
                ]
            )
        if parts[0] == "guilds" and len(parts) >= 2 and parts[1] in self.channels:
            guild = self._guild_json(parts[1])
            if len(parts) == 2 and request.method == "GET":
                return json_response(without(guild, *self.GUILD_CREATE_ONLY))
            if parts[2:] == ["channels"] and request.method == "GET":
                return json_response(guild["channels"])
            if parts[2:] == ["voice-states", "@me"] and request.method == "PATCH":
                return await self._own_stage_state(parts[1], body or {})
            if parts[2] == "members" and len(parts) == 4 and request.method == "GET":
                member = next((m for m in guild["members"] if m["user"]["id"] == parts[3]), None)
                if member is None:
                    return json_response({"message": "Unknown Member", "code": 10007}, 404)
                return json_response(member)
        if parts[0] == "applications" and parts[-1] == "commands" and request.method == "GET":
            return json_response(self.registered_commands)
        if parts[0] == "channels" and parts[-1] == "messages" and request.method == "POST":
            message = self._message_json((body or {}).get("content", ""), channel_id=parts[1])
            self.channel_messages.append(dict(body or {}, channel_id=parts[1]))
            return json_response(message)
        if parts[0] == "applications" and parts[-1] == "commands" and request.method == "PUT":
            in_a_guild = parts[2:3] == ["guilds"]  # applications/{app}/guilds/{guild}/commands
            self.registered_commands = [self._registered_command(c, in_a_guild) for c in body]
            return json_response(self.registered_commands)
        self.unknown_routes.append(f"{request.method} {path}")
        return json_response({"message": "404: Not Found", "code": 0}, 404)

    @staticmethod
    async def _read_body(request: web.Request) -> tuple[Any, dict[str, bytes]]:
        """JSON, or multipart with `payload_json` and files (by filename)."""
        if not request.can_read_body:
            return None, {}
        if not request.content_type.startswith("multipart/"):
            return await request.json(), {}
        body: Any = None
        files: dict[str, bytes] = {}
        reader = await request.multipart()
        async for part in reader:
            if part.name == "payload_json":  # type: ignore[union-attr]
                body = json.loads(await part.text())  # type: ignore[union-attr]
            else:
                files[part.filename or part.name or ""] = bytes(await part.read())  # type: ignore[union-attr]
        return body, files

    def _interaction_callback(
        self,
        interaction_id: str,
        token: str,
        body: JSON,
        files: dict[str, bytes],
        request: web.Request,
    ) -> web.Response:
        inter = self.interactions.get(interaction_id)
        if inter is None or inter.token != token:
            return json_response({"message": "Unknown interaction", "code": 10062}, 404)
        if any(r.get("_callback") for r in inter.responses):
            return json_response(
                {"message": "Interaction has already been acknowledged.", "code": 40060}, 400
            )
        data = dict(body.get("data") or {})
        record = dict(data, _callback=True, _type=body["type"], _files=files)
        inter.responses.append(record)
        inter.changed.set()
        if request.query.get("with_response") not in ("1", "true", "True"):
            return web.Response(status=204)
        message = self._message_json(data.get("content", ""), data.get("flags", 0))
        message["id"] = inter.message_id
        return json_response(
            {
                "interaction": {
                    "id": interaction_id,
                    "type": 2,
                    "response_message_id": message["id"],
                    "response_message_loading": body["type"] == 5,
                    "response_message_ephemeral": bool(data.get("flags", 0) & 64),
                },
                "resource": {"type": body["type"], "message": message},
            }
        )

    def _webhook(
        self, token: str, rest: list[str], method: str, body: JSON | None, files: dict[str, bytes]
    ) -> web.Response:
        inter = next((i for i in self.interactions.values() if i.token == token), None)
        if inter is None:
            return json_response({"message": "Unknown Webhook", "code": 10015}, 404)
        message = self._message_json(
            (body or {}).get("content") or "", (body or {}).get("flags", 0)
        )
        if rest[-1:] == ["@original"]:  # one message, edited: it keeps its id, as on Discord
            message["id"] = inter.message_id
        if method in ("PATCH", "POST"):
            inter.responses.append(dict(body or {}, _method=method, _files=files, id=message["id"]))
            inter.changed.set()
        if method == "DELETE":  # the bot withdrew its response
            inter.responses.append({"_method": method, "_deleted": True})
            inter.changed.set()
            return web.Response(status=204)
        return json_response(message)

    async def _cdn(self, request: web.Request) -> web.Response:
        file = self.files.get(request.match_info["id"])
        if file is None:
            return web.Response(status=404)
        file.downloads += 1
        return web.Response(body=file.data, content_type=file.content_type)

    def _attachment_json(self, file: FakeFile) -> JSON:
        url = f"https://127.0.0.1:{self.port}/attachments/{file.id}/{file.filename}"
        return {
            "id": file.id,
            "filename": file.filename,
            "size": len(file.data) if file.declared_size is None else file.declared_size,
            "url": url,
            "proxy_url": url,
            "content_type": file.content_type,
        }

    # ---- payloads --------------------------------------------------------------------------
    def _message_json(
        self,
        content: str,
        flags: int = 0,
        author: FakeUser | None = None,
        channel_id: str | None = None,
    ) -> JSON:
        return {
            "id": snowflake(),
            "channel_id": channel_id or self.TEXT_ID,
            "author": (author or self.bot).to_json(),
            "content": content,
            "timestamp": now_iso(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "type": 20,
            "flags": flags,
        }

    def _registered_command(self, command: JSON, in_a_guild: bool = False) -> JSON:
        """A command the bot registered, as Discord then sends it: with its ids, its defaults
        filled in (the install contexts: servers), the permissions as a string."""
        registered = {
            "type": 1,
            "description": "",
            "default_member_permissions": None,
            **command,
            "application_id": self.app_id,
            "id": snowflake(),
            "version": snowflake(),
        }
        if registered.get("default_member_permissions") is not None:
            registered["default_member_permissions"] = str(registered["default_member_permissions"])
        if registered.get("integration_types") is None:
            registered["integration_types"] = [0]  # GUILD_INSTALL
        if in_a_guild:  # a guild's command is only there: where else it may be used is moot
            registered = without(registered, "contexts", "integration_types", "dm_permission")
        return registered

    def _application_json(self) -> JSON:
        return {
            "id": self.app_id,
            "name": "PocketVoice",
            "icon": None,
            "description": "",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": self.humans["alice"].to_json(),
            "verify_key": "00",
            "flags": self.application_flags,
            "flags_new": str(self.application_flags),
            "summary": "",
            "team": None,
        }

    def _ready_json(self, shard: int) -> JSON:
        return {
            "v": 10,
            "user": self.bot.to_json(),
            "guilds": [{"id": g, "unavailable": True} for g in self.guilds_of_shard(shard)],
            "session_id": f"fake-session-{shard}",
            "shard": [shard, self.shard_count],
            "resume_gateway_url": self.env["DISCORD_GATEWAY_URL"],
            "application": {
                "id": self.app_id,
                "flags": MESSAGE_CONTENT_LIMITED,
                "flags_new": str(MESSAGE_CONTENT_LIMITED),
            },
        }

    def _member_json(self, user: FakeUser, guild: str | None = None) -> JSON:
        """A guild member as the gateway and REST send it (no `permissions`: only an
        interaction's members have theirs)."""
        return {
            "user": user.to_json(),
            "nick": self.nicks.get(user.id),
            "roles": list(self.member_roles.get((guild or self.GUILD_ID, user.id), [])),
            "joined_at": now_iso(),
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
        }

    def _author_member_json(self, user: FakeUser, guild: str | None = None) -> JSON:
        """The `member` of a message's author, or of a mentioned user, in MESSAGE_CREATE and
        MESSAGE_UPDATE only: the member without its `user`."""
        return without(self._member_json(user, guild), "user")

    def _interaction_member_json(
        self, user: FakeUser, permissions: int | None, guild: str | None = None
    ) -> JSON:
        """The member who used an interaction, with their permissions in its channel."""
        return dict(
            self._member_json(user, guild),
            permissions=str(permissions if permissions is not None else self.EVERYONE_PERMISSIONS),
        )

    def _resolved_member_json(self, user: FakeUser, guild: str | None = None) -> JSON:
        """A member in an interaction's `data.resolved.members`: no `user` (it is in
        `resolved.users`), no `deaf` nor `mute`, and their permissions in the channel."""
        return without(self._interaction_member_json(user, None, guild), "user", "deaf", "mute")

    @staticmethod
    def _message_object_json(message: JSON) -> JSON:
        """A message dispatched in MESSAGE_CREATE, as Discord sends it elsewhere (in an
        interaction's `data.resolved.messages`, as a reply's `referenced_message`): a message
        object, whose author is `author` only. The `member`, the `guild_id` and the mentions'
        `member` are MESSAGE_CREATE's and MESSAGE_UPDATE's alone."""
        resolved = without(message, "member", "guild_id")
        resolved["mentions"] = [without(user, "member") for user in message["mentions"]]
        if message.get("referenced_message") is not None:
            resolved["referenced_message"] = FakeDiscord._message_object_json(
                message["referenced_message"]
            )
        return resolved

    def _voice_state_json(
        self, user: FakeUser, channel_id: str | None, guild: str | None = None
    ) -> JSON:
        return {
            "guild_id": guild or self.GUILD_ID,
            "channel_id": channel_id,
            "user_id": user.id,
            "member": self._member_json(user, guild=guild),
            "session_id": f"session-{user.id}",
            "deaf": False,
            "mute": False,
            "self_deaf": user.bot,
            "self_mute": False,
            "self_video": False,
            # the bot is a stage's speaker here, as if its moderators had invited it
            "suppress": (guild or self.GUILD_ID, user.id) in self.suppressed,
            "request_to_speak_timestamp": None,
        }

    # what GUILD_CREATE has beyond the guild object that REST sends
    GUILD_CREATE_ONLY = (
        "joined_at",
        "large",
        "unavailable",
        "member_count",
        "voice_states",
        "members",
        "channels",
        "threads",
        "presences",
        "stage_instances",
        "guild_scheduled_events",
        "soundboard_sounds",
    )

    def _guild_json(self, guild: str) -> JSON:
        """The guild as GUILD_CREATE sends it (`GUILD_CREATE_ONLY` are not in REST's)."""
        text_id, voice_id, voice2_id = self.channels[guild]

        def channel(cid: str, name: str, kind: int, position: int) -> JSON:
            data = {
                "id": cid,
                "type": kind,
                "name": name,
                "position": position,
                "guild_id": guild,
                "permission_overwrites": self.voice_channel_overwrites.get(cid, []),
                "parent_id": None,
                "nsfw": False,
            }
            if kind in (2, 13):  # a voice or a stage channel
                data.update(bitrate=64000, user_limit=0, rtc_region=None)
            return data

        members = [self.bot, self.other_bot, *self.humans.values()]
        return {
            "id": guild,
            "name": "Fake Guild" if guild == self.GUILD_ID else "Second Guild",
            "icon": None,
            "owner_id": self.humans["alice"].id,
            "unavailable": False,
            "member_count": len(members),
            "large": False,
            "features": [],
            "roles": [
                *(role.to_json() for role in self.roles[guild]),
                {
                    "id": guild,
                    "name": "@everyone",
                    "permissions": str(self.EVERYONE_PERMISSIONS),
                    "position": 0,
                    "color": 0,
                    "colors": dict(NO_COLORS),
                    "hoist": False,
                    "managed": False,
                    "mentionable": False,
                    "flags": 0,
                },
            ],
            "channels": [
                channel(text_id, "general", 0, 0),
                channel(voice_id, "Lounge", 2, 1),
                channel(voice2_id, "Gaming", 2, 2),
                *(
                    [channel(self.stages[guild], "Town Hall", 13, 3)]
                    if guild in self.stages
                    else []
                ),
                *(forum for forum in self.forums.values() if forum["guild_id"] == guild),
                *(text for text in self.texts.values() if text["guild_id"] == guild),
            ],
            "members": [self._member_json(m, guild=guild) for m in members],
            "voice_states": [  # without their `guild_id`, the guild's
                without(self._voice_state_json(self._user(uid), cid, guild), "guild_id")
                for uid, cid in self.voice_by_guild[guild].items()
            ],
            "threads": [t for t in self.threads.values() if t["guild_id"] == guild],  # active
            "emojis": [],
            "stickers": [],
            "joined_at": now_iso(),
            "premium_tier": 0,
            "preferred_locale": "en-US",
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "system_channel_flags": 0,
            "system_channel_id": text_id,
            # what Discord sends of what the fake has none of
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "vanity_url_code": None,
            "afk_channel_id": None,
            "afk_timeout": 300,
            "application_id": None,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "premium_progress_bar_enabled": False,
            "hub_type": None,
            "incidents_data": None,
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def _user(self, user_id: str) -> FakeUser:
        if user_id == self.bot.id:
            return self.bot
        if user_id == self.other_bot.id:
            return self.other_bot
        return next(u for u in self.humans.values() if u.id == user_id)
