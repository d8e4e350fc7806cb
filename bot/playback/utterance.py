"""What a server is to hear: one message's words and how they are spoken (`Utterance`), as a
server's speaker (`bot.playback.speakers`) queues and plays it."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass
class Utterance:
    text: str
    voice: str | None = None
    requested_at: float = field(default_factory=time.monotonic)
    message_id: int | None = None  # the chat message it reads, if any (edits, deletions)
    lead: str = ""  # the phrase `text` starts with ("Alice said"): played from the phrase cache
    language: str | None = None  # the model that speaks it (None: the default language)
    rate: float = 1.0  # speaking rate (2.0: twice as fast), the pitch kept
    pitch: int = 0  # semitones higher (negative: lower), the formants kept; in the rate's stretcher
    # called as its synthesis begins, in playing order: its last chance to settle its words
    # (auto-reading decides there whether to say "NAME said", from who was heard last)
    on_start: Callable[[Utterance], None] | None = None
    # the whole text is a short phrase said again and again ("Alice joined"): played from the
    # phrase cache when it is there, and kept there once synthesized
    phrase: bool = False
    # whose words these are (a message's author, /say's member): a block drops them waiting
    author_id: int | None = None
    # the server's queue_speedup: spoken faster the more messages wait behind it when its
    # synthesis begins (bot/playback/queue_speedup.py)
    speedup: bool = False
    # the sounds of the words marked in `text` (/dict sound), by casefolded word: 48 kHz mono
    # s16le PCM, played in place of the word, never through the model (bot/text/words.py's
    # `sound_parts`: at most MAX_SOUND_PLAYS a message)
    sounds: Mapping[str, bytes] = field(default_factory=dict)
