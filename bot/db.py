"""SQLite storage: one aiosqlite connection, numbered SQL migrations, small typed repositories.

The connection runs in autocommit mode. Writes are serialized by one lock: a multi-statement
write uses `Database.transaction()` (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on error), a single
statement `Database.write()`. So no member's write can land inside another member's open
transaction (and be rolled back with it). Keep transactions short: no file or model work
inside them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import aiosqlite

from bot.server_settings import SETTINGS, ServerSettings

DATABASE_NAME = "pocketvoice.db"  # in DATA_DIR

# The repository's top-level migrations/ folder, shipped in the wheel as `bot.migrations`.
MIGRATIONS_DIR: Traversable = resources.files("bot.migrations")
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
GLOBAL = 0  # guild_id of a choice that applies in every server


class DatabaseTooNewError(RuntimeError):
    """The database was migrated by a newer PocketVoice: refuse to touch it."""


class NameTakenError(ValueError):
    pass


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Traversable


def discover_migrations(folder: Traversable = MIGRATIONS_DIR) -> list[Migration]:
    found: dict[int, Migration] = {}
    scripts = (p for p in folder.iterdir() if p.name.endswith(".sql"))
    for path in sorted(scripts, key=lambda p: p.name):
        match = _MIGRATION_NAME.match(path.name)
        if match is None:
            raise RuntimeError(f"migration file {path.name} is not named NNNN_description.sql")
        version = int(match.group(1))
        if version in found:
            raise RuntimeError(f"two migrations share version {version:04d}")
        found[version] = Migration(version, match.group(2), path)
    return [found[v] for v in sorted(found)]


class Database:
    def __init__(self, connection: aiosqlite.Connection) -> None:
        self.connection = connection
        self._write_lock = asyncio.Lock()
        self._writer: asyncio.Task[object] | None = None  # the task inside `transaction()`
        self.voices = VoiceRepository(self)
        self.choices = ChoiceRepository(self)
        self.guilds = GuildSettingsRepository(self)
        self.members = MemberSettingsRepository(self)
        self.dictionary = DictionaryRepository(self)

    @classmethod
    async def open(
        cls, path: Path, *, migrations: Traversable = MIGRATIONS_DIR, migrate: bool = True
    ) -> Database:
        await asyncio.to_thread(make_private_dir, path.parent)
        await asyncio.to_thread(_touch_private, path)
        connection = await aiosqlite.connect(path, isolation_level=None)
        connection.row_factory = aiosqlite.Row
        for pragma in (
            "journal_mode = WAL",
            "foreign_keys = ON",
            "busy_timeout = 5000",
            "synchronous = NORMAL",
        ):
            await connection.execute(f"PRAGMA {pragma}")
        database = cls(connection)
        if migrate:
            try:
                await database.migrate(migrations)
            except BaseException:
                await connection.close()
                raise
        return database

    async def close(self) -> None:
        await self.connection.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._write_lock:
            await self.connection.execute("BEGIN IMMEDIATE")
            self._writer = asyncio.current_task()
            try:
                yield self.connection
            except BaseException:
                await self.connection.execute("ROLLBACK")
                raise
            else:
                await self.connection.execute("COMMIT")
            finally:
                self._writer = None

    async def write(self, sql: str, args: tuple[object, ...] = ()) -> aiosqlite.Cursor:
        """One writing statement, never inside another task's transaction (inside this
        task's own transaction it simply joins it)."""
        if self._writer is not None and self._writer is asyncio.current_task():
            return await self.connection.execute(sql, args)
        async with self._write_lock:
            return await self.connection.execute(sql, args)

    async def applied_migrations(self) -> list[int]:
        await self.connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        async with self.connection.execute(
            "SELECT version FROM schema_migrations ORDER BY version"
        ) as cursor:
            return [row[0] async for row in cursor]

    async def migrate(self, folder: Traversable = MIGRATIONS_DIR) -> list[int]:
        """Apply pending migrations, each in its own transaction; returns their versions."""
        known = discover_migrations(folder)
        applied = await self.applied_migrations()
        newest_known = known[-1].version if known else 0
        if applied and applied[-1] > newest_known:
            raise DatabaseTooNewError(
                f"the database is at schema version {applied[-1]}, but this PocketVoice only "
                f"knows up to {newest_known}: run the newer version, or restore a backup"
            )
        done = set(applied)
        newly: list[int] = []
        for migration in known:
            if migration.version in done:
                continue
            sql = migration.path.read_text(encoding="utf-8")
            script = (
                f"BEGIN IMMEDIATE;\n{sql}\n;"
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES "
                f"({migration.version}, '{migration.name}', '{utc_now()}');\nCOMMIT;"
            )
            try:
                await self.connection.executescript(script)
            except sqlite3.Error as error:
                if self.connection.in_transaction:
                    await self.connection.execute("ROLLBACK")
                raise RuntimeError(
                    f"migration {migration.path.name} failed: {error}; nothing of it was applied"
                ) from error
            newly.append(migration.version)
        return newly


# ---- voices -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class VoiceRecord:
    id: int
    owner_id: int
    name: str
    model_fingerprint: str
    state_path: str
    clip_path: str
    sha256: str
    duration_s: float
    state_bytes: int
    clip_bytes: int
    created_at: str
    consented_at: str
    upload_sha256: str | None = None
    consent_guild_id: int | None = None

    @classmethod
    def from_row(cls, row: aiosqlite.Row) -> VoiceRecord:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


def name_key(name: str) -> str:
    return name.strip().casefold()


class VoiceRepository:
    _COLUMNS = ", ".join(VoiceRecord.__dataclass_fields__)

    def __init__(self, db: Database) -> None:
        self._db = db

    async def _fetch(self, where: str, *args: object) -> list[VoiceRecord]:
        sql = f"SELECT {self._COLUMNS} FROM voices WHERE {where} ORDER BY created_at, id"
        async with self._db.connection.execute(sql, args) as cursor:
            return [VoiceRecord.from_row(row) async for row in cursor]

    async def list_for(self, owner_id: int) -> list[VoiceRecord]:
        return await self._fetch("owner_id = ?", owner_id)

    async def list_all(self) -> list[VoiceRecord]:
        return await self._fetch("1")

    async def count_for(self, owner_id: int) -> int:
        async with self._db.connection.execute(
            "SELECT COUNT(*) FROM voices WHERE owner_id = ?", (owner_id,)
        ) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def get(self, owner_id: int, name: str) -> VoiceRecord | None:
        found = await self._fetch("owner_id = ? AND name_key = ?", owner_id, name_key(name))
        return found[0] if found else None

    async def id_by_state_path(self, state_path: str) -> int | None:
        async with self._db.connection.execute(
            "SELECT id FROM voices WHERE state_path = ?", (state_path,)
        ) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else None

    async def get_by_id(self, voice_id: int) -> VoiceRecord | None:
        found = await self._fetch("id = ?", voice_id)
        return found[0] if found else None

    async def insert(
        self,
        *,
        owner_id: int,
        name: str,
        model_fingerprint: str,
        state_path: str,
        clip_path: str,
        sha256: str,
        duration_s: float,
        state_bytes: int,
        clip_bytes: int,
        consented_at: str,
        upload_sha256: str | None = None,
        consent_guild_id: int | None = None,
    ) -> int:
        """One short write, once the voice's files are complete on disk."""
        try:
            cursor = await self._db.write(
                "INSERT INTO voices (owner_id, name, name_key, model_fingerprint, state_path,"
                " clip_path, sha256, duration_s, state_bytes, clip_bytes, created_at,"
                " consented_at, upload_sha256, consent_guild_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (owner_id, name.strip(), name_key(name), model_fingerprint, state_path,
                 clip_path, sha256, duration_s, state_bytes, clip_bytes, utc_now(),
                 consented_at, upload_sha256, consent_guild_id),
            )  # fmt: skip
        except sqlite3.IntegrityError as error:
            raise NameTakenError(name) from error
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def set_state(self, voice_id: int, fingerprint: str, state_bytes: int) -> None:
        await self._db.write(
            "UPDATE voices SET model_fingerprint = ?, state_bytes = ? WHERE id = ?",
            (fingerprint, state_bytes, voice_id),
        )

    async def rename(self, voice_id: int, new_name: str) -> None:
        try:
            await self._db.write(
                "UPDATE voices SET name = ?, name_key = ? WHERE id = ?",
                (new_name.strip(), name_key(new_name), voice_id),
            )
        except sqlite3.IntegrityError as error:
            raise NameTakenError(new_name) from error

    async def delete(self, voice_id: int) -> None:
        await self._db.write("DELETE FROM voices WHERE id = ?", (voice_id,))


# ---- voice choices ----------------------------------------------------------------------------
@dataclass(frozen=True)
class VoiceChoice:
    guild_id: int  # GLOBAL (0) for everywhere
    builtin_name: str | None
    voice_id: int | None


class ChoiceRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def set(
        self, user_id: int, guild_id: int | None, *, builtin: str | None = None,
        voice_id: int | None = None,
    ) -> None:  # fmt: skip
        await self._db.write(
            "INSERT INTO voice_choices (user_id, guild_id, builtin_name, voice_id)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (user_id, guild_id) DO UPDATE SET"
            " builtin_name = excluded.builtin_name, voice_id = excluded.voice_id",
            (user_id, guild_id or GLOBAL, builtin, voice_id),
        )

    async def for_user(self, user_id: int, guild_id: int | None) -> VoiceChoice | None:
        """This server's choice, else the global one."""
        async with self._db.connection.execute(
            "SELECT guild_id, builtin_name, voice_id FROM voice_choices"
            " WHERE user_id = ? AND guild_id IN (?, ?) ORDER BY guild_id = ? LIMIT 1",
            (user_id, guild_id or GLOBAL, GLOBAL, GLOBAL),
        ) as cursor:
            row = await cursor.fetchone()
        return VoiceChoice(row[0], row[1], row[2]) if row else None

    async def delete_for_user(self, user_id: int) -> None:
        await self._db.write("DELETE FROM voice_choices WHERE user_id = ?", (user_id,))


# ---- server settings -------------------------------------------------------------------------
class GuildSettingsRepository:
    """Server settings as key/value rows over the defaults of `ServerSettings`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, guild_id: int) -> ServerSettings:
        async with self._db.connection.execute(
            "SELECT key, value FROM server_settings WHERE guild_id = ?", (guild_id,)
        ) as cursor:
            stored = {row[0]: json.loads(row[1]) async for row in cursor}
        return ServerSettings(guild_id, **{k: v for k, v in stored.items() if k in SETTINGS})

    async def set(self, guild_id: int, key: str, value: object) -> None:
        if key not in SETTINGS:
            raise KeyError(key)
        await self._db.write(
            "INSERT INTO server_settings (guild_id, key, value) VALUES (?, ?, ?)"
            " ON CONFLICT (guild_id, key) DO UPDATE SET value = excluded.value",
            (guild_id, key, json.dumps(value)),
        )

    async def set_cloning(self, guild_id: int, enabled: bool) -> None:
        await self.set(guild_id, "cloning", enabled)

    async def set_default_voice(self, guild_id: int, voice: str | None) -> None:
        await self.set(guild_id, "default_voice", voice)


# ---- member settings -------------------------------------------------------------------------
@dataclass(frozen=True)
class MemberSettings:
    nick: str | None = None
    autoread: bool = True
    language: str | None = None  # their own language here (None: the server's)


class MemberSettingsRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, user_id: int, guild_id: int) -> MemberSettings:
        async with self._db.connection.execute(
            "SELECT nick, autoread, language FROM member_settings"
            " WHERE user_id = ? AND guild_id = ?",
            (user_id, guild_id),
        ) as cursor:
            row = await cursor.fetchone()
        return MemberSettings(row[0], bool(row[1]), row[2]) if row else MemberSettings()

    async def set_nick(self, user_id: int, guild_id: int, nick: str | None) -> None:
        await self._db.write(
            "INSERT INTO member_settings (user_id, guild_id, nick) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET nick = excluded.nick",
            (user_id, guild_id, nick),
        )

    async def set_autoread(self, user_id: int, guild_id: int, enabled: bool) -> None:
        await self._db.write(
            "INSERT INTO member_settings (user_id, guild_id, autoread) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET autoread = excluded.autoread",
            (user_id, guild_id, int(enabled)),
        )

    async def set_language(self, user_id: int, guild_id: int, language: str | None) -> None:
        await self._db.write(
            "INSERT INTO member_settings (user_id, guild_id, language) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET language = excluded.language",
            (user_id, guild_id, language),
        )

    async def nicks(self, guild_id: int, user_ids: list[int]) -> dict[int, str]:
        if not user_ids:
            return {}
        marks = ",".join("?" * len(user_ids))
        async with self._db.connection.execute(
            f"SELECT user_id, nick FROM member_settings WHERE guild_id = ? AND nick IS NOT NULL"
            f" AND user_id IN ({marks})",
            (guild_id, *user_ids),
        ) as cursor:
            return {row[0]: row[1] async for row in cursor}

    async def forget_user(self, user_id: int) -> None:
        """Forget a member's nicknames; keep an opt-out from auto-reading (a privacy choice,
        not data about them)."""
        async with self._db.transaction() as connection:
            await connection.execute(
                "UPDATE member_settings SET nick = NULL, language = NULL WHERE user_id = ?",
                (user_id,),
            )
            await connection.execute(
                "DELETE FROM member_settings WHERE user_id = ? AND autoread <> 0", (user_id,)
            )


# ---- pronunciation dictionary ----------------------------------------------------------------
class DictionaryRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def entries(self, guild_id: int) -> dict[str, str]:
        async with self._db.connection.execute(
            "SELECT word, spoken FROM pronunciations WHERE guild_id = ? ORDER BY word_key",
            (guild_id,),
        ) as cursor:
            return {row[0]: row[1] async for row in cursor}

    async def count(self, guild_id: int) -> int:
        async with self._db.connection.execute(
            "SELECT COUNT(*) FROM pronunciations WHERE guild_id = ?", (guild_id,)
        ) as cursor:
            row = await cursor.fetchone()
        return int(row[0]) if row else 0

    async def add(self, guild_id: int, word: str, spoken: str) -> None:
        await self._db.write(
            "INSERT INTO pronunciations (guild_id, word_key, word, spoken) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (guild_id, word_key) DO UPDATE SET word = excluded.word,"
            " spoken = excluded.spoken",
            (guild_id, word.casefold(), word, spoken),
        )

    async def remove(self, guild_id: int, word: str) -> bool:
        cursor = await self._db.write(
            "DELETE FROM pronunciations WHERE guild_id = ? AND word_key = ?",
            (guild_id, word.casefold()),
        )
        return cursor.rowcount > 0


def make_private_dir(folder: Path) -> None:
    """Create `folder` (and parents) readable by the bot's user only (0700)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)


def _touch_private(path: Path) -> None:
    """The database and its WAL and shared-memory files: 0600."""
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if file == path and not file.exists():
            os.close(os.open(file, os.O_CREAT | os.O_WRONLY, 0o600))
        if file.exists():
            os.chmod(file, 0o600)
