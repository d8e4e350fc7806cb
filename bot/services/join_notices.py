"""Spoken join and leave notices: "Alice joined" and "Alice left" in the bot's voice channel.

With the server setting `join_leave` on, a member coming into or going out of the channel the
bot is in is announced in the bot's voice (the server's default voice), in the server's
language, under the name they are read by (their /set nick, else their server name). Never
the bot itself, other bots, members who opted out of being read, members blocked by the
server's moderators, with its ignored role or without its required role, nor (with
`audience_ignore`) a member joining a stage's audience; a member who flaps in and out is
announced at most once a minute. A notice waits its turn in the server's queue like a
message, and is dropped rather than pushing a message out when the queue is full.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import cachetools
import discord

from bot.playback.connection import VoiceChannel
from bot.playback.speakers import QueueFullError, Speakers
from bot.services.message_reading import in_stage_audience
from bot.services.speech import humans_in
from bot.services.speech_plan import SpeechPlanner, VoiceFrom
from bot.services.wording import Wording
from bot.storage.database import Database
from bot.text.words import presence_phrase

log = logging.getLogger(__name__)

NOTICE_QUIET_S = 60.0  # a member is announced at most once in this long, per server
MAX_TRACKED = 10_000  # (server, member) pairs remembered at once
NOTICE_STALE_S = 15.0  # a notice that waited this long for its language's model is dropped


class JoinNotices:
    def __init__(
        self,
        db: Database,
        planner: SpeechPlanner,
        wording: Wording,
        speakers: Speakers,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.db = db
        self.planner = planner
        self.wording = wording
        self.speakers = speakers
        self.clock = clock
        # (server, member) -> when they were last announced, while it matters
        self._announced: cachetools.TTLCache[tuple[int, int], float] = cachetools.TTLCache(
            maxsize=MAX_TRACKED, ttl=NOTICE_QUIET_S, timer=self._now
        )

    def _now(self) -> float:
        return self.clock()  # (read at each call: a test may swap the clock)

    async def on_voice_state(
        self, member: discord.Member, before: VoiceChannel | None, after: VoiceChannel | None
    ) -> str:
        """Announce a member moving into or out of the bot's channel if the rules say so;
        returns 'joined', 'left' or why not (for the log: never a name)."""
        guild = member.guild
        if member == guild.me:
            return "the bot itself"
        if member.bot:
            return "a bot"
        voice_client = guild.voice_client
        channel = getattr(voice_client, "channel", None)
        if channel is None:
            return "not in voice"
        joined = after == channel and before != channel
        if not joined and not (before == channel and after != channel):
            return "not the bot's channel"
        if not joined and not humans_in(channel):
            return "nobody left to tell"
        settings = await self.db.guilds.get(guild.id)
        if not settings.join_leave:
            return "notices off"
        if settings.ignored_role and any(r.id == settings.ignored_role for r in member.roles):
            return "has the ignored role"
        if settings.required_role and not any(r.id == settings.required_role for r in member.roles):
            return "missing the required role"  # (as their messages: not read, not named)
        if settings.audience_ignore and in_stage_audience(member):
            return "in the stage audience"
        key = (guild.id, member.id)
        if key in self._announced:
            return "announced lately"
        self._announced[key] = self.clock()  # before any wait: a second event finds it
        spoken = await self.planner.resolve(member.id, guild.id, server=settings)
        if spoken.member.blocked:
            self._announced.pop(key, None)
            return "blocked by a moderator"  # (their /set nick is theirs to choose)
        if not spoken.member.autoread:
            self._announced.pop(key, None)
            return "member opted out"
        started = self.clock()
        # the bot speaks to the channel: the server's language (not the member's own; its
        # model, else the default one) and its built-in voice
        planner = self.planner
        plan = await planner.plan(planner.for_server(settings), voice=VoiceFrom.SERVER)
        if self.clock() - started > NOTICE_STALE_S:
            return "too late"
        options = await self.wording.options(guild.id, settings, plan.language)
        name = spoken.member.nick or member.display_name
        text = presence_phrase(name, options, joined=joined)
        utterance = self.planner.utterance(plan, text, phrase=True)
        speaker = self.speakers.speaker(guild)
        speaker.max_queue = settings.queue_limit
        await speaker.load_phrase(utterance)
        if guild.voice_client is None:
            return "not in voice"  # it left meanwhile
        try:
            speaker.enqueue(utterance)
        except QueueFullError:
            return "queue full"  # a notice never pushes a message out
        return "joined" if joined else "left"

    def forget_guild(self, guild_id: int) -> None:
        """The bot left a server: drop what it remembered there."""
        for key in [k for k in self._announced if k[0] == guild_id]:
            self._announced.pop(key, None)
