"""One utterance on its way to the voice channel (`Playback`), and the sink its jobs' audio
goes into (`PlaybackSink`: resampled, framed, played when ready)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from bot.playback.audio_source import (
    DISCORD_RATE,
    FRAME_S,
    FRAME_SAMPLES,
    SILENCE,
    FrameConverter,
    StreamingSource,
    pcm_frames,
)
from bot.playback.stats import UtteranceResult
from bot.playback.utterance import Utterance
from bot.synthesis.phrase_cache import MAX_PHRASE_SAMPLES
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.speech_jobs import SpeechJob
from bot.text.words import Pause, Sound

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Playback:
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

    def result(self, error: str | None = None) -> UtteranceResult:
        """How it went, for /botstats and the tests."""
        source, utterance = self.source, self.utterance
        first = source.first_frame_at
        return UtteranceResult(
            text=utterance.text,
            voice=utterance.plan.voice,
            model_samples=self.sink.samples,
            frames_played=source.frames_played,
            underruns=source.underruns,
            longest_underrun=source.longest_underrun,
            first_frame_latency=None if first is None else first - utterance.requested_at,
            cancelled=self.job.cancelled,
            error=error,
            requested_at=utterance.requested_at,
            ended_at=time.monotonic(),
            language=utterance.plan.model,
            rate=self.rate,
            pitch=utterance.plan.pitch,
        )

    def cancel(self, scheduler: DeadlineScheduler) -> None:
        scheduler.cancel(self.job)  # drops its units, stops the unit in flight
        self.source.cancel()

    @property
    def wants_audio(self) -> bool:
        """It is playing, or should be."""
        return self.sink.playing and not self.job.cancelled


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
        return ahead + self.source.buffered_frames * FRAME_S

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
        frames = round(seconds / FRAME_S)
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
