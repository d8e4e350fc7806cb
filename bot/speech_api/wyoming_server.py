"""Home Assistant's Wyoming protocol (WYOMING_PORT), with the `wyoming` package's events:
`describe` answers the voices and languages; `synthesize`, and the streaming
`synthesize-start` / `synthesize-chunk` / `synthesize-stop`, answer `audio-start`,
`audio-chunk` as the audio is made, `audio-stop` (and `synthesize-stopped` after a stream).

Wyoming has no keys: the port is for this machine, or for Home Assistant behind a firewall
(WYOMING_OPEN). Every event is bounded before it is decoded (`BoundedReader`), and so is
the text a stream gathers (MAX_INPUT characters).

A refusal or a failure is one `error` event, then the end of the connection, as wyoming-piper
does: Home Assistant reads a speech until `audio-stop` (or, streaming, `synthesize-stopped`)
and passes over an `error`, so only the connection's end stops its wait; and nothing it sent
after (the rest of a stream, the compatibility `synthesize` that repeats the whole text) is
then spoken or answered with a second error. A stream is one request against the client's
limits, however many sentences it speaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, TtsProgram, TtsVoice
from wyoming.server import AsyncEventHandler
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
)

from bot.speech_api.connections import (
    HEADER_S,
    IDLE_S,
    WRITE_S,
    ConnectionGate,
    Listener,
    bound_sends,
    mark_asked,
)
from bot.speech_api.encoders import pcm16
from bot.speech_api.errors import ServiceRefusal
from bot.speech_api.limits import client_address
from bot.speech_api.streams import (
    MAX_INPUT,
    NOTHING_TO_SAY,
    ClientStalled,
    ServiceStream,
    SpeechStreams,
)
from bot.speech_api.voices import DEFAULT, ServiceVoice, ServiceVoices
from bot.synthesis.audio_files import MODEL_RATE
from bot.text.language_detection import lingua_language

log = logging.getLogger(__name__)

MAX_LINE = 64 * 1024  # an event's JSON header line
MAX_DATA = 64 * 1024  # its data (the text is at most MAX_INPUT characters)
MAX_PAYLOAD = 0  # a TTS server is sent no audio: any payload is refused
DRAIN_S = 10.0  # after an error: how long what the client still sends is read and dropped
MAX_DRAIN = 1024 * 1024  # and how much of it
# what wyoming's reader raises on a line that is JSON but not an event (`[1]`, `{}`, a length
# that is no number, nesting deeper than Python goes); its handler catches everything else
NOT_AN_EVENT = (AttributeError, KeyError, TypeError, ValueError, RecursionError)
SENTENCE_END = re.compile(r"(?<=[.!?…;:])\s+")
ATTRIBUTION = Attribution(name="Kyutai", url="https://github.com/kyutai-labs/pocket-tts")


def language_code(name: str) -> str:
    """Home Assistant's language code ("en") for a pocket-tts language ("english")."""
    language = lingua_language(name)
    return language.iso_code_639_1.name.lower() if language is not None else name


class BoundedReader:
    """The stream reader as wyoming reads it, refusing data or a payload over the bounds
    before reading it (wyoming would read any length a header names), and waiting for an
    event no longer than HEADER_S for the first, IDLE_S for the next (wyoming waits
    forever): a connection that says nothing ends, as if closed."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        on_silent: Callable[[], None] | None = None,
        on_first: Callable[[], None] | None = None,
    ) -> None:
        self._reader = reader
        self._wait_s = HEADER_S
        self._on_silent = on_silent  # no first event came (counted for the log)
        self._on_first = on_first  # the first event's line came (the gate's `asked`)

    async def readline(self) -> bytes:
        try:
            async with asyncio.timeout(self._wait_s):
                line = await self._reader.readline()  # bounded by the limit (MAX_LINE)
        except TimeoutError:
            if self._wait_s == HEADER_S and self._on_silent is not None:
                self._on_silent()
            return b""  # (wyoming reads it as the connection's end)
        if self._wait_s == HEADER_S and line and self._on_first is not None:
            self._on_first()
        self._wait_s = IDLE_S
        return line

    async def readexactly(self, count: int) -> bytes:
        if count > MAX_DATA:
            raise ValueError(f"an event of {count} bytes is over the bound")
        try:
            async with asyncio.timeout(IDLE_S):
                return await self._reader.readexactly(count)
        except TimeoutError:
            raise ValueError("an event's data did not come") from None

    def feed_eof(self) -> None:
        self._reader.feed_eof()

    async def drain(self) -> None:
        """Read and drop what the client still sends, until it closes (bounded in time and
        bytes): closing with its bytes unread would reset the connection, and a reset can
        lose the error sent before it."""
        left = MAX_DRAIN
        with contextlib.suppress(Exception):
            async with asyncio.timeout(DRAIN_S):
                while left > 0 and (data := await self._reader.read(min(left, 65536))):
                    left -= len(data)


class SpeechHandler(AsyncEventHandler):
    def __init__(
        self,
        reader: Any,
        writer: asyncio.StreamWriter,
        streams: SpeechStreams,
        voices: ServiceVoices,
    ) -> None:
        super().__init__(reader, writer)
        self.streams, self.voices = streams, voices
        peer = writer.get_extra_info("peername")
        self.client = f"wyoming:{client_address(peer[0] if peer else None)}"
        self.streaming: dict[str, Any] | None = None  # synthesize-start's voice, the text
        self.started = False  # audio-start sent for this stream
        self.refused = False  # an error was sent: the conversation ends
        self.stream: ServiceStream | None = None  # the sentence being said

    async def handle_event(self, event: Event) -> bool:
        if event.payload:
            return False  # audio sent to a TTS server: not ours to read
        try:
            if Describe.is_type(event.type):
                await self.write_event(self.info().event())
            elif SynthesizeStart.is_type(event.type):
                start = SynthesizeStart.from_event(event)
                # the voice and the client's limits, checked once for the whole stream
                voice = self._voice(start.voice)
                self.streams.count_request(self.client)
                self.streaming = {"voice": start.voice, "chosen": voice, "text": ""}
                self.started = False
            elif SynthesizeChunk.is_type(event.type) and self.streaming is not None:
                await self._gather(SynthesizeChunk.from_event(event).text)
            elif SynthesizeStop.is_type(event.type) and self.streaming is not None:
                rest, self.streaming["text"] = self.streaming["text"], ""
                if rest.strip():
                    await self._said_in_stream(rest)
                if self.started:
                    await self.write_event(AudioStop().event())
                self.streaming = None
                await self.write_event(SynthesizeStopped().event())
            elif Synthesize.is_type(event.type) and self.streaming is None:
                synthesize = Synthesize.from_event(event)  # (while streaming: the same text again)
                self.started = False
                voice = self._voice(synthesize.voice)
                await self._say(synthesize.text, synthesize.voice, voice)
                if self.started:
                    await self.write_event(AudioStop().event())
        except (ConnectionError, asyncio.CancelledError):
            raise
        except ServiceRefusal as error:
            return await self._refuse(error.message, error.code)
        except Exception as error:  # the speech failed (a voice file, the model): said once
            log.warning("a Wyoming speech failed: %s", error)
            return await self._refuse("The speech could not be made.", "server_error")
        return True

    async def write_event(self, event: Event) -> None:
        """An event the client takes within WRITE_S; else it stopped reading: the
        connection is dropped (closing would wait for it to read) and its stream stops."""
        try:
            async with asyncio.timeout(WRITE_S):
                await super().write_event(event)
        except TimeoutError:
            if self.stream is not None:
                self.stream.stalled()
            self.abort()
            raise ClientStalled("the client stopped reading") from None

    def abort(self) -> None:
        self.writer.transport.abort()

    async def _refuse(self, text: str, code: str | None) -> bool:
        """The error, then the end of the conversation (False: the handler stops)."""
        self.refused, self.streaming = True, None
        await self.write_event(Error(text=text, code=code).event())
        return False

    async def disconnect(self) -> None:
        """After an error: our side closed first, what the client still sends dropped."""
        if self.refused and isinstance(self.reader, BoundedReader):
            with contextlib.suppress(OSError, RuntimeError):
                if self.writer.can_write_eof():
                    self.writer.write_eof()
            await self.reader.drain()

    def info(self) -> Info:
        codes = [language_code(name) for name in self.streams.languages]
        voices = [
            TtsVoice(
                name=voice.name,
                attribution=ATTRIBUTION,
                installed=True,
                version=None,
                description=f"{voice.name} (this server's)"
                if voice.kind == "operator"
                else voice.name,
                languages=codes,
            )
            for voice in self.voices.all()
        ]
        program = TtsProgram(
            name="pocketvoice",
            attribution=ATTRIBUTION,
            installed=True,
            version=None,
            description="Pocket TTS through PocketVoice",
            voices=voices,
            supports_synthesize_streaming=True,
        )
        return Info(tts=[program])

    async def _gather(self, text: str) -> None:
        """A streamed piece of text: its whole sentences are said now, the rest kept."""
        assert self.streaming is not None
        gathered = self.streaming["text"] + text
        if len(gathered) > MAX_INPUT:
            raise ServiceRefusal(f"The text is over {MAX_INPUT} characters.", code="too_long")
        *sentences, rest = SENTENCE_END.split(gathered)
        self.streaming["text"] = rest
        if sentences:
            await self._said_in_stream(" ".join(sentences))

    async def _said_in_stream(self, text: str) -> None:
        """A stream's sentences, within the request counted at its start; a sentence with
        nothing to say in it ("...") is passed over, not an error."""
        assert self.streaming is not None
        try:
            await self._say(text, self.streaming["voice"], self.streaming["chosen"], counted=False)
        except ServiceRefusal as error:
            if error.code != NOTHING_TO_SAY:
                raise

    def _voice(self, voice: Any) -> ServiceVoice:
        return self.voices.resolve(getattr(voice, "name", None) or DEFAULT)

    def _language(self, voice: Any) -> str:
        wanted = getattr(voice, "language", None)
        if wanted:
            for name in self.streams.languages:
                if wanted == name or wanted.split("-")[0].lower() == language_code(name):
                    return name
        return self.streams.default_language

    async def _say(
        self, text: str, voice: Any, chosen: ServiceVoice, *, counted: bool = True
    ) -> None:
        if len(text) > MAX_INPUT:
            raise ServiceRefusal(f"The text is over {MAX_INPUT} characters.", code="too_long")
        stream = await self.streams.open(
            text,
            chosen,
            language=self._language(voice),
            speed=1.0,
            client=self.client,
            source="wyoming",
            counted=counted,
            on_stall=self.abort,
        )
        self.stream = stream
        try:
            await stream.first(chosen)  # (a voice that cannot be used: its own error code)
            async for chunk in stream:
                if not self.started:
                    self.started = True
                    await self.write_event(AudioStart(rate=MODEL_RATE, width=2, channels=1).event())
                chunk_event = AudioChunk(rate=MODEL_RATE, width=2, channels=1, audio=pcm16(chunk))
                await self.write_event(chunk_event.event())
        finally:
            self.stream = None
            stream.close()


class WyomingServer:
    def __init__(self, streams: SpeechStreams, voices: ServiceVoices, gate: ConnectionGate) -> None:
        self.streams, self.voices, self.gate = streams, voices, gate
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._closing = False

    async def start(self, host: str, port: int, bound: Listener | None = None) -> None:
        """Listen as `asyncio.start_server` does, each connection through the gate (`bound`:
        the port `serve` bound before the model loaded)."""

        def protocol() -> asyncio.BaseProtocol:
            reader = asyncio.StreamReader(limit=MAX_LINE)
            return asyncio.StreamReaderProtocol(reader, self._connected)

        factory = self.gate.factory(protocol, None)
        if bound is not None:
            self._server = await bound.serve(factory)
        else:
            loop = asyncio.get_running_loop()
            self._server = await loop.create_server(factory, host, port)
        bound_sends(self._server)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        bounded = BoundedReader(reader, self.gate.slow.note, partial(mark_asked, writer.transport))
        handler = SpeechHandler(bounded, writer, self.streams, self.voices)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            await handler.run()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away
        except NOT_AN_EVENT as error:  # (wyoming's reader lets these through): one line
            log.warning("a Wyoming client sent what is not an event (%s)", type(error).__name__)
        except asyncio.CancelledError:
            # cancelled by `close` alone: ended quietly, since asyncio's stream protocol
            # logs a handler task that ends cancelled as an error
            if not self._closing:
                raise
        except Exception:
            log.exception("a Wyoming connection failed")
        finally:
            if task is not None:
                self._handlers.discard(task)

    async def close(self) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()
            for task in list(self._handlers):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
