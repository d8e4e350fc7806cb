"""What a server is to hear: one message's words and how they are spoken (`Utterance`, its
`SpeechPlan` decided before it is queued), as a server's speaker
(`bot.playback.speakers`) queues and plays it."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from bot.synthesis.speech_plan import SpeechPlan


@dataclass
class Utterance:
    text: str
    # how it is said (the model, the voice state for it, rate, pitch): carried as it is
    plan: SpeechPlan = field(default_factory=SpeechPlan)
    requested_at: float = field(default_factory=time.monotonic)
    message_id: int | None = None  # the chat message it reads, if any (edits, deletions)
    lead: str = ""  # the phrase `text` starts with ("Alice said"): played from the phrase cache
    # called as its synthesis begins, in playing order: its last chance to settle its words
    # (auto-reading decides there whether to say "NAME said", from who was heard last)
    on_start: Callable[[Utterance], None] | None = None
    # the whole text is a short phrase said again and again ("Alice joined"): played from the
    # phrase cache when it is there, and kept there once synthesized
    phrase: bool = False
    # whose words these are (a message's author, /say's member): a block drops them waiting
    author_id: int | None = None
    # the sounds of the words marked in `text` (/dict sound), by casefolded word: 48 kHz mono
    # s16le PCM, played in place of the word, never through the model (bot/text/words.py's
    # `sound_parts`: at most MAX_SOUND_PLAYS a message)
    sounds: Mapping[str, bytes] = field(default_factory=dict)
