"""The speech service as its users' clients use it (issue 59): the answers read back whole by
libsndfile and by FFmpeg's own decoders (PyAV), Open WebUI's requests as its code sends
them, and failures that a client gets as an error, not as a cut stream."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import aiohttp
import av
import openai
import pytest
import requests
import soundfile

from bot.speech_api.server import SpeechServer
from bot.synthesis.engine import TTSEngine
from tests.conftest import TinyModel
from tests.speech_api.service import KEY, running_service

RATE = 24_000
# the full-length tiny model speaks this for about 4.4 s (its random weights ramble): at a
# variable bit rate libsndfile read 4.19 s of it (it guesses the length from the first frames)
SHORT_TEXT = "Hello there, friend."


def client(server: SpeechServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


def libsndfile_seconds(data: bytes, response_format: str) -> float:
    """How much libsndfile (python-soundfile) reads of it, block by block as a player."""
    if response_format == "pcm":  # OpenAI's raw 24 kHz s16le: no header to read
        return len(data) / 2 / RATE
    frames = 0
    with soundfile.SoundFile(io.BytesIO(data)) as sound:
        assert sound.samplerate == RATE and sound.channels == 1
        while len(block := sound.read(4800, dtype="float32")):
            frames += len(block)
    return frames / RATE


def ffmpeg_seconds(data: bytes, response_format: str) -> float:
    """How much FFmpeg's demuxers and decoders (through PyAV) read of it."""
    raw = {"format": "s16le", "options": {"sample_rate": str(RATE), "ch_layout": "mono"}}
    seconds = 0.0
    with av.open(io.BytesIO(data), **(raw if response_format == "pcm" else {})) as container:
        for frame in container.decode(audio=0):
            seconds += frame.samples / frame.sample_rate  # (Opus decodes at 48 kHz)
    return seconds


def mp3_frame_sizes(data: bytes) -> set[int]:
    """The sizes of an MP3's frames, as FFmpeg's demuxer cuts them (64 kbit/s at 24 kHz:
    192 bytes each)."""
    with av.open(io.BytesIO(data)) as container:
        return {packet.size for packet in container.demux(audio=0) if packet.size}


@pytest.mark.slow
async def test_every_format_reads_back_whole_in_libsndfile_and_ffmpeg(
    tmp_path: Path, full_engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """Each format's answer lasts as long as the WAV of the same request, read by both
    decoders. MP3, OpenAI's default, at a variable bit rate lost its end in libsndfile
    (9.29 s of 11.04 s; here 4.19 s of 4.4 s)."""
    formats = ("wav", "pcm", "mp3", "opus", "flac")
    async with running_service(tmp_path, full_engine, tiny_model) as server:
        api = client(server)
        lengths: dict[str, float] = {}
        for response_format in formats:
            response = await api.audio.speech.with_raw_response.create(
                model="tts-1", voice="default", input=SHORT_TEXT, response_format=response_format
            )
            data = response.content
            if response_format == "mp3":  # constant: a reader that guesses the length from
                assert mp3_frame_sizes(data) == {192}  # the bit rate guesses it right
            lengths[f"{response_format} libsndfile"] = libsndfile_seconds(data, response_format)
            lengths[f"{response_format} ffmpeg"] = ffmpeg_seconds(data, response_format)
        await api.close()
    wav = lengths["wav libsndfile"]
    assert wav > 3.0, lengths  # seconds of speech, not the short model's 0.7 s
    for response_format in formats:
        # an MP3 or Opus adds its encoder's delay and padding (MP3: 2,112 samples, 0.09 s);
        # none reads shorter
        for reader in ("libsndfile", "ffmpeg"):
            extra = lengths[f"{response_format} {reader}"] - wav
            assert -0.01 < extra < 0.12, (response_format, reader, lengths)


async def test_open_webui_lists_the_voices_and_models_and_speaks(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """Open WebUI's requests as its code sends them (backend/open_webui/routers/audio.py,
    engine "openai" with a base URL of its own): the voices and models by `requests.get`
    with no headers at all (no key), read as `{"voices": [{"id", "name"}]}` and
    `{"models": [{"id"}]}`; the speech by aiohttp, `json=` its frontend's input and voice with
    the admin's model and TTS_OPENAI_PARAMS, `Authorization: Bearer` its TTS_OPENAI_API_KEY
    and, where it forwards them, its user's headers; the whole body kept as an .mp3 file.
    Before, its lists got 401 and 404, and its users saw OpenAI's six names."""
    async with running_service(tmp_path, engine, tiny_model, SPEECH_API_KEYS=KEY) as server:
        base = f"{server.url}/v1"
        listed = await asyncio.to_thread(requests.get, f"{base}/audio/voices")
        listed.raise_for_status()
        voices = {voice["id"]: voice["name"] for voice in listed.json().get("voices", [])}
        assert {"default", "narrator", "alba"} <= set(voices)
        listed = await asyncio.to_thread(requests.get, f"{base}/audio/models")
        listed.raise_for_status()
        models = [model["id"] for model in listed.json().get("models", [])]
        assert {"pocket-tts", "tts-1", "tts-1-hd"} <= set(models)

        payload = {"input": "Hello from a chat.", "voice": "narrator"}  # its frontend's
        payload["model"] = "tts-1"  # the admin's TTS_MODEL
        payload |= {"speed": 1.25}  # the admin's TTS_OPENAI_PARAMS
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {KEY}",
            "X-OpenWebUI-User-Name": "Ada",
            "X-OpenWebUI-User-Id": "7f1c",
            "X-OpenWebUI-User-Email": "ada@example.org",
            "X-OpenWebUI-User-Role": "user",
        }
        timeout = aiohttp.ClientTimeout(total=300)
        async with aiohttp.ClientSession(timeout=timeout, trust_env=True) as session:  # noqa: SIM117
            async with session.post(f"{base}/audio/speech", json=payload, headers=headers) as r:
                r.raise_for_status()
                data = await r.read()
                assert r.headers["X-Voice"] == "narrator"
                assert r.headers["X-Speed-Applied"] == "1.25"
        assert libsndfile_seconds(data, "mp3") > 0.3
        assert ffmpeg_seconds(data, "mp3") > 0.3

        # a key that is sent must be right, and speech always needs one
        wrong = {"Authorization": "Bearer not-the-key-0123456789"}
        refused = await asyncio.to_thread(requests.get, f"{base}/audio/voices", headers=wrong)
        assert refused.status_code == 401
        async with (
            aiohttp.ClientSession() as session,
            session.post(f"{base}/audio/speech", json=payload) as r,
        ):
            assert r.status == 401


async def test_a_voice_that_cannot_be_loaded_is_an_error_before_any_audio(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """A built-in voice this model cannot use (the tiny model has no language, so no
    built-in voice loads) and an operator's file that is not a voice: a 500 in OpenAI's
    shape, through the SDK, as audio and as server-sent events. Before, a 200 came, then the
    connection was cut (the SDK's "Connection error")."""
    (tmp_path / "service-voices").mkdir()
    (tmp_path / "service-voices" / "broken.safetensors").write_bytes(b"not a voice state")
    async with running_service(tmp_path, engine, tiny_model) as server:
        api = client(server)
        for voice in ("alba", "broken"):
            for stream_format in ("audio", "sse"):
                with pytest.raises(openai.InternalServerError) as failed:
                    await api.audio.speech.create(
                        model="tts-1",
                        voice=voice,
                        input="Hello.",
                        response_format="wav",
                        stream_format=stream_format,  # type: ignore[arg-type]
                    )
                assert failed.value.status_code == 500
                assert failed.value.code == "voice_unavailable", (voice, stream_format)
                assert voice in failed.value.message
        # the service goes on, with a voice it has
        speech = await api.audio.speech.create(
            model="tts-1", voice="narrator", input="Hello.", response_format="wav"
        )
        assert libsndfile_seconds(speech.content, "wav") > 0.3
        await api.close()
        assert server.streams.open_streams == 0


@pytest.mark.slow
async def test_four_thousand_characters_without_punctuation_are_spoken_whole(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """OpenAI's most input, 4,096 characters of words with no punctuation at all: cut into
    chunks the model takes, the whole answer comes. Before, pocket-tts made one chunk of it
    (`Chunk has 2155 tokens (max 50)`), past the model's context (`The expanded size of the
    tensor (2195) must match the existing size (1024)`), after the 200: a cut stream."""
    words = "the quick brown fox jumps over a lazy dog while seven small birds sing".split()
    text = " ".join(words[(i * 5) % len(words)] for i in range(1000))[:4096]
    assert len(text) == 4096 and not any(mark in text for mark in ".!?…,;:")
    async with running_service(tmp_path, engine, tiny_model) as server:
        api = client(server)
        speech = await api.audio.speech.create(
            model="tts-1", voice="default", input=text, response_format="pcm"
        )
        await api.close()
    # the tiny model says about 0.7 s per chunk pocket-tts makes: two dozen chunks
    assert libsndfile_seconds(speech.content, "pcm") > 10.0


async def test_an_operators_voice_named_like_openais_wins_and_languages_are_right(
    tmp_path: Path, engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """The operator's `alloy` is listed as theirs and speaks: here a file that is not a voice,
    so speaking it fails (before, the default voice spoke in its place, silently). An OpenAI
    name the operator has no voice for still speaks in the default voice. Each built-in voice
    is listed with the language it was recorded in (before: `english` for every voice but
    the default language's own)."""
    voices = tmp_path / "service-voices"
    voices.mkdir()
    (voices / "alloy.safetensors").write_bytes(b"the operator's alloy, not a voice state")
    async with running_service(tmp_path, engine, tiny_model) as server:
        api = client(server)
        listed = await api.get("/audio/voices", cast_to=object)
        by_name = {v["id"]: v for v in listed["data"]}  # type: ignore[index]
        assert by_name["alloy"]["kind"] == "operator"
        recorded = {name: by_name[name]["recorded_in"] for name in ("alba", "estelle", "lola")}
        assert recorded == {"alba": "english", "estelle": "french", "lola": "spanish"}
        with pytest.raises(openai.InternalServerError) as failed:
            await api.audio.speech.create(model="tts-1", voice="alloy", input="Hello.")
        assert failed.value.code == "voice_unavailable"
        nova = await api.audio.speech.with_raw_response.create(
            model="tts-1", voice="nova", input="Hello.", response_format="wav"
        )
        assert nova.headers["x-voice"] == "nova"
        assert libsndfile_seconds(nova.content, "wav") > 0.3
        await api.close()
