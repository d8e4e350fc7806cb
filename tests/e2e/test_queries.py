"""Database queries per chat message read aloud and per /say, counted on the real SQLite store
(sqlite3's trace callback, through aiosqlite), end to end through the fake Discord: how a
member is spoken (language, voice, cloned or not) reads the server's settings and the member's
settings once each."""

from __future__ import annotations

import collections
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.services.upkeep import IdleUpkeep
from bot.storage.stores import SQLiteStore
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN, outcome, setup_read_channel, speaker
from tests.e2e.test_voices import clone
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
TABLE = re.compile(r"\b(?:FROM|INTO|UPDATE|JOIN)\s+(\w+)", re.IGNORECASE)
NICKS = "SELECT user_id, nick FROM member_settings"


@contextlib.asynccontextmanager
async def statements(running: RunningBot) -> AsyncIterator[list[str]]:
    """Every SQL statement the bot's store runs inside the block, in order."""
    store = running.bot.app.db.store
    assert isinstance(store, SQLiteStore)
    seen: list[str] = []
    await store.connection.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        await store.connection.set_trace_callback(None)


def tables(seen: list[str]) -> list[str]:
    """The table each statement reads or writes, in order ('nicks': the /set nicks of the
    people a message names, from the members' settings)."""
    return [
        "nicks" if NICKS in sql else found[1] if (found := TABLE.search(sql)) else sql
        for sql in seen
    ]


@pytest.fixture
async def quiet_bot(
    tmp_path: Path, tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[RunningBot]:
    """A bot whose idle watch (server settings every 15 s) stays out of the counts."""
    monkeypatch.setattr(IdleUpkeep, "every_s", 3600.0)
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        yield running


async def read_counted(running: RunningBot, text: str, mentions: tuple[str, ...] = ()) -> list[str]:
    """The statements run while one chat message of alice's is decided, and it was read."""
    async with statements(running) as seen:
        message = await running.fake.post("alice", text, mentions=mentions)
        assert await outcome(running, message) == "read"
    return seen


async def say_counted(running: RunningBot, text: str) -> list[str]:
    async with statements(running) as seen:
        reply = await (await running.fake.interaction("say", {"text": text})).wait_final()
    assert f"in <#{VOICE}>" in reply["content"], reply["content"]  # speaking or queued
    return seen


def show(what: str, seen: list[str]) -> None:
    print(f"{what}: {len(seen)} queries: {', '.join(tables(seen))}")


async def test_queries_per_chat_message_and_per_say(quiet_bot: RunningBot) -> None:
    running, fake = quiet_bot, quiet_bot.fake
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    assert await outcome(running, await fake.post("alice", "warming up")) == "read"
    await fake.wait_for(lambda: len(speaker(running).history) == 1, 20, "the first reading")

    plain = await read_counted(running, "hello there")
    show("chat message", plain)
    mentioning = await read_counted(running, "hello <@1200000000000000002>", ("bob",))
    show("chat message with a mention", mentioning)
    said = await say_counted(running, "Hello.")
    show("/say", said)

    await (await clone(fake, "Mine")).wait_content("is ready")
    await (await fake.interaction("voice use", {"name": "Mine"})).wait_final()
    cloned = await read_counted(running, "in my own voice")
    show("chat message, cloned voice", cloned)
    said_cloned = await say_counted(running, "In my own voice.")
    show("/say, cloned voice", said_cloned)

    # (the first reading, three spoken in the default voice, the clone's sample, two in it)
    await fake.wait_for(lambda: len(speaker(running).history) == 7, 60, "the speech")
    spoken = list(speaker(running).history)[-2:]
    assert all(result.voice and result.voice.endswith(".safetensors") for result in spoken)
    assert "voices" in tables(cloned) and "voices" in tables(said_cloned)

    # the server's settings and the member's are read once each, whatever else is read
    for seen in (plain, mentioning, said, cloned, said_cloned):
        read = collections.Counter(tables(seen))
        assert read["server_settings"] == 1 and read["member_settings"] == 1, tables(seen)
    # (it was 8, 8, 9, 4 and 5: the server's settings read up to three times, the member's
    # twice, the voice choice's record twice; then 4, 5 and 5, before a chat message also read
    # the server's read channels (several now) and its dictionary's sounds, one query each)
    assert len(plain) <= 6 and len(mentioning) <= 7 and len(cloned) <= 7
    # (/say reads the server's dictionary for its language too, as a chat message does)
    assert len(said) <= 4 and len(said_cloned) <= 5
    assert "pronunciations" in tables(said) and "pronunciations" in tables(said_cloned)


async def test_a_flood_costs_three_queries_a_message(quiet_bot: RunningBot) -> None:
    """A rate-limited message is decided on the server's settings, its read channels and the
    member's settings alone."""
    running, fake = quiet_bot, quiet_bot.fake
    await setup_read_channel(fake)
    limit = fake.interaction("config limits rate_limit", {"value": 1}, permissions=ADMIN)
    assert " is now " in (await (await limit).wait_final())["content"]
    await fake.set_voice_state("alice", VOICE)
    assert await outcome(running, await fake.post("alice", "warming up")) == "read"
    async with statements(running) as seen:
        flood = await fake.post("alice", "too much")
        assert await outcome(running, flood) == "rate limited"
    show("rate-limited message", seen)
    assert tables(seen) == ["server_settings", "read_channels", "member_settings"]
