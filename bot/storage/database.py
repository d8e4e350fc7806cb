"""Storage: small typed repositories over one of two stores (`bot/storage/stores.py`):
SQLite in `DATA_DIR` (one process, the default) or PostgreSQL (`DATABASE_URL`, shared by
several bot processes), migrated when opened (`bot/storage/migrations.py`). The repositories'
SQL is written once, with `?` placeholders, in the SQL both speak. Keep transactions short:
no file or model work inside them.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path, PurePath
from typing import Any, cast

from bot.core.errors import InternalError
from bot.core.files import make_private_dir
from bot.storage import migrations as runner
from bot.storage.migrations import MIGRATIONS_DIR
from bot.storage.server_settings import SETTINGS, ServerSettings
from bot.storage.stores import (
    STORE_ERRORS,
    ConstraintError,
    PostgresStore,
    Row,
    Store,
    is_postgres_url,
    open_store,
    utc_now,
)

__all__ = [
    "STORE_ERRORS",
    "ConstraintError",
    "Database",
    "is_postgres_url",
    "make_private_dir",
    "utc_now",
]

DATABASE_NAME = "pocketvoice.db"  # in DATA_DIR

GLOBAL = 0  # guild_id of a choice that applies in every server
VOICE_DELETED = "pocketvoice_voice_deleted"  # NOTIFY channel: a voice is gone everywhere


class NameTakenError(InternalError, ValueError):
    """The owner already has a voice of that name."""


class QuotaError(InternalError, ValueError):
    """The owner already has the most voices allowed."""


def database_location(database_url: str | None, data_dir: Path) -> Path | str:
    """Where the store is: `DATABASE_URL` when set, else the SQLite file in `DATA_DIR`."""
    return database_url or data_dir / DATABASE_NAME


class Database:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.dialect = store.dialect
        self.voices = VoiceRepository(self)
        self.choices = ChoiceRepository(self)
        self.guilds = GuildSettingsRepository(self)
        self.read_channels = ReadChannelRepository(self)
        self.members = MemberSettingsRepository(self)
        self.dictionary = DictionaryRepository(self)
        self.blocks = BlockRepository(self)
        self.sounds = SoundRepository(self)

    @classmethod
    async def open(
        cls,
        location: Path | str,
        *,
        migrations: Traversable = MIGRATIONS_DIR,
        migrate: bool = True,
    ) -> Database:
        """The SQLite file at `location`, or the PostgreSQL database of a `postgresql://`
        URL; migrated unless `migrate` is False."""
        store = await open_store(location)
        database = cls(store)
        if migrate:
            try:
                await database.migrate(migrations)
            except BaseException:
                await store.close()
                raise
        return database

    async def close(self) -> None:
        await self.store.close()

    def transaction(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Statements of this task inside the block commit together, or not at all."""
        return self.store.transaction()

    async def fetch(self, sql: str, *args: object) -> list[Row]:
        return await self.store.fetch(sql, args)

    async def fetch_one(self, sql: str, *args: object) -> Row | None:
        rows = await self.store.fetch(sql, args)
        return rows[0] if rows else None

    async def execute(self, sql: str, *args: object) -> int:
        """One writing statement; the number of rows it changed."""
        return await self.store.execute(sql, args)

    async def insert(self, sql: str, *args: object) -> int:
        """An INSERT ... RETURNING id; the new row's id."""
        return await self.store.insert(sql, args)

    async def lock(self, key: int) -> None:
        """Inside `transaction()`: hold `key` until it ends, across every process that shares
        the database (PostgreSQL's advisory lock; SQLite's transaction already holds the
        whole database for writing)."""
        if self.dialect == "postgresql":
            await self.fetch("SELECT pg_advisory_xact_lock(?)", key)

    async def notify(self, channel: str, payload: str) -> None:
        """Tell every process listening on `channel` (PostgreSQL: on commit); one process
        alone (SQLite) has no one to tell."""
        if self.dialect == "postgresql":
            await self.fetch("SELECT pg_notify(?, ?)", channel, payload)

    async def listen(
        self, channel: str, on_message: Callable[[str], None], on_connected: Callable[[], None]
    ) -> None:
        """While connected, `on_message(payload)` for each notification on `channel`;
        returns when the link is lost. Only a shared store (PostgreSQL) has other processes."""
        if not isinstance(self.store, PostgresStore):
            raise RuntimeError("only a PostgreSQL store has other processes to listen to")
        await self.store.listen(channel, on_message, on_connected)

    async def applied_migrations(self) -> list[int]:
        return await runner.applied_migrations(self.store)

    async def migrate(self, folder: Traversable = MIGRATIONS_DIR) -> list[int]:
        """Apply pending migrations, each in its own transaction; returns their versions."""
        return await runner.migrate(self.store, folder)


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
    def from_row(cls, row: Row) -> VoiceRecord:
        by_name = cast("Mapping[str, Any]", row)  # aiosqlite.Row, asyncpg.Record: by name too
        return cls(**{name: by_name[name] for name in cls.__dataclass_fields__})


def name_key(name: str) -> str:
    return name.strip().casefold()


class VoiceRepository:
    _COLUMNS = ", ".join(VoiceRecord.__dataclass_fields__)

    def __init__(self, db: Database) -> None:
        self._db = db

    async def _fetch(self, where: str, *args: object) -> list[VoiceRecord]:
        sql = f"SELECT {self._COLUMNS} FROM voices WHERE {where} ORDER BY created_at, id"
        return [VoiceRecord.from_row(row) for row in await self._db.fetch(sql, *args)]

    async def list_for(self, owner_id: int) -> list[VoiceRecord]:
        return await self._fetch("owner_id = ?", owner_id)

    async def list_all(self) -> list[VoiceRecord]:
        return await self._fetch("TRUE")

    async def count_for(self, owner_id: int) -> int:
        row = await self._db.fetch_one("SELECT COUNT(*) FROM voices WHERE owner_id = ?", owner_id)
        return int(row[0]) if row else 0

    async def get(self, owner_id: int, name: str) -> VoiceRecord | None:
        found = await self._fetch("owner_id = ? AND name_key = ?", owner_id, name_key(name))
        return found[0] if found else None

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
        quota: int | None = None,
        recording: bytes | None = None,
        state: bytes | None = None,
    ) -> int:
        """One short write, once the voice's files are complete on disk, with its
        `recording` (FLAC) and its `state` for `model_fingerprint` when given. With `quota`,
        the owner's voices are counted in the same transaction, under the owner's lock in the
        database: processes sharing PostgreSQL cannot both take the last place."""
        async with self._db.transaction():
            if quota is not None:
                await self._db.lock(owner_id)
                if await self.count_for(owner_id) >= quota:
                    raise QuotaError(quota)
            voice_id = await self._insert(
                owner_id,
                name,
                model_fingerprint,
                state_path,
                clip_path,
                sha256,
                duration_s,
                state_bytes,
                clip_bytes,
                consented_at,
                upload_sha256,
                consent_guild_id,
            )
            if recording is not None:
                await self.put_recording(voice_id, recording)
            if state is not None:
                await self.put_state(voice_id, model_fingerprint, state)
            return voice_id

    async def recording(self, voice_id: int) -> bytes | None:
        row = await self._db.fetch_one(
            "SELECT flac FROM voice_recordings WHERE voice_id = ?", voice_id
        )
        return bytes(row[0]) if row else None

    async def put_recording(self, voice_id: int, flac: bytes) -> None:
        """Keep the voice's recording (a voice that no longer exists is refused)."""
        await self._db.execute(
            "INSERT INTO voice_recordings (voice_id, flac) VALUES (?, ?)"
            " ON CONFLICT (voice_id) DO NOTHING",
            voice_id,
            flac,
        )

    async def without_recording(self) -> list[VoiceRecord]:
        """Voices made before recordings were kept in the store (read from DATA_DIR then)."""
        return await self._fetch(
            "NOT EXISTS (SELECT 1 FROM voice_recordings r WHERE r.voice_id = voices.id)"
        )

    async def state(self, voice_id: int, fingerprint: str) -> bytes | None:
        row = await self._db.fetch_one(
            "SELECT state FROM voice_states WHERE voice_id = ? AND model_fingerprint = ?",
            voice_id,
            fingerprint,
        )
        return bytes(row[0]) if row else None

    async def put_state(self, voice_id: int, fingerprint: str, state: bytes) -> None:
        await self._db.execute(
            "INSERT INTO voice_states (voice_id, model_fingerprint, state) VALUES (?, ?, ?)"
            " ON CONFLICT (voice_id, model_fingerprint) DO UPDATE SET state = excluded.state",
            voice_id,
            fingerprint,
            state,
        )

    async def _insert(
        self,
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
        upload_sha256: str | None,
        consent_guild_id: int | None,
    ) -> int:
        try:
            return await self._db.insert(
                "INSERT INTO voices (owner_id, name, name_key, model_fingerprint, state_path,"
                " clip_path, sha256, duration_s, state_bytes, clip_bytes, created_at,"
                " consented_at, upload_sha256, consent_guild_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                owner_id,
                name.strip(),
                name_key(name),
                model_fingerprint,
                state_path,
                clip_path,
                sha256,
                float(duration_s),
                state_bytes,
                clip_bytes,
                utc_now(),
                consented_at,
                upload_sha256,
                consent_guild_id,
            )
        except ConstraintError as error:
            raise NameTakenError(name) from error

    async def set_state(self, voice_id: int, fingerprint: str, state_bytes: int) -> None:
        await self._db.execute(
            "UPDATE voices SET model_fingerprint = ?, state_bytes = ? WHERE id = ?",
            fingerprint,
            state_bytes,
            voice_id,
        )

    async def rename(self, voice_id: int, new_name: str) -> None:
        try:
            await self._db.execute(
                "UPDATE voices SET name = ?, name_key = ? WHERE id = ?",
                new_name.strip(),
                name_key(new_name),
                voice_id,
            )
        except ConstraintError as error:
            raise NameTakenError(new_name) from error

    async def delete(self, record: VoiceRecord) -> None:
        """The row, its recording and states, its choices; other processes are told (on
        commit) so they drop their local copies of its files, and the files' tag is kept,
        so a process that missed it deletes them at its next sweep (`deleted_tags`)."""
        async with self._db.transaction():
            await self._db.execute("DELETE FROM voices WHERE id = ?", record.id)
            for tag in {file_tag(record.state_path), file_tag(record.clip_path)} - {""}:
                await self._db.execute(
                    "INSERT INTO deleted_voice_files (tag, deleted_at) VALUES (?, ?)"
                    " ON CONFLICT (tag) DO NOTHING",
                    tag,
                    utc_now(),
                )
            await self._db.notify(
                VOICE_DELETED,
                json.dumps(
                    {
                        "id": record.id,
                        "state_path": record.state_path,
                        "clip_path": record.clip_path,
                    }
                ),
            )

    async def deleted_tags(self, tags: Iterable[str]) -> set[str]:
        """Of `tags` (see `file_tag`), those of deleted voices."""
        wanted = sorted(set(tags) - {""})
        found: set[str] = set()
        for start in range(0, len(wanted), 500):  # within every store's limit of parameters
            part = wanted[start : start + 500]
            marks = ", ".join("?" * len(part))
            sql = f"SELECT tag FROM deleted_voice_files WHERE tag IN ({marks})"
            found.update(row[0] for row in await self._db.fetch(sql, *part))
        return found


def file_tag(path: str | PurePath) -> str:
    """The random tag a voice's files share: `<tag>.flac`, `<tag>.safetensors`,
    `<tag>.model-<fingerprint>.safetensors` (32 hex digits); "" for any other name."""
    head = PurePath(path).name.split(".", 1)[0]
    return head if _TAG.fullmatch(head) else ""


_TAG = re.compile(r"[0-9a-f]{32}")


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
        self,
        user_id: int,
        guild_id: int | None,
        *,
        builtin: str | None = None,
        voice_id: int | None = None,
    ) -> None:
        await self._db.execute(
            "INSERT INTO voice_choices (user_id, guild_id, builtin_name, voice_id)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (user_id, guild_id) DO UPDATE SET"
            " builtin_name = excluded.builtin_name, voice_id = excluded.voice_id",
            user_id,
            guild_id or GLOBAL,
            builtin,
            voice_id,
        )

    async def for_user(self, user_id: int, guild_id: int | None) -> VoiceChoice | None:
        """This server's choice, else the global one."""
        row = await self._db.fetch_one(
            "SELECT guild_id, builtin_name, voice_id FROM voice_choices"
            " WHERE user_id = ? AND guild_id IN (?, ?) ORDER BY guild_id = ? LIMIT 1",
            user_id,
            guild_id or GLOBAL,
            GLOBAL,
            GLOBAL,
        )
        return VoiceChoice(row[0], row[1], row[2]) if row else None

    async def delete_for_user(self, user_id: int) -> None:
        await self._db.execute("DELETE FROM voice_choices WHERE user_id = ?", user_id)


# ---- server settings -------------------------------------------------------------------------
class GuildSettingsRepository:
    """Server settings as key/value rows over the defaults of `ServerSettings`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, guild_id: int) -> ServerSettings:
        rows = await self._db.fetch(
            "SELECT key, value FROM server_settings WHERE guild_id = ?", guild_id
        )
        stored = {row[0]: json.loads(row[1]) for row in rows}
        return ServerSettings(guild_id, **{k: v for k, v in stored.items() if k in SETTINGS})

    async def set(self, guild_id: int, key: str, value: object) -> None:
        if key not in SETTINGS:
            raise KeyError(key)
        await self._db.execute(
            "INSERT INTO server_settings (guild_id, key, value) VALUES (?, ?, ?)"
            " ON CONFLICT (guild_id, key) DO UPDATE SET value = excluded.value",
            guild_id,
            key,
            json.dumps(value),
        )

    async def set_cloning(self, guild_id: int, enabled: bool) -> None:
        await self.set(guild_id, "cloning", enabled)

    async def set_default_voice(self, guild_id: int, voice: str | None) -> None:
        await self.set(guild_id, "default_voice", voice)


# ---- read channels -----------------------------------------------------------------------------
MAX_READ_CHANNELS = 5  # a server's read channels


@dataclass(frozen=True)
class ReadChannel:
    channel_id: int  # a text or forum channel whose messages (and threads, posts) are read
    voice_channel_id: int | None = None  # read into this voice channel (None: the author's)


class ReadChannelsFullError(InternalError, ValueError):
    """The server already reads the most channels allowed."""


class ReadChannelRepository:
    """The channels a server reads aloud (`/setup`), each with its own voice channel or none."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def list(self, guild_id: int) -> list[ReadChannel]:
        rows = await self._db.fetch(
            "SELECT channel_id, voice_channel_id FROM read_channels WHERE guild_id = ?"
            " ORDER BY channel_id",
            guild_id,
        )
        return [ReadChannel(int(row[0]), None if row[1] is None else int(row[1])) for row in rows]

    async def add(
        self,
        guild_id: int,
        channel_id: int,
        voice_channel_id: int | None = None,
        *,
        most: int = MAX_READ_CHANNELS,
    ) -> bool:
        """Read `channel_id` (into `voice_channel_id`); True when it is new, False when it was
        read already (its voice channel is then replaced). A new one past `most` is refused
        (ReadChannelsFullError), counted under the server's lock: processes sharing
        PostgreSQL cannot both take the last place."""
        async with self._db.transaction():
            await self._db.lock(guild_id)
            changed = await self._db.execute(
                "UPDATE read_channels SET voice_channel_id = ? WHERE guild_id = ?"
                " AND channel_id = ?",
                voice_channel_id,
                guild_id,
                channel_id,
            )
            if changed:
                return False
            row = await self._db.fetch_one(
                "SELECT COUNT(*) FROM read_channels WHERE guild_id = ?", guild_id
            )
            if row is not None and int(row[0]) >= most:
                raise ReadChannelsFullError(most)
            await self._db.execute(
                "INSERT INTO read_channels (guild_id, channel_id, voice_channel_id)"
                " VALUES (?, ?, ?)",
                guild_id,
                channel_id,
                voice_channel_id,
            )
            return True

    async def remove(self, guild_id: int, channel_id: int) -> bool:
        removed = await self._db.execute(
            "DELETE FROM read_channels WHERE guild_id = ? AND channel_id = ?", guild_id, channel_id
        )
        return removed > 0


# ---- member settings -------------------------------------------------------------------------
@dataclass(frozen=True)
class MemberSettings:
    nick: str | None = None
    autoread: bool = True
    language: str | None = None  # their own language here (None: the server's)
    rate: float | None = None  # their own speaking rate here (None: the server's)
    blocked: bool = False  # by this server's moderators (/block), read in the same query
    pitch: int | None = None  # their own pitch here in semitones (None: the server's)


class MemberSettingsRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def get(self, user_id: int, guild_id: int) -> MemberSettings:
        """Their settings here, and whether they are blocked here, in one query (every chat
        message reads them)."""
        row = await self._db.fetch_one(
            "SELECT m.nick, m.autoread, m.language, m.rate, b.user_id IS NOT NULL, m.pitch"
            " FROM (SELECT CAST(? AS BIGINT) AS user_id, CAST(? AS BIGINT) AS guild_id) AS k"
            " LEFT JOIN member_settings m ON m.user_id = k.user_id AND m.guild_id = k.guild_id"
            " LEFT JOIN member_blocks b ON b.user_id = k.user_id AND b.guild_id = k.guild_id",
            user_id,
            guild_id,
        )
        assert row is not None  # one row, always
        blocked = bool(row[4])
        if row[1] is None:  # no settings of their own here
            return MemberSettings(blocked=blocked)
        rate = None if row[3] is None else float(row[3])
        pitch = None if row[5] is None else int(row[5])
        return MemberSettings(row[0], bool(row[1]), row[2], rate, blocked, pitch)

    async def set_nick(self, user_id: int, guild_id: int, nick: str | None) -> None:
        await self._db.execute(
            "INSERT INTO member_settings (user_id, guild_id, nick) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET nick = excluded.nick",
            user_id,
            guild_id,
            nick,
        )

    async def set_autoread(self, user_id: int, guild_id: int, enabled: bool) -> None:
        await self._db.execute(
            "INSERT INTO member_settings (user_id, guild_id, autoread) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET autoread = excluded.autoread",
            user_id,
            guild_id,
            int(enabled),
        )

    async def set_language(self, user_id: int, guild_id: int, language: str | None) -> None:
        await self._db.execute(
            "INSERT INTO member_settings (user_id, guild_id, language) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET language = excluded.language",
            user_id,
            guild_id,
            language,
        )

    async def set_rate(self, user_id: int, guild_id: int, rate: float | None) -> None:
        await self._db.execute(
            "INSERT INTO member_settings (user_id, guild_id, rate) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET rate = excluded.rate",
            user_id,
            guild_id,
            rate,
        )

    async def set_pitch(self, user_id: int, guild_id: int, pitch: int | None) -> None:
        await self._db.execute(
            "INSERT INTO member_settings (user_id, guild_id, pitch) VALUES (?, ?, ?)"
            " ON CONFLICT (user_id, guild_id) DO UPDATE SET pitch = excluded.pitch",
            user_id,
            guild_id,
            pitch,
        )

    async def nicks(self, guild_id: int, user_ids: list[int]) -> dict[int, str]:
        """The /set nicks of these members here; not a blocked member's (a name they chose
        would still be spoken in others' messages)."""
        if not user_ids:
            return {}
        marks = ",".join("?" * len(user_ids))
        rows = await self._db.fetch(
            f"SELECT user_id, nick FROM member_settings m WHERE guild_id = ? AND nick IS NOT NULL"
            f" AND user_id IN ({marks}) AND NOT EXISTS (SELECT 1 FROM member_blocks b"
            f" WHERE b.guild_id = m.guild_id AND b.user_id = m.user_id)",
            guild_id,
            *user_ids,
        )
        return {row[0]: row[1] for row in rows}

    async def nicks_of_others(self, guild_id: int, user_id: int) -> list[str]:
        """The /set nicks of the server's members other than `user_id` (one name must not
        stand for two members)."""
        rows = await self._db.fetch(
            "SELECT nick FROM member_settings WHERE guild_id = ? AND user_id <> ?"
            " AND nick IS NOT NULL",
            guild_id,
            user_id,
        )
        return [row[0] for row in rows]

    async def forget_user(self, user_id: int) -> None:
        """Forget a member's nicknames; keep an opt-out from auto-reading (a privacy choice,
        not data about them)."""
        async with self._db.transaction():
            await self._db.execute(
                "UPDATE member_settings SET nick = NULL, language = NULL, rate = NULL, pitch = NULL"
                " WHERE user_id = ?",
                user_id,
            )
            await self._db.execute(
                "DELETE FROM member_settings WHERE user_id = ? AND autoread <> 0", user_id
            )


# ---- pronunciation dictionary ----------------------------------------------------------------
@dataclass(frozen=True)
class Pronunciation:
    word: str
    spoken: str
    language: str | None = None  # a pocket-tts language; None: every language

    @property
    def key(self) -> tuple[str, str | None]:
        """What makes an entry: the word in any case, and its language."""
        return self.word.casefold(), self.language


class DictionaryFullError(InternalError, ValueError):
    """The server's dictionary already has the most entries allowed."""


class DictionaryRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def entries(self, guild_id: int, language: str | None = None) -> dict[str, str]:
        """What applies when speaking `language` (one query): the entries for every language,
        and that language's own, which win over them for the same word."""
        rows = await self._db.fetch(
            "SELECT word_key, word, spoken FROM pronunciations"
            " WHERE guild_id = ? AND (language IS NULL OR language = ?)"
            " ORDER BY word_key, language IS NOT NULL",
            guild_id,
            language,
        )
        chosen = {row[0]: (row[1], row[2]) for row in rows}  # the language's own come last
        return dict(chosen.values())

    async def all(self, guild_id: int) -> list[Pronunciation]:
        """Every entry, by word, those for every language first."""
        rows = await self._db.fetch(
            "SELECT word, spoken, language FROM pronunciations WHERE guild_id = ?"
            " ORDER BY word_key, language IS NOT NULL, language",
            guild_id,
        )
        return [Pronunciation(row[0], row[1], row[2]) for row in rows]

    async def count(self, guild_id: int) -> int:
        row = await self._db.fetch_one(
            "SELECT COUNT(*) FROM pronunciations WHERE guild_id = ?", guild_id
        )
        return int(row[0]) if row else 0

    async def add(self, guild_id: int, word: str, spoken: str, language: str | None = None) -> None:
        await self._put(guild_id, Pronunciation(word, spoken, language))

    async def _put(self, guild_id: int, entry: Pronunciation) -> None:
        # each kind of entry has its own unique index (see migration 0008)
        target = (
            "(guild_id, word_key) WHERE language IS NULL"
            if entry.language is None
            else "(guild_id, word_key, language) WHERE language IS NOT NULL"
        )
        await self._db.execute(
            "INSERT INTO pronunciations (guild_id, word_key, word, spoken, language)"
            f" VALUES (?, ?, ?, ?, ?) ON CONFLICT {target} DO UPDATE SET word = excluded.word,"
            " spoken = excluded.spoken",
            guild_id,
            entry.word.casefold(),
            entry.word,
            entry.spoken,
            entry.language,
        )

    async def merge(self, guild_id: int, entries: list[Pronunciation], most: int) -> None:
        """Add or replace `entries` all together (none removed), unless the dictionary would
        then hold more than `most` (DictionaryFullError: nothing changed). Counted under the
        server's lock: processes sharing PostgreSQL cannot both take the last places."""
        async with self._db.transaction():
            await self._db.lock(guild_id)
            for entry in entries:
                await self._put(guild_id, entry)
            if await self.count(guild_id) > most:
                raise DictionaryFullError(most)

    async def remove(self, guild_id: int, word: str, language: str | None = None) -> bool:
        """The entry for `word` in `language` (None: the one for every language)."""
        sql = "DELETE FROM pronunciations WHERE guild_id = ? AND word_key = ? AND language"
        if language is None:
            removed = await self._db.execute(f"{sql} IS NULL", guild_id, word.casefold())
        else:
            removed = await self._db.execute(f"{sql} = ?", guild_id, word.casefold(), language)
        return removed > 0


# ---- sounds in the dictionary ----------------------------------------------------------------
@dataclass(frozen=True)
class DictionarySound:
    word: str
    pcm: bytes  # 48 kHz mono s16le, as it plays
    sha256: str

    @property
    def key(self) -> str:
        return self.word.casefold()

    @property
    def seconds(self) -> float:
        return len(self.pcm) / 2 / 48_000


class SoundsFullError(InternalError, ValueError):
    """The server already has the most sounds allowed."""


class SoundRepository:
    """Short clips played in place of whole words (`/dict sound`), per server."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def words(self, guild_id: int) -> list[str]:
        """The words that have a sound, as written (no audio read: every message asks)."""
        rows = await self._db.fetch(
            "SELECT word FROM dictionary_sounds WHERE guild_id = ? ORDER BY word_key", guild_id
        )
        return [row[0] for row in rows]

    async def lengths(self, guild_id: int) -> list[tuple[str, float]]:
        """Each word with a sound and its sound's seconds, by word (no audio read)."""
        rows = await self._db.fetch(
            "SELECT word, length(pcm) FROM dictionary_sounds WHERE guild_id = ? ORDER BY word_key",
            guild_id,
        )
        return [(row[0], int(row[1]) / 2 / 48_000) for row in rows]

    async def get(self, guild_id: int, keys: list[str]) -> dict[str, DictionarySound]:
        """The sounds of these casefolded words (those that have one), by key."""
        if not keys:
            return {}
        marks = ", ".join("?" * len(keys))
        rows = await self._db.fetch(
            f"SELECT word, pcm, sha256 FROM dictionary_sounds WHERE guild_id = ?"
            f" AND word_key IN ({marks})",
            guild_id,
            *keys,
        )
        found = [DictionarySound(row[0], bytes(row[1]), row[2]) for row in rows]
        return {sound.key: sound for sound in found}

    async def hashes(self, guild_id: int, keys: list[str]) -> dict[str, str]:
        """The sha256 of the sounds of these casefolded words, by key (no audio read)."""
        if not keys:
            return {}
        marks = ", ".join("?" * len(keys))
        rows = await self._db.fetch(
            f"SELECT word_key, sha256 FROM dictionary_sounds WHERE guild_id = ?"
            f" AND word_key IN ({marks})",
            guild_id,
            *keys,
        )
        return {row[0]: row[1] for row in rows}

    async def all(self, guild_id: int) -> list[DictionarySound]:
        rows = await self._db.fetch(
            "SELECT word, pcm, sha256 FROM dictionary_sounds WHERE guild_id = ? ORDER BY word_key",
            guild_id,
        )
        return [DictionarySound(row[0], bytes(row[1]), row[2]) for row in rows]

    async def count(self, guild_id: int) -> int:
        row = await self._db.fetch_one(
            "SELECT COUNT(*) FROM dictionary_sounds WHERE guild_id = ?", guild_id
        )
        return int(row[0]) if row else 0

    async def put(self, guild_id: int, sounds: list[DictionarySound], most: int) -> None:
        """Add or replace `sounds` all together, unless the server would then have more than
        `most` (SoundsFullError: nothing changed); counted under the server's lock, so
        processes sharing PostgreSQL cannot both take the last place."""
        async with self._db.transaction():
            await self._db.lock(guild_id)
            for sound in sounds:
                await self._db.execute(
                    "INSERT INTO dictionary_sounds (guild_id, word_key, word, pcm, sha256,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (guild_id, word_key)"
                    " DO UPDATE SET word = excluded.word, pcm = excluded.pcm,"
                    " sha256 = excluded.sha256, created_at = excluded.created_at",
                    guild_id,
                    sound.key,
                    sound.word,
                    sound.pcm,
                    sound.sha256,
                    utc_now(),
                )
            if await self.count(guild_id) > most:
                raise SoundsFullError(most)

    async def remove(self, guild_id: int, word: str) -> bool:
        removed = await self._db.execute(
            "DELETE FROM dictionary_sounds WHERE guild_id = ? AND word_key = ?",
            guild_id,
            word.casefold(),
        )
        return removed > 0


# ---- members blocked by moderators ------------------------------------------------------------
@dataclass(frozen=True)
class Block:
    user_id: int
    moderator_id: int
    reason: str | None
    blocked_at: str


class BlockRepository:
    """Members a server's moderators stopped the bot speaking for (`/block`)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, guild_id: int, user_id: int, moderator_id: int, reason: str | None) -> bool:
        """Block a member here; False when they were blocked already (the moderator is then
        updated, the reason too when one is given, and whether they were told is kept)."""
        added = await self._db.execute(
            "INSERT INTO member_blocks (guild_id, user_id, moderator_id, reason, blocked_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (guild_id, user_id) DO NOTHING",
            guild_id,
            user_id,
            moderator_id,
            reason,
            utc_now(),
        )
        if not added:
            await self._db.execute(
                "UPDATE member_blocks SET moderator_id = ?, reason = COALESCE(?, reason)"
                " WHERE guild_id = ? AND user_id = ?",
                moderator_id,
                reason,
                guild_id,
                user_id,
            )
        return added > 0

    async def remove(self, guild_id: int, user_id: int) -> bool:
        removed = await self._db.execute(
            "DELETE FROM member_blocks WHERE guild_id = ? AND user_id = ?", guild_id, user_id
        )
        return removed > 0

    async def blocker(self, guild_id: int, user_id: int) -> int | None:
        """Who made the member's block here (None: not blocked)."""
        row = await self._db.fetch_one(
            "SELECT moderator_id FROM member_blocks WHERE guild_id = ? AND user_id = ?",
            guild_id,
            user_id,
        )
        return int(row[0]) if row is not None else None

    async def is_blocked(self, guild_id: int, user_id: int) -> bool:
        row = await self._db.fetch_one(
            "SELECT 1 FROM member_blocks WHERE guild_id = ? AND user_id = ?", guild_id, user_id
        )
        return row is not None

    async def mark_told(self, guild_id: int, user_id: int) -> bool:
        """Record that a blocked member was told; True only the first time for this block
        (one statement: of two processes or tries at once, one tells)."""
        changed = await self._db.execute(
            "UPDATE member_blocks SET told_at = ? WHERE guild_id = ? AND user_id = ?"
            " AND told_at IS NULL",
            utc_now(),
            guild_id,
            user_id,
        )
        return changed > 0

    async def page(self, guild_id: int, offset: int, limit: int) -> list[Block]:
        """A page of the server's blocks, oldest first."""
        rows = await self._db.fetch(
            "SELECT user_id, moderator_id, reason, blocked_at FROM member_blocks"
            " WHERE guild_id = ? ORDER BY blocked_at, user_id LIMIT ? OFFSET ?",
            guild_id,
            limit,
            offset,
        )
        return [Block(row[0], row[1], row[2], row[3]) for row in rows]

    async def count(self, guild_id: int) -> int:
        row = await self._db.fetch_one(
            "SELECT COUNT(*) FROM member_blocks WHERE guild_id = ?", guild_id
        )
        return int(row[0]) if row else 0
