"""Whose a voice state file is, written in the file itself: a member's exported voice
(`/voice export`) carries its owner's Discord id, when they consented, and that it is a cloned
voice, in the safetensors header's `__metadata__` (a map of strings, as the format allows), so
that whoever holds the file later (`python -m bot say --voice FILE`) can tell whose voice it is.

Only the header is touched: a safetensors file is an 8-byte little-endian header length, the
header (JSON: each tensor's dtype, shape and byte offsets into the data that follows, plus
`__metadata__`), then the tensors' bytes, which stay as they are (their offsets count from the
end of the header). No tensor library is needed to read or write it."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

METADATA = "__metadata__"
KIND = "pocketvoice"  # the key saying what the file is
CLONED = "a cloned voice"
OWNER = "owner_id"
CONSENTED = "consented_at"
# safetensors refuses a header past 100 MB; a voice state's is a few kB: read no more than this
MAX_HEADER = 1024 * 1024
ALIGN = 8  # safetensors pads its header with spaces to a multiple of 8 bytes


class NotSafetensors(ValueError):
    """The bytes are not a safetensors file (or its header is past MAX_HEADER)."""


@dataclass(frozen=True)
class VoiceOwner:
    """The member a cloned voice's file belongs to, as the file says."""

    owner_id: int
    consented_at: str


def _split(data: bytes) -> tuple[dict[str, object], bytes]:
    """(the header, the tensors' bytes) of a safetensors file."""
    if len(data) < 8:
        raise NotSafetensors("too short for a safetensors file")
    (length,) = struct.unpack("<Q", data[:8])
    if length > MAX_HEADER or 8 + length > len(data):
        raise NotSafetensors("not a safetensors header")
    try:
        header = json.loads(data[8 : 8 + length])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise NotSafetensors("not a safetensors header") from error
    if not isinstance(header, dict):
        raise NotSafetensors("not a safetensors header")
    return header, data[8 + length :]


def with_owner(data: bytes, owner_id: int, consented_at: str) -> bytes:
    """A voice state file's bytes with its owner's id, their consent time and "a cloned
    voice" in its metadata (what was there kept, ours replaced), the tensors unchanged."""
    header, tensors = _split(data)
    metadata = header.get(METADATA)
    header[METADATA] = {
        **(metadata if isinstance(metadata, dict) else {}),
        KIND: CLONED,
        OWNER: str(owner_id),
        CONSENTED: consented_at,
    }
    encoded = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    encoded += b" " * (-len(encoded) % ALIGN)
    return struct.pack("<Q", len(encoded)) + encoded + tensors


def owner_in(data: bytes) -> VoiceOwner | None:
    """The owner a voice state file names (None: no owner, as a built-in voice's or one
    pocket-tts wrote itself; a file that is not safetensors: `NotSafetensors`)."""
    metadata = _split(data)[0].get(METADATA)
    if not isinstance(metadata, dict) or metadata.get(KIND) != CLONED:
        return None
    owner = str(metadata.get(OWNER, ""))
    if not owner.isdigit():
        return None
    return VoiceOwner(int(owner), str(metadata.get(CONSENTED, "")))


def owner_of(path: Path) -> VoiceOwner | None:
    """`owner_in` of a file, reading only its header (None also for a file that is not
    safetensors: a clip, a built-in voice's name)."""
    try:
        with path.open("rb") as file:
            start = file.read(8)
            if len(start) < 8:
                return None
            (length,) = struct.unpack("<Q", start)
            if length > MAX_HEADER:
                return None
            head = start + file.read(length)
        return owner_in(head)
    except (OSError, NotSafetensors):
        return None
