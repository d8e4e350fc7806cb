"""The two stores behind `bot.storage.database.Database`: SQLite, one file for one process (the
default), and PostgreSQL, shared by several bot processes (`DATABASE_URL`).

Both take SQL written with `?` placeholders, return rows that index by position and by name,
raise `ConstraintError` when a constraint refuses a write, and run a script of statements in
one transaction (`run_script`, raising one of `SCRIPT_ERRORS`) under a lock that one process
holds at a time (`migrating`): what the migrations runner (`bot/storage/migrations.py`) needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import re
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import aiosqlite
import asyncpg

from bot.core.errors import InternalError
from bot.core.files import make_private_dir

Row = Sequence[Any]  # aiosqlite.Row and asyncpg.Record: by position and by name
# What a broken or unreachable store raises (beyond constraint refusals).
STORE_ERRORS: tuple[type[BaseException], ...] = (
    sqlite3.Error,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    OSError,
)
# What a script that fails raises (nothing of it is then applied).
SCRIPT_ERRORS: tuple[type[BaseException], ...] = (sqlite3.Error, asyncpg.PostgresError)
MIGRATION_LOCK = 0x70766D67  # PostgreSQL advisory lock: one process migrates at a time


class ConstraintError(InternalError):
    """A unique, check or foreign-key constraint refused the write."""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store(Protocol):
    dialect: str

    async def fetch(self, sql: str, args: Sequence[object] = ()) -> list[Row]: ...
    async def execute(self, sql: str, args: Sequence[object] = ()) -> int: ...
    async def insert(self, sql: str, args: Sequence[object] = ()) -> int: ...
    def transaction(self) -> contextlib.AbstractAsyncContextManager[None]: ...
    async def run_script(self, script: str) -> None: ...
    def migrating(self) -> contextlib.AbstractAsyncContextManager[None]: ...
    async def close(self) -> None: ...


# ---- SQLite -----------------------------------------------------------------------------------
class SQLiteStore:
    """One aiosqlite connection in autocommit mode. Writes are serialized by one lock: a
    multi-statement write runs in `transaction()` (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on
    error), so no member's write can land inside another member's open transaction."""

    dialect = "sqlite"

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self.connection = connection
        self._write_lock = asyncio.Lock()
        self._writer: asyncio.Task[object] | None = None  # the task inside `transaction()`

    @classmethod
    async def open(cls, path: Path) -> SQLiteStore:
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
        return cls(connection)

    async def close(self) -> None:
        await self.connection.close()

    async def fetch(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        async with self.connection.execute(sql, tuple(args)) as cursor:
            return list(await cursor.fetchall())

    @contextlib.asynccontextmanager
    async def _writing(self) -> AsyncIterator[None]:
        """The write lock, unless this task holds it already (inside its transaction)."""
        if self._writer is not None and self._writer is asyncio.current_task():
            yield
            return
        async with self._write_lock:
            yield

    async def execute(self, sql: str, args: Sequence[object] = ()) -> int:
        async with self._writing():
            try:
                cursor = await self.connection.execute(sql, tuple(args))
            except sqlite3.IntegrityError as error:
                raise ConstraintError(str(error)) from error
        return cursor.rowcount

    async def insert(self, sql: str, args: Sequence[object] = ()) -> int:
        """An INSERT ... RETURNING id; the new row's id."""
        async with self._writing():
            try:
                async with self.connection.execute(sql, tuple(args)) as cursor:
                    row = await cursor.fetchone()
            except sqlite3.IntegrityError as error:
                raise ConstraintError(str(error)) from error
        assert row is not None
        return int(row[0])

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        async with self._write_lock:
            await self.connection.execute("BEGIN IMMEDIATE")
            self._writer = asyncio.current_task()
            try:
                yield
            except BaseException:
                await self.connection.execute("ROLLBACK")
                raise
            else:
                await self.connection.execute("COMMIT")
            finally:
                self._writer = None

    @contextlib.asynccontextmanager
    async def migrating(self) -> AsyncIterator[None]:
        yield  # one process owns the file

    async def run_script(self, script: str) -> None:
        """Statements separated by `;`, in one transaction (a failure rolls all back)."""
        async with self._writing():
            try:
                await self.connection.executescript(f"BEGIN IMMEDIATE;\n{script}\n;COMMIT;")
            except sqlite3.Error:
                if self.connection.in_transaction:
                    await self.connection.execute("ROLLBACK")
                raise


# ---- PostgreSQL -------------------------------------------------------------------------------
_PLACEHOLDER = re.compile(r"\?|'(?:[^']|'')*'")


def numbered(sql: str) -> str:
    """`?` placeholders as PostgreSQL's `$1, $2, ...` (not inside quoted literals)."""
    count = 0

    def number(match: re.Match[str]) -> str:
        nonlocal count
        if match.group() != "?":
            return match.group()
        count += 1
        return f"${count}"

    return _PLACEHOLDER.sub(number, sql)


class PostgresStore:
    """A connection pool. Concurrent processes are kept safe by the database itself
    (constraints, transactions, an advisory lock while migrating), not by locks here. A
    task inside `transaction()` runs all its statements on that transaction's connection."""

    dialect = "postgresql"

    def __init__(self, pool: asyncpg.Pool, url: str = "") -> None:
        self.pool = pool
        self._url = url  # for the listening connection; holds a password: never logged
        self._current: contextvars.ContextVar[asyncpg.Connection | None] = contextvars.ContextVar(
            f"pg-transaction-{id(self)}", default=None
        )

    @classmethod
    async def open(cls, url: str, *, max_size: int = 10) -> PostgresStore:
        pool = await asyncpg.create_pool(
            url, min_size=1, max_size=max_size, command_timeout=30, timeout=10
        )
        return cls(pool, url)

    async def listen(
        self, channel: str, on_message: Callable[[str], None], on_connected: Callable[[], None]
    ) -> None:
        """Call `on_message(payload)` for each NOTIFY on `channel` while the connection lasts;
        returns when it is lost (the caller reconnects). `on_connected` runs once listening,
        so a caller can catch up on what it may have missed while disconnected."""
        connection = await asyncpg.connect(self._url, timeout=10)
        lost = asyncio.Event()
        try:
            await connection.add_listener(channel, lambda *args: on_message(args[-1]))
            connection.add_termination_listener(lambda _: lost.set())
            on_connected()
            while not lost.is_set() and not connection.is_closed():
                with contextlib.suppress(TimeoutError):  # a quiet link is checked now and then
                    await asyncio.wait_for(lost.wait(), 30)
                if not lost.is_set():
                    await connection.execute("SELECT 1", timeout=10)
        finally:
            with contextlib.suppress(*STORE_ERRORS, TimeoutError):
                await asyncio.wait_for(connection.close(), 5)

    async def close(self) -> None:
        await asyncio.wait_for(self.pool.close(), 10)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[asyncpg.Connection]:
        current = self._current.get()
        if current is not None:
            yield current
            return
        async with self.pool.acquire(timeout=10) as connection:
            yield connection

    async def fetch(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        async with self._connection() as connection:
            return list(await connection.fetch(numbered(sql), *args))

    async def execute(self, sql: str, args: Sequence[object] = ()) -> int:
        async with self._connection() as connection:
            try:
                status = await connection.execute(numbered(sql), *args)
            except asyncpg.IntegrityConstraintViolationError as error:
                raise ConstraintError(str(error)) from error
        count = status.rsplit(" ", 1)[-1]  # "UPDATE 3", "INSERT 0 1"
        return int(count) if count.isdigit() else 0

    async def insert(self, sql: str, args: Sequence[object] = ()) -> int:
        async with self._connection() as connection:
            try:
                return int(await connection.fetchval(numbered(sql), *args))
            except asyncpg.IntegrityConstraintViolationError as error:
                raise ConstraintError(str(error)) from error

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        async with self.pool.acquire(timeout=10) as connection, connection.transaction():
            token = self._current.set(connection)
            try:
                yield
            finally:
                self._current.reset(token)

    @contextlib.asynccontextmanager
    async def migrating(self) -> AsyncIterator[None]:
        """Hold the migration lock: of processes starting together, one migrates and the
        others then find the work done."""
        async with self.pool.acquire(timeout=10) as connection:
            await connection.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
            token = self._current.set(connection)
            try:
                yield
            finally:
                self._current.reset(token)
                await connection.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)

    async def run_script(self, script: str) -> None:
        """Statements separated by `;`, in one transaction (a failure rolls all back)."""
        async with self._connection() as connection, connection.transaction():
            await connection.execute(script)  # no arguments: several statements may run


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


async def open_store(location: Path | str) -> Store:
    """PostgreSQL for a `postgresql://` URL, else the SQLite file at `location`."""
    if is_postgres_url(location):
        return await PostgresStore.open(str(location))
    return await SQLiteStore.open(Path(location))


def _touch_private(path: Path) -> None:
    """The database and its WAL and shared-memory files: 0600."""
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if file == path and not file.exists():
            os.close(os.open(file, os.O_CREAT | os.O_WRONLY, 0o600))
        if file.exists():
            os.chmod(file, 0o600)
