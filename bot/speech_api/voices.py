"""The voices the speech service speaks with: the default voice, pocket-tts's built-in voices,
and the operator's own files in DATA_DIR/service-voices/ (a clip, or a `.safetensors` voice
state as `./run.sh voices export` and `/voice export` make).

Members' cloned voices are never offered: they consented to speak in their Discord servers,
nothing more. A name is looked up only among the voices above (it is never a path), so no
name reaches a member's files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bot.speech_api.errors import BadRequest
from bot.synthesis.engine import BUILTIN_VOICES, builtin_voices_for

FOLDER = "service-voices"
STATE_SUFFIX = ".safetensors"
CLIP_SUFFIXES = (".wav", ".ogg", ".opus", ".flac", ".mp3")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_FILES = 1000  # files looked at in the folder: the operator's, but a listing stays bounded
DEFAULT = "default"
# OpenAI's voice names, which clients send unasked: the default voice speaks for them
OPENAI_VOICES = frozenset(
    {"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer",
     "verse", "marin", "cedar"}
)  # fmt: skip


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
        native, _ = builtin_voices_for(self.default_language)
        for name in BUILTIN_VOICES:
            language = self.default_language if name in native else "english"
            voices.append(ServiceVoice(name, name, "builtin", language))
        builtin = set(BUILTIN_VOICES) | {DEFAULT}
        voices += [
            ServiceVoice(name, str(path), "operator")
            for name, path in self.operator_files().items()
            if name not in builtin
        ]
        return voices

    def resolve(self, name: str) -> ServiceVoice:
        """The voice called `name`, or a 400 naming the voices there are."""
        if name in OPENAI_VOICES:
            return ServiceVoice(name, None, "default")
        if NAME.fullmatch(name):
            for voice in self.all():
                if voice.name == name:
                    return voice
        raise BadRequest(
            f"Unknown voice {name[:64]!r}: GET /v1/audio/voices lists this service's voices.",
            param="voice", code="unknown_voice",
        )  # fmt: skip
