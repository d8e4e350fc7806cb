"""Numbers read as a native speaker reads them (issue 50), per language, written from that
language's own conventions: the number agreeing with the noun after it (its gender, and in
German its case after a preposition), versions read with the language's "point", a short
day/month date after an article, English counts that are not years, a fraction before a unit,
and each language's single cases (the Italian ordinal "1°", phone numbers in groups, the
Dutch "km/u"); feminine and masculine ordinals, ranges and scores beside them.

Each table keeps the kinds apart (a comment before each), so that a failure names its kind.
"""

from __future__ import annotations

import pytest

from bot.text.numbers import read_numbers

ENGLISH = [
    # a count is not a year: a thousands separator, a counted noun after it
    ("2024 people signed up", "two thousand and twenty-four people signed up"),
    ("we have 1,234 members", "we have one thousand two hundred and thirty-four members"),
    ("1,999 votes", "one thousand nine hundred and ninety-nine votes"),
    ("2,000 was the goal", "two thousand was the goal"),
    ("1500 users online", "one thousand five hundred users online"),
    ("1200 children", "one thousand two hundred children"),
    ("2048 bytes", "two thousand and forty-eight bytes"),
    ("1800 followers", "one thousand eight hundred followers"),
    ("1100 messages a day", "one thousand one hundred messages a day"),
    # ... and a year stays one
    ("1999 was a good year", "nineteen ninety-nine was a good year"),
    ("2023 was wild", "twenty twenty-three was wild"),
    ("in 2024 people voted", "in twenty twenty-four people voted"),
    ("since 1990", "since nineteen ninety"),
    ("back in 1987", "back in nineteen eighty-seven"),
    # versions: "point", an address keeps "dot"
    ("v2.0", "v two point zero"),
    ("v2.7.1 is out", "v two point seven point one is out"),
    ("version 3.10.2", "version three point ten point two"),
    ("V1.2", "V one point two"),
    ("ping 10.0.0.1", "ping ten dot zero dot zero dot one"),
    # a short date after "on the": month first
    ("see you on the 3/5", "see you on the fifth of March"),
    ("due by the 12/1", "due by the first of December"),
    ("from the 4/7", "from the seventh of April"),
    ("3/4 of them", "three quarters of them"),  # no "the" before it: a fraction
    # a fraction before a unit or a noun
    ("1/2 cup of sugar", "half a cup of sugar"),
    ("1/2 kg", "half a kilogram"),
    ("1/2 hour", "half an hour"),
    ("add 1/2 l of milk", "add half a liter of milk"),
    ("1/2", "one half"),
    # phone numbers in groups
    ("call 333 123 4567", "call three three three, one two three, four five six seven"),
    ("1 000 000", "one million"),  # groups of three are a number
    ("from 2019 2020 2021", "from twenty nineteen twenty twenty twenty twenty-one"),
    ("2,500 fans showed up", "two thousand five hundred fans showed up"),
    # ordinals, ranges, scores
    ("she came 3rd", "she came third"),
    ("the 1st and the 2nd", "the first and the second"),
    ("the 21st", "the twenty-first"),
    ("pages 5-10", "pages five to ten"),
    ("10-20 minutes", "ten to twenty minutes"),
    ("the score was 3-2", "the score was three to two"),
    ("a 2-1 win", "a two to one win"),
    ("won 4-0", "won four to zero"),
    (
        "version 2.0 ships 1,250 fixes",
        "version two point zero ships one thousand two hundred and fifty fixes",
    ),
]

FRENCH = [
    # the number agrees with a feminine noun
    ("le livre fait 31 pages", "le livre fait trente et une pages"),
    ("1 heure de route", "une heure de route"),
    ("il reste 21 minutes", "il reste vingt et une minutes"),
    ("j'ai attendu 1 semaine", "j'ai attendu une semaine"),
    ("201 personnes", "deux cent une personnes"),
    ("41 questions", "quarante et une questions"),
    ("1 fois par jour", "une fois par jour"),
    ("61 voix contre 40", "soixante et une voix contre quarante"),
    ("81 pages", "quatre-vingt-une pages"),
    ("101 nuits", "cent une nuits"),
    ("1 photo", "une photo"),
    ("1 seconde", "une seconde"),
    # ... and stays masculine before a masculine one
    ("1 an", "un an"),
    ("21 jours", "vingt et un jours"),
    ("1 million de vues", "un million de vues"),
    ("71 pages", "soixante et onze pages"),
    # versions
    ("v2.0", "v deux point zéro"),
    ("la v3.1.4", "la v trois point un point quatre"),
    ("version 1.5", "version un point cinq"),
    # a short date after "le", "du", "au"
    ("on se voit le 3/5", "on se voit le trois mai"),
    ("rendez-vous le 1/6", "rendez-vous le premier juin"),
    ("fermé du 9/8 au 2/9", "fermé du neuf août au deux septembre"),
    ("mange 3/4 du gâteau", "mange trois quarts du gâteau"),  # no article: a fraction
    # a fraction before a unit or a noun
    ("1/2 kg de farine", "un demi-kilo de farine"),
    ("1/2 heure", "une demi-heure"),
    ("1/2 litre de lait", "un demi-litre de lait"),
    # ordinals, feminine and masculine
    ("la 1re place", "la première place"),
    ("le 1er", "le premier"),
    ("les 1res", "les premières"),
    ("le 2nd tour", "le second tour"),
    ("la 3e saison", "la troisième saison"),
    ("il a fini 2e", "il a fini deuxième"),
    # ranges and scores
    ("de 5 à 10 personnes", "de cinq à dix personnes"),
    ("pages 5-10", "pages cinq à dix"),
    ("5-21 personnes", "cinq à vingt et une personnes"),
    ("ils ont gagné 3-2", "ils ont gagné trois à deux"),
    ("score final 2-0", "score final deux à zéro"),
    ("PSG 2-1 Lyon", "PSG deux à un Lyon"),
    ("à 21h", "à vingt et une heures"),
    ("il y a 1 personne", "il y a une personne"),
]

GERMAN = [
    # "1" before a noun: its gender, and its case after a preposition
    ("Ich bin in 1 Stunde da", "Ich bin in einer Stunde da"),
    ("mit 1 Freund", "mit einem Freund"),
    ("seit 1 Woche", "seit einer Woche"),
    ("vor 1 Jahr", "vor einem Jahr"),
    ("nach 1 Minute", "nach einer Minute"),
    ("in 1 Monat", "in einem Monat"),
    ("für 1 Tag", "für einen Tag"),
    ("für 1 Stunde", "für eine Stunde"),
    ("für 1 Jahr", "für ein Jahr"),
    ("ohne 1 Cent", "ohne einen Cent"),
    ("1 Person fehlt", "eine Person fehlt"),
    ("1 Tag später", "ein Tag später"),
    ("noch 1 Runde", "noch eine Runde"),
    ("1 Bier bitte", "ein Bier bitte"),
    ("1 Nachricht", "eine Nachricht"),
    ("mit 1 Stimme Vorsprung", "mit einer Stimme Vorsprung"),
    # ... and "eins" where no noun follows
    ("Seite 1 von 5", "Seite eins von fünf"),
    ("zwischen 1 und 2", "zwischen eins und zwei"),
    ("um 1 Uhr", "um ein Uhr"),
    ("Staffel 1 Folge 3", "Staffel eins Folge drei"),
    # versions
    ("v2.0", "v zwei Punkt null"),
    ("Version 2.7.1", "Version zwei Punkt sieben Punkt eins"),
    ("v1.10", "v eins Punkt zehn"),
    # a short date after "am", "bis zum"
    ("am 3/5", "am dritten Mai"),
    ("bis zum 1/6", "bis zum ersten Juni"),
    ("ab 4/7 geöffnet", "ab vierten Juli geöffnet"),
    # a fraction before a unit or a noun
    ("1/2 kg Mehl", "ein halbes Kilo Mehl"),
    ("1/2 Stunde", "eine halbe Stunde"),
    ("1/2 Liter Milch", "ein halber Liter Milch"),
    ("1/2 l Milch", "ein halber Liter Milch"),
    # ordinals
    ("der 1. Platz", "der erste Platz"),
    ("die 2. Runde", "die zweite Runde"),
    ("am 3. Tag", "am dritten Tag"),
    # ranges and scores
    ("5-10 Leute", "fünf bis zehn Leute"),
    ("Seiten 5-10", "Seiten fünf bis zehn"),
    ("Bayern gewinnt 3-2", "Bayern gewinnt drei zu zwei"),
    ("Dortmund 2-1 Schalke", "Dortmund zwei zu eins Schalke"),
    ("es steht 2:2", "es steht zwei zu zwei"),
    ("in 2 Stunden", "in zwei Stunden"),
    (
        "Ruf an: 0171 1234567",
        "Ruf an: null eins sieben eins, eins zwei drei vier fünf sechs sieben",
    ),
    ("1 h", "eine Stunde"),
]

SPANISH = [
    # the number agrees with the noun
    ("vinieron 2.500 personas", "vinieron dos mil quinientas personas"),
    ("la clase es a la 1", "la clase es a la una"),
    ("1 hora", "una hora"),
    ("21 horas", "veintiuna horas"),
    ("200 páginas", "doscientas páginas"),
    ("300 personas", "trescientas personas"),
    ("1 semana", "una semana"),
    ("101 noches", "ciento una noches"),
    ("1 vez", "una vez"),
    ("41 preguntas", "cuarenta y una preguntas"),
    ("1 persona", "una persona"),
    ("1 día", "un día"),
    ("21 días", "veintiún días"),
    ("1 mes", "un mes"),
    ("temporada 1 capítulo 3", "temporada uno capítulo tres"),
    ("tengo 31 años", "tengo treinta y un años"),
    ("21 de ellos", "veintiuno de ellos"),
    # versions
    ("v2.0", "v dos punto cero"),
    ("versión 1.4.2", "versión uno punto cuatro punto dos"),
    # a short date after "el", "del", "al"
    ("nos vemos el 3/5", "nos vemos el tres de mayo"),
    ("del 1/8 al 15/8", "del uno de agosto al quince de agosto"),
    ("come 3/4 de la tarta", "come tres cuartos de la tarta"),
    # a fraction before a unit or a noun
    ("compra 1/2 kilo de pan", "compra medio kilo de pan"),
    ("1/2 hora", "media hora"),
    ("1/2 kg", "medio kilo"),
    ("1/2 l de leche", "medio litro de leche"),
    # ordinals, feminine and masculine
    ("la 2ª ronda", "la segunda ronda"),
    ("el 1er puesto", "el primer puesto"),
    ("llegó 3º", "llegó tercero"),
    ("la 1ª vez", "la primera vez"),
    ("el 2º piso", "el segundo piso"),
    # ranges and scores
    ("5-10 minutos", "cinco a diez minutos"),
    ("de 5 a 21 personas", "de cinco a veintiuna personas"),
    ("ganamos 3-2", "ganamos tres a dos"),
    ("Madrid 2-1 Barcelona", "Madrid dos a uno Barcelona"),
    ("quedaron 1-1", "quedaron uno a uno"),
    ("páginas 10-20", "páginas diez a veinte"),
    ("llama al 612 34 56 78", "llama al seis uno dos, tres cuatro, cinco seis, siete ocho"),
    ("1 h", "una hora"),
    ("21 km", "veintiún kilómetros"),
    ("a las 3", "a las tres"),
]

ITALIAN = [
    # "1" agrees with the noun: un, uno, una, un'
    ("ci vuole 1 ora", "ci vuole un'ora"),
    ("1 settimana", "una settimana"),
    ("1 giorno", "un giorno"),
    ("1 studente", "uno studente"),
    ("1 zaino", "uno zaino"),
    ("1 persona", "una persona"),
    ("1 idea", "un'idea"),
    ("1 email", "un'email"),
    ("1 mela", "una mela"),
    ("1 di loro", "uno di loro"),
    ("stagione 1 puntata 2", "stagione uno puntata due"),
    ("21 anni", "ventuno anni"),
    # versions
    ("v2.0", "v due punto zero"),
    ("versione 3.1", "versione tre punto uno"),
    ("la v1.2.3", "la v uno punto due punto tre"),
    # a short date after "il", "dal", "l'"
    ("ci vediamo il 3/5", "ci vediamo il tre maggio"),
    ("dal 1/6", "dal primo giugno"),
    ("entro l'8/9", "entro l'otto settembre"),
    # a fraction before a unit or a noun
    ("1/2 chilo di pane", "mezzo chilo di pane"),
    ("1/2 ora", "mezz'ora"),
    ("1/2 kg", "mezzo chilo"),
    ("1/2 litro", "mezzo litro"),
    # the degree sign as an ordinal, unless temperature is the matter
    ("è arrivato 1°", "è arrivato primo"),
    ("si è classificato 2°", "si è classificato secondo"),
    ("1° posto", "primo posto"),
    ("ci sono 35°", "ci sono trentacinque gradi"),
    ("fuori ci sono 30°", "fuori ci sono trenta gradi"),
    ("oggi fa 2°", "oggi fa due gradi"),
    # phone numbers: digits, in their groups
    ("chiamami al 333 123 4567", "chiamami al tre tre tre, uno due tre, quattro cinque sei sette"),
    ("347 5551234", "tre quattro sette, cinque cinque cinque uno due tre quattro"),
    ("1 000 000", "un milione"),
    # ordinals
    ("la 1ª volta", "la prima volta"),
    ("il 1º posto", "il primo posto"),
    ("la 3ª classe", "la terza classe"),
    # ranges and scores
    ("abbiamo vinto 3-2", "abbiamo vinto tre a due"),
    ("pagine 5-10", "pagine da cinque a dieci"),
    ("Milan 2-1 Inter", "Milan due a uno Inter"),
    ("finita 0-0", "finita zero a zero"),
    ("alle 15:30", "alle quindici e trenta"),
    ("1 h", "un'ora"),
    ("2 ore", "due ore"),
]

PORTUGUESE = [
    # the number agrees with the noun
    ("vieram 1.200 pessoas", "vieram mil e duzentas pessoas"),
    ("daqui a 1 hora", "daqui a uma hora"),
    ("2 semanas", "duas semanas"),
    ("22 pessoas", "vinte e duas pessoas"),
    ("300 páginas", "trezentas páginas"),
    ("1 vez", "uma vez"),
    ("1 mensagem", "uma mensagem"),
    ("2 mensagens", "duas mensagens"),
    ("32 fotos", "trinta e duas fotos"),
    ("1.002 pessoas", "mil e duas pessoas"),
    ("1 dia", "um dia"),
    ("2 dias", "dois dias"),
    ("temporada 1 episódio 2", "temporada um episódio dois"),
    ("200 reais", "duzentos reais"),
    # versions
    ("v2.0", "v dois ponto zero"),
    ("versão 1.2.3", "versão um ponto dois ponto três"),
    # a short date after "o", "no dia", "do"
    ("nos vemos no dia 3/5", "nos vemos no dia três de maio"),
    ("até o 1/6", "até o primeiro de junho"),
    ("a partir do 2/9", "a partir do dois de setembro"),
    ("comi 3/4 da pizza", "comi três quartos da pizza"),
    # a fraction before a unit or a noun
    ("comprei 1/2 kg de queijo", "comprei meio quilo de queijo"),
    ("1/2 hora", "meia hora"),
    ("1/2 litro", "meio litro"),
    ("1/2 pizza", "meia pizza"),
    # ordinals, feminine and masculine
    ("1ª vez", "primeira vez"),
    ("2º lugar", "segundo lugar"),
    ("a 3ª rodada", "a terceira rodada"),
    ("o 1º colocado", "o primeiro colocado"),
    # ranges and scores
    ("ganhamos 3-2", "ganhamos três a dois"),
    ("5-10 minutos", "cinco a dez minutos"),
    ("Flamengo 2-1 Vasco", "Flamengo dois a um Vasco"),
    ("ficou 1-1", "ficou um a um"),
    ("liga pra 98765 4321", "liga pra nove oito sete seis cinco, quatro três dois um"),
    ("às 2h", "às duas horas"),
    ("2 £", "duas libras"),
    ("12 horas", "doze horas"),
    ("1 semana", "uma semana"),
    ("21 horas", "vinte e uma horas"),
    ("1 ano", "um ano"),
    ("1 hora e 1 minuto", "uma hora e um minuto"),
    ("v3.0 saiu", "v três ponto zero saiu"),
]

DUTCH = [
    # versions
    ("v2.0", "v twee punt nul"),
    ("versie 1.4.2", "versie één punt vier punt twee"),
    ("v3.1 is uit", "v drie punt één is uit"),
    # a short date after "op", "vanaf", "tot"
    ("zie je op 3/5", "zie je op drie mei"),
    ("vanaf 1/9", "vanaf één september"),
    ("tot 12/6", "tot twaalf juni"),
    ("eet 3/4 op", "eet drie kwart op"),
    # a fraction before a unit or a noun
    ("1/2 kilo", "een halve kilo"),
    ("1/2 uur", "een half uur"),
    ("1/2 l melk", "een halve liter melk"),
    ("1/2 kg kaas", "een halve kilo kaas"),
    # km/u
    ("100 km/u", "honderd kilometer per uur"),
    ("max 50 km/u", "max vijftig kilometer per uur"),
    ("130 km/h", "honderddertig kilometer per uur"),
    # ordinals
    ("de 3de ronde", "de derde ronde"),
    ("de 1ste keer", "de eerste keer"),
    ("de 20e", "de twintigste"),
    # ranges and scores
    ("5-10 minuten", "vijf tot tien minuten"),
    ("Ajax won met 3-2", "Ajax won met drie twee"),
    ("bel 06 12345678", "bel nul zes, één twee drie vier vijf zes zeven acht"),
    ("bel 0612 345 678", "bel nul zes één twee, drie vier vijf, zes zeven acht"),
    ("het werd 2-2", "het werd twee twee"),
    ("van 9-17 uur", "van negen tot zeventien uur"),
    ("1.234 leden", "duizendtweehonderdvierendertig leden"),
    ("de 2e helft", "de tweede helft"),
    ("op 24/12", "op vierentwintig december"),
    ("nog 1 min", "nog één minuut"),
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
def test_read_as_a_native_speaker_reads_it(language: str, written: str, said: str) -> None:
    assert read_numbers(written, language) == said
