"""Sounds in the dictionary (`/dict sound`): a short clip an admin attaches to a word, played in
place of that whole word when a message is read (bot/text/words.py marks the word,
bot/playback/speakers.py plays the clip between the speech before and after it, never through
the model).

A clip is bounded (200 KB, 3 s) and decoded by the one clip reader (bot/synthesis/clip.py)
in a thread, straight to the 48 kHz mono it plays at, and kept in the store as PCM with its
sha256. At most `MAX_SOUNDS` a server; a message plays at most `MAX_SOUND_PLAYS` (later
words with a sound are spoken, as the dictionary says or as written). The dictionary's JSON
export carries them as FLAC (bot/services/dictionary_files.py), and an import decodes them
again through the same reader."""

from __future__ import annotations

import asyncio
import hashlib
import io
import unicodedata

import numpy as np
import soundfile

from bot.core.errors import UserError
from bot.i18n.translate import Phrase, tr
from bot.storage.database import Database, DictionarySound, SoundsFullError
from bot.synthesis.clip import SOUND_LIMITS, SOUND_RATE, ClipError, ClipLimits, prepare_sound
from bot.text.words import MAX_SOUND_PLAYS

__all__ = ["MAX_SOUNDS", "MAX_SOUND_PLAYS", "SOUND_LIMITS"]

MAX_SOUNDS = 20  # a server's sounds
MAX_SOUND_WORD = 50  # characters, as a dictionary word
# An imported sound is the FLAC an export wrote: up to 3 s of 48 kHz s16 that may not
# compress (288 KB raw), so a little more room than an upload's 200 KB; 3 s all the same.
IMPORT_SOUND_LIMITS = ClipLimits(
    max_bytes=320 * 1024,
    max_duration_s=SOUND_LIMITS.max_duration_s,
    max_speech_s=SOUND_LIMITS.max_speech_s,
)


def check_word(word: str) -> str:
    """The word as kept (spaces collapsed), or a UserError saying what is wrong with it."""
    word = " ".join(word.split())
    if not word:
        raise UserError(tr("Give the word the sound plays for."))
    if len(word) > MAX_SOUND_WORD:
        raise UserError(tr("Keep the word to {most} characters.", most=MAX_SOUND_WORD))
    for char in word:
        if unicodedata.category(char).startswith("C"):  # control, private use, surrogates
            raise UserError(
                tr(
                    "The word holds {character}: remove it.",
                    character=tr("an invalid character ({code})", code=f"U+{ord(char):04X}"),
                )
            )
    if not any(c.isalnum() or unicodedata.category(c) == "So" for c in word):
        raise UserError(tr("Give a word (letters, digits or an emoji) for the sound."))
    return word


def made(word: str, data: bytes, limits: ClipLimits = SOUND_LIMITS) -> DictionarySound:
    """An uploaded file's bytes as a sound for `word` (blocking: decoding; call in a
    thread). A ClipError, in the member's words, when it cannot be used."""
    pcm = prepare_sound(data, limits)
    return DictionarySound(word, pcm, hashlib.sha256(pcm).hexdigest())


def seconds(sound: DictionarySound) -> float:
    return len(sound.pcm) / 2 / SOUND_RATE


def flac_of(sound: DictionarySound) -> bytes:
    """A sound as a FLAC file (lossless: an import gives back the same samples)."""
    out = io.BytesIO()
    samples = np.frombuffer(sound.pcm, dtype="<i2")
    soundfile.write(out, samples, SOUND_RATE, format="FLAC", subtype="PCM_16")
    return out.getvalue()


class Sounds:
    """What `/dict sound`, `/dict sound_remove` and the dictionary's list, export and import
    do with a server's sounds."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def set(self, guild_id: int, word: str, data: bytes) -> Phrase:
        """Attach the clip `data` to `word` (replacing its sound if it had one)."""
        word = check_word(word)
        sound = await asyncio.to_thread(made, word, data)
        await self.put(guild_id, [sound])
        return tr(
            "“{word}” now plays your sound ({seconds:.1f} s) where it is written as a whole word.",
            word=word,
            seconds=seconds(sound),
        )

    async def put(self, guild_id: int, sounds: list[DictionarySound]) -> None:
        """Add or replace these sounds together, or none when the server would have more
        than MAX_SOUNDS."""
        words = {w.casefold() for w in await self.db.sounds.words(guild_id)}
        total = len(words | {s.key for s in sounds})
        try:
            if total > MAX_SOUNDS:
                raise SoundsFullError(MAX_SOUNDS)
            await self.db.sounds.put(guild_id, sounds, MAX_SOUNDS)
        except SoundsFullError:
            raise UserError(
                tr(
                    "This server can have at most {most} sounds: remove one first with "
                    "/dict sound_remove.",
                    most=MAX_SOUNDS,
                )
            ) from None

    async def remove(self, guild_id: int, word: str) -> Phrase:
        word = " ".join(word.split())
        if not await self.db.sounds.remove(guild_id, word):
            raise UserError(tr("“{word}” has no sound.", word=word[:MAX_SOUND_WORD]))
        return tr("“{word}” has no sound any more: it is spoken again.", word=word)

    async def listed(self, guild_id: int, needle: str) -> list[Phrase]:
        """A line for each word with a sound whose word holds `needle` (casefolded)."""
        return [
            tr("• {word} → 🔊 a sound ({seconds:.1f} s)", word=word, seconds=length)
            for word, length in await self.db.sounds.lengths(guild_id)
            if needle in word.casefold()
        ]

    async def exported(self, guild_id: int) -> list[tuple[str, bytes]]:
        """(word, FLAC file) for each sound, for the JSON export."""
        sounds = await self.db.sounds.all(guild_id)
        return await asyncio.to_thread(lambda: [(s.word, flac_of(s)) for s in sounds])

    async def imported(self, items: list[tuple[str, str, bytes]]) -> list[DictionarySound]:
        """A file's sounds ((where, word, audio file)), each checked and decoded like an
        upload, in a thread; a UserError naming the first that cannot be used."""

        def decode() -> list[DictionarySound]:
            sounds = []
            for where, word, data in items:
                try:
                    sounds.append(made(check_word(word), data, IMPORT_SOUND_LIMITS))
                except (UserError, ClipError) as error:
                    raise UserError(
                        tr("{where}: {problem}", where=where, problem=error.message)
                    ) from None
            return sounds

        sounds = await asyncio.to_thread(decode)
        if len({s.key for s in sounds}) != len(sounds):
            raise UserError(tr("The file has the same word's sound twice."))
        return sounds
