"""What an operator watches: the health and metrics endpoints, JSON logs."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.ops.endpoints import HttpEndpoints
from bot.ops.metrics import Metrics
from bot.ops.shards import ProcessShards
from tests.bot_process import BotProcess
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.fakediscord import FakeDiscord

REPO = Path(__file__).resolve().parents[2]
SEND_MESSAGES, MANAGE_GUILD = 1 << 11, 1 << 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.text()


def samples(text: str) -> dict[str, float]:
    """Every sample of a Prometheus text page: 'name{label="v"}' -> value."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            found[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return found


async def test_health_and_metrics_are_served_while_the_bot_speaks(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with bot_on_fake_discord(tmp_path, tiny_model, {"METRICS_PORT": str(port)}) as running:
        fake = running.fake
        # start-up's objects are out of the collector's sight: no 600 ms loop stalls
        assert gc.get_freeze_count() > 100_000
        assert await get(f"{base}/healthz") == (200, "ready\n")
        assert await get(f"{base}/livez") == (200, "alive\n")
        status, page = await get(f"{base}/metrics")
        assert status == 200
        before = samples(page)
        assert before['pocketvoice_voice_connections{shard="0"}'] == 0
        assert before['pocketvoice_servers{shard="0"}'] == 2
        assert before['pocketvoice_shard_connected{shard="0"}'] == 1
        assert before["pocketvoice_shard_count"] == 1
        assert before["pocketvoice_time_to_first_audio_seconds_count"] == 0

        await fake.set_voice_state("alice", FakeDiscord.VOICE_ID)
        inter = await fake.interaction("say", {"text": "Hello there, friend."})
        await inter.wait_final()
        scheduler = running.bot.app.speakers
        speaker = scheduler.get(int(FakeDiscord.GUILD_ID))
        assert speaker is not None
        await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the utterance to end")
        result = speaker.history[0]

        after = samples((await get(f"{base}/metrics"))[1])
        assert after['pocketvoice_voice_connections{shard="0"}'] == 1
        assert after["pocketvoice_time_to_first_audio_seconds_count"] == 1
        assert after["pocketvoice_time_to_first_audio_seconds_sum"] == result.first_frame_latency
        assert after['pocketvoice_utterances_total{outcome="spoken"}'] == 1
        assert after["pocketvoice_audio_played_seconds_total"] == result.frames_played * 0.02
        assert after["pocketvoice_underrun_seconds_total"] == result.underruns * 0.02
        assert after["pocketvoice_longest_gap_seconds_count"] == 1
        assert after["pocketvoice_longest_gap_seconds_sum"] == result.longest_underrun * 0.02
        for gauge in (
            "speaking_servers",
            "queued_units",
            "background_jobs_waiting",
            "model_load_ratio",
            "real_time_factor",
            "waiting_for_room",
        ):
            assert f"pocketvoice_{gauge}" in after
        assert after["pocketvoice_real_time_factor"] > 0

        # A warning is counted under the module that logged it.
        logging.getLogger("bot.playback").warning("a test warning")
        after = samples((await get(f"{base}/metrics"))[1])
        assert after['pocketvoice_log_problems_total{kind="playback",level="warning"}'] >= 1
    # Closed with the bot: nothing listens any more.
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0


async def test_healthz_says_what_the_bot_waits_for_until_ready() -> None:
    waiting: list[str | None] = ["loading the model"]
    endpoints = HttpEndpoints(Metrics(lambda: None, lambda: ProcessShards(1)), lambda: waiting[0])
    await endpoints.start("127.0.0.1", 0)
    try:
        base = f"http://127.0.0.1:{endpoints.port}"
        assert await get(f"{base}/healthz") == (503, "not ready: loading the model\n")
        assert await get(f"{base}/livez") == (200, "alive\n")
        waiting[0] = None
        assert await get(f"{base}/healthz") == (200, "ready\n")
    finally:
        await endpoints.close()


def test_json_logs_are_one_object_per_line_without_secrets() -> None:
    script = (
        "import logging\n"
        "from bot.__main__ import configure_logging\n"
        "configure_logging('INFO', 'json')\n"
        "logging.getLogger('bot.speech').warning('joined %s', 'Lounge')\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n"
        "    logging.getLogger('bot.engine').exception('failed')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    lines = [json.loads(line) for line in result.stderr.splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert first["message"] == "joined Lounge"
    assert first["level"] == "WARNING" and first["logger"] == "bot.speech" and "time" in first
    assert second["level"] == "ERROR" and "ZeroDivisionError" in second["exc_info"]


def embed_text(response: dict[str, object]) -> str:
    embeds = response.get("embeds") or []
    assert isinstance(embeds, list) and embeds
    return "\n".join(f"{f['name']}: {f['value']}" for f in embeds[0]["fields"])


async def test_help_shows_how_the_server_is_set_up_and_what_to_do_next(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    inter = await fake.interaction("help")
    reply = await inter.wait_final()
    assert inter.responses[0]["flags"] & 64  # ephemeral
    assert reply["allowed_mentions"] == {"parse": []}
    text = embed_text(reply)
    assert "No channel is read aloud yet." in text
    assert "Members may clone their own voice" in text
    assert "What next: Someone with Manage Server runs `/setup add`" in text
    assert "`/say`" in text and "`/clone`" in text and "`/botstats`" in text

    admin = FakeDiscord.EVERYONE_PERMISSIONS | MANAGE_GUILD
    await (
        await fake.interaction("setup add", {"channel": fake.TEXT_ID}, permissions=admin)
    ).wait_final()
    cloning = await fake.interaction("config speech cloning", {"value": False}, permissions=admin)
    await cloning.wait_final()
    text = embed_text(await (await fake.interaction("help")).wait_final())
    assert f"I read <#{fake.TEXT_ID}> aloud." in text
    assert "Voice cloning is switched off in this server." in text
    assert f"What next: Join a voice channel and write in <#{fake.TEXT_ID}>" in text


async def test_joining_a_server_says_hello_without_pinging_where_allowed(
    running_bot: RunningBot, caplog: pytest.LogCaptureFixture
) -> None:
    fake = running_bot.fake
    caplog.set_level(logging.INFO, "bot.services.help")
    guild = await fake.join_guild(7)
    await fake.wait_for(lambda: fake.channel_messages, 10, "the welcome")
    (message,) = fake.channel_messages
    assert message["channel_id"] == fake.channels[guild][0]  # the system channel
    assert "`/setup add`" in message["content"]
    assert message["allowed_mentions"] == {"parse": []}
    assert f"joined server {guild}" in caplog.text

    # Where the bot may not post, it stays quiet (and still logs the join).
    quiet = await fake.join_guild(8, deny_in_system_channel=SEND_MESSAGES)
    await fake.wait_for(lambda: f"joined server {quiet}" in caplog.text, 10, "the join")
    await asyncio.sleep(0.5)
    assert len(fake.channel_messages) == 1


async def test_the_bots_speech_port_taken_is_said_before_the_model_loads(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """The bot with SPEECH_PORT: another program holds the port, and the bot says so in one
    line and stops, with no model loaded. Before, the model loaded first (tens of seconds
    with real weights), as `serve`'s did."""
    fake = FakeDiscord(tmp_path)
    await fake.start()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = int(holder.getsockname()[1])
        env = {
            **fake.env,
            "TTS_CONFIG": str(tiny_model.config),
            "DEFAULT_VOICE": str(tiny_model.voice_state),
            "DATA_DIR": str(tmp_path / "data"),
            "SPEECH_PORT": str(held),
            "LOG_LEVEL": "INFO",
        }
        bot = BotProcess(env, tmp_path / "data")
        try:
            await bot.start()
            assert bot.process is not None
            code = await asyncio.wait_for(bot.process.wait(), 120)
        finally:
            await bot.stop()
            await fake.close()
    log = bot.log
    assert code == 1, log[-3000:]
    assert "TTS Model loaded" not in log and "Traceback" not in log, log[-3000:]
    assert (
        f"Speech service: cannot listen on 127.0.0.1:{held} (Address already in use): set "
        "SPEECH_PORT to a free port"
    ) in log, log[-3000:]
