"""How speech is said, decided once: how a member is spoken in a server (`HowSpoken`: their
settings and the server's, read once per message or command) and the plan of one piece of
speech (`SpeechPlanner.plan`: the model and the voice state for that model, chosen together,
with the only fallback policy). Chat, /say, /tts, "Speak this message", join notices,
previews and samples all speak as a plan says; playback and the scheduler carry it as it is.

The language is the member's own choice in that server, else the server's, else the
operator's `TTS_LANGUAGE`; a choice the operator no longer offers falls through. A chat
message's (`HowSpoken.language_for`): with the server's `detect_language` on and no language
of the member's own, the one it is written in, when lingua names one of those offered
(bot/text/language_detection.py, in a thread).

The model is that language's, loaded first if need be; when it cannot load now (it failed a
moment ago, the pool has no room, the load fails), the default model speaks instead and the
plan says so (`wanted`), for the caller to tell the channel once.

The voice is then chosen for the model that speaks: the member's choice in that server, else
their global one, else the server's default, else None (the operator's `DEFAULT_VOICE`); a
cloned voice's state is the one made for that model (made from its recording on first use),
and a cloned voice that cannot be used falls through. Words the bot composes (a poll's result,
a join notice) are said in the server's built-in voice, never a member's clone.

The speaking rate is the member's own in that server, else the server's `speaking_rate` (1.0
in a DM), as is the pitch (`/set my_pitch`, else the server's `pitch`), and whether the server
speeds speech up while messages wait (`queue_speedup`).

Blocks made by this process are remembered (`noted_block`, `blocked_since`): speech asked
for before a member's block and still being prepared after it (a voice connect, a model's
load) is not spoken.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import math
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence

import cachetools

from bot.core.errors import InternalError, UserError
from bot.i18n.translate import tr
from bot.playback.utterance import Utterance
from bot.services.change_limits import ChangeLimit
from bot.services.fallback import ModelFallback
from bot.storage.database import MemberSettings, VoiceRecord
from bot.storage.server_settings import FASTEST, SLOWEST, ServerSettings
from bot.storage.voice_records import VoiceRecords
from bot.synthesis.model_pool import ModelPool, ModelsBusyError
from bot.synthesis.speech_plan import SpeechPlan
from bot.synthesis.voice_states import VoiceStates
from bot.text.language_detection import LanguageDetection
from bot.text.phrasebook import phrasebook

__all__ = [
    "HowSpoken",
    "PlanRefused",
    "Readiness",
    "SpeechPlan",
    "SpeechPlanner",
    "VoiceFrom",
    "pitch_of",
    "rate_of",
]

log = logging.getLogger(__name__)

# a way out, not a budget: a detection takes milliseconds, the first one builds the detector
# (its languages' models: a second or two, longer beside busy model threads)
DETECT_TIMEOUT_S = 30.0

# Models a detected language (`detect_language`) may load, per member and per server, in a
# window: each load is seconds of CPU, and with TTS_MODELS models kept a member writing in
# turn in more languages made the pool load and unload without end. As /set my_language's
# changes (bot/services/language_choice.py); past it, the message is read in the language
# the member would have without detection. A language whose model is loaded costs nothing.
DETECTED_LOADS = 3
DETECTED_LOADS_WINDOW_S = 300.0

MAX_RECENT = 10_000  # blocks remembered in memory (`blocked_since`)

# what a member chose to speak with: a built-in voice's name or one of their cloned voices
# (None: no choice of theirs)
VoiceChoice = str | VoiceRecord | None


class VoiceFrom(enum.Enum):
    """Whose choice of voice a plan follows, when it names no voice itself."""

    MEMBER = "the member's choice here, else the server's built-in voice"
    SERVER = "the server's built-in voice: words the bot composes, never a member's clone"


class PlanRefused(InternalError):
    """What a way in that refuses rather than falls back (the speech service) is told when
    its speech cannot be planned as asked: why (`reason`: "unknown_language", "load_limit",
    "no_room"), and in how many seconds to ask again (None: asking again will not help)."""

    def __init__(self, message: str, *, reason: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after


class Readiness(enum.Enum):
    """Whether speech in a language can be planned at once, for a reply that says so."""

    READY = "its model is loaded (or it is the default's), the member's voice made for it"
    FALLS_BACK = "its model failed to load a moment ago: the default language speaks now"
    LOADING = "its model loads first"
    PREPARING = "the member's cloned voice is made for its model first"


class HowSpoken:
    """How one member is spoken in one server (`guild_id` None: in a DM)."""

    def __init__(
        self,
        planner: SpeechPlanner,
        user_id: int,
        guild_id: int | None,
        member: MemberSettings,
        server: ServerSettings | None,
    ) -> None:
        self._planner = planner
        self.user_id = user_id
        self.guild_id = guild_id
        self.member = member
        self.server = server
        self.language = planner.language_of(member, server)  # wanted: its model may not load
        self.rate = rate_of(member, server)
        self.pitch = pitch_of(member, server)  # semitones, in the rate's stretcher
        # the server's queue_speedup: the rate rises while messages wait (bot/playback)
        self.speedup = server is not None and server.queue_speedup
        self._chosen: VoiceChoice = None
        self._chosen_read = False  # the voice choice is read when a voice is first needed

    @property
    def own_language(self) -> bool:
        """The member chose a language here that is offered: it wins over detection."""
        return self.member.language is not None and self.member.language in (
            self._planner.languages
        )

    async def language_for(self, text: str) -> str:
        """The language a message of theirs is read in: theirs if they chose one; else, with
        the server's `detect_language` on, the one `text` is written in (among those offered,
        when lingua is sure enough); else the server's (`language`)."""
        if self.server is None or not self.server.detect_language or self.own_language:
            return self.language
        return await self._planner.detect(text) or self.language

    async def chosen_voice(self) -> VoiceChoice:
        """The member's choice of voice here (read once, when first asked)."""
        if not self._chosen_read:
            records = self._planner.records
            self._chosen = await records.chosen_voice(self.user_id, self.guild_id)
            self._chosen_read = True
        return self._chosen


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


class SpeechPlanner:
    """Reads how members are spoken (`resolve`, once per message or command) and plans their
    speech (`plan`): the one place the model and the voice are chosen."""

    def __init__(
        self,
        records: VoiceRecords | None,
        states: VoiceStates | None,
        language: str,
        languages: Sequence[str],
        models: ModelPool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`records`, `states`: the members' voices (None for the speech service alone, which
        plans no member's speech); `language`: the operator's default; `languages`: those
        offered (with it); `models`: the languages' models (None: only the default one,
        always loaded)."""
        self._records = records
        self._states = states
        self.language = language
        self.languages = tuple(languages)
        self.models = models
        self.fallback = ModelFallback()  # languages that failed to load lately: the default speaks
        self.detection = LanguageDetection(self.languages)  # built on first use
        self._building = threading.Lock()  # one thread builds the detector; the others wait
        self._detected_loads = ChangeLimit(DETECTED_LOADS, DETECTED_LOADS_WINDOW_S, clock)
        # blocks made here, counted: what was asked before a block and is about to be spoken
        # after it (a voice connect, a model's load in between) is dropped, with no query
        self._block_epoch = 0
        self._recent: cachetools.LRUCache[tuple[int, int], int] = cachetools.LRUCache(MAX_RECENT)

    @property
    def records(self) -> VoiceRecords:
        if self._records is None:
            raise RuntimeError("the speech service's planner plans no member's speech")
        return self._records

    @property
    def states(self) -> VoiceStates:
        if self._states is None:
            raise RuntimeError("the speech service's planner plans no member's speech")
        return self._states

    # ---- how a member is spoken ------------------------------------------------------------
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

    def for_server(self, server: ServerSettings) -> HowSpoken:
        """How the bot itself is spoken in a server (a join notice): the server's language,
        at the voice's own rate and pitch, never sped up."""
        spoken = HowSpoken(self, 0, server.guild_id, MemberSettings(rate=1.0, pitch=0), server)
        spoken.speedup = False
        return spoken

    def language_of(self, member: MemberSettings, server: ServerSettings | None) -> str:
        for choice in (member.language, server.language if server is not None else None):
            if choice and choice in self.languages:
                return choice
        return self.language

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
            log.warning(
                "language detection took over %.0f s: the server's language reads", DETECT_TIMEOUT_S
            )
            return None

    async def chat_language(self, spoken: HowSpoken, written: str, author: Hashable) -> str:
        """The language a chat message of `author`'s is read in (`HowSpoken.language_for`);
        a detected one other than theirs loads its model only within the member's and the
        server's DETECTED_LOADS (counted against both when it may), else theirs reads it."""
        language = await spoken.language_for(written)
        if language == spoken.language or not self.needs_loading(language):
            return language
        keys = (("member", spoken.guild_id, author), ("server", spoken.guild_id))
        if any(self._detected_loads.waiting(key) for key in keys):
            return spoken.language
        for key in keys:
            self._detected_loads.take(key)
        return language

    def still_speaks(self, language: str) -> str:
        """The language speech worded for `language` is said in now: it, while its model is
        loaded, else the default one (a waiting message re-worded after its model went)."""
        return self.language if self.needs_loading(language) else language

    async def readiness(self, spoken: HowSpoken, language: str) -> tuple[Readiness, str | None]:
        """Whether `spoken`'s speech in `language` can be planned at once, and the name of
        the cloned voice being prepared (`Readiness.PREPARING`)."""
        if self.needs_loading(language):
            if self.fallback.failed_lately(language):
                return Readiness.FALLS_BACK, None
            return Readiness.LOADING, None
        if voice := await self.to_prepare(spoken, language):
            return Readiness.PREPARING, voice
        return Readiness.READY, None

    # ---- blocks made while speech was prepared ---------------------------------------------
    @property
    def block_epoch(self) -> int:
        """Read when a request arrives, before its block check; `blocked_since` later."""
        return self._block_epoch

    def noted_block(self, guild_id: int, user_id: int) -> None:
        """A member was just blocked here (`BlockService`'s `on_block`)."""
        self._recent[(guild_id, user_id)] = self._block_epoch
        self._block_epoch += 1

    def noted_unblock(self, guild_id: int, user_id: int) -> None:
        """A member was just unblocked here (`BlockService`'s `on_unblock`): the block is
        forgotten, so what they asked for and is still being prepared is spoken."""
        self._recent.pop((guild_id, user_id), None)

    def blocked_since(self, guild_id: int, user_id: int, epoch: int) -> bool:
        """Blocked here since `epoch` (a `block_epoch` read before the block check), by this
        process: then what they asked for is not spoken (no query)."""
        return self._recent.get((guild_id, user_id), -1) >= epoch

    # ---- the model -------------------------------------------------------------------------
    def model_of(self, language: str) -> str | None:
        """The model a plan names for a language: None for the default one."""
        return None if language == self.language else language

    def needs_loading(self, language: str) -> bool:
        return self.models is not None and not self.models.is_loaded(self.model_of(language))

    async def load_or_default(self, language: str) -> str:
        """The language that speaks: `language` once its model is loaded, else the default
        one. A load that fails (the weights, the network, a config: anything) keeps the
        language out for a minute, so that each message does not wait for the same failure.
        A busy pool (`ModelsBusyError`: every model it may keep is in use) is no failed
        load: this speech is said in the default language, and the next one tries again."""
        if self.models is None or language == self.language:
            return language  # (no pool: every language's model counts as loaded)
        if self.needs_loading(language) and self.fallback.failed_lately(language):
            return self.language
        try:
            await self.models.ensure(language)
        except ModelsBusyError:
            log.info("no room to load the %s model now: this speech in the default", language)
            return self.language
        except Exception as error:  # the weights, the network, a config: any failure
            self.fallback.failed(language, error)
            return self.language
        return language

    # ---- the plan --------------------------------------------------------------------------
    async def plan(
        self,
        spoken: HowSpoken,
        language: str | None = None,
        *,
        voice: VoiceFrom | str | VoiceRecord = VoiceFrom.MEMBER,
    ) -> SpeechPlan:
        """How `spoken`'s speech in `language` (default: theirs) is said: that language's
        model, loaded first if need be, else the default one (`load_or_default`); then the
        voice for the model that speaks: `voice` (a built-in voice's name, or one of the
        member's cloned voices: a preview), else whose choice it follows (`VoiceFrom`)."""
        wanted = spoken.language if language is None else language
        speaks = await self.load_or_default(wanted)
        model = self.model_of(speaks)
        if isinstance(voice, VoiceFrom):
            chosen = await spoken.chosen_voice() if voice is VoiceFrom.MEMBER else None
            state, cloned_id = await self._voice_for(chosen, spoken.server, model)
        elif isinstance(voice, VoiceRecord):  # this voice or none: a preview is of it
            state, cloned_id = await self.states.usable_state(voice, model), voice.id
            if state is None:
                raise UserError(tr("That voice cannot be used on this bot right now."))
        else:
            state, cloned_id = voice, None
        return SpeechPlan(
            speaks,
            model,
            state,
            cloned_id,
            rate=spoken.rate,
            pitch=spoken.pitch,
            speedup=spoken.speedup,
            wanted=None if speaks == wanted else wanted,
        )

    # ---- naming ----------------------------------------------------------------------------
    def said(self, language: str | None, name: str) -> str:
        """ "NAME said", in `language`'s words (None: the default's)."""
        return phrasebook(language or self.language).said.format(name=name)

    def attributed(
        self,
        plan: SpeechPlan,
        name: str,
        text: str,
        what: str,
        where: tuple[int, int | None],
        *,
        announced: bool = False,
    ) -> str:
        """Speech in a member's cloned voice always says who asked for it ("NAME said"), by
        their username (`name`): one they cannot make another member's, unlike a server
        nickname or a /set nick, so a cloned voice's speech never sounds like someone else's.
        Each use is logged (`what`, `where`: (member, server); which voice; never the text).
        `announced`: the text says whose words they are already."""
        if plan.cloned_id is None:
            return text
        log.info(
            "cloned voice %s used for %s by user %s in server %s", plan.cloned_id, what, *where
        )
        return text if announced else f"{self.said(plan.language, name)}: {text}"

    # ---- the speech service's plan ---------------------------------------------------------
    def service_language(self, asked: str | None) -> str:
        """The language a service request asked for (None or '': the default), if offered."""
        language = (asked or self.language).strip().lower()
        if language not in self.languages:
            raise PlanRefused(
                f"Language {language[:40]!r} is not offered here; these are: "
                f"{', '.join(self.languages)}.",
                reason="unknown_language",
            )
        return language

    async def service_plan(
        self, language: str, voice: str | None, speed: float, client: str
    ) -> SpeechPlan:
        """A speech service request's plan: the language asked (`service_language`) with its
        model, loaded first within the load limits a detected language has in chat (per
        client, as per member; for all the service's clients, as per server), else refused
        (`PlanRefused`: the service never falls back to another language); the voice asked;
        the speed clamped to the rates the stretcher keeps the pitch at; no pitch."""
        if language != self.language and self.models is not None:
            self._may_load(language, (("client", client), ("service",)))
            try:
                await self.models.ensure(language)
            except ModelsBusyError:
                raise PlanRefused(
                    f"No room to load the {language} model now; try again later.",
                    reason="no_room",
                    retry_after=10,
                ) from None
        return SpeechPlan(
            language, self.model_of(language), voice, rate=min(FASTEST, max(SLOWEST, speed))
        )

    def _may_load(self, language: str, keys: tuple[Hashable, ...]) -> None:
        """Count a load of `language`'s model against each of `keys`' DETECTED_LOADS
        (`PlanRefused` past any, counting nothing): a model loaded, or loading for another
        request, costs nothing."""
        assert self.models is not None
        if self.models.is_loaded(language) or self.models.is_loading(language):
            return
        wait_s = max(self._detected_loads.waiting(key) for key in keys)
        if wait_s:
            log.info("not loading %s for a service client: its loads are over the limit", language)
            raise PlanRefused(
                f"Too many language models were loaded lately; {language} can be loaded again "
                f"in {math.ceil(wait_s)} s (a language already loaded can be used now).",
                reason="load_limit",
                retry_after=math.ceil(wait_s),
            )
        for key in keys:
            self._detected_loads.take(key)

    # ---- what a server hears ---------------------------------------------------------------
    def utterance(
        self,
        plan: SpeechPlan,
        text: str,
        *,
        asked_at: float | None = None,
        lead: str = "",
        author_id: int | None = None,
        message_id: int | None = None,
        on_start: Callable[[Utterance], None] | None = None,
        sounds: Mapping[str, bytes] | None = None,
        phrase: bool = False,
    ) -> Utterance:
        """The one place speech becomes what a server's speaker queues: `text` as `plan` says
        (see `Utterance` for the rest)."""
        return Utterance(
            text,
            plan,
            time.monotonic() if asked_at is None else asked_at,
            message_id,
            lead,
            on_start=on_start,
            phrase=phrase,
            author_id=author_id,
            sounds=sounds if sounds is not None else {},
        )

    def members_utterance(
        self,
        plan: SpeechPlan,
        name: str,
        words: str,
        what: str,
        where: tuple[int, int | None],
        *,
        asked_at: float | None = None,
        announced: bool = False,
    ) -> Utterance:
        """A member's speech (/say, a preview, a message asked for): attributed when a clone
        speaks it (`attributed`), its "NAME said" then played from the phrase cache."""
        said = self.said(plan.language, name)
        text = self.attributed(plan, name, words, what, where, announced=announced)
        lead = said if text.startswith(f"{said}: ") else ""
        return self.utterance(plan, text, asked_at=asked_at, lead=lead, author_id=where[0])

    async def _voice_for(
        self, chosen: VoiceChoice, server: ServerSettings | None, model: str | None
    ) -> tuple[str | None, int | None]:
        """(the voice state for `model`, the cloned voice's id if it is one) of a choice."""
        if isinstance(chosen, str):
            return chosen, None
        if chosen is not None:
            state = await self.states.usable_state(chosen, model)
            if state is not None:
                return state, chosen.id
        if server is not None and server.default_voice:
            return server.default_voice, None
        return None, None

    async def to_prepare(self, spoken: HowSpoken, language: str) -> str | None:
        """The name of the member's cloned voice while its state for `language`'s loaded model
        (not the default one) is still to be made (None: nothing to prepare)."""
        model = self.model_of(language)
        if model is None:
            return None
        chosen = await spoken.chosen_voice()
        if not isinstance(chosen, VoiceRecord):
            return None
        return chosen.name if await self.states.needs_state(chosen, model) else None
