"""The migrations runner: the numbered SQL files of `migrations/` applied in order, each in its
own transaction and recorded in `schema_migrations` within it, the same way on both stores
(SQLite and PostgreSQL: `bot/storage/stores.py` gives the transaction and the lock).

A file is `NNNN_description.sql`; one whose SQL differs per dialect has its PostgreSQL form
of the same name in `postgresql/`. A database migrated by a newer PocketVoice is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from bot.core.errors import OperatorError
from bot.storage.stores import SCRIPT_ERRORS, Store, utc_now

# The repository's top-level migrations/ folder, shipped in the wheel as `bot.migrations`.
MIGRATIONS_DIR: Traversable = resources.files("bot.migrations")
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
SCHEMA_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)


class DatabaseTooNewError(OperatorError, RuntimeError):
    """The database was migrated by a newer PocketVoice: refuse to touch it."""

    label = "Database error"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Traversable


def discover_migrations(
    folder: Traversable = MIGRATIONS_DIR, dialect: str = "sqlite"
) -> list[Migration]:
    """The migrations in `folder`, by version, each in `dialect`'s form where it has one."""
    found: dict[int, Migration] = {}
    scripts = (p for p in folder.iterdir() if p.name.endswith(".sql"))
    own = folder / dialect
    for path in sorted(scripts, key=lambda p: p.name):
        match = _MIGRATION_NAME.match(path.name)
        if match is None:
            raise RuntimeError(f"migration file {path.name} is not named NNNN_description.sql")
        version = int(match.group(1))
        if version in found:
            raise RuntimeError(f"two migrations share version {version:04d}")
        if own.is_dir() and (own / path.name).is_file():
            path = own / path.name
        found[version] = Migration(version, match.group(2), path)
    return [found[v] for v in sorted(found)]


async def applied_migrations(store: Store) -> list[int]:
    """The versions applied to the store, in order (none yet: an empty list)."""
    await store.execute(SCHEMA_TABLE)
    rows = await store.fetch("SELECT version FROM schema_migrations ORDER BY version")
    return [int(row[0]) for row in rows]


async def apply(store: Store, migration: Migration) -> None:
    """One migration and its record, in one transaction: all of it or nothing."""
    sql = migration.path.read_text(encoding="utf-8")
    # The record's values are ours (a version number, a name of [a-z0-9_], a timestamp):
    # written into the script, so that one script is the whole transaction on both stores.
    record = (
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES "
        f"({migration.version}, '{migration.name}', '{utc_now()}')"
    )
    try:
        await store.run_script(f"{sql}\n;\n{record};")
    except SCRIPT_ERRORS as error:
        raise RuntimeError(
            f"migration {migration.path.name} failed: {error}; nothing of it was applied"
        ) from error


async def migrate(store: Store, folder: Traversable = MIGRATIONS_DIR) -> list[int]:
    """Apply the pending migrations in order; the versions applied now. Of processes sharing
    a store and starting together, one migrates and the others then find the work done."""
    known = discover_migrations(folder, store.dialect)
    newest_known = known[-1].version if known else 0
    newly: list[int] = []
    async with store.migrating():
        applied = await applied_migrations(store)
        if applied and applied[-1] > newest_known:
            raise DatabaseTooNewError(
                f"the database is at schema version {applied[-1]}, but this PocketVoice "
                f"only knows up to {newest_known}: run the newer version, or restore a backup"
            )
        done = set(applied)
        for migration in known:
            if migration.version not in done:
                await apply(store, migration)
                newly.append(migration.version)
    return newly
