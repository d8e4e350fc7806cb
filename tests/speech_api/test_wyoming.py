"""Home Assistant's Wyoming protocol, with the `wyoming` package's own client."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

import pytest
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
    SynthesizeVoice,
)

from bot.synthesis.engine import TTSEngine
from tests.conftest import TinyModel
from tests.speech_api.service import running_service


async def events_until(client: AsyncTcpClient, last: str) -> list[Event]:
    events: list[Event] = []
    while not events or events[-1].type != last:
        event = await asyncio.wait_for(client.read_event(), 30)
        assert event is not None, f"the server closed before {last}: {events}"
        events.append(event)
        assert not Error.is_type(event.type), event.data
    return events


def audio_seconds(events: list[Event]) -> float:
    chunks = [AudioChunk.from_event(e) for e in events if AudioChunk.is_type(e.type)]
    assert chunks and all((c.rate, c.width, c.channels) == (24_000, 2, 1) for c in chunks)
    return sum(len(c.audio) for c in chunks) / 2 / 24_000


@pytest.mark.slow
async def test_describe_synthesize_and_streaming_synthesis(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    async with running_service(tmp_path, engine, tiny_model, wyoming=True) as server:  # noqa: SIM117
        async with AsyncTcpClient("127.0.0.1", server.wyoming_port or 0) as client:
            await client.write_event(Describe().event())
            info = Info.from_event(await asyncio.wait_for(client.read_event(), 10))  # type: ignore[arg-type]
            (program,) = info.tts
            assert program.supports_synthesize_streaming
            voices = {voice.name: voice for voice in program.voices}
            assert {"default", "narrator", "alba"} <= set(voices)
            assert voices["narrator"].languages == ["en"]

            await client.write_event(
                Synthesize("Hello, Home Assistant.", SynthesizeVoice(name="narrator")).event()
            )
            events = await events_until(client, AudioStop().event().type)
            assert AudioStart.is_type(events[0].type)
            assert audio_seconds(events) > 0.3

            # streamed text, as Home Assistant sends an answer while it is written: each whole
            # sentence is said as it comes; Home Assistant's full `synthesize` is ignored
            await client.write_event(SynthesizeStart(voice=SynthesizeVoice(language="en")).event())
            await client.write_event(SynthesizeChunk("The lights are ").event())
            await client.write_event(SynthesizeChunk("on. The door is").event())
            first = await asyncio.wait_for(client.read_event(), 30)  # before the stop is sent
            assert first is not None and AudioStart.is_type(first.type)
            await client.write_event(SynthesizeChunk(" locked.").event())
            await client.write_event(Synthesize("The lights are on. The door is locked.").event())
            await client.write_event(SynthesizeStop().event())
            events = await events_until(client, SynthesizeStopped().event().type)
            assert [e.type for e in events[-2:]] == ["audio-stop", "synthesize-stopped"]
            assert not any(AudioStart.is_type(e.type) for e in events)  # one audio stream
            assert audio_seconds(events) > 0.3

            await client.write_event(Synthesize("Hi.", SynthesizeVoice(name="alice")).event())
            refused = await asyncio.wait_for(client.read_event(), 10)
            assert refused is not None and Error.from_event(refused).code == "unknown_voice"


async def test_an_event_over_the_bounds_is_never_read(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    async with running_service(tmp_path, engine, tiny_model, wyoming=True) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.wyoming_port)
        header = {"type": "synthesize", "version": "1.5.0", "data_length": 10**9}
        writer.write(json.dumps(header).encode() + b"\n" + b"{" * 1000)
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 10) == b""  # closed, nothing read
        writer.close()


async def home_assistant_streams(
    port: int, parts: list[str], voice: SynthesizeVoice | None = None
) -> tuple[list[Event], bool]:
    """Home Assistant's streaming TTS as its Wyoming integration runs it (`tts.py`:
    `async_stream_tts_audio`): one task writes synthesize-start, each piece of text as a
    synthesize-chunk, the whole text again as the compatibility `synthesize`, then
    synthesize-stop, while another reads until synthesize-stopped or the connection's end
    (an `error` it passes over). The events read, and whether it ended by synthesize-stopped;
    a reader still waiting after 20 s fails the test (Home Assistant waits for its own
    timeout)."""
    client = AsyncTcpClient("127.0.0.1", port)
    await client.connect()

    async def write() -> None:
        with contextlib.suppress(OSError):  # (Home Assistant: "Unexpected disconnection")
            await client.write_event(SynthesizeStart(voice=voice).event())
            for part in parts:
                await client.write_event(SynthesizeChunk(text=part).event())
            await client.write_event(Synthesize(text="".join(parts), voice=voice).event())
            await client.write_event(SynthesizeStop().event())

    writer = asyncio.create_task(write())
    events: list[Event] = []
    stopped = False
    try:
        async with asyncio.timeout(20):
            with contextlib.suppress(OSError):
                while event := await client.read_event():
                    events.append(event)
                    if SynthesizeStopped.is_type(event.type):
                        stopped = True
                        break
    finally:
        await client.disconnect()
        await writer
    return events, stopped


def kinds(events: list[Event]) -> list[str]:
    return [e.type for e in events if not AudioChunk.is_type(e.type)]


async def test_an_unknown_voice_is_one_error_and_the_end_of_the_stream(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """synthesize-start with a voice that is not here: one error, nothing spoken, and the
    connection ends, so Home Assistant stops waiting. Before: the first sentence's error, a
    second for the compatibility `synthesize`, no synthesize-stopped and an open connection
    (Home Assistant waited for its own timeout)."""
    parts = ["The lights are on. ", "The door is locked."]
    async with running_service(tmp_path, engine, tiny_model, wyoming=True) as server:
        port = server.wyoming_port or 0
        events, stopped = await home_assistant_streams(port, parts, SynthesizeVoice("nobody"))
        assert kinds(events) == ["error"] and not stopped
        assert Error.from_event(events[0]).code == "unknown_voice"
        # the service goes on: the next stream speaks
        events, stopped = await home_assistant_streams(port, parts)
        assert stopped and kinds(events) == ["audio-start", "audio-stop", "synthesize-stopped"]


@pytest.mark.slow
async def test_a_stream_refused_midway_is_not_spoken_whole_after_it(
    tmp_path: Path, full_engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """A stream refused at its first sentence (its client's one stream at once is taken by
    another request from the same address): one error and the end of the connection. Before,
    the compatibility `synthesize` that follows the stream was spoken whole once the other
    request had ended, and no synthesize-stopped came."""
    env = {"SPEECH_STREAMS_PER_KEY": "1"}
    async with running_service(tmp_path, full_engine, tiny_model, wyoming=True, **env) as server:
        port = server.wyoming_port or 0
        async with AsyncTcpClient("127.0.0.1", port) as other:
            await other.write_event(Synthesize("A long answer, read aloud.").event())
            first = await asyncio.wait_for(other.read_event(), 30)
            assert first is not None and AudioStart.is_type(first.type)  # it holds its stream
            client = AsyncTcpClient("127.0.0.1", port)
            await client.connect()
            await client.write_event(SynthesizeStart().event())
            await client.write_event(SynthesizeChunk("The lights are on. ").event())
            refused = await asyncio.wait_for(client.read_event(), 30)
            assert refused is not None and Error.from_event(refused).code == "rate_limit_exceeded"
        # the other request is gone: its stream is closed, the client's one stream free
        async with asyncio.timeout(30):
            while server.streams.open_streams:
                await asyncio.sleep(0.05)
        events: list[Event] = []
        with contextlib.suppress(OSError):
            await client.write_event(SynthesizeChunk("The door is locked.").event())
            text = "The lights are on. The door is locked."
            await client.write_event(Synthesize(text).event())
            await client.write_event(SynthesizeStop().event())
            async with asyncio.timeout(20):
                while event := await client.read_event():
                    events.append(event)
                    if SynthesizeStopped.is_type(event.type):
                        break
        await client.disconnect()
        assert kinds(events) == []  # nothing spoken: the connection had ended


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
async def test_a_stream_is_one_request_however_many_sentences(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """Home Assistant speaks an answer sentence by sentence: the stream counts once against
    SPEECH_REQUESTS_PER_MINUTE (before, each sentence did, and a home's satellites, one
    address, ran out of a minute's requests within a few answers). A sentence with nothing
    to say ("...") is passed over, not an error that would end the stream."""
    parts = ["One. ", "... ", "Two. ", "Three. ", "Four."]
    env = {"SPEECH_REQUESTS_PER_MINUTE": "2"}
    async with running_service(tmp_path, engine, tiny_model, wyoming=True, **env) as server:
        port = server.wyoming_port or 0
        for _ in range(2):
            events, stopped = await home_assistant_streams(port, parts)
            assert stopped and "error" not in kinds(events), kinds(events)
        events, stopped = await home_assistant_streams(port, parts)  # the minute's third
        assert kinds(events) == ["error"] and not stopped
        assert Error.from_event(events[0]).code == "rate_limit_exceeded"


async def test_a_voice_that_cannot_be_loaded_is_one_error_and_the_end(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """Home Assistant's plain `synthesize` (`async_get_tts_audio`: it reads until audio-stop
    or the connection's end) in a built-in voice this model cannot use: one error naming it,
    then the end. Before, the failure escaped the handler: no error event, a traceback."""
    async with running_service(tmp_path, engine, tiny_model, wyoming=True) as server:
        async with AsyncTcpClient("127.0.0.1", server.wyoming_port or 0) as client:
            await client.write_event(Synthesize("Hello.", SynthesizeVoice(name="alba")).event())
            events: list[Event] = []
            async with asyncio.timeout(20):
                while (event := await client.read_event()) is not None:
                    events.append(event)
                    if AudioStop.is_type(event.type):
                        break
        assert kinds(events) == ["error"]
        assert Error.from_event(events[0]).code == "voice_unavailable"
