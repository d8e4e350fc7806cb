"""The operator's HTTP endpoints (METRICS_PORT): `/metrics` for Prometheus, `/healthz` (ready:
connected to Discord, model loaded) and `/livez` (the event loop answers) for Docker, systemd
or Kubernetes probes. Plain aiohttp, which discord.py already brings."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from bot.core.errors import OperatorError
from bot.ops.metrics import CONTENT_TYPE, Metrics

log = logging.getLogger(__name__)


def healthz(
    ready: Callable[[], str | None],
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """`/healthz`'s handler: 200 "ready", or 503 "not ready: " and what is waited for
    (`ready()` gives None when ready). The bot's endpoints and the speech service answer it."""

    async def handler(request: web.Request) -> web.Response:
        waiting = ready()
        if waiting is None:
            return web.Response(text="ready\n")
        return web.Response(text=f"not ready: {waiting}\n", status=503)

    return handler


class EndpointError(OperatorError, RuntimeError):
    """The HTTP endpoints cannot start (the port is taken): said in one line at start."""


class HttpEndpoints:
    def __init__(self, metrics: Metrics, ready: Callable[[], str | None]) -> None:
        """`ready()` gives None when ready, or what the bot is still waiting for."""
        self.metrics = metrics
        self._ready = ready
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", healthz(self._ready))
        app.router.add_get("/livez", self._livez)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        try:
            await site.start()
        except OSError as error:
            runner, self._runner = self._runner, None
            await runner.cleanup()
            raise EndpointError(
                f"METRICS_PORT: cannot listen on {host}:{port} ({error.strerror or error}). "
                "Another program uses that port: stop it, or choose another METRICS_PORT."
            ) from None
        self.port = self._runner.addresses[0][1]  # the port chosen, when METRICS_PORT is 0
        log.info("metrics and health on http://%s:%d/ (/metrics, /healthz, /livez)", host, port)

    async def close(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.render(), headers={"Content-Type": CONTENT_TYPE})

    async def _livez(self, request: web.Request) -> web.Response:
        return web.Response(text="alive\n")  # answered by the event loop itself
