"""Private files, written whole: folders only the bot's user can read (0700), and files (0600)
that appear under their name complete or not at all."""

from __future__ import annotations

import errno
import os
import uuid
from pathlib import Path

from bot.core.errors import OperatorError


class PrivateFolderError(OperatorError, OSError):
    """A data folder the bot's user cannot create, write or make private. Still an OSError,
    so callers that bear a failing disk (the phrase cache) go on bearing it."""

    label = "DATA_DIR"


def make_private_dir(folder: Path) -> None:
    """Create `folder` (and parents) readable by the bot's user only (0700)."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(folder, 0o700)
    except OSError as error:
        if error.errno in (errno.EACCES, errno.EPERM):
            fix = (
                f"it must be a folder that this user (uid {os.getuid()}) owns and can "
                f"write; give it to this user (chown {os.getuid()} {folder})"
            )
        else:
            fix = "it must be a folder on a disk with room that this user can write"
        raise PrivateFolderError(
            f"cannot use {folder} ({error.strerror}): {fix}, or set DATA_DIR to another folder"
        ) from None


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to a private temporary file beside `path`, fsync it, rename it into place."""
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    try:
        with os.fdopen(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600), "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
