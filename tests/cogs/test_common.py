"""`cogs.common.guild_of`: a guild command's server, or an error that `respond` turns into the
generic reply with an error id (no server for a guild-only command is never the member's
mistake); `cogs.common.services`: the bot's built services, or such an error."""

from __future__ import annotations

import pytest

from bot.client import PocketVoiceBot
from bot.core.config import load_config
from bot.core.errors import UserError
from bot.services.replies import reply_for
from cogs.common import guild_of, services
from tests.services.discord_objects import Server


def test_a_guild_command_has_its_server() -> None:
    server = Server()
    server.add("bob")
    guild = server.start()
    interaction, _ = server.slash_command("bob", "leave")
    assert guild_of(interaction) is guild


def test_without_a_server_it_is_a_generic_reply_not_the_members_mistake() -> None:
    """Discord never sends a guild-only command from a DM (and discord.py makes a partial
    server of any `guild_id`), so only a bug gets here: an error id, not a member's error."""
    server = Server()
    bob = server.add("bob")
    server.start()
    payload = server.interaction_create("bob", {"id": "1", "name": "leave", "type": 1})
    for key in ("guild", "guild_id", "guild_locale", "member"):
        payload.pop(key)
    payload.update(user=bob.user(), context=1, authorizing_integration_owners={"1": bob.id})
    interaction = server.interaction(payload)
    with pytest.raises(RuntimeError) as caught:
        guild_of(interaction)
    assert not isinstance(caught.value, UserError)
    assert reply_for(caught.value, "leave").content.startswith("Something went wrong on my side")


def test_services_are_the_bots_only() -> None:
    """A button pressed on another client (never the bot's own) is a bug of ours."""
    server = Server()
    server.add("bob")
    server.start()
    interaction, _ = server.slash_command("bob", "leave")
    assert not isinstance(interaction.client, PocketVoiceBot)
    with pytest.raises(TypeError) as caught:
        services(interaction)
    assert reply_for(caught.value, "leave").content.startswith("Something went wrong on my side")


async def test_the_bots_services_exist_once_built() -> None:
    """Before `setup_hook` builds them, asking for them says so (no event or command comes
    before: the gateway connects after it)."""
    settings = load_config({"DISCORD_TOKEN": "x"}, dotenv_path=None)
    bot = PocketVoiceBot(settings)
    try:
        assert bot.not_ready_reason() == "loading the model"
        with pytest.raises(RuntimeError, match="not built yet"):
            bot.app  # noqa: B018
    finally:
        await bot.http.connector.close()  # never started: nothing else to close
