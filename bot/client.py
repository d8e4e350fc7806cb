"""The discord.py bot: intents, endpoints, start-up (the parts `bot.app` builds, the cogs)
and clean shutdown."""

from __future__ import annotations

import logging
import ssl

import aiohttp
import discord
from discord import app_commands
from discord.ext import commands

from bot.app import App, Probes, build
from bot.core import gc_pauses, native_memory
from bot.core.config import Config
from bot.i18n.translate import localize
from bot.ops.shards import ProcessShards, ShardLoad
from bot.playback.voice_link import point_discord_at
from bot.services.command_translator import CommandTranslator
from bot.services.replies import reply_for

log = logging.getLogger(__name__)

EXTENSIONS = (
    "cogs.speech",
    "cogs.voices",
    "cogs.settings",
    "cogs.autoread",
    "cogs.moderation",
    "cogs.help",
)


def ssl_context(config: Config) -> ssl.SSLContext:
    """The system's trusted CAs plus `DISCORD_CA_FILE`; verification always stays on."""
    context = ssl.create_default_context()
    if config.discord_ca_file is not None:
        context.load_verify_locations(cafile=str(config.discord_ca_file))
    return context


async def add_commands(bot: commands.Bot | commands.AutoShardedBot) -> None:
    """The slash commands (the cogs) and their translations: the one tree the bot serves,
    `sync` registers and `doctor` compares with what Discord has."""
    await bot.tree.set_translator(CommandTranslator())
    for extension in EXTENSIONS:
        await bot.load_extension(extension)


class CommandClient(commands.Bot):
    """What `sync` and `doctor` need of Discord: a login over REST and the bot's command
    tree. No gateway session, no model, no database: those are the whole bot's,
    `PocketVoiceBot`."""

    def __init__(self, config: Config) -> None:
        point_discord_at(config)
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents.none(),
            help_command=None,
            connector=aiohttp.TCPConnector(ssl=ssl_context(config)),
        )

    async def setup_hook(self) -> None:  # runs in login()
        await add_commands(self)

    async def sync_commands(self) -> int:
        """Register the commands with Discord, in place of what was registered."""
        return len(await self.tree.sync())


class PocketVoiceBot(commands.AutoShardedBot):
    """Always sharded: SHARD_COUNT/SHARD_IDS choose this process's shards, unset they are
    Discord's recommended count, all held here. Guilds spread over processes by shard; their
    shared data is in the database (DATABASE_URL). Its parts are built by `bot.app.build`."""

    def __init__(self, config: Config) -> None:
        native_memory.limit_arenas()  # before the model's threads start
        point_discord_at(config)
        intents = discord.Intents.none()
        intents.guilds = True
        intents.voice_states = True
        intents.guild_messages = True
        intents.message_content = True  # privileged: switched on in the Developer Portal
        ids = config.shard_ids
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            help_command=None,
            allowed_mentions=discord.AllowedMentions.none(),
            # No message cache: edits and deletions come as raw events with what is needed,
            # so members' messages are not kept in memory (up to 1,000 by default) for nothing.
            max_messages=None,
            connector=aiohttp.TCPConnector(ssl=ssl_context(config)),
            shard_count=config.shard_count,
            # None: every shard (discord.py's default, which its typing leaves out)
            shard_ids=None if ids is None else list(ids),  # type: ignore[arg-type]
        )
        self.config = config
        port = config.metrics_port
        self.probes = (
            None
            if port is None
            else Probes(config.metrics_host, port, self.not_ready_reason, self.process_shards)
        )
        self._app: App | None = None  # built in setup_hook, before the gateway connects

    @property
    def app(self) -> App:
        """The bot's services: built before any event or command reaches the bot."""
        if self._app is None:
            raise RuntimeError("the bot's services are not built yet (setup_hook builds them)")
        return self._app

    def not_ready_reason(self) -> str | None:
        """None once the bot can speak; otherwise what it is still waiting for (/healthz)."""
        if self.is_closed():
            return "shutting down"
        if self._app is None:
            return "loading the model"
        shards = self.shards.values()
        if not self.is_ready() or not shards or any(shard.is_closed() for shard in shards):
            return "connecting to Discord"
        return None

    def process_shards(self) -> ProcessShards:
        """The shards this process holds, each with its servers and voice connections."""
        loads = {
            shard_id: ShardLoad(shard_id, info.latency, info.is_closed())
            for shard_id, info in self.shards.items()
        }
        for guild in self.guilds:
            if guild.shard_id in loads:
                loads[guild.shard_id].servers += 1
        for voice_client in self.voice_clients:
            shard_id = voice_client.guild.shard_id  # type: ignore[attr-defined]  # VoiceClients
            if shard_id in loads:
                loads[shard_id].voice_connections += 1
        return ProcessShards(self.shard_count or 1, [loads[i] for i in sorted(loads)])

    async def launch_shards(self) -> None:
        """Automatic sharding takes Discord's recommended count, but keeps the configured
        gateway (discord.py would connect to the URL that came with the count, bypassing a
        proxy set in DISCORD_GATEWAY_URL)."""
        if self.shard_count is None and not self.is_closed():
            self.shard_count, _, _ = await self.http.get_bot_gateway()
        await super().launch_shards()

    async def setup_hook(self) -> None:
        if self.probes is not None:  # first, so probes see 'not ready' while the model loads
            await self.probes.start()
        self._app = await build(self.config, self, ssl_context(self.config), self.probes)
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]  # its hook
        await add_commands(self)
        if self.config.sync_commands:
            await self.sync_commands()
        gc_pauses.freeze_after_startup()  # the model and everything imported stay for good

    async def sync_commands(self) -> int:
        commands_synced = await self.tree.sync()
        log.info("registered %d slash commands with Discord", len(commands_synced))
        return len(commands_synced)

    async def _on_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """Errors outside `respond` (option conversion, checks): never leave a member on
        'thinking…'."""
        what = f"/{getattr(interaction.command, 'name', '?')}"
        reply = reply_for(error, what)
        if reply.withdrawn:
            return
        content = localize(reply.content, interaction.locale)
        try:
            if interaction.response.is_done():
                await interaction.followup.send(content, ephemeral=True)
            else:
                await interaction.response.send_message(content, ephemeral=True)
        except discord.HTTPException:
            log.warning("could not tell a member about an error", exc_info=True)

    async def on_ready(self) -> None:
        log.info(
            "logged in as %s (%s) in %d servers",
            self.user,
            self.user and self.user.id,
            len(self.guilds),
        )
        flags = self.application_flags
        if not (flags.gateway_message_content or flags.gateway_message_content_limited):
            log.warning(
                "The Message Content intent looks switched off for this application: reading "
                "text channels aloud needs it. Developer Portal > your app > Bot > Privileged "
                "Gateway Intents > Message Content Intent."
            )

    async def close(self) -> None:
        """Stop speaking, leave voice, stop the model, then close the connection."""
        if self._app is not None:
            await self._app.close()
        await super().close()
        if self.probes is not None:
            await self.probes.close()
