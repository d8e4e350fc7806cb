"""A CDN for attachments over real TLS (a trustme CA, aiohttp), for the services that fetch
a member's file with `bot.services.downloads.read_capped`: each file is served from its
path, its bytes as given (which may be more than the size its attachment declares), and a
file may be held until the test releases it (a slow CDN)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trustme
from aiohttp import web


@dataclass
class Served:
    data: bytes
    held: bool = False  # its download waits for `release`
    reads: int = 0
    started: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


class CDN:
    def __init__(self) -> None:
        self.files: dict[str, Served] = {}
        self.port = 0
        self.client_ssl = ssl.create_default_context()

    def url(self, name: str) -> str:
        return f"https://127.0.0.1:{self.port}/attachments/{name}"

    def serve(self, name: str, data: bytes, *, held: bool = False) -> Served:
        served = Served(data, held)
        self.files[name] = served
        return served

    async def _get(self, request: web.Request) -> web.Response:
        served = self.files[request.match_info["name"]]
        served.reads += 1
        served.started.set()
        if served.held:
            await served.release.wait()
        return web.Response(body=served.data, content_type="application/octet-stream")


@asynccontextmanager
async def running_cdn() -> AsyncIterator[CDN]:
    cdn = CDN()
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(server_ctx)
    ca.configure_trust(cdn.client_ssl)
    app = web.Application()
    app.router.add_get("/attachments/{name}", cdn._get)
    # a download a test left held must not keep the close waiting aiohttp's default 60 s
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ctx)
    await site.start()
    cdn.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield cdn
    finally:
        await runner.cleanup()
