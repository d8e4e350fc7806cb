"""Home Assistant's Wyoming protocol (WYOMING_PORT), with the `wyoming` package's events:
`describe` answers the voices and languages; `synthesize`, and the streaming
`synthesize-start` / `synthesize-chunk` / `synthesize-stop`, answer `audio-start`,
`audio-chunk` as the audio is made, `audio-stop` (and `synthesize-stopped` after a stream).

Wyoming has no keys: the port is for this machine, or for Home Assistant behind a firewall
(WYOMING_OPEN). Every event is bounded before it is decoded (`BoundedReader`), and so is
the text a stream gathers (MAX_INPUT characters).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
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

from bot.speech_api.encoders import pcm16
from bot.speech_api.errors import ServiceRefusal
from bot.speech_api.streams import MAX_INPUT, SpeechStreams
from bot.speech_api.voices import DEFAULT, ServiceVoices
from bot.synthesis.audio_files import MODEL_RATE
from bot.text.language_detection import lingua_language

log = logging.getLogger(__name__)

MAX_LINE = 64 * 1024  # an event's JSON header line
MAX_DATA = 64 * 1024  # its data (the text is at most MAX_INPUT characters)
MAX_PAYLOAD = 0  # a TTS server is sent no audio: any payload is refused
SENTENCE_END = re.compile(r"(?<=[.!?…;:])\s+")
ATTRIBUTION = Attribution(name="Kyutai", url="https://github.com/kyutai-labs/pocket-tts")


def language_code(name: str) -> str:
    """Home Assistant's language code ("en") for a pocket-tts language ("english")."""
    language = lingua_language(name)
    return language.iso_code_639_1.name.lower() if language is not None else name


class BoundedReader:
    """The stream reader as wyoming reads it, refusing data or a payload over the bounds
    before reading it (wyoming would read any length a header names)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        return await self._reader.readline()  # bounded by the stream's limit (MAX_LINE)

    async def readexactly(self, count: int) -> bytes:
        if count > MAX_DATA:
            raise ValueError(f"an event of {count} bytes is over the bound")
        return await self._reader.readexactly(count)

    def feed_eof(self) -> None:
        self._reader.feed_eof()


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
        self.client = f"wyoming:{peer[0] if peer else 'local'}"
        self.streaming: dict[str, Any] | None = None  # synthesize-start's voice, the text
        self.started = False  # audio-start sent for this stream

    async def handle_event(self, event: Event) -> bool:
        if event.payload:
            return False  # audio sent to a TTS server: not ours to read
        try:
            if Describe.is_type(event.type):
                await self.write_event(self.info().event())
            elif SynthesizeStart.is_type(event.type):
                start = SynthesizeStart.from_event(event)
                self.streaming = {"voice": start.voice, "text": ""}
                self.started = False
            elif SynthesizeChunk.is_type(event.type) and self.streaming is not None:
                await self._gather(SynthesizeChunk.from_event(event).text)
            elif SynthesizeStop.is_type(event.type) and self.streaming is not None:
                rest, self.streaming["text"] = self.streaming["text"], ""
                if rest.strip():
                    await self._say(rest, self.streaming["voice"])
                if self.started:
                    await self.write_event(AudioStop().event())
                self.streaming = None
                await self.write_event(SynthesizeStopped().event())
            elif Synthesize.is_type(event.type) and self.streaming is None:
                synthesize = Synthesize.from_event(event)  # (while streaming: the same text again)
                self.started = False
                await self._say(synthesize.text, synthesize.voice)
                if self.started:
                    await self.write_event(AudioStop().event())
        except ServiceRefusal as error:
            await self.write_event(Error(text=error.message, code=error.code).event())
            self.streaming = None
        return True

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
            await self._say(" ".join(sentences), self.streaming["voice"])

    def _language(self, voice: Any) -> str:
        wanted = getattr(voice, "language", None)
        if wanted:
            for name in self.streams.languages:
                if wanted == name or wanted.split("-")[0].lower() == language_code(name):
                    return name
        return self.streams.default_language

    async def _say(self, text: str, voice: Any) -> None:
        if len(text) > MAX_INPUT:
            raise ServiceRefusal(f"The text is over {MAX_INPUT} characters.", code="too_long")
        chosen = self.voices.resolve(getattr(voice, "name", None) or DEFAULT)
        stream = await self.streams.open(
            text,
            chosen,
            language=self._language(voice),
            speed=1.0,
            client=self.client,
            source="wyoming",
        )
        try:
            async for chunk in stream:
                if not self.started:
                    self.started = True
                    await self.write_event(AudioStart(rate=MODEL_RATE, width=2, channels=1).event())
                chunk_event = AudioChunk(rate=MODEL_RATE, width=2, channels=1, audio=pcm16(chunk))
                await self.write_event(chunk_event.event())
        finally:
            stream.close()


class WyomingServer:
    def __init__(self, streams: SpeechStreams, voices: ServiceVoices) -> None:
        self.streams, self.voices = streams, voices
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> None:
        self._server = await asyncio.start_server(self._connected, host, port, limit=MAX_LINE)

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handler = SpeechHandler(BoundedReader(reader), writer, self.streams, self.voices)
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            await handler.run()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away
        except Exception:
            log.exception("a Wyoming connection failed")
        finally:
            if task is not None:
                self._handlers.discard(task)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._handlers):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
