"""Which language a member is spoken in: their own choice in that server, else the server's,
else the operator's `TTS_LANGUAGE`. A choice the operator no longer offers falls through."""

from __future__ import annotations

from bot.storage.database import Database
from bot.synthesis.model_pool import ModelPool


class LanguageChoice:
    def __init__(self, db: Database, models: ModelPool) -> None:
        self.db = db
        self.models = models

    async def for_member(self, user_id: int, guild_id: int | None) -> str:
        if guild_id is None:  # a DM: no server, no member settings
            return self.models.default_language
        member = await self.db.members.get(user_id, guild_id)
        server = await self.db.guilds.get(guild_id)
        for choice in (member.language, server.language):
            if choice and choice in self.models.languages:
                return choice
        return self.models.default_language
