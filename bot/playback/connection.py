"""Each server's voice link: join, move, leave, and heal.

discord.py reconnects a dropped voice link by itself, but some of Discord's everyday fault
sequences leave it waiting out its whole timeout while the server stays silent (read from
discord.py 2.7.1's `voice_state.py`; see `../shared/notes/discord-py-offline.md`):
- 4015 (voice server crashed) when the voice state update comes before the server update:
  its resume waits for a state it never reaches;
- the gateway session invalidated and identified again: the old voice websocket is closed
  with 4014, discord.py waits for a move that never comes, and the new session no longer even
  names the old link as the server's voice client.

So a watchdog looks at every server the bot means to be in voice in: when its speech wants to
play but the link is not carrying it for `HEAL_AFTER_S`, the link is torn down and made afresh,
and the speaker plays on from where it was. Every wait here has a bound.

A heal goes to the channel the bot is in now: a moderator who moved it there is followed, not
undone. And it is not tried without Connect and Speak there: Discord ignores such joins (3 x
15 s each, again and again while speech waited); the bot leaves, drops what was queued and says
why in the log (the next /say tells the member, as any join does).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Callable

import discord

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.playback.speakers import Speakers
from bot.playback.voice_link import VoiceLink

log = logging.getLogger(__name__)

VoiceChannel = discord.VoiceChannel | discord.StageChannel
GuildLookup = Callable[[int], discord.Guild | None]

# discord.py uses the connect timeout for its own reconnects too. After a voice close without
# a close frame (1006) its UDP reader could sit up to 30 s on the old socket
# (bot/playback/voice_link.py now wakes it); keep the timeout long enough that a retry would
# not fail the same way.
CONNECT_TIMEOUT_S = 45.0
# A handshake takes about a second. One stuck in signalling (the voice events for it never
# came: seen once in ~13 runs of the two-process test, and reported by other bots against real
# Discord) is abandoned and tried afresh, so /say waits at most 3 x 15 s, not 45 s for nothing.
CONNECT_ATTEMPT_S = 15.0
CONNECT_ATTEMPTS = 3
LEAVE_TIMEOUT_S = 5.0
STAGE_REQUEST_S = 5.0  # asking to speak on a stage (one REST call)
RECONNECT_SETTLE_S = 1.0  # after our own "left voice" event, look again after this long
WATCH_PERIOD_S = 0.5
# Speech that wants to play, and no audio leaves for this long: heal. discord.py's own working
# reconnects (a 4015 resume, a 1006 reconnect) take about a second.
HEAL_AFTER_S = 2.0
HEAL_BACKOFF_S = 5.0  # after a heal that could not join, wait this long before the next
HOME_RETRY_S = 60.0  # a home channel the bot may not speak in: try it again after this long


async def leave_voice(voice_client: discord.VoiceProtocol) -> None:
    """Disconnect, waiting at most `LEAVE_TIMEOUT_S` for Discord's confirmation. discord.py
    waits for it up to the connect timeout (45 s), and after the bot was removed from a server
    it never comes: shutdown then hung for 45 s (past `docker stop`'s 10 s)."""
    if isinstance(voice_client, VoiceLink):
        voice_client.stop_reconnecting()  # else it disconnects a later link when it times out
    async with asyncio.timeout(LEAVE_TIMEOUT_S):  # discord.py cleans up when cancelled
        await voice_client.disconnect(force=True)


def humans_in(channel: VoiceChannel) -> list[discord.Member]:
    return [member for member in channel.members if not member.bot]


class VoiceConnections:
    """The voice links of every server, kept working."""

    def __init__(self, speakers: Speakers, guild: GuildLookup) -> None:
        self.speakers = speakers
        self._guild = guild
        # a lock lives while someone holds or waits for it: the table cannot only grow
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()
        self._wanted: dict[int, int] = {}  # server -> the voice channel the bot means to be in
        self._links: dict[int, discord.VoiceClient] = {}  # server -> the link we made last
        self._healing: dict[int, asyncio.Task[None]] = {}
        self._broken_since: dict[int, float] = {}
        self._next_heal: dict[int, float] = {}  # server -> no heal before this (backoff)
        self._home: dict[int, int] = {}  # server -> its home voice channel (`set_home`)
        self.heals = 0  # links made afresh by the watchdog (a metric for the operator)

    def _lock(self, guild_id: int) -> asyncio.Lock:
        lock = self._locks.get(guild_id)
        if lock is None:
            lock = self._locks[guild_id] = asyncio.Lock()
        return lock

    def wanted(self) -> frozenset[int]:
        """The servers whose voice channel the bot means to be in (connected, or healing)."""
        return frozenset(self._wanted)

    def _want(self, guild_id: int, channel_id: int | None) -> None:
        speaker = self.speakers.get(guild_id)
        if channel_id is None:
            self._wanted.pop(guild_id, None)
            self._broken_since.pop(guild_id, None)
        else:
            self._wanted[guild_id] = channel_id
        if speaker is not None:
            speaker.link.wanted = channel_id is not None

    # ---- home ------------------------------------------------------------------------------
    def set_home(self, guild_id: int, channel_id: int | None) -> None:
        """The server's home voice channel (None: none): the watchdog keeps the bot there
        whenever it means to be nowhere else, takes it back there after a move by others,
        and heals its link there even when nothing is being said."""
        if channel_id is None:
            self._home.pop(guild_id, None)
        else:
            self._home[guild_id] = channel_id

    def home_of(self, guild_id: int) -> int | None:
        return self._home.get(guild_id)

    def _at_home(self, guild_id: int) -> bool:
        home = self._home.get(guild_id)
        return home is not None and self._wanted.get(guild_id) == home

    def _keep_home(self, guild_id: int, now: float) -> None:
        """The bot means to be in no voice channel of a server with a home: go home."""
        home = self._home.get(guild_id)
        lock = self._locks.get(guild_id)
        if (
            home is None
            or guild_id in self._wanted
            or guild_id in self._healing
            or (lock is not None and lock.locked())
            or now < self._next_heal.get(guild_id, 0.0)
        ):
            return
        guild = self._guild(guild_id)
        if guild is None or not isinstance(
            guild.get_channel(home), discord.VoiceChannel | discord.StageChannel
        ):
            return
        log.info("going back to the home voice channel in guild %s", guild_id)
        self.speakers.speaker(guild)
        self._want(guild_id, home)
        self._start_heal(guild_id)

    # ---- joining ---------------------------------------------------------------------------
    async def ensure_connected(self, channel: VoiceChannel) -> discord.VoiceClient:
        """Connect to `channel`, or move there if the bot is idle elsewhere in the server."""
        async with self._lock(channel.guild.id):  # two /say at once: one connect
            return await self._connect(channel)

    async def _connect(self, channel: VoiceChannel) -> discord.VoiceClient:
        guild = channel.guild
        voice_client = guild.voice_client
        if isinstance(voice_client, discord.VoiceClient) and self._link_works(guild):
            if voice_client.channel == channel:
                return voice_client
            current = voice_client.channel
            if humans_in(current):
                raise UserError(
                    tr(
                        "I'm already speaking in {channel} for other members. Join that channel, "
                        "or "
                        "try again when they are done.",
                        channel=current.mention,
                    )
                )
            check_permissions(channel)
            speaker = self.speakers.get(guild.id)
            if speaker is not None:
                speaker.clear()
            await voice_client.move_to(channel)
            self._want(guild.id, channel.id)
            return voice_client
        check_permissions(channel)
        speaker = self.speakers.speaker(guild)
        speaker.last_active = time.monotonic()  # idle time starts now
        voice_client = await self._replace_link(channel)
        self._want(guild.id, channel.id)
        return voice_client

    async def _replace_link(self, channel: VoiceChannel) -> discord.VoiceClient:
        """A new link in place of whatever the server has (a half-open connection, one of an
        old session, or none); speech that was playing plays on over the new one."""
        speaker = self.speakers.speaker(channel.guild)
        speaker.link.unlink()
        await self._drop_link(channel.guild)
        voice_client = await self._join(channel)
        self._broken_since.pop(channel.guild.id, None)
        speaker.link.relink()
        return voice_client

    async def _join(self, channel: VoiceChannel) -> discord.VoiceClient:
        guild = channel.guild
        failure: BaseException | None = None
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            try:
                async with asyncio.timeout(CONNECT_ATTEMPT_S):
                    link = await channel.connect(
                        self_deaf=True, timeout=CONNECT_TIMEOUT_S, cls=VoiceLink
                    )
                self._links[guild.id] = link
                if isinstance(channel, discord.StageChannel):
                    await take_the_stage(channel)
                return link
            except (TimeoutError, discord.ClientException) as error:
                log.warning(
                    "could not join %s (attempt %d of %d): %s",
                    channel.id,
                    attempt,
                    CONNECT_ATTEMPTS,
                    error or type(error).__name__,
                )
                failure = error
            await self._drop_link(guild)  # the abandoned attempt's half-open connection
        raise UserError(
            tr("I could not join {channel} just now. Please try again.", channel=channel.mention)
        ) from failure

    async def _drop_link(self, guild: discord.Guild) -> None:
        """End the server's link, whatever state it is in: the one discord.py names (telling
        Discord), and an older one of ours it no longer names (here only)."""
        ours = self._links.pop(guild.id, None)
        current = guild.voice_client
        if isinstance(ours, VoiceLink) and ours is not current:
            await ours.abandon()
        if current is not None:
            with contextlib.suppress(TimeoutError):
                await leave_voice(current)

    # ---- leaving ---------------------------------------------------------------------------
    async def leave(self, guild: discord.Guild) -> None:
        """Leave voice in the server, meaning it (no healing)."""
        self._want(guild.id, None)
        self._cancel_heal(guild.id)
        with contextlib.suppress(TimeoutError):  # each step has its bound: this is the last
            async with asyncio.timeout(2 * LEAVE_TIMEOUT_S):
                await self._drop_link(guild)

    def forget(self, guild_id: int) -> None:
        self._home.pop(guild_id, None)
        self._want(guild_id, None)
        self._cancel_heal(guild_id)
        self._links.pop(guild_id, None)

    async def on_own_voice_state(self, guild: discord.Guild) -> bool:
        """The bot's voice state in the server says it left a channel: kicked, or part of a
        reconnect (discord.py's or ours). Returns True when it was kicked: the queue goes."""
        link = self._links.get(guild.id)
        if isinstance(link, VoiceLink) and link.removed:
            self._want(guild.id, None)
            return True
        await asyncio.sleep(RECONNECT_SETTLE_S)
        if guild.id in self._healing or guild.voice_client is not None:
            return False
        self._want(guild.id, None)
        return True

    # ---- healing ---------------------------------------------------------------------------
    async def watch(self) -> None:
        """The watchdog: every `WATCH_PERIOD_S`, heal the links that do not carry speech."""
        while True:
            await asyncio.sleep(WATCH_PERIOD_S)
            now = time.monotonic()
            for guild_id in list(self._home):
                self._keep_home(guild_id, now)
            for guild_id in list(self._wanted):
                link = self._links.get(guild_id)
                if isinstance(link, VoiceLink):
                    link.reap()
                self._follow_move(guild_id)
                if self._needs_healing(guild_id, now):
                    self._start_heal(guild_id)

    def _follow_move(self, guild_id: int) -> None:
        """The bot's voice state names another channel than the one it means to be in: it
        was moved (a moderator, or Discord), so that channel is the one to heal into."""
        lock = self._locks.get(guild_id)
        if lock is not None and lock.locked():  # our own join or move: not a move by others
            return
        guild = self._guild(guild_id)
        state = guild.me.voice if guild is not None and guild.me is not None else None
        channel = state.channel if state is not None else None
        if channel is None or channel.id == self._wanted.get(guild_id):
            return
        home = self._home.get(guild_id)
        if home is not None:
            log.info(
                "the bot was moved to channel %s in guild %s: going back to its home channel",
                channel.id,
                guild_id,
            )
            self._wanted[guild_id] = home
            if guild is not None and guild_id not in self._healing:
                self.speakers.speaker(guild)
                self._start_heal(guild_id)
            return
        log.info(
            "the bot was moved to channel %s in guild %s: staying there (heals go there)",
            channel.id,
            guild_id,
        )
        self._wanted[guild_id] = channel.id

    def _needs_healing(self, guild_id: int, now: float) -> bool:
        speaker = self.speakers.get(guild_id)
        guild = self._guild(guild_id)
        if speaker is None or guild is None or guild_id in self._healing:
            return False
        link = self._links.get(guild_id)
        at_home = self._at_home(guild_id)  # kept there, speech or not
        if isinstance(link, VoiceLink) and link.removed and not at_home:  # kicked: not ours
            return False
        silent = speaker.link.silent_for(now)
        if not (speaker.link.wants_audio or at_home) or self._link_works(guild):
            self._broken_since.pop(guild_id, None)
            if silent == 0.0 or speaker.link.detached:
                speaker.link.works()
        else:
            self._broken_since.setdefault(guild_id, now)
        broken = now - self._broken_since.get(guild_id, now)
        due = now >= self._next_heal.get(guild_id, 0.0)
        return due and (silent >= HEAL_AFTER_S or broken >= HEAL_AFTER_S)

    def _link_works(self, guild: discord.Guild) -> bool:
        """The link discord.py names is ours, connected, and its voice websocket open."""
        current = guild.voice_client
        ours = self._links.get(guild.id)
        if isinstance(current, VoiceLink) and not current.carrying:
            return False
        return (
            isinstance(current, discord.VoiceClient)
            and current.is_connected()
            and (ours is None or ours is current)
        )

    def _start_heal(self, guild_id: int) -> None:
        task = asyncio.create_task(self._heal(guild_id), name=f"heal-voice-{guild_id}")
        self._healing[guild_id] = task

        def done(_: asyncio.Task[None]) -> None:  # a later heal's entry is not this one's
            if self._healing.get(guild_id) is task:
                del self._healing[guild_id]

        task.add_done_callback(done)

    def _cancel_heal(self, guild_id: int) -> None:
        task = self._healing.pop(guild_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    async def _heal(self, guild_id: int) -> None:
        guild, channel_id = self._guild(guild_id), self._wanted.get(guild_id)
        speaker = self.speakers.get(guild_id)
        if guild is None or channel_id is None or speaker is None:
            return
        channel = guild.get_channel(channel_id)
        if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
            log.info("the voice channel of guild %s is gone: not healing", guild_id)
            self._want(guild_id, None)
            speaker.clear()
            return
        started = time.monotonic()
        try:
            async with self._lock(guild_id):
                missing = missing_permissions(channel)
                if missing:
                    await self._give_up(guild, channel, missing)
                    return
                log.warning(
                    "the voice link in guild %s carries no speech: joining afresh", guild_id
                )
                await self._replace_link(channel)
        except Exception as error:  # a heal is retried after the backoff, whatever failed
            log.warning("could not heal the voice link in guild %s: %r", guild_id, error)
            self._next_heal[guild_id] = time.monotonic() + HEAL_BACKOFF_S
            return
        self.heals += 1
        log.info(
            "healed the voice link in guild %s in %.1f s", guild_id, time.monotonic() - started
        )

    async def _give_up(
        self, guild: discord.Guild, channel: VoiceChannel, missing: list[str]
    ) -> None:
        """No heal without the permissions: leave, and drop the speech that waited for it (a
        home channel is tried again after HOME_RETRY_S)."""
        self._next_heal[guild.id] = time.monotonic() + HOME_RETRY_S
        log.warning(
            "not healing the voice link in guild %s: the bot lacks %s in channel %s; it left "
            "voice there and dropped the queued speech",
            guild.id,
            " and ".join(missing),
            channel.id,
        )
        self._want(guild.id, None)
        speaker = self.speakers.get(guild.id)
        if speaker is not None:
            speaker.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2 * LEAVE_TIMEOUT_S):
                await self._drop_link(guild)

    async def close(self) -> None:
        for task in list(self._healing.values()):
            task.cancel()
        self._wanted.clear()


async def take_the_stage(channel: discord.StageChannel) -> None:
    """On a stage the bot joins the audience, where nobody hears it. A stage moderator (Mute
    Members there) may speak at once; otherwise it asks to, and a moderator lets it."""
    me = channel.guild.me
    try:
        async with asyncio.timeout(STAGE_REQUEST_S):
            if channel.permissions_for(me).mute_members:
                await me.edit(suppress=False)
                log.info("speaking on stage %s", channel.id)
            else:
                await me.request_to_speak()
                log.info("asked to speak on stage %s: a stage moderator must accept", channel.id)
    except (TimeoutError, discord.HTTPException, discord.ClientException) as error:
        log.warning("could not take the stage %s: %s", channel.id, error)


def missing_permissions(channel: VoiceChannel) -> list[str]:
    """Which of Connect and Speak the bot lacks in `channel` (as the member's words)."""
    permissions = channel.permissions_for(channel.guild.me)
    return [
        name
        for name, allowed in (
            (tr("Connect"), permissions.connect),
            (tr("Speak"), permissions.speak),
        )
        if not allowed
    ]


def check_permissions(channel: VoiceChannel) -> None:
    permissions = channel.permissions_for(channel.guild.me)
    missing = missing_permissions(channel)
    if missing:
        raise UserError(
            tr(
                "I don't have the {names} permission in {channel}. Please ask a server admin to "
                "grant it.",
                names=tr("{a} and {b}", a=missing[0], b=missing[1])
                if len(missing) == 2
                else missing[0],
                channel=channel.mention,
            )
        )
    full = channel.user_limit and len(channel.members) >= channel.user_limit
    if full and not permissions.move_members:
        raise UserError(tr("{channel} is full.", channel=channel.mention))
