"""What the bot adds to messages, in each language: every table is complete, and each
language has its own cases."""

from __future__ import annotations

import re
import string

import pytest

from bot.text.phrasebook import ENGLISH, PHRASEBOOKS, phrasebook
from bot.text.words import (
    MessageFacts,
    Names,
    ReadOptions,
    announce,
    cut_to_length,
    presence_phrase,
    speakable,
)

NAMES = Names(users={1: "Alice"})
TEXT_FIELDS = [f for f, v in vars(ENGLISH).items() if isinstance(v, str)]


def fields_of(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("language", sorted(PHRASEBOOKS))
def test_every_table_is_complete_and_keeps_the_placeholders(language: str) -> None:
    book = PHRASEBOOKS[language]
    for name in TEXT_FIELDS:
        assert getattr(book, name).strip(), (language, name)
        assert fields_of(getattr(book, name)) == fields_of(getattr(ENGLISH, name)), name
    assert len(book.months) == 12
    assert set(book.comparisons) == set(ENGLISH.comparisons)
    assert set(book.attachments) == set(ENGLISH.attachments)
    for noun in book.attachments.values():
        assert "{n}" in noun.many and "{n}" not in noun.one


def test_variants_use_their_base_language_and_unknown_ones_english() -> None:
    assert phrasebook("french_24l") is PHRASEBOOKS["french"]
    assert phrasebook("klingon") is ENGLISH


T = "<t:1700000000:D>"  # 14 November 2023
GIF = ("image/gif",)
CASES = {
    "english": [
        (MessageFacts("hi", "Bob"), "Bob said hi"),
        (MessageFacts("", "Bob", GIF), "Bob sent an image"),
        (
            MessageFacts("", "Bob", ("video/mp4",) * 2, stickers=1),
            "Bob sent two videos and a sticker",
        ),
        (MessageFacts("look", "Bob", reply_to="Alice"), "Bob said, replying to Alice, look"),
        (
            MessageFacts(f"see https://example.com on {T}", "Bob"),
            "Bob said see a link to example.com on the fourteenth of November twenty twenty-three",
        ),
        (MessageFacts("i <3 it, 2*3=6", "Bob"), "Bob said i heart it, two times three equals six"),
        (MessageFacts("||secret|| ```x```", "Bob"), "Bob said a spoiler a code block."),
        (MessageFacts("❤️ <@1>", "Bob"), "Bob said red heart Alice"),
        (
            MessageFacts("x > 5", "Bob", forwarded=True),
            "Bob forwarded a message: x greater than five",
        ),
    ],
    "french": [
        (MessageFacts("salut", "Bob"), "Bob a dit salut"),
        (MessageFacts("", "Bob", GIF), "Bob a envoyé une image"),
        (
            MessageFacts("", "Bob", ("video/mp4",) * 2, stickers=1),
            "Bob a envoyé deux vidéos et un autocollant",
        ),
        (
            MessageFacts("regarde", "Bob", reply_to="Alice"),
            "Bob a dit, en réponse à Alice, regarde",
        ),
        (
            MessageFacts(f"voir https://example.com le {T}", "Bob"),
            "Bob a dit voir un lien vers example.com le quatorze novembre deux mille vingt-trois",
        ),
        (MessageFacts("je <3 ça, 2*3=6", "Bob"), "Bob a dit je cœur ça, deux fois trois égale six"),
        (MessageFacts("||secret|| ```x```", "Bob"), "Bob a dit un texte caché un bloc de code."),
        (MessageFacts("❤️ <@1>", "Bob"), "Bob a dit cœur rouge Alice"),
        (
            MessageFacts("x > 5", "Bob", forwarded=True),
            "Bob a transféré un message : x supérieur à cinq",
        ),
        (
            MessageFacts("bonjour", "Bob", ("image/png",)),
            "Bob a dit bonjour, et a envoyé une image",
        ),
    ],
    "german": [
        (MessageFacts("hallo", "Bob"), "Bob sagt hallo"),
        (MessageFacts("", "Bob", GIF, stickers=2), "Bob hat ein Bild und zwei Sticker geschickt"),
        (
            MessageFacts(f"am {T}", "Bob"),
            "Bob sagt am vierzehnten November zweitausenddreiundzwanzig",
        ),
        (MessageFacts("❤️ x < 5", "Bob"), "Bob sagt rotes herz x kleiner als fünf"),
    ],
    "italian": [
        (MessageFacts("ciao", "Bob"), "Bob ha detto ciao"),
        (MessageFacts("", "Bob", GIF), "Bob ha inviato un'immagine"),
        (MessageFacts(f"il {T}", "Bob"), "Bob ha detto il quattordici novembre duemilaventitré"),
    ],
    "spanish": [
        (MessageFacts("hola", "Bob"), "Bob dijo hola"),
        (MessageFacts("", "Bob", ("audio/ogg",)), "Bob envió un archivo de audio"),
        (MessageFacts(f"el {T}", "Bob"), "Bob dijo el catorce de noviembre de dos mil veintitrés"),
    ],
    "portuguese": [
        (MessageFacts("olá", "Bob"), "Bob disse olá"),
        (MessageFacts("", "Bob", stickers=3), "Bob enviou três figurinhas"),
        (
            MessageFacts(f"em {T}", "Bob"),
            "Bob disse em catorze de novembro de dois mil e vinte e três",
        ),
    ],
    "dutch": [
        (MessageFacts("hoi", "Bob"), "Bob zei hoi"),
        (MessageFacts("", "Bob", GIF), "Bob stuurde een afbeelding"),
        (MessageFacts("❤️", "Bob"), "Bob zei red heart"),  # no Dutch emoji names: English
    ],
}


@pytest.mark.parametrize(
    ("language", "facts", "spoken"),
    [(language, facts, spoken) for language, cases in CASES.items() for facts, spoken in cases],
)
def test_glue_words_are_in_the_language(language: str, facts: MessageFacts, spoken: str) -> None:
    options = ReadOptions(language=language)
    assert announce(facts, NAMES, options, say_name=True) == spoken


# A webhook posting under a name a member goes by (bot/services/autoread.py decides when):
# said as a webhook's, as its author (said, sent, forwarded) and as the author replied to.
WEBHOOK_LINES = {
    "english": (
        "hi",
        "look",
        [
            "a webhook named Bob said hi",
            "a webhook named Bob sent an image",
            "a webhook named Bob forwarded a message: hi",
            "Alice said, replying to a webhook named Bob, look",
        ],
    ),
    "french": (
        "salut",
        "regarde",
        [
            "un webhook nommé Bob a dit salut",
            "un webhook nommé Bob a envoyé une image",
            "un webhook nommé Bob a transféré un message : salut",
            "Alice a dit, en réponse à un webhook nommé Bob, regarde",
        ],
    ),
    "german": (
        "hallo",
        "schau",
        [
            "ein Webhook namens Bob sagt hallo",
            "ein Webhook namens Bob hat ein Bild geschickt",
            "ein Webhook namens Bob hat eine Nachricht weitergeleitet: hallo",
            "Alice sagt, als Antwort an einen Webhook namens Bob, schau",
        ],
    ),
    "italian": (
        "ciao",
        "guarda",
        [
            "un webhook chiamato Bob ha detto ciao",
            "un webhook chiamato Bob ha inviato un'immagine",
            "un webhook chiamato Bob ha inoltrato un messaggio: ciao",
            "Alice ha detto, in risposta a un webhook chiamato Bob, guarda",
        ],
    ),
    "spanish": (
        "hola",
        "mira",
        [
            "un webhook llamado Bob dijo hola",
            "un webhook llamado Bob envió una imagen",
            "un webhook llamado Bob reenvió un mensaje: hola",
            "Alice dijo, respondiendo a un webhook llamado Bob, mira",
        ],
    ),
    "portuguese": (
        "olá",
        "olha",
        [
            "um webhook chamado Bob disse olá",
            "um webhook chamado Bob enviou uma imagem",
            "um webhook chamado Bob encaminhou uma mensagem: olá",
            "Alice disse, respondendo a um webhook chamado Bob, olha",
        ],
    ),
    "dutch": (
        "hoi",
        "kijk",
        [
            "een webhook met de naam Bob zei hoi",
            "een webhook met de naam Bob stuurde een afbeelding",
            "een webhook met de naam Bob stuurde een bericht door: hoi",
            "Alice zei, als antwoord op een webhook met de naam Bob, kijk",
        ],
    ),
}


def test_every_language_says_a_webhook_under_a_members_name() -> None:
    assert set(WEBHOOK_LINES) == set(PHRASEBOOKS)


@pytest.mark.parametrize("language", sorted(WEBHOOK_LINES))
def test_a_webhook_under_a_members_name_is_said_as_one(language: str) -> None:
    hello, look, lines = WEBHOOK_LINES[language]
    options = ReadOptions(language=language)
    said = [
        announce(facts, NAMES, options, say_name=True)
        for facts in (
            MessageFacts(hello, "Bob", author_webhook=True),
            MessageFacts("", "Bob", GIF, author_webhook=True),
            MessageFacts(hello, "Bob", forwarded=True, author_webhook=True),
            MessageFacts(look, "Alice", reply_to="Bob", reply_to_webhook=True),
        )
    ]
    assert said == lines
    unnamed = announce(
        MessageFacts("", "Bob", GIF, author_webhook=True), NAMES, options, say_name=False
    )
    assert unnamed == lines[1]  # (nothing written: always who sent it)


@pytest.mark.parametrize("language", sorted(PHRASEBOOKS))
def test_a_long_message_ends_in_the_language(language: str) -> None:
    options = ReadOptions(language=language, max_length=60)
    line = announce(MessageFacts("word " * 40, "Bob"), NAMES, options, say_name=True)
    assert line.endswith(phrasebook(language).and_so_on) and len(line) <= 60
    assert cut_to_length("a b c", 100, "x") == "a b c"


def test_no_english_is_left_in_a_french_line() -> None:
    options = ReadOptions(language="french")
    said = speakable(
        "<@9> <@&9> <#9> </ping:1> <id:customize> <t:99999999999999999>", NAMES, options
    )
    assert said == "quelqu'un un rôle un salon commande ping une page du serveur une date"
    assert not re.search(r"\b(someone|a role|a channel|slash|server page|a time)\b", said)


def test_join_and_leave_phrases_name_members_as_messages_do() -> None:
    """Fancy letters folded, decorations dropped (a name of emoji alone is read by them, in
    the language), the server's dictionary applied."""
    dutch = ReadOptions(language="dutch", dictionary={"Xav": "Zav"})
    assert presence_phrase("🔥𝓧𝓪𝓿🔥", dutch, joined=True) == "Zav is binnengekomen"
    assert presence_phrase("Xav", dutch, joined=False) == "Zav is vertrokken"
    assert presence_phrase("Bob", ReadOptions(), joined=True) == "Bob joined"
    german = ReadOptions(language="german")
    assert presence_phrase("🔥", german, joined=False) == "feuer ist gegangen"
