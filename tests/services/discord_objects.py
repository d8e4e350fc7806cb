"""Real discord.py objects, built the way the bot gets them: payloads shaped as Discord sends
them (field for field as in Discord's API docs and `discord-api-types`), fed to a real
`discord.state.ConnectionState` through its gateway parsers (GUILD_CREATE, MESSAGE_CREATE,
VOICE_STATE_UPDATE, GUILD_ROLE_CREATE, CHANNEL_UPDATE) or to the constructors discord.py
itself calls (`discord.Interaction`, and the context menu's target as `app_commands.CommandTree`
resolves it).

The state has the bot's own intents (guilds, voice states, guild messages, message content; no
members intent): as with Discord, GUILD_CREATE carries only the bot and the members in voice,
and a member the cache does not hold is known from what a payload says of them. REST is
`PayloadHTTP`: it answers GET of a guild member from the same people, as Discord would, and
fails the test on any other request, so nothing reaches a network.

`Server` is one Discord server seen by one bot: its people, roles and channels, and the
payloads of what happens in it.
"""

from __future__ import annotations

import datetime
import itertools
from dataclasses import dataclass, field
from typing import Any

import discord
from discord.app_commands.namespace import Namespace, ResolveKey
from discord.http import HTTPClient, Route
from discord.state import ConnectionState

JSON = dict[str, Any]

INTENTS = discord.Intents.none()  # as bot/client.py asks for them
INTENTS.guilds = True
INTENTS.voice_states = True
INTENTS.guild_messages = True
INTENTS.message_content = True

GUILD_ID = "1100000000000000001"
APP_ID = "1100000000000000002"
BOT_ID = APP_ID  # a bot user's id is its application's
TEXT_ID = "1100000000000000010"  # #general
OTHER_TEXT_ID = "1100000000000000011"  # #off-topic
VOICE_ID = "1100000000000000020"  # Lounge
VOICE2_ID = "1100000000000000021"  # Gaming
STAGE_ID = "1100000000000000022"  # Town Hall
FORUM_ID = "1100000000000000030"  # #ideas, a forum channel (`Server.forum()` creates it)

P = discord.Permissions
EVERYONE = P(
    view_channel=True,
    send_messages=True,
    read_message_history=True,
    connect=True,
    speak=True,
    use_application_commands=True,
    add_reactions=True,
).value
ADMINISTRATOR = P(administrator=True).value
MANAGE_MESSAGES = P(manage_messages=True).value
MODERATE_MEMBERS = P(moderate_members=True).value
MANAGE_GUILD = P(manage_guild=True).value
VIEW_CHANNEL = P(view_channel=True).value
MOVE_MEMBERS = P(move_members=True).value

SILENT = 1 << 12  # MessageFlags.SUPPRESS_NOTIFICATIONS
UNKNOWN_MEMBER = 10007  # Discord's JSON error code

_ids = itertools.count(1_200_000_000_000_000_000)


def snowflake() -> str:
    return str(next(_ids))


def now_iso() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat()


@dataclass
class Role:
    id: str
    name: str
    position: int
    permissions: int = 0

    def payload(self) -> JSON:  # a role object
        return {
            "id": self.id,
            "name": self.name,
            "color": 0,
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "position": self.position,
            "permissions": str(self.permissions),
            "managed": False,
            "mentionable": False,
            "flags": 0,
        }


@dataclass
class Person:
    """A Discord user and what they are in the server."""

    id: str
    username: str
    global_name: str | None = None
    nick: str | None = None  # their server nickname
    roles: list[str] = field(default_factory=list)
    bot: bool = False

    def user(self) -> JSON:  # a user object
        data: JSON = {
            "id": self.id,
            "username": self.username,
            "discriminator": "0",
            "global_name": self.global_name,
            "avatar": None,
            "public_flags": 0,
            "flags": 0,
        }
        if self.bot:
            data["bot"] = True
        return data

    def member(self, *, user: bool = True, permissions: int | None = None) -> JSON:
        """A guild member object; without `user` as in MESSAGE_CREATE's `member` and in a
        mention's; with `permissions` as in an interaction (its channel's, overwrites applied)."""
        data: JSON = {
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "roles": list(self.roles),
            "joined_at": "2024-01-01T00:00:00.000000+00:00",
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }
        if user:
            data["user"] = self.user()
        if permissions is not None:
            data["permissions"] = str(permissions)
        return data


class PayloadHTTP(HTTPClient):
    """discord.py's HTTP client with its transport replaced: `GET` of a guild member is
    answered from the server's people (404 Unknown Member for others), as Discord answers it,
    and a message the bot posts (`sent`) with its message object; any other request fails the
    test. `requests` lists what was asked, by method and path."""

    def __init__(self, server: Server) -> None:
        super().__init__(loop=None)  # type: ignore[arg-type]  # (no session: no network)
        self.server = server
        self.requests: list[tuple[str, str]] = []
        self.down = False  # every request answered 503, as Discord's API does when it is down
        self.sent: list[tuple[str, str]] = []  # (channel id, content) of the bot's messages

    async def request(self, route: Route, **kwargs: Any) -> Any:
        path = route.url.removeprefix(Route.BASE)
        self.requests.append((route.method, path))
        if self.down:
            unavailable = {"code": 0, "message": "Service Unavailable"}
            raise discord.DiscordServerError(_Response(503, "Service Unavailable"), unavailable)
        parts = path.strip("/").split("/")
        if route.method == "GET" and parts[:1] == ["guilds"] and parts[2:3] == ["members"]:
            guild_id, user_id = parts[1], parts[3]
            person = self.server.by_id.get(user_id)
            if guild_id == self.server.id and user_id in self.server.joined and person:
                return person.member()
            unknown = {"code": UNKNOWN_MEMBER, "message": "Unknown Member"}
            raise discord.NotFound(_Response(404, "Not Found"), unknown)
        if route.method == "POST" and parts[:1] == ["channels"] and parts[2:] == ["messages"]:
            content = (kwargs.get("json") or {}).get("content") or ""
            self.sent.append((parts[1], content))  # the bot's message, as Discord keeps it
            return self.server.message(self.server.bot, content, channel_id=parts[1])
        raise AssertionError(f"a request the test does not answer: {route.method} {path}")


@dataclass
class _Response:
    """What discord.HTTPException reads of an aiohttp response."""

    status: int
    reason: str


class Server:
    """One server, as one bot's ConnectionState knows it. People and roles added before
    `start()` are in its GUILD_CREATE; afterwards they come as gateway events."""

    CHANNELS = (  # (id, name, type, position)
        (TEXT_ID, "general", 0, 0),
        (OTHER_TEXT_ID, "off-topic", 0, 1),
        (VOICE_ID, "Lounge", 2, 2),
        (VOICE2_ID, "Gaming", 2, 3),
        (STAGE_ID, "Town Hall", 13, 4),
    )

    def __init__(self, *, owner: str = "alice", locale: str = "en-US") -> None:
        self.id = GUILD_ID
        self.locale = locale
        self.events: list[tuple[str, tuple[Any, ...]]] = []  # what the state dispatched
        self.http = PayloadHTTP(self)
        self.client = discord.Client(intents=INTENTS, max_messages=None)
        self.state: ConnectionState = ConnectionState(
            dispatch=self._dispatch,
            handlers={},
            hooks={},
            http=self.http,
            intents=INTENTS,
            max_messages=None,
            application_id=int(APP_ID),
            allowed_mentions=discord.AllowedMentions.none(),
        )
        self.state._get_client = lambda: self.client  # as discord.Client sets it
        self.client._connection = self.state
        self.client.http = self.http
        self.bot = Person(BOT_ID, "PocketVoice", bot=True)
        self.state.user = discord.ClientUser(state=self.state, data=self.bot.user())  # READY's
        self.people: dict[str, Person] = {}
        self.by_id: dict[str, Person] = {self.bot.id: self.bot}
        self.joined: set[str] = {self.bot.id}  # who is in the server (not who left)
        self.roles: dict[str, Role] = {}
        self.voice: dict[str, tuple[str, bool]] = {}  # user id -> (channel id, suppressed)
        self.overwrites: dict[str, list[JSON]] = {}  # channel id -> permission overwrites
        self.owner = self.add(owner)
        self.guild: discord.Guild | None = None

    def _dispatch(self, event: str, *args: Any) -> None:
        self.events.append((event, args))

    def last_event(self, name: str) -> tuple[Any, ...]:
        return next(args for event, args in reversed(self.events) if event == name)

    # ---- who and what ----------------------------------------------------------------------
    def add(
        self,
        username: str,
        *,
        nick: str | None = None,
        roles: tuple[Role, ...] = (),
        bot: bool = False,
        global_name: str | None = None,
    ) -> Person:
        person = Person(
            snowflake(),
            username,
            global_name if global_name is not None else username.title(),
            nick,
            [role.id for role in roles],
            bot,
        )
        self.people[username] = person
        self.by_id[person.id] = person
        self.joined.add(person.id)
        return person

    def __getitem__(self, username: str) -> Person:
        return self.people[username]

    def role(self, name: str, *, position: int = 1, permissions: int = 0) -> Role:
        """A role; created with GUILD_ROLE_CREATE once the server is started."""
        role = Role(snowflake(), name, position, permissions)
        self.roles[role.id] = role
        if self.guild is not None:
            self.state.parsers["GUILD_ROLE_CREATE"]({"guild_id": self.id, "role": role.payload()})
        return role

    def leave_server(self, username: str) -> None:
        """They left (or were kicked): REST knows them no more."""
        self.joined.discard(self.people[username].id)

    def deny(
        self, channel_id: str, deny: int, person: Person | None = None, *, allow: int = 0
    ) -> None:
        """An overwrite on a channel for @everyone (or one member), denying `deny` (and
        allowing `allow`): in GUILD_CREATE before `start()`, a CHANNEL_UPDATE after it."""
        target, kind = (person.id, 1) if person is not None else (self.id, 0)
        self.overwrites.setdefault(channel_id, []).append(
            {"id": target, "type": kind, "allow": str(allow), "deny": str(deny)}
        )
        if self.guild is not None:
            (spec,) = [c for c in self.CHANNELS if c[0] == channel_id]
            self.state.parsers["CHANNEL_UPDATE"](self._channel(*spec))

    # ---- forums and threads ----------------------------------------------------------------
    def forum(self, channel_id: str = FORUM_ID, name: str = "ideas") -> JSON:
        """CHANNEL_CREATE of a forum channel (type 15), as an admin makes one: a channel
        that holds only threads, its posts."""
        data: JSON = {
            "id": channel_id,
            "type": 15,
            "guild_id": self.id,
            "name": name,
            "position": 5,
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
        self.state.parsers["CHANNEL_CREATE"](data)
        return data

    def thread_create(
        self,
        parent_id: str,
        name: str,
        owner: Person,
        *,
        thread_id: str | None = None,
        private: bool = False,
    ) -> JSON:
        """THREAD_CREATE of a public thread (type 11) `owner` started in `parent_id` (a
        forum's post is one: its id is its starter message's), as Discord sends it to a bot
        with the guilds intent: `newly_created`, no `member` (the bot has not joined it).
        `private`: a private thread (type 12, `invitable`) the bot was added to: Discord then
        sends THREAD_CREATE with the bot's thread `member`, not `newly_created`."""
        created = now_iso()
        data: JSON = {
            "id": thread_id or snowflake(),
            "type": 12 if private else 11,
            "guild_id": self.id,
            "name": name,
            "parent_id": parent_id,
            "owner_id": owner.id,
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
            "newly_created": True,
        }
        if private:
            data["thread_metadata"]["invitable"] = True
            del data["newly_created"]
            data["member"] = {
                "id": data["id"],
                "user_id": self.bot.id,
                "join_timestamp": created,
                "flags": 0,
            }
        self.state.parsers["THREAD_CREATE"](data)
        return data

    def thread_update(self, thread: JSON, **changes: Any) -> JSON:
        """THREAD_UPDATE of `thread` (a THREAD_CREATE's payload) with `changes` (`name=`: a
        rename, by its owner or by anyone with Manage Threads: Discord does not say who)."""
        data = {k: v for k, v in thread.items() if k not in ("newly_created", "member")}
        data.update(changes)
        self.state.parsers["THREAD_UPDATE"](data)
        return data

    def forum_post(
        self, author: Person, title: str, content: str, forum_id: str = FORUM_ID
    ) -> tuple[JSON, JSON]:
        """`author` posts in a forum: THREAD_CREATE of the post (a thread named `title`),
        then the message object of its first message, whose id is the thread's (the
        starter message): (the thread, the message)."""
        thread = self.thread_create(forum_id, title, author)
        first = self.message(author, content, channel_id=thread["id"])
        first["id"] = thread["id"]
        return thread, first

    # ---- GUILD_CREATE ----------------------------------------------------------------------
    def _channel(self, channel_id: str, name: str, kind: int, position: int) -> JSON:
        data: JSON = {
            "id": channel_id,
            "type": kind,
            "guild_id": self.id,
            "name": name,
            "position": position,
            "permission_overwrites": self.overwrites.get(channel_id, []),
            "parent_id": None,
            "nsfw": False,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }
        if kind == 0:
            data["topic"] = None
        else:  # voice and stage channels
            data.update(bitrate=64000, user_limit=0, rtc_region=None)
        return data

    def _voice_state(self, person: Person, channel_id: str | None, suppress: bool) -> JSON:
        """A voice state object as VOICE_STATE_UPDATE sends it (GUILD_CREATE's lack guild_id
        and member)."""
        return {
            "guild_id": self.id,
            "channel_id": channel_id,
            "user_id": person.id,
            "member": person.member(),
            "session_id": f"session-{person.id}",
            "deaf": False,
            "mute": False,
            "self_deaf": person.bot,
            "self_mute": False,
            "self_video": False,
            "self_stream": False,
            "suppress": suppress,
            "request_to_speak_timestamp": None,
        }

    def guild_create(self) -> JSON:
        everyone = Role(self.id, "@everyone", 0, EVERYONE)
        in_voice = [self.by_id[uid] for uid in self.voice]
        members = [self.bot, *(p for p in in_voice if p is not self.bot)]
        voice_states = []
        for uid, (channel_id, suppress) in self.voice.items():
            state = self._voice_state(self.by_id[uid], channel_id, suppress)
            del state["guild_id"], state["member"]
            voice_states.append(state)
        return {
            "id": self.id,
            "name": "Test Server",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": self.owner.id,
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": [everyone.payload(), *(r.payload() for r in self.roles.values())],
            "emojis": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": TEXT_ID,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "preferred_locale": self.locale,
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "stickers": [],
            "premium_progress_bar_enabled": False,
            "safety_alerts_channel_id": None,
            # GUILD_CREATE's own fields
            "joined_at": now_iso(),
            "large": False,
            "unavailable": False,
            "member_count": len(self.joined),
            "voice_states": voice_states,
            "members": [p.member() for p in members],  # the bot and who is in voice
            "channels": [self._channel(*spec) for spec in self.CHANNELS],
            "threads": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    def start(self) -> discord.Guild:
        """The bot's GUILD_CREATE for this server."""
        self.state.parsers["GUILD_CREATE"](self.guild_create())
        guild = self.state._get_guild(int(self.id))
        assert guild is not None
        self.guild = guild
        return guild

    # ---- voice -----------------------------------------------------------------------------
    def in_voice(
        self, username: str | None, channel_id: str | None, *, suppress: bool = False
    ) -> tuple[discord.Member, discord.VoiceState, discord.VoiceState] | None:
        """`username` (None: the bot) joins `channel_id` (None: leaves voice). Before `start()`
        it is in GUILD_CREATE; afterwards a VOICE_STATE_UPDATE, whose event is returned
        (member, before, after) as discord.py dispatches it."""
        person = self.bot if username is None else self.people[username]
        if channel_id is None:
            self.voice.pop(person.id, None)
        else:
            self.voice[person.id] = (channel_id, suppress)
        if self.guild is None:
            return None
        data = self._voice_state(person, channel_id, suppress)
        return self.dispatch("VOICE_STATE_UPDATE", data, "voice_state_update")  # type: ignore[return-value]

    def bot_joins(self, channel_id: str) -> discord.VoiceProtocol:
        """The bot in a voice channel: its voice state, and its voice client (discord.py's
        base `VoiceProtocol`: the tests never send audio)."""
        assert self.guild is not None
        self.in_voice(None, channel_id)
        channel = self.guild.get_channel(int(channel_id))
        assert isinstance(channel, discord.VoiceChannel | discord.StageChannel)
        client = discord.VoiceProtocol(self.client, channel)
        self.add_voice_client(client)
        return client

    def add_voice_client(self, client: discord.VoiceProtocol) -> None:
        """Register `client` as the bot's voice client here, as discord.py does on joining."""
        self.state._add_voice_client(int(self.id), client)

    def remove_voice_client(self) -> None:
        """Forget the bot's voice client here, as discord.py does on leaving."""
        self.state._remove_voice_client(int(self.id))

    # ---- messages --------------------------------------------------------------------------
    def message(
        self,
        author: Person,
        content: str,
        *,
        channel_id: str = TEXT_ID,
        flags: int = 0,
        mentions: tuple[Person, ...] = (),
        attachments: tuple[JSON, ...] = (),
        stickers: int = 0,
        reply_to: JSON | None = None,
        kind: int = 0,
    ) -> JSON:
        """A message object (as REST and a context menu's `resolved` give it: no `member`, no
        `guild_id`)."""
        data: JSON = {
            "id": snowflake(),
            "channel_id": channel_id,
            "author": author.user(),
            "content": content,
            "timestamp": now_iso(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [p.user() for p in mentions],
            "mention_roles": [],
            "attachments": list(attachments),
            "embeds": [],
            "pinned": False,
            "type": kind,
            "flags": flags,
            "components": [],
        }
        if stickers:
            data["sticker_items"] = [
                {"id": snowflake(), "name": f"sticker {n}", "format_type": 1}
                for n in range(stickers)
            ]
        if reply_to is not None:
            data["type"] = 19
            data["message_reference"] = {
                "type": 0,
                "message_id": reply_to["id"],
                "channel_id": reply_to["channel_id"],
                "guild_id": self.id,
            }
            data["referenced_message"] = reply_to
        return data

    def webhook_message(
        self,
        name: str,
        content: str,
        *,
        webhook_id: str | None = None,
        channel_id: str = TEXT_ID,
        flags: int = 0,
    ) -> JSON:
        """A webhook's message (a bridge, Tupperbox): the author is the webhook under the
        name it posted with, `webhook_id` is set, and there is no member."""
        hook = webhook_id or snowflake()
        data = self.message(Person(hook, name), content, channel_id=channel_id, flags=flags)
        data["author"] = {
            "id": hook,
            "username": name,
            "avatar": None,
            "discriminator": "0000",
            "bot": True,
        }
        data["webhook_id"] = hook
        return data

    def _gateway_message(self, data: JSON) -> JSON:
        """A message as MESSAGE_CREATE and MESSAGE_UPDATE send it in a server: with
        `guild_id`, the author's `member` (without `user`; none for a webhook) and each
        mention's member."""
        event = dict(data, guild_id=self.id)
        if "webhook_id" not in data:
            event["member"] = self.by_id[data["author"]["id"]].member(user=False)
        event["mentions"] = [
            dict(user, member=self.by_id[user["id"]].member(user=False))
            for user in data["mentions"]
        ]
        return event

    def dispatch(self, event: str, data: JSON, wanted: str) -> tuple[Any, ...]:
        """Feed a gateway event to discord.py's parser; what it dispatched as `wanted`."""
        seen = len(self.events)
        self.state.parsers[event](data)
        (args,) = [args for name, args in self.events[seen:] if name == wanted]
        return args

    def message_create(self, data: JSON) -> discord.Message:
        """MESSAGE_CREATE: the Message the bot's on_message gets."""
        return self.dispatch("MESSAGE_CREATE", self._gateway_message(data), "message")[0]

    def message_update(self, data: JSON, content: str) -> discord.Message:
        """MESSAGE_UPDATE of an edit: the Message of the bot's on_raw_message_edit (no
        message cache: the raw event's)."""
        edited = dict(data, content=content, edited_timestamp=now_iso())
        raw = self.dispatch("MESSAGE_UPDATE", self._gateway_message(edited), "raw_message_edit")
        assert isinstance(raw[0], discord.RawMessageUpdateEvent)
        return raw[0].message

    def post(self, username: str, content: str, **options: Any) -> discord.Message:
        """`username` writes a message: the Message the bot's on_message gets."""
        return self.message_create(self.message(self.people[username], content, **options))

    def direct_message(self, username: str, content: str) -> discord.Message:
        """MESSAGE_CREATE of a message to the bot in direct messages: no guild, no member."""
        data = self.message(self.people[username], content, channel_id=snowflake())
        return self.dispatch("MESSAGE_CREATE", data, "message")[0]

    def attachment(self, filename: str, content_type: str | None) -> JSON:
        file_id = snowflake()
        url = f"https://cdn.discordapp.com/attachments/{TEXT_ID}/{file_id}/{filename}"
        data: JSON = {
            "id": file_id,
            "filename": filename,
            "size": 1024,
            "url": url,
            "proxy_url": url,
        }
        if content_type is not None:
            data["content_type"] = content_type
        return data

    # ---- interactions ----------------------------------------------------------------------
    def interaction_create(
        self, username: str, data: JSON, *, permissions: int = EVERYONE, channel_id: str = TEXT_ID
    ) -> JSON:
        """INTERACTION_CREATE of an application command, used by `username` in a channel
        where they have `permissions`."""
        channel = self._channel(channel_id, "general", 0, 0)
        return {
            "id": snowflake(),
            "application_id": APP_ID,
            "type": 2,
            "data": data,
            "guild": {"id": self.id, "locale": self.locale, "features": []},
            "guild_id": self.id,
            "channel": channel,
            "channel_id": channel_id,
            "member": self.people[username].member(permissions=permissions),
            "token": f"token-{snowflake()}",
            "version": 1,
            "app_permissions": str(EVERYONE),
            "locale": "en-US",
            "guild_locale": self.locale,
            "entitlements": [],
            "authorizing_integration_owners": {"0": self.id},
            "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024,
        }

    def interaction(self, payload: JSON) -> discord.Interaction:
        return discord.Interaction(data=payload, state=self.state)  # type: ignore[arg-type]

    def message_command(
        self,
        username: str,
        target: JSON,
        name: str = "Speak this message",
        *,
        permissions: int = EVERYONE,
    ) -> tuple[discord.Interaction, discord.Message]:
        """A message context menu used on `target` (a message object: Discord's `resolved`
        holds it as REST gives it, with its author and no member): the interaction, and the
        Message its callback gets, resolved as discord.py's CommandTree resolves it."""
        data = {
            "id": snowflake(),
            "name": name,
            "type": 3,
            "target_id": target["id"],
            "resolved": {"messages": {target["id"]: target}},
        }
        interaction = self.interaction(
            self.interaction_create(username, data, permissions=permissions)
        )
        resolved = Namespace._get_resolved_items(interaction, data["resolved"])  # type: ignore[arg-type]
        message = resolved[ResolveKey.any_with(target["id"])]
        assert isinstance(message, discord.Message)
        return interaction, message

    def slash_command(
        self,
        username: str,
        name: str,
        *,
        users: tuple[Person, ...] = (),
        files: tuple[JSON, ...] = (),
        permissions: int = EVERYONE,
        their_permissions: int = EVERYONE,
    ) -> tuple[discord.Interaction, list[Any]]:
        """`username` uses a slash command with a user option for each of `users` and an
        attachment option for each of `files`, in a channel where they have `permissions`:
        the interaction, and each option's value as discord.py resolves it (for a user,
        Discord sends the user and, while they are in the server, their member, with
        `their_permissions` in the channel)."""
        resolved: JSON = {}
        for person in users:
            resolved.setdefault("users", {})[person.id] = person.user()
            if person.id in self.joined:
                member = person.member(user=False, permissions=their_permissions)
                resolved.setdefault("members", {})[person.id] = member
        for file in files:
            resolved.setdefault("attachments", {})[file["id"]] = file
        options = [{"name": "member", "type": 6, "value": p.id} for p in users]
        options += [{"name": "file", "type": 11, "value": f["id"]} for f in files]
        data: JSON = {"id": snowflake(), "name": name, "type": 1, "options": options}
        if resolved:
            data["resolved"] = resolved
        payload = self.interaction_create(username, data, permissions=permissions)
        interaction = self.interaction(payload)
        items = Namespace._get_resolved_items(interaction, resolved)  # type: ignore[arg-type]
        keys = [ResolveKey(id=o["value"], type=o["type"]) for o in options]
        return interaction, [items[key] for key in keys]
