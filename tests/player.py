"""A stand-in for discord.VoiceClient: a player thread that reads the source every 20 ms.

It does what discord.py's AudioPlayer does with a PCM source (read, Opus-encode at the bot's
complexity, sleep to the next 20 ms tick, call `after` at the end) without a voice
connection; the benchmarks and the scheduler tests use it where the fake Discord would add
nothing but time. `Ended` collects
what a speaker reports as each utterance ends.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import discord

from bot.playback.audio_source import StreamingSource
from bot.playback.stats import UtteranceResult
from bot.playback.voice_link import OPUS_COMPLEXITY, load_opus, set_complexity


class PlayerVoiceClient:
    def __init__(self, encode: bool = True) -> None:
        self._stop = threading.Event()
        self._playing = False  # like discord.py's player: False before `after` is called
        if encode:
            load_opus()
        self.encoder = discord.opus.Encoder() if encode else None
        if self.encoder is not None:  # as the bot's VoiceLink sets it
            set_complexity(self.encoder, OPUS_COMPLEXITY)
        self.started: list[float] = []  # when each play() began
        self.ended: list[float] = []  # when each source's end was read

    def is_connected(self) -> bool:
        return True

    def is_playing(self) -> bool:
        return self._playing

    def stop(self) -> None:
        self._stop.set()

    def play(self, source: StreamingSource, *, after: Callable[[Exception | None], None]) -> None:
        if self.is_playing():
            raise discord.ClientException("Already playing audio.")
        self._stop = threading.Event()
        stop = self._stop
        self._playing = True
        self.started.append(time.monotonic())

        def run() -> None:
            start, loops = time.perf_counter(), 0
            while not stop.is_set():
                data = source.read()
                if not data:
                    break
                if self.encoder is not None:
                    self.encoder.encode(data, 960)
                loops += 1
                time.sleep(max(0.0, start + 0.02 * loops - time.perf_counter()))
            self.ended.append(time.monotonic())
            self._playing = False
            after(None)

        threading.Thread(target=run, daemon=True).start()


class Ended:
    """A speaker's `on_result`: the utterances it reports ended, in playing order, as the bot's
    stats (`BotStats.record`) get them."""

    def __init__(self) -> None:
        self.results: list[UtteranceResult] = []
        self._added = asyncio.Event()

    def __call__(self, result: UtteranceResult) -> None:
        self.results.append(result)
        self._added.set()

    async def wait_for(self, count: int, timeout: float | None = 5.0) -> list[UtteranceResult]:
        """Every utterance ended so far, once there are `count` (TimeoutError after `timeout`)."""
        async with asyncio.timeout(timeout):
            while len(self.results) < count:
                self._added.clear()
                await self._added.wait()
        return list(self.results)
