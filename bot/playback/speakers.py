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
from dataclasses import dataclass, field

import discord
import numpy as np

from bot.core.errors import InternalError
from bot.core.supervisor import supervise
from bot.playback.audio_source import (
    DISCORD_RATE,
    FRAME_S,
    FRAME_SAMPLES,
    SILENCE,
    FrameConverter,
    StreamingSource,
    pcm_frames,
)
from bot.playback.queue_speedup import queue_rate
from bot.playback.speaker_phrases import SpeakerPhrases
from bot.playback.stats import BotStats, Snapshot, UtteranceResult
from bot.playback.utterance import Utterance
from bot.synthesis.engine import TTSEngine, UnusableVoiceError
from bot.synthesis.model_pool import ModelPool
from bot.synthesis.phrase_cache import MAX_PHRASE_SAMPLES, PhraseCache
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


VoiceClientGetter = Callable[[], discord.VoiceClient | None]
FRAME_SECONDS = FRAME_S  # (its name here)
STALL_S = 30.0  # a player that has not read a frame for this long is given up
# ...unless discord.py says the voice link is reconnecting (after close 1006 and the like): a
# reconnect may retry with backoff (and without bot/playback/voice_link.py took up to 30 s), so
# longer.
RECONNECT_STALL_S = 75.0
REPLAY_MARGIN_FRAMES = 5  # a healed link replays these few frames more: better twice than lost


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
        self._current: _Playback | None = None
        self._next: _Playback | None = None  # synthesizing while the current one plays out
        self.history: collections.deque[UtteranceResult] = collections.deque(maxlen=100)
        self.phrases = SpeakerPhrases(phrases, default_voice, scheduler, key)
        self.last_active = time.monotonic()
        self._free_since = -math.inf  # (the scheduler's clock) when the last message here ended
        self.link_wanted = False  # the bot means to be in voice here (its link may be healing)
        self._silence: tuple[_Playback, int, float] | None = None  # (playback, reads, since)
        self._carried: tuple[_Playback, int] | None = None  # (playback, frames) seen carried
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
        voice_client = self._voice_client()
        if voice_client is not None and voice_client.is_playing():
            voice_client.stop()
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

    def _begin(self, utterance: Utterance, follows: PlaybackSink | None = None) -> _Playback:
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
            source, lambda: self._attach(playback), follows=follows, on_failed=failed
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
        playback = _Playback(utterance, source, sink, job, played, rate=rate, rest=rest)
        if voice_client is None and not self.link_wanted:  # not in voice, and not healing
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

    async def _play_rest(self, playback: _Playback) -> BaseException | None:
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

    def _attach(self, playback: _Playback) -> None:
        """Play the playback's source on the server's voice link as it is now. Without a
        working link, the source waits (its audio keeps) until `relink()` after a heal."""
        playback.generation += 1  # what an earlier player reports from now on is ignored
        voice_client = self._voice_client()
        if voice_client is None or not voice_client.is_connected():
            log.info("no working voice link in %s: the audio waits for it", self.key)
            return
        loop = asyncio.get_running_loop()
        generation = playback.generation

        def after(error: Exception | None) -> None:  # runs in the player thread
            loop.call_soon_threadsafe(playback.player_ended, generation, error)

        if voice_client.is_playing():
            # Ours have all ended by now: this is a player discord.py left looking busy
            # (it calls `after` without stopping when it gives up waiting for a voice
            # reconnect), and play() would refuse every message from here on.
            log.info("a finished player still looked busy in %s: stopped it", self.key)
            voice_client.stop()
        voice_client.play(playback.source, after=after)

    # ---- healing (bot/playback/connection.py drives these) ------------------------------------
    def silent_for(self, now: float) -> float:
        """How long the current audio has wanted to play while no player read it (0: it is
        being read, or nothing wants to play). Called periodically by the watchdog."""
        playback = self._current
        if (
            playback is None
            or not playback.sink.playing
            or playback.source.ended.is_set()
            or playback.job.cancelled
        ):
            self._silence = None
            return 0.0
        reads = playback.source.reads
        if self._silence is None or self._silence[:2] != (playback, reads):
            self._silence = (playback, reads, now)
            return 0.0
        return now - self._silence[2]

    @property
    def detached(self) -> bool:
        """The current audio's player gave up before its end (it waits for a working link)."""
        return self._current is not None and self._current.detached

    @property
    def wants_audio(self) -> bool:
        """Something is playing, or should be."""
        playback = self._current
        return playback is not None and playback.sink.playing and not playback.job.cancelled

    def link_works(self) -> None:
        """The watchdog saw the link working: a heal would replay from here on, and audio
        whose player discord.py gave up during its own reconnect plays on now."""
        playback = self._current
        if playback is not None and playback.detached:
            log.info("the voice link in %s is back: the message plays on", self.key)
            self.relink()
            return
        self._carried = None if playback is None else (playback, playback.source.frames_played)

    def unlink(self) -> None:
        """The link is about to be torn down: its player's end is not the message's end."""
        if self._current is not None:
            self._current.generation += 1

    def relink(self) -> None:
        """The link was made afresh: the current audio plays on from the last frame the old
        link was seen carrying (what its player read since went nowhere)."""
        playback = self._current
        if playback is not None and self._carried is not None and self._carried[0] is playback:
            lost = playback.source.frames_played - self._carried[1]
            playback.source.rewind(lost + REPLAY_MARGIN_FRAMES)
        if playback is not None and playback.sink.playing and not playback.source.ended.is_set():
            playback.detached = False
            self._attach(playback)
        self._silence = self._carried = None

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

    async def _speak(self, playback: _Playback) -> UtteranceResult:
        job, sink, source = playback.job, playback.sink, playback.source
        if playback.not_connected:
            return self._result(playback, error="not connected to voice")
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
            played = await self._played(playback)
            if played is not None and error is None:
                error = played
        return self._result(playback, error=None if error is None else str(error))

    async def _played(self, playback: _Playback) -> Exception | None:
        """Wait for the player to finish the source: until `after` runs, play() fails, or the
        player stops reading for `STALL_S` (a dead connection; `RECONNECT_STALL_S` while
        discord.py is reconnecting the voice link), whichever comes first."""
        source = playback.source
        reads, since = source.reads, time.monotonic()
        while True:
            try:
                async with asyncio.timeout(1.0):
                    return await asyncio.shield(playback.played)
            except TimeoutError:
                if source.reads != reads:
                    reads, since = source.reads, time.monotonic()
                    continue
                voice_client = self._voice_client()
                reconnecting = voice_client is not None and not voice_client.is_connected()
                limit = RECONNECT_STALL_S if reconnecting else STALL_S
                if time.monotonic() - since < limit:
                    continue
                log.warning("the voice player stalled in %s: giving the message up", self.key)
                playback.cancel(self._scheduler)
                if voice_client is not None:
                    with contextlib.suppress(Exception):
                        voice_client.stop()
                return RuntimeError("playback stalled")

    @staticmethod
    def _result(playback: _Playback, error: str | None = None) -> UtteranceResult:
        source, utterance = playback.source, playback.utterance
        first = source.first_frame_at
        return UtteranceResult(
            text=utterance.text,
            voice=utterance.plan.voice,
            model_samples=playback.sink.samples,
            frames_played=source.frames_played,
            underruns=source.underruns,
            longest_underrun=source.longest_underrun,
            first_frame_latency=None if first is None else first - utterance.requested_at,
            cancelled=playback.job.cancelled,
            error=error,
            requested_at=utterance.requested_at,
            ended_at=time.monotonic(),
            language=utterance.plan.model,
            rate=playback.rate,
            pitch=utterance.plan.pitch,
        )


@dataclass(eq=False)
class _Playback:
    """One utterance on its way to the voice channel."""

    utterance: Utterance
    source: StreamingSource
    sink: PlaybackSink
    job: SpeechJob
    played: asyncio.Future[Exception | None]
    rate: float = 1.0  # the rate it is spoken at (its queue's speed-up included)
    # what follows the first job's words: sounds and the words after them (`_play_rest`)
    rest: list[str | Sound | Pause] = field(default_factory=list)
    not_connected: bool = False
    synthesized: bool = False  # every unit is in the source; it is playing out
    generation: int = 0  # which player's end counts: the one attached last
    detached: bool = False  # its player gave up before the end: it waits for another

    def player_ended(self, generation: int, error: Exception | None) -> None:
        """A player stopped reading the source: the message's end if it is the current
        player and it played the source to its end (or failed, or was stopped by /skip).
        A player of a link torn down for healing does not count, nor one discord.py gave up
        during a reconnect of its own: the audio waits for the next player (`relink()`)."""
        if generation != self.generation or self.played.done():
            return
        if self.source.ended.is_set() or self.job.cancelled or error is not None:
            self.played.set_result(error)
        else:
            self.detached = True

    def cancel(self, scheduler: DeadlineScheduler) -> None:
        scheduler.cancel(self.job)  # drops its units, stops the unit in flight
        self.source.cancel()


class PlaybackSink:
    """A job's audio into a guild's playback: resample, frame, start playing when ready.

    A sink that `follows` another one (the next utterance, prepared while the current one plays)
    counts as started, its deadline set by the audio buffered ahead of it, and starts playing
    only once `release()` says the audio before it has ended.
    """

    def __init__(
        self,
        source: StreamingSource,
        on_ready: Callable[[], None],
        follows: PlaybackSink | None = None,
        on_failed: Callable[[Exception], None] | None = None,
    ) -> None:
        self.source = source
        self._converter = FrameConverter()
        self._on_ready = on_ready
        self._on_failed = on_failed
        self._follows = follows
        self._chained = follows is not None
        self.playing = False
        self.samples = 0  # 24 kHz samples received from the model
        self.keep: list[np.ndarray] | None = None  # the model's audio, when it is to be kept

    @property
    def started(self) -> bool:
        """The guild is playing this audio or audio it follows (the scheduler's view)."""
        return self.playing or self._chained

    def buffered_seconds(self) -> float:
        ahead = self._follows.buffered_seconds() if self._follows is not None else 0.0
        return ahead + self.source.buffered_frames * FRAME_SECONDS

    def feed(self, chunk: np.ndarray) -> None:
        self.samples += len(chunk)
        if self.keep is not None:
            self.keep.append(np.array(chunk, dtype=np.float32))  # a copy: buffers are reused
            if self.samples > MAX_PHRASE_SAMPLES:  # too long to be a phrase: not kept
                self.keep = None
        self.source.feed(self._converter.push(chunk))
        if not self.playing and self._follows is None and self.source.ready:
            self.start()

    def feed_pcm(self, pcm: bytes) -> None:
        """Audio already at Discord's rate (48 kHz mono s16le: a dictionary's sound) after
        all that was fed: the speech before it is framed to its end, then these frames as
        they are, and the speech after it starts afresh."""
        self.source.feed(self._converter.flush())
        self._converter = FrameConverter()
        self.source.feed(pcm_frames(pcm))
        if not self.playing and self._follows is None and self.source.ready:
            self.start()

    def feed_silence(self, seconds: float) -> None:
        """A pause after all that was fed: the speech before it framed to its end (fading
        out over its last 5 ms; its last frame's padding counts in the pause), then silent
        frames to make `seconds`, and the speech after it starts afresh. The frames go into
        the source at once: the pause is audio like any other, never an underrun."""
        self.source.feed(self._converter.flush(fade=True))
        padded = self._converter.padding
        self._converter = FrameConverter()
        frames = max(0, round((seconds * DISCORD_RATE - padded) / FRAME_SAMPLES))
        self.source.feed([SILENCE] * frames)
        if not self.playing and self._follows is None and self.source.ready:
            self.start()

    def prebuffer(self, seconds: float) -> None:
        frames = round(seconds / FRAME_SECONDS)
        self.source.prebuffer_frames = max(self.source.prebuffer_frames, frames)

    def release(self) -> None:
        """The audio this one follows has ended."""
        if self._follows is not None:
            self._follows = None
            if self.source.buffered_frames and self.source.ready:
                self.start()

    def start(self) -> None:
        if not self.playing:
            self.playing = True
            try:
                self._on_ready()
            except Exception as error:  # e.g. the voice connection went away meanwhile
                log.warning("could not start playing: %s", error)
                self.source.cancel()
                if self._on_failed is not None:
                    self._on_failed(error)

    def flush(self) -> None:
        self.source.feed(self._converter.flush())


class Speakers:
    """All guilds' speakers, sharing one engine."""

    def __init__(
        self, engine: TTSEngine, max_queue: int = 20, ahead_s: float = 5.0,
        models: ModelPool | None = None,
    ) -> None:  # fmt: skip
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
            getter = lambda: guild.voice_client  # noqa: E731
            speaker = GuildSpeaker(
                # the guild's voice client is typed VoiceProtocol: ours are VoiceClients
                self.scheduler, getter, self._max_queue, key=guild.id,  # type: ignore[arg-type]
                on_result=self.stats.record, phrases=self._engine.phrases,
                default_voice=self._engine.default_voice,
            )  # fmt: skip
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
