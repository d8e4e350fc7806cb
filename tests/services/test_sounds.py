"""Sounds in the dictionary (`bot/services/sounds.py`, /dict sound): the clip's bounds and its
refusals (English and French), 20 a server, auto-reading attaching them to a message, the
dictionary's list, and the JSON export and import carrying them."""

from __future__ import annotations

import io
import json

import discord
import numpy as np
import pytest
import soundfile

from bot.core.errors import UserError
from bot.i18n.translate import localize
from bot.services import dictionary_files
from bot.services.sounds import MAX_SOUNDS, made
from bot.storage.database import DictionarySound
from bot.synthesis.clip import SOUND_RATE
from tests.audio_samples import encode
from tests.services.discord_objects import EVERYONE, MANAGE_GUILD, TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

ADMIN = discord.Permissions(MANAGE_GUILD)


def tone(seconds: float, hz: float = 1_000.0, rate: int = 48_000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


CLIP = encode(tone(0.5), "wav", rate=48_000)  # 44.1 kHz WAV, 44 KB


NOISE = np.random.default_rng(0).uniform(-0.5, 0.5, 3 * SOUND_RATE).astype(np.float32)


def wav(samples: np.ndarray, rate: int) -> bytes:
    out = io.BytesIO()
    soundfile.write(out, samples, rate, format="WAV", subtype="PCM_16")
    return out.getvalue()


async def refusal(bot: Bot, guild_id: int, data: bytes, word: str = "boom") -> tuple[str, str]:
    """What /dict sound answers for this file, in English and in French."""
    with pytest.raises(UserError) as error:
        await bot.dictionary.sounds.set(guild_id, word, data)
    return str(localize(error.value.message, "en-US")), localize(error.value.message, "fr")


async def test_a_sound_is_kept_at_48_khz_with_its_sha256(bot: Bot, server: Server) -> None:
    guild = server.start()
    reply = await bot.dictionary.sounds.set(guild.id, "  Boom ", CLIP)
    assert str(reply) == "“Boom” now plays your sound (0.5 s) where it is written as a whole word."
    (sound,) = await bot.db.sounds.all(guild.id)
    assert sound.word == "Boom" and len(sound.pcm) == 2 * SOUND_RATE // 2
    samples = np.frombuffer(sound.pcm, "<i2") / 32768
    spectrum = np.abs(np.fft.rfft(samples))
    assert np.argmax(spectrum) * SOUND_RATE / len(samples) == pytest.approx(1_000, abs=4)
    assert sound.sha256 == made("Boom", CLIP).sha256


BAD = {
    "too long": (
        wav(tone(3.5, rate=8_000), 8_000),  # 56 KB
        "That recording is 3.5 s long; please send at most 3 seconds.",
        "Cet enregistrement dure 3.5 s ; envoyez-en au plus 3 secondes.",
    ),
    "too big": (
        encode(NOISE, "wav", rate=48_000),  # 3 s at 44.1 kHz: 258 KB
        "That file is 258 KB; the limit is 200 KB. Please send a shorter one.",
        "Ce fichier fait 258 Ko ; la limite est de 200 Ko. Envoyez-en un plus court.",
    ),
    "not audio": (
        b"GIF89a" + bytes(100),
        "That is not an audio file I can read. Please send WAV, FLAC, MP3, Ogg Vorbis or Ogg Opus.",
        "Je ne sais pas lire ce fichier audio. Envoyez du WAV, FLAC, MP3, Ogg Vorbis ou Ogg Opus.",
    ),
    "silent": (
        encode(np.zeros(SOUND_RATE // 2, np.float32), "wav", rate=48_000),
        "That sound is silent.",
        "Ce son est silencieux.",
    ),
}


@pytest.mark.parametrize(("data", "english", "french"), BAD.values(), ids=BAD.keys())
async def test_a_clip_that_cannot_be_a_sound_is_refused_saying_why(
    bot: Bot, server: Server, data: bytes, english: str, french: str
) -> None:
    guild = server.start()
    assert await refusal(bot, guild.id, data) == (english, french)
    assert await bot.db.sounds.all(guild.id) == []


async def test_a_file_declared_too_big_is_refused_before_it_is_fetched(
    bot: Bot, server: Server
) -> None:
    guild = server.start()
    file = dict(server.attachment("boom.wav", "audio/wav"), size=201 * 1024)
    interaction, (attachment,) = server.slash_command(
        "alice", "dict", files=(file,), permissions=MANAGE_GUILD
    )
    assert isinstance(attachment, discord.Attachment)
    with pytest.raises(UserError) as error:  # (its URL leads nowhere: never fetched)
        await bot.dictionary.dict_sound(interaction.permissions, guild, "boom", attachment)
    assert error.value.message == "That file is too large: at most 200 KB."
    assert localize(error.value.message, "fr") == "Ce fichier est trop gros : 200 Ko au plus."
    with pytest.raises(UserError, match="Manage Server"):
        await bot.dictionary.dict_sound(discord.Permissions(EVERYONE), guild, "boom", attachment)
    with pytest.raises(UserError, match="Manage Server"):
        await bot.dictionary.dict_sound_remove(discord.Permissions(EVERYONE), guild, "boom")


@pytest.mark.parametrize(
    ("word", "refused"),
    [
        ("", "Give the word the sound plays for."),
        ("x" * 51, "Keep the word to 50 characters."),
        ("a\x00b", "The word holds an invalid character (U+0000): remove it."),
        ("!!", "Give a word (letters, digits or an emoji) for the sound."),
    ],
)
async def test_a_word_that_cannot_have_a_sound(
    bot: Bot, server: Server, word: str, refused: str
) -> None:
    guild = server.start()
    assert (await refusal(bot, guild.id, CLIP, word))[0] == refused


async def test_twenty_sounds_a_server_the_21st_refused(bot: Bot, server: Server) -> None:
    guild = server.start()
    sound = made("w", CLIP)
    await bot.dictionary.sounds.put(
        guild.id, [DictionarySound(f"w{n}", sound.pcm, sound.sha256) for n in range(MAX_SOUNDS)]
    )
    assert MAX_SOUNDS == 20
    assert await refusal(bot, guild.id, CLIP, "one more") == (
        "This server can have at most 20 sounds: remove one first with /dict sound_remove.",
        "Ce serveur peut avoir au plus 20 sons : retirez-en un d'abord avec /dict sound_remove.",
    )
    await bot.dictionary.sounds.set(guild.id, "W3", CLIP)  # a word's new sound takes no place
    assert await bot.db.sounds.count(guild.id) == MAX_SOUNDS
    removed = await bot.dictionary.dict_sound_remove(ADMIN, guild, "w3")
    assert removed.content == "“w3” has no sound any more: it is spoken again."
    await bot.dictionary.sounds.set(guild.id, "one more", CLIP)
    with pytest.raises(UserError, match="has no sound"):
        await bot.dictionary.dict_sound_remove(ADMIN, guild, "w3")


async def test_a_message_read_aloud_carries_the_sounds_it_plays(bot: Bot, server: Server) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID))
    await bot.dictionary.sounds.set(guild.id, "Boom", CLIP)
    await bot.dictionary.sounds.set(guild.id, "tada", CLIP)
    post = server.post("alice", "well BOOM and boomer")
    assert await bot.autoread.handle(post) == "read"
    (utterance,) = bot.speaker.queue
    sound = (await bot.db.sounds.get(guild.id, ["boom"]))["boom"]
    assert utterance.sounds == {"boom": sound.pcm}  # only the sound it plays
    assert "\uf8fdboom\uf8feBOOM\uf8ff" in utterance.text and "boomer" in utterance.text


async def test_the_list_shows_which_words_have_a_sound(bot: Bot, server: Server) -> None:
    guild = server.start()
    await bot.db.dictionary.add(guild.id, "brb", "be right back")
    await bot.dictionary.sounds.set(guild.id, "boom", CLIP)
    listed = await bot.dictionary.dict_list(guild)
    assert listed.content.splitlines() == [
        "**Pronunciations** (2)",
        "• brb → be right back",
        "• boom → 🔊 a sound (0.5 s)",
    ]
    assert localize(listed.content, "fr").splitlines()[-1] == "• boom → 🔊 un son (0.5 s)"
    only = await bot.dictionary.dict_list(guild, contains="bo")
    assert only.content.splitlines()[1:] == ["• boom → 🔊 a sound (0.5 s)"]


async def test_export_and_import_carry_the_sounds(bot: Bot, server: Server) -> None:
    guild, other = server.start(), 4242
    await bot.db.dictionary.add(guild.id, "brb", "be right back")
    await bot.dictionary.sounds.set(guild.id, "boom", CLIP)
    await bot.dictionary.sounds.set(guild.id, "tada", encode(tone(3.0, 440), "flac", 48_000))
    exported = await bot.dictionary.dict_export(guild)
    assert exported.file is not None
    name, data = exported.file
    text = data.decode()
    assert [s["word"] for s in json.loads(text)["sounds"]] == ["boom", "tada"]
    entries = dictionary_files.parse(name, text, bot.dictionary.check_entry, 200)
    sounds = await bot.dictionary.sounds.imported(dictionary_files.parse_sounds(name, text, 20))
    assert sounds == await bot.db.sounds.all(guild.id)  # the same samples (FLAC: lossless)
    reply = await bot.dictionary._import(ADMIN, _guild(other), entries, sounds)
    assert reply.content.splitlines() == [
        "Imported: 1 added, 0 changed; the dictionary has 1 word.",
        "Sounds imported: 2.",
    ]
    assert await bot.db.sounds.all(other) == await bot.db.sounds.all(guild.id)
    csv = await bot.dictionary.dict_export(guild, "csv")
    assert "A CSV file holds no sounds" in csv.content


class _guild:  # a guild as `_import` reads one: its id
    def __init__(self, guild_id: int) -> None:
        self.id = guild_id


BAD_FILES = {
    "not base64": ([{"word": "boom", "flac": "@@@"}], "Sound 1: the sound is not valid base64."),
    "too large": (
        [{"word": "boom", "flac": "A" * 440_000}],
        "Sound 1: the sound is larger than 320 KB.",
    ),
    "an unknown field": (
        [{"word": "boom", "flac": "", "x": 1}],
        "Sound 1: expected an object with “word” and “flac”.",
    ),
    "too many": (
        [{"word": f"w{n}", "flac": ""} for n in range(21)],
        "The file has more than 20 sounds.",
    ),
    "not audio": (
        [{"word": "boom", "flac": "R0lGODlh"}],
        "Sound 1: That is not an audio file I can read. Please send WAV, FLAC, MP3, "
        "Ogg Vorbis or Ogg Opus.",
    ),
}


@pytest.mark.parametrize(("listed", "refused"), BAD_FILES.values(), ids=BAD_FILES.keys())
async def test_an_imported_sound_is_bounded_like_an_upload(
    bot: Bot, listed: list[object], refused: str
) -> None:
    text = json.dumps({"pocketvoice_dictionary": 1, "entries": [], "sounds": listed})
    with pytest.raises(UserError) as error:
        await bot.dictionary.sounds.imported(dictionary_files.parse_sounds("d.json", text, 20))
    assert str(localize(error.value.message, "en-US")) == refused
