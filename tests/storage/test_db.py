"""The store's migrations and repositories, each against SQLite and a real PostgreSQL
(`database_at` in conftest.py)."""

import asyncio
from pathlib import Path

import pytest

from bot.storage.database import (
    ConstraintError,
    Database,
    DictionaryFullError,
    MemberSettings,
    NameTakenError,
    Pronunciation,
    QuotaError,
    ReadChannel,
    ReadChannelsFullError,
    file_tag,
)
from bot.storage.migrations import MIGRATIONS_DIR, DatabaseTooNewError
from tests.postgres_server import PostgresServer

Location = Path | str


async def add_voice(db: Database, owner: int, name: str) -> int:
    return await db.voices.insert(
        owner_id=owner,
        name=name,
        model_fingerprint="f",
        state_path=f"{owner}/{name}.st",
        clip_path=f"{owner}/{name}.flac",
        sha256="s",
        duration_s=3.0,
        state_bytes=1,
        clip_bytes=1,
        consented_at="now",
    )


async def tables(db: Database) -> set[str]:
    if db.dialect == "sqlite":
        rows = await db.fetch("SELECT name FROM sqlite_master WHERE type = 'table'")
    else:
        rows = await db.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    return {row[0] for row in rows}


def first_migrations(tmp_path: Path, count: int) -> Path:
    """A migrations folder with only the first `count` (and their PostgreSQL forms)."""
    folder = tmp_path / "migrations"
    (folder / "postgresql").mkdir(parents=True)
    for path in sorted(p.name for p in MIGRATIONS_DIR.iterdir() if p.name.endswith(".sql"))[:count]:
        (folder / path).write_text((MIGRATIONS_DIR / path).read_text())
        own = MIGRATIONS_DIR / "postgresql" / path
        if own.is_file():
            (folder / "postgresql" / path).write_text(own.read_text())
    return folder


async def test_migrates_an_empty_database_and_rerun_is_a_no_op(database_at: Location) -> None:
    db = await Database.open(database_at)
    try:
        expected = {"voices", "voice_choices", "server_settings", "member_settings"}
        assert expected | {"pronunciations", "schema_migrations"} <= await tables(db)
        assert await db.applied_migrations() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        assert await db.migrate() == []
        if db.dialect == "sqlite":
            assert (await db.fetch_one("PRAGMA journal_mode"))[0] == "wal"
            assert (await db.fetch_one("PRAGMA foreign_keys"))[0] == 1
    finally:
        await db.close()
    again = await Database.open(database_at)
    assert await again.applied_migrations() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    await again.close()


async def test_processes_starting_together_migrate_once(postgres: PostgresServer) -> None:
    """Shards start at the same moment on one PostgreSQL: one migrates, the others wait for
    it and find the work done (SQLite has one process by design)."""
    url = await postgres.new_database()
    opened = await asyncio.gather(*(Database.open(url, migrate=False) for _ in range(4)))
    try:
        results = await asyncio.gather(*(db.migrate() for db in opened))
        assert sorted(results, key=len) == [[], [], [], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]]
    finally:
        for db in opened:
            await db.close()


async def test_a_newer_database_is_refused(database_at: Location) -> None:
    db = await Database.open(database_at)
    await db.execute("INSERT INTO schema_migrations VALUES (9999, 'from_the_future', '2030-01-01')")
    await db.close()
    with pytest.raises(DatabaseTooNewError, match="9999"):
        await Database.open(database_at)


async def test_a_failing_migration_applies_nothing(database_at: Location, tmp_path: Path) -> None:
    folder = first_migrations(tmp_path, 1)
    (folder / "0002_broken.sql").write_text("CREATE TABLE extra (x INTEGER);\nNOT SQL AT ALL;")
    with pytest.raises(RuntimeError, match=r"0002_broken\.sql failed"):
        await Database.open(database_at, migrations=folder)
    db = await Database.open(database_at)  # the real migrations then apply in order
    assert "extra" not in await tables(db)
    assert await db.applied_migrations() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    await db.close()


async def test_voice_names_are_unique_per_owner_case_insensitively(database_at: Location) -> None:
    db = await Database.open(database_at)
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


async def test_a_deleted_voice_leaves_only_its_files_tag(database_at: Location) -> None:
    """What a sweep needs to delete a voice's leftover files (a process that missed the
    deletion): the random tag of its file names; nothing of its owner or name."""
    db = await Database.open(database_at)
    tag, other = "ab" * 16, "cd" * 16
    try:
        voice_id = await db.voices.insert(
            owner_id=7,
            name="Me",
            model_fingerprint="f",
            state_path=f"voices/7/{tag}.safetensors",
            clip_path=f"voices/7/{tag}.flac",
            sha256="s",
            duration_s=3.0,
            state_bytes=1,
            clip_bytes=1,
            consented_at="now",
        )
        assert await db.voices.deleted_tags([tag, other]) == set()
        record = await db.voices.get_by_id(voice_id)
        assert record is not None
        await db.voices.delete(record)
        many = [f"{n:032x}" for n in range(1200)]  # past one query's parameters
        assert await db.voices.deleted_tags([tag, other, "", *many]) == {tag}
        rows = await db.fetch("SELECT * FROM deleted_voice_files")
        assert [row[0] for row in rows] == [tag] and len(tuple(rows[0])) == 2
    finally:
        await db.close()
    assert file_tag(f"voices/7/{tag}.model-{'0' * 16}.safetensors") == tag
    assert file_tag(f"voices/7/.tmp-{tag}.safetensors") == file_tag("7/Me.flac") == ""


async def test_choices_prefer_the_server_then_global_and_follow_deletion(
    database_at: Location,
) -> None:
    db = await Database.open(database_at)
    try:
        voice = await add_voice(db, 1, "Me")
        await db.choices.set(1, None, builtin="alba")
        assert (await db.choices.for_user(1, 500)).builtin_name == "alba"
        await db.choices.set(1, 500, voice_id=voice)
        assert (await db.choices.for_user(1, 500)).voice_id == voice
        assert (await db.choices.for_user(1, 600)).builtin_name == "alba"
        await db.voices.delete(await db.voices.get_by_id(voice))  # type: ignore[arg-type]
        assert (await db.choices.for_user(1, 500)).builtin_name == "alba"  # cascade
        with pytest.raises(ConstraintError):  # exactly one of builtin / voice
            await db.choices.set(1, 700)
    finally:
        await db.close()


async def test_a_voice_keeps_its_recording_and_states_until_it_is_deleted(
    database_at: Location,
) -> None:
    db = await Database.open(database_at)
    try:
        flac, state = bytes(range(256)) * 40, b"\x00state\xff" * 1000
        voice = await db.voices.insert(
            owner_id=1,
            name="Me",
            model_fingerprint="fp-a",
            state_path="1/me.st",
            clip_path="1/me.flac",
            sha256="s",
            duration_s=3.0,
            state_bytes=len(state),
            clip_bytes=len(flac),
            consented_at="now",
            recording=flac,
            state=state,
        )
        old = await add_voice(db, 1, "Old")  # made before recordings were kept in the store
        assert [r.id for r in await db.voices.without_recording()] == [old]
        await db.voices.put_recording(old, b"old")
        assert await db.voices.without_recording() == []
        assert await db.voices.recording(voice) == flac
        assert await db.voices.state(voice, "fp-a") == state
        assert await db.voices.state(voice, "fp-b") is None
        await db.voices.put_state(voice, "fp-b", b"b1")
        await db.voices.put_state(voice, "fp-b", b"b2")  # a newer state replaces the older
        assert await db.voices.state(voice, "fp-b") == b"b2"
        with pytest.raises(ConstraintError):  # not for a voice that does not exist
            await db.voices.put_recording(9999, b"x")
        await db.voices.delete(await db.voices.get_by_id(voice))  # type: ignore[arg-type]
        assert await db.voices.recording(voice) is None
        assert await db.voices.state(voice, "fp-a") is None
        assert await db.voices.state(voice, "fp-b") is None
    finally:
        await db.close()


async def test_guild_settings_default_and_update(database_at: Location) -> None:
    db = await Database.open(database_at)
    try:
        assert (await db.guilds.get(5)).cloning is True
        await db.guilds.set_cloning(5, False)
        await db.guilds.set_default_voice(5, "marius")
        settings = await db.guilds.get(5)
        assert settings.cloning is False and settings.default_voice == "marius"
    finally:
        await db.close()


async def test_0002_keeps_the_server_settings_of_0001(
    database_at: Location, tmp_path: Path
) -> None:
    old = await Database.open(database_at, migrations=first_migrations(tmp_path, 1))
    await old.execute(
        "INSERT INTO guild_settings (guild_id, cloning_enabled, default_voice) VALUES"
        " (5, 0, 'marius'), (6, 1, NULL), (1100000000000000001, 1, 'alba')"
    )
    await old.close()
    db = await Database.open(database_at)
    try:
        five, six = await db.guilds.get(5), await db.guilds.get(6)
        assert (five.cloning, five.default_voice) == (False, "marius")
        assert (six.cloning, six.default_voice) == (True, None)
        assert (await db.guilds.get(1100000000000000001)).default_voice == "alba"  # 64-bit ids
        assert "guild_settings" not in await tables(db)
    finally:
        await db.close()


async def test_member_settings_and_dictionary(database_at: Location) -> None:
    db = await Database.open(database_at)
    try:
        assert (await db.members.get(1, 5)).autoread is True
        await db.members.set_nick(1, 5, "Ally")
        await db.members.set_autoread(1, 5, False)
        assert await db.members.get(1, 5) == MemberSettings("Ally", False)
        assert await db.members.get(1, 6) == MemberSettings()
        # a pitch of their own (0010), negative too, and back to the server's
        await db.members.set_pitch(1, 5, -4)
        await db.members.set_rate(1, 5, 1.5)
        assert await db.members.get(1, 5) == MemberSettings("Ally", False, rate=1.5, pitch=-4)
        await db.members.set_pitch(1, 5, None)
        assert (await db.members.get(1, 5)).pitch is None
        await db.members.set_pitch(7, 5, 6)
        await db.members.forget_user(7)  # forgotten with their other choices
        assert await db.members.get(7, 5) == MemberSettings()
        assert await db.members.nicks(5, [1, 2]) == {1: "Ally"}
        await db.members.set_nick(2, 5, "Bee")
        await db.members.set_nick(3, 6, "Elsewhere")
        await db.members.set_autoread(4, 5, False)  # a row without a nick
        assert sorted(await db.members.nicks_of_others(5, 1)) == ["Bee"]
        assert sorted(await db.members.nicks_of_others(5, 9)) == ["Ally", "Bee"]
        await db.dictionary.add(5, "NYC", "New York City")
        await db.dictionary.add(5, "nyc", "New York")  # same word: replaced
        assert await db.dictionary.entries(5) == {"nyc": "New York"}
        assert await db.dictionary.remove(5, "NYC") is True
        assert await db.dictionary.remove(5, "NYC") is False
        assert await db.dictionary.count(5) == 0
    finally:
        await db.close()


async def test_0011_moves_each_servers_read_channel_into_its_own_table(
    database_at: Location, tmp_path: Path
) -> None:
    old = await Database.open(database_at, migrations=first_migrations(tmp_path, 10))
    await old.execute(
        "INSERT INTO server_settings (guild_id, key, value) VALUES (?, 'read_channel', ?),"
        " (?, 'read_channel', 'null'), (?, 'xsaid', 'false')",
        1100000000000000001,
        "1100000000000000002",
        7,
        1100000000000000001,
    )
    await old.close()
    db = await Database.open(database_at)
    try:
        assert await db.read_channels.list(1100000000000000001) == [
            ReadChannel(1100000000000000002)  # a 64-bit id, no voice channel of its own
        ]
        assert await db.read_channels.list(7) == []  # "none" was no channel
        assert (await db.guilds.get(1100000000000000001)).xsaid is False  # the rest kept
        left = await db.fetch("SELECT guild_id FROM server_settings WHERE key = 'read_channel'")
        assert left == []
    finally:
        await db.close()


async def test_read_channels_add_replace_remove_and_at_most_five(database_at: Location) -> None:
    db = await Database.open(database_at)
    try:
        assert await db.read_channels.add(5, 10) is True
        assert await db.read_channels.add(5, 11, 20) is True
        assert await db.read_channels.add(5, 10, 21) is False  # read already: its voice changes
        assert await db.read_channels.list(5) == [ReadChannel(10, 21), ReadChannel(11, 20)]
        for channel in (12, 13, 14):
            await db.read_channels.add(5, channel)
        with pytest.raises(ReadChannelsFullError):
            await db.read_channels.add(5, 15)
        assert await db.read_channels.add(5, 14, 22) is False  # a change is no 6th
        assert len(await db.read_channels.list(5)) == 5
        assert await db.read_channels.add(6, 15) is True  # another server's count
        assert await db.read_channels.remove(5, 10) is True
        assert await db.read_channels.remove(5, 10) is False
        assert await db.read_channels.add(5, 15) is True  # room again
        assert [c.channel_id for c in await db.read_channels.list(5)] == [11, 12, 13, 14, 15]
    finally:
        await db.close()


async def test_two_processes_cannot_both_add_the_fifth_read_channel(
    database_at: Location,
) -> None:
    first, second = await Database.open(database_at), await Database.open(database_at)
    try:
        for channel in (1, 2, 3, 4):
            await first.read_channels.add(5, channel)
        added = await asyncio.gather(
            first.read_channels.add(5, 10),
            second.read_channels.add(5, 11),
            return_exceptions=True,
        )
        assert sorted(type(a).__name__ for a in added) == ["ReadChannelsFullError", "bool"]
        assert len(await first.read_channels.list(5)) == 5
    finally:
        await first.close()
        await second.close()


async def test_dictionary_entries_per_language_after_migration_0008(
    database_at: Location, tmp_path: Path
) -> None:
    """Entries made before 0008 apply to every language; a language's own entry wins there
    over the one for all; each is replaced and removed on its own; a merge is all or nothing."""
    old = await Database.open(database_at, migrations=first_migrations(tmp_path, 5))
    await old.execute(
        "INSERT INTO pronunciations (guild_id, word_key, word, spoken) VALUES (?, ?, ?, ?)",
        5,
        "gif",
        "GIF",
        "graphics",
    )
    await old.close()
    db = await Database.open(database_at)
    try:
        assert await db.dictionary.all(5) == [Pronunciation("GIF", "graphics", None)]
        await db.dictionary.add(5, "gif", "jif", "french")
        await db.dictionary.add(5, "Gif", "djif", "french")  # the same entry: replaced
        await db.dictionary.add(5, "brb", "be right back", "german")
        assert await db.dictionary.entries(5, "english") == {"GIF": "graphics"}
        assert await db.dictionary.entries(5, "french") == {"Gif": "djif"}
        assert await db.dictionary.entries(5, "german") == {
            "GIF": "graphics",
            "brb": "be right back",
        }
        assert await db.dictionary.count(5) == 3
        with pytest.raises(DictionaryFullError):
            await db.dictionary.merge(5, [Pronunciation("a", "b"), Pronunciation("c", "d")], 4)
        assert await db.dictionary.count(5) == 3  # nothing of it was kept
        await db.dictionary.merge(5, [Pronunciation("gif", "giff"), Pronunciation("a", "b")], 4)
        assert await db.dictionary.entries(5, "english") == {"gif": "giff", "a": "b"}
        assert await db.dictionary.remove(5, "GIF", "german") is False
        assert await db.dictionary.remove(5, "GIF", "french") is True
        assert await db.dictionary.remove(5, "GIF") is True
        assert [e.word for e in await db.dictionary.all(5)] == ["a", "brb"]
    finally:
        await db.close()


async def test_the_voice_quota_holds_across_processes(database_at: Location) -> None:
    """Two processes (two connections or pools) insert a member's voices at once: the count
    and the insert share a transaction and the owner's lock in the database, so exactly the
    quota gets in, however the inserts interleave."""
    first, second = await Database.open(database_at), await Database.open(database_at)
    try:

        async def clone(db: Database, n: int) -> bool:
            try:
                await db.voices.insert(
                    owner_id=9,
                    name=f"v{n}",
                    model_fingerprint="f",
                    state_path=f"9/{n}.st",
                    clip_path=f"9/{n}.flac",
                    sha256="s",
                    duration_s=3.0,
                    state_bytes=1,
                    clip_bytes=1,
                    consented_at="now",
                    quota=3,
                )
            except QuotaError:
                return False
            return True

        made = await asyncio.gather(*(clone((first, second)[n % 2], n) for n in range(8)))
        assert sum(made) == 3
        assert await first.voices.count_for(9) == 3
    finally:
        await first.close()
        await second.close()


async def test_blocks_are_kept_told_once_and_paged(database_at: Location) -> None:
    db = await Database.open(database_at)
    try:
        blocks = db.blocks
        assert await blocks.add(1, 10, 99, "spam")
        assert not await blocks.add(1, 10, 98, "still spam")  # a second block updates it
        assert not await blocks.add(1, 10, 98, None)  # without a reason: the one before stays
        assert await blocks.is_blocked(1, 10) and not await blocks.is_blocked(2, 10)
        assert await blocks.mark_told(1, 10)
        assert not await blocks.mark_told(1, 10)  # once per block
        assert not await blocks.mark_told(1, 11)  # not blocked: nothing to tell
        for user in range(11, 23):
            await blocks.add(1, user, 99, None)
        assert await blocks.count(1) == 13 and await blocks.count(2) == 0
        first = await blocks.page(1, 0, 10)
        assert (first[0].user_id, first[0].moderator_id, first[0].reason) == (10, 98, "still spam")
        rest = await blocks.page(1, 10, 10)
        assert len(first) == 10 and len(rest) == 3
        assert {b.user_id for b in first + rest} == set(range(10, 23))
        assert await blocks.remove(1, 10) and not await blocks.remove(1, 10)
        assert await blocks.add(1, 10, 99, None)  # a new block: told again
        assert await blocks.mark_told(1, 10)
    finally:
        await db.close()
