"""The bot with SPEECH_PORT set: the speech service inside the bot, on its one scheduler.
API streams (OpenAI's SDK) run while a Discord server speaks, and Discord comes first: its
speech has no gap over 100 ms."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import openai
import pytest

from tests.conftest import TinyModel, bot_on_fake_discord
from tests.e2e.test_operations import free_port, get, samples
from tests.e2e.test_speech import (
    FOUR_SERVERS_TEXT,
    GAP_FRAMES,
    VOICE,
    audio_packets,
    longest_voiced_gap,
    packets_settled,
)

STREAMS = 3


@pytest.mark.timing
async def test_api_streams_run_beside_a_discord_server_without_a_gap(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    port, metrics_port = free_port(), free_port()
    env = {
        "TTS_CONFIG": str(tiny_model.full_length_config),
        "SPEECH_PORT": str(port),
        "METRICS_PORT": str(metrics_port),
    }
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake, app = running.fake, running.bot.app
        assert app.speech_server is not None and app.speakers.scheduler.choice.reserved_rows == 1
        api = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="-", max_retries=0)
        await fake.set_voice_state("alice", VOICE)
        inter = await fake.interaction("say", {"text": FOUR_SERVERS_TEXT})  # about 11 s
        assert (await inter.wait_final())["content"].startswith("Speaking in")
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 25, 30, "speech")

        async def stream() -> tuple[float, int]:
            async with api.audio.speech.with_streaming_response.create(
                model="tts-1",
                voice="default",
                input="Beside it.",
                response_format="pcm",
            ) as response:
                size, first = 0, 0.0
                async for data in response.iter_bytes():
                    first = first or time.monotonic()
                    size += len(data)
                return first, size

        streamed = await asyncio.gather(*(stream() for _ in range(STREAMS)))
        speaker = app.speakers.get(int(fake.GUILD_ID))
        assert speaker is not None
        await fake.wait_for(lambda: len(speaker.history) == 1, 60, "the message's end")
        await packets_settled(fake)
        result = speaker.history[0]
        voiced = audio_packets(fake.udp.packets)
        # Discord first: no stutter
        assert result.error is None and result.longest_underrun < GAP_FRAMES, result
        assert longest_voiced_gap(fake.udp.packets) < 0.1
        # the streams spoke while the server did: the batch had room for them beside it (on
        # a machine loaded by other work its live step times leave less, and the streams
        # rightly wait for Discord's message: a `timing` test, run with nothing beside it)
        starts = [round(first - voiced[0].arrived, 2) for first, _ in streamed]
        during = voiced[-1].arrived - voiced[0].arrived
        assert all(0 < start < during for start in starts), (starts, during, app.engine.capacity())
        assert all(size > 0.5 * 24_000 * 2 for _, size in streamed)  # over 0.5 s each
        figures = samples((await get(f"http://127.0.0.1:{metrics_port}/metrics"))[1])
        spoken = 'pocketvoice_speech_requests_total{outcome="spoken",source="%s"}'
        assert figures[spoken % "api"] == STREAMS
        assert figures[spoken % "discord"] == 1
        assert figures['pocketvoice_speech_first_audio_seconds_count{source="api"}'] == STREAMS
        await api.close()
