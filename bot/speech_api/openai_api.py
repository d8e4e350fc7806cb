"""OpenAI's speech API as its SDKs call it: `POST /v1/audio/speech` (streamed as the audio
is made, or as server-sent events), `GET /v1/models`, `GET /v1/audio/voices`; and the two
listings Open WebUI asks an OpenAI-compatible server for, `GET /v1/audio/voices` (its
`voices`) and `GET /v1/audio/models` (`models`), which it sends without a key.

Every input is bounded before it is decoded: the body's size (read no further than
MAX_BODY), then the text's length (MAX_INPUT characters, as OpenAI).
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from aiohttp import BodyPartReader, web

from bot.core.config import is_loopback
from bot.speech_api.connections import BODY_S, WRITE_S
from bot.speech_api.encoders import MEDIA_TYPES, can_encode, encoder_for
from bot.speech_api.errors import (
    BadRequest,
    Forbidden,
    LengthRequired,
    ServiceRefusal,
    TooLarge,
    TooSlow,
    Unauthorized,
)
from bot.speech_api.limits import client_address
from bot.speech_api.streams import MAX_INPUT, ClientStalled, ServiceStream, SpeechStreams
from bot.speech_api.voices import (
    CLIP,
    CLIP_FIELDS,
    CLIP_LIMITS,
    RequestClips,
    ServiceVoice,
    ServiceVoices,
)

log = logging.getLogger(__name__)

MAX_BODY = 64 * 1024  # bytes: 4,096 characters of UTF-8 (4 bytes at most each) and the rest
# a form with a voice clip: the clip and the fields beside it, within FORM_S
MAX_FORM = CLIP_LIMITS.max_bytes + MAX_BODY
MAX_PARTS = 16
FORM_S = 30.0
MODEL = "pocket-tts"
OPENAI_MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")  # clients' names for the default model
STREAM_FORMATS = ("audio", "sse")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def refusal_response(error: ServiceRefusal) -> web.Response:
    headers = {}
    if error.retry_after is not None:
        headers["Retry-After"] = str(math.ceil(error.retry_after))
    return web.json_response(error.body(), status=error.status, headers=headers)


class Keys:
    """SPEECH_API_KEYS: `Authorization: Bearer KEY`; none: every client of this machine."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys

    def client(self, request: web.Request) -> str:
        """Who asks, for the limits: the key's number, or the address without keys. Without
        keys the service listens on loopback only, and answers only a request made to a
        loopback name (a web page elsewhere that renames itself to 127.0.0.1, DNS
        rebinding, is refused)."""
        if not self.keys:
            if not is_loopback(request.url.host or ""):
                raise Unauthorized(
                    "Without SPEECH_API_KEYS this service answers requests to 127.0.0.1 or "
                    "localhost only.",
                    code="invalid_host",
                )
            return client_address(request.remote)
        given = request.headers.get("Authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() == "bearer":
            for number, key in enumerate(self.keys):
                if hmac.compare_digest(token.strip().encode(), key.encode()):
                    return f"key{number + 1}"
        raise Unauthorized(
            "Incorrect API key provided: send one of SPEECH_API_KEYS as "
            "'Authorization: Bearer KEY'.",
            code="invalid_api_key",
        )

    def may_list(self, request: web.Request) -> bool:
        """Whether a listing (voices, models) may be answered, and whether the client holds
        a key where keys are needed (False: answered, but its speech will be refused).
        Open WebUI asks for the listings without its key (`requests.get` with no headers),
        so they are answered without one; a key that is sent must be right, and without
        keys the request must still be made to this machine (the Host check)."""
        if not self.keys or "Authorization" in request.headers:
            self.client(request)
            return True
        return False


async def read_json(request: web.Request) -> dict[str, Any]:
    """The body as a JSON object, read no further than MAX_BODY bytes. Only as JSON: a page
    elsewhere cannot send that without the browser asking first (CORS), which is never
    granted."""
    if request.content_type != "application/json":
        raise BadRequest("The body must be JSON (Content-Type: application/json).")
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise TooLarge(f"The request body is over {MAX_BODY} bytes.", code="body_too_large")
    raw = bytearray()  # (a body may come in several pieces: read to its end)
    try:
        async with asyncio.timeout(BODY_S):
            while len(raw) <= MAX_BODY and (
                piece := await request.content.read(MAX_BODY + 1 - len(raw))
            ):
                raw += piece
    except TimeoutError:
        raise TooSlow(f"The body did not come within {BODY_S:g} s.", code="timeout") from None
    if len(raw) > MAX_BODY:
        raise TooLarge(f"The request body is over {MAX_BODY} bytes.", code="body_too_large")
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # (nested deeper than Python goes)
        raise BadRequest("The body must be a JSON object.") from None
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object.")
    return body


def from_another_site(request: web.Request) -> bool:
    """Whether a browser sent this for a page of another site. Browsers say so themselves
    (Sec-Fetch-Site), whatever a proxy in front did to the scheme or the Host; older ones
    only by Origin, whose host is then compared. Clients that are no browser send neither."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = request.headers.get("Origin")
    return origin is not None and urlsplit(origin).netloc != request.host


async def read_form(request: web.Request) -> tuple[dict[str, Any], bytes | None]:
    """A multipart form's fields and its voice clip (None: none sent), as pocket-tts's own
    server and other OpenAI-compatible servers take a reference clip: the body no longer than
    MAX_FORM (its length said first), the fields MAX_BODY together, the clip its own bound,
    all within FORM_S. A browser sends a form to another site without asking first (no
    CORS), so a form from a page of another origin is refused."""
    if from_another_site(request):
        raise Forbidden("A form from another site's page is refused.", code="cross_origin")
    if request.content_length is None:
        raise LengthRequired("A form needs its Content-Length.", code="length_required")
    if request.content_length > MAX_FORM:
        raise TooLarge(
            f"The request body is over {MAX_FORM} bytes (a clip of at most "
            f"{CLIP_LIMITS.max_bytes // (1024 * 1024)} MB).",
            code="body_too_large",
        )
    fields: dict[str, Any] = {}
    clip: bytes | None = None
    text_left = MAX_BODY
    try:
        async with asyncio.timeout(FORM_S):
            reader = await request.multipart()
            for _ in range(MAX_PARTS):
                part = await reader.next()
                if part is None:
                    return fields, clip
                if not isinstance(part, BodyPartReader) or not part.name:
                    raise BadRequest("A form's parts must be named fields.")
                most = CLIP_LIMITS.max_bytes if part.name in CLIP_FIELDS else text_left
                data = bytearray()
                while chunk := await part.read_chunk(65536):
                    data += chunk
                    if len(data) > most:
                        raise TooLarge(
                            f"The form's {part.name[:40]!r} is too large.",
                            param=part.name[:40],
                            code="body_too_large",
                        )
                if part.name in CLIP_FIELDS:
                    clip = bytes(data)
                else:
                    text_left -= len(data)
                    fields[part.name] = data.decode("utf-8", errors="replace")
    except TimeoutError:
        raise TooSlow(f"The body did not come within {FORM_S:g} s.", code="timeout") from None
    except ValueError:  # (aiohttp's reader: a form that is not one)
        raise BadRequest("The body is not a multipart form.") from None
    raise BadRequest(f"A form has at most {MAX_PARTS} parts.")


def form_number(fields: dict[str, Any], name: str) -> None:
    """A form's number field (text, as forms send everything) as the number JSON sends."""
    if name in fields:
        try:
            fields[name] = float(fields[name])
        except ValueError:
            raise BadRequest(
                f"'{name}' must be a float.", param=name, code="invalid_type"
            ) from None


def field(body: dict[str, Any], name: str, kind: type, default: Any = None) -> Any:
    value = body.get(name, default)
    if value is None and default is None:
        raise BadRequest(f"'{name}' is required.", param=name, code="missing_required_parameter")
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise BadRequest(f"'{name}' must be a {kind.__name__}.", param=name, code="invalid_type")
    return value


@dataclass(frozen=True)
class Asked:
    """A speech request's fields, checked."""

    text: str
    voice: ServiceVoice
    language: str
    speed: float
    model: str
    response_format: str
    stream_format: str


class OpenAISpeech:
    def __init__(
        self, streams: SpeechStreams, voices: ServiceVoices, keys: Keys, clips: RequestClips
    ) -> None:
        self.streams, self.voices, self.keys, self.clips = streams, voices, keys, clips

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/audio/speech", self.speech)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/v1/audio/voices", self.list_voices)
        app.router.add_get("/v1/audio/models", self.audio_models)

    async def models(self, request: web.Request) -> web.Response:
        self.keys.client(request)
        names = (MODEL, *OPENAI_MODELS)
        data = [
            {"id": n, "object": "model", "created": 0, "owned_by": "pocketvoice"} for n in names
        ]
        return web.json_response({"object": "list", "data": data})

    async def audio_models(self, request: web.Request) -> web.Response:
        """Open WebUI's list of an OpenAI-compatible server's speech models."""
        self.keys.may_list(request)
        models = [{"id": MODEL, "name": "Pocket TTS"}]
        models += [{"id": n, "name": f"{n} (Pocket TTS)"} for n in OPENAI_MODELS]
        return web.json_response({"models": models})

    async def list_voices(self, request: web.Request) -> web.Response:
        """The voices, as `data` (OpenAI's list shape, with kinds and languages) and as
        `voices` (Open WebUI reads `{"voices": [{"id", "name"}]}`)."""
        keyed = self.keys.may_list(request)
        languages = list(self.streams.languages)
        voices = [
            {
                "id": v.name,
                "name": v.name,
                "kind": v.kind,
                "recorded_in": v.language,
                "languages": languages,
            }
            for v in self.voices.all()
        ]
        formats = [f for f in MEDIA_TYPES if can_encode(f)]
        return web.json_response(
            {
                "object": "list",
                "data": voices,
                "voices": voices,
                "key_required": not keyed,
                "voice_clips": self.clips.available(),  # a clip may come with a request
                "languages": languages,
                "default_language": self.streams.default_language,
                "response_formats": formats,
            }
        )

    async def speech(self, request: web.Request) -> web.StreamResponse:
        client = self.keys.client(request)
        clip: bytes | None = None
        if request.content_type == "multipart/form-data":  # (with a voice clip)
            self.clips.check()  # before a byte of it is read
            body, clip = await read_form(request)
            form_number(body, "speed")
        else:
            body = await read_json(request)
        asked = self.asked(body, with_clip=clip is not None)
        if clip is None:
            return await self._speak(request, client, asked)
        # the request counted against the client's limits before its clip is decoded
        self.streams.count_request(client)
        asked = replace(asked, voice=await self.clips.voice(clip))
        try:
            return await self._speak(request, client, asked, counted=False)
        finally:
            await self.clips.done(asked.voice)

    def asked(self, body: dict[str, Any], *, with_clip: bool) -> Asked:
        """The request's fields, checked (`with_clip`: the voice is the clip's, made later)."""
        text = field(body, "input", str)
        if len(text) > MAX_INPUT:
            raise TooLarge(
                f"'input' is {len(text):,} characters long; the most is {MAX_INPUT:,}.",
                param="input",
                code="string_above_max_length",
            )
        model = str(field(body, "model", str, MODEL))[:100]
        if with_clip:
            voice = ServiceVoice(CLIP, None, CLIP)  # (a stand-in until the clip is decoded)
        else:
            named = body.get("voice")
            if isinstance(named, dict):  # the SDK's newer shape: {"id": "..."}
                named = named.get("id")
            voice = self.voices.resolve(field({"voice": named}, "voice", str))
        response_format = field(body, "response_format", str, "mp3")
        if response_format not in MEDIA_TYPES:
            raise BadRequest(
                f"response_format must be one of {', '.join(MEDIA_TYPES)}.",
                param="response_format",
                code="invalid_value",
            )
        if not can_encode(response_format):
            raise BadRequest(
                f"This server's libsndfile cannot encode {response_format}; ask for "
                "wav, pcm, opus or flac.",
                param="response_format",
                code="unsupported_format",
            )
        stream_format = field(body, "stream_format", str, "audio")
        if stream_format not in STREAM_FORMATS:
            raise BadRequest(
                "stream_format must be audio or sse.", param="stream_format", code="invalid_value"
            )
        speed = field(body, "speed", float, 1.0)
        language = self.streams.check_language(field(body, "language", str, ""))
        return Asked(text, voice, language, speed, model, response_format, stream_format)

    async def _speak(
        self, request: web.Request, client: str, asked: Asked, *, counted: bool = True
    ) -> web.StreamResponse:
        voice, language, model = asked.voice, asked.language, asked.model
        response_format = asked.response_format
        stream = await self.streams.open(
            asked.text,
            voice,
            language=language,
            speed=asked.speed,
            client=client,
            source="api",
            counted=counted,
            on_stall=partial(abort, request),
        )
        try:
            await stream.first(voice)  # what fails before the first audio: an error, no 200
            headers = {
                "X-Model": model,
                "X-Voice": voice.name,
                "X-Language": language,
                "X-Speed-Applied": f"{stream.speed:g}",
                "Cache-Control": "no-store",
            }
            if asked.stream_format == "sse":
                return await self._sse(request, stream, response_format, headers)
            return await self._audio(request, stream, response_format, headers)
        finally:
            stream.close()

    async def _audio(
        self,
        request: web.Request,
        stream: ServiceStream,
        response_format: str,
        headers: dict[str, str],
    ) -> web.StreamResponse:
        media = MEDIA_TYPES[response_format]
        response = web.StreamResponse(headers={**headers, "Content-Type": media})
        await response.prepare(request)
        encoder = encoder_for(response_format)
        light = response_format in ("pcm", "wav")  # a copy and a cast: on the loop
        try:
            async for chunk in stream:
                data = (
                    encoder.push(chunk) if light else await asyncio.to_thread(encoder.push, chunk)
                )
                if data:
                    await taken(response.write(data), stream)
            while tail := await asyncio.to_thread(encoder.finish):
                await taken(response.write(tail), stream)
            await taken(response.write_eof(), stream)
        except ConnectionError:  # it left, or stopped reading: nothing more to say to it
            return response
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the headers are gone: cut the stream, never end it whole
            return broken(request, response, error)
        finally:
            encoder.close()
        return response

    async def _sse(
        self,
        request: web.Request,
        stream: ServiceStream,
        response_format: str,
        headers: dict[str, str],
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={**headers, "Content-Type": "text/event-stream"})
        await response.prepare(request)
        encoder = encoder_for(response_format)

        async def send(event: dict[str, Any]) -> None:
            await taken(response.write(f"data: {json.dumps(event)}\n\n".encode()), stream)

        try:
            async for chunk in stream:
                data = await asyncio.to_thread(encoder.push, chunk)
                if data:
                    audio = base64.b64encode(data).decode()
                    await send({"type": "speech.audio.delta", "audio": audio})
            while tail := await asyncio.to_thread(encoder.finish):
                await send({"type": "speech.audio.delta", "audio": base64.b64encode(tail).decode()})
            usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
            await send({"type": "speech.audio.done", "usage": usage})
            await taken(response.write_eof(), stream)
        except ConnectionError:  # it left, or stopped reading: nothing more to say to it
            return response
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return broken(request, response, error)
        finally:
            encoder.close()
        return response


async def taken(write: Awaitable[None], stream: ServiceStream) -> None:
    """A write the client takes within WRITE_S; else it stopped reading (a stream paused
    or ended, its last audio unread): the stream stops and its connection is dropped."""
    try:
        async with asyncio.timeout(WRITE_S):
            await write
    except TimeoutError:
        stream.stalled()
        raise ClientStalled("the client stopped reading") from None


def abort(request: web.Request) -> None:
    """Drop the connection now: closing it would wait until the client read what is
    buffered for it, which a client that stopped reading never does."""
    if request.transport is not None:
        request.transport.abort()


def broken(
    request: web.Request, response: web.StreamResponse, error: Exception
) -> web.StreamResponse:
    """A stream that failed after its headers: logged, and its connection closed without
    the chunked body's end, so the client sees it broken, not short."""
    log.warning("a speech stream failed: %s", error)
    if request.transport is not None:
        request.transport.close()
    return response


@web.middleware
async def refusals(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A refusal as OpenAI shapes errors; anything unexpected logged, and a 500 in that shape."""
    try:
        return await handler(request)
    except ServiceRefusal as error:
        return refusal_response(error)
    except web.HTTPException:
        raise
    except (ConnectionResetError, asyncio.CancelledError):
        raise
    except Exception:
        log.exception("a speech request failed")
        body = {
            "error": {
                "message": "The speech could not be made.",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        }
        return web.json_response(body, status=500)
