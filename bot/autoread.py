"""Reading chat aloud: which messages are read, in whose voice, and how they are announced.

`AutoReader.handle()` takes a message from the read channel (or the chat of the bot's voice
channel), applies the server's rules, turns it into words with `bot.text`, and queues it in
the author's voice. Edits and deletions of messages still waiting are honoured.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable

import cachetools
import discord

from bot.db import Database
from bot.playback import SpeechScheduler, Utterance
from bot.replies import UserError, language_name, localize, tr
from bot.server_settings import ServerSettings
from bot.speech import SpeechService
from bot.text import MessageFacts, Names, ReadOptions, announce, lead_phrase

log = logging.getLogger(__name__)

XSAID_QUIET_S = 60.0  # no "NAME said" again for the same author within this, in a row
RATE_WINDOW_S = 10.0
MAX_TRACKED = 10_000  # servers or (server, member) pairs remembered at once
READ_TYPES = (discord.MessageType.default, discord.MessageType.reply)


class AutoReader:
    def __init__(
        self,
        db: Database,
        speech: SpeechService,
        clock: Callable[[], float] = time.monotonic,
        language: str = "english",
    ) -> None:
        self.language = language  # of what the bot adds: "NAME said", "a link to", ...
        self.db = db
        self.speech = speech
        self.clock = clock
        self._last_author: cachetools.TTLCache[int, tuple[int, float]] = cachetools.TTLCache(
            maxsize=MAX_TRACKED, ttl=XSAID_QUIET_S, timer=clock
        )  # guild -> (author, when): who spoke last, while it matters
        # recent reads per (server, member) for the rate limit; entries older than the window
        # are useless, so the table is bounded by what happened in the last RATE_WINDOW_S
        self._recent: cachetools.TTLCache[tuple[int, int], collections.deque[float]] = (
            cachetools.TTLCache(maxsize=MAX_TRACKED, ttl=RATE_WINDOW_S, timer=clock)
        )
        self.outcomes: collections.deque[tuple[int, str]] = collections.deque(maxlen=200)
        self._loading_told: set[tuple[int, str]] = set()  # (server, language) being loaded

    @property
    def scheduler(self) -> SpeechScheduler:
        return self.speech.scheduler

    # ---- deciding --------------------------------------------------------------------------
    async def handle(self, message: discord.Message) -> str:
        """Read the message if the rules say so; returns 'read' or why it was not."""
        outcome = await self._handle(message)
        self.outcomes.append((message.id, outcome))  # recent decisions, for logs and tests
        return outcome

    async def _handle(self, message: discord.Message) -> str:
        arrived = self.clock()
        guild = message.guild
        if guild is None or not isinstance(message.author, discord.Member):
            return "not in a server"
        if message.author == guild.me:
            return "own message"
        settings = await self.db.guilds.get(guild.id)
        voice_client = guild.voice_client
        bot_channel = voice_client.channel if voice_client is not None else None
        in_read_channel = settings.read_channel == message.channel.id
        in_voice_chat = (
            settings.text_in_voice
            and bot_channel is not None
            and (bot_channel.id == message.channel.id)
        )
        if not (in_read_channel or in_voice_chat):
            return "not a read channel"
        skip = await self._skip_reason(message, message.author, settings)
        if skip:
            return skip
        author_channel = message.author.voice.channel if message.author.voice else None
        if bot_channel is None:
            if not settings.autojoin or author_channel is None:
                return "not in voice"
            try:
                await self.speech.ensure_connected(author_channel)
            except UserError as error:
                return f"cannot join: {error}"
        elif settings.require_voice and (author_channel is None or author_channel != bot_channel):
            return "author not in the bot's voice channel"
        language = await self.speech.language_of(message.author.id, guild.id)
        voice = await self.speech.voice_of(message.author.id, guild.id, language)
        cloned = await self._cloned(voice)
        say_name = None  # the server's xsaid setting decides
        if cloned is not None:  # a cloned voice is always attributed
            say_name = not self._same_author_lately(guild.id, message)
            log.info(
                "cloned voice %s used for auto-reading by user %s in server %s",
                cloned, message.author.id, guild.id,
            )  # fmt: skip
        text, lead = await self.render_with_lead(
            message, settings, say_name=say_name, language=language
        )
        if not text:
            return "nothing to say"
        if self._rate_limited(guild.id, message.author.id, settings.rate_limit, arrived):
            return "rate limited"
        if self.speech.needs_loading(language):  # the first message in a language loads it
            await self._wait_for_model(message, language)
        speaker = self.scheduler.speaker(guild)
        speaker.max_queue = settings.queue_limit
        model = self.speech.model_language(language)
        utterance = Utterance(text, voice, arrived, message.id, lead, language=model)
        speaker.enqueue(utterance, drop_oldest=True)
        self._last_author[guild.id] = (message.author.id, arrived)
        return "read"

    async def _wait_for_model(self, message: discord.Message, language: str) -> None:
        """Load the language's model; say so once in the channel, so that the wait is not a
        silence nobody understands (never pinging)."""
        assert message.guild is not None
        key = (message.guild.id, language)
        if key not in self._loading_told:
            self._loading_told.add(key)
            notice = tr(
                "Loading {language}… I'll read the messages as soon as it is ready.",
                language=language_name(language),
            )
            try:
                await message.channel.send(
                    localize(notice, message.guild.preferred_locale),
                    allowed_mentions=discord.AllowedMentions.none(),
                )
            except discord.HTTPException as error:
                log.info("could not post the loading notice in %s: %s", message.channel.id, error)
        try:
            await self.speech.model_ready(language)
        finally:
            self._loading_told.discard(key)

    async def _skip_reason(
        self, message: discord.Message, author: discord.Member, settings: ServerSettings
    ) -> str | None:
        if settings.bot_ignore and (author.bot or message.webhook_id is not None):
            return "from a bot"
        if message.type not in READ_TYPES:
            return "system message"
        if settings.skip_prefix and message.content.startswith(settings.skip_prefix):
            return "skip prefix"
        if settings.required_role and not any(r.id == settings.required_role for r in author.roles):
            return "missing the required role"
        if not (await self.db.members.get(author.id, author.guild.id)).autoread:
            return "member opted out"
        return None

    def _rate_limited(self, guild_id: int, user_id: int, limit: int, now: float) -> bool:
        recent = self._recent.get((guild_id, user_id)) or collections.deque()
        while recent and now - recent[0] > RATE_WINDOW_S:
            recent.popleft()
        if len(recent) >= limit:
            return True
        recent.append(now)
        self._recent[(guild_id, user_id)] = recent  # (re)starts its time to live
        return False

    def forget_guild(self, guild_id: int) -> None:
        """The bot left a server: drop what it remembered there."""
        self._last_author.pop(guild_id, None)
        for key in [k for k in self._recent if k[0] == guild_id]:
            self._recent.pop(key, None)

    # ---- wording ---------------------------------------------------------------------------
    async def render(
        self, message: discord.Message, settings: ServerSettings, *, say_name: bool | None = None,
        language: str | None = None,
    ) -> str:  # fmt: skip
        """The words for a message under the server's settings ('' when none)."""
        return (
            await self.render_with_lead(message, settings, say_name=say_name, language=language)
        )[0]

    async def render_with_lead(
        self, message: discord.Message, settings: ServerSettings, *, say_name: bool | None = None,
        language: str | None = None,
    ) -> tuple[str, str]:  # fmt: skip
        """The words for a message, and the phrase they start with if any ("Alice said")."""
        guild = message.guild
        assert guild is not None
        if say_name is None:
            say_name = settings.xsaid and not self._same_author_lately(guild.id, message)
        names = await self._names(message, guild)
        options = ReadOptions(
            skip_emoji=settings.skip_emoji,
            repeated_characters=settings.repeated_characters,
            max_length=settings.max_length,
            dictionary=await self.db.dictionary.entries(guild.id),
            language=language or self.language,
        )
        snapshots = getattr(message, "message_snapshots", None) or []
        content = message.content or (snapshots[0].content if snapshots else "")
        attachments = list(message.attachments)
        if snapshots and not attachments:
            attachments = list(snapshots[0].attachments)
        facts = MessageFacts(
            content=content,
            author=names.users.get(message.author.id, message.author.display_name),
            attachment_types=tuple(a.content_type or "" for a in attachments),
            stickers=len(message.stickers),
            reply_to=self._reply_author(message, names),
            forwarded=bool(snapshots),
        )
        line = announce(facts, names, options, say_name=say_name)
        lead = lead_phrase(facts, options, say_name=say_name)
        return line, lead if lead and line.startswith(lead) else ""

    def _same_author_lately(self, guild_id: int, message: discord.Message) -> bool:
        last = self._last_author.get(guild_id)
        return (
            last is not None
            and last[0] == message.author.id
            and (self.clock() - last[1] < XSAID_QUIET_S)
        )

    @staticmethod
    def _reply_author(message: discord.Message, names: Names) -> str | None:
        if message.type != discord.MessageType.reply or message.reference is None:
            return None
        resolved = message.reference.resolved
        if isinstance(resolved, discord.Message):
            return names.users.get(resolved.author.id, resolved.author.display_name)
        return "a deleted message"

    async def _names(self, message: discord.Message, guild: discord.Guild) -> Names:
        people: dict[int, str] = {message.author.id: message.author.display_name}
        for user in message.mentions:
            people[user.id] = user.display_name
        reference = message.reference.resolved if message.reference else None
        if isinstance(reference, discord.Message):
            people.setdefault(reference.author.id, reference.author.display_name)
        people.update(await self.db.members.nicks(guild.id, list(people)))  # /set nick wins
        return Names(
            users=people,
            roles={role.id: role.name for role in guild.roles},
            channels={channel.id: channel.name for channel in guild.channels},
        )

    async def _cloned(self, voice: str | None) -> int | None:
        lookup = self.speech.cloned_voice_id
        return await lookup(voice) if lookup is not None else None

    async def speak_on_request(
        self, invoker: discord.Member | discord.User, message: discord.Message
    ) -> str:
        """'Speak this message': read it in its author's voice where the invoker is, under the
        same rules as auto-reading: the author's opt-out, `bot_ignore`, `required_role`."""
        if message.guild is None:
            raise UserError(tr("I can only speak messages from a server."))
        settings = await self.db.guilds.get(message.guild.id)
        author = message.author
        if settings.bot_ignore and (author.bot or message.webhook_id is not None):
            raise UserError(tr("This server does not have messages from bots read aloud."))
        if isinstance(author, discord.Member):
            if settings.required_role and not any(
                r.id == settings.required_role for r in author.roles
            ):
                raise UserError(
                    tr("Only messages of members with the server's reading role are read.")
                )
            if not (await self.db.members.get(author.id, message.guild.id)).autoread:
                raise UserError(tr("Its author has asked not to have their messages read aloud."))
        language = await self.speech.language_of(author.id, message.guild.id)
        text = await self.render(message, settings, say_name=True, language=language)
        if not text:
            raise UserError(tr("That message has nothing I can read aloud."))
        voice = await self.speech.voice_of(author.id, message.guild.id, language)
        channel = await self.speech.speak_in_callers_channel(
            invoker, text, voice, announced=True, language=language
        )
        return tr("Speaking that message in {channel}.", channel=channel.mention)

    # ---- edits and deletions ---------------------------------------------------------------
    async def edited(self, message: discord.Message) -> None:
        """A message was edited: a waiting reading of it is re-worded (or dropped)."""
        if message.guild is None:
            return
        speaker = self.scheduler.get(message.guild.id)
        if speaker is None:
            return
        settings = await self.db.guilds.get(message.guild.id)
        skip = settings.skip_prefix and message.content.startswith(settings.skip_prefix)
        language = await self.speech.language_of(message.author.id, message.guild.id)
        text = (
            ""
            if skip
            else await self.render(message, settings, say_name=settings.xsaid, language=language)
        )
        if not text:
            speaker.drop(message.id)
        else:
            speaker.replace_text(message.id, text)

    def deleted(self, guild_id: int | None, message_ids: set[int]) -> int:
        """Messages were deleted: their waiting readings are dropped; returns how many."""
        speaker = self.scheduler.get(guild_id) if guild_id is not None else None
        if speaker is None:
            return 0
        return sum(speaker.drop(message_id) for message_id in message_ids)
