"""Roman numerals where a numeral is meant, said as each language says them. Pure functions.

A capital "I", "V", "MIX" or "CD" is most often a word or an abbreviation, so a roman numeral
is read only where something around it says it is one:
- a ruler's or a pope's name before it ("Elizabeth II", "Louis XIV", "King Charles III"):
  English "the Second", French "Quatorze" ("Premier" for I), German "der Sechzehnte" (in the
  case a preposition asks: "unter Friedrich dem Zweiten"), Spanish and Portuguese an ordinal up
  to ten and a number above ("Felipe sexto", "Alfonso trece"), Italian an ordinal ("Benedetto
  sedicesimo"), Dutch "de Tweede";
- a century ("XIXe siècle", "el siglo XX", "im XX. Jahrhundert"), or a French, Dutch or
  English ordinal ending ("la Ve République", "François Ier");
- a word that labels a numbered thing before it ("World War II", "Part IV", "tome III",
  "capitolo II": an Italian chapter or act is "secondo");
- a title: a capitalised word before a numeral of I, V and X from II to XXXIX ("Final Fantasy
  VII", "Rocky IV"), or V or X after an acronym or two capitalised words ("GTA V", "Final
  Fantasy X").
Anywhere else it is left as written: a lone "I", "V" or "X", and numerals holding L, C, D or
M ("MIX", "CD", "DC", "XL") unless a ruler, a century or a label stands beside them.
"""

from __future__ import annotations

import functools
import re

from bot.text import noun_genders
from bot.text.numbers import Numbering, numbering
from bot.text.numbers import _cardinal as cardinal_words
from bot.text.numbers import _german_ordinal as german_ordinal_words
from bot.text.numbers import _ordinal as ordinal_words

_NUMERAL = "M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"
_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
# a written ordinal ending on a numeral, per num2words language: XIXe, Ier, XXth, XIXde
_ENDINGS: dict[str, tuple[str, ...]] = {
    "fr": ("e", "ème", "eme", "ᵉ", "er", "ᵉʳ", "re", "ère", "ʳᵉ"),
    "nl": ("e", "de", "ste"),
    "en": ("th", "st", "nd", "rd"),
    "de": (".",),
}
_FEMININE_ENDINGS = frozenset({"re", "ère", "ʳᵉ"})
_NEXT_WORD = re.compile(r"[ \t\u00a0]*([^\W\d_]+)")


def _words(listed: str) -> frozenset[str]:
    """A list written as words on lines, for translators to read and add to."""
    return frozenset(listed.split())


# rulers' and popes' names (casefolded, every language's spelling): "Henry VIII", "Pie XII"
REGNAL_NAMES = _words(
    """
    henry edward george william james charles richard john stephen louis philip frederick
    alexander nicholas peter paul leo pius gregory benedict innocent clement urban boniface
    sixtus julius adrian celestine honorius martin constantine justinian otto rudolf sigismund
    albert ferdinand maximilian leopold ivan david robert alfonso umberto
    wilhelm ludwig heinrich friedrich karl franz joseph josef johannes benedikt gregor klemens
    innozenz georg eduard jakob philipp ernst konrad lothar rudolph maximilian iwan
    felipe carlos juan enrique pedro sancho jaime ramiro luis pablo benedicto pío gregorio
    león clemente inocencio amadeo fernando
    luigi carlo vittorio emanuele ferdinando francesco federico enrico giovanni paolo
    benedetto pio leone innocenzo giulio sisto alessandro urbano bonifacio filippo giacomo
    riccardo guglielmo pietro ottone napoleone giorgio edoardo
    joão manuel afonso sebastião josé luís dinis duarte filipe miguel bento paulo leão
    gregório inocêncio henrique jorge guilherme eduardo ricardo napoleão
    willem lodewijk karel filips hendrik frederik boudewijn jan paulus benedictus gregorius
    napoleon nicolaas pieter jacobus
    henri philippe françois jean napoléon pie benoît grégoire clément édouard guillaume
    jacques pierre frédéric alexandre nicolas léopold baudouin rainier amédée hugues othon
    rodolphe sigismond maximilien rené victor
    """
)
# those whose ordinal is feminine: "Isabel segunda", "Elisabetta seconda", "Élisabeth Deux"
FEMININE_NAMES = _words(
    """
    elizabeth elisabeth élisabeth elisabetta isabel isabella isabelle mary maria marie maría
    victoria vittoria catherine catalina caterina katharina catarina anne anna ana juana joana
    giovanna jeanne johanna margaret margarete margrethe margarita margherita margarida
    marguerite christina cristina kristina beatrix juliana wilhelmina leonor eleanor teresa
    thérèse theresia sophia sophie sofia louise luisa luise amalia carlota charlotte carolina
    caroline matilde mathilde matilda
    """
)
_NAMES = REGNAL_NAMES | FEMININE_NAMES
# a title before a name makes any name a ruler's: "King Harald V", "Papst Leo XIV"
RULER_TITLES = _words(
    """
    king queen pope emperor empress tsar czar prince princess duke sultan pharaoh
    roi reine pape empereur impératrice princesse duc pharaon
    könig königin kaiser kaiserin papst prinz prinzessin herzog zar
    rey reina papa emperador emperatriz príncipe princesa duque faraón don
    re regina imperatore imperatrice principe principessa duca faraone
    rei rainha imperador imperatriz duquesa dom
    koning koningin paus keizer keizerin prins prinses hertog tsaar
    """
)
# words that label a numbered thing: "World War II", "Part IV", "Teil II", "capítulo III"
LABELS = _words(
    """
    part chapter episode act book volume vol season phase level stage round war tome section
    article title type class grade category mark mk tier wave bowl
    partie chapitre épisode acte livre saison niveau titre classe catégorie guerre
    teil kapitel folge akt band buch staffel stufe typ klasse kategorie artikel abschnitt
    parte capítulo episodio acto libro tomo volumen temporada fase nivel tipo clase categoría
    artículo título sección
    capitolo atto stagione livello classe categoria articolo titolo sezione canto scena
    episódio ato livro nível seção artigo
    deel hoofdstuk aflevering akte boek seizoen niveau klasse categorie titel sectie
    """
)
# Italian reads these labels' numerals as ordinals: "capitolo secondo", "parte prima"
ITALIAN_ORDINAL_LABELS = _words("capitolo atto libro tomo canto parte volume articolo scena")
CENTURY_AFTER = frozenset(
    {"siècle", "siècles", "century", "jahrhundert", "jahrhunderts", "secolo", "eeuw", "siglo"}
)
# nouns a numeral before is an ordinal of: "la II Guerra Mundial", "la V República",
# "II. Weltkrieg", "la IIIe République" (French writes the ending: read above)
ORDINAL_BEFORE = frozenset(
    {"guerra", "guerre", "weltkrieg", "wereldoorlog", "república", "repubblica", "republiek"}
)
_FEMININE_BEFORE = frozenset({"guerra", "guerre", "república", "repubblica"})
CENTURY_BEFORE = frozenset({"siglo", "siglos", "século", "séculos", "secolo", "secoli"})
# English "I" after a name is the pronoun before these ("Charles I think"): not a numeral
_ENGLISH_AFTER_I = _words(
    """
    am was think have had will would can could do did don't didn't know love want need mean
    guess feel just said see like got hope wish agree
    """
)
_GERMAN_DATIVE = noun_genders.GERMAN_DATIVE | {"dem", "vom", "beim", "zum", "im", "am", "der"}
_GERMAN_ACCUSATIVE = noun_genders.GERMAN_ACCUSATIVE | {"den"}
_GERMAN_ARTICLES = frozenset({"der", "die", "das", "des", "dem", "den", "im", "am", "zum", "vom"})


@functools.lru_cache(maxsize=1024)
def value(numeral: str) -> int:
    """The number a well-formed roman numeral stands for (XIV: 14)."""
    total = 0
    for i, letter in enumerate(numeral):
        worth = _VALUES[letter]
        following = _VALUES[numeral[i + 1]] if i + 1 < len(numeral) else 0
        total += -worth if worth < following else worth
    return total


@functools.cache
def _pattern(code: str) -> re.Pattern[str]:
    endings = "|".join(re.escape(e) for e in sorted(_ENDINGS.get(code, ()), key=len, reverse=True))
    ending = rf"(?P<ending>{endings})?" if endings else "(?P<ending>)"
    return re.compile(
        rf"(?<![\w'’\-.])(?=[IVXLCDM])(?P<numeral>{_NUMERAL}){ending}"
        r"(?![\w\-]|['’](?![sS]\b))"
    )


def _capital(words: str) -> str:
    """ "twenty-first" as part of a name: "Twenty-First"."""
    return "-".join(part[:1].upper() + part[1:] for part in words.split("-"))


def _ordinal_or_number(n: int, nw: Numbering, feminine: bool) -> str:
    """Spanish and Portuguese: an ordinal up to ten ("sexto"), a number above ("trece")."""
    if n <= 10:
        return ordinal_words(n, nw, "f" if feminine else "m")
    return cardinal_words(n, nw)


def _regnal(n: int, nw: Numbering, name: str, before: str) -> str:
    """The numeral after a ruler's name, as the language says it."""
    code = nw.code
    feminine = name.casefold() in FEMININE_NAMES
    if code == "en":
        return f"the {_capital(ordinal_words(n, nw))}"
    if code == "fr":
        if n == 1:
            return "Première" if feminine else "Premier"
        return _capital(cardinal_words(n, nw))
    if code == "de":
        ordinal = _capital(ordinal_words(n, nw))  # "Zweite"
        if name.endswith("s") and name[:-1].casefold() in _NAMES:
            return f"des {ordinal}n"  # Ludwigs des Vierzehnten
        if before in _GERMAN_DATIVE:
            return f"{'der' if feminine else 'dem'} {ordinal}n"
        if before in _GERMAN_ACCUSATIVE:
            return f"{'die' if feminine else 'den'} {ordinal}{'' if feminine else 'n'}"
        return f"{'die' if feminine else 'der'} {ordinal}"
    if code in ("es", "pt_BR"):
        return _ordinal_or_number(n, nw, feminine)
    if code == "it":
        return ordinal_words(n, nw, "f" if feminine else "m")
    return f"de {_capital(ordinal_words(n, nw))}"  # Dutch: Willem de Tweede


def _century(n: int, nw: Numbering, before: str) -> str:
    code = nw.code
    if code in ("es", "pt_BR"):
        return _ordinal_or_number(n, nw, False)  # el siglo veinte, o século quinto
    if code == "de":
        return german_ordinal_words(n, nw, before, False)  # im zwanzigsten
    return ordinal_words(n, nw)


class _Context:
    """The words around one numeral in its text."""

    def __init__(self, text: str, match: re.Match[str]) -> None:
        self.text, self.end = text, match.end()
        window = text[max(0, match.start() - 60) : match.start()].rstrip(" \t\u00a0")
        touching = window[-1:].isalpha() or window[-1:] in ("-", ".", "'", "’")
        tokens = window.replace("-", " ").split()[-4:] if touching else []
        self.before = [token.strip(".,;:'’!?()") for token in tokens]

    @functools.cached_property
    def next(self) -> str:
        found = _NEXT_WORD.match(self.text, self.end, self.end + 40)
        return found.group(1) if found else ""

    def word(self, back: int) -> str:
        """The word `back` words before the numeral ('' past the start)."""
        return self.before[-back] if len(self.before) >= back else ""

    def ruler(self) -> tuple[str, str] | None:
        """(the name, the word before the name and its titles) when a ruler's name stands
        before the numeral: "Elizabeth", "King Charles", "Juan Carlos"."""
        name = self.word(1)
        if not name[:1].isupper():
            return None
        known = name.casefold() in _NAMES or (name.endswith("s") and name[:-1].casefold() in _NAMES)
        back = 2
        while back <= len(self.before) and self.word(back)[:1].isupper():
            if self.word(back).casefold() in RULER_TITLES:
                known = True
            elif self.word(back).casefold() not in _NAMES:
                break
            back += 1
        if not known:
            return None
        first = self.word(back - 1) if back - 1 > 1 else name
        return (first if first.casefold() in FEMININE_NAMES else name), self.word(back).casefold()

    def titled(self, numeral: str) -> bool:
        """A title's number: "Final Fantasy VII", "Rocky IV", "GTA V", "Final Fantasy X"."""
        previous = self.word(1)
        if not previous[:1].isupper():
            return False
        if _pattern("en").fullmatch(previous):
            return False  # "II II": a run of capitals, not a title
        if numeral in ("V", "X"):
            return (previous.isupper() and len(previous) >= 2) or self.word(2)[:1].isupper()
        return len(numeral) >= 2 and set(numeral) <= set("IVX") and numeral not in ("XX", "XXX")


def _read(match: re.Match[str], text: str, nw: Numbering) -> str:
    numeral, ending = match.group("numeral"), match.group("ending") or ""
    written = match.group(0)
    if not numeral or numeral in ("L", "C", "D", "M"):
        return written  # an initial, a size, a word ("Ce", "Le", "M.")
    if ending in ("er", "ᵉʳ", "re", "ère", "ʳᵉ") and numeral != "I":
        return written
    n, code = value(numeral), nw.code
    around = _Context(text, match)
    previous = around.word(1)
    ruler = around.ruler()
    if code == "en" and numeral == "I" and around.next.casefold() in _ENGLISH_AFTER_I:
        return written  # "Charles I think": the pronoun
    if ending and code != "de":
        if ruler is not None and code == "fr":
            return _regnal(n, nw, *ruler)  # François Ier
        if code == "fr":
            kind = "f" if ending in _FEMININE_ENDINGS else "m"
            return ordinal_words(n, nw, kind)  # le XIXe siècle, la Ire République
        return ordinal_words(n, nw)  # de XIXe eeuw, the XXth century
    if ending:  # German "XIV.": a ruler's, a century's, or an ordinal before a noun
        following = around.next
        if ruler is not None:
            said = _regnal(n, nw, *ruler)
            return said if following[:1].islower() else said + "."
        after_article = previous.casefold() in _GERMAN_ARTICLES and set(numeral) <= set("IVXL")
        if following.casefold() in CENTURY_AFTER or (after_article and following[:1].isupper()):
            return german_ordinal_words(n, nw, previous.casefold(), False)  # am II. Tag
        if following.casefold() in ORDINAL_BEFORE and set(numeral) <= set("IVX"):
            return _capital(ordinal_words(n, nw)) + "r"  # II. Weltkrieg: Zweiter Weltkrieg
        return written
    if around.next.casefold() in CENTURY_AFTER or previous.casefold() in CENTURY_BEFORE:
        return _century(n, nw, previous.casefold())
    if ruler is not None:
        return _regnal(n, nw, *ruler)
    following = around.next.casefold()
    if following in ORDINAL_BEFORE and set(numeral) <= set("IVX") and code != "en":
        feminine = noun_genders.feminine(following, code) or following in _FEMININE_BEFORE
        return ordinal_words(n, nw, "f" if feminine else "m")  # la II Guerra Mundial: segunda
    if previous.casefold() in LABELS:
        label = previous.casefold()
        if code == "it" and label in ITALIAN_ORDINAL_LABELS:
            feminine = noun_genders.feminine(label, "it")
            return ordinal_words(n, nw, "f" if feminine else "m")  # parte prima
        said = cardinal_words(n, nw)
        return _capital(said) if code == "en" and previous[:1].isupper() else said
    if around.titled(numeral):
        said = cardinal_words(n, nw)
        return _capital(said) if code == "en" else said
    return written


_WORLD_WAR = re.compile(r"\bWW(III|II|I|3|2|1)\b")
_WARS = {"I": "One", "1": "One", "II": "Two", "2": "Two", "III": "Three", "3": "Three"}


def read_roman(text: str, language: str) -> str:
    """`text` with the roman numerals that are meant as numbers said in `language` (a
    pocket-tts language name); every other capital letter left as written."""
    nw = numbering(language)
    if nw.code == "en" and "WW" in text:  # WWII: "World War Two"
        text = _WORLD_WAR.sub(lambda m: f"World War {_WARS[m.group(1)]}", text)
    return _pattern(nw.code).sub(lambda match: _read(match, text, nw), text)
