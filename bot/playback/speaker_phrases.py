"""A server's use of the phrase cache: whole phrases ("Alice said") and the leads of
messages play from it at once, and what is not there yet is kept or rendered for next time, in
tasks of its own. The cache holds the default model's phrases only."""

from __future__ import annotations

import asyncio
import logging
from typing import cast

import numpy as np

from bot.playback.utterance import Utterance
from bot.synthesis.phrase_cache import PhraseCache
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.tempo import stretch

log = logging.getLogger(__name__)


class SpeakerPhrases:
    """One server's phrases: `GuildSpeaker` asks it before giving a message to the model."""

    def __init__(
        self,
        cache: PhraseCache | None,
        default_voice: str,
        scheduler: DeadlineScheduler,
        key: object = None,
    ) -> None:
        self.cache = cache
        self.default_voice = default_voice
        self.scheduler = scheduler
        self.owner = key  # the server: renders are its background work
        # phrases being rendered for the cache: (voice, phrase, rate, pitch)
        self._rendering: set[tuple[str, str, float, int]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def key(self, utterance: Utterance) -> str | None:
        """The cache's voice key for a whole phrase (None: it is not cached). The cache holds
        the default model's phrases only, as for leads."""
        plan = utterance.plan
        if self.cache is None or not utterance.phrase or plan.model is not None:
            return None
        if plan.pitch:  # the cache keeps whole phrases at the voice's own pitch only
            return None
        return plan.voice or self.default_voice

    def cached(self, utterance: Utterance) -> np.ndarray | None:
        """A whole phrase's audio if the cache has it in memory (no I/O)."""
        key = self.key(utterance)
        if key is None or self.cache is None:
            return None
        return self.cache.in_memory(key, utterance.text)

    async def load(self, utterance: Utterance) -> None:
        """Bring a whole phrase's audio from disk into memory if it is there (I/O in a thread),
        so that it plays from the cache; call it before `enqueue`."""
        key = self.key(utterance)
        if key is not None and self.cache is not None:
            await asyncio.to_thread(self.cache.get, key, utterance.text)

    def keep(self, utterance: Utterance, kept: list[np.ndarray] | None) -> None:
        """A whole phrase synthesized in full (`kept`, its chunks): keep its audio for the next
        time, in a task of its own."""
        key = self.key(utterance)
        if not kept or key is None or self.cache is None:
            return
        audio, text, phrases = np.concatenate(kept), utterance.text, self.cache

        async def keep() -> None:  # the cache is a saving: a failure costs it, not speech
            try:
                await asyncio.to_thread(phrases.put, key, text, audio)
            except Exception:
                log.exception("could not keep a phrase")

        task = asyncio.create_task(keep())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def lead(self, utterance: Utterance, rate: float, text: str) -> np.ndarray | None:
        """The lead's audio at `rate` and the utterance's pitch if the cache has it (else it
        is rendered for next time); `text`: the words said first."""
        lead = utterance.lead
        if self.cache is None or not lead or not text.startswith(lead):
            return None
        plan = utterance.plan
        if plan.model is not None:  # the cache holds the default model's phrases
            return None
        if not text[len(lead) :].strip(" ,:"):
            return None  # nothing after the lead: say it all in one go
        voice, pitch = plan.voice or self.default_voice, plan.pitch
        audio = self.cache.in_memory(voice, lead, rate=rate, pitch=pitch)
        if audio is None and (voice, lead, rate, pitch) not in self._rendering:
            self._rendering.add((voice, lead, rate, pitch))
            task = asyncio.create_task(self._render(voice, plan.voice, lead, rate, pitch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return audio

    async def _render(
        self, key: str, voice: str | None, lead: str, rate: float, pitch: int = 0
    ) -> None:
        """Load a lead phrase from disk, else render it alone as background work (at the
        speaking rate and pitch, in a thread), for the next message."""
        phrases = self.cache
        try:
            assert phrases is not None
            if await asyncio.to_thread(phrases.get, key, lead, rate=rate, pitch=pitch) is not None:
                return  # it was on disk: in memory now
            owner = (0, cast("int | None", self.owner))  # the server's id (its speaker's key)
            audio = await self.scheduler.background_speech(lead, voice, owner=owner)
            if len(audio):

                def keep() -> None:
                    phrases.put(key, lead, stretch(audio, rate, pitch), rate=rate, pitch=pitch)

                await asyncio.to_thread(keep)
        except Exception as error:  # the cache is an optimisation: never an error for anyone
            log.info("could not render a phrase for the cache: %s", error)
        finally:
            self._rendering.discard((key, lead, rate, pitch))
