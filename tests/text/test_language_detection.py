"""Which offered language a message is written in (bot/text/language_detection.py): only the
offered ones, nothing below the confidence floor, the text bounded before lingua reads it.
The rules around it (the setting, the member's own language, the thread) are in
tests/services/test_language_detection.py."""

from __future__ import annotations

import pytest
from lingua import Language

import bot.text.language_detection as detection
from bot.text.language_detection import (
    MAX_DETECTED_CHARS,
    LanguageDetection,
    detection_text,
    lingua_language,
)

OFFERED = ("english", "french", "german")
FRENCH = (
    "Bonsoir à tous, je voulais vous dire que la partie de ce soir commence un peu plus tard "
    "que prévu, parce que notre ami n'est pas encore rentré du travail. "
)
ENGLISH = "Good evening everyone, the game tonight starts a little later than we planned. "


# ---- without a detector: names and bounds (fast) --------------------------------------------
def test_pocket_tts_names_map_to_linguas_languages() -> None:
    assert lingua_language("french") == Language.FRENCH
    assert lingua_language("french_24l") == Language.FRENCH  # a variant: its language's
    assert lingua_language("klingon") is None
    both = LanguageDetection(("english", "french", "french_24l", "klingon"))
    assert both.names == {Language.ENGLISH: "english", Language.FRENCH: "french"}
    assert both.possible


def test_one_language_lingua_knows_is_nothing_to_choose_from() -> None:
    only = LanguageDetection(("english", "klingon"))
    assert not only.possible
    assert only.detect("Bonjour tout le monde, comment ça va ?") is None  # (nothing built)


def test_the_text_is_cut_to_its_bound_at_a_character_boundary() -> None:
    long = "é" * 10 * MAX_DETECTED_CHARS + "🎉"
    kept = detection_text(long)
    assert kept == "é" * MAX_DETECTED_CHARS
    assert detection_text("👍" * 1_000) == "👍" * MAX_DETECTED_CHARS  # whole code points
    assert detection_text("  merci \n\n beaucoup  ") == "merci beaucoup"


def test_links_mentions_custom_emoji_and_code_say_nothing_of_the_language() -> None:
    text = (
        "<@123456789012345678> regarde https://example.com/the/english/page <:pepe_happy:123> "
        "`print(hello)` ```\nfor word in words: say(word)\n``` merci <#123456789012345678>"
    )
    assert detection_text(text) == "regarde merci"
    assert detection_text("```never closed, all code " + "x" * 5_000) == ""


# ---- lingua itself (the first use builds its models: a second or two) ------------------------
@pytest.fixture(scope="module")
def offered() -> LanguageDetection:
    return LanguageDetection(OFFERED)


@pytest.mark.slow
def test_a_message_is_named_in_the_language_it_is_written_in(offered: LanguageDetection) -> None:
    assert offered.detect(FRENCH) == "french"
    assert offered.detect(ENGLISH) == "english"
    assert offered.detect("Gute Nacht zusammen, wer will heute Abend spielen?") == "german"
    assert offered.detect("merci beaucoup") == "french"
    assert offered.detect("https://example.com <@123456789012345678>") is None  # no words


@pytest.mark.slow
def test_only_the_offered_languages_are_ever_named() -> None:
    two = LanguageDetection(("english", "french"))
    german = "Gute Nacht zusammen, wer will heute Abend spielen?"
    assert two.detect(german) in ("english", "french", None)
    spanish = "Buenas noches a todos, ¿quién quiere jugar esta noche?"
    assert LanguageDetection(OFFERED).detect(spanish) in (*OFFERED, None)
    # the detector itself knows only them
    assert {v.language for v in two.build().compute_language_confidence_values(german)} == {
        Language.ENGLISH,
        Language.FRENCH,
    }


@pytest.mark.slow
def test_below_the_confidence_floor_no_language_is_named(
    offered: LanguageDetection, monkeypatch: pytest.MonkeyPatch
) -> None:
    unsure = ("ok", "lol", "on y va")  # chat shorthand: lingua's first guess under 0.5
    assert [offered.detect(text) for text in unsure] == [None, None, None]
    monkeypatch.setattr(detection, "CONFIDENCE_FLOOR", 0.0)  # the floor is what held them
    assert None not in [offered.detect(text) for text in unsure]


@pytest.mark.slow
def test_a_detector_is_built_once_per_set_of_languages() -> None:
    first = LanguageDetection(("english", "french")).build()
    assert LanguageDetection(("french", "english", "french_24l")).build() is first
    assert LanguageDetection(OFFERED).build() is not first


@pytest.mark.slow
def test_only_the_first_characters_are_read(
    offered: LanguageDetection, monkeypatch: pytest.MonkeyPatch
) -> None:
    french_first = FRENCH * 3 + ENGLISH * 100  # the bound falls in the French
    assert len(FRENCH * 3) > MAX_DETECTED_CHARS
    assert offered.detect(french_first) == "french"
    seen: list[int] = []
    detector = offered.build()

    class Spy:
        def compute_language_confidence_values(self, text: str) -> object:
            seen.append(len(text))
            return detector.compute_language_confidence_values(text)

    monkeypatch.setattr(offered, "build", Spy)
    assert offered.detect(ENGLISH * 1_000) == "english"
    assert seen == [MAX_DETECTED_CHARS]
