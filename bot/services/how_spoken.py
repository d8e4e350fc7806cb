"""How a member is spoken in a server: the language, the voice, whether that voice is their
own cloned one, and whether it must first be prepared for the language's model.

Read once per message or command: the server's settings and the member's settings once each,
their voice choice when a voice is first needed (a message that is not read costs no more).

The language is the member's own choice in that server, else the server's, else the
operator's `TTS_LANGUAGE`; a choice the operator no longer offers falls through. The voice is
the member's choice in that server, else their global one, else the server's default, else
None (the operator's `DEFAULT_VOICE`); a cloned voice that cannot be used falls through too.
The speaking rate is the member's own in that server, else the server's `speaking_rate`
(1.0 in a DM); it is read with the settings above, no query of its own, as is whether the
server speeds it up while messages wait (`queue_speedup`). The pitch likewise: the member's
own in that server (`/set my_pitch`), else the server's `pitch` (0 in a DM).

A chat message's language (`language_for`): with the server's `detect_language` on and no
language of the member's own, the one it is written in, when lingua names one of those offered
(bot/text/language_detection.py, in a thread); else the language above.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from bot.storage.database import MemberSettings, VoiceRecord
from bot.storage.server_settings import ServerSettings
from bot.storage.voice_records import VoiceRecords
from bot.synthesis.voice_states import VoiceStates
from bot.text.language_detection import LanguageDetection

log = logging.getLogger(__name__)

# a way out, not a budget: a detection takes milliseconds, the first one builds the detector
# (its languages' models: a second or two, longer beside busy model threads)
DETECT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SpokenVoice:
    """What speaks: the engine's voice spec (None: the operator's `DEFAULT_VOICE`) and, when it
    is a member's own cloned voice, that voice's id (its speech always says whose it is)."""

    spec: str | None = None
    cloned_id: int | None = None


class HowSpoken:
    """How one member is spoken in one server (`guild_id` None: in a DM)."""

    def __init__(
        self,
        resolver: HowSpokenResolver,
        user_id: int,
        guild_id: int | None,
        member: MemberSettings,
        server: ServerSettings | None,
    ) -> None:
        self._resolver = resolver
        self.user_id = user_id
        self.guild_id = guild_id
        self.member = member
        self.server = server
        self.language = resolver.language_of(member, server)  # wanted: its model may not load
        self.rate = rate_of(member, server)
        self.pitch = pitch_of(member, server)  # semitones, in the rate's stretcher
        # the server's queue_speedup: the rate rises while messages wait (bot/playback)
        self.speedup = server is not None and server.queue_speedup
        self._chosen: str | VoiceRecord | None = None
        self._chosen_read = False  # the voice choice is read when a voice is first needed

    @property
    def own_language(self) -> bool:
        """The member chose a language here that is offered: it wins over detection."""
        return self.member.language is not None and self.member.language in (
            self._resolver.languages
        )

    async def language_for(self, text: str) -> str:
        """The language a message of theirs is read in: theirs if they chose one; else, with
        the server's `detect_language` on, the one `text` is written in (among those offered,
        when lingua is sure enough); else the server's (`language`)."""
        if self.server is None or not self.server.detect_language or self.own_language:
            return self.language
        return await self._resolver.detect(text) or self.language

    async def _choice(self) -> str | VoiceRecord | None:
        if not self._chosen_read:
            records = self._resolver.records
            self._chosen = await records.chosen_voice(self.user_id, self.guild_id)
            self._chosen_read = True
        return self._chosen

    async def voice(self, language: str) -> SpokenVoice:
        """The voice for the model of `language`, the one that speaks (the default language's
        when the member's could not load): a cloned voice's state for that model is fetched or
        made from its recording on first use, so ask once that model is loaded."""
        chosen = await self._choice()
        if isinstance(chosen, str):
            return SpokenVoice(chosen)
        if chosen is not None:
            model = self._resolver.model_of(language)
            spec = await self._resolver.states.usable_state(chosen, model)
            if spec is not None:
                return SpokenVoice(spec, chosen.id)
        if self.server is not None and self.server.default_voice:
            return SpokenVoice(self.server.default_voice)
        return SpokenVoice()

    async def to_prepare(self, language: str) -> str | None:
        """The name of the member's cloned voice while its state for `language`'s loaded model
        (not the default one) is still to be made (None: nothing to prepare)."""
        model = self._resolver.model_of(language)
        if model is None:
            return None
        chosen = await self._choice()
        if not isinstance(chosen, VoiceRecord):
            return None
        return chosen.name if await self._resolver.states.needs_state(chosen, model) else None


def rate_of(member: MemberSettings, server: ServerSettings | None) -> float:
    """The speaking rate: the member's own here, else the server's, else the model's own."""
    if member.rate is not None:
        return member.rate
    return server.speaking_rate if server is not None else 1.0


def pitch_of(member: MemberSettings, server: ServerSettings | None) -> int:
    """The pitch in semitones: the member's own here, else the server's, else the voice's own."""
    if member.pitch is not None:
        return member.pitch
    return server.pitch if server is not None else 0


class HowSpokenResolver:
    """Reads how members are spoken: one `resolve()` per message or command."""

    def __init__(
        self, records: VoiceRecords, states: VoiceStates, language: str, languages: Sequence[str]
    ) -> None:
        """`language`: the operator's default; `languages`: those offered (with it)."""
        self.records = records
        self.states = states
        self.language = language
        self.languages = tuple(languages)
        self.detection = LanguageDetection(self.languages)  # built on first use
        self._building = threading.Lock()  # one thread builds the detector; the others wait

    def _detect(self, text: str) -> str | None:
        with self._building:
            self.detection.build()
        return self.detection.detect(text)

    async def detect(self, text: str) -> str | None:
        """The offered language `text` is written in (None: unsure, or nothing to choose
        from), worked out in a thread: never on the event loop."""
        if not self.detection.possible:
            return None
        try:
            async with asyncio.timeout(DETECT_TIMEOUT_S):
                return await asyncio.to_thread(self._detect, text)
        except TimeoutError:
            log.warning("language detection took over %.0f s: the server's language reads",
                        DETECT_TIMEOUT_S)  # fmt: skip
            return None

    async def resolve(
        self, user_id: int, guild_id: int | None, *, server: ServerSettings | None = None
    ) -> HowSpoken:
        """`server`: the server's settings, when the caller has read them already."""
        if guild_id is None:  # a DM: no server, no member settings
            return HowSpoken(self, user_id, None, MemberSettings(), None)
        db = self.records.db
        member = await db.members.get(user_id, guild_id)
        if server is None:
            server = await db.guilds.get(guild_id)
        return HowSpoken(self, user_id, guild_id, member, server)

    def language_of(self, member: MemberSettings, server: ServerSettings | None) -> str:
        for choice in (member.language, server.language if server is not None else None):
            if choice and choice in self.languages:
                return choice
        return self.language

    def model_of(self, language: str) -> str | None:
        """The model a language names: None for the default one."""
        return None if language == self.language else language
