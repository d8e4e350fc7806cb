"""The voices the speech service speaks with: the default voice, pocket-tts's built-in voices,
and the operator's own files in DATA_DIR/service-voices/ (a clip, or a `.safetensors` voice
state as `./run.sh voices export` and `/voice export` make).

Members' cloned voices are never offered: they consented to speak in their Discord servers,
nothing more. A name is looked up only among the voices above (it is never a path), so no
name reaches a member's files.

OpenAI's voice names (`alloy`, `nova`, ...), which clients send unasked, speak in the default
voice, unless the operator has a voice of that name: the operator's voice wins, and is listed
as theirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile

from bot.speech_api.errors import BadRequest, TooMany
from bot.synthesis.audio_files import MODEL_RATE
from bot.synthesis.clip import ClipError, ClipLimits, check_size, prepare
from bot.synthesis.engine import BUILTIN_VOICES, builtin_voices_for
from bot.synthesis.pocket_tts_adapter import DEFAULT_VOICE_FOR_LANGUAGE

FOLDER = "service-voices"
STATE_SUFFIX = ".safetensors"
CLIP_SUFFIXES = (".wav", ".ogg", ".opus", ".flac", ".mp3")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_FILES = 1000  # files looked at in the folder: the operator's, but a listing stays bounded
DEFAULT = "default"
# OpenAI's voice names, which clients send unasked: the default voice speaks for them, unless
# the operator has a voice of that name
OPENAI_VOICES = frozenset(
    {
        "alloy",
        "ash",
        "ballad",
        "coral",
        "echo",
        "fable",
        "onyx",
        "nova",
        "sage",
        "shimmer",
        "verse",
        "marin",
        "cedar",
    }
)


def recorded_in(voice: str) -> str:
    """The language a built-in voice was recorded in: its language's own voice, or English
    (pocket-tts's other voices), as `builtin_voices_for` sorts them."""
    language: str
    for language in ("english", *DEFAULT_VOICE_FOR_LANGUAGE):
        if voice in builtin_voices_for(language)[0]:
            return language
    return "english"


@dataclass(frozen=True)
class ServiceVoice:
    name: str
    spec: str | None  # what the engine loads (None: its default voice)
    kind: str  # "default", "builtin", "operator", or "clip" (a request's own, never listed)
    language: str | None = None  # the language a built-in voice was recorded in


class ServiceVoices:
    def __init__(self, data_dir: Path, default_language: str) -> None:
        self.folder = data_dir / FOLDER
        self.default_language = default_language

    def operator_files(self) -> dict[str, Path]:
        """The operator's voices by name (a voice state wins over a clip of the same name)."""
        found: dict[str, Path] = {}
        try:
            entries = sorted(self.folder.iterdir())[:MAX_FILES]
        except OSError:  # no folder: no operator voices
            return found
        for path in entries:
            suffix = path.suffix.lower()
            if not NAME.fullmatch(path.stem) or not path.is_file():
                continue
            if suffix == STATE_SUFFIX or (suffix in CLIP_SUFFIXES and path.stem not in found):
                found[path.stem] = path
        return found

    def all(self) -> list[ServiceVoice]:
        voices = [ServiceVoice(DEFAULT, None, "default")]
        for name in BUILTIN_VOICES:
            voices.append(ServiceVoice(name, name, "builtin", recorded_in(name)))
        builtin = set(BUILTIN_VOICES) | {DEFAULT}
        voices += [
            ServiceVoice(name, str(path), "operator")
            for name, path in self.operator_files().items()
            if name not in builtin
        ]
        return voices

    def resolve(self, name: str) -> ServiceVoice:
        """The voice called `name` (an OpenAI name without a voice of the operator's: the
        default voice), or a 400 naming the voices there are."""
        if NAME.fullmatch(name):
            for voice in self.all():
                if voice.name == name:
                    return voice
        if name in OPENAI_VOICES:
            return ServiceVoice(name, None, "default")
        raise BadRequest(
            f"Unknown voice {name[:64]!r}: GET /v1/audio/voices lists this service's voices.",
            param="voice",
            code="unknown_voice",
        )


MAX_VOICE_FILE = 64 * 1024 * 1024  # a clip or a voice state the operator adds


def import_voice(data_dir: Path, name: str, source: Path) -> Path:
    """Copy the operator's clip or voice state into the service's voices as `name` (a
    private file in a private folder); blocking. ValueError says what is wrong."""
    from bot.core.files import make_private_dir, write_atomically

    suffix = source.suffix.lower()
    if not NAME.fullmatch(name) or name in BUILTIN_VOICES or name == DEFAULT:
        raise ValueError(
            f"{name!r} cannot name a voice: letters, digits, - and _ (at most 64), and not "
            "a built-in voice's name"
        )
    if suffix != STATE_SUFFIX and suffix not in CLIP_SUFFIXES:
        raise ValueError(
            f"{source.name}: give a clip ({', '.join(CLIP_SUFFIXES)}) or a "
            f"{STATE_SUFFIX} voice state"
        )
    if not source.is_file() or source.stat().st_size > MAX_VOICE_FILE:
        raise ValueError(f"{source} is not a readable file of at most 64 MB")
    folder = data_dir / FOLDER
    make_private_dir(folder)
    for old in folder.glob(f"{name}.*"):  # one file per name: the new one replaces it
        old.unlink()
    target = folder / f"{name}{suffix}"
    with source.open("rb") as file:
        write_atomically(target, file.read(MAX_VOICE_FILE + 1))
    return target


# A clip sent with one request (the page's upload, the API's `voice_file`): its size is
# checked before it is read whole, its header (container, rate, channels, duration) before a
# sample is decoded, then it is decoded a block at a time (`bot.synthesis.clip.decode`)
CLIP = "clip"  # the voice's name in the answer's X-Voice
CLIP_FIELDS = ("voice_file", "voice_wav")  # (the second: pocket-tts's own server's name)
CLIP_LIMITS = ClipLimits(
    max_bytes=8 * 1024 * 1024, max_duration_s=60.0, min_speech_s=1.0, max_speech_s=60.0
)
CLIP_DECODES = 2  # clips decoded at once, whoever sent them: the rest wait their turn
# clips held at once (each 30 s of 16-bit speech at most, 1.4 MB in the temporary folder: a
# container's /tmp is a 64 MB tmpfs); past it, 429
CLIPS_HELD = 16


class RequestClips:
    """A voice made from a clip for the one request that sent it, never kept: the clip,
    checked and trimmed to its speech, waits in a private temporary file (0600, in a 0700
    folder of the system's temporary folder: the container's tmpfs) while its request is
    spoken, for the engine to make its voice state as it makes an operator's clip's; at the
    request's end the file is deleted and the state dropped from the models' caches. Only
    where the loaded weights can clone, and SPEECH_CLIPS is on; CLIPS_HELD at once."""

    def __init__(
        self,
        enabled: bool,
        can_clone: Callable[[], bool],
        forget: Callable[[str], Awaitable[None]],
    ) -> None:
        self.enabled, self.can_clone, self.forget = enabled, can_clone, forget
        self.folder: Path | None = None
        self.decoding = asyncio.Semaphore(CLIP_DECODES)
        self.held = 0

    def available(self) -> bool:
        return self.enabled and self.can_clone()

    def check(self) -> None:
        """Refused before a byte of the clip is read: switched off, or no cloning here."""
        if not self.enabled:
            raise BadRequest(
                "This service takes no voice clips (its operator set SPEECH_CLIPS=0).",
                param=CLIP_FIELDS[0],
                code="clips_off",
            )
        if not self.can_clone():
            raise BadRequest(
                "This service cannot speak in a clip's voice: its model was loaded without "
                "the voice-cloning weights.",
                param=CLIP_FIELDS[0],
                code="cloning_unavailable",
            )

    async def voice(self, data: bytes) -> ServiceVoice:
        """The clip's voice for one request (`done` when it ends); a 400 saying what is
        wrong with the clip (its size, its header, no speech in it)."""
        self.check()
        if self.held >= CLIPS_HELD:
            raise TooMany(
                "Too many voice clips are being spoken right now; try again in a moment.",
                code="service_full",
                retry_after=2,
            )
        self.held += 1
        try:
            try:
                check_size(len(data), CLIP_LIMITS)
                async with self.decoding:
                    samples = await asyncio.to_thread(prepare, data, CLIP_LIMITS)
            except ClipError as error:
                raise BadRequest(str(error), param=CLIP_FIELDS[0], code="invalid_clip") from None
            path = await asyncio.to_thread(self._write, samples)
        except BaseException:
            self.held -= 1
            raise
        return ServiceVoice(CLIP, str(path), CLIP)

    def _write(self, samples: np.ndarray) -> Path:
        if self.folder is None or not self.folder.is_dir():
            self.folder = Path(tempfile.mkdtemp(prefix="pocketvoice-clips-"))  # (0700)
        descriptor, name = tempfile.mkstemp(suffix=".wav", dir=self.folder)  # (0600)
        with os.fdopen(descriptor, "wb") as file:
            soundfile.write(file, samples, MODEL_RATE, format="WAV", subtype="PCM_16")
        return Path(name)

    async def done(self, voice: ServiceVoice) -> None:
        """The request ended: its clip deleted, its voice state dropped."""
        if voice.kind != CLIP or voice.spec is None:
            return
        self.held -= 1
        with contextlib.suppress(OSError):
            await asyncio.to_thread(Path(voice.spec).unlink)
        await self.forget(voice.spec)

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
