"""Home Assistant's Wyoming protocol, with the `wyoming` package's own client."""

from __future__ import annotations

import asyncio
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
