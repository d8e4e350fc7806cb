"""The speech service's OpenAI API, with OpenAI's own Python SDK as the client, against the
running service (its HTTP server on a real socket, the real scheduler and tiny model)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import shutil
from pathlib import Path

import aiohttp
import numpy as np
import openai
import pytest
import soundfile

from bot.core.config import ConfigError, load_config
from bot.speech_api.server import SpeechServer
from bot.synthesis.engine import TTSEngine
from tests.conftest import TinyModel
from tests.speech_api.service import KEY, running_service

TEXT = "Hello there! I have 3 apples and 2 pears."


def client(server: SpeechServer, key: str = KEY) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)


def decoded(data: bytes, response_format: str) -> np.ndarray:
    """The samples of a response, decoded by libsndfile (pcm: as OpenAI's 24 kHz s16le)."""
    if response_format == "pcm":
        return np.frombuffer(data, "<i2").astype(np.float32) / 32768
    blocks = []
    with soundfile.SoundFile(io.BytesIO(data)) as sound:
        assert sound.samplerate == 24_000 and sound.channels == 1
        while len(block := sound.read(4800, dtype="float32")):  # (a stream has no length)
            blocks.append(block)
    return np.concatenate(blocks)


@pytest.mark.slow
async def test_every_format_speaks_through_the_sdk(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    async with running_service(tmp_path, engine, tiny_model, SPEECH_API_KEYS=KEY) as server:
        api = client(server)
        lengths = {}
        for response_format in ("wav", "pcm", "opus", "flac", "mp3"):
            response = await api.audio.speech.with_raw_response.create(
                model="tts-1", voice="default", input=TEXT, response_format=response_format
            )  # type: ignore[arg-type]
            samples = decoded(response.content, response_format)
            assert np.abs(samples).max() > 0.001, response_format  # speech, not silence
            lengths[response_format] = len(samples) / 24_000
            assert response.headers["x-voice"] == "default"
        # the same speech in each (the tiny model stops after about 0.7 s)
        assert max(lengths.values()) - min(lengths.values()) < 0.2, lengths
        models = [m.id async for m in api.models.list()]
        assert {"pocket-tts", "tts-1", "gpt-4o-mini-tts"} <= set(models)
        await api.close()


@pytest.mark.slow
async def test_a_stream_sends_its_first_audio_while_the_rest_is_made(
    tmp_path: Path, full_engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """The full-length model speaks a long text for well over the 5 s the scheduler reads
    ahead of a listener: the first bytes come while the job is still synthesizing, and a
    client that goes away stops it."""
    text = "This sentence goes on and on, to make a long stream of speech. " * 6
    async with running_service(tmp_path, full_engine, tiny_model) as server:
        api = client(server, "unused")
        scheduler = server.streams.scheduler
        async with api.audio.speech.with_streaming_response.create(
            model="gpt-4o-mini-tts", voice="alloy", input=text, response_format="pcm"
        ) as response:
            chunks = response.iter_bytes()
            first = await anext(chunks)
            assert first
            jobs = [j for j in scheduler.jobs if j.source == "api"]
            assert len(jobs) == 1 and not jobs[0].done.is_set()  # still being made
            job = jobs[0]
        await asyncio.wait_for(job.done.wait(), 10)  # the client left: the job stops
        assert job.cancelled
        await api.close()


async def test_server_sent_events_as_openai_sends_them(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    async with running_service(tmp_path, engine, tiny_model) as server:
        api = client(server, "unused")
        async with api.audio.speech.with_streaming_response.create(
            model="tts-1",
            voice="narrator",
            input=TEXT,
            response_format="pcm",
            stream_format="sse",
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            events = [
                json.loads(line.removeprefix("data: "))
                async for line in response.iter_lines()
                if line.startswith("data: ")
            ]
        assert [e["type"] for e in events[-1:]] == ["speech.audio.done"]
        deltas = [e for e in events[:-1] if e["type"] == "speech.audio.delta"]
        assert len(deltas) == len(events) - 1 >= 2
        pcm = b"".join(base64.b64decode(e["audio"]) for e in deltas)
        assert len(pcm) / 2 / 24_000 > 0.3
        await api.close()


async def test_refusals_are_shaped_as_openai_shapes_them(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    # a member's cloned voice, where the bot keeps them: never offered by name or path
    member = tmp_path / "voices" / "1234"
    member.mkdir(parents=True)
    shutil.copy(tiny_model.voice_state, member / "alice.safetensors")
    async with running_service(tmp_path, engine, tiny_model, SPEECH_API_KEYS=KEY) as server:
        with pytest.raises(openai.AuthenticationError) as wrong_key:
            await client(server, "not-the-key-0123456789").audio.speech.create(
                model="tts-1", voice="default", input=TEXT
            )
        assert wrong_key.value.status_code == 401
        assert wrong_key.value.code == "invalid_api_key"
        api = client(server)
        with pytest.raises(openai.APIStatusError) as too_long:
            await api.audio.speech.create(model="tts-1", voice="default", input="a" * 4097)
        assert too_long.value.status_code == 413
        assert too_long.value.body["param"] == "input"  # type: ignore[index]
        for name in (
            "nobody",
            "alice",
            "voices/1234/alice.safetensors",
            str(member / "alice.safetensors"),
        ):
            with pytest.raises(openai.BadRequestError) as unknown:
                await api.audio.speech.create(model="tts-1", voice=name, input=TEXT)
            assert unknown.value.code == "unknown_voice", name
            assert "GET /v1/audio/voices" in unknown.value.message
        with pytest.raises(openai.BadRequestError) as fast:
            await api.audio.speech.create(model="tts-1", voice="default", input=TEXT, speed=4.5)
        assert fast.value.body["param"] == "speed"  # type: ignore[index]
        with pytest.raises(openai.BadRequestError) as aac:
            await api.audio.speech.create(
                model="tts-1", voice="default", input=TEXT, response_format="aac"
            )
        assert aac.value.body["param"] == "response_format"  # type: ignore[index]
        # the speed OpenAI allows, clamped to what the stretcher does, and said so
        clamped = await api.audio.speech.with_raw_response.create(
            model="tts-1", voice="default", input=TEXT, speed=3.0, response_format="pcm"
        )
        assert clamped.headers["x-speed-applied"] == "2"
        listed = await api.get("/audio/voices", cast_to=object)
        names = {v["id"] for v in listed["data"]}  # type: ignore[index]
        assert {"default", "narrator", "alba"} <= names and "alice" not in names
        assert listed["languages"] == ["english"]  # type: ignore[index]
        await api.close()


@pytest.mark.slow
async def test_a_key_opens_so_many_streams_and_then_gets_429(
    tmp_path: Path, full_engine: TTSEngine, tiny_model: TinyModel
) -> None:
    text = "A long text to keep this stream open for a while, and then some. " * 4
    env = {"SPEECH_API_KEYS": KEY, "SPEECH_STREAMS_PER_KEY": "1"}
    async with running_service(tmp_path, full_engine, tiny_model, **env) as server:
        api = client(server)
        async with api.audio.speech.with_streaming_response.create(
            model="tts-1", voice="default", input=text, response_format="pcm"
        ) as held:
            await anext(held.iter_bytes())
            with pytest.raises(openai.RateLimitError) as full:
                await api.audio.speech.create(model="tts-1", voice="default", input="Hi.")
            assert full.value.status_code == 429
            assert int(full.value.response.headers["retry-after"]) >= 1
        await api.close()


def test_a_bind_beyond_this_machine_needs_keys(tmp_path: Path) -> None:
    for host in ("0.0.0.0", "192.168.1.20", "::", "speech.example"):
        settings = load_config({"SPEECH_HOST": host}, dotenv_path=None, require_token=False)
        with pytest.raises(ConfigError, match="SPEECH_API_KEYS"):
            SpeechServer(settings, None, None)  # type: ignore[arg-type]
    for host in ("127.0.0.1", "::1", "localhost"):
        settings = load_config({"SPEECH_HOST": host}, dotenv_path=None, require_token=False)
        from bot.core.config import check_speech_binds

        check_speech_binds(settings)  # no error


async def test_without_keys_only_this_machines_requests_are_answered(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """A page elsewhere can neither post a form's plain text (no JSON without CORS, never
    granted) nor rename itself to 127.0.0.1 (DNS rebinding: its Host header is its own)."""
    body = json.dumps({"model": "tts-1", "voice": "default", "input": TEXT})
    async with running_service(tmp_path, engine, tiny_model) as server:
        url = f"{server.url}/v1/audio/speech"
        async with aiohttp.ClientSession() as session:
            async with session.post(
                url, data=body, headers={"Content-Type": "text/plain"}
            ) as plain:
                assert plain.status == 400
                assert "application/json" in (await plain.json())["error"]["message"]
            rebound = {"Content-Type": "application/json", "Host": f"evil.example:{server.port}"}
            async with session.post(url, data=body, headers=rebound) as answer:
                assert answer.status == 401
                assert (await answer.json())["error"]["code"] == "invalid_host"
            async with session.get(
                f"{server.url}/v1/models", headers={"Host": "evil.example"}
            ) as models:
                assert models.status == 401
