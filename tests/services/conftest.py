"""Fixtures of the services' unit tests: a server as one bot's discord.py state knows it
(`server`, started by each test once its people are in place) and the services on a SQLite
store of their own (`bot`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.storage.database import Database
from tests.services.discord_objects import Server
from tests.services.wiring import Bot, wire


@pytest.fixture
def server() -> Server:
    return Server()


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(tmp_path / "pv.db")
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
def bot(server: Server, db: Database, tmp_path: Path) -> Bot:
    return wire(server, db, tmp_path)
