"""The README documents every command and every server setting (kept honest by this test)."""

from pathlib import Path

import discord
from discord import app_commands

from bot.storage.server_settings import SETTINGS
from tests.conftest import RunningBot

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_every_server_setting_is_in_the_readme_table() -> None:
    for name in SETTINGS:
        assert f"| `{name}` |" in README, name


async def test_every_command_is_documented(running_bot: RunningBot) -> None:
    tree = running_bot.bot.tree
    checked = 0
    for command in tree.walk_commands():
        if isinstance(command, app_commands.Group):
            continue
        name = command.qualified_name
        if name.startswith("config ") and name.split()[-1] in SETTINGS:
            continue  # `/config <setting>`: the settings table documents these
        assert f"`/{name}" in README or f"· `/{name}" in README, name
        checked += 1
    for menu in tree.get_commands(type=discord.AppCommandType.message):
        assert menu.name in README
        checked += 1
    assert checked >= 20
