"""Read as a native speaker would, part two (issue 61): roman numerals where a numeral is
meant, fraction characters, the small ones (German "Uhr" once, Spanish "primer piso", "Mio."),
phone numbers by country, agreement after prepositions, and repetition. Each kind has a table
per language, written from that language's own conventions; a kind's cases that must stay as
written (a lone "I", "MIX", "CD") sit in the same table.

Read through `speakable`, as a chat message is.
"""

from __future__ import annotations

import pytest

from bot.text.words import Names, ReadOptions, speakable


def said(written: str, language: str) -> str:
    return speakable(written, Names(), ReadOptions(language=language, max_length=2000))


def _cases(tables: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str, str]]:
    return [(language, w, s) for language, table in tables.items() for w, s in table]


# ---- 1. roman numerals ---------------------------------------------------------------------
ROMAN: dict[str, list[tuple[str, str]]] = {
    "english": [
        # rulers and popes: "the Second"
        ("Elizabeth II was crowned", "Elizabeth the Second was crowned"),
        ("King Charles III spoke", "King Charles the Third spoke"),
        ("Henry VIII's wives", "Henry the Eighth's wives"),
        ("Pope Benedict XVI", "Pope Benedict the Sixteenth"),
        ("Louis XIV of France", "Louis the Fourteenth of France"),
        ("Queen Victoria I", "Queen Victoria the First"),
        # titles and labels: a number
        ("World War II ended in 1945", "World War Two ended in nineteen forty-five"),
        ("after World War I", "after World War One"),
        ("Final Fantasy VII is the best", "Final Fantasy Seven is the best"),
        ("Rocky IV", "Rocky Four"),
        ("GTA V is out", "GTA Five is out"),
        ("Part II of the book", "Part Two of the book"),
        ("Super Bowl LVIII", "Super Bowl Fifty-Eight"),
        ("type II diabetes", "type two diabetes"),
        # centuries written with an ending
        ("the XXth century", "the twentieth century"),
    ],
    "french": [
        ("Louis XIV et Charles X", "Louis Quatorze et Charles Dix"),
        ("François Ier", "François Premier"),
        ("Élisabeth II", "Élisabeth Deux"),
        ("le pape Jean-Paul II", "le pape Jean-Paul Deux"),
        ("Henri IV", "Henri Quatre"),
        ("le XIXe siècle", "le dix-neuvième siècle"),
        ("au XXIe siècle", "au vingt et unième siècle"),
        ("la Ve République", "la cinquième République"),
        ("tome III", "tome trois"),
        ("acte II, scène 3", "acte deux, scène trois"),
        ("Final Fantasy VII", "Final Fantasy sept"),
    ],
    "german": [
        ("Papst Benedikt XVI. war da", "Papst Benedikt der Sechzehnte war da"),
        ("unter Friedrich II. wurde", "unter Friedrich dem Zweiten wurde"),
        ("Ludwig XIV", "Ludwig der Vierzehnte"),
        ("mit Königin Elisabeth II", "mit Königin Elisabeth der Zweiten"),
        ("für Karl V", "für Karl den Fünften"),
        ("im XX. Jahrhundert", "im zwanzigsten Jahrhundert"),
        ("das XIX. Jahrhundert", "das neunzehnte Jahrhundert"),
        ("Teil II", "Teil zwei"),
        ("Final Fantasy VII", "Final Fantasy sieben"),
    ],
    "spanish": [
        ("el siglo XX", "el siglo veinte"),
        ("en el siglo XXI", "en el siglo veintiuno"),
        ("el siglo V", "el siglo quinto"),
        ("Felipe VI y Juan Carlos I", "Felipe sexto y Juan Carlos primero"),
        ("Alfonso XIII", "Alfonso trece"),
        ("Isabel II", "Isabel segunda"),
        ("el papa Juan Pablo II", "el papa Juan Pablo segundo"),
        ("capítulo IV", "capítulo cuatro"),
        ("Final Fantasy VII", "Final Fantasy siete"),
    ],
    "italian": [
        ("il XX secolo", "il ventesimo secolo"),
        ("nel XIX secolo", "nel diciannovesimo secolo"),
        ("Benedetto XVI", "Benedetto sedicesimo"),
        ("Vittorio Emanuele II", "Vittorio Emanuele secondo"),
        ("Elisabetta II", "Elisabetta seconda"),
        ("papa Giovanni Paolo II", "papa Giovanni Paolo secondo"),
        ("capitolo II", "capitolo secondo"),
        ("parte I", "parte prima"),
        ("Final Fantasy VII", "Final Fantasy sette"),
    ],
    "portuguese": [
        ("século XX", "século vinte"),
        ("no século XXI", "no século vinte e um"),
        ("Dom Pedro II", "Dom Pedro segundo"),
        ("Bento XVI", "Bento dezesseis"),
        ("João Paulo II", "João Paulo segundo"),
        ("Elizabeth II morreu", "Elizabeth segunda morreu"),
        ("capítulo III", "capítulo três"),
        ("Final Fantasy VII", "Final Fantasy sete"),
    ],
    "dutch": [
        ("Willem II", "Willem de Tweede"),
        ("Lodewijk XIV", "Lodewijk de Veertiende"),
        ("koning Willem III", "koning Willem de Derde"),
        ("de XIXe eeuw", "de negentiende eeuw"),
        ("deel III", "deel drie"),
        ("Final Fantasy VII", "Final Fantasy zeven"),
    ],
}

# a capital letter that is a word, an initial, a size or an abbreviation stays as written
ROMAN_KEPT: dict[str, list[str]] = {
    "english": [
        "I think MIX and CD are words",
        "Charles I think so",
        "Press V to jump",
        "Malcolm X",
        "size XL please",
        "love you XXX",
        "DC and CIA",
    ],
    "french": ["Ce soir Le chat", "un CD de MIX"],
    "german": ["Karl M. Meier", "ich kaufe eine CD"],
    "spanish": ["un CD y un DVD"],
    "italian": ["un CD MIX"],
    "portuguese": ["comprei um CD"],
    "dutch": ["een CD van DC"],
}


@pytest.mark.parametrize(("language", "written", "spoken"), _cases(ROMAN))
def test_roman_numerals_where_a_numeral_is_meant(language: str, written: str, spoken: str) -> None:
    assert said(written, language) == spoken


@pytest.mark.parametrize(
    ("language", "written"), [(lang, w) for lang, kept in ROMAN_KEPT.items() for w in kept]
)
def test_a_capital_that_is_no_numeral_stays_as_written(language: str, written: str) -> None:
    assert said(written, language) == written
