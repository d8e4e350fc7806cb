"""Faults end to end through the fake Discord: connections drop, the model fails, storage
fails, the process dies. In each case members get a clear answer, other servers keep
speaking, and nothing is lost or half-written."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.playback import connection as connection_module
from bot.synthesis import batching
from bot.synthesis import engine as engine_module
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_speech import audio_packets, speaker_of
from tests.e2e.test_voices import CLIP, clone, voice_files, voice_rows
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
MEDIUM = "This keeps the bot talking long enough."  # about 11 s of speech


def full_length(tiny_model: TinyModel) -> dict[str, str]:
    return {"TTS_CONFIG": str(tiny_model.full_length_config)}


async def start_speaking(running: RunningBot, text: str = MEDIUM) -> None:
    fake = running.fake
    await fake.set_voice_state("alice", VOICE)
    reply = await (await fake.interaction("say", {"text": text})).wait_final()
    assert reply["content"].startswith("Speaking in")
    await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 25, 30, "speech")


async def say_again_and_hear_it(running: RunningBot) -> None:
    fake = running.fake
    speaker = speaker_of(running)
    done = len(speaker.history)
    reply = await (await fake.interaction("say", {"text": "Still here."})).wait_final(40)
    assert "in <#" in reply["content"], reply["content"]
    await fake.wait_for(lambda: len(speaker.history) > done, 60, "the next message")
    last = speaker.history[-1]
    assert last.error is None and last.frames_played > 0


def voice_connected(guild: Any) -> bool:
    return guild.voice_client is not None and guild.voice_client.is_connected()


def voice_story(running: RunningBot) -> str:
    """What the speaking path is doing, for a failure message."""
    guild = running.bot.get_guild(int(FakeDiscord.GUILD_ID))
    voice_client = None if guild is None else guild.voice_client
    state = getattr(voice_client, "_connection", None)
    speaker = speaker_of(running)
    return (
        f"voice client {type(voice_client).__name__}, flow {getattr(state, 'state', None)}, "
        f"playing {getattr(voice_client, 'is_playing', lambda: None)()}; speaker busy "
        f"{speaker.busy}, history {len(speaker.history)}, packets "
        f"{len(audio_packets(running.fake.udp.packets))}"
    )


async def test_removed_from_the_channel_drops_the_queue_and_the_next_say_rejoins(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, full_length(tiny_model)) as running:
        fake = running.fake
        await start_speaking(running)
        await (await fake.interaction("say", {"text": "Waiting in the queue."})).wait_final()
        await fake.kick_from_voice(fake.GUILD_ID)
        speaker = speaker_of(running)
        await fake.wait_for(lambda: not speaker.busy, 20, "the queue to be dropped")
        assert [r.cancelled for r in speaker.history] == [True]
        await say_again_and_hear_it(running)
        assert fake.bot_voice_channel == VOICE


async def test_a_voice_join_discord_never_answers_is_tried_again_then_refused_clearly(
    tmp_path: Path, tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection_module, "CONNECT_ATTEMPT_S", 2.0)
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        # the first join is stuck in signalling: no voice events come for it
        fake.unanswered_voice_joins = 1
        await fake.set_voice_state("alice", VOICE)
        reply = await (await fake.interaction("say", {"text": "Hello."})).wait_final(20)
        assert reply["content"].startswith("Speaking in"), reply["content"]
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the message")
        assert speaker.history[0].error is None and speaker.history[0].frames_played > 0
        joins = [p for p in fake.gateway_log if p["op"] == 4 and p["d"]["channel_id"]]
        assert len(joins) == 2  # the stuck one, then a fresh one

        # never answered: after every attempt, a clear reply and no half-open connection
        fake.unanswered_voice_joins = connection_module.CONNECT_ATTEMPTS
        guild2, voice2 = FakeDiscord.GUILD2_ID, FakeDiscord.GUILD2_VOICE_ID
        await fake.set_voice_state("bob", voice2, guild2)
        inter = await fake.interaction("say", {"text": "Hello."}, user="bob", guild=guild2)
        reply = await inter.wait_final(30)
        assert reply["content"] == f"I could not join <#{voice2}> just now. Please try again."
        assert running.bot.get_guild(int(guild2)).voice_client is None  # type: ignore[union-attr]
        assert fake.unanswered_voice_joins == 0


@pytest.fixture
def model_fails_on_boom(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The model raises mid-stream (after 3 frames) for rows whose text contains 'boom'.

    The fault is injected where the batch calls the model: a batched step holding such a
    row raises, as it would if the model fell over on that row's data."""
    real_prefill, real_run = batching.prefill_chunks, batching.BatchedFlowLM._run

    def prefill(model: Any, state: Any, text: str) -> Any:
        for chunk in real_prefill(model, state, text):
            chunk.boom = "boom" in text.lower()  # type: ignore[attr-defined]
            yield chunk

    def run(self: batching.BatchedFlowLM, rows: slice, latents: Any) -> Any:
        if any(getattr(r.chunk, "boom", False) and r.step >= 3 for r in self.rows[rows]):
            raise RuntimeError("the model fell over")
        return real_run(self, rows, latents)

    monkeypatch.setattr(engine_module, "prefill_chunks", prefill)
    monkeypatch.setattr(batching.BatchedFlowLM, "_run", run)
    yield


@pytest.mark.timing
async def test_model_failure_mid_stream_ends_that_message_only(
    tmp_path: Path, tiny_model: TinyModel, model_fails_on_boom: None, caplog: Any
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, full_length(tiny_model)) as running:
        fake = running.fake
        await fake.set_voice_state("bob", FakeDiscord.GUILD2_VOICE_ID)
        other = await fake.interaction("say", {"text": MEDIUM}, user="bob", guild=fake.GUILD2_ID)
        await other.wait_final()
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("say", {"text": "Boom goes this one."})).wait_final()
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the failed message")
        assert speaker.history[0].error == "the model fell over"
        assert "synthesis of a unit failed" in caplog.text
        scheduler = running.bot.app.speakers
        second = scheduler.get(int(fake.GUILD2_ID))
        assert second is not None
        await fake.wait_for(lambda: len(second.history) == 1, 60, "the other server")
        assert second.history[0].error is None and second.history[0].underruns == 0
        await say_again_and_hear_it(running)


async def test_database_locked_during_clone_gets_a_clear_reply_and_saves_nothing(
    running_bot: RunningBot,
) -> None:
    fake, bot = running_bot.fake, running_bot.bot
    blocker = sqlite3.connect(bot.config.data_dir / "pocketvoice.db", isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
        inter = await clone(fake, "Mine")
        await inter.wait_content("a storage problem on the bot's side", timeout=40)
        assert await voice_rows(running_bot) == [] and voice_files(running_bot) == []
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    use = await fake.interaction("voice use", {"name": "alba"}, user="bob")
    assert "alba" in (await use.wait_final())["content"]  # other members unaffected
    await (await clone(fake, "Mine")).wait_content("is ready")


KILLED_CLONE = """
import asyncio, os, signal, sys
from pathlib import Path
from bot.core.config import load_config
from bot.storage.database import Database, VoiceRepository
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.voice_library import VoiceLibrary

async def main() -> None:
    config, clip, data_dir, upload = sys.argv[1:5]
    settings = load_config({"TTS_CONFIG": config, "DEFAULT_VOICE": clip}, dotenv_path=None,
                             require_token=False)
    engine = await load_engine(settings)
    db = await Database.open(Path(data_dir) / "pocketvoice.db")
    library = VoiceLibrary(db, engine, Path(data_dir))

    async def die(*args, **kwargs):  # the files are complete; the row is not written yet
        os.kill(os.getpid(), signal.SIGKILL)

    VoiceRepository.insert = die
    await library.create(1, "Doomed", Path(upload).read_bytes(), consented_at="now")

asyncio.run(main())
"""


async def test_sigkill_between_the_files_and_the_row_leaves_no_orphan(
    tmp_path: Path, tiny_model: TinyModel, engine: Any
) -> None:
    from bot.storage.database import Database
    from bot.synthesis.voice_library import VoiceLibrary

    upload = tmp_path / "upload.wav"
    upload.write_bytes(CLIP)
    data_dir = tmp_path / "data"
    process = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-c",
            KILLED_CLONE,
            str(tiny_model.config),
            str(tiny_model.clip),
            str(data_dir),
            str(upload),
        ],
        capture_output=True,
        cwd=Path(__file__).parents[2],
        timeout=120,
    )
    assert process.returncode == -signal.SIGKILL, process.stderr.decode()[-2000:]
    left = [p for p in (data_dir / "voices").rglob("*") if p.is_file()]
    assert {p.suffix for p in left} == {".safetensors", ".flac"}  # killed after the files
    db = await Database.open(data_dir / "pocketvoice.db")
    try:
        library = VoiceLibrary(db, engine, data_dir)  # the next start
        removed, missing = await library.reconcile()
        # The store holds no voice at all, as a wrong DATABASE_URL's would: the files are
        # moved aside, not deleted (a store with voices has them removed: test_voices.py).
        assert removed == [] and missing == []
        aside = [p for p in (data_dir / "voices-quarantine").rglob("*") if p.is_file()]
        assert sorted(p.name for p in aside) == sorted(p.name for p in left)
        assert not [p for p in (data_dir / "voices").rglob("*") if p.is_file()]
        assert await db.voices.list_all() == []
    finally:
        await db.close()
    assert os.stat(data_dir).st_mode & 0o777 == 0o700


@pytest.mark.timing
async def test_a_flood_of_files_does_not_delay_another_servers_speech(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, full_length(tiny_model)) as running:
        fake = running.fake
        long_text = " ".join([MEDIUM] * 2)  # a file of ~20 s, made faster than real time
        floods = [await fake.interaction("tts", {"text": long_text}) for _ in range(6)]
        answers = [(await f.wait_final(10))["content"] for f in floods[2:]]
        assert all("You already have 2 requests waiting" in a for a in answers), answers
        await asyncio.sleep(0.5)  # the two admitted files are being synthesized
        await fake.set_voice_state("bob", FakeDiscord.GUILD2_VOICE_ID)
        say = await fake.interaction(
            "say", {"text": "Hello there."}, user="bob", guild=fake.GUILD2_ID
        )
        assert (await say.wait_final())["content"].startswith("Speaking in")
        scheduler = running.bot.app.speakers
        speaker = scheduler.get(int(fake.GUILD2_ID))
        assert speaker is not None
        await fake.wait_for(lambda: len(speaker.history) == 1, 30, "bob's message")
        latency = speaker.history[0].first_frame_latency
        assert latency is not None and latency < 1.0, latency
        stats = await (await fake.interaction("botstats")).wait_response(2)
        fields = {f["name"]: f["value"] for f in stats["embeds"][0]["fields"]}
        assert "4 refused" in fields["Background work"]
        for flood in floods[:2]:
            reply = await flood.wait_final(180)
            assert reply["content"].endswith("s of speech.") and reply["_files"]


async def test_an_unexpected_error_gets_a_reply_with_an_error_id(
    running_bot: RunningBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise KeyError("a bug")

    # the module the bot loaded as its extension (discord.py makes its own module object)
    cog_module = running_bot.bot.extensions["cogs.speech"]
    monkeypatch.setattr(cog_module, "botstats", broken)
    reply = await (await running_bot.fake.interaction("botstats")).wait_final()
    assert reply["content"].startswith("Something went wrong on my side (error id ")


async def test_a_voice_the_model_cannot_use_falls_back_for_files_and_is_refused_for_previews(
    running_bot: RunningBot,
) -> None:
    """Built-in voices need the hub, which is out of reach here: a real unusable voice."""
    fake = running_bot.fake
    await (await fake.interaction("voice use", {"name": "alba"}, user="bob")).wait_final()
    tts = await fake.interaction("tts", {"text": "A file for you."}, user="bob")
    answer = await tts.wait_final()
    assert answer["content"].endswith("s of speech.") and answer["_files"]
    preview = await fake.interaction("voice preview", {"name": "alba"}, user="bob")
    assert (await preview.wait_final())["content"] == (
        "That voice cannot be used on this bot right now."
    )
