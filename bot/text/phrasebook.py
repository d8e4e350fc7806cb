"""Everything the bot adds to what members wrote, in each language Pocket TTS speaks: one
table per language, for translators to read and correct. `{name}`, `{what}`, `{host}` and
the like are filled in by bot/text/words.py; keep them.

A language without a table (or a `_24l` variant of one that has it) uses its base table, and
English last of all.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Attachment:
    one: str  # with its article: "an image"
    many: str  # "{n} images"
    feminine: bool = False  # the count agrees: "duas imagens", "vingt et une images"


@dataclass(frozen=True)
class Phrasebook:
    emoji_code: str  # the `emoji` package's language for emoji names ("en", "fr", ...)
    said: str
    joined: str  # "{name} joined": a member came into the bot's voice channel
    left: str  # "{name} left": a member went out of it
    forwarded_message: str  # "{name} forwarded a message:"
    forwarded_message_alone: str  # the same without the name (said recently)
    replying_to: str
    # A webhook posting under a name a member here goes by is said as one, wherever its name is
    # (the subject of said, sent and forwarded; replying_to's object, in its own case):
    webhook_named: str  # "a webhook named {name}"
    replying_to_webhook: str  # "replying to a webhook named {name}"
    sent: str  # "{name} sent {what}": a message with nothing written
    forwarded_what: str
    # a forum post's first message, its title first ("{name} posted: {title}"), and the same
    # without the name (said recently, or xsaid off)
    posted: str
    new_post: str
    and_sent: str  # "{line}, and sent {what}"
    and_: str  # joins attachments and stickers
    and_so_on: str  # ends a message cut to the length limit
    link_to: str
    link: str
    code_block: str
    spoiler: str
    someone: str
    a_role: str
    a_channel: str
    slash_command: str
    server_page: str
    a_time: str
    custom_emoji: str
    heart: str
    comparisons: dict[str, str]
    times: str
    equals: str
    date: str  # "{day} {month} {year}"
    months: tuple[str, ...]
    # a poll: "{name} asks: {question}", the same without the name, then its answers
    # ("Options: a, b, or c": `or_` between two, `or_last` before the last of three or more)
    asks: str
    poll: str
    options: str
    or_: str
    or_last: str
    # a poll's end (Discord's poll result message): its winner, a tie, no votes at all
    poll_won: str  # "{question}", "{answer}", "{votes}" (the `votes` noun with its count)
    poll_tie: str
    poll_no_votes: str
    votes: Attachment
    attachments: dict[str, Attachment] = field(default_factory=dict)  # image, video, audio,
    # file, sticker


ENGLISH = Phrasebook(
    emoji_code="en",
    said="{name} said",
    joined="{name} joined",
    left="{name} left",
    forwarded_message="{name} forwarded a message:",
    forwarded_message_alone="forwarded a message:",
    replying_to="replying to {name}",
    webhook_named="a webhook named {name}",
    replying_to_webhook="replying to a webhook named {name}",
    sent="{name} sent {what}",
    forwarded_what="{name} forwarded {what}",
    posted="{name} posted: {title}",
    new_post="new post: {title}",
    and_sent="{line}, and sent {what}",
    and_=" and ",
    and_so_on="and so on",
    link_to="a link to {host}",
    link="a link",
    code_block="a code block",
    spoiler="a spoiler",
    someone="someone",
    a_role="a role",
    a_channel="a channel",
    slash_command="slash {name}",
    server_page="a server page",
    a_time="a time",
    custom_emoji="emoji {name}",
    heart="heart",
    comparisons={
        ">": "greater than",
        "<": "less than",
        ">=": "greater than or equal to",
        "<=": "less than or equal to",
        "≠": "not equal to",
    },
    times="times",
    equals="equals",
    date="{day} {month} {year}",
    months=(
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    asks="{name} asks: {question}",
    poll="a poll: {question}",
    options="Options: {answers}",
    or_=" or ",
    or_last=", or ",
    poll_won="The poll “{question}” ended: {answer} won with {votes}",
    poll_tie="The poll “{question}” ended in a tie",
    poll_no_votes="The poll “{question}” ended with no votes",
    votes=Attachment("one vote", "{n} votes"),
    attachments={
        "image": Attachment("an image", "{n} images"),
        "video": Attachment("a video", "{n} videos"),
        "audio": Attachment("an audio file", "{n} audio files"),
        "file": Attachment("a file", "{n} files"),
        "sticker": Attachment("a sticker", "{n} stickers"),
    },
)

FRENCH = Phrasebook(
    emoji_code="fr",
    said="{name} a dit",
    joined="{name} a rejoint le salon",
    left="{name} a quitté le salon",
    forwarded_message="{name} a transféré un message :",
    forwarded_message_alone="a transféré un message :",
    replying_to="en réponse à {name}",
    webhook_named="un webhook nommé {name}",
    replying_to_webhook="en réponse à un webhook nommé {name}",
    sent="{name} a envoyé {what}",
    forwarded_what="{name} a transféré {what}",
    posted="{name} a publié : {title}",
    new_post="nouvelle publication : {title}",
    and_sent="{line}, et a envoyé {what}",
    and_=" et ",
    and_so_on="et cetera",
    link_to="un lien vers {host}",
    link="un lien",
    code_block="un bloc de code",
    spoiler="un texte caché",
    someone="quelqu'un",
    a_role="un rôle",
    a_channel="un salon",
    slash_command="commande {name}",
    server_page="une page du serveur",
    a_time="une date",
    custom_emoji="émoji {name}",
    heart="cœur",
    comparisons={
        ">": "supérieur à",
        "<": "inférieur à",
        ">=": "supérieur ou égal à",
        "<=": "inférieur ou égal à",
        "≠": "différent de",
    },
    times="fois",
    equals="égale",
    date="{day} {month} {year}",
    months=(
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ),
    asks="{name} demande : {question}",
    poll="un sondage : {question}",
    options="Choix : {answers}",
    or_=" ou ",
    or_last=" ou ",
    poll_won="Le sondage « {question} » est terminé : {answer} l'emporte avec {votes}",
    poll_tie="Le sondage « {question} » s'est terminé sur une égalité",
    poll_no_votes="Le sondage « {question} » s'est terminé sans aucun vote",
    votes=Attachment("une voix", "{n} voix", feminine=True),
    attachments={
        "image": Attachment("une image", "{n} images", feminine=True),
        "video": Attachment("une vidéo", "{n} vidéos", feminine=True),
        "audio": Attachment("un fichier audio", "{n} fichiers audio"),
        "file": Attachment("un fichier", "{n} fichiers"),
        "sticker": Attachment("un autocollant", "{n} autocollants"),
    },
)

GERMAN = Phrasebook(
    emoji_code="de",
    said="{name} sagt",
    joined="{name} ist beigetreten",
    left="{name} ist gegangen",
    forwarded_message="{name} hat eine Nachricht weitergeleitet:",
    forwarded_message_alone="hat eine Nachricht weitergeleitet:",
    replying_to="als Antwort an {name}",
    webhook_named="ein Webhook namens {name}",
    replying_to_webhook="als Antwort an einen Webhook namens {name}",
    sent="{name} hat {what} geschickt",
    forwarded_what="{name} hat {what} weitergeleitet",
    posted="{name} hat gepostet: {title}",
    new_post="neuer Beitrag: {title}",
    and_sent="{line}, und hat {what} geschickt",
    and_=" und ",
    and_so_on="und so weiter",
    link_to="ein Link zu {host}",
    link="ein Link",
    code_block="ein Codeblock",
    spoiler="ein Spoiler",
    someone="jemand",
    a_role="eine Rolle",
    a_channel="ein Kanal",
    slash_command="Befehl {name}",
    server_page="eine Serverseite",
    a_time="ein Zeitpunkt",
    custom_emoji="Emoji {name}",
    heart="Herz",
    comparisons={
        ">": "größer als",
        "<": "kleiner als",
        ">=": "größer oder gleich",
        "<=": "kleiner oder gleich",
        "≠": "ungleich",
    },
    times="mal",
    equals="gleich",
    date="{day}. {month} {year}",
    months=(
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ),
    asks="{name} fragt: {question}",
    poll="eine Umfrage: {question}",
    options="Optionen: {answers}",
    or_=" oder ",
    or_last=" oder ",
    poll_won="Die Umfrage „{question}“ ist beendet: {answer} gewinnt mit {votes}",
    poll_tie="Die Umfrage „{question}“ endete unentschieden",
    poll_no_votes="Die Umfrage „{question}“ endete ohne Stimmen",
    votes=Attachment("einer Stimme", "{n} Stimmen", feminine=True),
    attachments={
        "image": Attachment("ein Bild", "{n} Bilder"),
        "video": Attachment("ein Video", "{n} Videos"),
        "audio": Attachment("eine Audiodatei", "{n} Audiodateien", feminine=True),
        "file": Attachment("eine Datei", "{n} Dateien", feminine=True),
        "sticker": Attachment("einen Sticker", "{n} Sticker"),
    },
)

ITALIAN = Phrasebook(
    emoji_code="it",
    said="{name} ha detto",
    joined="{name} ha raggiunto il canale",
    left="{name} ha lasciato il canale",
    forwarded_message="{name} ha inoltrato un messaggio:",
    forwarded_message_alone="ha inoltrato un messaggio:",
    replying_to="in risposta a {name}",
    webhook_named="un webhook chiamato {name}",
    replying_to_webhook="in risposta a un webhook chiamato {name}",
    sent="{name} ha inviato {what}",
    forwarded_what="{name} ha inoltrato {what}",
    posted="{name} ha pubblicato: {title}",
    new_post="nuovo post: {title}",
    and_sent="{line}, e ha inviato {what}",
    and_=" e ",
    and_so_on="eccetera",
    link_to="un link a {host}",
    link="un link",
    code_block="un blocco di codice",
    spoiler="uno spoiler",
    someone="qualcuno",
    a_role="un ruolo",
    a_channel="un canale",
    slash_command="comando {name}",
    server_page="una pagina del server",
    a_time="una data",
    custom_emoji="emoji {name}",
    heart="cuore",
    comparisons={
        ">": "maggiore di",
        "<": "minore di",
        ">=": "maggiore o uguale a",
        "<=": "minore o uguale a",
        "≠": "diverso da",
    },
    times="per",
    equals="uguale",
    date="{day} {month} {year}",
    months=(
        "gennaio",
        "febbraio",
        "marzo",
        "aprile",
        "maggio",
        "giugno",
        "luglio",
        "agosto",
        "settembre",
        "ottobre",
        "novembre",
        "dicembre",
    ),
    asks="{name} chiede: {question}",
    poll="un sondaggio: {question}",
    options="Opzioni: {answers}",
    or_=" o ",
    or_last=" o ",
    poll_won="Il sondaggio «{question}» è terminato: vince {answer} con {votes}",
    poll_tie="Il sondaggio «{question}» è terminato in parità",
    poll_no_votes="Il sondaggio «{question}» è terminato senza voti",
    votes=Attachment("un voto", "{n} voti"),
    attachments={
        "image": Attachment("un'immagine", "{n} immagini", feminine=True),
        "video": Attachment("un video", "{n} video"),
        "audio": Attachment("un file audio", "{n} file audio"),
        "file": Attachment("un file", "{n} file"),
        "sticker": Attachment("uno sticker", "{n} sticker"),
    },
)

SPANISH = Phrasebook(
    emoji_code="es",
    said="{name} dijo",
    joined="{name} se unió",
    left="{name} se fue",
    forwarded_message="{name} reenvió un mensaje:",
    forwarded_message_alone="reenvió un mensaje:",
    replying_to="respondiendo a {name}",
    webhook_named="un webhook llamado {name}",
    replying_to_webhook="respondiendo a un webhook llamado {name}",
    sent="{name} envió {what}",
    forwarded_what="{name} reenvió {what}",
    posted="{name} publicó: {title}",
    new_post="nueva publicación: {title}",
    and_sent="{line}, y envió {what}",
    and_=" y ",
    and_so_on="etcétera",
    link_to="un enlace a {host}",
    link="un enlace",
    code_block="un bloque de código",
    spoiler="un spoiler",
    someone="alguien",
    a_role="un rol",
    a_channel="un canal",
    slash_command="comando {name}",
    server_page="una página del servidor",
    a_time="una fecha",
    custom_emoji="emoji {name}",
    heart="corazón",
    comparisons={
        ">": "mayor que",
        "<": "menor que",
        ">=": "mayor o igual que",
        "<=": "menor o igual que",
        "≠": "distinto de",
    },
    times="por",
    equals="igual a",
    date="{day} de {month} de {year}",
    months=(
        "enero",
        "febrero",
        "marzo",
        "abril",
        "mayo",
        "junio",
        "julio",
        "agosto",
        "septiembre",
        "octubre",
        "noviembre",
        "diciembre",
    ),
    asks="{name} pregunta: {question}",
    poll="una encuesta: {question}",
    options="Opciones: {answers}",
    or_=" o ",
    or_last=" o ",
    poll_won="La encuesta «{question}» terminó: ganó {answer} con {votes}",
    poll_tie="La encuesta «{question}» terminó en empate",
    poll_no_votes="La encuesta «{question}» terminó sin votos",
    votes=Attachment("un voto", "{n} votos"),
    attachments={
        "image": Attachment("una imagen", "{n} imágenes", feminine=True),
        "video": Attachment("un vídeo", "{n} vídeos"),
        "audio": Attachment("un archivo de audio", "{n} archivos de audio"),
        "file": Attachment("un archivo", "{n} archivos"),
        "sticker": Attachment("un sticker", "{n} stickers"),
    },
)

PORTUGUESE = Phrasebook(
    emoji_code="pt",
    said="{name} disse",
    joined="{name} entrou",
    left="{name} saiu",
    forwarded_message="{name} encaminhou uma mensagem:",
    forwarded_message_alone="encaminhou uma mensagem:",
    replying_to="respondendo a {name}",
    webhook_named="um webhook chamado {name}",
    replying_to_webhook="respondendo a um webhook chamado {name}",
    sent="{name} enviou {what}",
    forwarded_what="{name} encaminhou {what}",
    posted="{name} publicou: {title}",
    new_post="nova publicação: {title}",
    and_sent="{line}, e enviou {what}",
    and_=" e ",
    and_so_on="e assim por diante",
    link_to="um link para {host}",
    link="um link",
    code_block="um bloco de código",
    spoiler="um spoiler",
    someone="alguém",
    a_role="um cargo",
    a_channel="um canal",
    slash_command="comando {name}",
    server_page="uma página do servidor",
    a_time="uma data",
    custom_emoji="emoji {name}",
    heart="coração",
    comparisons={
        ">": "maior que",
        "<": "menor que",
        ">=": "maior ou igual a",
        "<=": "menor ou igual a",
        "≠": "diferente de",
    },
    times="vezes",
    equals="igual a",
    date="{day} de {month} de {year}",
    months=(
        "janeiro",
        "fevereiro",
        "março",
        "abril",
        "maio",
        "junho",
        "julho",
        "agosto",
        "setembro",
        "outubro",
        "novembro",
        "dezembro",
    ),
    asks="{name} pergunta: {question}",
    poll="uma enquete: {question}",
    options="Opções: {answers}",
    or_=" ou ",
    or_last=" ou ",
    poll_won="A enquete “{question}” terminou: {answer} venceu com {votes}",
    poll_tie="A enquete “{question}” terminou empatada",
    poll_no_votes="A enquete “{question}” terminou sem votos",
    votes=Attachment("um voto", "{n} votos"),
    attachments={
        "image": Attachment("uma imagem", "{n} imagens", feminine=True),
        "video": Attachment("um vídeo", "{n} vídeos"),
        "audio": Attachment("um arquivo de áudio", "{n} arquivos de áudio"),
        "file": Attachment("um arquivo", "{n} arquivos"),
        "sticker": Attachment("uma figurinha", "{n} figurinhas", feminine=True),
    },
)

DUTCH = Phrasebook(
    emoji_code="en",  # the emoji package has no Dutch names: English ones, as Dutch chat does
    said="{name} zei",
    joined="{name} is binnengekomen",
    left="{name} is vertrokken",
    forwarded_message="{name} stuurde een bericht door:",
    forwarded_message_alone="stuurde een bericht door:",
    replying_to="als antwoord op {name}",
    webhook_named="een webhook met de naam {name}",
    replying_to_webhook="als antwoord op een webhook met de naam {name}",
    sent="{name} stuurde {what}",
    forwarded_what="{name} stuurde {what} door",
    posted="{name} plaatste: {title}",
    new_post="nieuw bericht: {title}",
    and_sent="{line}, en stuurde {what}",
    and_=" en ",
    and_so_on="enzovoort",
    link_to="een link naar {host}",
    link="een link",
    code_block="een codeblok",
    spoiler="een spoiler",
    someone="iemand",
    a_role="een rol",
    a_channel="een kanaal",
    slash_command="commando {name}",
    server_page="een serverpagina",
    a_time="een tijdstip",
    custom_emoji="emoji {name}",
    heart="hartje",
    comparisons={
        ">": "groter dan",
        "<": "kleiner dan",
        ">=": "groter dan of gelijk aan",
        "<=": "kleiner dan of gelijk aan",
        "≠": "niet gelijk aan",
    },
    times="keer",
    equals="is",
    date="{day} {month} {year}",
    months=(
        "januari",
        "februari",
        "maart",
        "april",
        "mei",
        "juni",
        "juli",
        "augustus",
        "september",
        "oktober",
        "november",
        "december",
    ),
    asks="{name} vraagt: {question}",
    poll="een peiling: {question}",
    options="Opties: {answers}",
    or_=" of ",
    or_last=" of ",
    poll_won="De peiling ‘{question}’ is afgelopen: {answer} wint met {votes}",
    poll_tie="De peiling ‘{question}’ eindigde gelijk",
    poll_no_votes="De peiling ‘{question}’ eindigde zonder stemmen",
    votes=Attachment("één stem", "{n} stemmen"),
    attachments={
        "image": Attachment("een afbeelding", "{n} afbeeldingen"),
        "video": Attachment("een video", "{n} video's"),
        "audio": Attachment("een audiobestand", "{n} audiobestanden"),
        "file": Attachment("een bestand", "{n} bestanden"),
        "sticker": Attachment("een sticker", "{n} stickers"),
    },
)

PHRASEBOOKS = {
    "english": ENGLISH,
    "french": FRENCH,
    "german": GERMAN,
    "italian": ITALIAN,
    "spanish": SPANISH,
    "portuguese": PORTUGUESE,
    "dutch": DUTCH,
}


def phrasebook(language: str) -> Phrasebook:
    """The table for a pocket-tts language name: `french_24l` uses french's; else English."""
    return PHRASEBOOKS.get(language) or PHRASEBOOKS.get(language.split("_")[0], ENGLISH)
