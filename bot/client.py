"""The discord.py bot: intents, endpoints, start-up (engine, cogs) and clean shutdown."""

from __future__ import annotations

import asyncio
import logging
import ssl
from functools import partial

import aiohttp
import discord
import yarl
from discord import app_commands
from discord.ext import commands

from bot.core import gc_pauses, native_memory
from bot.core.config import Settings
from bot.core.supervisor import supervise
from bot.i18n.translate import localize
from bot.ops.endpoints import HttpEndpoints
from bot.ops.metrics import Metrics
from bot.ops.shards import ProcessShards, ShardLoad
from bot.playback.audio_source import ensure_opus
from bot.playback.connection import VoiceConnections, leave_voice
from bot.playback.speakers import SpeechScheduler
from bot.services.autoread import AutoReader
from bot.services.blocks import BlockService
from bot.services.command_translator import CommandTranslator
from bot.services.how_spoken import HowSpokenResolver
from bot.services.join_notices import JoinNotices
from bot.services.replies import reply_for
from bot.services.settings import SettingsService
from bot.services.speech import SpeechService
from bot.services.voices import VoiceService
from bot.services.wording import Wording
from bot.storage.database import Database, database_location
from bot.synthesis.engine import TTSEngine, VoiceError
from bot.synthesis.model_pool import ModelPool
from bot.synthesis.phrase_cache import PhraseCache
from bot.synthesis.voice_library import VoiceLibrary

log = logging.getLogger(__name__)

EXTENSIONS = (
    "cogs.speech",
    "cogs.voices",
    "cogs.settings",
    "cogs.autoread",
    "cogs.moderation",
    "cogs.help",
)
IDLE_CHECK_S = 15.0
SPEAKER_IDLE_S = 3600.0  # a server's speaker is dropped after this long unused, out of voice


def point_discord_at(settings: Settings) -> None:
    """Use the configured REST and gateway URLs (a proxy, or our tests' fake Discord)."""
    discord.http.Route.BASE = settings.discord_api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.discord_gateway_url)


def ssl_context(settings: Settings) -> ssl.SSLContext:
    """The system's trusted CAs plus `DISCORD_CA_FILE`; verification always stays on."""
    context = ssl.create_default_context()
    if settings.discord_ca_file is not None:
        context.load_verify_locations(cafile=str(settings.discord_ca_file))
    return context


async def add_commands(bot: commands.Bot) -> None:
    """The slash commands (the cogs) and their translations: the one tree the bot serves,
    `sync` registers and `doctor` compares with what Discord has."""
    await bot.tree.set_translator(CommandTranslator())
    for extension in EXTENSIONS:
        await bot.load_extension(extension)


class CommandClient(commands.Bot):
    """What `sync` and `doctor` need of Discord: a login over REST and the bot's command
    tree. No gateway session, no model, no database: those are the whole bot's,
    `PocketVoiceBot`."""

    def __init__(self, settings: Settings) -> None:
        point_discord_at(settings)
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=discord.Intents.none(),
            help_command=None,
            connector=aiohttp.TCPConnector(ssl=ssl_context(settings)),
        )

    async def setup_hook(self) -> None:  # runs in login()
        await add_commands(self)

    async def sync_commands(self) -> int:
        """Register the commands with Discord, in place of what was registered."""
        return len(await self.tree.sync())


class PocketVoiceBot(commands.AutoShardedBot):
    """Always sharded: SHARD_COUNT/SHARD_IDS choose this process's shards, unset they are
    Discord's recommended count, all held here. Guilds spread over processes by shard; their
    shared data is in the database (DATABASE_URL)."""

    engine: TTSEngine
    speech: SpeechService
    blocks: BlockService
    voices: VoiceService
    reader: AutoReader
    notices: JoinNotices
    settings_service: SettingsService
    idle_check_s: float = IDLE_CHECK_S

    def __init__(self, settings: Settings) -> None:
        native_memory.limit_arenas()  # before the model's threads start
        point_discord_at(settings)
        intents = discord.Intents.none()
        intents.guilds = True
        intents.voice_states = True
        intents.guild_messages = True
        intents.message_content = True  # privileged: switched on in the Developer Portal
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=intents,
            help_command=None,
            allowed_mentions=discord.AllowedMentions.none(),
            # No message cache: edits and deletions come as raw events with what is needed,
            # so members' messages are not kept in memory (up to 1,000 by default) for nothing.
            max_messages=None,
            connector=aiohttp.TCPConnector(ssl=ssl_context(settings)),
            shard_count=settings.shard_count,
            shard_ids=list(settings.shard_ids) if settings.shard_ids is not None else None,
        )
        self.settings = settings
        self.scheduler: SpeechScheduler | None = None
        self.models: ModelPool | None = None
        self.connections: VoiceConnections | None = None
        self.db: Database | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []  # other supervised work of this bot
        self.metrics: Metrics | None = None
        self.endpoints: HttpEndpoints | None = None

    def not_ready_reason(self) -> str | None:
        """None once the bot can speak; otherwise what it is still waiting for (/healthz)."""
        if self.is_closed():
            return "shutting down"
        if self.scheduler is None:
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
            shard_id = voice_client.guild.shard_id  # type: ignore[attr-defined]
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

    async def _start_endpoints(self) -> None:
        """First thing at start, so probes see 'not ready' while the model loads."""
        port = self.settings.metrics_port
        if port is None:
            return
        self.metrics = Metrics(lambda: self.scheduler, self.process_shards)
        self.metrics.count_log_problems()
        self.endpoints = HttpEndpoints(self.metrics, self.not_ready_reason)
        await self.endpoints.start(self.settings.metrics_host, port)

    async def setup_hook(self) -> None:
        await self._start_endpoints()
        ensure_opus()
        self.engine = await TTSEngine.load(self.settings)
        try:  # load the default voice now, so the first /say answers fast
            await self.engine.voice_state()
        except VoiceError as error:
            await self.engine.close()
            raise VoiceError(f"DEFAULT_VOICE cannot be used: {error}") from error
        location = database_location(self.settings.database_url, self.settings.data_dir)
        self.db = await Database.open(location)
        self.engine.phrases = PhraseCache(
            self.settings.data_dir / "phrases", self.engine.fingerprint
        )
        self.models = ModelPool(
            self.settings,
            self.engine,
            partial(TTSEngine.load, batch=self.engine.rows, background=True),
        )
        self.scheduler = SpeechScheduler(self.engine, models=self.models)
        if self.metrics is not None:
            self.scheduler.stats.listeners.append(self.metrics.record)
        library = VoiceLibrary(
            self.db, self.engine, self.settings.data_dir, deadlines=self.scheduler.deadlines
        )
        library.models = self.models
        await library.reconcile()
        if library.shared:  # other processes delete voices too
            self._tasks.append(supervise(library.follow_deletions, "voice-deletions"))
        self.connections = VoiceConnections(self.scheduler, self.get_guild)
        self._tasks.append(supervise(self.connections.watch, "voice-watchdog"))
        self.blocks = BlockService(self.db)
        self.speech = SpeechService(
            self.scheduler,
            self.connections,
            self.settings.max_text_length,
            HowSpokenResolver(library, self.models.default_language, self.models.languages),
            self.blocks,
            Wording(self.db),
        )
        self.voices = VoiceService(library, self.speech, self.engine)
        self.reader = AutoReader(self.db, self.speech, language=self.settings.tts_language)
        self.blocks.on_block = self.speech.drop_waiting
        self.notices = JoinNotices(self.db, self.speech)
        self.settings_service = SettingsService(
            self.db, self.models.languages, can_load=self.models.check_loadable,
            ssl_context=ssl_context(self.settings), blocks=self.blocks,
        )  # fmt: skip
        self._idle_task = supervise(self._leave_when_idle, "idle-watch")
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]
        await add_commands(self)
        if self.settings.sync_commands:
            await self.sync_commands()
        gc_pauses.freeze_after_startup()  # the model and everything imported stay for good

    async def sync_commands(self) -> int:
        commands_synced = await self.tree.sync()
        log.info("registered %d slash commands with Discord", len(commands_synced))
        return len(commands_synced)

    async def _leave_when_idle(self) -> None:
        """Leave voice in servers that have been quiet for their `idle_timeout`; keep the
        status line (presence) saying how busy the bot is."""
        status = ""
        while True:
            await asyncio.sleep(self.idle_check_s)
            if self.scheduler is not None and self.is_ready():
                line = self.scheduler.snapshot().status_line()
                if line != status:
                    try:
                        await self.change_presence(activity=discord.CustomActivity(name=line))
                        status = line
                    except (discord.HTTPException, ConnectionError, RuntimeError) as error:
                        log.warning("could not update the status line: %s", error)
                connected = {vc.guild.id for vc in self.voice_clients}  # type: ignore[attr-defined]
                await self.scheduler.sweep(SPEAKER_IDLE_S, connected)
                if self.models is not None:
                    await self.models.unload_over_budget()
                await asyncio.to_thread(native_memory.trim)
            for voice_client in list(self.voice_clients):
                guild = voice_client.guild  # type: ignore[attr-defined]
                try:
                    assert self.db is not None
                    timeout = (await self.db.guilds.get(guild.id)).idle_timeout
                    await self.speech.leave_if_idle(guild, timeout)
                except Exception:  # one server's trouble must not stop the watch
                    log.exception("idle check failed in guild %s", guild.id)

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
        if self._idle_task is not None:
            self._idle_task.cancel()
        for task in self._tasks:
            task.cancel()
        if self.connections is not None:
            await self.connections.close()
        if self.scheduler is not None:
            await self.scheduler.close()
        for voice_client in list(self.voice_clients):
            try:
                await leave_voice(voice_client)
            except Exception:  # shutting down: keep closing the rest
                log.debug("voice disconnect failed during shutdown", exc_info=True)
        if self.models is not None:
            await self.models.close()
        if getattr(self, "engine", None) is not None:
            await self.engine.close()
        if self.db is not None:
            db, self.db = self.db, None
            await db.close()
        await super().close()
        if self.endpoints is not None:
            await self.endpoints.close()
        if self.metrics is not None:
            self.metrics.stop_counting()
