"""The web page at `/`: static files shipped in the package (no CDN), served as they are."""

from __future__ import annotations

from importlib.resources import files

from aiohttp import web

PAGE_FILES = {
    "page.js": "text/javascript",
    "page.css": "text/css",
}
SECURITY_HEADERS = {
    # everything from this server; the page fetches only its own API
    "Content-Security-Policy": "default-src 'self'; media-src 'self' blob:; object-src 'none'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


def _read(name: str) -> bytes:
    return files("bot.speech_api").joinpath("page", name).read_bytes()


class Page:
    def __init__(self) -> None:
        self._index = _read("index.html")
        self._files = {name: _read(name) for name in PAGE_FILES}

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/", self.index)
        app.router.add_get("/page/{name}", self.file)

    async def index(self, request: web.Request) -> web.Response:
        return web.Response(
            body=self._index, content_type="text/html", charset="utf-8", headers=SECURITY_HEADERS
        )

    async def file(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self._files:
            raise web.HTTPNotFound()
        return web.Response(
            body=self._files[name],
            content_type=PAGE_FILES[name],
            charset="utf-8",
            headers=SECURITY_HEADERS,
        )
