"""`python -m bot db copy`: move a SQLite store into PostgreSQL, every row, and check it.

Both stores are migrated to the same schema first. The copy runs in one PostgreSQL
transaction into a database that holds no PocketVoice data yet, keeps every id (voices keep
their ids, so members' choices still point at them), and reads everything back to compare
before it commits: a copy is complete or it did not happen.
"""

from __future__ import annotations

from bot.core.errors import OperatorError
from bot.storage.database import Database

# Parents before the tables that refer to them; any newer table follows.
ORDER = ["voices", "voice_choices", "server_settings", "member_settings", "pronunciations"]


class CopyError(OperatorError, RuntimeError):
    """The copy cannot be made; nothing was written."""


async def _tables(db: Database) -> list[str]:
    rows = await db.fetch(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " AND name <> 'schema_migrations'"
    )
    names = {row[0] for row in rows}
    return [t for t in ORDER if t in names] + sorted(names - set(ORDER))


async def _columns(db: Database, table: str) -> list[str]:
    return [row[1] for row in await db.fetch(f"PRAGMA table_info({table})")]


async def copy_store(source: Database, target: Database) -> dict[str, int]:
    """Copy every row of `source` (SQLite) into `target` (PostgreSQL); rows per table."""
    if source.dialect != "sqlite" or target.dialect != "postgresql":
        raise CopyError("db copy moves a SQLite store into PostgreSQL")
    versions = await source.applied_migrations(), await target.applied_migrations()
    if versions[0] != versions[1]:
        raise CopyError(f"schema versions differ: {versions[0]} and {versions[1]}")
    tables = await _tables(source)
    for table in tables:
        if await target.fetch_one(f"SELECT 1 FROM {table} LIMIT 1") is not None:
            raise CopyError(
                f"the PostgreSQL database already holds PocketVoice data ({table}): copy into "
                "an empty one"
            )
    copied: dict[str, int] = {}
    async with target.transaction():
        for table in tables:
            columns = await _columns(source, table)
            listed = ", ".join(columns)
            rows = [tuple(row) for row in await source.fetch(f"SELECT {listed} FROM {table}")]
            marks = ", ".join("?" * len(columns))
            for row in rows:
                await target.execute(f"INSERT INTO {table} ({listed}) VALUES ({marks})", *row)
            back = {tuple(row) for row in await target.fetch(f"SELECT {listed} FROM {table}")}
            if back != set(rows) or len(back) != len(rows):
                raise CopyError(f"{table}: the rows read back differ from the source")
            copied[table] = len(rows)
        if "voices" in tables:  # new voices get ids after the copied ones
            await target.execute(
                "SELECT setval(pg_get_serial_sequence('voices', 'id'),"
                " (SELECT COALESCE(MAX(id), 0) + 1 FROM voices), false)"
            )
    return copied
