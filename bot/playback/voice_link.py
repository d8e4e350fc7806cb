"""discord.py's VoiceClient, with one fault of its reconnects worked around, and the few
private parts of discord.py that the bot needs: its voice state's, for healing a link and for
the call's DAVE session (`call_privacy`: what /botstats shows members), libopus's loader, and
where it finds Discord (this is their one adapter: no other module
touches them, tests/test_private_names.py checks). Written for discord.py `WRITTEN_FOR`: after
an upgrade, check this module first (`doctor` warns when the installed version differs).

When a voice connection drops without a close frame (1006), discord.py closes its UDP socket,
opens a new one and sends IP discovery on it. Its socket-reader thread, though, may sit in a
`select()` on the old socket with a 30 s timeout (it goes back there right after reading the
first discovery reply), and reads the new one only after that: up to 30 s of silence, and with
a short connect timeout a reconnect that never completes (measured with our fake Discord:
27.6 s from the discovery packet to its reply being read). discord.py pauses the reader just
before it closes the old socket; shutting that socket down right then wakes the `select()`
(Linux wakes pollers on shutdown, connected or not), the reader sees the pause, and later
resumes on the new socket. A datagram would not do: the socket may be connected to Discord's
address and then takes datagrams from nowhere else.

Discord's voice is end-to-end encrypted (DAVE). discord.py 2.7.1 plays as soon as its voice
websocket is connected and sends plain Opus until its DAVE session is ready (a few hundred
milliseconds later, after the MLS commit or welcome), and a member's client drops those frames:
the first syllable of every join and reconnect was lost. So the player holds its next frame
until the session can encrypt (`send_audio_packet`), when anyone else is in the channel to
hear it, and then plays on at its pace from there; past `DAVE_READY_S` the link counts as not
carrying, which the connection watchdog heals (and this logs).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import logging
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import discord
import yarl

from bot.core.config import Config

log = logging.getLogger(__name__)

LIBRARY = "discord.py"  # the distribution name, for importlib.metadata
WRITTEN_FOR = "2.7.1"  # the version whose private names this module uses
ABANDON_TIMEOUT_S = 2.0
# How long the player holds a frame for the connection's DAVE session: it is ready within a
# few round trips to the voice gateway (about 0.3 s with 50 ms each way); past this, the link
# is healed.
DAVE_READY_S = 3.0
DAVE_POLL_S = 0.005
OPUS_SILENCE = b"\xf8\xff\xfe"  # Discord's silence frame: DAVE leaves it unencrypted


def point_discord_at(config: Config) -> None:
    """Use the configured REST and gateway URLs (a proxy, or our tests' fake Discord).

    discord.py 2.7 reads them from two class attributes and offers no option of a client's
    own (its `proxy=` is a forward proxy, not another base URL; interactions' follow-ups use
    the same `Route`), so they are set for the whole process: one bot, one Discord."""
    discord.http.Route.BASE = config.discord_api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(config.discord_gateway_url)


def dave_protocol_version() -> int:
    """The highest DAVE protocol version discord.py offers Discord (its voice state's
    `max_dave_protocol_version`: davey's, or 0 without davey: Discord then closes with 4017)."""
    if not discord.voice_state.has_dave:
        return 0
    import davey  # discord.py imported it already (has_dave)

    return int(davey.DAVE_PROTOCOL_VERSION)


@dataclass(frozen=True)
class CallPrivacy:
    """The bot's voice call in one server as its members can check it (/botstats)."""

    channel_id: int
    encrypted: bool  # DAVE is on for the call (a protocol version above 0)
    code: str | None  # its voice privacy code; None until the call's group is agreed


def call_privacy(voice_client: discord.VoiceProtocol | None) -> CallPrivacy | None:
    """The call of a server's voice connection (None: not connected): whether DAVE is on and
    the code Discord shows members in the call (davey's `voice_privacy_code` of the
    connection's session, made afresh at each transition), once its session is ready."""
    if not isinstance(voice_client, discord.VoiceClient) or not voice_client.is_connected():
        return None
    state = voice_client._connection
    encrypted = bool(getattr(state, "dave_protocol_version", 0))
    session = getattr(state, "dave_session", None)
    code = session.voice_privacy_code if encrypted and session and session.ready else None
    return CallPrivacy(voice_client.channel.id, encrypted, code or None)


def load_opus() -> bool:
    """libopus loaded (already, or now from the system's default place): True, else False."""
    return discord.opus.is_loaded() or bool(discord.opus._load_default())


class _QuietHarmlessErrors(logging.Filter):
    """The wake-up makes the reader's next `recv` fail once, which discord.py logs at DEBUG
    as "safe to ignore" with a traceback: keep the line, drop the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "safe to ignore" in str(record.msg):
            record.exc_info = None
            record.exc_text = None
        return True


logging.getLogger("discord.voice_state").addFilter(_QuietHarmlessErrors())


def wake_reader(sock: socket.socket | None) -> None:
    """Wake a thread blocked in `select()` on `sock`, which is about to be closed anyway."""
    if sock is None:
        return
    with contextlib.suppress(OSError, AttributeError):  # unconnected: ENOTCONN, yet it wakes
        sock.shutdown(socket.SHUT_RDWR)


def _pausing_then_waking(state: Any, pause: Callable[[], None]) -> Callable[[], None]:
    """The reader's `pause`, then a wake-up of the socket it may be waiting on."""

    @functools.wraps(pause)
    def pause_then_wake() -> None:
        pause()
        wake_reader(getattr(state, "socket", None))

    return pause_then_wake


# libopus's OPUS_SET_COMPLEXITY request, and the complexity the bot encodes speech at
_SET_COMPLEXITY = 4010
_GET_COMPLEXITY = 4011
OPUS_COMPLEXITY = 5


def set_complexity(encoder: discord.opus.Encoder, complexity: int) -> None:
    """Set a discord.py encoder's libopus complexity (0-10; discord.py offers no parameter).

    discord.py leaves libopus's default, 10: 17-18 ms of CPU per second of audio on this
    machine (2026-12-04), the bulk of the players' share of the bot's CPU, per server
    speaking. At 5 it takes 9 ms; at 128 kbit/s speech keeps its quality (a lower
    complexity saves on the searches that matter at low bitrates)."""
    # discord.py's binding raises its OpusError when libopus refuses the value
    discord.opus._lib.opus_encoder_ctl(encoder._state, _SET_COMPLEXITY, complexity)


def complexity_of(encoder: discord.opus.Encoder) -> int:
    """A discord.py encoder's libopus complexity (OPUS_GET_COMPLEXITY). discord.py's own
    binding of the call takes an int as its argument, so this uses a binding of its own."""
    ctl = discord.opus._lib["opus_encoder_ctl"]  # a new function object, not discord.py's
    ctl.argtypes = [type(encoder._state), ctypes.c_int, ctypes.POINTER(ctypes.c_int32)]
    ctl.restype = ctypes.c_int
    value = ctypes.c_int32(-1)
    if ctl(encoder._state, _GET_COMPLEXITY, ctypes.byref(value)) != 0:
        raise RuntimeError("libopus did not tell the encoder's complexity")
    return value.value


class VoiceLink(discord.VoiceClient):
    """A VoiceClient whose UDP reader follows a new socket at once after a reconnect, and
    whose Opus encoder runs at `OPUS_COMPLEXITY`."""

    def __init__(self, client: discord.Client, channel: discord.abc.Connectable) -> None:
        self._encoder: discord.opus.Encoder | None = None
        super().__init__(client, channel)
        self.removed = False  # Discord took the bot out of the channel (kicked, moved out)
        self.answered = False  # Discord answered the join (a voice state with a channel)
        self.dave_stalled = False  # its DAVE session was not ready within DAVE_READY_S
        state = self._connection
        reader = getattr(state, "_socket_reader", None)
        if reader is None or not hasattr(reader, "pause"):  # another discord.py: nothing to do
            log.debug("discord.py's voice state has no socket reader to wake")
            return
        reader.pause = _pausing_then_waking(state, reader.pause)

    @property
    def encoder(self) -> Any:
        return self._encoder

    @encoder.setter
    def encoder(self, encoder: Any) -> None:
        """discord.py makes a new encoder in `play()`, before its player thread starts: the
        complexity is set here, so no frame is encoded at another one."""
        if isinstance(encoder, discord.opus.Encoder):
            set_complexity(encoder, OPUS_COMPLEXITY)
        self._encoder = encoder

    async def on_voice_state_update(self, data: Any) -> None:
        """Notes a removal: the bot's voice state says "no channel" while discord.py expected
        none (it expects one after its own or our leave). Read before discord.py resets it.

        A "no channel" state before this link's join was answered is the late answer to a
        leave sent before the join (ours, or discord.py's after a kick): Discord answers a
        gateway's voice state requests in order, and the bot cannot be taken out of a channel
        it has not entered. discord.py, whose new link expects no leave, would take it for a
        kick and end the join, which then waited out its whole attempt: it is ignored."""
        if data.get("channel_id") is not None:
            self.answered = True
        elif not self.answered:
            log.debug("ignored a leave's late answer in guild %s", self.guild.id)
            return
        else:
            expecting = getattr(self._connection, "_expecting_disconnect", True)
            if not expecting:
                self.removed = True
        await super().on_voice_state_update(data)

    def reap(self) -> None:
        """Take the failure of discord.py's voice poller task if it died (it does when a send
        meets a closing connection mid-reconnect): logged here, not as "never retrieved".
        The link then is not connected, and the next message or the watchdog rejoins."""
        state = self._connection
        runner = getattr(state, "_runner", None)
        if runner is None or not runner.done() or runner.cancelled():
            return
        error = runner.exception()
        if error is not None:
            log.info("discord.py's voice poller ended: %s", error or type(error).__name__)
        state._runner = None

    @property
    def carrying(self) -> bool:
        """Connected, and its voice websocket open. After the gateway identified again,
        Discord closes the old session's voice websocket (4014) while discord.py still calls
        the link connected and waits, its player sending audio nobody receives."""
        return self._websocket_open() and not self.dave_stalled

    def _websocket_open(self) -> bool:
        websocket = getattr(getattr(self._connection, "ws", None), "ws", None)
        if websocket is None:
            return False
        # discord.py opens it with autoclose off: a close frame received sets only close_code
        return self.is_connected() and not websocket.closed and websocket.close_code is None

    # ---- DAVE: nothing leaves before it can be decrypted ---------------------------------------
    def heard_now(self) -> bool:
        """A frame sent now reaches the members: the connection has no DAVE (protocol version
        0), or its voice session is open and its DAVE session can encrypt, or nobody else is
        in the channel. (A session whose websocket closed is over: with DAVE its group is
        gone, and what it sends cannot be decrypted by anyone.)"""
        state = self._connection
        if not getattr(state, "dave_protocol_version", 0):
            return True
        if not self._websocket_open():
            return False
        if state.can_encrypt:
            return True
        try:  # read from the player thread while the event loop may change it
            others = [user for user in self.channel.voice_states if user != self.user.id]
        except RuntimeError:
            return False
        return not others

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        """discord.py's player thread sends each frame here: one that nobody could decrypt
        waits for the DAVE session (bounded), and the player's clock restarts after a wait,
        so what follows keeps its pace instead of bursting."""
        if not encode and data == OPUS_SILENCE:
            super().send_audio_packet(data, encode=encode)
        elif self.heard_now():
            self.dave_stalled = False  # ready after all (late): no heal needed
            super().send_audio_packet(data, encode=encode)
        elif self._wait_for_dave():
            super().send_audio_packet(data, encode=encode)
        # else not sent: no member could decrypt it (the heal replays it)

    @property
    def audio_player(self) -> Any:
        """discord.py's player of the current audio (its thread's object), or None."""
        return self._player

    def _wait_for_dave(self) -> bool:
        """In the player thread: wait until a frame is heard (True), or the player ends, or
        `DAVE_READY_S` passes (False: the link is marked for healing)."""
        if self.dave_stalled:
            return False
        started = time.monotonic()
        player = self.audio_player
        while not self.heard_now():
            if player is None or player._end.is_set():
                return False  # the player is ending: the frame would go nowhere
            if time.monotonic() - started >= DAVE_READY_S:
                self.dave_stalled = True
                log.warning(
                    "the voice link in guild %s had no DAVE session able to encrypt after %.1f s: "
                    "the link is healed",
                    self.guild.id,
                    DAVE_READY_S,
                )
                return False
            time.sleep(DAVE_POLL_S)
        waited = time.monotonic() - started
        log.debug("held audio %.0f ms for DAVE in guild %s", waited * 1000, self.guild.id)
        if player is not None:  # as discord.py does after it waited for a reconnect
            player.loops = 0
            player._start = time.perf_counter()
        return True

    def stop_reconnecting(self) -> None:
        """Cancel discord.py's own reconnect, if any. Left running, it waits out its timeout
        and then disconnects, which would end the link made afresh in its place."""
        state = self._connection
        for name in ("_connector", "_runner"):
            task = getattr(state, name, None)
            if task is not None and not task.done() and task is not asyncio.current_task():
                task.cancel()
            setattr(state, name, None)

    async def abandon(self) -> None:
        """Drop a link Discord no longer knows (its gateway session was replaced), here only.

        Telling Discord "leave" would be answered on the new session, and a link being made
        afresh would take that answer for its own disconnect."""
        self.stop_reconnecting()
        self.stop()
        state = self._connection
        with contextlib.suppress(Exception):
            async with asyncio.timeout(ABANDON_TIMEOUT_S):
                await state.soft_disconnect()
        with contextlib.suppress(Exception):
            state._socket_reader.stop()
            state.state = type(state.state).disconnected
            state._connected.set()  # wakes a player thread waiting for the link to come back
            state._connected.clear()
        if self.guild.voice_client is self:
            self.cleanup()
