"""Which of the offered languages a chat message is written in (a server's `detect_language`).

`LanguageDetection` wraps lingua (`lingua-language-detector`, offline, its models inside the
wheel) restricted to the languages the operator offers, as pocket-tts names them (`french`,
`french_24l`). Blocking calls: the caller runs them off the event loop. Building a detector
loads each language's n-gram models (about a second for two languages), so it is done once
per set of languages and cached.

A message's text is bounded before lingua sees it: links, Discord markup (mentions, custom
emoji) and code are left out, then at most MAX_DETECTED_CHARS characters are kept. Below
CONFIDENCE_FLOOR no language is named, and the caller keeps the server's language.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from lingua import Language, LanguageDetector, LanguageDetectorBuilder

# lingua's confidence for its first guess, below which no language is named. Measured on short
# chat lines (bench/detect_language.py): with English and French offered, 0.5 named 3 of 50 in
# the wrong language, 0.6 one ("ok" as English) and left 9 to the server's language; with the
# seven languages 0.5 named 4 of 70 wrong, 0.6 one. A wrong voice is worse than the server's.
CONFIDENCE_FLOOR = 0.6
MAX_DETECTED_CHARS = 400  # the detector's cost grows with the text; 400 characters tell
_MAX_SCANNED_CHARS = 4 * MAX_DETECTED_CHARS  # what the clean-up below reads of a message

# what says nothing of the language: links, <@mentions>, <:custom:emoji>, <#channels>, code
_NOT_WORDS = re.compile(r"```.*?(?:```|\Z)|`[^`]*`|<[^<>\s]{1,100}>|\b\w+://\S+", re.DOTALL)


def detection_text(text: str) -> str:
    """The part of a message lingua is shown: bounded before the clean-up, then cut to
    MAX_DETECTED_CHARS characters (whole code points: a Python string has no half ones)."""
    cleaned = _NOT_WORDS.sub(" ", text[:_MAX_SCANNED_CHARS])
    return " ".join(cleaned.split())[:MAX_DETECTED_CHARS]


def lingua_language(name: str) -> Language | None:
    """lingua's language for a pocket-tts language name (`french_24l` is French); None for one
    lingua does not know."""
    try:
        return Language.from_str(name.split("_")[0])
    except ValueError:
        return None


@functools.lru_cache(maxsize=4)
def _detector(languages: frozenset[Language]) -> LanguageDetector:
    """One detector per set of languages, its models loaded now (slow: off the event loop)."""
    builder = LanguageDetectorBuilder.from_languages(*languages)
    return builder.with_preloaded_language_models().build()


class LanguageDetection:
    """Detects which of `languages` (pocket-tts names, the operator's offer) a text is in."""

    def __init__(self, languages: Sequence[str]) -> None:
        self.names: dict[Language, str] = {}  # lingua's language -> the first offered name
        for name in languages:
            language = lingua_language(name)
            if language is not None:
                self.names.setdefault(language, name)

    @property
    def possible(self) -> bool:
        """Two languages lingua knows are offered: else there is nothing to choose between."""
        return len(self.names) >= 2

    def build(self) -> LanguageDetector:
        """The detector for these languages (blocking the first time: loads their models)."""
        return _detector(frozenset(self.names))

    def detect(self, text: str) -> str | None:
        """The offered language `text` is written in, or None when it is too unsure (below
        CONFIDENCE_FLOOR), there is no text to tell, or only one language could be named.
        Blocking: run it in a thread."""
        text = detection_text(text)
        if not self.possible or not text:
            return None
        values = self.build().compute_language_confidence_values(text)
        if not values or values[0].value < CONFIDENCE_FLOOR:
            return None
        return self.names.get(values[0].language)
