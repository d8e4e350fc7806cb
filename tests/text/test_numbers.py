"""Numbers, dates, times, money and units read as words in the message's language (issue 36,
item 1): per language, what a speaker of it writes in chat and says reading it aloud, written
from that language's own conventions (French phone numbers in pairs, German "am 3. Mai", the
Spanish "veintiún", Italian "il 1° maggio", Brazilian "R$"), then the bounds."""

from __future__ import annotations

import time

import pytest

from bot.text.numbers import MAX_DIGITS, read_numbers
from bot.text.words import MessageFacts, Names, ReadOptions, announce, plain_name, speakable

ENGLISH = [
    # cardinals, decimals, negatives: "," groups thousands, "." is the point
    ("I have 1,000.5 apples", "I have one thousand point five apples"),
    ("1,000,000 views", "one million views"),
    ("it is -3 outside", "it is minus three outside"),
    ("0.5", "zero point five"),
    ("pick 1,2,3", "pick one, two, three"),  # a list, not a number
    ("v1.2.3", "v one point two point three"),  # a version: "point" (issue 50)
    ("192.168.1.1", "one hundred and ninety-two dot one hundred and sixty-eight dot one dot one"),
    ("Player123", "Player one hundred and twenty-three"),
    ("#1 fan", "number one fan"),
    ("5k followers", "five thousand followers"),
    ("10M views", "ten million views"),
    ("5+ years", "five plus years"),
    ("3x faster", "three times faster"),
    # ordinals
    ("the 3rd time", "the third time"),
    ("1st, 2nd and 22nd", "first, second and twenty-second"),
    ("the 21st century", "the twenty-first century"),
    # times
    ("at 15:30", "at fifteen thirty"),
    ("at 9:05", "at nine oh five"),
    ("at 12:00", "at twelve o'clock"),
    ("at 3pm", "at three p.m."),
    ("at 7:45am", "at seven forty-five a.m."),
    ("at 3 PM", "at three p.m."),
    ("from 10:00-12:00", "from ten o'clock to twelve o'clock"),
    # dates (day first, as the other six languages; 12/25 can only be month first) and years
    ("on 2026-12-02", "on the second of December twenty twenty-six"),
    ("on 02/12", "on the second of December"),
    ("on 12/25", "on the twenty-fifth of December"),
    ("born 25/12/1990", "born the twenty-fifth of December nineteen ninety"),
    ("on 14 November 2023", "on the fourteenth of November twenty twenty-three"),
    ("November 14, 2023", "November fourteenth, twenty twenty-three"),
    ("in 1999", "in nineteen ninety-nine"),
    ("in 2005", "in two thousand and five"),
    ("the 1990s", "the nineteen nineties"),
    ("in my 20s", "in my twenties"),
    ("2020-2024", "twenty twenty to twenty twenty-four"),
    # percentages, money, units: singular for one, plural otherwise
    ("95% done", "ninety-five percent done"),
    ("$5", "five dollars"),
    ("$1", "one dollar"),
    ("20 €", "twenty euros"),
    ("€1", "one euro"),
    ("£3.50", "three pounds fifty"),
    ("£0.50", "fifty pence"),
    ("$0.99", "ninety-nine cents"),
    ("$5.05", "five dollars and five cents"),
    ("$1,250.75", "one thousand two hundred and fifty dollars seventy-five"),
    ("$5m", "five million dollars"),
    ("5 km", "five kilometers"),
    ("1 km", "one kilometer"),
    ("1.5 km", "one point five kilometers"),
    ("2.5 kg", "two point five kilograms"),
    ("20°C", "twenty degrees Celsius"),
    ("-1°C", "minus one degree Celsius"),
    ("-4.5°F", "minus four point five degrees Fahrenheit"),
    ("256GB", "two hundred and fifty-six gigabytes"),
    ("100mph", "one hundred miles per hour"),
    ("wait 5s", "wait five seconds"),
    ("5 in the box", "five in the box"),  # "in" is never inches
    # ranges, scores, fractions, marks
    ("5-10 people", "five to ten people"),
    ("8-12 weeks", "eight to twelve weeks"),
    ("we won 3-1", "we won three to one"),
    ("1/2", "one half"),
    ("3/4", "three quarters"),
    ("7/10", "seven out of ten"),
    ("10/10 would buy again", "ten out of ten would buy again"),
    ("24/7", "twenty-four seven"),
    # digit by digit: phone-like runs, a leading zero, past MAX_DIGITS
    ("call 555-1234", "call five five five, one two three four"),
    ("+44 20 7946 0958", "plus forty-four, two zero, seven nine four six, zero nine five eight"),
    ("1-800-555-0199", "one, eight zero zero, five five five, zero one nine nine"),
    ("agent 007", "agent zero zero seven"),
    ("1234567890123", "one two three four five six seven eight nine zero one two three"),
    # sums
    ("2+2=4", "two plus two equals four"),
    ("10 - 4 = 6", "ten minus four equals six"),
    ("2 * 3 = 6", "two times three equals six"),
    ("10/2=5", "ten divided by two equals five"),
]

FRENCH = [
    ("1 000,5 euros", "mille virgule cinq euros"),
    ("1.000", "mille"),
    ("3,14", "trois virgule quatorze"),
    ("il fait -5", "il fait moins cinq"),
    ("80 ans", "quatre-vingts ans"),
    ("71", "soixante et onze"),
    ("j'ai 21 ans", "j'ai vingt et un ans"),
    ("le 3e", "le troisième"),
    ("le 2ème étage", "le deuxième étage"),
    ("la 1re fois", "la première fois"),
    ("la 1ère fois", "la première fois"),
    ("le 1er mai", "le premier mai"),
    ("la 2nde guerre", "la seconde guerre"),
    ("RDV à 18h45", "RDV à dix-huit heures quarante-cinq"),
    ("à 15h", "à quinze heures"),
    ("à 1h", "à une heure"),
    ("à 21h", "à vingt et une heures"),
    ("à 15:30", "à quinze heures trente"),
    ("à 12:30", "à midi trente"),
    ("à 0:00", "à minuit"),
    ("de 9h à 17h", "de neuf heures à dix-sept heures"),
    ("le 02/12", "le deux décembre"),
    ("le 1/05", "le premier mai"),
    ("le 14 juillet 1789", "le quatorze juillet mille sept cent quatre-vingt-neuf"),
    ("le 2026-12-02", "le deux décembre deux mille vingt-six"),
    ("20 % de réduction", "vingt pour cent de réduction"),
    ("12,5 %", "douze virgule cinq pour cent"),
    ("20 €", "vingt euros"),
    ("1 €", "un euro"),
    ("4,99 €", "quatre euros quatre-vingt-dix-neuf"),
    ("0,50 €", "cinquante centimes"),
    ("1 500 €", "mille cinq cents euros"),
    ("1 000 000 €", "un million d'euros"),
    ("2 000 000 $", "deux millions de dollars"),
    ("1 £", "une livre"),
    ("3,5 kg", "trois virgule cinq kilos"),
    ("1,5 km", "un virgule cinq kilomètre"),  # singular below two
    ("Il fait 25 °C", "Il fait vingt-cinq degrés Celsius"),
    ("5 Go", "cinq gigaoctets"),
    ("130 km/h", "cent trente kilomètres heure"),
    ("5-10 km", "cinq à dix kilomètres"),
    ("ils ont gagné 3-1", "ils ont gagné trois à un"),
    ("3/4", "trois quarts"),
    ("7/10", "sept sur dix"),
    ("06 12 34 56 78", "zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit"),
    (
        "+33 6 12 34 56 78",
        "plus trente-trois, six, douze, trente-quatre, cinquante-six, soixante-dix-huit",
    ),
    ("2 + 2 = 4", "deux plus deux égale quatre"),
]

GERMAN = [
    ("1.000,5", "eintausend Komma fünf"),
    ("1.500 Leute", "eintausendfünfhundert Leute"),
    ("3,5 km", "drei Komma fünf Kilometer"),
    ("0,5 l", "null Komma fünf Liter"),
    ("es sind -10 Grad", "es sind minus zehn Grad"),
    ("Zimmer 101", "Zimmer einhunderteins"),
    ("der 3. Platz", "der dritte Platz"),
    ("der 1. FC Köln", "der erste FC Köln"),
    ("am 3. Mai", "am dritten Mai"),
    ("vom 1. bis 3. Mai", "vom ersten bis dritten Mai"),
    ("Ich bin 21.", "Ich bin einundzwanzig."),  # a sentence's end, not an ordinal
    ("am 24.12. um 18 Uhr", "am vierundzwanzigsten Dezember um achtzehn Uhr"),
    ("Heute ist der 3.10.", "Heute ist der dritte Oktober"),
    ("am 2.12.2026", "am zweiten Dezember zweitausendsechsundzwanzig"),
    ("Berlin, 9.11.1989", "Berlin, neunter November neunzehnhundertneunundachtzig"),
    ("um 15:30", "um fünfzehn Uhr dreißig"),
    ("ab 16.30 Uhr", "ab sechzehn Uhr dreißig"),
    ("um 1 Uhr", "um ein Uhr"),
    ("um 3pm", "um fünfzehn Uhr"),
    ("seit 1989", "seit neunzehnhundertneunundachtzig"),
    ("1999 war ein gutes Jahr", "neunzehnhundertneunundneunzig war ein gutes Jahr"),
    ("1990-2000", "neunzehnhundertneunzig bis zweitausend"),
    ("20 %", "zwanzig Prozent"),
    ("Das kostet 4,99 €", "Das kostet vier Euro neunundneunzig"),
    ("1 €", "ein Euro"),
    ("5 $", "fünf Dollar"),
    ("1'000 CHF", "eintausend Franken"),
    ("1 h", "eine Stunde"),
    ("25 °C", "fünfundzwanzig Grad Celsius"),
    ("5-10 Minuten", "fünf bis zehn Minuten"),
    ("Bayern gewinnt 3:1", "Bayern gewinnt drei zu eins"),
    ("Endstand 2-0", "Endstand zwei zu null"),
    ("1/2", "ein halb"),
    ("3/4", "drei Viertel"),
    ("2 + 2 = 4", "zwei plus zwei gleich vier"),
]

SPANISH = [
    ("1.000,5", "mil coma cinco"),
    ("3,14", "tres coma catorce"),
    ("21 km", "veintiún kilómetros"),
    ("tengo 31 años", "tengo treinta y un años"),
    ("21 de ellos", "veintiuno de ellos"),
    ("1.000.000 de personas", "un millón de personas"),
    ("el 1º", "el primero"),
    ("el 2º piso", "el segundo piso"),
    ("la 1ª vez", "la primera vez"),
    ("la 3ª", "la tercera"),
    ("el 1er lugar", "el primer lugar"),
    ("el 3er día", "el tercer día"),
    ("Son las 15:30", "Son las quince y treinta"),
    ("a las 9:05", "a las nueve y cinco"),
    ("a la 1:00", "a la una en punto"),
    ("el 1 de mayo", "el uno de mayo"),
    ("el 12/10", "el doce de octubre"),
    ("1 de enero de 2026", "uno de enero de dos mil veintiséis"),
    ("50 %", "cincuenta por ciento"),
    ("1 %", "uno por ciento"),
    ("cuesta 2,50 €", "cuesta dos euros con cincuenta"),
    ("21 €", "veintiún euros"),
    ("200 £", "doscientas libras"),
    ("1.000.000 €", "un millón de euros"),
    ("hace 30 °C", "hace treinta grados centígrados"),
    ("1 h", "una hora"),
    ("5-10", "cinco a diez"),
    ("2 + 2 = 4", "dos más dos igual a cuatro"),
]

ITALIAN = [
    ("1.000,5", "mille virgola cinque"),
    ("23", "ventitré"),
    ("nel 2023", "nel duemilaventitré"),
    ("nel 1969", "nel millenovecentosessantanove"),
    ("21 anni", "ventuno anni"),
    ("il 3° posto", "il terzo posto"),  # the degree sign after an article: an ordinal
    ("ci sono 35°", "ci sono trentacinque gradi"),
    ("la 2ª", "la seconda"),
    ("3ª classe", "terza classe"),
    ("il 1° maggio", "il primo maggio"),
    ("il 1 maggio", "il primo maggio"),
    ("il 25 dicembre", "il venticinque dicembre"),
    ("alle 20:30", "alle venti e trenta"),
    ("alle 15.30", "alle quindici e trenta"),
    ("alle 15:00", "alle quindici"),
    ("a mezzogiorno, le 12:00", "a mezzogiorno, le mezzogiorno"),
    ("costa 3,50 €", "costa tre euro e cinquanta"),
    ("1 £", "una sterlina"),
    ("1.000.000 €", "un milione di euro"),
    ("100 %", "cento per cento"),
    ("1,5 kg", "uno virgola cinque chili"),
    ("5-10 persone", "da cinque a dieci persone"),
    ("3/4", "tre quarti"),
    ("2 + 2 = 4", "due più due uguale quattro"),
]

PORTUGUESE = [
    ("1.000,5", "mil vírgula cinco"),
    ("16", "dezesseis"),  # Brazilian (Portugal: dezasseis)
    ("R$ 50,00", "cinquenta reais"),
    ("R$ 1.500,00", "mil e quinhentos reais"),
    ("R$ 20,50", "vinte reais e cinquenta centavos"),
    ("R$ 0,99", "noventa e nove centavos"),
    ("R$ 1,00", "um real"),
    ("2 £", "duas libras"),
    ("200 £", "duzentas libras"),
    ("1º lugar", "primeiro lugar"),
    ("2ª feira", "segunda feira"),
    ("às 15:30", "às quinze e trinta"),
    ("às 8h30", "às oito e trinta"),
    ("às 2h", "às duas horas"),
    ("à 1h", "à uma hora"),
    ("às 12:00", "às meio-dia"),
    ("1 de maio", "primeiro de maio"),
    ("dia 15/11", "dia quinze de novembro"),
    ("em 2026-12-02", "em dois de dezembro de dois mil e vinte e seis"),
    ("30 °C", "trinta graus Celsius"),
    ("22 km", "vinte e dois quilômetros"),
    ("1,5 km", "um vírgula cinco quilômetro"),  # singular below two
    ("5-10", "cinco a dez"),
    ("2 + 2 = 4", "dois mais dois igual a quatro"),
]

DUTCH = [
    ("1.000,5", "duizend komma vijf"),
    ("101", "honderdeen"),
    ("21 jaar", "eenentwintig jaar"),
    ("de 1e plaats", "de eerste plaats"),
    ("de 2de", "de tweede"),
    ("de 8ste", "de achtste"),
    ("om 20:00", "om twintig uur"),
    ("om 15:30", "om vijftien uur dertig"),
    ("om 8.30 uur", "om acht uur dertig"),
    ("op 5 mei", "op vijf mei"),
    ("op 5-12-2026", "op vijf december tweeduizendzesentwintig"),
    ("in 1995", "in negentienhonderdvijfennegentig"),
    ("€ 2,50", "twee euro vijftig"),
    ("€ 1", "één euro"),
    ("20 %", "twintig procent"),
    ("5 km", "vijf kilometer"),
    ("5 min", "vijf minuten"),
    ("20°C", "twintig graden Celsius"),
    ("5-10", "vijf tot tien"),
    ("2-1 gewonnen", "twee één gewonnen"),
    ("3/4", "drie kwart"),
    ("2 + 2 = 4", "twee plus twee is vier"),
]

TABLES = {
    "english": ENGLISH,
    "french": FRENCH,
    "german": GERMAN,
    "spanish": SPANISH,
    "italian": ITALIAN,
    "portuguese": PORTUGUESE,
    "dutch": DUTCH,
}


@pytest.mark.parametrize(
    ("language", "written", "said"),
    [(language, written, said) for language, table in TABLES.items() for written, said in table],
)
def test_numbers_are_read_as_words_in_the_language(language: str, written: str, said: str) -> None:
    assert read_numbers(written, language) == said


def test_each_language_has_a_table_of_its_own() -> None:
    assert set(TABLES) == {
        "english",
        "french",
        "german",
        "spanish",
        "italian",
        "portuguese",
        "dutch",
    }
    assert all(len(table) >= 20 for table in TABLES.values())


def test_a_language_variant_reads_as_its_base_and_an_unknown_one_as_english() -> None:
    assert read_numbers("à 15h30", "french_24l") == "à quinze heures trente"
    assert read_numbers("5 km", "klingon") == "five kilometers"


# ---- in the reading: what comes before and around the numbers ---------------------------------
NAMES = Names(users={1: "Player1"})


@pytest.mark.parametrize(
    ("text", "spoken", "options"),
    [
        ("x > 5", "x greater than five", ReadOptions()),
        ("if n<10 then", "if n less than ten then", ReadOptions()),
        ("5*3=15", "five times three equals fifteen", ReadOptions()),
        ("1. first\n2. second", "first. second", ReadOptions()),  # list markers are not read
        ("> 5 apples", "five apples", ReadOptions()),  # nor a quote's marker
        ("hi <@1>", "hi Player one", ReadOptions()),  # a name's digits, not a mention's id
        ("**5** stars", "five stars", ReadOptions()),
        ("`15:30`", "fifteen thirty", ReadOptions()),
        ("1️⃣", "keycap one", ReadOptions()),
        (
            "am <t:1700000000:D>",
            "am vierzehnten November zweitausenddreiundzwanzig",
            ReadOptions(language="german"),
        ),  # written "am 14. November 2023", then read
        ("R2 is here", "R two D two is here", ReadOptions(dictionary={"R2": "R2 D2"})),
        ("2*2=4 at 15:30", "2 times 2 equals 4 at 15:30", ReadOptions(numbers=False)),
        ("5*3=15", "5 times 3 equals 15", ReadOptions(numbers=False)),
    ],
)
def test_numbers_in_the_reading(text: str, spoken: str, options: ReadOptions) -> None:
    assert speakable(text, NAMES, options) == spoken


def test_names_and_the_bots_own_counts_are_words_too() -> None:
    assert plain_name("xXSniper99Xx") == "xXSniper ninety-nine Xx"
    images = MessageFacts("", "Bob", ("image/png",) * 2)
    assert announce(images, NAMES, ReadOptions(), say_name=True) == "Bob sent two images"
    portuguese = ReadOptions(language="portuguese")
    assert announce(images, NAMES, portuguese, say_name=True) == "Bob enviou duas imagens"
    stickers = MessageFacts("", "Bob", stickers=2)
    assert announce(stickers, NAMES, ReadOptions(numbers=False), say_name=True) == (
        "Bob sent 2 stickers"
    )


# ---- bounds --------------------------------------------------------------------------------------
def test_a_number_past_the_bound_is_read_digit_by_digit() -> None:
    longest = "9" * MAX_DIGITS
    assert read_numbers(longest, "english").startswith("nine hundred and ninety-nine billion")
    assert read_numbers(longest + "9", "english") == " ".join(["nine"] * (MAX_DIGITS + 1))
    snowflake = "1200000000000000001"  # an id pasted in chat
    assert read_numbers(snowflake, "german").split() == [
        "eins",
        "zwei",
        *["null"] * 16,
        "eins",
    ]
    assert read_numbers("0." + "3" * 40, "english").count("three") == 40


def test_past_the_limit_the_text_is_left_as_written() -> None:
    """The most that is said bounds the work: past `limit` letters, nothing more is read (the
    reading is cut there)."""
    text = " ".join(str(n) for n in range(1000, 5000))
    said = read_numbers(text, "english", limit=200)
    assert said.startswith("one thousand one thousand and one")
    assert said.endswith("4998 4999")
    assert len(said) < len(text) + 400
    digits = "7" * 10_000
    assert read_numbers(digits, "french", limit=100).count("sept") <= 101


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        speakable(text, Names(), ReadOptions(max_length=2000))
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize(
    "unit",
    [
        *[
            "1-",
            "1 ",
            "12:",
            "1/",
            "1.",
            "1,",
            "1+",
            "$1 ",
            "1e ",
            "+1 ",
            "2026-12-02 ",
            "9" * 30 + " ",
        ],
        *["½ ", "2½ kg ", "5 Mio. ", "1.º piso ", "(21) ", "612 345 678 ", "5K subs "],
    ],
)
@pytest.mark.timing  # a ratio of times: beside five workers it once measured 13.7x
def test_reading_numbers_stays_linear_in_the_length(unit: str) -> None:
    """Four times the text takes about four times as long (a ratio within one run, not a
    time limit): no pattern goes back over what it read."""
    short, long = (unit * 5000)[:4000], (unit * 20000)[:16000]
    _seconds(short)
    ratio = _seconds(long) / _seconds(short)
    assert ratio < 9, f"{ratio:.1f}x the time for 4x the text"


def test_a_text_without_digits_is_returned_as_it_is() -> None:
    text = "no numbers here, only words"
    assert read_numbers(text, "english") is text
