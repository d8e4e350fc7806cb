"""The speech service's servers: HTTP (the page and OpenAI's API) on SPEECH_HOST:SPEECH_PORT,
and Wyoming on WYOMING_PORT when set; started and closed together, on the scheduler given
(the bot's own when it runs inside the bot)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from bot.core.config import Config, check_speech_binds
from bot.core.errors import OperatorError
from bot.ops.endpoints import healthz
from bot.services.speech_plan import SpeechPlanner
from bot.speech_api.connections import (
    HEADER_S,
    IDLE_S,
    ConnectionGate,
    Listener,
    bound_sends,
    mark_asked,
)
from bot.speech_api.limits import ClientLimits
from bot.speech_api.openai_api import MAX_BODY, Handler, Keys, OpenAISpeech, refusals
from bot.speech_api.page import Page
from bot.speech_api.streams import SpeechStreams, StreamRecord
from bot.speech_api.voices import RequestClips, ServiceVoices
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
    """`./run.sh serve`: its ports bound, the model, its scheduler and the service, until
    SIGINT or SIGTERM."""
    check_speech_binds(config)  # before the model's seconds of loading
    bound = await Listeners.bind(config)  # a port taken is said now, not after the model
    try:
        await serve_bound(config, bound)
    finally:
        bound.close()


async def serve_bound(config: Config, bound: Listeners) -> None:
    """`serve` once its ports are bound: the model loads, then they are served."""
    from functools import partial

    from bot.synthesis.engine import UnusableVoiceError

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
            await server.start(bound)
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


def taken(host: str, port: int, error: OSError, setting: str, what: str = "") -> SpeechServiceError:
    """One line for the operator (asyncio's own message repeats the address)."""
    reason = os.strerror(error.errno) if error.errno else str(error)
    return SpeechServiceError(
        f"cannot listen on {host}:{port}{what} ({reason}): set {setting} to a free port"
    )


@dataclass
class Listeners:
    """`serve`'s ports, bound first: a port another program holds is said in one line at
    once, not after the tens of seconds the model takes to load."""

    http: Listener
    wyoming: Listener | None = None

    @classmethod
    async def bind(cls, config: Config) -> Listeners:
        bound = cls(Listener())
        host, port = config.speech_host, port_of(config)
        try:
            await bound.http.bind(host, port)
        except OSError as error:
            raise taken(host, port, error, "SPEECH_PORT") from None
        if config.wyoming_port is not None:
            bound.wyoming = Listener()
            host, port = config.wyoming_host, config.wyoming_port
            try:
                await bound.wyoming.bind(host, port)
            except OSError as error:
                bound.close()
                raise taken(host, port, error, "WYOMING_PORT", " for Wyoming") from None
        return bound

    def close(self) -> None:
        self.http.close()
        if self.wyoming is not None:
            self.wyoming.close()


def port_of(config: Config) -> int:
    return DEFAULT_PORT if config.speech_port is None else config.speech_port


class SpeechServer:
    def __init__(
        self,
        config: Config,
        scheduler: DeadlineScheduler,
        models: ModelPool,
        on_end: Callable[[StreamRecord], None] | None = None,
        planner: SpeechPlanner | None = None,
    ) -> None:
        """`planner`: the bot's, beside Discord (one planner: the same model-load limits and
        failures for both); alone (`serve`), one of the service's own."""
        check_speech_binds(config)
        self.config = config
        self.host = config.speech_host
        self.port = port_of(config)
        limits = ClientLimits(config.speech_streams_per_key, config.speech_requests_per_minute)
        if planner is None:
            planner = SpeechPlanner(None, None, models.default_language, models.languages, models)
        self.streams = SpeechStreams(scheduler, planner, limits, config.speech_queue, on_end)
        self.voices = ServiceVoices(config.data_dir, models.default_language)
        self.keys = Keys(config.speech_api_keys)
        self.gate = ConnectionGate(config.speech_connections)
        self.app = web.Application(client_max_size=MAX_BODY, middlewares=[asked, refusals])
        # a voice from a request's own clip, where the default model can clone
        self.clips = RequestClips(
            config.speech_clips, lambda: models.default.has_voice_cloning, models.forget_voice
        )
        OpenAISpeech(self.streams, self.voices, self.keys, self.clips).routes(self.app)
        Page().routes(self.app)
        # for Docker's, systemd's or a balancer's probes: no key, nothing in it but the state
        self.waiting: str | None = "starting"  # what /healthz says is awaited; None: ready
        self.app.router.add_get("/healthz", healthz(lambda: self.waiting))
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.Server | None = None
        self._wyoming: object | None = None
        self.wyoming_port = config.wyoming_port  # (the port given, once started on port 0)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    async def start(self, bound: Listeners | None = None) -> None:
        """Listen on the ports (`bound`: already bound by `serve`, before the model)."""
        # aiohttp's keep-alive timeout closes a connection idle between requests (3,630 s
        # by default); the gate caps them and closes one with no request in HEADER_S
        runner = web.AppRunner(
            self.app, access_log=None, shutdown_timeout=2.0, keepalive_timeout=IDLE_S
        )
        await runner.setup()
        assert runner.server is not None
        loop = asyncio.get_running_loop()
        factory = self.gate.factory(runner.server, HEADER_S)
        try:
            if bound is not None:
                self._listener = await bound.http.serve(factory)
            else:
                self._listener = await loop.create_server(factory, self.host, self.port)
        except OSError as error:
            await runner.cleanup()
            raise taken(self.host, self.port, error, "SPEECH_PORT") from None
        bound_sends(self._listener)
        self._runner = runner
        if self.port == 0:  # (a free port was asked for: the one given)
            self.port = int(self._listener.sockets[0].getsockname()[1])
        if self.config.wyoming_port is not None:
            from bot.speech_api.wyoming_server import WyomingServer

            wyoming = WyomingServer(self.streams, self.voices, self.gate)
            host, port = self.config.wyoming_host, self.config.wyoming_port
            try:
                await wyoming.start(host, port, bound.wyoming if bound is not None else None)
            except OSError as error:
                await self.close()
                raise taken(host, port, error, "WYOMING_PORT", " for Wyoming") from None
            self._wyoming = wyoming
            self.wyoming_port = wyoming.port
        self.waiting = None
        log.info("speech service at %s", self.url)

    async def close(self) -> None:
        from bot.speech_api.wyoming_server import WyomingServer

        self.waiting = "closing"
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
        self.clips.close()


@web.middleware
async def asked(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A whole request came: its connection's header timeout ends."""
    mark_asked(request.transport)
    return await handler(request)
