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

import re
from dataclasses import dataclass
from pathlib import Path

from bot.speech_api.errors import BadRequest
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
    kind: str  # "default", "builtin" or "operator"
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
