"""Command names and descriptions in the members' languages (Discord shows each member the
ones of their client's language). French is complete; other languages fall back to English
until translated. Add a language: a table like FRENCH, and its locale in TABLES."""

from __future__ import annotations

import re

FRENCH: dict[str, str] = {
    # everyone
    "Speak a line in your voice channel": "Dire une phrase dans votre salon vocal",
    "What to say": "Ce qu'il faut dire",
    "Bring the bot into your voice channel": "Faire venir le bot dans votre salon vocal",
    "Make the bot leave the voice channel": "Faire quitter le salon vocal au bot",
    "Stop the current message, keep the queue": "Arrêter le message en cours, garder la file",
    "Stop speaking and clear the queue": "Arrêter de parler et vider la file",
    "Drop the messages waiting to be read": "Retirer les messages en attente de lecture",
    "How fast and how busy the bot is": "La vitesse et la charge du bot",
    "Get a line as an audio file, in your voice": (
        "Recevoir une phrase en fichier audio, avec votre voix"
    ),
    "What the bot can do, and how it is set up here": "Ce que fait le bot, et sa configuration ici",
    "Speak this message": "Lire ce message",
    # voices
    "Your voices": "Vos voix",
    "Your voices and the built-in ones": "Vos voix et les voix intégrées",
    "Speak with one of your voices or a built-in one": (
        "Parler avec une de vos voix ou une voix intégrée"
    ),
    "The voice": "La voix",
    "Use it in every server (default: here)": "L'utiliser sur tous les serveurs (par défaut : ici)",
    "Hear a voice": "Écouter une voix",
    "What it should say": "Ce qu'elle doit dire",
    "Rename one of your voices": "Renommer une de vos voix",
    "Get one of your voices as a file, for you alone": (
        "Obtenir une de vos voix en fichier, pour vous seul"
    ),
    "Its new name": "Son nouveau nom",
    "Delete one of your voices and its recording": (
        "Supprimer une de vos voix et son enregistrement"
    ),
    "Delete all your voices and voice settings": (
        "Supprimer toutes vos voix et vos réglages de voix"
    ),
    "Make a voice from a recording of YOUR voice": (
        "Créer une voix à partir d'un enregistrement de VOTRE voix"
    ),
    "A name for the voice (1 to 32 characters)": "Un nom pour la voix (1 à 32 caractères)",
    "A recording of you speaking, 10 to 30 s is best (WAV, FLAC, MP3, Ogg, voice message)": (
        "Un enregistrement de vous qui parlez, idéalement 10 à 30 s (WAV, FLAC, MP3, Ogg, "
        "message vocal)"
    ),
    "This is my own voice and I agree that this bot speaks with it": (
        "C'est ma propre voix et j'accepte que ce bot parle avec"
    ),
    # member settings
    "Your reading preferences in this server": "Vos préférences de lecture sur ce serveur",
    "This server's settings (Manage Server)": "Les réglages du serveur (Gérer le serveur)",
    "The name I call you by ('reset' for your own)": (
        "Le nom que je vous donne ('reset' pour le vôtre)"
    ),
    "How I should call you": "Comment je dois vous appeler",
    "Another member's name instead (needs Manage Nicknames)": (
        "Le nom d'un autre membre à la place (il faut Gérer les pseudos)"
    ),
    "on: read them; off: never": "on : les lire ; off : jamais",
    "Whether your messages are read aloud here": "Si vos messages sont lus à voix haute ici",
    "The language your messages are read in": "La langue dans laquelle vos messages sont lus",
    "A language, or 'none' for the server's": "Une langue, ou 'none' pour celle du serveur",
    "How fast your messages are read here": "La vitesse à laquelle vos messages sont lus ici",
    "0.5 to 2 (1: normal), or 'none' for the server's": (
        "De 0.5 à 2 (1 : normale), ou 'none' pour celle du serveur"
    ),
    "How high your messages are read here": "La hauteur à laquelle vos messages sont lus ici",
    "-6 to +6 semitones (0: the voice's own), or 'none' for the server's": (
        "De -6 à +6 demi-tons (0 : celle de la voix), ou 'none' pour celle du serveur"
    ),
    "The voice you speak with (yours or built-in)": (
        "La voix avec laquelle vous parlez (la vôtre ou intégrée)"
    ),
    # server settings: their groups (`/config <group>`), then each one
    "Which messages are read": "Quels messages sont lus",
    "How a message becomes words": "Comment un message devient des mots",
    "How the bot sounds": "Comment le bot parle",
    "When the bot joins and leaves voice": "Quand le bot rejoint et quitte le vocal",
    "How much is read": "Combien est lu",
    # server settings
    "Also read the threads of the read channels": "Lire aussi les fils des salons lus",
    "Also read the chat of the voice channel the bot is in": (
        "Lire aussi le chat du salon vocal du bot"
    ),
    "Join when someone in voice posts in a read channel": (
        "Rejoindre le vocal quand quelqu'un y écrit dans un salon lu"
    ),
    "Voice channel the bot stays in, and reads webhooks into ('none': off)": (
        "Salon vocal où le bot reste, et lit les webhooks ('none' : aucun)"
    ),
    "Seconds of quiet before leaving voice (0: stay)": (
        "Secondes de silence avant de quitter le vocal (0 : rester)"
    ),
    "Say who is speaking (“NAME said”)": "Dire qui parle (« NOM a dit »)",
    "Say when members join or leave the bot's voice channel (“NAME joined”)": (
        "Annoncer qui rejoint ou quitte le salon vocal du bot (« NOM a rejoint le salon »)"
    ),
    "Leave emoji out instead of reading their names": "Ignorer les émojis au lieu de lire leur nom",
    "Cut runs of one character to this many (0: keep)": (
        "Réduire les répétitions d'un caractère à ce nombre (0 : garder)"
    ),
    "Longest spoken message, in characters": "Message lu le plus long, en caractères",
    "Make pauses of “...” and blank lines in chat (/say and /tts always do)": (
        "Faire des pauses aux « ... » et aux lignes vides du chat (/say et /tts toujours)"
    ),
    "Time zone Discord's timestamps are read in (such as Europe/Paris)": (
        "Fuseau horaire des horodatages Discord lus (comme Europe/Paris)"
    ),
    "Ignore messages from bots and webhooks": "Ignorer les messages des bots et des webhooks",
    "Messages starting with this are not read ('none': off)": (
        "Les messages commençant par ceci ne sont pas lus ('none' : désactivé)"
    ),
    "Only read members with this role ('none': everyone)": (
        "Ne lire que les membres ayant ce rôle ('none' : tout le monde)"
    ),
    "Never read members with this role ('none': no one)": (
        "Ne jamais lire les membres ayant ce rôle ('none' : personne)"
    ),
    "Do not read @silent messages (sent without notifications)": (
        "Ne pas lire les messages @silent (envoyés sans notification)"
    ),
    "In a stage, do not read members of the audience": (
        "Dans une conférence, ne pas lire les membres de l'auditoire"
    ),
    "Only read members who are in the bot's voice channel": (
        "Ne lire que les membres présents dans le salon vocal du bot"
    ),
    "Most messages waiting; beyond, the oldest is dropped": (
        "Nombre maximal de messages en attente ; au-delà, le plus ancien est retiré"
    ),
    "Most messages read per member every 10 seconds": (
        "Messages lus au plus par membre toutes les 10 secondes"
    ),
    "Members may clone their own voice here": "Les membres peuvent cloner leur propre voix ici",
    "Built-in voice for members without one": "Voix intégrée pour les membres qui n'en ont pas",
    "Language spoken here ('none': the bot's default)": (
        "Langue parlée ici ('none' : celle du bot par défaut)"
    ),
    "Read each message in the language it is written in, of those offered": (
        "Lire chaque message dans la langue où il est écrit, parmi celles proposées"
    ),
    "How fast speech is here, the pitch kept (0.5 to 2)": (
        "La vitesse de la parole ici, sans changer la hauteur (de 0.5 à 2)"
    ),
    "Pitch of speech here in semitones, -6 to +6 (the voice's character kept)": (
        "La hauteur de la parole ici en demi-tons, de -6 à +6 (le timbre de la voix gardé)"
    ),
    "The channels read aloud (Manage Server)": "Les salons lus à voix haute (Gérer le serveur)",
    "Read a text or forum channel aloud (up to 5)": (
        "Lire un salon textuel ou forum à voix haute (jusqu'à 5)"
    ),
    "The voice channel to read it in (default: the author's)": (
        "Le salon vocal où le lire (par défaut : celui de l'auteur)"
    ),
    "Stop reading a channel aloud": "Ne plus lire un salon à voix haute",
    "The channel to stop reading": "Le salon à ne plus lire",
    "Speak faster while messages wait, up to 1.5× at 5 waiting": (
        "Parler plus vite quand des messages attendent, jusqu'à 1.5× à 5 en attente"
    ),
    "The channel to read": "Le salon à lire",
    "Show this server's settings": "Afficher les réglages de ce serveur",
    # moderators
    "Stop the bot reading or speaking for a member": (
        "Empêcher le bot de lire ou de parler pour un membre"
    ),
    "The member": "Le membre",
    "Why (only moderators see it)": "Pourquoi (seuls les modérateurs le voient)",
    "Let the bot read and speak for a member again": (
        "Laisser le bot lire et parler de nouveau pour un membre"
    ),
    "The members the bot does not speak for": "Les membres pour qui le bot ne parle pas",
    "Which page (10 a page)": "Quelle page (10 par page)",
    # dictionary
    "This server's pronunciation dictionary": "Le dictionnaire de prononciation du serveur",
    "Change this server's pronunciation dictionary (Manage Server)": (
        "Modifier le dictionnaire de prononciation du serveur (Gérer le serveur)"
    ),
    "Say a word differently (whole word, any case)": (
        "Prononcer un mot autrement (mot entier, toute casse)"
    ),
    "The word as written": "Le mot tel qu'il s'écrit",
    "How to say it": "Comment le dire",
    "Remove a word from the dictionary": "Retirer un mot du dictionnaire",
    "Show the dictionary": "Afficher le dictionnaire",
    "Only when speaking this language (default: all languages)": (
        "Seulement en parlant cette langue (par défaut : toutes les langues)"
    ),
    "The language of the entry (default: the one for all languages)": (
        "La langue de l'entrée (par défaut : celle pour toutes les langues)"
    ),
    "Only the words that contain this": "Seulement les mots qui contiennent ceci",
    "Which page": "Quelle page",
    "Get the dictionary as a file": "Recevoir le dictionnaire en fichier",
    "JSON (default) or CSV, for spreadsheets": "JSON (par défaut) ou CSV, pour les tableurs",
    "Add words from a file (JSON or CSV), after a preview": (
        "Ajouter des mots depuis un fichier (JSON ou CSV), après un aperçu"
    ),
    "A file from /dictionary export, or CSV lines: word,spoken,language": (
        "Un fichier de /dictionary export, ou des lignes CSV : mot,prononciation,langue"
    ),
    "Play a short sound in place of a word (3 s, 200 KB at most)": (
        "Jouer un court son à la place d'un mot (3 s, 200 Ko au plus)"
    ),
    "The word as written (whole word, any case)": (
        "Le mot tel qu'il s'écrit (mot entier, toute casse)"
    ),
    "An audio file: WAV, FLAC, MP3, Ogg Vorbis or Opus; at most 3 s and 200 KB": (
        "Un fichier audio : WAV, FLAC, MP3, Ogg Vorbis ou Opus ; 3 s et 200 Ko au plus"
    ),
    "Remove a word's sound": "Retirer le son d'un mot",
}
_FRENCH_VALUES = {"on": "activé", "off": "désactivé", "none": "aucun"}
_DEFAULT = re.compile(r"^default: (?P<value>.*?)(?P<empty> \(leave empty for none\))?$")

TABLES: dict[str, dict[str, str]] = {"fr": FRENCH}  # keyed by locale code


def translate(text: str, locale: str) -> str | None:
    """`text` in the language of `locale` (a code: "fr"), or None (Discord then shows the
    English)."""
    table = TABLES.get(locale)
    if table is None:
        return None
    if text in table:
        return table[text]
    match = _DEFAULT.match(text)
    if match and locale == "fr":  # the `/config <setting>` value hints
        value = _FRENCH_VALUES.get(match["value"], match["value"])
        empty = " (laisser vide pour aucun)" if match["empty"] else ""
        return f"par défaut : {value}{empty}"
    return None
