"""`/config` passes each option as Discord types it (a switch, a number, a picked channel's
id, None for an empty role), and the service checks it as it is, without turning it back into
text to parse again; typed text (a voice, a language, a time zone) is parsed as before."""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from bot.storage.server_settings import SETTINGS
from tests.services.discord_objects import VOICE_ID, Server
from tests.services.wiring import Bot

ADMIN = discord.Permissions(manage_guild=True)


async def test_typed_values_are_checked_and_kept_as_they_are(bot: Bot, server: Server) -> None:
    guild = server.start()
    await bot.settings.set_server(ADMIN, guild, "cloning", False)
    await bot.settings.set_server(ADMIN, guild, "rate_limit", 3)
    await bot.settings.set_server(ADMIN, guild, "speaking_rate", 1.255)
    await bot.settings.set_server(ADMIN, guild, "home_voice", int(VOICE_ID))
    await bot.settings.set_server(ADMIN, guild, "required_role", None)
    kept = await bot.db.guilds.get(guild.id)
    assert (kept.cloning, kept.rate_limit, kept.speaking_rate) == (False, 3, 1.25)
    assert (kept.home_voice, kept.required_role) == (int(VOICE_ID), None)


@pytest.mark.parametrize(
    ("key", "given", "refusal"),
    [
        ("rate_limit", 10_000, "rate_limit goes from"),
        ("speaking_rate", 3.0, "speaking_rate goes from 0.5 to 2.0."),
        ("speaking_rate", float("nan"), "speaking_rate goes from 0.5 to 2.0."),
    ],
)
async def test_typed_values_out_of_bounds_are_refused_with_the_bounds(
    bot: Bot, server: Server, key: str, given: float, refusal: str
) -> None:
    guild = server.start()
    with pytest.raises(UserError) as error:
        await bot.settings.set_server(ADMIN, guild, key, given)
    assert error.value.message.startswith(refusal)
    assert getattr(await bot.db.guilds.get(guild.id), key) == SETTINGS[key].default


def test_a_type_that_does_not_fit_the_setting_is_a_bug_not_a_members_mistake() -> None:
    with pytest.raises(TypeError):
        SETTINGS["cloning"].accept(1)  # a number for a switch
    with pytest.raises(TypeError):
        SETTINGS["rate_limit"].accept(True)  # a switch for a number
    with pytest.raises(TypeError):
        SETTINGS["language"].accept(None)  # text settings take text ("none" for none)
