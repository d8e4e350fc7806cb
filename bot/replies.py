"""What a command answers: text, maybe a file, a button or a table; or a polite refusal."""

from __future__ import annotations

from dataclasses import dataclass, field

import discord


class UserError(Exception):
    """Something the member can fix; the message is shown to them as is."""


@dataclass
class Reply:
    content: str
    file: tuple[str, bytes] | None = None  # (filename, data)
    preview_voice_id: int | None = None  # show a Preview button for this voice
    confirm_forget: int | None = None  # show a confirmation button for this user's deletion
    title: str | None = None  # with `fields`: shown as an embed
    fields: list[tuple[str, str]] = field(default_factory=list)


def plural(count: int, noun: str) -> str:
    """ "1 voice", "2 voices"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def require_manage_guild(permissions: discord.Permissions) -> None:
    """Checked here too: Discord's default permissions can be changed by server admins."""
    if not permissions.manage_guild:
        raise UserError("You need the Manage Server permission to change this server's settings.")
