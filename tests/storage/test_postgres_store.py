"""PostgreSQL as an operator uses it (a real server the suite starts): `migrate` and `doctor`
against `DATABASE_URL`, and `db copy` moving a populated SQLite store into it without loss."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from bot.core.config import load_config
from bot.doctor import check_database
from bot.storage.database import Database, DictionarySound
from bot.storage.migrations import discover_migrations
from tests.postgres_server import PostgresServer
from tests.storage.test_db import add_voice
from tests.test_cli import run_cli

LATEST = discover_migrations(dialect="postgresql")[-1].version


async def populated_sqlite(path: Path) -> dict[str, object]:
    """A store with something in every table; what a member and an admin would see."""
    db = await Database.open(path)
    try:
        mine = await add_voice(db, 1100000000000000001, "Mine")  # a real-size Discord id
        await add_voice(db, 2, "Other")  # made before recordings were kept in the store:
        (path.parent / "2").mkdir()  # its recording is a file in DATA_DIR, which the copy takes
        (path.parent / "2" / "Other.flac").write_bytes(b"fLaC old recording")
        gone = await db.voices.get_by_id(await add_voice(db, 2, "Gone"))
        await db.voices.delete(gone)  # type: ignore[arg-type]  # ids with a hole
        await db.voices.put_recording(mine, b"fLaC" + bytes(range(256)) * 100)
        await db.voices.put_state(mine, "fp", b"state" + bytes(1000))
        await db.choices.set(1100000000000000001, None, voice_id=mine)
        await db.choices.set(2, 1100000000000000009, builtin="alba")
        await db.guilds.set(1100000000000000009, "language", "french")
        await db.guilds.set(1100000000000000009, "cloning", False)
        await db.members.set_nick(2, 1100000000000000009, "Deux")
        await db.members.set_autoread(3, 1100000000000000009, False)
        await db.members.set_language(2, 1100000000000000009, "german")
        await db.dictionary.add(1100000000000000009, "NYC", "New York City")
        pcm = bytes(range(256)) * 10
        await db.sounds.put(1100000000000000009, [DictionarySound("Boom", pcm, "sha")], 20)
        return await snapshot(db)
    finally:
        await db.close()


async def snapshot(db: Database) -> dict[str, object]:
    guild = 1100000000000000009
    return {
        "voices": await db.voices.list_all(),
        "choices": [await db.choices.for_user(u, guild) for u in (1100000000000000001, 2)],
        "settings": await db.guilds.get(guild),
        "members": [await db.members.get(u, guild) for u in (2, 3)],
        "dictionary": await db.dictionary.entries(guild),
        "recordings": [await db.voices.recording(v.id) for v in await db.voices.list_all()],
        "states": [await db.voices.state(v.id, "fp") for v in await db.voices.list_all()],
        "sounds": await db.sounds.all(guild),
    }


async def test_db_copy_moves_a_populated_store_without_loss(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    data = tmp_path / "data"
    before = await populated_sqlite(data / "pocketvoice.db")
    assert before["recordings"][1] is None  # type: ignore[index]
    before["recordings"][1] = b"fLaC old recording"  # type: ignore[index]
    url = await postgres.new_database()
    env = {"DATA_DIR": str(data)}

    done = run_cli(["db", "copy", "--to", url], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert "voices 2, voice_choices 2, server_settings 2, member_settings 2" in done.stdout
    target = await Database.open(url)
    try:
        assert await snapshot(target) == before
        # a new voice gets an id after the copied ones
        new_id = await add_voice(target, 4, "New")
        assert new_id > max(v.id for v in before["voices"])  # type: ignore[attr-defined]
    finally:
        await target.close()

    # a second copy would mix two stores: refused, and nothing written
    again = run_cli(["db", "copy"], tmp_path, {**env, "DATABASE_URL": url})
    assert again.returncode == 1
    assert "Nothing was copied: the PostgreSQL database already holds" in again.stderr


async def test_doctor_checks_the_postgresql_database(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = await postgres.new_database()
    env = {"DATABASE_URL": url, "DATA_DIR": str(tmp_path)}
    settings = load_config(env, dotenv_path=None, require_token=False)
    fresh = await check_database(settings)
    assert fresh.ok and f"schema 0: migrated to {LATEST} at start" in fresh.detail
    await (await Database.open(url)).close()
    assert (await check_database(settings)).detail == f"schema {LATEST}, up to date"
    closed = postgres.url("nowhere").replace(str(postgres.port), str(postgres.port + 1))
    unreachable = settings.model_copy(update={"database_url": SecretStr(closed)})
    broken = await check_database(unreachable)
    assert not broken.ok and "cannot open it" in broken.detail
    assert "check DATABASE_URL" in (broken.fix or "")


async def test_migrate_and_voice_commands_against_postgresql(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = await postgres.new_database()
    env = {"DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": url}
    migrated = run_cli(["migrate"], tmp_path, env)
    assert migrated.returncode == 0, migrated.stderr
    assert (
        "Migrations applied: 0001, 0002, 0003, 0004, 0005, 0006, 0007, 0008, 0009, 0010,"
        " 0011, 0012."
        " Schema version 12." in migrated.stdout
    )
    assert not (tmp_path / "data" / "pocketvoice.db").exists()  # no SQLite beside it
    again = run_cli(["migrate"], tmp_path, env)
    assert "nothing to do. Schema version 12." in again.stdout
    listed = run_cli(["voices", "list"], tmp_path, env)
    assert listed.returncode == 0, listed.stderr
    # a wrong URL is one clear line, not a traceback
    wrong = run_cli(["migrate"], tmp_path, {**env, "DATABASE_URL": "mysql://x"})
    assert wrong.returncode == 2 and "DATABASE_URL must be a postgresql://" in wrong.stderr


async def test_another_process_sees_settings_and_dictionary_changes_at_once(
    postgres: PostgresServer,
) -> None:
    """Nothing caches them: each use reads the store, so a change made through one process's
    connection is what the next read of another process returns."""
    url = await postgres.new_database()
    one, other = await Database.open(url), await Database.open(url)
    try:
        guild = 1100000000000000009
        assert (await other.guilds.get(guild)).language is None
        await other.dictionary.entries(guild)  # read once before: nothing kept from it
        await one.guilds.set(guild, "language", "french")
        await one.dictionary.add(guild, "NYC", "New York City")
        await one.members.set_language(2, guild, "german")
        assert (await other.guilds.get(guild)).language == "french"
        assert await other.dictionary.entries(guild) == {"NYC": "New York City"}
        assert (await other.members.get(2, guild)).language == "german"
    finally:
        await one.close()
        await other.close()
