"""Numbers, dates, times, money and units as a speaker of the message's language says them,
and Discord's timestamps (`<t:SECONDS:STYLE>`, at the end) in the server's time zone. Pure
functions.

pocket-tts reads no digits (its maintainers leave numbers to the caller), so `read_numbers`
turns each number in a text into words, in the seven languages the bot speaks: the number
words come from `num2words`, what goes around them (units, money, times, dates) from the
tables below, one per language, for translators to read and correct.

Where the written form is ambiguous, one rule decides:
- Separators. English writes 1,000.5, the others 1.000,5 or 1 000,5. A lone "." before exactly
  three digits is a thousands separator outside English ("1.000" is a thousand in German);
  otherwise "." is a decimal point in every language ("1.5"), and "," in all but English
  (there "1,5" is a list: "one, five").
- Dates written in numbers are day first (02/12 is the 2nd of December), in English too; one
  whose second number cannot be a month (12/25) is month first. A slash pair of single digits
  (3/4, 1/5) is a fraction or a score, and a mark out of ten (7/10, 10/10) a mark: not dates.
- A four-digit number from 1100 to 2099 is a year in English ("nineteen ninety-nine"); in
  German and Dutch (where a year and a number differ in words) it is one after a month or a
  word such as "im" / "in", and in German also when no capitalised noun follows it.
- A number starting with 0, a run of more than MAX_DIGITS digits, and a phone-like run (a
  leading + or 0 before groups, three groups joined by dashes, or 555-1234) are read digit by
  digit (French reads a
  number written in pairs, 06 12 34 56 78, pair by pair, as French speakers do); so is a
  number grouped as a phone number in the language's countries (612 345 678 in Spanish,
  (21) 99876-5432 in Portuguese) or after words that call for one ("llámame al").
- ½ and 2½ are the fractions 1/2 and 2 1/2; a whole number and a fraction are one number
  ("two and a half", "deux heures et demie", "zweieinhalb").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel.dates import format_timedelta, get_day_names
from num2words import num2words

from bot.text import noun_genders
from bot.text.phrasebook import phrasebook

MAX_DIGITS = 12  # past hundreds of billions a number is an id, a card or a key: digit by digit
MAX_SPAN = 64  # characters of one number-like run read as one; a longer one piece by piece
MAX_TEXT = 20_000  # characters looked at; the services cut a message to 16,000 before it


@dataclass(frozen=True)
class Noun:
    """What a number counts: singular, plural, and the gender its "one" takes."""

    one: str
    many: str
    feminine: bool = False
    plain: bool = False  # the number is said as alone: "uno por ciento", not "un"


@dataclass(frozen=True)
class Numbering:
    """How one language says numbers (see the module's docstring for the shared rules)."""

    code: str  # num2words' language
    decimal_mark: str  # as the language writes it: "." or ","
    point: str  # said for the decimal mark
    dot: str  # said between the parts of a version or an address (1.2.3)
    minus: str
    plus: str
    divided_by: str
    range: str  # 5-10: "{a} to {b}"
    score: str  # 3-1 (the first not the smaller): "{a} to {b}"
    out_of: str  # 7/10: "{a} out of {b}"
    number: str  # #1: "number {n}"
    with_cents: str  # $5.50: "{major} {minor}"; {cents} names the cents
    units: Mapping[str, Noun]
    money: Mapping[str, Noun]
    cents: Noun
    pence: Noun
    fractions: Mapping[int, Noun]  # 1/2, 2/3, 3/4
    ordinals: Mapping[str, str]  # written suffix -> "m", "f", "short" (primer), "ms", "fs"
    scale_of: str = ""  # between a million and what it counts: "un million de dollars"
    scale_words: frozenset[str] = frozenset()  # million, millions, ...
    singular_below_two: bool = False  # "1,5 kilomètre" (French, Portuguese)
    fraction_as_number: bool = False  # "3,14": "trois virgule quatorze" (not digit by digit)
    year_cues: frozenset[str] = frozenset()  # words before a year: "im", "in"
    clock_cues: frozenset[str] = frozenset()  # words before 15.30 written with a dot: "alle"
    articles: frozenset[str] = frozenset()  # before "3°" read as an ordinal: "il", "el"
    spaced_ampm: bool = False  # "3 pm" with a space (English; "5 am Montag" is German)
    version_dot: str = ""  # said between a version's parts (v2.7.1); `dot` when empty
    date_cues: frozenset[str] = frozenset()  # words before a day/month date: "le 3/5"
    extra_units: Mapping[str, str] = field(default_factory=dict)  # written form -> unit key


# ---- the unit keys every language has; aliases map to them ---------------------------------
UNIT_ALIASES = {
    "L": "l",
    "mL": "ml",
    "gb": "GB",
    "mb": "MB",
    "kb": "KB",
    "kB": "KB",
    "tb": "TB",
    "lbs": "lb",
    "Km": "km",
    "KM": "km",
    "KG": "kg",
    "Kg": "kg",
    "kmh": "km/h",
}
MONEY_ALIASES = {
    "USD": "$",
    "US$": "$",
    "C$": "$",
    "A$": "$",
    "EUR": "€",
    "GBP": "£",
    "JPY": "¥",
    "BRL": "R$",
    "INR": "₹",
}
PENCE = frozenset({"£"})
NO_CENTS = frozenset({"¥"})


def _units(**words: Noun) -> dict[str, Noun]:
    return {
        key.replace("_per_", "/").replace("_sq", "²").replace("_cu", "³"): noun
        for key, noun in words.items()
    }


N = Noun

ENGLISH = Numbering(
    code="en",
    decimal_mark=".",
    point="point",
    dot="dot",
    minus="minus",
    plus="plus",
    divided_by="divided by",
    range="{a} to {b}",
    score="{a} to {b}",
    out_of="{a} out of {b}",
    number="number {n}",
    with_cents="{major} {minor}",
    spaced_ampm=True,
    version_dot="point",
    units={
        "km": N("kilometer", "kilometers"),
        "m": N("meter", "meters"),
        "cm": N("centimeter", "centimeters"),
        "mm": N("millimeter", "millimeters"),
        "km/h": N("kilometer per hour", "kilometers per hour"),
        "mph": N("mile per hour", "miles per hour"),
        "kg": N("kilogram", "kilograms"),
        "g": N("gram", "grams"),
        "mg": N("milligram", "milligrams"),
        "l": N("liter", "liters"),
        "ml": N("milliliter", "milliliters"),
        "GB": N("gigabyte", "gigabytes"),
        "MB": N("megabyte", "megabytes"),
        "KB": N("kilobyte", "kilobytes"),
        "TB": N("terabyte", "terabytes"),
        "GHz": N("gigahertz", "gigahertz"),
        "MHz": N("megahertz", "megahertz"),
        "Hz": N("hertz", "hertz"),
        "kWh": N("kilowatt hour", "kilowatt hours"),
        "kW": N("kilowatt", "kilowatts"),
        "W": N("watt", "watts"),
        "h": N("hour", "hours"),
        "min": N("minute", "minutes"),
        "s": N("second", "seconds"),
        "ms": N("millisecond", "milliseconds"),
        "ft": N("foot", "feet"),
        "lb": N("pound", "pounds"),
        "oz": N("ounce", "ounces"),
        "mi": N("mile", "miles"),
        "m²": N("square meter", "square meters"),
        "km²": N("square kilometer", "square kilometers"),
        "m³": N("cubic meter", "cubic meters"),
        "°C": N("degree Celsius", "degrees Celsius"),
        "°F": N("degree Fahrenheit", "degrees Fahrenheit"),
        "°": N("degree", "degrees"),
        "%": N("percent", "percent"),
    },
    money={
        "$": N("dollar", "dollars"),
        "€": N("euro", "euros"),
        "£": N("pound", "pounds"),
        "¥": N("yen", "yen"),
        "₹": N("rupee", "rupees"),
        "R$": N("real", "reais"),
        "CHF": N("Swiss franc", "Swiss francs"),
    },
    cents=N("cent", "cents"),
    pence=N("penny", "pence"),
    fractions={2: N("half", "halves"), 3: N("third", "thirds"), 4: N("quarter", "quarters")},
    ordinals={"st": "m", "nd": "m", "rd": "m", "th": "m"},
)

FRENCH = Numbering(
    code="fr",
    decimal_mark=",",
    point="virgule",
    dot="point",
    minus="moins",
    plus="plus",
    divided_by="divisé par",
    range="{a} à {b}",
    score="{a} à {b}",
    out_of="{a} sur {b}",
    number="numéro {n}",
    with_cents="{major} {minor}",
    singular_below_two=True,
    fraction_as_number=True,
    scale_of="de",
    scale_words=frozenset({"million", "millions", "milliard", "milliards"}),
    date_cues=frozenset({"le", "du", "au", "ce"}),
    units={
        "km": N("kilomètre", "kilomètres"),
        "m": N("mètre", "mètres"),
        "cm": N("centimètre", "centimètres"),
        "mm": N("millimètre", "millimètres"),
        "km/h": N("kilomètre heure", "kilomètres heure"),
        "mph": N("mile par heure", "miles par heure"),
        "kg": N("kilo", "kilos"),
        "g": N("gramme", "grammes"),
        "mg": N("milligramme", "milligrammes"),
        "l": N("litre", "litres"),
        "ml": N("millilitre", "millilitres"),
        "GB": N("gigaoctet", "gigaoctets"),
        "MB": N("mégaoctet", "mégaoctets"),
        "KB": N("kilooctet", "kilooctets"),
        "TB": N("téraoctet", "téraoctets"),
        "GHz": N("gigahertz", "gigahertz"),
        "MHz": N("mégahertz", "mégahertz"),
        "Hz": N("hertz", "hertz"),
        "kWh": N("kilowattheure", "kilowattheures"),
        "kW": N("kilowatt", "kilowatts"),
        "W": N("watt", "watts"),
        "h": N("heure", "heures", feminine=True),
        "min": N("minute", "minutes", feminine=True),
        "s": N("seconde", "secondes", feminine=True),
        "ms": N("milliseconde", "millisecondes", feminine=True),
        "ft": N("pied", "pieds"),
        "lb": N("livre", "livres", feminine=True),
        "oz": N("once", "onces", feminine=True),
        "m²": N("mètre carré", "mètres carrés"),
        "km²": N("kilomètre carré", "kilomètres carrés"),
        "m³": N("mètre cube", "mètres cubes"),
        "°C": N("degré Celsius", "degrés Celsius"),
        "°F": N("degré Fahrenheit", "degrés Fahrenheit"),
        "°": N("degré", "degrés"),
        "%": N("pour cent", "pour cent"),
    },
    extra_units={"Go": "GB", "Mo": "MB", "Ko": "KB", "To": "TB"},
    money={
        "$": N("dollar", "dollars"),
        "€": N("euro", "euros"),
        "£": N("livre", "livres", feminine=True),
        "¥": N("yen", "yens"),
        "₹": N("roupie", "roupies", feminine=True),
        "R$": N("réal", "réais"),
        "CHF": N("franc suisse", "francs suisses"),
    },
    cents=N("centime", "centimes"),
    pence=N("penny", "pence"),
    fractions={2: N("demi", "demis"), 3: N("tiers", "tiers"), 4: N("quart", "quarts")},
    ordinals={
        "er": "m",
        "ᵉʳ": "m",
        "re": "f",
        "ère": "f",
        "ʳᵉ": "f",
        "ers": "ms",
        "res": "fs",
        "ères": "fs",
        "e": "m",
        "ᵉ": "m",
        "è": "m",
        "ème": "m",
        "eme": "m",
        "es": "ms",
        "èmes": "ms",
        "emes": "ms",
        "nd": "second",
        "nde": "seconde",
        "nds": "seconds",
        "ndes": "secondes",
    },
)

GERMAN = Numbering(
    code="de",
    decimal_mark=",",
    point="Komma",
    dot="Punkt",
    minus="minus",
    plus="plus",
    divided_by="geteilt durch",
    range="{a} bis {b}",
    score="{a} zu {b}",
    out_of="{a} von {b}",
    number="Nummer {n}",
    with_cents="{major} {minor}",
    year_cues=frozenset(
        {
            "im",
            "jahr",
            "jahre",
            "jahren",
            "jahres",
            "seit",
            "bis",
            "von",
            "ab",
            "um",
            "anno",
            "vor",
            "nach",
            "sommer",
            "winter",
            "herbst",
            "frühjahr",
            "frühling",
            "ende",
            "anfang",
            "mitte",
        }
    ),
    clock_cues=frozenset({"um", "ab", "bis", "gegen"}),
    date_cues=frozenset({"am", "vom", "zum", "bis", "ab", "dem", "den"}),
    units={
        "km": N("Kilometer", "Kilometer"),
        "m": N("Meter", "Meter"),
        "cm": N("Zentimeter", "Zentimeter"),
        "mm": N("Millimeter", "Millimeter"),
        "km/h": N("Kilometer pro Stunde", "Kilometer pro Stunde"),
        "mph": N("Meile pro Stunde", "Meilen pro Stunde", feminine=True),
        "kg": N("Kilo", "Kilo"),
        "g": N("Gramm", "Gramm"),
        "mg": N("Milligramm", "Milligramm"),
        "l": N("Liter", "Liter"),
        "ml": N("Milliliter", "Milliliter"),
        "GB": N("Gigabyte", "Gigabyte"),
        "MB": N("Megabyte", "Megabyte"),
        "KB": N("Kilobyte", "Kilobyte"),
        "TB": N("Terabyte", "Terabyte"),
        "GHz": N("Gigahertz", "Gigahertz"),
        "MHz": N("Megahertz", "Megahertz"),
        "Hz": N("Hertz", "Hertz"),
        "kWh": N("Kilowattstunde", "Kilowattstunden", feminine=True),
        "kW": N("Kilowatt", "Kilowatt"),
        "W": N("Watt", "Watt"),
        "h": N("Stunde", "Stunden", feminine=True),
        "min": N("Minute", "Minuten", feminine=True),
        "s": N("Sekunde", "Sekunden", feminine=True),
        "ms": N("Millisekunde", "Millisekunden", feminine=True),
        "ft": N("Fuß", "Fuß"),
        "lb": N("Pfund", "Pfund"),
        "oz": N("Unze", "Unzen", feminine=True),
        "mi": N("Meile", "Meilen", feminine=True),
        "m²": N("Quadratmeter", "Quadratmeter"),
        "km²": N("Quadratkilometer", "Quadratkilometer"),
        "m³": N("Kubikmeter", "Kubikmeter"),
        "°C": N("Grad Celsius", "Grad Celsius"),
        "°F": N("Grad Fahrenheit", "Grad Fahrenheit"),
        "°": N("Grad", "Grad"),
        "%": N("Prozent", "Prozent"),
    },
    money={
        "$": N("Dollar", "Dollar"),
        "€": N("Euro", "Euro"),
        "£": N("Pfund", "Pfund"),
        "¥": N("Yen", "Yen"),
        "₹": N("Rupie", "Rupien", feminine=True),
        "R$": N("Real", "Real"),
        "CHF": N("Franken", "Franken"),
    },
    cents=N("Cent", "Cent"),
    pence=N("Penny", "Pence"),
    fractions={2: N("halb", "halbe"), 3: N("Drittel", "Drittel"), 4: N("Viertel", "Viertel")},
    ordinals={},  # "3." is read apart: see _german_ordinal
)

SPANISH = Numbering(
    code="es",
    decimal_mark=",",
    point="coma",
    dot="punto",
    minus="menos",
    plus="más",
    divided_by="entre",
    range="{a} a {b}",
    score="{a} a {b}",
    out_of="{a} de {b}",
    number="número {n}",
    with_cents="{major} con {minor}",
    fraction_as_number=True,
    scale_of="de",
    scale_words=frozenset({"millón", "millones", "billón", "billones"}),
    clock_cues=frozenset({"las", "la"}),
    articles=frozenset({"el", "del", "al"}),
    date_cues=frozenset({"el", "del", "al", "este"}),
    units={
        "km": N("kilómetro", "kilómetros"),
        "m": N("metro", "metros"),
        "cm": N("centímetro", "centímetros"),
        "mm": N("milímetro", "milímetros"),
        "km/h": N("kilómetro por hora", "kilómetros por hora"),
        "mph": N("milla por hora", "millas por hora", feminine=True),
        "kg": N("kilo", "kilos"),
        "g": N("gramo", "gramos"),
        "mg": N("miligramo", "miligramos"),
        "l": N("litro", "litros"),
        "ml": N("mililitro", "mililitros"),
        "GB": N("gigabyte", "gigabytes"),
        "MB": N("megabyte", "megabytes"),
        "KB": N("kilobyte", "kilobytes"),
        "TB": N("terabyte", "terabytes"),
        "GHz": N("gigahercio", "gigahercios"),
        "MHz": N("megahercio", "megahercios"),
        "Hz": N("hercio", "hercios"),
        "kWh": N("kilovatio hora", "kilovatios hora"),
        "kW": N("kilovatio", "kilovatios"),
        "W": N("vatio", "vatios"),
        "h": N("hora", "horas", feminine=True),
        "min": N("minuto", "minutos"),
        "s": N("segundo", "segundos"),
        "ms": N("milisegundo", "milisegundos"),
        "ft": N("pie", "pies"),
        "lb": N("libra", "libras", feminine=True),
        "oz": N("onza", "onzas", feminine=True),
        "mi": N("milla", "millas", feminine=True),
        "m²": N("metro cuadrado", "metros cuadrados"),
        "km²": N("kilómetro cuadrado", "kilómetros cuadrados"),
        "m³": N("metro cúbico", "metros cúbicos"),
        "°C": N("grado centígrado", "grados centígrados"),
        "°F": N("grado Fahrenheit", "grados Fahrenheit"),
        "°": N("grado", "grados"),
        "%": N("por ciento", "por ciento", plain=True),
    },
    money={
        "$": N("dólar", "dólares"),
        "€": N("euro", "euros"),
        "£": N("libra", "libras", feminine=True),
        "¥": N("yen", "yenes"),
        "₹": N("rupia", "rupias", feminine=True),
        "R$": N("real", "reales"),
        "CHF": N("franco suizo", "francos suizos"),
    },
    cents=N("céntimo", "céntimos"),
    pence=N("penique", "peniques"),
    fractions={2: N("medio", "medios"), 3: N("tercio", "tercios"), 4: N("cuarto", "cuartos")},
    ordinals={
        "º": "m",
        ".º": "m",
        "ª": "f",
        ".ª": "f",
        "er": "short",
        ".er": "short",
        "ero": "m",
        "ro": "m",
        "do": "m",
        "to": "m",
        "vo": "m",
        "no": "m",
        "mo": "m",
        "ra": "f",
        "era": "f",
        "da": "f",
        "ta": "f",
        "va": "f",
        "na": "f",
        "ma": "f",
    },
)

ITALIAN = Numbering(
    code="it",
    decimal_mark=",",
    point="virgola",
    dot="punto",
    minus="meno",
    plus="più",
    divided_by="diviso",
    range="da {a} a {b}",
    score="{a} a {b}",
    out_of="{a} su {b}",
    number="numero {n}",
    with_cents="{major} e {minor}",
    fraction_as_number=True,
    scale_of="di",
    scale_words=frozenset({"milione", "milioni", "miliardo", "miliardi"}),
    clock_cues=frozenset({"alle", "dalle", "ore", "le", "verso", "entro"}),
    articles=frozenset({"il", "lo", "al", "del", "nel", "dal", "sul", "allo", "dello"}),
    date_cues=frozenset({"il", "l", "del", "al", "dal", "nel", "entro"}),
    units={
        "km": N("chilometro", "chilometri"),
        "m": N("metro", "metri"),
        "cm": N("centimetro", "centimetri"),
        "mm": N("millimetro", "millimetri"),
        "km/h": N("chilometro orario", "chilometri orari"),
        "mph": N("miglio orario", "miglia orarie"),
        "kg": N("chilo", "chili"),
        "g": N("grammo", "grammi"),
        "mg": N("milligrammo", "milligrammi"),
        "l": N("litro", "litri"),
        "ml": N("millilitro", "millilitri"),
        "GB": N("gigabyte", "gigabyte"),
        "MB": N("megabyte", "megabyte"),
        "KB": N("kilobyte", "kilobyte"),
        "TB": N("terabyte", "terabyte"),
        "GHz": N("gigahertz", "gigahertz"),
        "MHz": N("megahertz", "megahertz"),
        "Hz": N("hertz", "hertz"),
        "kWh": N("chilowattora", "chilowattora"),
        "kW": N("chilowatt", "chilowatt"),
        "W": N("watt", "watt"),
        "h": N("ora", "ore", feminine=True),
        "min": N("minuto", "minuti"),
        "s": N("secondo", "secondi"),
        "ms": N("millisecondo", "millisecondi"),
        "ft": N("piede", "piedi"),
        "lb": N("libbra", "libbre", feminine=True),
        "oz": N("oncia", "once", feminine=True),
        "m²": N("metro quadrato", "metri quadrati"),
        "km²": N("chilometro quadrato", "chilometri quadrati"),
        "m³": N("metro cubo", "metri cubi"),
        "°C": N("grado centigrado", "gradi centigradi"),
        "°F": N("grado Fahrenheit", "gradi Fahrenheit"),
        "°": N("grado", "gradi"),
        "%": N("per cento", "per cento", plain=True),
    },
    money={
        "$": N("dollaro", "dollari"),
        "€": N("euro", "euro"),
        "£": N("sterlina", "sterline", feminine=True),
        "¥": N("yen", "yen"),
        "₹": N("rupia", "rupie", feminine=True),
        "R$": N("real", "real"),
        "CHF": N("franco svizzero", "franchi svizzeri"),
    },
    cents=N("centesimo", "centesimi"),
    pence=N("penny", "pence"),
    fractions={2: N("mezzo", "mezzi"), 3: N("terzo", "terzi"), 4: N("quarto", "quarti")},
    ordinals={"º": "m", ".º": "m", "ª": "f", ".ª": "f"},
)

PORTUGUESE = Numbering(  # Brazilian, as the phrasebook's Portuguese is
    code="pt_BR",
    decimal_mark=",",
    point="vírgula",
    dot="ponto",
    minus="menos",
    plus="mais",
    divided_by="dividido por",
    range="{a} a {b}",
    score="{a} a {b}",
    out_of="{a} de {b}",
    number="número {n}",
    with_cents="{major} e {minor} {cents}",
    singular_below_two=True,
    fraction_as_number=True,
    scale_of="de",
    scale_words=frozenset({"milhão", "milhões", "bilhão", "bilhões"}),
    clock_cues=frozenset({"às", "as", "das", "até"}),
    articles=frozenset({"o", "do", "no", "ao"}),
    date_cues=frozenset({"o", "dia", "no", "do", "ao", "até"}),
    units={
        "km": N("quilômetro", "quilômetros"),
        "m": N("metro", "metros"),
        "cm": N("centímetro", "centímetros"),
        "mm": N("milímetro", "milímetros"),
        "km/h": N("quilômetro por hora", "quilômetros por hora"),
        "mph": N("milha por hora", "milhas por hora", feminine=True),
        "kg": N("quilo", "quilos"),
        "g": N("grama", "gramas"),
        "mg": N("miligrama", "miligramas"),
        "l": N("litro", "litros"),
        "ml": N("mililitro", "mililitros"),
        "GB": N("gigabyte", "gigabytes"),
        "MB": N("megabyte", "megabytes"),
        "KB": N("kilobyte", "kilobytes"),
        "TB": N("terabyte", "terabytes"),
        "GHz": N("gigahertz", "gigahertz"),
        "MHz": N("megahertz", "megahertz"),
        "Hz": N("hertz", "hertz"),
        "kWh": N("quilowatt-hora", "quilowatts-hora"),
        "kW": N("quilowatt", "quilowatts"),
        "W": N("watt", "watts"),
        "h": N("hora", "horas", feminine=True),
        "min": N("minuto", "minutos"),
        "s": N("segundo", "segundos"),
        "ms": N("milissegundo", "milissegundos"),
        "ft": N("pé", "pés"),
        "lb": N("libra", "libras", feminine=True),
        "oz": N("onça", "onças", feminine=True),
        "mi": N("milha", "milhas", feminine=True),
        "m²": N("metro quadrado", "metros quadrados"),
        "km²": N("quilômetro quadrado", "quilômetros quadrados"),
        "m³": N("metro cúbico", "metros cúbicos"),
        "°C": N("grau Celsius", "graus Celsius"),
        "°F": N("grau Fahrenheit", "graus Fahrenheit"),
        "°": N("grau", "graus"),
        "%": N("por cento", "por cento", plain=True),
    },
    money={
        "$": N("dólar", "dólares"),
        "€": N("euro", "euros"),
        "£": N("libra", "libras", feminine=True),
        "¥": N("iene", "ienes"),
        "₹": N("rupia", "rupias", feminine=True),
        "R$": N("real", "reais"),
        "CHF": N("franco suíço", "francos suíços"),
    },
    cents=N("centavo", "centavos"),
    pence=N("pêni", "pence"),
    fractions={2: N("meio", "meios"), 3: N("terço", "terços"), 4: N("quarto", "quartos")},
    ordinals={"º": "m", ".º": "m", "ª": "f", ".ª": "f"},
)

DUTCH = Numbering(
    code="nl",
    decimal_mark=",",
    point="komma",
    dot="punt",
    minus="min",
    plus="plus",
    divided_by="gedeeld door",
    range="{a} tot {b}",
    score="{a} {b}",
    out_of="{a} uit {b}",
    number="nummer {n}",
    with_cents="{major} {minor}",
    year_cues=frozenset(
        {
            "in",
            "sinds",
            "jaar",
            "tot",
            "van",
            "vanaf",
            "rond",
            "na",
            "voor",
            "begin",
            "eind",
            "midden",
            "zomer",
            "winter",
        }
    ),
    clock_cues=frozenset({"om", "tot", "vanaf", "tegen"}),
    date_cues=frozenset({"op", "tot", "vanaf", "per"}),
    extra_units={"km/u": "km/h"},
    units={
        "km": N("kilometer", "kilometer"),
        "m": N("meter", "meter"),
        "cm": N("centimeter", "centimeter"),
        "mm": N("millimeter", "millimeter"),
        "km/h": N("kilometer per uur", "kilometer per uur"),
        "mph": N("mijl per uur", "mijl per uur"),
        "kg": N("kilo", "kilo"),
        "g": N("gram", "gram"),
        "mg": N("milligram", "milligram"),
        "l": N("liter", "liter"),
        "ml": N("milliliter", "milliliter"),
        "GB": N("gigabyte", "gigabyte"),
        "MB": N("megabyte", "megabyte"),
        "KB": N("kilobyte", "kilobyte"),
        "TB": N("terabyte", "terabyte"),
        "GHz": N("gigahertz", "gigahertz"),
        "MHz": N("megahertz", "megahertz"),
        "Hz": N("hertz", "hertz"),
        "kWh": N("kilowattuur", "kilowattuur"),
        "kW": N("kilowatt", "kilowatt"),
        "W": N("watt", "watt"),
        "h": N("uur", "uur"),
        "min": N("minuut", "minuten"),
        "s": N("seconde", "seconden"),
        "ms": N("milliseconde", "milliseconden"),
        "ft": N("voet", "voet"),
        "lb": N("pond", "pond"),
        "oz": N("ons", "ons"),
        "mi": N("mijl", "mijl"),
        "m²": N("vierkante meter", "vierkante meter"),
        "km²": N("vierkante kilometer", "vierkante kilometer"),
        "m³": N("kubieke meter", "kubieke meter"),
        "°C": N("graad Celsius", "graden Celsius"),
        "°F": N("graad Fahrenheit", "graden Fahrenheit"),
        "°": N("graad", "graden"),
        "%": N("procent", "procent"),
    },
    money={
        "$": N("dollar", "dollar"),
        "€": N("euro", "euro"),
        "£": N("pond", "pond"),
        "¥": N("yen", "yen"),
        "₹": N("roepie", "roepies"),
        "R$": N("real", "real"),
        "CHF": N("Zwitserse frank", "Zwitserse frank"),
    },
    cents=N("cent", "cent"),
    pence=N("penny", "pence"),
    fractions={2: N("half", "halve"), 3: N("derde", "derde"), 4: N("kwart", "kwart")},
    ordinals={"e": "m", "de": "m", "ste": "m"},
)

NUMBERINGS = {
    "english": ENGLISH,
    "french": FRENCH,
    "german": GERMAN,
    "spanish": SPANISH,
    "italian": ITALIAN,
    "portuguese": PORTUGUESE,
    "dutch": DUTCH,
}


def numbering(language: str) -> Numbering:
    """The table for a pocket-tts language name (`french_24l` uses french's; else English),
    as the phrasebook chooses."""
    return NUMBERINGS.get(language) or NUMBERINGS.get(language.split("_")[0], ENGLISH)


# ---- number words -------------------------------------------------------------------------------
_ITALIAN_TRE = re.compile(r"(?<=\w)tre\b")  # duemilaventitré: num2words drops the accent
_DUTCH_EEN = re.compile(r"(?<=\w)één")  # honderdeen, not honderdéén
_SPANISH_UNO = re.compile(r"\b(veinti)?uno(?= (?:mil|millones|billones)\b)")
_SPANISH_DECIMO = re.compile(r"\bdécimo(?=\w)")  # decimoprimero


@functools.lru_cache(maxsize=2048)
def _n2w(value: int, code: str, to: str = "cardinal") -> str:
    words: str = num2words(value, lang=code, to=to).replace(",", "")
    if code == "it":
        words = _ITALIAN_TRE.sub("tré", words)
    elif code == "nl":
        words = _DUTCH_EEN.sub("een", words)
        if to == "year":  # one word, as Dutch writes it: negentienhonderdvijfennegentig
            words = words.replace(" ", "")
    elif code == "es":
        words = _SPANISH_UNO.sub(lambda m: "veintiún" if m.group(1) else "un", words)
        words = _SPANISH_DECIMO.sub("decimo", words)
    return words


def _cardinal(value: int, nw: Numbering) -> str:
    return _n2w(value, nw.code)


def _tail_after_scale(words: str, scale: tuple[str, ...]) -> tuple[str, str]:
    """(the part up to the last million word, the rest): a feminine noun changes the rest
    only ("dois milhões e duzentas mil libras" keeps milhões masculine)."""
    parts = words.split(" ")
    last = max((i for i, w in enumerate(parts) if w in scale), default=-1)
    return " ".join(parts[: last + 1]), " ".join(parts[last + 1 :])


_ES_SCALE = ("millón", "millones", "billón", "billones")
_PT_SCALE = ("milhão", "milhões", "bilhão", "bilhões")


def counted(value: int, nw: Numbering, *, feminine: bool = False) -> str:
    """`value` before a noun it counts: "un/une", "ein/eine", "veintiún", "duas"."""
    words = _cardinal(value, nw)
    code = nw.code
    if code == "fr":
        if feminine and (words == "un" or words.endswith((" un", "-un"))):
            words = words[:-2] + "une"
    elif code == "de":
        if words.endswith("eins"):
            words = words[:-4] + ("eine" if feminine else "ein")
    elif code == "es":
        head, tail = _tail_after_scale(words, _ES_SCALE)
        if feminine:
            tail = re.sub(r"ientos\b", "ientas", tail)
            tail = re.sub(r"\b(veinti)?uno$", lambda m: (m.group(1) or "") + "una", tail)
        else:
            tail = re.sub(r"\bveintiuno$", "veintiún", tail)
            tail = re.sub(r"\buno$", "un", tail)
        words = f"{head} {tail}".strip()
    elif code == "it":
        if words == "uno":
            words = "una" if feminine else "un"
    elif code == "pt_BR" and feminine:
        head, tail = _tail_after_scale(words, _PT_SCALE)
        tail = re.sub(r"\bum\b", "uma", re.sub(r"\bdois\b", "duas", tail))
        tail = re.sub(r"(?<=[a-z])entos\b", "entas", tail)
        words = f"{head} {tail}".strip()
    return words


def cardinal(value: int, language: str, *, feminine: bool = False) -> str:
    """A count said before its noun, in `language` ("two images", "duas imagens")."""
    return counted(value, numbering(language), feminine=feminine)


def _ordinal(value: int, nw: Numbering, kind: str = "m") -> str:
    """The ordinal `value` in words: kind "m"/"f" (masculine, feminine), "short" (Spanish
    "primer", "tercer"), "ms"/"fs" (French plurals), or a French "second(e)(s)"."""
    if kind.startswith("second"):
        return kind if value == 2 else _ordinal(value, nw, "m" + ("s" if kind[-1] == "s" else ""))
    code = nw.code
    words = _n2w(value, code, "ordinal")
    if code == "fr":
        if kind.startswith("f") and value == 1:
            words = "première"
        if kind.endswith("s"):
            words += "s"
    elif code in ("es", "it", "pt_BR"):
        if kind == "f":
            words = re.sub(r"o\b", "a", words)
        elif kind == "short":
            words = re.sub(r"\b(prim|terc)ero$", r"\1er", words)
    return words


def _digits(run: str, nw: Numbering) -> str:
    return " ".join(_n2w(int(c), nw.code) for c in run)


def _integer(run: str, nw: Numbering) -> str:
    """A run of digits: a number, or digit by digit when it starts with 0 or is too long."""
    if len(run) > MAX_DIGITS or (len(run) > 1 and run[0] == "0"):
        return _digits(run, nw)
    return _cardinal(int(run), nw)


def _fraction_part(run: str, nw: Numbering) -> str:
    if nw.fraction_as_number and len(run) <= 2 and run[0] != "0":
        return _cardinal(int(run), nw)
    return _digits(run, nw)


@dataclass(frozen=True)
class _Value:
    """A number as written: its whole part and its fraction's digits (None: a whole one)."""

    whole: str
    fraction: str | None = None

    @property
    def decimal(self) -> Decimal:
        return Decimal(f"{self.whole}.{self.fraction}" if self.fraction else self.whole)

    def is_one(self) -> bool:
        return self.decimal == 1

    def singular(self, nw: Numbering) -> bool:
        if nw.singular_below_two:
            return abs(self.decimal) < 2
        return self.is_one()

    def words(self, nw: Numbering) -> str:
        whole = _integer(self.whole, nw)
        if self.fraction is None:
            return whole
        return f"{whole} {nw.point} {_fraction_part(self.fraction, nw)}"

    def count_words(self, nw: Numbering, noun: Noun) -> str:
        """Said before `noun`: "une heure", "ein Euro", "veintiún kilos"."""
        if self.fraction is not None or noun.plain or len(self.whole) > MAX_DIGITS:
            return self.words(nw)
        if len(self.whole) > 1 and self.whole[0] == "0":
            return self.words(nw)
        return counted(int(self.whole), nw, feminine=noun.feminine)


def _thousands(groups: list[str]) -> bool:
    """1 000 000 / 1.000 / 1,000: a first group of one to three digits, then threes."""
    first = groups[0]
    return (first == "0" or (1 <= len(first) <= 3 and first[0] != "0")) and all(
        len(g) == 3 for g in groups[1:]
    )


def _parse(written: str, nw: Numbering) -> _Value | None:
    """A number written with the language's separators (digits, ".", ",", "'"), or None when
    it is several ("1,2,3", a version 1.2.3)."""
    if written.isdigit():
        return _Value(written)
    written = written.replace("’", "'")
    if "'" in written:  # Swiss: 1'000.50
        whole, _, fraction = written.partition(".")
        groups = whole.split("'")
        if not _thousands(groups) or (fraction and not fraction.isdigit()) or "," in written:
            return None
        return _Value("".join(groups), fraction or None)
    marks = [c for c in written if c in ".,"]
    if len(set(marks)) == 2:
        decimal = marks[-1]
        if marks.count(decimal) != 1:
            return None
        whole, _, fraction = written.rpartition(decimal)
        groups = whole.split(marks[0])
        return _Value("".join(groups), fraction) if _thousands(groups) else None
    mark = marks[0]
    groups = written.split(mark)
    if len(groups) > 2:
        return _Value("".join(groups)) if _thousands(groups) else None
    whole, fraction = groups
    if len(fraction) == 3 and _thousands(groups) and mark != nw.decimal_mark:
        return _Value(whole + fraction)  # 1,000 in English, 1.000 elsewhere
    if mark == "." or mark == nw.decimal_mark:
        return _Value(whole, fraction)
    return None  # "1,5" in English: a list


def _several(written: str, nw: Numbering) -> str:
    """Numbers that are not one: "1,2,3" a list, "1.2.3" a version or an address."""
    out: list[str] = []
    for part in re.split(r"([.,'’])", written):
        if part == ",":
            out[-1] += ","
        elif part in (".", "'", "’"):
            out.append(nw.dot)
        elif part:
            out.append(_integer(part, nw))
    return " ".join(out)


def _number(written: str, nw: Numbering) -> str:
    value = _parse(written, nw)
    return value.words(nw) if value is not None else _several(written, nw)


# ---- times and dates ----------------------------------------------------------------------------
def _clock(hour: int, minute: int, nw: Numbering, ampm: str = "") -> str:
    """A time of day as the language says it; `ampm` "a"/"p" for a 12-hour one."""
    code = nw.code
    if code == "en":
        if ampm:
            said = _cardinal(hour, nw)
            if minute:
                said += " " + (
                    f"oh {_cardinal(minute, nw)}" if minute < 10 else _cardinal(minute, nw)
                )
            return f"{said} {ampm}.m."
        if hour == 0 and minute == 0:
            return "midnight"
        if minute == 0:
            return _cardinal(hour, nw) + (" o'clock" if 1 <= hour <= 12 else " hundred")
        minutes = f"oh {_cardinal(minute, nw)}" if minute < 10 else _cardinal(minute, nw)
        return f"{_cardinal(hour, nw)} {minutes}"
    if ampm:  # the others say the hour of the day
        hour = hour % 12 + (12 if ampm == "p" else 0)
    minutes = f" {_cardinal(minute, nw)}" if minute else ""
    if code == "fr":
        if hour in (0, 12):
            return ("minuit" if hour == 0 else "midi") + minutes
        return f"{counted(hour, nw, feminine=True)} heure{'s' if hour > 1 else ''}{minutes}"
    if code == "de":
        return f"{counted(hour, nw)} Uhr{minutes}"
    if code == "nl":
        if hour == 0 and not minute:
            return "middernacht"
        return f"{_cardinal(hour, nw)} uur{minutes}"
    said = counted(hour, nw, feminine=True)
    if code == "es":
        return f"{said} y{minutes}" if minute else f"{said} en punto"
    if code == "it":
        if not minute and hour in (0, 12):
            return "mezzanotte" if hour == 0 else "mezzogiorno"
        return f"{said} e{minutes}" if minute else said
    if not minute and hour in (0, 12):  # Portuguese
        return "meia-noite" if hour == 0 else "meio-dia"
    return f"{said} e{minutes}" if minute else f"{said} hora{'s' if hour > 1 else ''}"


# after "21": a word that is not the noun it counts ("veintiuno de ellos", "veintiuno y medio")
_SPANISH_NOT_NOUNS = frozenset(
    {
        "de",
        "y",
        "o",
        "u",
        "a",
        "en",
        "por",
        "más",
        "menos",
        "es",
        "son",
        "entre",
        "con",
        "sin",
        "que",
    }
)
_ITALIAN_NOT_NOUNS = frozenset(
    {
        "di",
        "e",
        "o",
        "a",
        "in",
        "per",
        "su",
        "da",
        "con",
        "che",
        "è",
        "sono",
        "più",
        "meno",
        "tra",
        "fra",
        "solo",
    }
)
_NOT_NOUNS: dict[str, frozenset[str]] = {
    "es": _SPANISH_NOT_NOUNS,
    "it": _ITALIAN_NOT_NOUNS,
    "fr": frozenset({"de", "et", "ou", "à", "sur", "par", "en", "pour"}),
    "pt_BR": frozenset({"de", "e", "ou", "a", "em", "por", "para", "com"}),
    "de": frozenset(),
}
_VOWELS = frozenset("aeiouàèéìíòóùhAEIOU")
_IMPURE_S = re.compile(r"s[^aeiouàèéìòù]|z|gn|ps|x|y")  # uno studente, uno zaino
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)+")
_VERSION_WORDS = frozenset({"v", "version", "versión", "versione", "versão", "versie", "ver"})
_ENGLISH_DATE_CUE = re.compile(
    r"(?i)\b(?:on|by|until|till|from|since|before|after)[ \t\u00a0]+"
    r"the[ \t\u00a0]*$"
)
_EN_YEAR_CUES = frozenset(
    {
        "in",
        "since",
        "of",
        "by",
        "until",
        "from",
        "before",
        "after",
        "during",
        "year",
        "around",
        "circa",
        "summer",
        "winter",
        "spring",
        "fall",
        "autumn",
        "early",
        "late",
        "mid",
        "till",
        "back",
    }
)
_EN_COUNTED = frozenset(
    {
        "people",
        "children",
        "men",
        "women",
        "feet",
        "teeth",
        "mice",
        "geese",
        "sheep",
        "fish",
        "deer",
        "persons",
    }
)
_EN_VERBS_IN_S = frozenset(
    {
        "does",
        "goes",
        "seems",
        "looks",
        "marks",
        "begins",
        "ends",
        "brings",
        "comes",
        "starts",
        "feels",
        "sees",
        "gets",
        "makes",
        "means",
        "saw",
        "remains",
        "becomes",
        "changes",
        "promises",
        "shows",
        "turns",
        "sounds",
        "takes",
        "gives",
        "lives",
        "was",
        "has",
        "is",
        "this",
        "always",
        "perhaps",
        "sucks",
        "rocks",
        "happens",
        "hits",
        "kicks",
    }
)
_IT_TEMPERATURE = re.compile(
    r"\b(?:temperatur\w*|grad[oi]|caldo|freddo|fa|meteo|febbre|fuori|massim[ae]|minim[ae]|"
    r"ci sono|c'è|forno|acqua|sole|estate|inverno|gelo|termometro|celsius|siamo a)\b"
)
_IT_ORDINAL_CUES = frozenset(
    {
        "arrivato",
        "arrivata",
        "arrivati",
        "arrivate",
        "classificato",
        "classificata",
        "classificati",
        "piazzato",
        "piazzata",
        "finito",
        "finita",
        "giunto",
        "giunta",
        "arriva",
        "arrivo",
        "posto",
    }
)
_IT_ORDINAL_NOUNS = frozenset(
    {
        "posto",
        "piano",
        "livello",
        "classificato",
        "classificata",
        "anno",
        "giorno",
        "turno",
        "premio",
        "secolo",
        "round",
        "tempo",
        "grado",
    }
)
# 1/2 before a noun that is not a unit or a feminine one: "half a cup", "medio pan"
_HALF_NOUNS: dict[str, frozenset[str]] = {
    "en": frozenset(
        {
            "cup",
            "hour",
            "day",
            "pizza",
            "dozen",
            "mile",
            "pound",
            "kilo",
            "liter",
            "litre",
            "glass",
            "bottle",
            "page",
            "year",
            "month",
            "minute",
        }
    ),
    "es": frozenset({"kilo", "litro", "día", "año", "mes", "metro", "minuto", "vaso"}),
    "pt_BR": frozenset({"quilo", "litro", "dia", "ano", "mês", "metro", "minuto", "copo"}),
    "it": frozenset({"chilo", "litro", "giorno", "anno", "mese", "metro", "minuto", "bicchiere"}),
    "fr": frozenset({"kilo", "litre", "mètre", "verre", "jour", "siècle", "tour", "an", "mois"}),
    "de": frozenset({"kilo", "liter", "meter", "jahr", "tag", "pfund", "glas", "brot"}),
    "nl": frozenset({"kilo", "liter", "meter", "uur", "jaar", "pond", "dag", "glas", "brood"}),
}
_BLANKS = re.compile(r"[ \t\u00a0]*")


# nouns a number labels (Staffel 1, temporada 1): the noun after it is not what it counts
_LABELS: dict[str, frozenset[str]] = {
    "de": frozenset(
        {
            "staffel",
            "folge",
            "teil",
            "kapitel",
            "seite",
            "level",
            "runde",
            "platz",
            "nummer",
            "nr",
            "zimmer",
            "raum",
            "gleis",
            "linie",
            "version",
            "band",
            "akt",
            "szene",
            "episode",
            "tor",
        }
    ),
    "es": frozenset(
        {
            "temporada",
            "capítulo",
            "página",
            "nivel",
            "número",
            "parte",
            "episodio",
            "versión",
            "sala",
            "planta",
            "puerta",
            "línea",
            "ronda",
            "jornada",
            "grupo",
            "fase",
            "nº",
        }
    ),
    "pt_BR": frozenset(
        {
            "temporada",
            "capítulo",
            "página",
            "nível",
            "número",
            "parte",
            "episódio",
            "versão",
            "sala",
            "andar",
            "linha",
            "rodada",
            "fase",
            "grupo",
            "nº",
        }
    ),
    "it": frozenset(
        {
            "stagione",
            "capitolo",
            "pagina",
            "livello",
            "numero",
            "parte",
            "episodio",
            "puntata",
            "versione",
            "sala",
            "piano",
            "linea",
            "fase",
            "gruppo",
            "giornata",
            "n",
        }
    ),
    "fr": frozenset(
        {
            "saison",
            "chapitre",
            "page",
            "niveau",
            "numéro",
            "partie",
            "épisode",
            "version",
            "salle",
            "étage",
            "ligne",
            "manche",
            "groupe",
            "phase",
            "n",
        }
    ),
}


def _half(noun: str, fem: bool, nw: Numbering, previous: str = "") -> str:
    """ "half" before `noun`, as the language says it with the article it needs; ending
    with "'" or "-" when it is written as one word with the noun (mezz'ora, demi-heure)."""
    code = nw.code
    first = noun[:1].casefold()
    if code == "en":
        return "half an " if first in "aeiou" or noun.startswith(("hour", "honest")) else "half a "
    if code == "fr":
        return "une demi-" if fem else "un demi-"
    if code == "es":
        return "media " if fem else "medio "
    if code == "pt_BR":
        return "meia " if fem else "meio "
    if code == "it":
        if fem:
            return "mezz'" if first in _VOWELS else "mezza "
        return "mezzo "
    if code == "de":  # in the case a preposition before it asks: "mit einem halben Liter"
        masculine = noun.casefold() in noun_genders.GERMAN_MASCULINE
        if previous in noun_genders.GERMAN_DATIVE:
            return "einer halben " if fem else "einem halben "
        if fem:
            return "eine halbe "
        if previous in noun_genders.GERMAN_ACCUSATIVE:
            return "einen halben " if masculine else "ein halbes "
        return "ein halber " if masculine else "ein halbes "
    return "een half " if noun.casefold() in noun_genders.DUTCH_NEUTER else "een halve "


def _german_one(noun: str, previous: str) -> str:
    """German "1" before a noun, in the case a preposition before it asks (in einer Stunde,
    für einen Tag) and the noun's gender; the nominative elsewhere."""
    fem = noun_genders.feminine(noun, "de")
    masculine = noun.casefold() in noun_genders.GERMAN_MASCULINE
    if previous in noun_genders.GERMAN_DATIVE:
        return "einer" if fem else "einem"
    if previous in noun_genders.GERMAN_ACCUSATIVE:
        return "eine" if fem else "einen" if masculine else "ein"
    return "eine" if fem else "ein"


_DATIVE = frozenset({"am", "vom", "zum", "im", "beim", "dem", "den", "seit", "bis", "ab"})
_ARTICLE = frozenset({"der", "die", "das", "des"})


def _german_ordinal(value: int, nw: Numbering, previous: str, before_month: bool) -> str:
    """ "3." as German says it where it stands: am dritten, der dritte, dritter Mai."""
    words = _ordinal(value, nw)
    ending = "e"
    if previous in _DATIVE:
        ending = "en"
    elif previous not in _ARTICLE and before_month:
        ending = "er"
    return words[:-1] + ending if words.endswith("e") else words


def _year(value: int, nw: Numbering) -> str:
    if nw.code in ("en", "de", "nl") and 1100 <= value <= 2099:
        return _n2w(value, nw.code, "year")
    return _cardinal(value, nw)


def _date(day: int, month: int, year: int | None, nw: Numbering, previous: str = "") -> str:
    months = phrasebook(_LANGUAGE_OF[nw.code]).months
    name = months[month - 1]
    code = nw.code
    year_words = _year(year, nw) if year is not None else ""
    if code == "en":
        said = f"the {_ordinal(day, nw)} of {name}"
    elif code == "de":
        said = f"{_german_ordinal(day, nw, previous, True)} {name}"
    elif code in ("es", "pt_BR"):
        first: str | None = "primeiro" if code == "pt_BR" and day == 1 else _cardinal(day, nw)
        said = f"{first} de {name}"
        year_words = f"de {year_words}" if year_words else ""
    else:
        first = {"fr": "premier", "it": "primo"}.get(code) if day == 1 else None
        said = f"{first or _cardinal(day, nw)} {name}"
    return f"{said} {year_words}".strip()


def _valid_date(day: int, month: int, year: int | None) -> bool:
    try:
        date(year or 2000, month, day)  # 2000: 29 February is one without a year
    except ValueError:
        return False
    return True


def _full_year(written: str) -> int:
    if len(written) == 4:
        return int(written)
    short = int(written)
    return (2000 if short < 50 else 1900) + short


_LANGUAGE_OF = {nw.code: name for name, nw in NUMBERINGS.items()}


# ---- the patterns -------------------------------------------------------------------------------
_SPACE = "[ \t\u00a0]"
# Digits joined by single separators, at most MAX_GROUPS groups: a longer run is several
# matches, so the limit on what is said applies within it
MAX_GROUPS = 16
SWISS = frozenset({"de", "fr", "it"})  # 1'000: the apostrophe groups thousands (not 5'10)


def _number_run(code: str) -> str:
    marks = ".,:/\\-–" + ("'’" if code in SWISS else "")
    return rf"[0-9]+(?:(?:[{marks}]|[ \u00a0\u202f](?=[0-9]))[0-9]+){{0,{MAX_GROUPS - 1}}}"


_CODES = "EUR|USD|GBP|CHF|BRL|JPY|INR"
_MONEY_BEFORE = rf"(?<!\w)(?:R\$|US\$|C\$|A\$|\$|€|£|¥|₹)|(?<!\w)(?:{_CODES})(?=[ \u00a0]?[0-9])"
_MONEY_AFTER = rf"€|\$|£|¥|₹|(?:{_CODES})(?!\w)"
_EXPRESSION_NUMBER = r"[0-9]{1,15}(?:[.,][0-9]{1,15}){0,4}"
# A sum or a product between numbers ("2+2=4", "10 - 4 = 6", "3x4"): at most 8 terms, so a
# long run of dashes never makes the search go back far.
_EXPRESSION = re.compile(
    rf"(?<![\w.,])[-−]?{_EXPRESSION_NUMBER}"
    rf"(?:{_SPACE}*[-−+*×x÷/=]{_SPACE}*[-−]?{_EXPRESSION_NUMBER}){{1,8}}(?![\w]|[.,][0-9])"
)
_OPERATOR = re.compile(rf"{_SPACE}*([-−+*×x÷/=]){_SPACE}*")
_NEXT_WORD = re.compile(r"[ \t\u00a0]*(?:(?:de|of)[ \t\u00a0]+)?([^\W\d_]+)")
_WORD_AFTER = re.compile(r"[ \t\u00a0]*([^\W\d_]+)")
_PREVIOUS_WORD = re.compile(r"([^\W\d_]+)['’]?[ \t\u00a0]*$")
_DE_NOUNS = frozenset(
    {
        "platz",
        "mal",
        "stock",
        "stelle",
        "klasse",
        "runde",
        "liga",
        "jahrhundert",
        "geburtstag",
        "level",
        "staffel",
        "folge",
        "teil",
        "tag",
        "woche",
        "spieltag",
        "versuch",
        "kapitel",
        "auflage",
        "advent",
        "grad",
        "etage",
        "reihe",
        "preis",
        "sieg",
    }
)


# the big numbers' names, and their abbreviations after a number ("5 Mio. Euro", "3 mln di
# euro", "R$ 2 bi"): what each stands for
SCALE_NOUNS: dict[str, dict[str, Noun]] = {
    "en": {"million": N("million", "million"), "billion": N("billion", "billion")},
    "fr": {"million": N("million", "millions"), "billion": N("milliard", "milliards")},
    "de": {
        "million": N("Million", "Millionen", feminine=True),
        "billion": N("Milliarde", "Milliarden", feminine=True),
    },
    "es": {"million": N("millón", "millones"), "billion": N("mil millones", "mil millones")},
    "it": {"million": N("milione", "milioni"), "billion": N("miliardo", "miliardi")},
    "pt_BR": {"million": N("milhão", "milhões"), "billion": N("bilhão", "bilhões")},
    "nl": {"million": N("miljoen", "miljoen"), "billion": N("miljard", "miljard")},
}
SCALE_ABBREVIATIONS: dict[str, dict[str, str]] = {
    "en": {},  # (5M and 2bn are read with the multipliers)
    "fr": {"M": "million", "Md": "billion", "Mds": "billion", "Mrd": "billion", "Mrds": "billion"},
    "de": {
        "Mio.": "million",
        "Mio": "million",
        "Mrd.": "billion",
        "Mrd": "billion",
        "Mia.": "billion",
        "Tsd.": "thousand",
        "Tsd": "thousand",
    },
    "es": {"M": "million", "mill.": "million", "mill": "million"},
    "it": {"mln": "million", "mld": "billion", "mrd": "billion"},
    "pt_BR": {"mi": "million", "bi": "billion"},
    "nl": {"mln": "million", "mio": "million", "mld": "billion", "mrd": "billion"},
}
# what "5K" counts where K is a thousand (elsewhere 4K is a resolution, a 5K a race)
_THOUSANDS_OF = frozenset(
    {
        "subs",
        "subscribers",
        "followers",
        "views",
        "likes",
        "members",
        "viewers",
        "players",
        "people",
        "users",
        "downloads",
        "upvotes",
        "plays",
        "streams",
        "fans",
        "votes",
        "abonnés",
        "vues",
        "membres",
        "abonnenten",
        "aufrufe",
        "mitglieder",
        "seguidores",
        "suscriptores",
        "visitas",
        "miembros",
        "iscritti",
        "visualizzazioni",
        "inscritos",
        "visualizações",
        "membros",
        "volgers",
        "abonnees",
        "weergaven",
        "leden",
    }
)


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


@functools.cache
def _pattern(code: str) -> re.Pattern[str]:
    nw = next(n for n in NUMBERINGS.values() if n.code == code)
    units = {*nw.units, *UNIT_ALIASES, *nw.extra_units} - {"%", "°", "°C", "°F"}
    if code != "en":
        units.discard("mi")  # Italian "mi", Spanish "mi"
    ampm = rf"{_SPACE}?" if nw.spaced_ampm else ""
    suffixes = [
        r"(?P<hm>h(?P<hmin>[0-5][0-9])?(?![\w]))",
        rf"{ampm}(?P<ampm>(?i:[ap])\.?(?i:m)\.?)(?![\w])"
        if nw.spaced_ampm
        else r"(?P<ampm>(?i:[ap])(?:\.(?i:m)\.|(?i:m)))(?![\w])",
        rf"{_SPACE}?(?P<pct>%)",
        rf"{_SPACE}?(?P<deg>°{_SPACE}?(?P<scale>[CF](?![\w]))?)",
        rf"{_SPACE}?(?P<cura>{_MONEY_AFTER})",
    ]
    if nw.ordinals:
        suffixes.append(rf"(?P<ord>(?i:{_alternatives(nw.ordinals)}))(?![\w])")
    if code == "en":  # before the units: 1990s is a decade, 5s five seconds
        suffixes.append(r"(?P<decade>s)(?![\w])")
    suffixes.append(rf"{_SPACE}?(?P<unit>{_alternatives(units)})(?![\w²³'’/])")
    if code in ("de", "nl"):
        suffixes.append(rf"{_SPACE}+(?P<clock>{'Uhr' if code == 'de' else 'uur'})(?![\w])")
    abbreviations = SCALE_ABBREVIATIONS[code]
    if abbreviations:
        suffixes.insert(
            0,
            rf"{_SPACE}?(?P<abbr>{_alternatives(abbreviations)})(?![\w])"
            rf"(?:{_SPACE}?(?P<abbr_cur>{_MONEY_AFTER}))?",
        )
    suffixes += [
        rf"(?P<mult>k|K|M|bn)(?![\w])(?:{_SPACE}?(?P<mult_cur>{_MONEY_AFTER}))?",
        r"(?P<plus>\+)(?![0-9+])",
        r"(?P<x>x)(?![\w])",
    ]
    if code == "de":
        suffixes.append(r"(?P<dot>\.)(?![0-9])")
    return re.compile(
        r"(?P<hash>(?<![\w#&])#)?"
        r"(?P<sign>(?<![\w.,+\-−])[-−+])?"
        rf"(?P<cur>{_MONEY_BEFORE})?(?(cur)[ \u00a0]?)"
        rf"(?<![0-9])(?P<num>{_number_run(code)})"
        rf"(?:{'|'.join(suffixes)})?"
    )


_GROUPS = (
    "hash",
    "sign",
    "cur",
    "num",
    "hm",
    "hmin",
    "ampm",
    "pct",
    "deg",
    "scale",
    "cura",
    "ord",
    "unit",
    "clock",
    "mult",
    "abbr",
    "abbr_cur",
    "mult_cur",
    "plus",
    "x",
    "decade",
    "dot",
)


# ---- reading ------------------------------------------------------------------------------------
def _counted_noun(nw: Numbering, value: _Value, noun: Noun) -> str:
    said = value.count_words(nw, noun)
    name = noun.one if value.singular(nw) else noun.many
    if nw.code == "it" and said == "una" and name[:1] in _VOWELS:
        return f"un'{name}"  # un'ora, un'oncia
    return f"{said} {_of_scale(nw, said, name)}{name}"


def _of_scale(nw: Numbering, said: str, name: str) -> str:
    """ "un million de dollars", "un milione di euro": the word between a round million
    and what it counts, where the language has one ("d'euros" before a vowel)."""
    if not nw.scale_of or said.rsplit(" ", 1)[-1] not in nw.scale_words:
        return ""
    if nw.code == "fr" and name[:1].lower() in "aeiouyéèh":
        return "d'"
    return f"{nw.scale_of} "


def _money(nw: Numbering, value: _Value, currency: str) -> str:
    noun = nw.money[currency]
    cents_noun = nw.pence if currency in PENCE else nw.cents
    fraction = value.fraction
    if currency in NO_CENTS or fraction is None or len(fraction) > 2:
        return _counted_noun(nw, value, noun)
    minor = int(fraction.ljust(2, "0"))
    whole = _Value(value.whole)
    if minor == 0:
        return _counted_noun(nw, whole, noun)
    if int(value.whole) == 0:
        return _counted_noun(nw, _Value(str(minor)), cents_noun)
    major = _counted_noun(nw, whole, noun)
    cents = cents_noun.one if minor == 1 else cents_noun.many
    minor_words = counted(minor, nw, feminine=cents_noun.feminine)
    if nw.code == "en" and minor < 10:
        return f"{major} and {minor_words} {cents}"
    return nw.with_cents.format(major=major, minor=minor_words, cents=cents)


def _phone(nw: Numbering, groups: list[str], *, country: bool) -> str:
    """Digit by digit, the groups as pauses; a country code as a number (+44: "plus
    forty-four"); French pairs as numbers ("zéro six, douze")."""
    said = []
    for i, group in enumerate(groups):
        if i == 0 and country and len(groups) > 1 and len(group) <= 3:
            said.append(_cardinal(int(group), nw))
        elif nw.code == "fr" and len(group) == 2:
            said.append(_digits(group, nw) if group[0] == "0" else _cardinal(int(group), nw))
        else:
            said.append(_digits(group, nw))
    return ", ".join(said)


# ---- phone numbers by country -----------------------------------------------------------------
# words before a phone number, in the seven languages ("call me on", "llámame al", "meu número
# é", "ruf mich an unter"); "number of" is a count
_PHONE_CUE = re.compile(
    r"(?i)\b(?:call|ring|text|phone|number|tel|mobile|cell|whatsapp|appelle|appelez|numéro|"
    r"téléphone|tél|portable|ruf|anrufen|nummer|telefon|handy|erreichbar|llámame|llámanos|"
    r"llama|número|teléfono|móvil|celular|chiamami|chiamaci|chiama|numero|telefono|cellulare|"
    r"liga|ligue|telefone|zap|bel|mobiel|telefoon)\b(?![ \t\u00a0]+(?:of|de|di|der|van)\b)"
    r"[^\d\n]{0,25}$"
)
_PHONE_SEPARATORS = re.compile(r"[ \u00a0\u202f.\-–/]")
# an area code in brackets before the rest of a number: "(21) 99876-5432", "(555) 123-4567"
_AREA_CODE = re.compile(
    r"(?<![\w)])\(([0-9]{2,4})\)[ \u00a0]?(?=[0-9]{3,5}[-. \u00a0]?[0-9]{4}(?![0-9]))"
)


def _area_codes(text: str) -> str:
    """(21) 99876-5432 as 21-99876-5432: one run, read as a phone number."""
    return _AREA_CODE.sub(r"\1-", text)


def _round(group: str) -> bool:
    return group.endswith("00")


def _phone_shape(code: str, pieces: list[str], separators: set[str]) -> bool:
    """Whether digits grouped so are a phone number in the language's countries: Spain's nine
    digits from 6 to 9 (612 345 678), Brazil's 9876-5432 and 99876-5432 and its eleven digits
    (21998765432), Italy's mobiles (3331234567), France's ten digits in pairs (06.12.34.56.78,
    0612345678), the North American 555.123.4567, and a German 0171/1234567."""
    shape = tuple(len(p) for p in pieces)
    first = pieces[0]
    if separators - {"-", "–"} and separators & {"-", "–"} and sum(shape) >= 8:
        return True  # 21 99876-5432: spaces and dashes, never an amount
    if code == "es":
        return first[0] in "6789" and shape in ((9,), (3, 3, 3)) and not pieces[-1].endswith("000")
    if code == "pt_BR":
        if shape == (11,):
            return first[2] == "9"
        years = all(len(p) == 4 and 1100 <= int(p) <= 2099 for p in pieces[-2:])
        return (
            len(pieces) >= 2
            and shape[-1] == 4
            and shape[-2] in (4, 5)
            and bool(separators & {"-", "–"})
            and not years
            and not any(_round(p) for p in pieces[-2:])
        )
    if code == "it":
        return shape == (10,) and first[0] == "3" and not first.endswith("000")
    if code == "fr":
        return (shape == (10,) and first[0] == "0") or (
            shape == (2, 2, 2, 2, 2) and separators <= {".", "-", " "}
        )
    if code == "en" and shape == (3, 3, 4) and separators == {"."}:
        return True
    return separators == {"/"} and first[0] == "0" and len(pieces) == 2 and sum(shape) >= 7


def _clock_with_dot(nw: Numbering, written: str) -> str | None:
    hour, _, minute = written.partition(".")
    if hour.isdigit() and len(minute) == 2 and int(hour) < 24 and int(minute) < 60:
        return _clock(int(hour), int(minute), nw)
    return None


def _numeric_date(
    nw: Numbering, parts: list[str], previous: str, order: tuple[str, ...]
) -> str | None:
    """Day and month (and a year), day first unless only month first makes a date."""
    if len(parts) == 3 and len(parts[2]) not in (2, 4):
        return None
    year = _full_year(parts[2]) if len(parts) == 3 else None
    first, second = int(parts[0]), int(parts[1])
    for way in order:
        day, month = (first, second) if way == "dm" else (second, first)
        if 1 <= month <= 12 and _valid_date(day, month, year):
            return _date(day, month, year, nw, previous)
    return None


def _decade(nw: Numbering, value: _Value, whole: str | None, previous: str, end: int) -> str:
    """English 1990s ("nineteen nineties") and, after "the" or "my", 90s."""
    if (
        whole
        and whole.endswith("0")
        and (
            (len(whole) == 4 and 1100 <= int(whole) <= 2090)
            or (
                len(whole) == 2
                and whole != "10"
                and previous
                in {"the", "my", "your", "his", "her", "their", "our", "early", "late", "mid"}
            )
        )
    ):
        said = _year(int(whole), nw) if len(whole) == 4 else _cardinal(int(whole), nw)
        return said[:-1] + "ies" if said.endswith("y") else said + "s"
    return _counted_noun(nw, value, nw.units["s"])


def _suffix_after_date(groups: dict[str, str | None]) -> str:
    return "." if groups.get("dot") else ""


def _expression(nw: Numbering, match: re.Match[str]) -> str:
    """A sum, a difference, a product or a quotient; the text as it is when it is none
    of those (a date, a range, a phone number: read afterwards)."""
    written = match.group(0)
    operators = set(_OPERATOR.findall(written))
    if not operators & {"+", "*", "×", "x", "÷", "="}:
        return written
    book = phrasebook(_LANGUAGE_OF[nw.code])
    said = {
        "+": nw.plus,
        "-": nw.minus,
        "−": nw.minus,
        "*": book.times,
        "×": book.times,
        "x": book.times,
        "÷": nw.divided_by,
        "/": nw.divided_by,
        "=": book.equals,
    }
    words: list[str] = []
    for token in _OPERATOR.split(written):
        if token in said and words and words[-1] not in said.values():
            words.append(said[token])
        elif token in ("-", "−"):
            words.append(nw.minus)  # a sign: "= -3"
        elif token:
            number = token.lstrip("-−")
            words += [nw.minus] * (len(token) - len(number)) + [_number(number, nw)]
    return " ".join(words)


# "1/2" before "of": a half of something, said as the language says it
_HALF_OF: dict[str, frozenset[str]] = {
    "en": frozenset({"of"}),
    "fr": frozenset({"du", "de", "des", "d"}),
    "es": frozenset({"de", "del"}),
    "it": frozenset({"di", "del", "della", "dei", "delle", "dello"}),
    "pt_BR": frozenset({"de", "do", "da", "dos", "das"}),
    "de": frozenset({"der", "des", "von", "vom"}),
    "nl": frozenset({"van"}),
}
_HALF_OF_SAID = {
    "en": "half",
    "fr": "la moitié",
    "es": "la mitad",
    "it": "la metà",
    "pt_BR": "metade",
    "de": "die Hälfte",
    "nl": "de helft",
}


# ---- fractions: ½, 2½, 2 1/2, ¾ kg ----------------------------------------------------------
# the characters the keyboards and phones offer, as the slash fractions they stand for
VULGAR = {"½": "1/2", "¼": "1/4", "¾": "3/4", "⅓": "1/3", "⅔": "2/3"}
_VULGAR = re.compile(r"(?P<whole>(?<![0-9.,])[0-9]{1,6}[ \u00a0]?)?(?P<frac>[½¼¾⅓⅔])")
# a whole number and a fraction: "two and a half", "deux et demi", "zweieinhalb"; the phrase
# after the whole (and after the noun in French, Spanish, Italian and Portuguese)
_AND_FRACTION: dict[str, dict[str, str]] = {
    "en": {
        "1/2": "a half",
        "1/4": "a quarter",
        "3/4": "three quarters",
        "1/3": "a third",
        "2/3": "two thirds",
    },
    "fr": {
        "1/2": "demi",
        "1/4": "quart",
        "3/4": "trois quarts",
        "1/3": "un tiers",
        "2/3": "deux tiers",
    },
    "es": {
        "1/2": "medio",
        "1/4": "cuarto",
        "3/4": "tres cuartos",
        "1/3": "un tercio",
        "2/3": "dos tercios",
    },
    "it": {
        "1/2": "mezzo",
        "1/4": "un quarto",
        "3/4": "tre quarti",
        "1/3": "un terzo",
        "2/3": "due terzi",
    },
    "pt_BR": {
        "1/2": "meio",
        "1/4": "um quarto",
        "3/4": "três quartos",
        "1/3": "um terço",
        "2/3": "dois terços",
    },
    "de": {
        "1/2": "einhalb",
        "1/4": "einviertel",
        "3/4": "dreiviertel",
        "1/3": "und ein Drittel",
        "2/3": "und zwei Drittel",
    },
    "nl": {
        "1/2": "half",
        "1/4": "en een kwart",
        "3/4": "en driekwart",
        "1/3": "en een derde",
        "2/3": "en twee derde",
    },
}
_FRACTION_AND = {"en": "and", "fr": "et", "es": "y", "it": "e", "pt_BR": "e"}
# the half said after a feminine noun: "deux heures et demie", "una hora y media"
_HALF_FEMININE = {"demi": "demie", "medio": "media", "mezzo": "mezza", "meio": "meia"}
# a fraction of a unit: "three quarters of a kilogram", "trois quarts de litre"
_PART_OF: dict[str, dict[str, str]] = {
    "en": {"1/4": "a quarter", "3/4": "three quarters", "1/3": "a third", "2/3": "two thirds"},
    "fr": {"1/4": "un quart", "3/4": "trois quarts", "1/3": "un tiers", "2/3": "deux tiers"},
    "es": {"1/4": "un cuarto", "3/4": "tres cuartos", "1/3": "un tercio", "2/3": "dos tercios"},
    "it": {"1/4": "un quarto", "3/4": "tre quarti", "1/3": "un terzo", "2/3": "due terzi"},
    "pt_BR": {"1/4": "um quarto", "3/4": "três quartos", "1/3": "um terço", "2/3": "dois terços"},
    "de": {
        "1/4": "ein Viertel",
        "3/4": "drei Viertel",
        "1/3": "ein Drittel",
        "2/3": "zwei Drittel",
    },
    "nl": {"1/4": "een kwart", "3/4": "driekwart", "1/3": "een derde", "2/3": "twee derde"},
}
_OF = {"fr": "de", "es": "de", "it": "di", "pt_BR": "de"}


def _vulgar(text: str) -> str:
    """½ and 2½ as 1/2 and 2 1/2, which the reader says by what stands around them."""

    def slash(match: re.Match[str]) -> str:
        whole = (match.group("whole") or "").rstrip(" \u00a0")
        fraction = VULGAR[match.group("frac")]
        start, end = match.span()
        before = " " if not whole and start and text[start - 1].isalnum() else ""
        after = " " if end < len(text) and text[end].isalnum() else ""
        return f"{before}{whole} {fraction}{after}" if whole else f"{before}{fraction}{after}"

    return _VULGAR.sub(slash, text)


def _part_of(fraction: str, noun: Noun, nw: Numbering) -> str | None:
    """A quarter or a third of a unit, as the language says it ("a quarter of an hour",
    "trois quarts d'heure", "tre quarti d'ora", "een kwart liter")."""
    part = _PART_OF.get(nw.code, {}).get(fraction)
    if part is None:
        return None
    code, name = nw.code, noun.one
    if code == "en":
        return f"{part} of {'an' if name[:1] in 'aeiou' or name.startswith('hour') else 'a'} {name}"
    if code in _OF:
        of = _OF[code]
        if code in ("fr", "it") and name[:1].casefold() in "aeiouéèh":
            return f"{part} {of[0]}'{name}"
        return f"{part} {of} {name}"
    return f"{part} {name}"


def _whole_and_fraction(whole: int, fraction: str, nw: Numbering, noun: Noun | None) -> str:
    """2½ (or 2 1/2), with the unit or noun after it when there is one: "two and a half
    kilograms", "deux heures et demie", "zweieinhalb Stunden", "anderhalf uur"."""
    code = nw.code
    part = _AND_FRACTION[code][fraction]
    if code in _FRACTION_AND:
        if noun is None:
            return f"{_cardinal(whole, nw)} {_FRACTION_AND[code]} {part}"
        if code == "en":
            return f"{_cardinal(whole, nw)} and {part} {noun.many}"
        if noun.feminine:
            part = _HALF_FEMININE.get(part, part)
        counted_noun = _counted_noun(nw, _Value(str(whole)), noun)
        return f"{counted_noun} {_FRACTION_AND[code]} {part}"
    said = counted(whole, nw) if code == "de" else _cardinal(whole, nw)
    if code == "de":
        joined = said + part if fraction in ("1/2", "1/4", "3/4") else f"{said} {part}"
        return f"{joined} {noun.many}" if noun else joined
    if fraction == "1/2":  # Dutch: anderhalf, tweeënhalf; "-halve" before a de-word
        said = "ander" if whole == 1 else said + ("ën" if said.endswith("e") else "en")
        if noun is None:
            return said + "half"
        neuter = noun.one.casefold() in noun_genders.DUTCH_NEUTER
        return f"{said}{'half' if neuter else 'halve'} {noun.one}"
    return f"{said} {part} {noun.many}" if noun else f"{said} {part}"


class _Around:
    """What stands around a number in its text: the words before and after it, and what
    they make of it (a date, a year, a version, a noun it agrees with)."""

    def __init__(self, text: str, nw: Numbering) -> None:
        self.text, self.nw = text, nw
        self.months = {
            m.casefold(): i + 1 for i, m in enumerate(phrasebook(_LANGUAGE_OF[nw.code]).months)
        }

    def previous(self, start: int) -> str:
        found = _PREVIOUS_WORD.search(self.text[max(0, start - 30) : start])
        return found.group(1).casefold() if found else ""

    def next_word(self, end: int, *, skip_of: bool = True) -> str:
        """The word after `end`; past "de" / "of" (1 de mayo) unless `skip_of` is False."""
        pattern = _NEXT_WORD if skip_of else _WORD_AFTER
        found = pattern.match(self.text, end, min(len(self.text), end + 40))
        return found.group(1) if found else ""

    def month_after(self, end: int) -> bool:
        return self.next_word(end).casefold() in self.months

    def is_version(self, start: int, previous: str) -> bool:
        """v2.0, V1.2.3, "version 2.7.1": a version, read with the language's "point"."""
        text = self.text
        if start >= 1 and text[start - 1] in "vV" and (start < 2 or not text[start - 2].isalnum()):
            return True
        return previous in _VERSION_WORDS

    def before_a_date(self, previous: str, start: int) -> bool:
        """After an article or preposition that stands before a date ("le", "am", "op");
        in English, "on the" (and "by/until/from the")."""
        if self.nw.code != "en":
            return previous in self.nw.date_cues
        return _ENGLISH_DATE_CUE.search(self.text[max(0, start - 20) : start]) is not None

    def italian_ordinal_degree(self, previous: str, match: re.Match[str]) -> bool:
        """Italian "1°" is an ordinal (primo) after a verb of arriving or before a noun such
        as "posto", unless temperature words stand near (ci sono 35°)."""
        around = self.text[max(0, match.start() - 40) : match.end() + 30].casefold()
        if _IT_TEMPERATURE.search(around):
            return False
        following = self.next_word(match.end(), skip_of=False).casefold()
        return previous in _IT_ORDINAL_CUES or following in _IT_ORDINAL_NOUNS

    def in_a_date(self, day: int, previous: str, end: int) -> str | None:
        """A day beside a month's name: "14 November" (the fourteenth of November),
        "November 14" (November fourteenth), "1er mai" aside, "1 maggio" (primo)."""
        if not 1 <= day <= 31:
            return None
        code = self.nw.code
        if self.month_after(end):
            if code == "en":
                return f"the {_ordinal(day, self.nw)} of"
            if day == 1 and code in ("fr", "it", "pt_BR"):
                return {"fr": "premier", "it": "primo", "pt_BR": "primeiro"}[code]
            return None
        if code == "en" and previous in self.months:
            return _ordinal(day, self.nw)
        return None

    def is_year(self, value: int, previous: str, end: int) -> bool:
        if not 1100 <= value <= 2099:
            return False
        code = self.nw.code
        if code == "en":
            return not self.counted_after(previous, end)
        if code not in ("de", "nl"):
            return False  # said the same either way
        if previous in self.nw.year_cues or previous in self.months:
            return True
        following = self.next_word(end)
        if code == "de":
            return not following[:1].isupper() or following.casefold() in self.months
        return not following

    def counted_after(self, previous: str, end: int) -> bool:
        """English "2024 people": a number before a counted noun (a plural) is a count,
        unless a word before it calls for a year ("in 2024 people ...")."""
        if previous in _EN_YEAR_CUES or previous in self.months:
            return False
        following = self.next_word(end, skip_of=False)
        word = following.casefold()
        if not following[:1].islower():
            return False
        if word in _EN_COUNTED:
            return True
        return (
            len(word) >= 4
            and word.endswith("s")
            and not word.endswith(("ss", "us", "is"))
            and word not in _EN_VERBS_IN_S
        )

    def agreeing(self, value: int, previous: str, end: int) -> str | None:
        """A whole number agreeing with the noun after it ("trente et une pages", "quinientas
        personas", "un'ora", "in einer Stunde"); None when no noun follows or the number
        is said as alone."""
        nw, code = self.nw, self.nw.code
        if code == "es" and value == 1 and previous == "la":
            return "una"  # a la 1: the hour
        following = self.next_word(end, skip_of=False)
        if not following or following.casefold() in _NOT_NOUNS.get(code, ()):
            return None
        if previous in _LABELS.get(code, ()):
            return None  # temporada 1 capítulo 3, Staffel 1 Folge 3: a label, not a count
        fem = noun_genders.feminine(following, code)
        if code in ("fr", "pt_BR"):
            return counted(value, nw, feminine=True) if fem else None
        if code == "es":
            return counted(value, nw, feminine=fem)  # veintiún kilos, veintiuna horas
        if code == "it" and value == 1:
            if fem:
                return "un'" if following[:1].casefold() in _VOWELS else "una"
            return "uno" if _IMPURE_S.match(following.casefold()) else "un"
        if code == "de" and value == 1 and following[:1].isupper():
            if following.casefold() in self.months:
                return None
            return _german_one(following, previous)
        return None

    def phone_cue(self, match: re.Match[str]) -> bool:
        """Whether words that call for a phone number stand just before the number."""
        start = match.start()
        return _PHONE_CUE.search(self.text, max(0, start - 40), start) is not None

    def counts_thousands(self, end: int) -> bool:
        """Whether what follows `end` is counted in thousands ("5K subs")."""
        return self.next_word(end, skip_of=False).casefold() in _THOUSANDS_OF

    def masculine_after(self, end: int) -> bool:
        """Whether a Spanish masculine noun (or an adjective before one) follows `end`."""
        word = self.next_word(end, skip_of=False)
        folded = word.casefold()
        return (
            bool(word)
            and folded not in _SPANISH_NOT_NOUNS
            and not noun_genders.feminine(word, "es")
        )

    def noun_after(self, end: int) -> Noun | None:
        """The noun after `end` when it is one the language's tables know (a feminine one, a
        unit's name, a noun "half" goes with), as written; None otherwise."""
        word = self.next_word(end, skip_of=False)
        folded = word.casefold()
        if not word:
            return None
        code = self.nw.code
        names = {n.one.casefold() for n in self.nw.units.values()}
        names |= {n.many.casefold() for n in self.nw.units.values()}
        halves = _HALF_NOUNS.get(code, frozenset())
        singular = folded[:-1] if folded.endswith("s") else folded
        feminine = noun_genders.feminine(word, code)
        if singular != folded and (singular in halves or noun_genders.feminine(singular, code)):
            return Noun(word[:-1], word, feminine=feminine)  # 1½ horas: "una hora y media"
        if feminine or folded in names or folded in halves:
            return Noun(word, word, feminine=feminine)
        return None

    def after_next_word(self, end: int) -> int:
        found = _WORD_AFTER.match(self.text, end, min(len(self.text), end + 40))
        return found.end() if found else end

    def part_before_noun(
        self, written: str, groups: dict[str, str | None], end: int, previous: str = ""
    ) -> str | None:
        """1/2 before a unit or a noun: "medio kilo", "meia hora", "half a kilogram", German
        in the case a preposition before it asks ("mit einem halben Liter"); None when no such
        noun follows."""
        nw = self.nw
        unit = groups.get("unit")
        if written in _PART_OF["en"] and unit:
            noun = nw.units[nw.extra_units.get(unit) or UNIT_ALIASES.get(unit, unit)]
            said = _part_of(written, noun, nw)
            if said and said.startswith("ein ") and previous in noun_genders.GERMAN_DATIVE:
                said = "einem " + said[4:]  # mit einem Viertel Liter
            return said
        if written != "1/2":
            return None
        if unit:
            noun = nw.units[nw.extra_units.get(unit) or UNIT_ALIASES.get(unit, unit)]
            return _half(noun.one, noun.feminine, nw, previous) + noun.one
        if groups.get("bare"):
            return None
        clock = groups.get("clock")
        if clock:  # Dutch "1/2 uur"
            return _half(clock, False, nw) + clock
        following = self.next_word(end, skip_of=False)
        if following.casefold() in _HALF_OF.get(nw.code, ()):
            return _HALF_OF_SAID[nw.code]  # ½ of the cake: "half of the cake", "la moitié du"
        if nw.code == "en" and following in ("a", "an"):
            return "half"  # ½ an hour
        names = {n.one.casefold(): n for n in nw.units.values()}
        noun_of = names.get(following.casefold())
        known = noun_of is not None or following.casefold() in _HALF_NOUNS.get(nw.code, ())
        if not following or not (known or noun_genders.feminine(following, nw.code)):
            return None
        fem = noun_of.feminine if noun_of is not None else noun_genders.feminine(following, nw.code)
        return _half(following, fem, nw, previous).rstrip(" ")

    def german_dot(
        self, value: _Value, whole: str | None, previous: str, end: int, start: int = 0
    ) -> str:
        """German "3." is an ordinal before a month, a lower-case word or a noun such as
        Platz; otherwise a number ending a sentence."""
        following = self.next_word(end)
        if (
            whole
            and following
            and 1 <= len(whole) <= 4
            and (
                following.casefold() in self.months
                or following[:1].islower()
                or following.casefold() in _DE_NOUNS
                or previous in _DATIVE | _ARTICLE
            )
        ):
            case = previous
            if previous in ("der", "des") and self.previous_article(start):
                case = "dem"  # vor der dritten Runde, des zweiten Teils: the -en of the case
            return _german_ordinal(int(whole), self.nw, case, following.casefold() in self.months)
        return value.words(self.nw) + "."

    def previous_article(self, start: int) -> bool:
        """Whether "der"/"des" before `start` is a case other than the nominative: a
        genitive "des", or "der" after a preposition (mit der, vor der)."""
        words = self.text[max(0, start - 40) : start].split()
        if len(words) < 1:
            return False
        if words[-1].casefold() == "des":
            return True
        return len(words) >= 2 and words[-2].casefold() in noun_genders.GERMAN_DATIVE


class _Reader:
    """One text's numbers, read in one language: each match of a pattern by its shape (a
    time, a date, a range, a phone number) and what stands around it (`_Around`)."""

    def __init__(self, text: str, nw: Numbering, limit: int | None) -> None:
        self.text, self.nw, self.limit = text, nw, limit
        self.around = _Around(text, nw)
        self.said = 0  # letters and digits said before the number being read
        self.skip_to = 0  # a reading that said the word after its number too: where it ends

    def substitute(self, pattern: re.Pattern[str], read: Callable[[re.Match[str]], str]) -> str:
        """The text with each match of `pattern` as `read` says it, with spaces where it
        touches letters. Past `limit` letters and digits said, the rest is left as it is
        (it is cut there) and not searched: the work is bounded by what is said."""
        out, position, said = [], 0, 0
        for match in pattern.finditer(self.text):
            start, end = match.span()
            between = self.text[position:start]
            said += sum(c.isalnum() for c in between)
            if self.limit is not None and said > self.limit:
                break
            self.said = said
            words = read(match)
            if self.skip_to > end:
                end, self.skip_to = self.skip_to, 0
            said += sum(c.isalnum() for c in words)
            before = " " if start and self.text[start - 1].isalnum() else ""
            after = " " if end < len(self.text) and self.text[end].isalnum() else ""
            if words.endswith(("'", "-")):  # "un'ora", "une demi-heure": one word with the next
                after = ""
                end = _BLANKS.match(self.text, end).end()  # type: ignore[union-attr]  # `*`: it matches
            out += [between, before, words, after]
            position = end
        out.append(self.text[position:])
        return "".join(out)

    def number(self, match: re.Match[str]) -> str:
        groups: dict[str, Any] = dict.fromkeys(_GROUPS) | match.groupdict()  # (some lack some)
        written = groups["num"]
        if len(written) > MAX_SPAN:
            return self.long(written) + match.group(0)[match.end("num") - match.start() :]
        said = self.shaped(match, written, groups)
        if groups["sign"] in ("-", "−") and not said.startswith(self.nw.minus):
            said = f"{self.nw.minus} {said}"
        elif groups["sign"] == "+" and not said.startswith(self.nw.plus):
            said = f"{self.nw.plus} {said}"
        if groups["hash"]:
            said = self.nw.number.format(n=said)
        return said

    def long(self, written: str) -> str:
        """A run too long to be one thing: each number in it on its own, digit by digit past
        MAX_DIGITS, a separator other than a space a pause (and past the limit, as written)."""
        said, out = self.said, []
        parts = re.split(r"([^0-9]+)", written)
        for i, part in enumerate(parts):
            if self.limit is not None and said > self.limit:
                out.append("".join(parts[i:]).lstrip(" \u00a0\u202f"))
                break
            if part.isdigit() and self.limit is not None and len(part) > MAX_DIGITS:
                keep = max(0, self.limit - said)  # (each digit says a letter at least)
                out.append(f"{_digits(part[:keep], self.nw)} {part[keep:]}".strip())
                said += len(out[-1])
            elif part.isdigit():
                out.append(_integer(part, self.nw))
                said += len(out[-1])
            elif part.strip(" \u00a0\u202f"):  # 1-2-3, 1.2.3: a pause between them
                out[-1:] = [out[-1] + ","] if out else []
        return " ".join(out)

    def shaped(self, match: re.Match[str], written: str, groups: dict[str, str | None]) -> str:
        """The number by its shape (a time, a date, a range, a phone number) and what stands
        around it (money, a unit, an ordinal's ending)."""
        nw, start = self.nw, match.start()
        previous = self.around.previous(match.start("num") if not groups["cur"] else start)
        tail = self.suffix(match, groups)
        phone = self.phone(match, written, groups)
        if phone is not None:
            return phone + tail
        if re.search(r"[ \u00a0\u202f]", written):
            return self.spaced(match, written, groups, previous)
        if _VERSION.fullmatch(written) and self.around.is_version(match.start("num"), previous):
            said = f" {nw.version_dot or nw.dot} ".join(_integer(p, nw) for p in written.split("."))
            return said + tail
        dated = self.dated(written, groups, previous)
        if dated is not None:
            return dated
        if re.search(r"[-–]", written):
            return self.dashed(match, written, groups, previous)
        if ":" in written:
            said = self.colon(written, groups)
            clock_word = (groups.get("clock") or "").strip()
            if groups["ampm"] or (clock_word and clock_word in said.split()):
                return said  # 18:45 Uhr: "achtzehn Uhr fünfundvierzig", Uhr said once
            return said + tail
        if "/" in written:
            before_noun = self.around.part_before_noun(written, groups, match.end(), previous)
            if before_noun is not None:
                return before_noun
            return self.slash(written, previous, start) + tail
        if (
            nw.clock_cues
            and groups["clock"] is None
            and "." in written
            and previous in nw.clock_cues
        ):
            clock = _clock_with_dot(self.nw, written)
            if clock is not None:
                return clock + tail
        if groups["clock"] is not None:
            clock = _clock_with_dot(self.nw, written) if "." in written else None
            if clock is not None:
                return clock
            if written.isdigit() and len(written) <= 2:
                return _clock(int(written), 0, nw)
        if groups["sign"] == "+" and written.isdigit() and len(written) >= 7:
            return _phone(self.nw, [written], country=False)
        return self.single(match, written, groups, previous)

    def piece(self, match: re.Match[str], written: str) -> str:
        """A part of a longer run (a date before a time, the start of a range), read by its
        own shape without what stands after the run."""
        return self.shaped(match, written, {**dict.fromkeys(_GROUPS), "bare": "yes"})

    def suffix(self, match: re.Match[str], groups: dict[str, str | None]) -> str:
        """What follows a time, a score or a fraction, kept as written (they take no unit)."""
        if groups.get("bare"):
            return ""
        return match.group(0)[match.end("num") - match.start() :]

    def colon(self, written: str, groups: dict[str, str | None]) -> str:
        parts = written.split(":")
        if not all(p.isdigit() for p in parts):
            return self.long(written)
        if len(parts) == 2:
            hour, minute = parts
            ampm = (groups.get("ampm") or "")[:1].lower()
            if len(minute) == 2 and int(minute) < 60 and int(hour) < (13 if ampm else 24):
                return _clock(int(hour), int(minute), self.nw, ampm)
            if len(minute) == 2 and int(minute) < 60:  # 25:30 of a video
                return f"{_integer(hour, self.nw)} {_cardinal(int(minute), self.nw)}"
            return self.nw.score.format(a=_integer(hour, self.nw), b=_integer(minute, self.nw))
        return " ".join(
            _cardinal(int(p), self.nw) if len(p) <= MAX_DIGITS else _digits(p, self.nw)
            for p in parts
        )

    def slash(self, written: str, previous: str, start: int) -> str:
        nw = self.nw
        parts = written.split("/")
        if not all(p.isdigit() for p in parts) or len(parts) > 3:
            return self.long(written)
        if len(parts) == 3:
            date_said = _numeric_date(self.nw, parts, previous, order=("dm", "md"))
            return date_said if date_said is not None else self.long(written)
        a, b = parts
        if len(a) <= 2 and len(b) <= 2 and self.around.before_a_date(previous, start):
            order = ("md",) if nw.code == "en" else ("dm",)
            date_said = _numeric_date(self.nw, parts, previous, order=order)
            if date_said is not None:  # "on the 3/5": "on the fifth of March"
                return date_said.removeprefix("the ") if nw.code == "en" else date_said
        if (a, b) == ("24", "7"):
            return f"{_cardinal(24, nw)} {_cardinal(7, nw)}"
        zero = a[0] == "0" or b[0] == "0"
        if not zero and int(b) in nw.fractions and 0 < int(a) < int(b):
            noun = nw.fractions[int(b)]
            count = "een" if nw.code == "nl" and a == "1" else counted(int(a), nw)  # een derde
            return f"{count} {noun.one if a == '1' else noun.many}"
        if not zero and b == "10" and int(a) <= 10:
            return nw.out_of.format(a=_cardinal(int(a), nw), b=_cardinal(10, nw))
        if len(a) <= 2 and len(b) <= 2 and max(len(a), len(b)) == 2:
            date_said = _numeric_date(self.nw, parts, previous, order=("dm", "md"))
            if date_said is not None:
                return date_said
        if int(a) <= int(b):
            return nw.out_of.format(a=_integer(a, nw), b=_integer(b, nw))
        return f"{_integer(a, nw)} {_integer(b, nw)}"

    def dated(self, written: str, groups: dict[str, str | None], previous: str) -> str | None:
        """2026-12-02, 2.12.2026, 2-12-2026, and German's 2.12.; None when not a date."""
        parts = re.split(r"[.\-]", written)
        seps = set(re.findall(r"[.\-]", written))
        if len(seps) != 1 or not all(p.isdigit() for p in parts):
            return None
        if len(parts) == 3 and len(parts[0]) == 4 and seps == {"-"}:
            year, month, day = (int(p) for p in parts)
            if len(parts[1]) == 2 and len(parts[2]) == 2 and _valid_date(day, month, year):
                return _date(day, month, year, self.nw, previous) + _suffix_after_date(groups)
            return None
        if len(parts) == 3 and len(parts[0]) <= 2 and len(parts[1]) <= 2:
            said = _numeric_date(self.nw, parts, previous, order=("dm",))
            return None if said is None else said + _suffix_after_date(groups)
        if (
            self.nw.code == "de"
            and len(parts) == 2
            and groups.get("dot")
            and seps == {"."}
            and len(parts[0]) <= 2
            and len(parts[1]) <= 2
        ):
            return _numeric_date(self.nw, parts, previous, order=("dm",))
        return None

    def spaced(
        self, match: re.Match[str], written: str, groups: dict[str, str | None], previous: str
    ) -> str:
        """1 000 000 (thousands), 06 12 34 56 78 and +44 20 7946 0958 (a phone number: a
        leading 0 or +), or numbers side by side."""
        pieces = re.split(r"[ \u00a0\u202f]", written)
        last = pieces[-1]
        if len(pieces) == 2 and last in _AND_FRACTION["en"] and pieces[0].isdigit():
            mixed = self.mixed(match, pieces[0], last, groups)
            if mixed is not None:
                return mixed
        head = re.match(r"[0-9]+", last)
        if (
            head
            and _thousands([*pieces[:-1], head.group(0)])
            and len(head.group(0)) == 3
            and all(p.isdigit() for p in pieces[:-1])
        ):
            return self.single(match, "".join(pieces), groups, previous)
        digits = sum(len(p) for p in pieces)
        plain = all(p.isdigit() for p in pieces)
        if plain and digits >= 7 and (groups["sign"] == "+" or pieces[0].startswith("0")):
            return _phone(self.nw, pieces, country=groups["sign"] == "+") + self.suffix(
                match, groups
            )
        # 333 123 4567, 347 5551234: no number but a phone's (2019 2020 2021: years side by side)
        if plain and digits >= 9 and not all(len(p) == 4 for p in pieces):
            return _phone(self.nw, pieces, country=False) + self.suffix(match, groups)
        said = [self.piece(match, p) for p in pieces[:-1]]
        return " ".join([*said, self.shaped(match, last, groups)])

    def phone(
        self, match: re.Match[str], written: str, groups: dict[str, str | None]
    ) -> str | None:
        """A phone number told by its country's grouping, or by the words before it ("call
        me on", "llámame al"): digit by digit, its groups as pauses; None when not one."""
        if groups.get("bare") or any(
            groups.get(g) for g in ("cur", "cura", "pct", "unit", "mult", "abbr", "ord", "hm")
        ):
            return None
        if groups["deg"] is not None or not 6 <= sum(c.isdigit() for c in written) <= 15:
            return None
        pieces = _PHONE_SEPARATORS.split(written)
        if not all(p.isdigit() for p in pieces):
            return None
        separators = set(_PHONE_SEPARATORS.findall(written))
        plus = groups["sign"] == "+"
        shaped = _phone_shape(self.nw.code, pieces, separators)
        if not shaped and not (plus and len(pieces) > 1) and not self.around.phone_cue(match):
            return None
        if self.nw.code == "fr" and len(pieces) == 1 and len(written) == 10:
            pieces = [written[i : i + 2] for i in range(0, 10, 2)]  # 06 12 34 56 78
        return _phone(self.nw, pieces, country=plus)

    def scaled(self, value: _Value, key: str, currency: str | None) -> str:
        """A number before a big number's name or abbreviation: "fünf Millionen Euro",
        "zwei Komma fünf Milliarden", "cinque milioni di euro", "zehntausend"."""
        nw = self.nw
        if key == "thousand":  # German "Tsd.": zehntausend, eintausend
            if value.fraction is None and len(value.whole) <= 9:
                return counted(int(value.whole), nw) + "tausend"
            return f"{value.words(nw)} tausend"
        noun = SCALE_NOUNS[nw.code][key]
        name = noun.one if value.singular(nw) else noun.many
        count = value.count_words(nw, noun)
        said = name if count == "un" and name.startswith("mil ") else f"{count} {name}"
        if not currency:
            return said
        money = nw.money[MONEY_ALIASES.get(currency.strip(), currency.strip())]
        return f"{said} {_of_scale(nw, name, money.many)}{money.many}"

    def mixed(
        self, match: re.Match[str], whole: str, fraction: str, groups: dict[str, str | None]
    ) -> str | None:
        """2 1/2 (or 2½) and the unit or noun after it; None when it is not one number."""
        nw = self.nw
        if len(whole) > 6 or (len(whole) > 1 and whole[0] == "0") or groups.get("bare"):
            return None
        if groups["cur"] or groups["cura"] or groups["pct"] or groups["deg"] is not None:
            return None
        unit, clock = groups["unit"], (groups["clock"] or "").strip()
        noun = nw.units[nw.extra_units.get(unit) or UNIT_ALIASES.get(unit, unit)] if unit else None
        if clock:  # Dutch "1½ uur"
            noun = Noun(clock, clock)
        if noun is None and nw.code in _FRACTION_AND and nw.code != "en":
            noun = self.around.noun_after(match.end())
            if noun is not None:  # "deux heures et demie": the noun is said before the half
                self.skip_to = self.around.after_next_word(match.end())
        return _whole_and_fraction(int(whole), fraction, nw, noun)

    def dashed(
        self, match: re.Match[str], written: str, groups: dict[str, str | None], previous: str
    ) -> str:
        """5-10 a range, 3-1 a score, 555-1234 and 0800-123-456 a phone number."""
        pieces = re.split(r"[-–]", written)
        digits = sum(len(p) for p in pieces)
        plain = all(p.isdigit() for p in pieces)
        phone_like = len(pieces) >= 3 or (
            digits >= 7 and ((len(pieces[0]), len(pieces[1])) == (3, 4) or pieces[0][0] == "0")
        )
        if plain and phone_like and digits >= 7:
            return _phone(self.nw, pieces, country=groups["sign"] == "+") + self.suffix(
                match, groups
            )
        if len(pieces) != 2:
            return self.long(written) + self.suffix(match, groups)
        a, b = pieces
        if ":" in written:  # 10:00-12:00
            return self.nw.range.format(a=self.piece(match, a), b=self.shaped(match, b, groups))
        va, vb = _parse(a, self.nw), _parse(b, self.nw)
        if va is None or vb is None or "-" in a:
            return self.long(written) + self.suffix(match, groups)
        years = self.nw.code in ("en", "de", "nl") and all(
            v.fraction is None and len(v.whole) == 4 and 1100 <= int(v.whole) <= 2099
            for v in (va, vb)
        )
        first = _year(int(a), self.nw) if years else va.words(self.nw)
        score = va.decimal >= vb.decimal
        rest = self.single(
            match,
            b,
            {**groups, "score": "yes"} if score else groups,
            previous if not years else "im",
        )
        way = self.nw.score if score else self.nw.range
        return way.format(a=first, b=rest)

    def single(
        self, match: re.Match[str], written: str, groups: dict[str, str | None], previous: str
    ) -> str:
        """One number and what stands around it."""
        nw = self.nw
        value = _parse(written, nw)
        if value is None:
            return _several(written, nw) + self.suffix(match, groups)
        whole = value.whole if value.fraction is None else None
        money = groups["cur"] or groups["cura"] or groups["mult_cur"]  # 5k€
        unit = groups["unit"]
        mult = groups["mult"] or ("m" if unit == "m" and money else None)
        if groups["abbr"]:
            key = SCALE_ABBREVIATIONS[nw.code][groups["abbr"]]
            return self.scaled(value, key, money or groups["abbr_cur"])
        if mult in ("M", "bn") and value.fraction is not None:  # 2.5M: "two point five million"
            return self.scaled(value, "million" if mult == "M" else "billion", money)
        if mult == "K" and not money and not self.around.counts_thousands(match.end()):
            return f"{value.words(nw)} K"  # 4K, a 5K run
        if mult:
            scaled = (
                value.decimal * {"k": 1000, "K": 1000, "m": 10**6, "M": 10**6, "bn": 10**9}[mult]
            )
            if scaled == scaled.to_integral_value() and len(str(int(scaled))) <= MAX_DIGITS:
                value = _Value(str(int(scaled)))
                whole = value.whole
            unit = None if unit == "m" else unit
            groups = {**groups, "count": "yes"}  # (no year, no date: 1.5k is a count)
        if money:
            return _money(self.nw, value, MONEY_ALIASES.get(money.strip(), money.strip()))
        if groups["pct"]:
            return _counted_noun(self.nw, value, nw.units["%"])
        if groups["deg"] is not None:
            if (
                whole
                and not groups["scale"]
                and nw.articles
                and previous in nw.articles
                and not re.match(r"[ \t\u00a0]", groups["deg"])
            ):
                return _ordinal(int(whole), nw)  # "il 3° posto"
            if (
                nw.code == "it"
                and whole
                and not groups["scale"]
                and not groups["sign"]
                and not re.match(r"[ \t\u00a0]", groups["deg"])
                and self.around.italian_ordinal_degree(previous, match)
            ):
                return _ordinal(int(whole), nw)  # "è arrivato 1°": primo
            return _counted_noun(self.nw, value, nw.units["°" + (groups["scale"] or "")])
        if groups["hm"] is not None:
            if groups["hmin"] and whole and int(whole) < 24:
                return _clock(int(whole), int(groups["hmin"]), nw)
            return _counted_noun(self.nw, value, nw.units["h"])
        if groups["ampm"] and whole and 1 <= int(whole) <= 12:
            return _clock(int(whole), 0, nw, groups["ampm"][:1].lower())
        if groups["ampm"]:
            return value.words(nw) + " " + groups["ampm"].strip()
        if unit:
            key = nw.extra_units.get(unit) or UNIT_ALIASES.get(unit, unit)
            return _counted_noun(self.nw, value, nw.units[key])
        if groups["ord"] and whole:
            kind = nw.ordinals[groups["ord"].lower()]
            if kind == "m" and nw.code == "es" and self.around.masculine_after(match.end()):
                kind = "short"  # el 1.º piso: "primer piso", el 3.º día: "tercer día"
            return _ordinal(int(whole), nw, kind)
        if groups["plus"]:
            return f"{value.words(nw)} {nw.plus}"
        if groups["x"]:
            return f"{value.words(nw)} {phrasebook(_LANGUAGE_OF[nw.code]).times}"
        if groups["clock"]:
            return f"{value.words(nw)} {groups['clock'].strip()}"
        end = match.end()
        if groups["dot"] is not None:
            return self.around.german_dot(value, whole, previous, end, match.start())
        if groups["decade"] is not None:
            return _decade(self.nw, value, whole, previous, end)
        if whole and not groups["sign"] and not groups["hash"] and not groups.get("count"):
            said = self.around.in_a_date(int(whole), previous, end) if len(whole) <= 2 else None
            if said is not None:
                return said
            if (
                len(whole) == 4
                and written.isdigit()
                and self.around.is_year(int(whole), previous, end)
            ):
                return _year(int(whole), nw)  # (1,234 is never a year)
        if (
            whole
            and not groups["hash"]
            and not groups.get("score")
            and len(whole) <= MAX_DIGITS
            and (len(whole) == 1 or whole[0] != "0")
        ):
            agreed = self.around.agreeing(int(whole), previous, end)
            if agreed is not None:
                return agreed
        return value.words(nw)


def read_numbers(text: str, language: str, limit: int | None = None) -> str:
    """`text` with its numbers, dates, times, money and units as words in `language` (a
    pocket-tts language name). Past `limit` letters and digits of output (the most that is
    said), the rest is left as written: the work stays bounded by what is said."""
    if any(c in VULGAR for c in text):
        text = _vulgar(text[:MAX_TEXT]) + text[MAX_TEXT:]
    if "(" in text:
        text = _area_codes(text[:MAX_TEXT]) + text[MAX_TEXT:]
    if not any(c.isdigit() for c in text):
        return text
    text, rest = text[:MAX_TEXT], text[MAX_TEXT:]
    nw = numbering(language)
    sums = _Reader(text, nw, limit)
    text = sums.substitute(_EXPRESSION, functools.partial(_expression, nw))
    reader = _Reader(text, nw, limit)
    text = reader.substitute(_pattern(nw.code), reader.number)
    return text + rest


# ---- Discord's timestamps ----------------------------------------------------------------
# Discord's timestamps (`<t:SECONDS:STYLE>`) as a reader of the message sees them, by style,
# in the server's time zone. Pure functions (the present moment is an argument).
#
# Discord shows each style in the reader's own time zone, which the bot cannot know; it reads
# them in the server's (`/config text timezone`, UTC by default), and says "UTC" after a time of
# day read in the default zone, where a listener elsewhere would otherwise take it for theirs.
# The styles, as Discord documents them: t (a short time), T (a long time: said as the short
# one), d (a short date), D (a long date), f (date and time, the default), F (the weekday, the
# date and the time), R (relative: "in 3 hours", "2 days ago", from babel's CLDR data).
#
# What is made here still has digits ("14 November 2023 at 4:13 pm"): the number reader turns
# them into words in the same language afterwards, as everything else in the message.

STYLES = "tTdDfFR"
DEFAULT_ZONE = "UTC"
MAX_ZONE_NAME = 64  # an IANA name is at most about 30 characters

# "{date} at {time}" per language (numbers' code): the word before a time of day
_AT_TIME = {
    "en": "{date} at {time}",
    "fr": "{date} à {time}",
    "de": "{date} um {time}",
    "es": "{date} a las {time}",
    "it": "{date} alle {time}",
    "pt_BR": "{date} às {time}",
    "nl": "{date} om {time}",
}
_LOCALE = {"pt_BR": "pt_BR"}  # babel's locale for a numbers code (the same elsewhere)


@functools.lru_cache(maxsize=64)
def zone(name: str) -> tzinfo | None:
    """The time zone called `name` (an IANA name such as Europe/Paris, or UTC), or None."""
    if not name or len(name) > MAX_ZONE_NAME or name.startswith(("/", ".")) or ".." in name:
        return None
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


@functools.cache
def _zone_names() -> tuple[str, ...]:
    return tuple(sorted(available_timezones() | {DEFAULT_ZONE}))


def zone_names(typed: str, most: int = 25) -> list[str]:
    """Up to `most` time zone names holding what was typed (any case), for a choice list."""
    wanted = typed.strip().casefold()[:MAX_ZONE_NAME]
    return [name for name in _zone_names() if wanted in name.casefold()][:most]


def read_timestamp(
    seconds: int, style: str, language: str, zone_name: str, now: datetime
) -> str | None:
    """The words (with digits) for a timestamp in `style`, in `language`, in the zone
    `zone_name` (UTC when it is unknown); None when the moment cannot be a date."""
    code = numbering(language).code
    where = zone(zone_name) or UTC
    try:
        moment = datetime.fromtimestamp(seconds, where)
    except (OverflowError, OSError, ValueError):
        return None
    if style == "R":
        return format_timedelta(
            moment - now, add_direction=True, locale=_LOCALE.get(code, code.split("_")[0])
        )
    book = phrasebook(language)
    date = book.date.format(day=moment.day, month=book.months[moment.month - 1], year=moment.year)
    # a no-break space after the day: "14. November" starting a line is no list's "14. "
    date = date.replace(" ", "\u00a0", 1)
    if style in "dD":
        return date
    time = _time_of_day(moment, code)
    if where is UTC:
        time += " UTC"
    if style in "tT":
        return time
    said = _AT_TIME.get(code, _AT_TIME["en"]).format(date=date, time=time)
    if style == "F":
        locale = _LOCALE.get(code, code.split("_")[0])
        weekday = get_day_names("wide", locale=locale)[moment.weekday()]
        said = f"{weekday}, {said}"
    return said


def _time_of_day(moment: datetime, code: str) -> str:
    """4:13 pm in English (as Discord shows it there), 16:13 elsewhere."""
    if code == "en":
        hour = moment.hour % 12 or 12
        ampm = "am" if moment.hour < 12 else "pm"
        return f"{hour}:{moment.minute:02d} {ampm}" if moment.minute else f"{hour} {ampm}"
    return f"{moment.hour}:{moment.minute:02d}"
