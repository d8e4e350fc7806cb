"""The speech service's servers: HTTP (the page and OpenAI's API) on SPEECH_HOST:SPEECH_PORT,
and Wyoming on WYOMING_PORT when set; started and closed together, on the scheduler given
(the bot's own when it runs inside the bot)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable

from aiohttp import web

from bot.core.config import Config, check_speech_binds
from bot.core.errors import OperatorError
from bot.speech_api.connections import (
    HEADER_S,
    IDLE_S,
    ConnectionGate,
    bound_sends,
    mark_asked,
)
from bot.speech_api.limits import ClientLimits
from bot.speech_api.openai_api import MAX_BODY, Handler, Keys, OpenAISpeech, refusals
from bot.speech_api.page import Page
from bot.speech_api.streams import SpeechStreams, StreamRecord
from bot.speech_api.voices import ServiceVoices
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_pool import ModelPool
from bot.synthesis.scheduler import DeadlineScheduler

log = logging.getLogger(__name__)

DEFAULT_PORT = 8000


def standalone_scheduler(engine: TTSEngine, models: ModelPool) -> DeadlineScheduler:
    """The scheduler of `serve`, made as the bot's speakers make theirs, with no rows kept
    for Discord (there is none)."""
    scheduler = DeadlineScheduler(
        models.stream,
        workers=engine.workers,
        spare_lanes=engine.spare_lanes,
        run_call=models.call,
        capacity=engine.capacity if engine.batched else None,
    )
    scheduler.start()
    return scheduler


async def serve(config: Config) -> None:
    """`./run.sh serve`: the model, its scheduler and the service, until SIGINT or SIGTERM."""
    from functools import partial

    from bot.synthesis.engine import UnusableVoiceError

    check_speech_binds(config)  # before the model's seconds of loading
    engine = await load_engine(config, phrases=config.data_dir / "phrases")
    try:
        try:
            await engine.voice_state()
        except UnusableVoiceError as error:
            raise UnusableVoiceError(f"DEFAULT_VOICE cannot be used: {error}") from error
        models = ModelPool(config, engine, partial(load_engine, batch=engine.rows, background=True))
        scheduler = standalone_scheduler(engine, models)
        server = SpeechServer(config, scheduler, models)
        try:
            await server.start()
            print(f"PocketVoice speaks at {server.url}/ (Ctrl+C stops it)", flush=True)
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(signum, stop.set)
            await stop.wait()
        finally:
            await server.close()
            await scheduler.close()
            await models.close()
    finally:
        await engine.close()


class SpeechServiceError(OperatorError):
    """The service's port is taken (or not ours to take)."""

    label = "Speech service"


class SpeechServer:
    def __init__(
        self,
        config: Config,
        scheduler: DeadlineScheduler,
        models: ModelPool,
        on_end: Callable[[StreamRecord], None] | None = None,
    ) -> None:
        check_speech_binds(config)
        self.config = config
        self.host = config.speech_host
        self.port = DEFAULT_PORT if config.speech_port is None else config.speech_port
        limits = ClientLimits(config.speech_streams_per_key, config.speech_requests_per_minute)
        self.streams = SpeechStreams(scheduler, models, limits, config.speech_queue, on_end)
        self.voices = ServiceVoices(config.data_dir, models.default_language)
        self.keys = Keys(config.speech_api_keys)
        self.gate = ConnectionGate(config.speech_connections)
        self.app = web.Application(client_max_size=MAX_BODY, middlewares=[asked, refusals])
        OpenAISpeech(self.streams, self.voices, self.keys).routes(self.app)
        Page().routes(self.app)
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self._wyoming: object | None = None
        self.wyoming_port = config.wyoming_port  # (the port given, once started on port 0)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        # aiohttp's keep-alive timeout closes a connection idle between requests (3,630 s
        # by default); the gate caps them and closes one with no request in HEADER_S
        runner = web.AppRunner(
            self.app, access_log=None, shutdown_timeout=2.0, keepalive_timeout=IDLE_S
        )
        await runner.setup()
        assert runner.server is not None
        loop = asyncio.get_running_loop()
        try:
            self._listener = await loop.create_server(
                self.gate.factory(runner.server, HEADER_S), self.host, self.port
            )
        except OSError as error:
            await runner.cleanup()
            raise SpeechServiceError(
                f"cannot listen on {self.host}:{self.port} ({error.strerror or error}): "
                "set SPEECH_PORT to a free port"
            ) from None
        bound_sends(self._listener)
        self._runner = runner
        if self.port == 0:  # (a free port was asked for: the one given)
            self.port = int(self._listener.sockets[0].getsockname()[1])
        if self.config.wyoming_port is not None:
            from bot.speech_api.wyoming_server import WyomingServer

            wyoming = WyomingServer(self.streams, self.voices, self.gate)
            try:
                await wyoming.start(self.config.wyoming_host, self.config.wyoming_port)
            except OSError as error:
                await self.close()
                raise SpeechServiceError(
                    f"cannot listen on {self.config.wyoming_host}:{self.config.wyoming_port} "
                    f"for Wyoming ({error.strerror or error}): set WYOMING_PORT to a free port"
                ) from None
            self._wyoming = wyoming
            self.wyoming_port = wyoming.port
        log.info("speech service at %s", self.url)

    async def close(self) -> None:
        from bot.speech_api.wyoming_server import WyomingServer

        if isinstance(self._wyoming, WyomingServer):
            await self._wyoming.close()
        self._wyoming = None
        if self._listener is not None:
            self._listener.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._listener.wait_closed(), 2)
            self._listener = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.gate.close()
        self.streams.stalled.close()


@web.middleware
async def asked(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A whole request came: its connection's header timeout ends."""
    mark_asked(request.transport)
    return await handler(request)
