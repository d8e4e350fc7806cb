"""How one piece of speech is said (`SpeechPlan`): the model that speaks it, a voice state made
for that model, the rate and the pitch. It is decided once, before the speech is queued, by
the services' planner (bot/services/speech_plan.py), the only place with a fallback policy;
playback and the scheduler carry it as it is, and the engine speaks it as it says."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SpeechPlan:
    # the language whose model speaks and whose words these are ('': the operator's
    # TTS_LANGUAGE, for speech made without a planner: benches, the tests' speakers)
    language: str = ""
    # the model the scheduler asks for: None for TTS_LANGUAGE's, which is never unloaded; a
    # model unloaded since the plan was made is loaded again, never replaced by another
    model: str | None = None
    # a voice state for `model`: a built-in voice's name or a state file made for that model
    # (None: the model's default voice, the operator's DEFAULT_VOICE)
    voice: str | None = None
    # the member's own cloned voice it is, if any: its words say whose they are
    cloned_id: int | None = None
    rate: float = 1.0  # speaking rate (2.0: twice as fast), the pitch kept
    pitch: int = 0  # semitones higher (negative: lower), the formants kept
    # the server's queue_speedup: faster the more messages wait behind it (bot/playback)
    speedup: bool = False
    # the language asked for, when its model could not load and `language`'s speaks instead
    wanted: str | None = None

    @property
    def cloned(self) -> bool:
        return self.cloned_id is not None

    @property
    def fell_back(self) -> bool:
        """Another language's model speaks than the one asked for (the channel is told)."""
        return self.wanted is not None

    def without_voice(self) -> SpeechPlan:
        """The plan when its voice state proves unusable as it is spoken (a file gone bad
        since it was planned): the model's default voice says the same words, which already
        name a cloned voice's owner. The one change made to a plan after it was decided."""
        return replace(self, voice=None, cloned_id=None)
