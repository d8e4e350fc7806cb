"""Reading chat aloud: which messages are read, in whose voice, and how they are announced.

`AutoReader.handle()` takes a message from a read channel (or the chat of the bot's voice
channel), applies the server's rules, turns it into words with `bot.text`, and queues it in
the author's voice. Edits and deletions of messages still waiting are honoured.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace

import cachetools
import discord

from bot.core.errors import UserError
from bot.i18n.translate import language_name, localize, tr
from bot.playback.connection import VoiceChannel, VoiceConnections
from bot.playback.speakers import Speakers
from bot.playback.utterance import Utterance
from bot.services.message_reading import (
    Author,
    MessageWords,
    ReadRates,
    Verdict,
    author_of,
    in_forum,
    in_private_thread,
    is_poll_result,
    limits_of,
    nothing_written,
    others_words,
    posted_of,
    thread_of,
    verdict,
    written,
)
from bot.services.speech_plan import HowSpoken, SpeechPlan, SpeechPlanner, VoiceFrom
from bot.services.wording import Wording
from bot.storage.database import Database, MemberSettings
from bot.storage.server_settings import ServerSettings
from bot.text.words import (
    plays_sounds,
)

log = logging.getLogger(__name__)

XSAID_QUIET_S = 60.0  # no "NAME said" again for the same author within this, in a row
MAX_TRACKED = 10_000  # servers remembered at once


@dataclass(eq=False)
class _Reading:
    """A queued message's words with its author's name and without. Which is said is decided
    when its turn comes (`Utterance.on_start`), from who was heard last: a message deleted
    before it played does not silence the next one's name."""

    reader: AutoReader
    guild_id: int
    author_id: Author
    named: tuple[str, str]  # (text, lead)
    unnamed: tuple[str, str]
    cloned: bool  # its voice is the author's own: named under a name they cannot choose
    language: str  # what its words were made for (an edit's are too)
    announced: bool | None = None  # None: not started yet
    # it plays a dictionary sound: an admin's clip, which may be a recording of anyone's
    # voice, is always preceded by who sent the message, whatever `xsaid` says
    sound: bool = False

    def words(self) -> tuple[str, str]:
        return self.unnamed if self.announced is False else self.named

    def __call__(self, utterance: Utterance) -> None:
        if self.announced is None:
            reader = self.reader
            same = reader._same_author_lately(self.guild_id, self.author_id)
            # A cloned voice may go unnamed only after its author was named by username: a
            # nickname heard before (a built-in voice) would let the clone speak under it.
            heard_attested = same and reader._last_author[self.guild_id][2]
            self.announced = not same or (self.cloned and not heard_attested) or self.sound
            attested = self.cloned if self.announced else heard_attested
            reader._last_author[self.guild_id] = (self.author_id, reader.clock(), attested)
        utterance.text, utterance.lead = self.words()


# the author key a poll result is read under: its words are Discord's, not its author's, so it
# never counts as their speech for "NAME said" (a webhook's key is a tuple with its own id)
POLL_RESULT_SPEAKER: Author = (0, "a poll result")


class AutoReader:
    def __init__(
        self,
        db: Database,
        planner: SpeechPlanner,
        speakers: Speakers,
        wording: Wording,
        connections: VoiceConnections,
        *,
        clock: Callable[[], float] = time.monotonic,
        language: str = "english",
    ) -> None:
        """`planner`: each message's plan (and whom moderators stopped meanwhile);
        `speakers`: the servers' queues; `wording`: sounds and names; `connections`: the
        voice links."""
        self.words = MessageWords(db, wording, language)
        self.db = db
        self.plans = planner  # how each message is spoken: its language, model and voice
        self.speakers = speakers
        self.wording = wording
        self.connections = connections
        self.clock = clock
        self._last_author: cachetools.TTLCache[int, tuple[Author, float, bool]] = (
            cachetools.TTLCache(maxsize=MAX_TRACKED, ttl=XSAID_QUIET_S, timer=clock)
        )  # guild -> (author, when, named by username): who spoke last, while it matters
        self.rates = ReadRates(clock)
        self._loading_told: set[tuple[int, str]] = set()  # (server, language) being loaded
        # the readings still queued or playing, by message: an edit re-words its own
        self._readings: weakref.WeakValueDictionary[int, _Reading] = weakref.WeakValueDictionary()

    # ---- deciding --------------------------------------------------------------------------
    async def handle(self, message: discord.Message) -> Verdict:
        """Read the message if the rules say so: `Verdict.READ`, or why it was not. In stages:
        whose and where it is, the server's rules, the voice channel, then its plan and words."""
        arrived = self.clock()
        epoch = self.plans.block_epoch  # a block from now on drops it still
        if (skip := self._whose(message)) is not None:
            return skip
        guild = message.guild
        assert guild is not None
        settings = await self.db.guilds.get(guild.id)
        bot_channel: VoiceChannel | None = getattr(guild.voice_client, "channel", None)
        where = await self._where(message, settings, bot_channel)
        if isinstance(where, Verdict):
            return where
        posted = posted_of(message)
        if (rules := verdict(posted, settings)) is not Verdict.READ:
            return rules  # (before the member's settings are read: a skip costs no query)
        spoken = await self.plans.resolve(message.author.id, guild.id, server=settings)
        member = spoken.member  # a block is silent here: they are told when they use a command
        posted = replace(posted, blocked=member.blocked, opted_out=not member.autoread)
        if (rules := verdict(posted, settings)) is not Verdict.READ:
            return rules
        if (skip := await self._in_voice(message, settings, where, bot_channel)) is not None:
            return skip
        if nothing_written(message):
            return Verdict.NOTHING_TO_SAY  # (before the rate limit: an empty one costs nothing)
        if self.rates.limited(guild.id, limits_of(message, settings.rate_limit), arrived):
            return Verdict.RATE_LIMITED  # before any rendering: a flood costs one check each
        return await self._read(message, settings, spoken, arrived, epoch)

    @staticmethod
    def _whose(message: discord.Message) -> Verdict | None:
        """A message auto-reading never reads, whatever the server's settings."""
        guild = message.guild
        if guild is None:
            return Verdict.NOT_IN_A_SERVER
        webhook = message.webhook_id is not None  # its author is the webhook: no member
        if not (webhook or isinstance(message.author, discord.Member)):
            return Verdict.NOT_A_MEMBER
        if guild.me is not None and message.author.id == guild.me.id:
            return Verdict.OWN_MESSAGE
        if in_private_thread(message):  # before anything is read (`verdict` says it too)
            return Verdict.PRIVATE_THREAD
        return None

    async def _where(
        self, message: discord.Message, settings: ServerSettings, bot_channel: VoiceChannel | None
    ) -> int | Verdict | None:
        """Whether the message is in a channel read here (a read channel, a thread of one, or
        the bot's voice channel's chat): the read channel's own voice channel (None: where
        its author is), else why not."""
        assert message.guild is not None
        in_voice_chat = (
            settings.text_in_voice
            and bot_channel is not None
            and (bot_channel.id == message.channel.id)
        )
        reads = {c.channel_id: c for c in await self.db.read_channels.list(message.guild.id)}
        read_channel = reads.get(message.channel.id)
        if not (read_channel or in_voice_chat):
            thread = thread_of(message)
            if thread is None or thread.parent_id not in reads:
                return Verdict.NOT_A_READ_CHANNEL
            if not (settings.read_threads or in_forum(thread)):
                return Verdict.THREADS_NOT_READ
            read_channel = reads[thread.parent_id]
        return read_channel.voice_channel_id if read_channel is not None else None

    async def _in_voice(
        self,
        message: discord.Message,
        settings: ServerSettings,
        own_voice: int | None,
        bot_channel: VoiceChannel | None,
    ) -> Verdict | None:
        """The bot in the voice channel the message is read in: joined now if it is in none
        (or idle elsewhere) and may come, else why it is not read."""
        guild = message.guild
        assert guild is not None
        webhook = message.webhook_id is not None
        author_voice = getattr(message.author, "voice", None)  # (a webhook is never in voice)
        author_channel = author_voice.channel if author_voice is not None else None
        result = is_poll_result(message)  # a poll's end: read only where the bot already is
        elsewhere = (
            own_voice is not None and bot_channel is not None and (bot_channel.id != own_voice)
        )
        if bot_channel is None or elsewhere:
            if result:
                return Verdict.NOT_IN_VOICE if bot_channel is None else Verdict.READ_ELSEWHERE
            target = self._voice_to_join(guild, settings, own_voice, author_channel, webhook)
            if isinstance(target, Verdict):
                return target if bot_channel is None else Verdict.READ_ELSEWHERE
            try:  # (from elsewhere: only if nobody listens there)
                await self.connections.ensure_connected(target)
            except UserError as error:
                log.info("a message's voice channel could not be joined: %s", error)
                return Verdict.CANNOT_JOIN
        elif (
            settings.require_voice and not webhook and not result and author_channel != bot_channel
        ):
            # a webhook is never in voice: with bot_ignore off it is read where the bot is
            return Verdict.AUTHOR_NOT_WITH_BOT
        return None

    async def _read(
        self,
        message: discord.Message,
        settings: ServerSettings,
        spoken: HowSpoken,
        arrived: float,
        epoch: int,
    ) -> Verdict:
        """The message planned (its language, model and voice), worded and queued."""
        guild = message.guild
        assert guild is not None
        # a poll's result is Discord's words, a forward another message's: not its author's,
        # the built-in voice says them
        voice = VoiceFrom.SERVER if others_words(message) else VoiceFrom.MEMBER
        language = await self.plans.chat_language(spoken, written(message), author_of(message))
        plan = await self._planned(message, spoken, language, voice)
        if plan.cloned:  # a cloned voice is always attributed
            log.info(
                "cloned voice %s used for auto-reading by user %s in server %s",
                plan.cloned_id,
                message.author.id,
                guild.id,
            )
        reading = await self._reading(
            message, settings, plan.language, cloned=plan.cloned, author=spoken.member
        )
        text, lead = reading.words()
        if not text:
            return Verdict.NOTHING_TO_SAY
        sounds = await self.wording.sounds_in(guild.id, reading.named[0], reading.unnamed[0])
        # made with the voice connection (`VoiceConnections`): none now, the bot left meanwhile
        speaker = self.speakers.get(guild.id)
        if speaker is None:
            return Verdict.NOT_IN_VOICE
        speaker.max_queue = settings.queue_limit
        utterance = self.plans.utterance(
            plan,
            text,
            asked_at=arrived,
            lead=lead,
            author_id=message.author.id,
            message_id=message.id,
            on_start=reading,
            sounds=sounds,
        )
        if self.plans.blocked_since(guild.id, message.author.id, epoch):
            return Verdict.BLOCKED  # while it waited (a voice connect, a model)
        speaker.enqueue(utterance, drop_oldest=True)
        self._readings[message.id] = reading
        return Verdict.READ

    @staticmethod
    def _voice_to_join(
        guild: discord.Guild,
        settings: ServerSettings,
        own_voice: int | None,
        author_channel: VoiceChannel | None,
        webhook: bool,
    ) -> VoiceChannel | Verdict:
        """Where a message brings the bot when it is in no voice channel, or why nowhere. A
        member summons it (autojoin): to the read channel's own voice channel if it has one
        and they are in it, else to theirs. A webhook cannot summon: its message is read in
        the read channel's own voice channel, else in the server's home voice channel."""
        if webhook:
            wanted = own_voice if own_voice is not None else settings.home_voice
            if wanted is not None and (own_voice is None or settings.autojoin):
                channel = guild.get_channel(wanted)
                if isinstance(channel, discord.VoiceChannel | discord.StageChannel):
                    return channel
            return Verdict.NOT_IN_VOICE
        if not settings.autojoin or author_channel is None:
            return Verdict.NOT_IN_VOICE
        if own_voice is not None and author_channel.id != own_voice:
            return Verdict.AUTHOR_NOT_IN_READ_VOICE
        return author_channel

    async def _planned(
        self, message: discord.Message, spoken: HowSpoken, language: str, voice: VoiceFrom
    ) -> SpeechPlan:
        """The message's plan (`SpeechPlanner.plan`). While its language's model loads, the
        channel is told once, so that the wait is not a silence nobody understands (never
        pinging); when it cannot load, the channel is told once that the default language
        speaks instead."""
        guild = message.guild
        assert guild is not None
        plans, key = self.plans, (guild.id, language)
        telling = (
            plans.needs_loading(language)
            and not plans.fallback.failed_lately(language)
            and key not in self._loading_told
        )
        if telling:
            self._loading_told.add(key)
            notice = tr(
                "Loading {language}… I'll read the messages as soon as it is ready.",
                language=language_name(language),
            )
            try:
                await message.channel.send(
                    localize(notice, guild.preferred_locale),
                    allowed_mentions=discord.AllowedMentions.none(),
                )
            except discord.HTTPException as error:
                log.info("could not post the loading notice in %s: %s", message.channel.id, error)
        try:
            plan = await plans.plan(spoken, language, voice=voice)
        finally:
            if telling:
                self._loading_told.discard(key)
        if plan.wanted is not None:
            await plans.fallback.tell(message.channel, guild, plan.wanted, plan.language)
        return plan

    def forget_guild(self, guild_id: int) -> None:
        """The bot left a server: drop what it remembered there."""
        self._last_author.pop(guild_id, None)
        self.rates.forget_guild(guild_id)

    # ---- its words --------------------------------------------------------------------------
    async def _reading(
        self,
        message: discord.Message,
        settings: ServerSettings,
        language: str,
        *,
        cloned: bool,
        author: MemberSettings,
    ) -> _Reading:
        """The message's words, named and not (with xsaid off, only a cloned voice names)."""
        assert message.guild is not None
        speaker = POLL_RESULT_SPEAKER if is_poll_result(message) else author_of(message)
        named, unnamed = await self.words.render_both(
            message, settings, language, attested=cloned, author=author, sounds=True
        )
        sound = plays_sounds(unnamed[0])
        if not (settings.xsaid or cloned or sound):
            named = unnamed
        return _Reading(
            self, message.guild.id, speaker, named, unnamed, cloned, language, sound=sound
        )

    def _same_author_lately(self, guild_id: int, author_id: Author) -> bool:
        last = self._last_author.get(guild_id)
        return (
            last is not None and last[0] == author_id and (self.clock() - last[1] < XSAID_QUIET_S)
        )

    # ---- edits and deletions ---------------------------------------------------------------
    async def edited(self, message: discord.Message) -> None:
        """A message was edited: a waiting reading of it is re-worded (or dropped). Only a
        reading still waiting is rendered again, under the author's rate limit: past it the
        reading is dropped rather than said in words they have taken back."""
        reading = self._readings.get(message.id)
        if message.guild is None or reading is None:
            return
        speaker = self.speakers.get(message.guild.id)
        if speaker is None:
            return
        settings = await self.db.guilds.get(message.guild.id)
        skip = verdict(posted_of(message), settings) is not Verdict.READ  # (its new words)
        if skip or self.rates.limited(
            message.guild.id, limits_of(message, settings.rate_limit), edit=True
        ):
            speaker.drop(message.id)
            return
        spoken = await self.plans.resolve(message.author.id, message.guild.id, server=settings)
        # the model it was queued for (its detected language too), or the default's if that
        # model went meanwhile
        language = self.plans.still_speaks(reading.language)
        edited = await self._reading(
            message, settings, language, cloned=reading.cloned, author=spoken.member
        )
        reading.named, reading.unnamed = edited.named, edited.unnamed
        reading.sound = edited.sound
        text = reading.words()[0]
        if not text:
            speaker.drop(message.id)
        else:
            speaker.replace_text(message.id, text)

    def deleted(self, guild_id: int | None, message_ids: set[int]) -> int:
        """Messages were deleted: their waiting readings are dropped; returns how many."""
        speaker = self.speakers.get(guild_id) if guild_id is not None else None
        if speaker is None:
            return 0
        return sum(speaker.drop(message_id) for message_id in message_ids)
