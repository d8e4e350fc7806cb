"""The composition root: the one place that builds the bot's parts, in order, from the
operator's settings down, each given what it needs when it is made; and the one place that
closes them, in the reverse order.

    await probes.start()  # first: probes see "not ready" while the model loads
    app = await build(settings, client, ssl_context, probes)
    ...
    await app.close()

`PocketVoiceBot.setup_hook` calls `build` (discord.py's loop runs from there), before the
gateway connects, so no event or command ever meets a part that is not built yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import discord

from bot.core.config import Config, check_speech_binds, revealed
from bot.core.supervisor import supervise
from bot.ops.endpoints import HttpEndpoints
from bot.ops.metrics import Metrics
from bot.ops.shards import ProcessShards
from bot.playback.audio_source import ensure_opus
from bot.playback.connection import VoiceConnections, leave_voice
from bot.playback.speakers import Speakers
from bot.services.autoread import AutoReader
from bot.services.blocks import BlockService
from bot.services.dictionary_commands import DictionaryCommands
from bot.services.home_voice import HomeVoice
from bot.services.join_notices import JoinNotices
from bot.services.language_choice import LanguageChoice
from bot.services.member_settings import MemberSettings
from bot.services.settings_commands import SettingsCommands
from bot.services.speak_message import SpeakThisMessage
from bot.services.speech import SpeechService, block_noted
from bot.services.speech_plan import SpeechPlanner
from bot.services.upkeep import IdleUpkeep
from bot.services.voice_control import VoiceControl
from bot.services.voices import VoiceService
from bot.services.wording import Wording
from bot.speech_api.server import Listeners, SpeechServer
from bot.speech_api.streams import StreamRecord
from bot.storage.database import Database, database_location
from bot.synthesis.engine import TTSEngine, UnusableVoiceError
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_pool import ModelPool
from bot.synthesis.voice_library import VoiceLibrary

log = logging.getLogger(__name__)


class Probes:
    """The operator's HTTP endpoints (METRICS_PORT): started before anything else is built,
    so /healthz answers "not ready: loading the model" while the model loads."""

    def __init__(
        self,
        host: str,
        port: int,
        ready: Callable[[], str | None],
        shards: Callable[[], ProcessShards],
    ) -> None:
        """`ready()`: None, or what the bot still waits for."""
        self.host, self.port = host, port
        self._speakers: Speakers | None = None  # the gauges' source, once built
        self.metrics = Metrics(lambda: self._speakers, shards)
        self.endpoints = HttpEndpoints(self.metrics, ready)

    async def start(self) -> None:
        self.metrics.count_log_problems()
        await self.endpoints.start(self.host, self.port)

    def watch(self, speakers: Speakers) -> None:
        """The one late wiring, as the endpoints start before the model loads: from now on
        the speakers' gauges are served, and every utterance is counted."""
        self._speakers = speakers
        speakers.stats.listeners.append(self.metrics.record)

    async def close(self) -> None:
        await self.endpoints.close()
        self.metrics.stop_counting()


@dataclass(frozen=True)
class App:
    """Everything the bot is made of beside its Discord connection, built (`build`)."""

    config: Config  # the operator's
    client: discord.Client  # the Discord side: guilds, voice clients, presence
    db: Database
    engine: TTSEngine  # the default language's model
    models: ModelPool  # every language's models
    speakers: Speakers  # a speaker per server, one deadline scheduler for the models
    library: VoiceLibrary  # members' cloned voices
    connections: VoiceConnections
    blocks: BlockService
    speech: SpeechService
    voice_control: VoiceControl
    voices: VoiceService
    autoread: AutoReader
    speak_message: SpeakThisMessage  # "Speak this message"
    notices: JoinNotices
    settings_commands: SettingsCommands
    dictionary_commands: DictionaryCommands
    member_settings: MemberSettings
    home: HomeVoice  # each server's home voice channel
    upkeep: IdleUpkeep
    tasks: tuple[asyncio.Task[None], ...]  # other supervised work (watchdogs, followers)
    speech_server: SpeechServer | None = None  # SPEECH_PORT: the speech service, beside Discord

    async def close(self) -> None:
        """Stop the speech service, stop speaking, leave voice, stop the models, then close
        the database."""
        if self.speech_server is not None:
            await self.speech_server.close()
        self.upkeep.stop()
        for task in self.tasks:
            task.cancel()
        await self.connections.close()
        await self.speakers.close()
        for voice_client in list(self.client.voice_clients):
            try:
                await leave_voice(voice_client)
            except Exception:  # shutting down: keep closing the rest
                log.debug("voice disconnect failed during shutdown", exc_info=True)
        await self.models.close()
        await self.engine.close()
        await self.db.close()


async def build(
    config: Config,
    client: discord.Client,
    ssl_context: ssl.SSLContext,
    probes: Probes | None = None,
) -> App:
    """Build the whole graph, in order. A part that fails closes those made before it."""
    ensure_opus()
    async with contextlib.AsyncExitStack() as undo:
        bound = None
        if config.speech_port is not None:  # a port taken is said now, not after the model
            check_speech_binds(config)
            bound = await Listeners.bind(config)
            undo.callback(bound.close)
        engine = await load_engine(config, phrases=config.data_dir / "phrases")
        undo.push_async_callback(engine.close)
        try:  # load the default voice now, so the first /say answers fast
            await engine.voice_state()
        except UnusableVoiceError as error:
            raise UnusableVoiceError(f"DEFAULT_VOICE cannot be used: {error}") from error
        db = await Database.open(database_location(revealed(config.database_url), config.data_dir))
        undo.push_async_callback(db.close)
        models = ModelPool(config, engine, partial(load_engine, batch=engine.rows, background=True))
        undo.push_async_callback(models.close)
        speakers = Speakers(engine, models=models)
        undo.push_async_callback(speakers.close)
        if probes is not None:
            probes.watch(speakers)
        library = VoiceLibrary(
            db, engine, config.data_dir, scheduler=speakers.scheduler, models=models
        )
        await library.reconcile()
        connections = VoiceConnections(speakers, client.get_guild)
        planner = SpeechPlanner(
            library.records, library.states, models.default_language, models.languages, models
        )
        # before the block service: a block is noted in the planner (its `blocked_since`)
        blocks = BlockService(
            db,
            on_block=partial(block_noted, speakers, planner),
            on_unblock=planner.noted_unblock,
        )
        speech = SpeechService(
            speakers, connections, config.max_text_length, planner, blocks, Wording(db)
        )
        home = HomeVoice(db, connections)
        voice_control = VoiceControl(speakers, connections, blocks)
        language_choice = LanguageChoice(models.languages, can_load=models.check_loadable)
        tasks = []
        if library.shared:  # other processes delete voices too
            tasks.append(supervise(library.follow_deletions, "voice-deletions"))
        tasks.append(supervise(connections.watch, "voice-watchdog"))
        speech_server = None
        if config.speech_port is not None:  # the speech service shares the scheduler
            # a row for Discord, whatever the service asks
            speakers.scheduler.choice.reserved_rows = 1
            metrics = probes.metrics if probes is not None else None

            def counted(record: StreamRecord) -> None:
                if metrics is not None:
                    metrics.record_stream(record.source, record.first_audio_s, record.outcome)

            speech_server = SpeechServer(
                config, speakers.scheduler, models, on_end=counted, planner=speech.planner
            )
            await speech_server.start(bound)
            undo.push_async_callback(speech_server.close)
        autoread = AutoReader(
            db,
            speech.planner,
            speakers,
            speech.wording,
            connections,
            language=config.tts_language,
        )
        app = App(
            config=config,
            client=client,
            db=db,
            engine=engine,
            models=models,
            speakers=speakers,
            library=library,
            connections=connections,
            blocks=blocks,
            speech=speech,
            voice_control=voice_control,
            voices=VoiceService(
                library, speech, engine, ssl_context, planner=speech.planner, blocks=blocks
            ),
            autoread=autoread,
            speak_message=SpeakThisMessage(
                db, speech, speech.planner, blocks, autoread.words, autoread.rates
            ),
            notices=JoinNotices(db, speech.planner, speech.wording, speakers),
            settings_commands=SettingsCommands(db, language_choice, on_home_voice=home.settle),
            dictionary_commands=DictionaryCommands(db, models.languages, ssl_context),
            member_settings=MemberSettings(db, language_choice, blocks=blocks),
            home=home,
            upkeep=IdleUpkeep(client, speakers, models, db, voice_control),
            tasks=tuple(tasks),
            speech_server=speech_server,
        )
        app.upkeep.start()
        undo.pop_all()  # built: from now on `App.close` closes it all
        return app
    raise AssertionError("unreachable")  # the stack re-raises whatever stopped the build
