"""The docs document every command and every server setting (kept honest by this test): the
README's short tables and docs/commands.md's full ones both have a row for each setting and
name each command."""

from pathlib import Path

import discord
from discord import app_commands

from bot.storage.server_settings import SETTINGS
from tests.conftest import RunningBot

REPO = Path(__file__).resolve().parent.parent
TABLES = {
    name: (REPO / name).read_text(encoding="utf-8") for name in ("README.md", "docs/commands.md")
}


def missing_settings(text: str) -> list[str]:
    """The server settings without a table row (`| \\`name\\` |`) in `text`."""
    return [name for name in SETTINGS if f"| `{name}` |" not in text]


def missing_commands(tree: app_commands.CommandTree, text: str) -> tuple[list[str], int]:
    """The commands and message menus `text` does not name, and how many were looked for."""
    missing, checked = [], 0
    for command in tree.walk_commands():
        if isinstance(command, app_commands.Group):
            continue
        name = command.qualified_name
        if name.startswith("config ") and name.split()[-1] in SETTINGS:
            continue  # `/config <setting>`: the settings table documents these
        if f"`/{name}" not in text:
            missing.append(name)
        checked += 1
    for menu in tree.get_commands(type=discord.AppCommandType.message):
        if menu.name not in text:
            missing.append(menu.name)
        checked += 1
    return missing, checked


def test_every_server_setting_is_in_the_tables() -> None:
    for where, text in TABLES.items():
        assert not missing_settings(text), (where, missing_settings(text))
    # the check itself: a setting whose row is gone is found missing
    assert missing_settings(TABLES["README.md"].replace("| `xsaid` |", "| xsaid |")) == ["xsaid"]


async def test_every_command_is_documented(running_bot: RunningBot) -> None:
    tree = running_bot.bot.tree
    for where, text in TABLES.items():
        missing, checked = missing_commands(tree, text)
        assert not missing, (where, missing)
        assert checked >= 20
    # the check itself: a command or menu no longer named is found missing
    gone = TABLES["README.md"].replace("`/botstats", "`botstats").replace("Speak this message", "")
    assert sorted(missing_commands(tree, gone)[0]) == ["Speak this message", "botstats"]
