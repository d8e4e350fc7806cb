"""What the bot replies, in the members' languages: one table per language, keyed by the
English template (`tr("…")` in the code), with the same `{placeholders}`. A member whose
Discord is in a language without a table, or a template missing from one, reads English.
Add a language: a table like FRENCH_REPLIES, and its locale in TABLES.
`tests/i18n/test_reply_translations.py` checks that every template of the code has its French."""

from __future__ import annotations

from bot.i18n.commands import FRENCH as FRENCH_COMMANDS

FRENCH_REPLIES: dict[str, str] = {
    # words that other replies put together
    "on": "activé",
    "off": "désactivé",
    "none": "aucun",
    "channel": "salon",
    "voice channel": "salon vocal",
    "role": "rôle",
    "Connect": "Se connecter",
    "Speak": "Parler",
    "{a} and {b}": "{a} et {b}",
    "this server": "ce serveur",
    "direct messages": "les messages privés",
    "no data yet": "pas encore de données",
    "{count} voice": "{count} voix",
    "{count} voices": "{count} voix",
    "{count} message": "{count} message",
    "{count} messages": "{count} messages",
    "{count} waiting message": "{count} message en attente",
    "{count} waiting messages": "{count} messages en attente",
    "{count} recent message": "{count} message récent",
    "{count} recent messages": "{count} messages récents",
    "{count} server": "{count} serveur",
    "{count} servers": "{count} serveurs",
    "{count} word": "{count} mot",
    "{count} words": "{count} mots",
    # language names (pocket-tts's)
    "english": "anglais",
    "french": "français",
    "german": "allemand",
    "italian": "italien",
    "spanish": "espagnol",
    "portuguese": "portugais",
    "dutch": "néerlandais",
    "french_24l": "français (grand modèle)",
    "german_24l": "allemand (grand modèle)",
    "italian_24l": "italien (grand modèle)",
    "spanish_24l": "espagnol (grand modèle)",
    "portuguese_24l": "portugais (grand modèle)",
    "dutch_24l": "néerlandais (grand modèle)",
    # anything
    "Something went wrong on my side (error id {id}). Please try again.": (
        "Un problème est survenu de mon côté (erreur {id}). Veuillez réessayer."
    ),
    "You cannot use this command here.": "Vous ne pouvez pas utiliser cette commande ici.",
    "I cannot use one of the options you gave (a channel or role I cannot see?).": (
        "Je ne peux pas utiliser une des options données (un salon ou un rôle que je ne vois "
        "pas ?)."
    ),
    # speaking
    "There is nothing to say: please give me some text.": (
        "Il n'y a rien à dire : donnez-moi du texte."
    ),
    "That text is {length:,} characters long; the limit is {most:,}. Please shorten it.": (
        "Ce texte fait {length:,} caractères ; la limite est {most:,}. Raccourcissez-le."
    ),
    "Join a voice channel first, then try again.": (
        "Rejoignez d'abord un salon vocal, puis réessayez."
    ),
    "I don't have the {names} permission in {channel}. Please ask a server admin to grant it.": (
        "Il me manque la permission {names} dans {channel}. Demandez-la à un admin du serveur."
    ),
    "{channel} is full.": "{channel} est plein.",
    "I'm already speaking in {channel} for other members. Join that channel, or try again "
    "when they are done.": (
        "Je parle déjà dans {channel} pour d'autres membres. Rejoignez ce salon, ou réessayez "
        "quand ils auront fini."
    ),
    "I could not join {channel} just now. Please try again.": (
        "Je n'ai pas pu rejoindre {channel}. Veuillez réessayer."
    ),
    "Loading {language}… I'll speak in {channel} as soon as it is ready.": (
        "Chargement de la langue : {language}… Je parlerai dans {channel} dès qu'elle sera prête."
    ),
    "Preparing your voice “{voice}” for {language} (once)… I'll speak in {channel} as soon as "
    "it is ready.": (
        "Je prépare votre voix « {voice} » pour le {language} (une seule fois)… Je parlerai dans "
        "{channel} dès qu'elle sera prête."
    ),
    "Speaking in {channel}.": "Je parle dans {channel}.",
    "I am speaking in as many servers as I can carry: yours starts in {channel} as soon as one "
    "of them is done.": (
        "Je parle dans autant de serveurs que je peux : le vôtre commence dans {channel} dès "
        "que l'un d'eux a fini."
    ),
    "Queued: {ahead} ahead of you in {channel}.": (
        "En file d'attente : {ahead} avant vous dans {channel}."
    ),
    "The queue is full. Please wait a moment and try again.": (
        "La file d'attente est pleine. Patientez un instant et réessayez."
    ),
    "Joined {channel}.": "J'ai rejoint {channel}.",
    "Only members in {channel} (or with the Move Members permission) can do that.": (
        "Seuls les membres présents dans {channel} (ou ayant la permission Déplacer des "
        "membres) peuvent faire cela."
    ),
    "I'm not in a voice channel.": "Je ne suis dans aucun salon vocal.",
    "Left the voice channel.": "J'ai quitté le salon vocal.",
    "Nothing is being spoken right now.": "Rien n'est lu en ce moment.",
    "Skipped.": "Passé.",
    "Nothing is waiting to be read.": "Rien n'attend d'être lu.",
    "Cleared {messages}.": "Retiré : {messages}.",
    "Nothing is being spoken or queued.": "Rien n'est lu ni en attente.",
    "Stopped and cleared {messages}.": "Arrêté, et retiré : {messages}.",
    "{seconds:.1f} s of speech.": "{seconds:.1f} s de parole.",
    "That voice cannot be used on this bot right now.": (
        "Cette voix ne peut pas être utilisée sur ce bot pour le moment."
    ),
    "You already have {count} requests waiting. Please wait for them to finish.": (
        "Vous avez déjà {count} demandes en attente. Attendez qu'elles soient terminées."
    ),
    "{count} requests from {where} are waiting. Please try again shortly.": (
        "{count} demandes venant de {where} sont en attente. Réessayez dans un instant."
    ),
    "I'm busy with many requests right now. Please try again in a minute.": (
        "J'ai beaucoup de demandes en ce moment. Réessayez dans une minute."
    ),
    # reading messages
    "Loading {language}… I'll read the messages as soon as it is ready.": (
        "Chargement de la langue : {language}… Je lirai les messages dès qu'elle sera prête."
    ),
    "Speaking that message in {channel}.": "Je lis ce message dans {channel}.",
    "I could not load {language} just now, so I'm speaking in {default} instead.": (
        "Je n'ai pas pu charger la langue {language} pour l'instant : je parle en {default} "
        "à la place."
    ),
    "Messages starting with “{prefix}” are not read aloud in this server.": (
        "Les messages qui commencent par « {prefix} » ne sont pas lus dans ce serveur."
    ),
    "Someone in {channel} cannot see that message's channel, so I won't read it there.": (
        "Quelqu'un dans {channel} ne peut pas voir le salon de ce message : je ne le lirai pas là."
    ),
    "That is a lot of reading at once: please wait a few seconds.": (
        "Cela fait beaucoup de lecture d'un coup : merci d'attendre quelques secondes."
    ),
    "“{nick}” is the name of another member here: please choose another.": (
        "« {nick} » est le nom d'un autre membre ici : merci d'en choisir un autre."
    ),
    "Your reading name was changed {count} times in the last few minutes: please wait "
    "{minutes} min before changing it again.": (
        "Votre nom de lecture a été changé {count} fois ces dernières minutes : attendez "
        "{minutes} min avant de le changer à nouveau."
    ),
    "The reading name of {member} was changed {count} times in the last few minutes: please "
    "wait {minutes} min before changing it again.": (
        "Le nom de lecture de {member} a été changé {count} fois ces dernières minutes : "
        "attendez {minutes} min avant de le changer à nouveau."
    ),
    "I can only speak messages from a server.": "Je ne lis que les messages d'un serveur.",
    "This server does not have messages from bots read aloud.": (
        "Ce serveur ne fait pas lire les messages des bots."
    ),
    "That message has nothing I can read aloud.": "Ce message ne contient rien que je puisse lire.",
    "Only messages of members with the server's reading role are read.": (
        "Seuls les messages des membres ayant le rôle de lecture du serveur sont lus."
    ),
    "Its author has asked not to have their messages read aloud.": (
        "Son auteur a demandé que ses messages ne soient pas lus."
    ),
    "Its author is no longer in this server, so I cannot check the server's reading roles: "
    "I won't read it.": (
        "Son auteur n'est plus sur ce serveur : je ne peux pas vérifier les rôles de lecture, "
        "je ne le lirai donc pas."
    ),
    "I could not check its author's roles just now: please try again in a moment.": (
        "Je n'ai pas pu vérifier les rôles de son auteur : merci de réessayer dans un instant."
    ),
    "You can only unblock members whose highest role is below yours.": (
        "Vous ne pouvez débloquer que les membres dont le rôle le plus haut est sous le vôtre."
    ),
    "You can only name members whose highest role is below yours.": (
        "Vous ne pouvez nommer que les membres dont le rôle le plus haut est sous le vôtre."
    ),
    # /botstats
    "Ready to speak": "Prêt à parler",
    "At capacity: speech may start late": "Au maximum : la parole peut commencer en retard",
    "Speaking in {servers}": "Parle dans {servers}",
    "Time to first audio": "Délai avant le premier son",
    "p50 {p50} · p95 {p95} ({messages})": "p50 {p50} · p95 {p95} ({messages})",
    "Underruns": "Coupures",
    "Shards in this process": "Shards de ce processus",
    "{ids} of {count} · {servers} · {voice} in voice": (
        "{ids} sur {count} · {servers} · {voice} en vocal"
    ),
    "shard {shard}: {servers}, {voice} in voice, {latency}": (
        "shard {shard} : {servers}, {voice} en vocal, {latency}"
    ),
    "disconnected": "déconnecté",
    "no heartbeat yet": "pas encore de battement",
    "{seconds:.2f} s per minute of audio": "{seconds:.2f} s par minute de son",
    "Speed": "Vitesse",
    "{rtf:.1f}x real time per worker": "{rtf:.1f}x le temps réel par travailleur",
    "Load": "Charge",
    "{percent:.0f}% of {workers} worker(s) · {units} units waiting · speaking in {servers} "
    "server(s) · {waiting} message(s) waiting for room": (
        "{percent:.0f} % de {workers} travailleur(s) · {units} unités en attente · parle dans "
        "{servers} serveur(s) · {waiting} message(s) en attente de place"
    ),
    "Background work": "Travail de fond",
    "{waiting} waiting (files, previews, clones) · {done} done · {refused} refused over the "
    "limits": (
        "{waiting} en attente (fichiers, aperçus, clonages) · {done} faits · {refused} refusés "
        "au-delà des limites"
    ),
    # voices
    "Voice cloning is not available on this bot yet: its operator needs the voice-cloning "
    "model weights (a Hugging Face token with the model licence accepted). Built-in voices "
    "work as usual: see /voice list.": (
        "Le clonage de voix n'est pas encore disponible sur ce bot : son opérateur doit obtenir "
        "les poids du modèle de clonage (un jeton Hugging Face avec la licence du modèle "
        "acceptée). Les voix intégrées fonctionnent normalement : voir /voice list."
    ),
    "Nothing was saved. To clone a voice, set `consent` to True: it confirms that the "
    "recording is your own voice and that you agree that this bot speaks with it.": (
        "Rien n'a été enregistré. Pour cloner une voix, mettez `consent` à True : cela confirme "
        "que l'enregistrement est votre propre voix et que vous acceptez que ce bot parle avec."
    ),
    "Voice cloning is switched off in this server by its admins.": (
        "Le clonage de voix est désactivé sur ce serveur par ses admins."
    ),
    "Downloading your clip…": "Téléchargement de votre extrait…",
    "Checking your clip…": "Vérification de votre extrait…",
    "You are already making a voice. Please wait until it is ready.": (
        "Vous êtes déjà en train de créer une voix. Veuillez attendre qu'elle soit prête."
    ),
    "{count} voices are being made in this server right now. Please try again in a minute.": (
        "{count} voix sont en cours de création sur ce serveur. Veuillez réessayer dans une minute."
    ),
    "I am busy making other voices right now. Please try again in a minute.": (
        "Je suis occupé à créer d'autres voix en ce moment. Veuillez réessayer dans une minute."
    ),
    "Learning your voice from {seconds:.1f} s of speech…": (
        "Apprentissage de votre voix à partir de {seconds:.1f} s de parole…"
    ),
    "I could not download your file. Please try again.": (
        "Je n'ai pas pu télécharger votre fichier. Veuillez réessayer."
    ),
    "Your voice “{name}” is ready ({seconds:.0f} s of speech used). Use `/voice use {name}` "
    "to speak with it.": (
        "Votre voix « {name} » est prête ({seconds:.0f} s de parole utilisées). Utilisez "
        "`/voice use {name}` pour parler avec."
    ),
    "{ready} Playing a short sample in {channel}.": (
        "{ready} J'en fais entendre un court extrait dans {channel}."
    ),
    "{ready} Press Preview to hear it.": "{ready} Appuyez sur Preview pour l'écouter.",
    "**Your voices**": "**Vos voix**",
    " (in use here)": " (utilisée ici)",
    " (in use everywhere)": " (utilisée partout)",
    "• {name}: {seconds:.0f} s of speech, made {day}{chosen}": (
        "• {name} : {seconds:.0f} s de parole, créée le {day}{chosen}"
    ),
    "({count} of {quota} allowed)": "({count} sur {quota} autorisées)",
    "You have no voices of your own yet: make one with /clone.": (
        "Vous n'avez pas encore de voix à vous : créez-en une avec /clone."
    ),
    "You speak with the built-in voice {name}.": "Vous parlez avec la voix intégrée {name}.",
    "**Built-in voices in {language}**: {names}": "**Voix intégrées en {language}** : {names}",
    "Other built-in voices (they speak {language} with an accent): {names}": (
        "Autres voix intégrées (elles parlent {language} avec un accent) : {names}"
    ),
    "You will now speak with “{name}” in this server.": (
        "Vous parlerez désormais avec « {name} » sur ce serveur."
    ),
    "You will now speak with “{name}” in every server.": (
        "Vous parlerez désormais avec « {name} » sur tous les serveurs."
    ),
    "There is no voice named “{name}” among yours or the built-in ones. See /voice list.": (
        "Aucune voix ne s'appelle « {name} » parmi les vôtres ou les voix intégrées. Voir "
        "/voice list."
    ),
    "Playing a preview of “{name}” in {channel}.": "Aperçu de « {name} » dans {channel}.",
    "This preview is for the voice's owner, and only while it exists.": (
        "Cet aperçu est réservé au propriétaire de la voix, tant qu'elle existe."
    ),
    "Here is “{name}”.": "Voici « {name} ».",
    "Renamed to “{name}”.": "Renommée en « {name} ».",
    "You have no voice named “{name}”. See /voice list.": (
        "Vous n'avez pas de voix nommée « {name} ». Voir /voice list."
    ),
    "Your voice “{name}” as a file: a Pocket TTS voice state, for you alone. Anyone holding it "
    "can speak with your voice: keep it private.": (
        "Votre voix « {name} » en fichier : un état de voix Pocket TTS, pour vous seul. "
        "Quiconque le détient peut parler avec votre voix : gardez-le privé."
    ),
    "Deleted “{name}” and its recording.": "« {name} » et son enregistrement sont supprimés.",
    "This deletes your {voices}, their recordings and all your voice choices, in every "
    "server. It cannot be undone. Are you sure?": (
        "Cela supprime vos {voices}, leurs enregistrements et tous vos choix de voix, sur tous "
        "les serveurs. C'est irréversible. Êtes-vous sûr ?"
    ),
    "Only the member who asked can confirm this.": (
        "Seul le membre qui l'a demandé peut confirmer."
    ),
    "Done: deleted {voices} and all your voice choices.": (
        "C'est fait : {voices} et tous vos choix de voix sont supprimés."
    ),
    "I could not save your voice just now (a storage problem on the bot's side). Nothing "
    "was saved; please try again later.": (
        "Je n'ai pas pu enregistrer votre voix (un problème de stockage côté bot). Rien n'a été "
        "enregistré ; réessayez plus tard."
    ),
    "Please give the voice a name.": "Donnez un nom à la voix.",
    "That name is {length} characters long; please keep it to {most}.": (
        "Ce nom fait {length} caractères ; gardez-le à {most} au plus."
    ),
    "Please use only printable characters in the name.": (
        "N'utilisez que des caractères imprimables dans le nom."
    ),
    "You already have {quota} voices, the most allowed. Delete one with /voice delete first.": (
        "Vous avez déjà {quota} voix, le maximum autorisé. Supprimez-en une avec /voice delete "
        "d'abord."
    ),
    "You already have a voice named “{name}”. Pick another name.": (
        "Vous avez déjà une voix nommée « {name} ». Choisissez un autre nom."
    ),
    "You already have a voice named “{name}”.": "Vous avez déjà une voix nommée « {name} ».",
    "You have no voice named “{name}”. See /voice list for your voices.": (
        "Vous n'avez pas de voix nommée « {name} ». Voir /voice list pour vos voix."
    ),
    "That voice was just deleted.": "Cette voix vient d'être supprimée.",
    # recordings
    "WAV, FLAC, MP3, Ogg Vorbis or Ogg Opus": "du WAV, FLAC, MP3, Ogg Vorbis ou Ogg Opus",
    "That audio file seems damaged or cut short. Please record it again.": (
        "Ce fichier audio semble abîmé ou coupé. Enregistrez-le à nouveau."
    ),
    "That file is too big for me to process. Please send a shorter one.": (
        "Ce fichier est trop gros pour moi. Envoyez-en un plus court."
    ),
    "That file is {size:.1f} MB; the limit is {most:.0f} MB. A minute of speech is plenty.": (
        "Ce fichier fait {size:.1f} Mo ; la limite est {most:.0f} Mo. Une minute de parole "
        "suffit largement."
    ),
    "That file is empty.": "Ce fichier est vide.",
    "That is not an audio file I can read. Please send {kinds}.": (
        "Je ne sais pas lire ce fichier audio. Envoyez {kinds}."
    ),
    "That kind of audio file is not accepted here. Please send {kinds}.": (
        "Ce type de fichier audio n'est pas accepté ici. Envoyez {kinds}."
    ),
    "That audio file holds no sound, or it is damaged.": (
        "Ce fichier audio ne contient aucun son, ou il est abîmé."
    ),
    "That recording's sample rate ({rate:,} Hz) is unusual; please send one between {lo:,} "
    "and {hi:,} Hz.": (
        "La fréquence d'échantillonnage de cet enregistrement ({rate:,} Hz) est inhabituelle ; "
        "envoyez-en un entre {lo:,} et {hi:,} Hz."
    ),
    "That recording has {channels} channels; please send mono or stereo.": (
        "Cet enregistrement a {channels} canaux ; envoyez-le en mono ou en stéréo."
    ),
    "That recording is {minutes:.1f} minutes long; please send at most {most:.0f} minutes (3 "
    "to 60 seconds of speech is ideal).": (
        "Cet enregistrement dure {minutes:.1f} minutes ; envoyez-en au plus {most:.0f} (3 à 60 "
        "secondes de parole, c'est idéal)."
    ),
    "That audio file seems damaged. Please record it again.": (
        "Ce fichier audio semble abîmé. Enregistrez-le à nouveau."
    ),
    "I could not hear any speech in that clip: it sounds silent.": (
        "Je n'entends aucune parole dans cet extrait : il semble silencieux."
    ),
    "I heard only {seconds:.1f} s of speech; please send at least {least:.0f} seconds of you "
    "talking.": (
        "Je n'ai entendu que {seconds:.1f} s de parole ; envoyez au moins {least:.0f} secondes "
        "où vous parlez."
    ),
    "That clip has {seconds:.0f} s of speech; please send at most {most:.0f} seconds (10 to "
    "30 seconds works best).": (
        "Cet extrait contient {seconds:.0f} s de parole ; envoyez-en au plus {most:.0f} "
        "secondes (10 à 30 secondes, c'est le mieux)."
    ),
    # blocks (moderators)
    "You need the Manage Messages or Moderate Members permission to block members.": (
        "Il faut la permission Gérer les messages ou Exclure temporairement des membres pour "
        "bloquer des membres."
    ),
    "Please keep the reason to {most} characters.": (
        "Veuillez limiter la raison à {most} caractères."
    ),
    "A moderator has stopped me speaking for you in this server.": (
        "Un modérateur m'a demandé de ne plus parler pour vous sur ce serveur."
    ),
    "You cannot block yourself. To have your own messages left unread, use /set autoread off.": (
        "Vous ne pouvez pas vous bloquer vous-même. Pour que vos messages ne soient pas lus, "
        "utilisez /set autoread off."
    ),
    "I cannot block myself.": "Je ne peux pas me bloquer moi-même.",
    "The server's owner cannot be blocked.": "Le propriétaire du serveur ne peut pas être bloqué.",
    "{member} was blocked already; the reason is updated.": (
        "{member} était déjà bloqué ; la raison est mise à jour."
    ),
    "{member} was blocked already.": "{member} était déjà bloqué.",
    "Administrators cannot be blocked.": "Les administrateurs ne peuvent pas être bloqués.",
    "You can only block members whose highest role is below yours.": (
        "Vous ne pouvez bloquer que les membres dont le rôle le plus élevé est sous le vôtre."
    ),
    "You cannot unblock yourself: ask another moderator.": (
        "Vous ne pouvez pas vous débloquer vous-même : demandez à un autre modérateur."
    ),
    "{member} is blocked: I will not read their messages or speak for them in this server. "
    "/unblock undoes it.": (
        "{member} est bloqué : je ne lirai plus ses messages et ne parlerai plus pour lui sur "
        "ce serveur. /unblock l'annule."
    ),
    "{member} is not blocked.": "{member} n'est pas bloqué.",
    "{member} is no longer blocked.": "{member} n'est plus bloqué.",
    "No one is blocked in this server.": "Personne n'est bloqué sur ce serveur.",
    "There are {pages} pages: choose one from 1 to {pages}.": (
        "Il y a {pages} pages : choisissez-en une de 1 à {pages}."
    ),
    "{number}.": "{number}.",
    "<@{member}> · by <@{moderator}> · {reason}": "<@{member}> · par <@{moderator}> · {reason}",
    "no reason given": "sans raison donnée",
    "Page {page} of {pages}.": "Page {page} sur {pages}.",
    "Blocked members ({count})": "Membres bloqués ({count})",
    "Messages of members with the server's ignored role are not read.": (
        "Les messages des membres ayant le rôle ignoré du serveur ne sont pas lus."
    ),
    "A moderator has stopped me reading this member's messages in this server.": (
        "Un modérateur m'a demandé de ne plus lire les messages de ce membre sur ce serveur."
    ),
    "Moderators": "Modérateurs",
    "`/block` a member I should not read or speak for · `/unblock` · `/blocked` lists them": (
        "`/block` un membre que je ne dois ni lire ni faire parler · `/unblock` · `/blocked` "
        "les liste"
    ),
    # settings and dictionary
    "You need the Manage Server permission to change this server's settings.": (
        "Il faut la permission Gérer le serveur pour changer les réglages de ce serveur."
    ),
    "I can't see {channel}: please let me read it first.": (
        "Je ne vois pas {channel} : donnez-moi d'abord le droit de le lire."
    ),
    "I will read {channel} aloud. Join a voice channel and type there: I'll come to you.": (
        "Je lirai {channel} à voix haute. Rejoignez un salon vocal et écrivez-y : je viendrai."
    ),
    "There is no setting called {key}.": "Il n'y a pas de réglage nommé {key}.",
    "{channel} is not a voice channel.": "{channel} n'est pas un salon vocal.",
    "{channel} is my home channel here: I stay in it. Someone with Manage Server can change "
    "that with `/config joining home_voice`.": (
        "{channel} est mon salon d'attache ici : j'y reste. Quelqu'un ayant Gérer le serveur "
        "peut changer cela avec `/config joining home_voice`."
    ),
    "I already read {most} channels here, the most I can: remove one first (`/setup remove`).": (
        "Je lis déjà {most} salons ici, le maximum : retirez-en un d'abord (`/setup remove`)."
    ),
    "I will read {channel} aloud in {voice}. Join it and type in {channel}: I'll come to you.": (
        "Je lirai {channel} à voix haute dans {voice}. Rejoignez-le et écrivez dans {channel} : "
        "je viendrai."
    ),
    "I don't read {channel}.": "Je ne lis pas {channel}.",
    "I no longer read {channel}.": "Je ne lis plus {channel}.",
    "That is not a voice channel of this server.": "Ce n'est pas un salon vocal de ce serveur.",
    "{channels} · /setup add, /setup remove": "{channels} · /setup add, /setup remove",
    "{channel} in {voice}": "{channel} dans {voice}",
    "{reading} A forum's posts are read, each title first.": (
        "{reading} Les publications d'un forum sont lues, chacune précédée de son titre."
    ),
    "{reading} Threads are read too.": "{reading} Les fils sont lus aussi.",
    "{reading} I stay in {home}, where webhooks' messages are read too.": (
        "{reading} Je reste dans {home}, où les messages des webhooks sont lus aussi."
    ),
    "{name} is on or off.": "{name} vaut on ou off.",
    "{name} is a whole number.": "{name} est un nombre entier.",
    "{name} goes from {lo} to {hi}.": "{name} va de {lo} à {hi}.",
    "{name} is a number such as 1.5.": "{name} est un nombre comme 1.5.",
    "{name} needs a {kind}.": "{name} attend un {kind}.",
    "{name} is at most {most} characters.": "{name} fait au plus {most} caractères.",
    "“{name}” is not a built-in voice. Choose one of: {choices}.": (
        "« {name} » n'est pas une voix intégrée. Choisissez parmi : {choices}."
    ),
    "That channel is not in this server.": "Ce salon n'est pas sur ce serveur.",
    "That role is not in this server.": "Ce rôle n'est pas sur ce serveur.",
    "{key} is now {value}.": "{key} vaut maintenant {value}.",
    "{name}: {value} · {description}": "{name} : {value} · {description}",
    "{words} · /dictionary list": "{words} · /dictionary list",
    "PocketVoice settings for {server}": "Réglages de PocketVoice pour {server}",
    "Give both the word and how to say it.": "Donnez le mot et la façon de le dire.",
    "Keep the word to {most} characters and how to say it to 100.": (
        "Le mot fait au plus {most} caractères, et sa prononciation 100."
    ),
    "Write how to say it as plain words (no links, mentions or markup).": (
        "Écrivez la prononciation en mots simples (sans liens, mentions ni mise en forme)."
    ),
    "The word holds {character}: remove it.": "Le mot contient {character} : retirez-le.",
    "The name holds {character}: remove it.": "Le nom contient {character} : retirez-le.",
    "How to say it holds {character}: remove it.": (
        "La prononciation contient {character} : retirez-le."
    ),
    "a control character ({code})": "un caractère de contrôle ({code})",
    "an invalid character ({code})": "un caractère invalide ({code})",
    "The dictionary is full ({most} words): remove some first.": (
        "Le dictionnaire est plein ({most} mots) : retirez-en d'abord."
    ),
    "“{word}” will be said as “{spoken}”.": "« {word} » sera prononcé « {spoken} ».",
    "“{word}” is not in the dictionary.": "« {word} » n'est pas dans le dictionnaire.",
    "Removed “{word}” from the dictionary.": "« {word} » est retiré du dictionnaire.",
    "The dictionary is empty. Admins add words with /dict add.": (
        "Le dictionnaire est vide. Les admins ajoutent des mots avec /dict add."
    ),
    "**Pronunciations** ({count})\n{text}": "**Prononciations** ({count})\n{text}",
    "In {language}, “{word}” will be said as “{spoken}”.": (
        "En {language}, « {word} » sera prononcé « {spoken} »."
    ),
    "Removed “{word}” in {language} from the dictionary.": (
        "« {word} » en {language} est retiré du dictionnaire."
    ),
    "“{word}” is in the dictionary only for {languages}: give the language.": (
        "« {word} » n'est dans le dictionnaire que pour {languages} : précisez la langue."
    ),
    "No word in the dictionary contains “{text}”.": (
        "Aucun mot du dictionnaire ne contient « {text} »."
    ),
    "**Pronunciations** ({count}), page {page} of {pages}\n{text}\n{more}": (
        "**Prononciations** ({count}), page {page} sur {pages}\n{text}\n{more}"
    ),
    "More with {command}.": "La suite avec {command}.",
    "This is the last page.": "C'est la dernière page.",
    "{word} → {spoken}": "{word} → {spoken}",
    "{word} → {spoken} [{language}]": "{word} → {spoken} [{language}]",
    "• {entry}": "• {entry}",
    "+ {entry}": "+ {entry}",
    "~ {entry} (was “{spoken}”)": "~ {entry} (avant : « {spoken} »)",
    "… and {count} more": "… et {count} de plus",
    "The dictionary ({words}), to keep or to import with /dict import.": (
        "Le dictionnaire ({words}), à garder ou à importer avec /dict import."
    ),
    "The file has no entries.": "Le fichier ne contient aucune entrée.",
    "The dictionary already says all {count} words of the file: nothing to import.": (
        "Le dictionnaire prononce déjà les {count} mots du fichier : rien à importer."
    ),
    "**Importing {file}**: {added} to add, {changed} to change, {same} already so.": (
        "**Import de {file}** : {added} à ajouter, {changed} à modifier, {same} déjà ainsi."
    ),
    "An import adds and changes words, it removes none. Kept as they are, not in the file: "
    "{kept}.": (
        "Un import ajoute et modifie des mots, il n'en retire aucun. Gardés tels quels, absents "
        "du fichier : {kept}."
    ),
    "Press Import within {minutes} min to make these changes.": (
        "Appuyez sur Importer dans les {minutes} min pour faire ces changements."
    ),
    "Import": "Importer",
    "Cancel": "Annuler",
    "Import cancelled: the dictionary is unchanged.": (
        "Import annulé : le dictionnaire est inchangé."
    ),
    "The import was not confirmed in time: the dictionary is unchanged.": (
        "L'import n'a pas été confirmé à temps : le dictionnaire est inchangé."
    ),
    "Imported: {added} added, {changed} changed; the dictionary has {words}.": (
        "Importé : {added} ajoutés, {changed} modifiés ; le dictionnaire a {words}."
    ),
    "The dictionary would have {count} words with this file, and it holds at most {most}: "
    "remove some first.": (
        "Le dictionnaire aurait {count} mots avec ce fichier, et il en contient au plus {most} : "
        "retirez-en d'abord."
    ),
    # sounds in the dictionary
    "“{word}” now plays your sound ({seconds:.1f} s) where it is written as a whole word.": (
        "« {word} » joue maintenant votre son ({seconds:.1f} s) là où il est écrit en mot entier."
    ),
    "“{word}” has no sound any more: it is spoken again.": (
        "« {word} » n'a plus de son : il est de nouveau prononcé."
    ),
    "“{word}” has no sound.": "« {word} » n'a pas de son.",
    "Give the word the sound plays for.": "Indiquez le mot pour lequel le son est joué.",
    "Keep the word to {most} characters.": "Limitez le mot à {most} caractères.",
    "Give a word (letters, digits or an emoji) for the sound.": (
        "Indiquez un mot (lettres, chiffres ou un emoji) pour le son."
    ),
    "This server can have at most {most} sounds: remove one first with /dict sound_remove.": (
        "Ce serveur peut avoir au plus {most} sons : retirez-en un d'abord avec /dict sound_remove."
    ),
    "• {word} → 🔊 a sound ({seconds:.1f} s)": "• {word} → 🔊 un son ({seconds:.1f} s)",
    "The file has the same word's sound twice.": (
        "Le fichier contient deux fois le son d'un même mot."
    ),
    "That recording is {seconds:.1f} s long; please send at most {most:.0f} seconds.": (
        "Cet enregistrement dure {seconds:.1f} s ; envoyez-en au plus {most:.0f} secondes."
    ),
    "That file is {size:.0f} KB; the limit is {most:.0f} KB. Please send a shorter one.": (
        "Ce fichier fait {size:.0f} Ko ; la limite est de {most:.0f} Ko. Envoyez-en un plus court."
    ),
    "That sound is silent.": "Ce son est silencieux.",
    "With its {count} sounds.": "Avec ses {count} sons.",
    "A CSV file holds no sounds: export JSON to keep them.": (
        "Un fichier CSV ne contient pas de sons : exportez en JSON pour les garder."
    ),
    "Sounds: {count} to add or replace.": "Sons : {count} à ajouter ou remplacer.",
    "Sounds imported: {count}.": "Sons importés : {count}.",
    "Sound {number}": "Son {number}",
    "“sounds” must be a list of sounds, as /dictionary export writes.": (
        "« sounds » doit être une liste de sons, comme l'écrit /dictionary export."
    ),
    "The file has more than {most} sounds.": "Le fichier contient plus de {most} sons.",
    "{where}: expected an object with “word” and “flac”.": (
        "{where} : un objet avec « word » et « flac » était attendu."
    ),
    "{where}: the word and the sound must both be text.": (
        "{where} : le mot et le son doivent tous deux être du texte."
    ),
    "{where}: the sound is larger than {kb} KB.": "{where} : le son dépasse {kb} Ko.",
    "{where}: the sound is not valid base64.": "{where} : le son n'est pas du base64 valide.",
    # dictionary files
    "That file is too large: at most {kb} KB.": "Ce fichier est trop gros : {kb} Ko au plus.",
    "Line {line}": "Ligne {line}",
    "Entry {number}": "Entrée {number}",
    "{where}: {problem}": "{where} : {problem}",
    "Line {line}: the file is not UTF-8 text (save it as UTF-8 and try again).": (
        "Ligne {line} : le fichier n'est pas du texte UTF-8 (enregistrez-le en UTF-8 et réessayez)."
    ),
    "{where}: “{word}” is already in the file ({first}).": (
        "{where} : « {word} » est déjà dans le fichier ({first})."
    ),
    "{where}: the word and how to say it must both be text.": (
        "{where} : le mot et sa prononciation doivent être du texte."
    ),
    "{where}: the language must be text, or empty for all.": (
        "{where} : la langue doit être du texte, ou vide pour toutes."
    ),
    "The file has more than {most} entries.": "Le fichier a plus de {most} entrées.",
    "{where}: expected word,spoken,language (the language may be left out); found {count} "
    "fields.": (
        "{where} : attendu mot,prononciation,langue (la langue peut manquer) ; {count} champs "
        "trouvés."
    ),
    "Line {line}: this is not valid CSV ({problem}).": (
        "Ligne {line} : ce n'est pas du CSV valide ({problem})."
    ),
    "Line {line}, column {column}: this is not valid JSON ({problem}).": (
        "Ligne {line}, colonne {column} : ce n'est pas du JSON valide ({problem})."
    ),
    "This is not a dictionary file.": "Ce n'est pas un fichier de dictionnaire.",
    "This is not a dictionary file: expected a list of entries, or an object with “entries”, "
    "as /dictionary export writes.": (
        "Ce n'est pas un fichier de dictionnaire : attendu une liste d'entrées, ou un objet avec "
        "« entries », comme l'écrit /dictionary export."
    ),
    "{where}: expected an object with “word”, “spoken” and, if it applies to one language "
    "only, “language”.": (
        "{where} : attendu un objet avec « word », « spoken » et, s'il ne vaut que pour une "
        "langue, « language »."
    ),
    "{where}: unknown field “{name}” (expected word, spoken, language).": (
        "{where} : champ inconnu « {name} » (attendus : word, spoken, language)."
    ),
    "I don't speak “{name}” on this bot. Choose one of: {languages}.": (
        "Je ne parle pas « {name} » sur ce bot. Choisissez parmi : {languages}."
    ),
    "The language models I can keep loaded are all in use, so I cannot load {name} now. "
    "Please try again in a minute.": (
        "Les modèles de langue que je peux garder chargés sont tous utilisés : je ne peux pas "
        "charger la langue {name} pour l'instant. Réessayez dans une minute."
    ),
    "I cannot speak {name} on this bot now: {reason}.": (
        "Je ne peux pas parler {name} sur ce bot pour l'instant : {reason}."
    ),
    "its model config {config} is broken ({error})": (
        "la configuration de son modèle, {config}, est invalide ({error})"
    ),
    "its weights are not downloaded here and cannot be fetched now ({file})": (
        "ses poids ne sont pas téléchargés ici et ne peuvent pas l'être maintenant ({file})"
    ),
    "its weights could not be checked in time": ("ses poids n'ont pas pu être vérifiés à temps"),
    "The language was changed {count} times in the last few minutes: please wait {minutes} "
    "min before changing it again.": (
        "La langue a été changée {count} fois ces dernières minutes : attendez {minutes} min "
        "avant de la changer à nouveau."
    ),
    "Members of this server changed their language {count} times in the last few minutes: "
    "please wait {minutes} min before changing yours.": (
        "Les membres de ce serveur ont changé de langue {count} fois ces dernières minutes : "
        "attendez {minutes} min avant de changer la vôtre."
    ),
    "I will speak your messages in this server's language again.": (
        "Je lirai de nouveau vos messages dans la langue du serveur."
    ),
    "I will speak your messages in {language} in this server.": (
        "Je lirai vos messages en {language} sur ce serveur."
    ),
    "I will call you by your server name again.": (
        "Je vous appellerai de nouveau par votre nom sur le serveur."
    ),
    "Please keep the name to {most} characters.": "Gardez le nom à {most} caractères au plus.",
    "I will call you “{nick}” when reading your messages.": (
        "Je vous appellerai « {nick} » en lisant vos messages."
    ),
    "I will call {member} by their server name again.": (
        "J'appellerai de nouveau {member} par son nom sur le serveur."
    ),
    "I will call {member} “{nick}” when reading their messages.": (
        "J'appellerai {member} « {nick} » en lisant ses messages."
    ),
    "You need the Manage Nicknames permission to choose another member's name.": (
        "Il vous faut la permission Gérer les pseudos pour choisir le nom d'un autre membre."
    ),
    "Your messages are read aloud again in this server.": (
        "Vos messages sont de nouveau lus à voix haute sur ce serveur."
    ),
    "Your messages will not be read aloud in this server.": (
        "Vos messages ne seront plus lus à voix haute sur ce serveur."
    ),
    "Your messages are read at this server's speaking rate again.": (
        "Vos messages sont de nouveau lus à la vitesse de ce serveur."
    ),
    "Your messages are read at {rate} speed in this server.": (
        "Vos messages sont lus à la vitesse {rate} sur ce serveur."
    ),
    "Your messages are read at this server's pitch again.": (
        "Vos messages sont de nouveau lus à la hauteur de ce serveur."
    ),
    "Your messages are read at a pitch of {pitch} semitones in this server.": (
        "Vos messages sont lus à une hauteur de {pitch} demi-tons sur ce serveur."
    ),
    # /help and the welcome
    "What I can do": "Ce que je sais faire",
    "`/say` a line in your voice channel · `/tts` sends it to you as a file · `/join` · "
    "`/leave` · `/skip` · `/stop` · `/clear`": (
        "`/say` une phrase dans votre salon vocal · `/tts` vous l'envoie en fichier · `/join` · "
        "`/leave` · `/skip` · `/stop` · `/clear`"
    ),
    "Your voice": "Votre voix",
    "`/clone` makes a voice from a recording of **your own** voice · `/voice list` · `/voice "
    "use` · `/voice preview` · `/voice delete` · `/voice forget-me`": (
        "`/clone` crée une voix à partir d'un enregistrement de **votre propre** voix · "
        "`/voice list` · `/voice use` · `/voice preview` · `/voice delete` · `/voice forget-me`"
    ),
    "You": "Vous",
    "`/set nick` the name I call you · `/set autoread` whether I read your messages · `/set "
    "my_language` the language I read them in · `/set my_rate` how fast · `/set my_pitch` how "
    "high · `/dictionary list` how words are said here": (
        "`/set nick` le nom que je vous donne · `/set autoread` si je lis vos messages · "
        "`/set my_language` la langue dans laquelle je les lis · `/set my_rate` à quelle vitesse"
        " · `/set my_pitch` à quelle hauteur · `/dictionary list` comment les mots sont dits ici"
    ),
    "Server (Manage Server)": "Serveur (Gérer le serveur)",
    "`/setup add` a channel I read (up to 5, each with its voice channel if you like) · "
    "`/setup remove` · `/config …` reading rules, `/config joining home_voice` a voice channel "
    "I stay in · `/settings` shows them all · `/dict` how words are said · `/dict sound` a "
    "sound in place of a word": (
        "`/setup add` un salon que je lis (jusqu'à 5, chacun avec son salon vocal si vous "
        "voulez) · `/setup remove` · `/config …` les règles de lecture, `/config joining "
        "home_voice` un salon vocal où je reste · `/settings` les montre toutes · `/dict` "
        "comment les mots sont dits · `/dict sound` un son à la place d'un mot"
    ),
    "Bot": "Bot",
    "`/botstats` how fast and how busy I am": "`/botstats` ma vitesse et ma charge",
    "Here": "Ici",
    "In a DM only `/tts`, `/voice` and `/help` work; the rest is for servers.": (
        "En message privé, seuls `/tts`, `/voice` et `/help` fonctionnent ; le reste est pour "
        "les serveurs."
    ),
    "In this server": "Sur ce serveur",
    "I read {channel} aloud.": "Je lis {channel} à voix haute.",
    "{reading} Its posts are read, each title first.": (
        "{reading} Ses publications sont lues, chacune précédée de son titre."
    ),
    "{reading} Its threads are read too.": "{reading} Ses fils sont lus aussi.",
    "{reading} Polls are read with their options, and their results while I am in voice.": (
        "{reading} Les sondages sont lus avec leurs choix, et leurs résultats quand je suis en "
        "vocal."
    ),
    "{reading} Each message is read in the language it is written in (of those I speak), "
    "unless its author chose theirs with `/set my_language`.": (
        "{reading} Chaque message est lu dans la langue où il est écrit (parmi celles que je "
        "parle), sauf si son auteur a choisi la sienne avec `/set my_language`."
    ),
    "No channel is read aloud yet.": "Aucun salon n'est encore lu à voix haute.",
    "Voice cloning is not available on this bot (only built-in voices).": (
        "Le clonage de voix n'est pas disponible sur ce bot (voix intégrées seulement)."
    ),
    "Voice cloning is switched off in this server.": (
        "Le clonage de voix est désactivé sur ce serveur."
    ),
    "Members may clone their own voice (`/clone`).": (
        "Les membres peuvent cloner leur propre voix (`/clone`)."
    ),
    "{reading} {cloning}": "{reading} {cloning}",
    "What next": "Et ensuite",
    "About": "À propos",
    "I speak with [Kyutai's Pocket TTS](https://huggingface.co/kyutai/pocket-tts): model "
    "weights © Kyutai, [CC BY 4.0](https://creativecommons.org/licenses/by/4.0/). "
    "PocketVoice is free software, "
    "[GPL-3.0-or-later](https://www.gnu.org/licenses/gpl-3.0.html).": (
        "Je parle avec [Pocket TTS de Kyutai](https://huggingface.co/kyutai/pocket-tts) : "
        "poids du modèle © Kyutai, "
        "[CC BY 4.0](https://creativecommons.org/licenses/by/4.0/deed.fr). PocketVoice est un "
        "logiciel libre, [GPL-3.0 ou ultérieure](https://www.gnu.org/licenses/gpl-3.0.html)."
    ),
    "Join a voice channel and write in {channel}, or use `/say`.": (
        "Rejoignez un salon vocal et écrivez dans {channel}, ou utilisez `/say`."
    ),
    "Someone with Manage Server runs `/setup add` and picks a channel to read. Until then, "
    "`/say` works in any voice channel.": (
        "Quelqu'un ayant Gérer le serveur lance `/setup add` et choisit un salon à lire. D'ici "
        "là, "
        "`/say` fonctionne dans n'importe quel salon vocal."
    ),
    "Hello! I read a text channel aloud in voice, in each member's own voice if they clone "
    "it. To start, someone with Manage Server runs `/setup add` and picks a channel to read; "
    "then join a voice channel and write there, or use `/say`. `/help` shows everything.": (
        "Bonjour ! Je lis un salon textuel à voix haute dans un salon vocal, avec la voix de "
        "chaque membre s'il la clone. Pour commencer, quelqu'un ayant Gérer le serveur lance "
        "`/setup add` et choisit un salon à lire ; rejoignez ensuite un salon vocal et écrivez-y, "
        "ou utilisez `/say`. `/help` montre tout."
    ),
}

TABLES: dict[str, dict[str, str]] = {  # keyed by locale code (discord.Locale's value)
    # The settings' descriptions are shown in /settings too: one translation for both.
    "fr": {**FRENCH_COMMANDS, **FRENCH_REPLIES},
}
