"""The bot's idle upkeep, every `every_s`: the status line (presence) saying how busy the bot
is, idle speakers dropped, idle models unloaded, native memory given back, and voice left in
servers quiet for their `idle_timeout`."""

from __future__ import annotations

import asyncio
import logging

import discord

from bot.core import native_memory
from bot.core.supervisor import supervise
from bot.playback.speakers import Speakers
from bot.services.voice_control import VoiceControl
from bot.storage.database import Database
from bot.synthesis.model_pool import ModelPool

log = logging.getLogger(__name__)

IDLE_CHECK_S = 15.0
SPEAKER_IDLE_S = 3600.0  # a server's speaker is dropped after this long unused, out of voice


class IdleUpkeep:
    """One supervised task (`start`, `stop`): a failed round is logged and the next one runs."""

    every_s: float = IDLE_CHECK_S  # a class attribute: a test sets it before the bot starts

    def __init__(
        self,
        client: discord.Client,
        speakers: Speakers,
        models: ModelPool,
        db: Database,
        voice: VoiceControl,
    ) -> None:
        self.client = client
        self.speakers = speakers
        self.models = models
        self.db = db
        self.voice = voice
        self._status = ""  # the status line last set
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = supervise(self._watch, "idle-watch")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.every_s)
            await self.round()

    async def round(self) -> None:
        """One round of upkeep."""
        client = self.client
        if client.is_ready():
            await self._update_status()
            # voice_clients are typed VoiceProtocol, which has no guild: ours are VoiceClients
            connected = {vc.guild.id for vc in client.voice_clients}  # type: ignore[attr-defined]
            # a link being healed has no voice client for a moment: its speaker stays, since
            # chat is queued on the speaker the connection made (`AutoReader`)
            connected |= self.voice.connections.wanted()
            await self.speakers.sweep(SPEAKER_IDLE_S, connected)
            await self.models.unload_over_budget()
            await asyncio.to_thread(native_memory.trim)
        for voice_client in list(client.voice_clients):
            guild = voice_client.guild  # type: ignore[attr-defined]  # a VoiceClient (above)
            try:
                timeout = (await self.db.guilds.get(guild.id)).idle_timeout
                await self.voice.leave_if_idle(guild, timeout)
            except Exception:  # one server's trouble must not stop the watch
                log.exception("idle check failed in guild %s", guild.id)

    async def _update_status(self) -> None:
        line = self.speakers.snapshot().status_line()
        if line == self._status:
            return
        try:
            await self.client.change_presence(activity=discord.CustomActivity(name=line))
            self._status = line
        except (discord.HTTPException, ConnectionError, RuntimeError) as error:
            log.warning("could not update the status line: %s", error)
