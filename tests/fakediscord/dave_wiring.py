"""The fake's DAVE layer on its sockets: one `DaveGateway` per voice channel, the bot's voice
websockets and the humans in each channel (the listeners) as its clients, and what a listener
hears of the bot's audio.

`dave.py` is the voice gateway's MLS part without sockets; this module carries its messages.
The bot's go over its voice websocket (binary frames with a seq per connection, JSON with a
`seq`); a listener's stay in-process, to a `DaveClient` (davey, driven as discord.py drives
it). Every DAVE message, either way and either kind of client, can be held back `delay`
seconds, as a real voice gateway's round trip does: the start of a call then takes as long as
it does on Discord, and audio sent before the bot's session can encrypt is lost, as there.
A transition the members do not all answer is executed after `TRANSITION_TIMEOUT`.

What the bot sends is heard when at least one listener in its channel decrypts it (each keeps
its own counts): a listener who joins mid-speech cannot decrypt what came before its welcome,
which is no loss of the others'. With nobody in the channel nothing is heard.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import davey
from aiohttp import web

from tests.fakediscord import payload_check
from tests.fakediscord.dave import (
    TRANSITION_TIMEOUT,
    DaveClient,
    DaveGateway,
    Message,
    Outgoing,
    server_frame,
)

JSON = dict[str, Any]
SendVoice = Callable[[web.WebSocketResponse, JSON], Awaitable[None]]


class Pipe:
    """Messages to one end, delivered in the order they were put, each `delay()` seconds after
    (one task while any wait, none when idle)."""

    def __init__(
        self,
        deliver: Callable[[Message], Awaitable[None]],
        delay: Callable[[], float],
        errors: list[str],
    ) -> None:
        self._deliver = deliver
        self._delay = delay
        self._errors = errors
        self._queue: deque[tuple[float, Message]] = deque()
        self._task: asyncio.Task[None] | None = None

    def put(self, message: Message) -> None:
        self._queue.append((time.monotonic() + self._delay(), message))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._queue:
            due, message = self._queue[0]
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._queue.popleft()
            try:
                with payload_check.handling():  # an invalid payload fails the test at its end
                    await self._deliver(message)
            except Exception as error:  # kept for the test to see, as the UDP side's errors
                self._errors.append(f"{type(error).__name__}: {error}")

    def close(self) -> None:
        self._queue.clear()
        if self._task is not None:
            self._task.cancel()


@dataclass(eq=False)
class BotSession:
    """The bot's voice websocket on one channel's DAVE session."""

    ws: web.WebSocketResponse
    channel: str
    seq: int = 0
    pipes: list[Pipe] = field(default_factory=list)


@dataclass(eq=False)
class Listener:
    """A member in a voice channel, hearing it through davey."""

    user_id: int
    channel: str
    client: DaveClient
    seq: int = 0
    heard: int = 0  # the bot's frames it decrypted
    lost: int = 0  # the bot's frames it could not decrypt
    errors: list[str] = field(default_factory=list)  # what davey refused
    pipes: list[Pipe] = field(default_factory=list)


class DaveVoice:
    """Every voice channel's DAVE session, carried between the gateways and their clients."""

    def __init__(self, bot_id: int, send_voice: SendVoice, version: int) -> None:
        self.bot_id = bot_id
        self.version = version  # put in SESSION_DESCRIPTION: 0, no DAVE (passthrough)
        self.delay = 0.0  # seconds each DAVE message takes, either way
        self._send_voice = send_voice
        self.gateways: dict[str, DaveGateway] = {}  # voice channel id -> its gateway
        self.sessions: dict[str, BotSession] = {}  # voice channel id -> the bot's current one
        self._of_ws: dict[web.WebSocketResponse, BotSession] = {}
        # (user id, guild) -> the member's, in its voice channel there (the fake lets a member
        # be in voice in two servers at once)
        self.listeners: dict[tuple[int, str], Listener] = {}
        self.channel_of_ssrc: dict[int, str] = {}  # a bot's voice session on DAVE -> channel
        self.errors: list[str] = []  # what went wrong carrying a message
        self.to_bot: list[int] = []  # the opcodes sent to the bot, in order
        self.from_bot: list[int] = []  # the DAVE opcodes the bot sent, in order
        self._timers: dict[tuple[int, int], asyncio.TimerHandle] = {}
        self.connected_at: list[float] = []  # when each bot session started DAVE (monotonic)

    def gateway(self, channel: str) -> DaveGateway:
        if channel not in self.gateways:
            self.gateways[channel] = DaveGateway(int(channel), protocol_version=self.version or 1)
        return self.gateways[channel]

    def _pipe(self, deliver: Callable[[Message], Awaitable[None]]) -> Pipe:
        return Pipe(deliver, lambda: self.delay, self.errors)

    # ---- the bot's voice websockets ----------------------------------------------------------
    def bot_connected(self, ws: web.WebSocketResponse, channel: str, ssrc: int) -> None:
        """SESSION_DESCRIPTION with DAVE went out on `ws`: the external sender follows."""
        old = self._of_ws.pop(ws, None)
        if old is not None:  # a resumed session's SESSION_DESCRIPTION again
            self._close_session(old)
        session = BotSession(ws, channel)
        self.connected_at.append(time.monotonic())

        async def to_bot(message: Message) -> None:
            if ws.closed or self.sessions.get(channel) is not session:
                return
            session.seq += 1
            if isinstance(message, bytes):
                self.to_bot.append(message[0])
                await ws.send_bytes(server_frame(session.seq, message))
            else:
                self.to_bot.append(int(message["op"]))
                await self._send_voice(ws, {**message, "seq": session.seq})

        async def from_bot(message: Message) -> None:
            if self.sessions.get(channel) is session:
                self._handle(channel, self.bot_id, message)

        session.pipes = [self._pipe(to_bot), self._pipe(from_bot)]
        self.sessions[channel] = session
        self._of_ws[ws] = session
        self.channel_of_ssrc[ssrc] = channel
        self._route(channel, self.gateway(channel).connect(self.bot_id))

    def bot_message(self, ws: web.WebSocketResponse, message: Message) -> None:
        """A DAVE message from the bot (binary 26 or 28, JSON 23 or 31)."""
        session = self._of_ws.get(ws)
        if session is None:
            self.errors.append("a DAVE message on a voice websocket without DAVE")
            return
        self.from_bot.append(message[0] if isinstance(message, bytes) else int(message["op"]))
        session.pipes[1].put(message)

    def bot_closed(self, ws: web.WebSocketResponse) -> None:
        """The voice websocket closed (4014, 4006, 1006, a leave): the bot left the group,
        unless a newer websocket of its already took its place there."""
        session = self._of_ws.pop(ws, None)
        if session is None:
            return
        self._close_session(session)

    def _close_session(self, session: BotSession) -> None:
        for pipe in session.pipes:
            pipe.close()
        if self.sessions.get(session.channel) is session:
            del self.sessions[session.channel]
            self._route(session.channel, self.gateway(session.channel).disconnect(self.bot_id))

    # ---- the members in voice ----------------------------------------------------------------
    def listener(self, user_id: int, channel: str) -> Listener:
        """The member's listener in `channel` (KeyError when it is not there)."""
        for listener in self.listeners.values():
            if listener.user_id == user_id and listener.channel == channel:
                return listener
        raise KeyError((user_id, channel))

    def member_moved(self, user_id: int, guild: str, channel: str | None) -> None:
        """A member's voice state changed: it leaves its channel's group, and joins the new
        channel's as a listener, as its client does on its own voice websocket."""
        key = (user_id, guild)
        listener = self.listeners.get(key)
        if listener is not None and listener.channel == channel:
            return
        if listener is not None:
            del self.listeners[key]
            for pipe in listener.pipes:
                pipe.close()
            self._route(listener.channel, self.gateway(listener.channel).disconnect(user_id))
        if channel is None or not self.version:
            return
        client = DaveClient(user_id, int(channel))
        joined = Listener(user_id, channel, client)

        async def to_listener(message: Message) -> None:
            if self.listeners.get(key) is not joined:
                return
            if isinstance(message, bytes):
                joined.seq += 1
                message = server_frame(joined.seq, message)
            try:
                replies = client.receive(message)
            except Exception as error:  # davey refused it: discord.py would not survive it
                joined.errors.append(f"{type(error).__name__}: {error}")
                return
            for reply in replies:
                from_listener.put(reply)

        async def deliver_from(message: Message) -> None:
            if self.listeners.get(key) is joined:
                self._handle(channel, user_id, message)

        from_listener = self._pipe(deliver_from)
        joined.pipes = [self._pipe(to_listener), from_listener]
        self.listeners[key] = joined
        key_package = client.session_description(self.version)
        self._route(channel, self.gateway(channel).connect(user_id))
        for message in key_package:
            from_listener.put(message)

    # ---- the gateways ------------------------------------------------------------------------
    def _handle(self, channel: str, user_id: int, message: Message) -> None:
        gateway = self.gateway(channel)
        if isinstance(message, bytes):
            self._route(channel, gateway.handle_binary(user_id, message))
        else:
            self._route(channel, gateway.handle_json(user_id, message))

    def _route(self, channel: str, outgoing: list[Outgoing]) -> None:
        for out in outgoing:
            if out.user_id == self.bot_id:
                session = self.sessions.get(channel)
                if session is not None:
                    session.pipes[0].put(out.message)
            else:
                for listener in self.listeners.values():
                    if listener.user_id == out.user_id and listener.channel == channel:
                        listener.pipes[0].put(out.message)
        self._time_transitions(channel)

    def _time_transitions(self, channel: str) -> None:
        """Each transition waiting for its members' 23 is executed anyway after
        TRANSITION_TIMEOUT, as Discord's voice gateway does."""
        gateway = self.gateways[channel]
        loop = asyncio.get_running_loop()
        for transition_id in gateway.transitions:
            key = (id(gateway), transition_id)
            if key not in self._timers:
                self._timers[key] = loop.call_later(
                    TRANSITION_TIMEOUT, self._expire, channel, gateway, transition_id
                )

    def _expire(self, channel: str, gateway: DaveGateway, transition_id: int) -> None:
        self._timers.pop((id(gateway), transition_id), None)
        if self.gateways.get(channel) is gateway:
            self._route(channel, gateway.expire_transition(transition_id))

    # ---- what the listeners hear -------------------------------------------------------------
    def hear(self, ssrc: int, frame: bytes) -> bytes | None:
        """The bot's frame as the listeners in its channel hear it: decrypted by the first who
        can, None when none can (or nobody is there). A session without DAVE passes."""
        channel = self.channel_of_ssrc.get(ssrc)
        if channel is None:
            return frame
        heard: bytes | None = None
        for listener in self.listeners.values():
            if listener.channel != channel or listener.client.session is None:
                continue
            try:
                plain = listener.client.session.decrypt(self.bot_id, davey.MediaType.audio, frame)
            except ValueError:
                listener.lost += 1
                continue
            listener.heard += 1
            if heard is None:
                heard = plain
        return heard

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for session in list(self._of_ws.values()):
            for pipe in session.pipes:
                pipe.close()
        for listener in self.listeners.values():
            for pipe in listener.pipes:
                pipe.close()
