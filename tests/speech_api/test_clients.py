"""The speech service as its users' clients use it (issue 59): the answers read back whole by
libsndfile and by FFmpeg's own decoders (PyAV), Open WebUI's requests as its code sends
them, and failures that a client gets as an error, not as a cut stream."""

from __future__ import annotations

import io
from pathlib import Path

import av
import openai
import pytest
import soundfile

from bot.speech_api.server import SpeechServer
from bot.synthesis.engine import TTSEngine
from tests.conftest import TinyModel
from tests.speech_api.service import running_service

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
