"""What a client that misbehaves leaves in the service's log: one line, never a traceback
(issue 59). Real sockets, raw bytes: a JSON body nested deeper than Python goes, a client that
leaves in the middle of its stream, Wyoming lines that are JSON but no event."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import struct
from pathlib import Path

import pytest

from bot.synthesis.engine import TTSEngine
from tests.conftest import TinyModel
from tests.speech_api.service import running_service

LONG_TEXT = " ".join(f"Sentence number {n} keeps the stream going a while." for n in range(12))


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def request(port: int, body: bytes) -> bytes:
    return (
        f"POST /v1/audio/speech HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + body


async def test_a_body_nested_too_deep_is_a_400_and_no_traceback(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, json.loads's RecursionError reached the 500 handler with its traceback."""
    caplog.set_level(logging.INFO)
    async with running_service(tmp_path, engine, tiny_model) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(request(server.port, b"[" * 30_000 + b"]" * 30_000))
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 400"), answer[:300]
    assert b"must be a JSON object" in answer
    assert not tracebacks(caplog), tracebacks(caplog)


@pytest.mark.parametrize("response_format", ["pcm", "mp3"])
async def test_a_client_leaving_mid_stream_logs_no_traceback(
    tmp_path: Path,
    engine: TTSEngine,
    tiny_model: TinyModel,
    caplog: pytest.LogCaptureFixture,
    response_format: str,
) -> None:
    """The client reads the headers and some audio, then resets its connection."""
    caplog.set_level(logging.INFO)
    async with running_service(tmp_path, engine, tiny_model) as server:
        body = json.dumps(
            {"input": LONG_TEXT, "voice": "narrator", "response_format": response_format}
        ).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(request(server.port, body))
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
        assert head.startswith(b"HTTP/1.1 200"), head
        await asyncio.wait_for(reader.read(1000), 30)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()  # a reset, as a browser tab closed
        # the service notices at its next write: the stream stops, its row is freed
        for _ in range(200):
            if not server.streams.open_streams:
                break
            await asyncio.sleep(0.1)
        assert not server.streams.open_streams
        await asyncio.sleep(0.3)
    assert not tracebacks(caplog), tracebacks(caplog)


NOT_EVENTS = [
    b"[1]\n",  # JSON, not an object
    b"{}\n",  # no type
    b'{"type": "synthesize", "data_length": "ten"}\n',  # a length that is no number
    b"[" * 5_000 + b"]" * 5_000 + b"\n",  # deeper than Python's JSON reader goes
    b'{"type": "synthesize", "data_length": 3}\n[1]',  # data that is no object
]


async def test_lines_that_are_no_wyoming_event_are_one_line_each(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel, caplog: pytest.LogCaptureFixture
) -> None:
    """Each ends its connection with one warning line. Before, each logged a traceback."""
    caplog.set_level(logging.INFO)
    async with running_service(tmp_path, engine, tiny_model, wyoming=True) as server:
        for line in NOT_EVENTS:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.wyoming_port)
            writer.write(line)
            await writer.drain()
            assert await asyncio.wait_for(reader.read(), 10) == b"", line[:40]
            writer.close()
        await asyncio.sleep(0.1)
    assert not tracebacks(caplog), tracebacks(caplog)
    said = [r for r in caplog.records if r.name == "bot.speech_api.wyoming_server"]
    assert len(said) == len(NOT_EVENTS), [r.getMessage() for r in said]
    assert all("not an event" in r.getMessage() for r in said)
