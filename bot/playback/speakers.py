"""Per-guild speech queues: each guild speaks its utterances in order on its voice client.

A guild's current utterance becomes a `SpeechJob` of the shared `DeadlineScheduler`, which
synthesizes it unit by unit, interleaved with other guilds' jobs by deadline; the units'
audio streams into the guild's `StreamingSource` as the model produces it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import math
import time
from collections.abc import Callable
from typing import cast

import discord

from bot.core.errors import InternalError
from bot.core.supervisor import supervise
from bot.playback.audio_source import StreamingSource
from bot.playback.playback import Playback, PlaybackSink
from bot.playback.player_link import PlayerLink, VoiceClientGetter
from bot.playback.queue_speedup import queue_rate
from bot.playback.speaker_phrases import SpeakerPhrases
from bot.playback.stats import BotStats, Snapshot, UtteranceResult
from bot.playback.utterance import Utterance
from bot.synthesis.engine import TTSEngine, UnusableVoiceError
from bot.synthesis.model_pool import ModelPool
from bot.synthesis.phrase_cache import PhraseCache
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.speech_jobs import SpeechJob
from bot.text.words import MAX_SOUND_PLAYS, Pause, Sound, has_sounds, sound_parts

log = logging.getLogger(__name__)


def without_voice(utterance: Utterance) -> Utterance:
    """The utterance with its plan's one fallback: its voice state proved unusable."""
    return dataclasses.replace(utterance, plan=utterance.plan.without_voice())


def has_words(parts: list[str | Sound | Pause]) -> bool:
    """Whether a message's remaining parts hold words for the model (not only sounds)."""
    return any(isinstance(part, str) and part.strip() for part in parts)


class QueueFullError(InternalError):
    """A server's queue holds as many messages as it may."""


class GuildSpeaker:
    """One guild's queue and the task that speaks it.

    While the current utterance plays out its last synthesized audio, the next one in the queue
    is already being synthesized (`_next`, chained behind the current audio), so a queued message
    starts the moment the previous one ends instead of waiting for its first unit then.
    Each utterance's end goes to `on_result` (the bot's `BotStats.record`), in playing order.
    """

    def __init__(
        self,
        scheduler: DeadlineScheduler,
        voice_client: VoiceClientGetter,
        max_queue: int = 20,
        key: object = None,
        on_result: Callable[[UtteranceResult], None] | None = None,
        phrases: PhraseCache | None = None,
        default_voice: str = "",
    ) -> None:
        self._on_result = on_result
        self._scheduler = scheduler
        self._voice_client = voice_client
        self.key = key
        self.max_queue = max_queue
        self._queue: collections.deque[Utterance] = collections.deque()
        self._wakeup = asyncio.Event()
        self._current: Playback | None = None
        self._next: Playback | None = None  # synthesizing while the current one plays out
        self.history: collections.deque[UtteranceResult] = collections.deque(maxlen=100)
        self.phrases = SpeakerPhrases(phrases, default_voice, scheduler, key)
        self.last_active = time.monotonic()
        self._free_since = -math.inf  # (the scheduler's clock) when the last message here ended
        # the player on the server's voice link, which the connection watchdog heals
        self.link = PlayerLink(voice_client, lambda: self._current, scheduler, key)
        self._task = supervise(self._run, f"guild-speaker-{key}")

    @property
    def busy(self) -> bool:
        return self._current is not None or self._next is not None or bool(self._queue)

    @property
    def queued(self) -> int:
        """Utterances waiting for their turn (the one being prepared included)."""
        return len(self._queue) + (1 if self._next else 0)

    def enqueue(self, utterance: Utterance, *, drop_oldest: bool = False) -> int:
        """Queue an utterance; returns how many are ahead of it.

        When the queue is full: QueueFullError, or with `drop_oldest` the oldest waiting
        utterance makes room (chat reading: the newest messages matter most).
        """
        if self.queued >= self.max_queue:
            if not drop_oldest:
                raise QueueFullError
            while self.queued >= self.max_queue:
                oldest = self._cancel_next() if self._next else self._queue.popleft()
                log.info("queue full: dropped the oldest waiting message %s", oldest.message_id)
        ahead = self.queued + (1 if self._current else 0)
        self._queue.append(utterance)
        self.last_active = time.monotonic()
        self._wakeup.set()
        self.prepare_next()
        return ahead

    def drop(self, message_id: int) -> bool:
        """Forget a waiting utterance of a deleted message. False when none was waiting."""
        if self._next is not None and self._next.utterance.message_id == message_id:
            self._cancel_next()
            self.prepare_next()
            return True
        for utterance in self._queue:
            if utterance.message_id == message_id:
                self._queue.remove(utterance)
                return True
        return False

    def drop_author(self, author_id: int) -> int:
        """Forget the waiting utterances of one member (blocked meanwhile); how many."""
        dropped = 0
        if self._next is not None and self._next.utterance.author_id == author_id:
            self._cancel_next()
            dropped = 1
        waiting = [utterance for utterance in self._queue if utterance.author_id == author_id]
        for utterance in waiting:
            self._queue.remove(utterance)
        if dropped:
            self.prepare_next()
        return dropped + len(waiting)

    def replace_text(self, message_id: int, text: str) -> bool:
        """Read the edited text of a message that is still waiting."""
        if self._next is not None and self._next.utterance.message_id == message_id:
            self._queue.appendleft(self._cancel_next())  # synthesized again, edited
        for utterance in self._queue:
            if utterance.message_id == message_id:
                utterance.text = text
                self.prepare_next()
                return True
        return False

    def clear_waiting(self) -> int:
        """Drop the waiting utterances; the current one goes on."""
        dropped = self.queued
        if self._next is not None:
            self._cancel_next()
        self._queue.clear()
        return dropped

    @property
    def idle_seconds(self) -> float:
        return 0.0 if self.busy else time.monotonic() - self.last_active

    def skip(self) -> bool:
        """Stop the current utterance; the queue goes on. False when nothing was playing."""
        if self._current is None:
            return False
        self._current.cancel(self._scheduler)
        self.link.stop()
        return True

    def clear(self) -> int:
        """Stop the current utterance and drop the queue; returns how many were dropped."""
        dropped = self.clear_waiting() + (1 if self._current else 0)
        self.skip()
        return dropped

    async def close(self) -> None:
        self.clear()
        self.phrases.close()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    # ---- preparing the next utterance ---------------------------------------------------------
    def prepare_next(self) -> None:
        """Start synthesizing the next utterance once the current one is fully synthesized and
        playing: its audio is queued behind the current one's."""
        current = self._current
        if (
            self._next is not None
            or not self._queue
            or current is None
            or not current.synthesized
            or not current.sink.started
            or current.job.cancelled
        ):
            return
        self._next = self._begin(self._queue.popleft(), follows=current.sink)

    def _cancel_next(self) -> Utterance:
        assert self._next is not None
        playback, self._next = self._next, None
        playback.cancel(self._scheduler)
        return playback.utterance

    def _begin(self, utterance: Utterance, follows: PlaybackSink | None = None) -> Playback:
        """Make the utterance's playback and hand its text to the scheduler."""
        if utterance.on_start is not None:
            utterance.on_start(utterance)
        voice_client = self._voice_client()
        loop = asyncio.get_running_loop()
        played: asyncio.Future[Exception | None] = loop.create_future()

        def failed(error: Exception) -> None:  # play() raised: this message ends here
            self._scheduler.cancel(job)
            if not played.done():
                played.set_result(error)

        source = StreamingSource()
        sink = PlaybackSink(
            source, lambda: self.link.attach(playback), follows=follows, on_failed=failed
        )
        # decided now, not when queued: a queue that drained meanwhile speaks at the chosen rate
        plan = utterance.plan
        rate = queue_rate(plan.rate, self.queued, speedup=plan.speedup)
        text, rest = utterance.text, []
        if has_sounds(text):  # words with a sound: the speech before the first one now
            parts = sound_parts(text, utterance.sounds.keys(), MAX_SOUND_PLAYS)
            text = str(parts.pop(0)) if parts and isinstance(parts[0], str) else ""
            rest = parts
        phrase_audio = None if rest else self.phrases.cached(utterance)
        lead_audio = None
        if phrase_audio is None:
            lead_audio = self.phrases.lead(utterance, rate, text)
        if lead_audio is not None:  # the lead plays now; the model starts on the rest
            text = text[len(utterance.lead) :].lstrip(" ,:")
        if utterance.phrase and phrase_audio is None and self.phrases.key(utterance):
            sink.keep = []  # synthesized now: kept for the next time
        job = self._job(utterance, text, sink, rate)
        job.keeps_row = has_words(rest)
        playback = Playback(utterance, source, sink, job, played, rate=rate, rest=rest)
        if voice_client is None and not self.link.wanted:  # not in voice, and not healing
            playback.not_connected = True
            job.finish()
        elif phrase_audio is not None:  # all of it from the cache: nothing for the model
            sink.feed(phrase_audio)
            job.finish()
        else:  # a link being healed is awaited: the audio waits in the source meanwhile
            if lead_audio is not None:
                sink.feed(lead_audio)
            self._scheduler.submit(job)
        return playback

    def _job(self, utterance: Utterance, text: str, sink: PlaybackSink, rate: float) -> SpeechJob:
        return SpeechJob.planned(
            text, utterance.plan, sink, utterance.requested_at, self.key, rate=rate
        )

    async def _play_rest(self, playback: Playback) -> BaseException | None:
        """The parts after a message's first words, in order, once those are synthesized:
        a sound's frames go into the source as they are; the words after it are a job of
        their own, synthesized while the audio before them plays."""
        error = playback.job.error
        while playback.rest and error is None and not playback.job.cancelled:
            part = playback.rest.pop(0)
            if isinstance(part, Sound):
                playback.sink.feed_pcm(playback.utterance.sounds[part.key])
                continue
            if isinstance(part, Pause):
                playback.sink.feed_silence(part.seconds)
                continue
            job = self._job(playback.utterance, part, playback.sink, playback.rate)
            # it takes the row its message's words before the sound kept; without one (the
            # message began with a sound) it waits for room as its message did, in turn
            job.kept_row, job.keeps_row = True, has_words(playback.rest)
            job.free_at = playback.job.free_at
            if job.free_at is None:
                job.free_at = self._scheduler.clock()
            playback.job = job
            self._scheduler.submit(job)
            await job.done.wait()
            error = job.error
            if isinstance(error, UnusableVoiceError) and job.voice and not job.cancelled:
                log.warning("voice unusable (%s): the rest with the default voice", error)
                playback.utterance = without_voice(playback.utterance)
                playback.rest.insert(0, part)
                error = None
        self._scheduler.release_row(self.key)  # ended before its last words: none is needed
        return error

    async def load_phrase(self, utterance: Utterance) -> None:
        """Bring a whole phrase's audio from disk into memory (`SpeakerPhrases.load`)."""
        await self.phrases.load(utterance)

    # ---- speaking -----------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            playback, self._next = self._next, None
            if playback is None:
                while not self._queue:
                    self._wakeup.clear()
                    await self._wakeup.wait()
            try:
                if playback is None:
                    playback = self._begin(self._queue.popleft())
                self._current = playback
                result = await self._speak(playback)
                self.history.append(result)
                if self._on_result is not None:
                    self._on_result(result)
            except Exception:  # one bad utterance must not end the guild's queue
                log.exception("speaking an utterance failed")
                if self._current is not None:
                    self._current.cancel(self._scheduler)
            finally:
                self._current = None
                self.last_active = time.monotonic()
                self._free_since = self._scheduler.clock()

    async def _speak(self, playback: Playback) -> UtteranceResult:
        job, sink, source = playback.job, playback.sink, playback.source
        if playback.not_connected:
            return playback.result(error="not connected to voice")
        if not job.admitted:
            # it waits for the model from when this server's channel became free: its request,
            # or the end of the message before it. Not from now: under load this task gets
            # here late, and servers that asked later went first (tests/e2e/test_capacity.py)
            job.free_at = max(job.requested_at, self._free_since)
        sink.release()  # the audio it followed has ended: play as soon as it is ready
        await job.done.wait()
        error = job.error
        retry = playback.utterance.plan.voice and not sink.samples and not job.cancelled
        if isinstance(error, UnusableVoiceError) and retry:
            log.warning("voice unusable (%s): speaking with the default voice", error)
            self._current = self._begin(without_voice(playback.utterance))
            return await self._speak(self._current)
        if playback.rest and error is None:
            error = await self._play_rest(playback)
            job = playback.job
        if error is not None:
            log.warning("synthesis failed: %s", error)
        elif sink.keep is not None and not job.cancelled:
            kept, sink.keep = sink.keep, None
            self.phrases.keep(playback.utterance, kept)
        sink.flush()
        source.finish()
        if not sink.playing and source.buffered_frames and not job.cancelled:
            sink.start()
        playback.synthesized = True
        if sink.playing:
            self.prepare_next()
            played = await self.link.played(playback)
            if played is not None and error is None:
                error = played
        return playback.result(error=None if error is None else str(error))


class Speakers:
    """All guilds' speakers, sharing one engine."""

    def __init__(
        self,
        engine: TTSEngine,
        max_queue: int = 20,
        ahead_s: float = 5.0,
        models: ModelPool | None = None,
    ) -> None:
        """`models`: the languages' models; units name theirs (else all go to `engine`)."""
        self._engine = engine
        self._max_queue = max_queue
        self._speakers: dict[int, GuildSpeaker] = {}
        self.models = models
        source: TTSEngine | ModelPool = engine if models is None else models
        self.scheduler = DeadlineScheduler(
            source.stream,
            workers=engine.workers,
            ahead_s=ahead_s,
            spare_lanes=engine.spare_lanes,
            run_call=source.call,
            capacity=engine.capacity if engine.batched else None,
            models=models,
        )
        self.scheduler.start()
        self.stats = BotStats(self.scheduler)

    def speaker(self, guild: discord.Guild) -> GuildSpeaker:
        speaker = self._speakers.get(guild.id)
        if speaker is None:

            def getter() -> discord.VoiceClient | None:
                # typed VoiceProtocol by discord.py: the bot's are VoiceClients (VoiceLink)
                return cast("discord.VoiceClient | None", guild.voice_client)

            speaker = GuildSpeaker(
                self.scheduler,
                getter,
                self._max_queue,
                key=guild.id,
                on_result=self.stats.record,
                phrases=self._engine.phrases,
                default_voice=self._engine.default_voice,
            )
            self._speakers[guild.id] = speaker
        return speaker

    @property
    def engine(self) -> TTSEngine:
        return self._engine

    def snapshot(self) -> Snapshot:
        speaking = sum(1 for s in self._speakers.values() if s.busy)
        return self.stats.snapshot(speaking)

    def get(self, guild_id: int) -> GuildSpeaker | None:
        return self._speakers.get(guild_id)

    async def forget(self, guild_id: int) -> None:
        """Drop a server's speaker (the bot left the server)."""
        speaker = self._speakers.pop(guild_id, None)
        if speaker is not None:
            await speaker.close()

    async def sweep(self, idle_s: float, connected: set[int]) -> int:
        """Drop speakers idle for `idle_s` in servers where the bot is not in voice, so the
        table follows the servers in use, not every server ever spoken in."""
        stale = [
            gid
            for gid, s in self._speakers.items()
            if gid not in connected and not s.busy and s.idle_seconds >= idle_s
        ]
        for guild_id in stale:
            await self.forget(guild_id)
        return len(stale)

    async def close(self) -> None:
        speakers, self._speakers = list(self._speakers.values()), {}
        await asyncio.gather(*(s.close() for s in speakers))
        await self.scheduler.close()
