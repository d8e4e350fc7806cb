"""Units of speech: a message cut into units, the job that carries them to a sink, and what
a synthesizer returns. The scheduler (`scheduler.py`) picks which job's unit goes next."""

from __future__ import annotations

import asyncio
import collections
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from bot.synthesis.speech_plan import SpeechPlan
from bot.synthesis.tempo import Tempo, normal

FIRST_UNIT_CHARS = 60
UNIT_CHARS = 180
Owner = tuple[int, int | None]  # (member, server; None for a DM)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?…])\s+")


def cut_text(text: str, limit: int) -> tuple[str, str]:
    """Split `text` near `limit`: after a clause mark if there is one late enough, else at a
    space; never inside a word unless it has no space at all."""
    window = text[: limit + 1]
    for marks in (",;:", " "):
        at = max(window.rfind(m) for m in marks)
        if at >= limit // 3:
            return text[: at + 1].strip(), text[at + 1 :].strip()
    return text[:limit], text[limit:]


CUT_MARKS = ".!?…,;:"  # where pocket-tts cuts a text into the chunks its model takes


def model_text(words: str) -> str:
    """The words with a place to cut at least every UNIT_CHARS characters, for a batch, which
    hands a job's whole text to pocket-tts: it cuts a text into chunks at sentence ends and, in
    a long sentence, at `,` `;` `:` only, so a run with none (prose without punctuation) was one
    chunk, past the model's context at 4,096 characters and skipping words well before. A
    sentence is cut as units are (`split_units`: at a clause mark near UNIT_CHARS, else at a
    space), and a cut where there was no mark gets a comma; a sentence short enough, or with
    its own marks, is left as it is."""
    units = split_units(words, first_chars=len(words))  # (no short first unit: no cut there)
    marked = [u if u[-1] in CUT_MARKS else f"{u}," for u in units[:-1]]
    return " ".join([*marked, *units[-1:]])


def split_units(
    text: str, first_chars: int = FIRST_UNIT_CHARS, unit_chars: int = UNIT_CHARS
) -> list[str]:
    """Sentences (long ones cut at clauses), with a short first unit for a fast start."""
    units: list[str] = []
    for sentence in _SENTENCE_SPLIT.split(text.strip()):
        while len(sentence) > unit_chars:
            head, sentence = cut_text(sentence, unit_chars)
            units.append(head)
        if sentence:
            units.append(sentence)
    if units and len(units[0]) > first_chars:
        head, rest = cut_text(units[0], first_chars)
        units[:1] = [u for u in (head, rest) if u]
    return units


class Stream(Protocol):
    """What a synthesizer returns: an async iterator of chunks that can be cancelled."""

    def __aiter__(self) -> AsyncIterator[np.ndarray]: ...

    def cancel(self) -> None: ...

    @property
    def paced_seconds(self) -> float:
        """How long a batch held its frames back (listener far enough ahead): not work."""
        ...


# (text, voice, *, background=, language=, tempo=, last=) -> Stream
Synthesize = Callable[..., Stream]
RunCall = Callable[..., Awaitable[Any]]  # (fn, *, background=, language=) -> fn(model)


class FileSink:
    """Collects a background job's audio (a `/tts` file, a preview): never plays."""

    started = False

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []

    def buffered_seconds(self) -> float:
        return 0.0

    def feed(self, chunk: np.ndarray) -> None:
        self.chunks.append(chunk)

    def prebuffer(self, seconds: float) -> None:
        pass

    def audio(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)


class Sink(Protocol):
    """Where a job's audio goes (the guild's playback buffer)."""

    @property
    def started(self) -> bool: ...

    def buffered_seconds(self) -> float: ...

    def feed(self, chunk: np.ndarray) -> None: ...

    def prebuffer(self, seconds: float) -> None:
        """Hold back the start of playback until this much audio is buffered."""


@dataclass(eq=False)
class SpeechJob:
    units: collections.deque[str]
    voice: str | None
    sink: Sink
    requested_at: float
    key: object = None  # the guild, for logs and fairness figures
    cancelled: bool = False
    error: BaseException | None = None
    in_flight: Stream | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    units_done: int = 0
    admitted: bool = False  # its first unit was picked: from now on it is kept fed
    free_at: float | None = None  # when its server's voice channel became free for it
    unit_chars: int = 0  # the unit in flight: its length
    unit_audio: float = 0.0  # and the audio it gave so far
    owner: Owner | None = None  # set for background work (a file): whose request it is
    language: str | None = None  # the model that speaks it (None: the default one)
    tempo: Tempo | None = None  # its speaking rate's stretcher, across all its units
    # a message with a sound in it is a job per stretch of words: a part with words after it
    # keeps its row for them (`keeps_row`), and the next part takes that row (`kept_row`)
    keeps_row: bool = False
    kept_row: bool = False
    # who asks: "discord" (a server's speech), or the speech service's "api" and "wyoming",
    # which are admitted after Discord's and only while rows stay free for it (scheduler.py)
    source: str = "discord"

    @property
    def from_discord(self) -> bool:
        return self.source == "discord"

    @property
    def background(self) -> bool:
        return self.owner is not None

    @classmethod
    def for_text(
        cls, text: str, voice: str | None, sink: Sink, requested_at: float, key: object = None
    ) -> SpeechJob:
        return cls(collections.deque(split_units(text)), voice, sink, requested_at, key)

    @classmethod
    def planned(
        cls,
        text: str,
        plan: SpeechPlan,
        sink: Sink,
        requested_at: float,
        key: object = None,
        *,
        rate: float | None = None,
    ) -> SpeechJob:
        """The job for `text` as its plan says: its model, its voice, its rate (`rate`: the
        plan's with the queue's speed-up) and pitch."""
        job = cls.for_text(text, plan.voice, sink, requested_at, key)
        job.language = plan.model
        rate = plan.rate if rate is None else rate
        if not normal(rate, plan.pitch):  # (1x at pitch 0: no stretcher at all)
            job.tempo = Tempo(rate, plan.pitch)
        return job

    @property
    def active(self) -> bool:
        """Admitted and still has text to synthesize."""
        return self.admitted and not self.cancelled and bool(self.units or self.in_flight)

    def finish(self) -> None:
        self.done.set()
