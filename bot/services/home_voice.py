"""A server's home voice channel (`/config joining home_voice`): the bot joins it when the
server becomes available (start-up, a gateway session made afresh) or when it is set, stays
there (no idle leave, no leaving when alone), and goes back there after a move, a kick or a
fault; the watchdog of `bot/playback/connection.py` does the joining. Webhooks' messages in a
read channel are read there (`bot/services/autoread.py`)."""

from __future__ import annotations

import logging

import discord

from bot.playback.connection import VoiceConnections
from bot.storage.database import Database

log = logging.getLogger(__name__)


class HomeVoice:
    def __init__(self, db: Database, connections: VoiceConnections) -> None:
        self.db = db
        self.connections = connections

    async def settle(self, guild: discord.Guild) -> int | None:
        """Take up the server's home channel as stored (the watchdog joins it within half a
        second when the bot is in no voice channel there); returns it."""
        home = (await self.db.guilds.get(guild.id)).home_voice
        if home is not None and not isinstance(
            guild.get_channel(home), discord.VoiceChannel | discord.StageChannel
        ):
            log.info("the home voice channel of guild %s is gone: not joining it", guild.id)
        self.connections.set_home(guild.id, home)
        return home
