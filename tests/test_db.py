import sqlite3
from pathlib import Path

import pytest

from bot.db import (
    MIGRATIONS_DIR,
    Database,
    DatabaseTooNewError,
    MemberSettings,
    NameTakenError,
)


async def add_voice(db: Database, owner: int, name: str) -> int:
    return await db.voices.insert(
        owner_id=owner, name=name, model_fingerprint="f", state_path=f"{owner}/{name}.st",
        clip_path=f"{owner}/{name}.flac", sha256="s", duration_s=3.0, state_bytes=1,
        clip_bytes=1, consented_at="now",
    )  # fmt: skip


async def tables(db: Database) -> set[str]:
    async with db.connection.execute("SELECT name FROM sqlite_master WHERE type='table'") as c:
        return {row[0] async for row in c}


async def test_migrates_an_empty_database_and_rerun_is_a_no_op(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "pv.db")
    try:
        expected = {"voices", "voice_choices", "server_settings", "member_settings"}
        assert expected | {"pronunciations", "schema_migrations"} <= await tables(db)
        assert await db.applied_migrations() == [1, 2, 3, 4]
        assert await db.migrate() == []
        async with db.connection.execute("PRAGMA journal_mode") as c:
            assert (await c.fetchone())[0] == "wal"
        async with db.connection.execute("PRAGMA foreign_keys") as c:
            assert (await c.fetchone())[0] == 1
    finally:
        await db.close()
    again = await Database.open(tmp_path / "pv.db")
    assert await again.applied_migrations() == [1, 2, 3, 4]
    await again.close()


async def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "pv.db")
    await db.connection.execute(
        "INSERT INTO schema_migrations VALUES (9999, 'from_the_future', '2030-01-01')"
    )
    await db.close()
    with pytest.raises(DatabaseTooNewError, match="9999"):
        await Database.open(tmp_path / "pv.db")


async def test_a_failing_migration_applies_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_voices_choices_settings.sql").write_text(
        (MIGRATIONS_DIR / "0001_voices_choices_settings.sql").read_text()
    )
    (folder / "0002_broken.sql").write_text("CREATE TABLE extra (x INTEGER);\nNOT SQL AT ALL;")
    with pytest.raises(RuntimeError, match=r"0002_broken\.sql failed"):
        await Database.open(tmp_path / "pv.db", migrations=folder)
    db = await Database.open(tmp_path / "pv.db")  # the real migrations then apply in order
    assert "extra" not in await tables(db)
    assert await db.applied_migrations() == [1, 2, 3, 4]
    await db.close()


async def test_voice_names_are_unique_per_owner_case_insensitively(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "pv.db")
    try:
        await add_voice(db, 1, "Me")
        with pytest.raises(NameTakenError):
            await add_voice(db, 1, " me ")
        await add_voice(db, 2, "me")
        assert [v.name for v in await db.voices.list_for(1)] == ["Me"]
        assert (await db.voices.get(1, "ME")) is not None
        assert await db.voices.count_for(2) == 1
    finally:
        await db.close()


async def test_choices_prefer_the_server_then_global_and_follow_deletion(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "pv.db")
    try:
        voice = await add_voice(db, 1, "Me")
        await db.choices.set(1, None, builtin="alba")
        assert (await db.choices.for_user(1, 500)).builtin_name == "alba"
        await db.choices.set(1, 500, voice_id=voice)
        assert (await db.choices.for_user(1, 500)).voice_id == voice
        assert (await db.choices.for_user(1, 600)).builtin_name == "alba"
        await db.voices.delete(voice)
        assert (await db.choices.for_user(1, 500)).builtin_name == "alba"  # cascade
        with pytest.raises(sqlite3.IntegrityError):  # exactly one of builtin / voice
            await db.choices.set(1, 700)
    finally:
        await db.close()


async def test_guild_settings_default_and_update(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "pv.db")
    try:
        assert (await db.guilds.get(5)).cloning is True
        await db.guilds.set_cloning(5, False)
        await db.guilds.set_default_voice(5, "marius")
        settings = await db.guilds.get(5)
        assert settings.cloning is False and settings.default_voice == "marius"
    finally:
        await db.close()


async def test_0002_keeps_the_server_settings_of_0001(tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    first = MIGRATIONS_DIR / "0001_voices_choices_settings.sql"
    (folder / first.name).write_text(first.read_text())
    old = await Database.open(tmp_path / "pv.db", migrations=folder)
    await old.connection.execute(
        "INSERT INTO guild_settings (guild_id, cloning_enabled, default_voice) VALUES"
        " (5, 0, 'marius'), (6, 1, NULL)"
    )
    await old.close()
    db = await Database.open(tmp_path / "pv.db")
    try:
        five, six = await db.guilds.get(5), await db.guilds.get(6)
        assert (five.cloning, five.default_voice) == (False, "marius")
        assert (six.cloning, six.default_voice) == (True, None)
        assert "guild_settings" not in await tables(db)
    finally:
        await db.close()


async def test_member_settings_and_dictionary(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "pv.db")
    try:
        assert (await db.members.get(1, 5)).autoread is True
        await db.members.set_nick(1, 5, "Ally")
        await db.members.set_autoread(1, 5, False)
        assert await db.members.get(1, 5) == MemberSettings("Ally", False)
        assert await db.members.get(1, 6) == MemberSettings()
        assert await db.members.nicks(5, [1, 2]) == {1: "Ally"}
        await db.dictionary.add(5, "NYC", "New York City")
        await db.dictionary.add(5, "nyc", "New York")  # same word: replaced
        assert await db.dictionary.entries(5) == {"nyc": "New York"}
        assert await db.dictionary.remove(5, "NYC") is True
        assert await db.dictionary.remove(5, "NYC") is False
        assert await db.dictionary.count(5) == 0
    finally:
        await db.close()
