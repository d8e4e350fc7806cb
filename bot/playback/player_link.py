"""A server's current audio on its voice link: the player attached to the link as it is now,
the wait for that player to finish (with a way out when it stops reading), and the hooks the
connection watchdog (bot/playback/connection.py) heals the link with, so that a message plays
on over a new link from where the old one was last seen carrying it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import discord

from bot.playback.playback import Playback
from bot.synthesis.scheduler import DeadlineScheduler

log = logging.getLogger(__name__)

VoiceClientGetter = Callable[[], discord.VoiceClient | None]
STALL_S = 30.0  # a player that has not read a frame for this long is given up
# ...unless discord.py says the voice link is reconnecting (after close 1006 and the like): a
# reconnect may retry with backoff (and without bot/playback/voice_link.py took up to 30 s), so
# longer.
RECONNECT_STALL_S = 75.0
REPLAY_MARGIN_FRAMES = 5  # a healed link replays these few frames more: better twice than lost


class PlayerLink:
    """The player of one server's current audio (`current()`), on its voice link."""

    def __init__(
        self,
        voice_client: VoiceClientGetter,
        current: Callable[[], Playback | None],
        scheduler: DeadlineScheduler,
        key: object = None,
    ) -> None:
        self._voice_client = voice_client
        self._current = current
        self._scheduler = scheduler
        self.key = key
        self.wanted = False  # the bot means to be in voice here (its link may be healing)
        self._silence: tuple[Playback, int, float] | None = None  # (playback, reads, since)
        self._carried: tuple[Playback, int] | None = None  # (playback, frames) seen carried

    def attach(self, playback: Playback) -> None:
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

    def stop(self) -> None:
        """Stop the player (/skip): its `after` ends the message."""
        voice_client = self._voice_client()
        if voice_client is not None and voice_client.is_playing():
            voice_client.stop()

    async def played(self, playback: Playback) -> Exception | None:
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

    # ---- healing (the connection watchdog drives these) ----------------------------------------
    def silent_for(self, now: float) -> float:
        """How long the current audio has wanted to play while no player read it (0: it is
        being read, or nothing wants to play). Called periodically by the watchdog."""
        playback = self._current()
        if playback is None or not playback.wants_audio or playback.source.ended.is_set():
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
        playback = self._current()
        return playback is not None and playback.detached

    @property
    def wants_audio(self) -> bool:
        """Something is playing, or should be."""
        playback = self._current()
        return playback is not None and playback.wants_audio

    def works(self) -> None:
        """The watchdog saw the link working: a heal would replay from here on, and audio
        whose player discord.py gave up during its own reconnect plays on now."""
        playback = self._current()
        if playback is not None and playback.detached:
            log.info("the voice link in %s is back: the message plays on", self.key)
            self.relink()
            return
        self._carried = None if playback is None else (playback, playback.source.frames_played)

    def unlink(self) -> None:
        """The link is about to be torn down: its player's end is not the message's end."""
        playback = self._current()
        if playback is not None:
            playback.generation += 1

    def relink(self) -> None:
        """The link was made afresh: the current audio plays on from the last frame the old
        link was seen carrying (what its player read since went nowhere)."""
        playback = self._current()
        if playback is not None and self._carried is not None and self._carried[0] is playback:
            lost = playback.source.frames_played - self._carried[1]
            playback.source.rewind(lost + REPLAY_MARGIN_FRAMES)
        if playback is not None and playback.sink.playing and not playback.source.ended.is_set():
            playback.detached = False
            self.attach(playback)
        self._silence = self._carried = None
