"""What `/say` and `/tts` do, and speech asked for by the other services (a preview, a
sample, "Speak this message"), independent of the slash-command glue: checked, planned,
attributed when a cloned voice speaks, and queued where the member is (or made a file).

Each method either returns the reply for the member or raises `UserError` with a polite,
specific message. The voice channel's commands (/join, /leave, /skip, /stop, /clear) are in
voice_control.py.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time

import cachetools
import discord
import numpy as np

from bot.core.errors import UserError
from bot.i18n.translate import language_name, lines, tr
from bot.playback.connection import VoiceChannel, VoiceConnections, humans_in, leave_voice
from bot.playback.speakers import QueueFullError, Speakers
from bot.playback.utterance import Utterance
from bot.services.blocks import BlockService
from bot.services.message_reading import in_stage_audience
from bot.services.replies import Reply
from bot.services.speech_plan import HowSpoken, Readiness, SpeechPlan, SpeechPlanner
from bot.services.wording import Wording
from bot.storage.server_settings import ServerSettings
from bot.synthesis.audio_files import MODEL_RATE, encode_audio
from bot.synthesis.engine import UnusableVoiceError
from bot.synthesis.tempo import stretch
from bot.text.words import Pause, has_sounds, sound_parts

__all__ = ["SpeechService", "UserError", "humans_in", "leave_voice"]

log = logging.getLogger(__name__)

SPEECH_WINDOW_S = 10.0  # the server's rate_limit counts a member's /say and previews in this
MAX_SPEAKERS_TRACKED = 10_000  # (server, member) pairs remembered at once


def drop_waiting(speakers: Speakers, guild_id: int, user_id: int) -> int:
    """A member was blocked: what they have waiting to be said here (their messages, their
    /say) is dropped; how many."""
    speaker = speakers.get(guild_id)
    return 0 if speaker is None else speaker.drop_author(user_id)


def block_noted(speakers: Speakers, planner: SpeechPlanner, guild_id: int, user_id: int) -> None:
    """`BlockService`'s `on_block`: what the member has waiting is dropped, and what they
    asked for that is still being prepared (`SpeechPlanner.blocked_since`) is not spoken. It
    needs only the speakers and the planner, so the block service is built before the
    services that check it."""
    planner.noted_block(guild_id, user_id)
    drop_waiting(speakers, guild_id, user_id)


class SpeechService:
    def __init__(
        self,
        speakers: Speakers,
        connections: VoiceConnections,
        max_text_length: int,
        planner: SpeechPlanner,
        blocks: BlockService,
        wording: Wording,
    ) -> None:
        """`planner`: how members are spoken and their speech planned (the model, the voice);
        `wording`: how typed text becomes words, as chat's does (the dictionary, names)."""
        self.speakers = speakers
        self.blocks = blocks  # members a server's moderators stopped the bot speaking for
        self.connections = connections
        self.planner = planner
        self.language = planner.language  # the operator's: the default model's
        self._loading: set[asyncio.Task[None]] = set()  # speech waiting for its model
        self.max_text_length = max_text_length
        self.wording = wording
        # a member's recent /say and previews per server, for the server's rate_limit: one
        # member's burst would fill the queue for everyone ("The queue is full")
        self._recent: cachetools.TTLCache[tuple[int, int], collections.deque[float]] = (
            cachetools.TTLCache(maxsize=MAX_SPEAKERS_TRACKED, ttl=SPEECH_WINDOW_S)
        )

    # ---- checks ----------------------------------------------------------------------------
    def check_text(self, text: str) -> str:
        text = text.strip()
        if not text:
            raise UserError(tr("There is nothing to say: please give me some text."))
        if len(text) > self.max_text_length:
            raise UserError(
                tr(
                    "That text is {length:,} characters long; the limit is {most:,}. Please "
                    "shorten "
                    "it.",
                    length=len(text),
                    most=self.max_text_length,
                )
            )
        return text

    async def words(
        self,
        text: str,
        guild: discord.Guild | None,
        spoken: HowSpoken,
        language: str,
        *,
        cloned: bool = False,
    ) -> str:
        """What a member typed to /say or /tts as their chat message is said in `language`
        (the server's dictionary, emoji, links, the length cap), without "NAME said";
        `cloned`: in their cloned voice, which says only their own words (`Wording.typed`)."""
        words = await self.wording.typed(
            text,
            guild,
            spoken.server,
            language,
            author_id=spoken.user_id,
            author=spoken.member,
            cloned=cloned,
        )
        if not words:  # only punctuation or markup: nothing a voice says
            raise UserError(tr("There is nothing to say: please give me some text."))
        return words

    def check_rate(self, guild_id: int, user_id: int, limit: int) -> None:
        """The server's `rate_limit` for what a member asks to be spoken (/say, a preview):
        at most `limit` in SPEECH_WINDOW_S; past it, refused (and not counted)."""
        now = time.monotonic()
        recent = self._recent.get((guild_id, user_id)) or collections.deque()
        while recent and now - recent[0] > SPEECH_WINDOW_S:
            recent.popleft()
        if len(recent) >= limit:
            raise UserError(tr("That is a lot of speaking at once: please wait a few seconds."))
        recent.append(now)
        self._recent[(guild_id, user_id)] = recent  # (re)starts its time to live

    @staticmethod
    def caller_channel(member: discord.Member | discord.User) -> VoiceChannel:
        voice: discord.VoiceState | None = getattr(member, "voice", None)
        if voice is None or voice.channel is None:
            raise UserError(tr("Join a voice channel first, then try again."))
        return voice.channel

    def speaking_channel(self, member: discord.Member | discord.User) -> VoiceChannel:
        """Where the member's speech would be said (/say, a preview, "Speak this message"):
        their voice channel, unless they are in a stage's audience, whom Discord keeps from
        speaking there: the bot does not speak on the stage for them."""
        channel = self.caller_channel(member)
        if in_stage_audience(member):
            raise UserError(
                tr("You are in the stage's audience: I speak on the stage only for its speakers.")
            )
        return channel

    # ---- voice connection ------------------------------------------------------------------
    async def ensure_connected(self, channel: VoiceChannel) -> discord.VoiceClient:
        """Connect to `channel`, or move there if the bot is idle elsewhere in the server."""
        return await self.connections.ensure_connected(channel)

    # ---- commands --------------------------------------------------------------------------
    async def spoken(
        self, user_id: int, guild_id: int | None, *, server: ServerSettings | None = None
    ) -> HowSpoken:
        """How a member is spoken here: read once per message or command (`server`: the
        server's settings, when the caller has them already)."""
        return await self.planner.resolve(user_id, guild_id, server=server)

    async def language_of(self, user_id: int, guild_id: int | None) -> str:
        """The language a member is spoken in here (theirs, the server's or the default)."""
        return (await self.spoken(user_id, guild_id)).language

    async def say(
        self, member: discord.Member | discord.User, text: str, asked_at: float | None = None
    ) -> str:
        """`asked_at`: when the command arrived (`time.monotonic()`), before its reply was
        deferred: servers waiting for room start in that order, and time-to-first-audio
        counts from it. Stamped after the deferral's REST call, 14 servers asking at once
        were ordered by how fast each call came back."""
        requested_at = time.monotonic() if asked_at is None else asked_at
        epoch = self.planner.block_epoch  # a block from now on drops it still (see `_speak`)
        guild = getattr(member, "guild", None)
        spoken = await self.spoken(member.id, guild.id) if guild is not None else None
        await self.blocks.check(
            member.id,
            guild.id if guild is not None else None,
            blocked=spoken.member.blocked if spoken else None,
        )
        text = self.check_text(text)
        channel = self.speaking_channel(member)
        if spoken is None or spoken.guild_id != channel.guild.id:
            spoken = await self.spoken(member.id, channel.guild.id)
        assert spoken.server is not None  # (in a server)
        self.check_rate(channel.guild.id, member.id, spoken.server.rate_limit)
        language = spoken.language
        named = language_name(language)
        plans = self.planner
        readiness, voice = await plans.readiness(spoken, language)
        if readiness is Readiness.FALLS_BACK:
            # it failed to load a moment ago: the default speaks now, and the member is told
            plan = await plans.plan(spoken, language)
            words = await self.words(text, channel.guild, spoken, plan.language, cloned=plan.cloned)
            said = await self._say(member, channel, words, plan, requested_at, epoch)
            return lines(plans.fallback.notice(language, plan.language), said)
        words = await self.words(text, channel.guild, spoken, language)  # (or refused now)
        if readiness is Readiness.LOADING:
            wait = tr(
                "Loading {language}… I'll speak in {channel} as soon as it is ready.",
                language=named,
                channel=channel.mention,
            )
        elif readiness is Readiness.PREPARING:
            wait = tr(
                "Preparing your voice “{voice}” for {language} (once)… I'll speak in {channel} "
                "as soon as it is ready.",
                voice=voice,
                language=named,
                channel=channel.mention,
            )
        else:
            plan = await plans.plan(spoken, language)
            if plan.cloned:  # (made before the plan, to refuse nothing to say at once)
                words = await self.words(text, channel.guild, spoken, plan.language, cloned=True)
            return await self._say(member, channel, words, plan, requested_at, epoch)
        await self.ensure_connected(channel)
        task = asyncio.create_task(
            self._say_once_planned(member, channel, text, spoken, requested_at, epoch)
        )
        self._loading.add(task)
        task.add_done_callback(self._loading.discard)
        return wait

    async def _say(
        self,
        member: discord.Member | discord.User,
        channel: VoiceChannel,
        text: str,
        plan: SpeechPlan,
        requested_at: float,
        epoch: int,
    ) -> str:
        """Speak `text`: the words already made for the plan's language (see `words`)."""
        utterance = self.planner.members_utterance(
            plan, member.name, text, "/say", (member.id, channel.guild.id), asked_at=requested_at
        )
        full = self.speakers.scheduler.at_capacity()
        ahead = await self._speak(channel, utterance, epoch)
        if ahead == 0 and full:
            return tr(
                "I am speaking in as many servers as I can carry: yours starts in {channel} "
                "as soon as one of them is done.",
                channel=channel.mention,
            )
        if ahead == 0:
            return tr("Speaking in {channel}.", channel=channel.mention)
        return tr(
            "Queued: {ahead} ahead of you in {channel}.", ahead=ahead, channel=channel.mention
        )

    async def _say_once_planned(
        self,
        member: discord.Member | discord.User,
        channel: VoiceChannel,
        text: str,
        spoken: HowSpoken,
        requested_at: float,
        epoch: int,
    ) -> None:
        """Speak once planned: its model loaded (if it cannot be, the default language's
        speaks, and the voice channel's chat is told once: the member's "Loading…" reply
        cannot be edited from here, and the people hearing another language are the ones to
        tell) and its voice prepared for it. `text` is as typed: its words are made for the
        language that speaks, once it is known."""
        try:
            plan = await self.planner.plan(spoken)
            if plan.wanted is not None:
                await self.planner.fallback.tell(channel, channel.guild, plan.wanted, plan.language)
            words = await self.words(text, channel.guild, spoken, plan.language, cloned=plan.cloned)
            await self._say(member, channel, words, plan, requested_at, epoch)
        except UserError as error:  # (blocked meanwhile, the queue full): nobody to tell now
            log.info("speech planned in %s not said: %s", spoken.language, error)
        except Exception:  # the member had their answer; the operator gets the reason
            log.exception("could not speak once %s was planned", spoken.language)

    async def speak_in_callers_channel(
        self,
        member: discord.Member | discord.User,
        text: str,
        plan: SpeechPlan,
        *,
        announced: bool = False,
    ) -> VoiceChannel:
        """Speak `text` as `plan` says where the member is (a preview, a sample, a message);
        `announced`: the text already says whose words they are. A plan said in the default
        language because its own could not load: the channel hears why, once."""
        channel = self.speaking_channel(member)
        text = self.check_text(text)
        if plan.wanted is not None:
            await self.planner.fallback.tell(channel, channel.guild, plan.wanted, plan.language)
        utterance = self.planner.members_utterance(
            plan,
            member.name,
            text,
            "speech on request",
            (member.id, channel.guild.id),
            announced=announced,
        )
        await self._speak(channel, utterance)
        return channel

    async def _speak(
        self, channel: VoiceChannel, utterance: Utterance, epoch: int | None = None
    ) -> int:
        """Queue it once connected; unless its member was blocked since `epoch` meanwhile."""
        await self.ensure_connected(channel)
        author = utterance.author_id
        if (
            epoch is not None
            and author is not None
            and self.planner.blocked_since(channel.guild.id, author, epoch)
        ):
            await self.blocks.check(author, channel.guild.id, blocked=True)
        try:
            return self.speakers.speaker(channel.guild).enqueue(utterance)
        except QueueFullError:
            raise UserError(tr("The queue is full. Please wait a moment and try again.")) from None

    async def tts_file(
        self, member: discord.Member | discord.User, guild: discord.Guild | None, text: str
    ) -> Reply:
        """The speech as an Ogg Opus file, in the member's voice (for people not in voice),
        its words as /say's.

        Background work: it waits behind live speech, within the per-member and per-server
        limits; in DMs (`guild` None) the same per-member limit applies."""
        guild_id = guild.id if guild is not None else None
        spoken = await self.spoken(member.id, guild_id)
        await self.blocks.check(member.id, guild_id, blocked=spoken.member.blocked)
        text = self.check_text(text)
        plan = await self.planner.plan(spoken)
        text = await self.words(text, guild, spoken, plan.language, cloned=plan.cloned)
        text = self.planner.attributed(plan, member.name, text, "/tts", (member.id, guild_id))
        samples = await self.synthesize_parts(text, plan, (member.id, guild_id))
        # at their rate and pitch
        samples = await asyncio.to_thread(stretch, samples, plan.rate, plan.pitch)
        data = await asyncio.to_thread(encode_audio, samples, ".ogg")
        seconds = len(samples) / MODEL_RATE
        content = tr("{seconds:.1f} s of speech.", seconds=seconds)
        if plan.wanted is not None:
            content = lines(self.planner.fallback.notice(plan.wanted, plan.language), content)
        return Reply(content, file=("speech.ogg", data))

    async def synthesize_parts(
        self, text: str, plan: SpeechPlan, owner: tuple[int, int | None]
    ) -> np.ndarray:
        """A file's speech with its pauses ([pause 2s], "...", a blank line) as silence of
        their length between the words' speech, each part synthesized in turn (at the
        model's own rate: the caller stretches the whole)."""
        if not has_sounds(text):
            return await self.synthesize_file(text, plan, owner, fallback=True)
        pieces = []
        for part in sound_parts(text):
            if isinstance(part, Pause):
                pieces.append(np.zeros(round(part.seconds * MODEL_RATE), dtype=np.float32))
            elif isinstance(part, str):
                pieces.append(await self.synthesize_file(part, plan, owner, fallback=True))
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float32)

    async def synthesize_file(
        self, text: str, plan: SpeechPlan, owner: tuple[int, int | None], *, fallback: bool
    ) -> np.ndarray:
        """Speech for a file, as background work, with the plan's model and voice. A voice the
        model cannot use gives way to its default one (`fallback`, as live speech does:
        `SpeechPlan.without_voice`) or is refused in words."""
        scheduler = self.speakers.scheduler
        try:
            return await scheduler.background_speech(text, plan.voice, owner, plan.model)
        except UnusableVoiceError as error:
            if plan.voice is None:
                raise
            log.warning("voice unusable for a file (%s)", error)
            if not fallback:
                raise UserError(tr("That voice cannot be used on this bot right now.")) from None
            plan = plan.without_voice()
            return await scheduler.background_speech(text, plan.voice, owner, plan.model)
