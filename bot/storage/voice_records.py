"""Members' cloned voices as records: the rules over the voice and choice repositories
(`bot/storage/database.py`): names, the quota, ownership (a member sees and changes only their
own voices), voice choices, and what a shared store keeps for the other machines (recordings,
states by model fingerprint). The files are `bot/storage/voice_files.py`'s; the model states are
made in `bot/synthesis/voice_states.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from bot.core.errors import UserError
from bot.i18n.translate import Phrase, tr
from bot.storage.database import (
    STORE_ERRORS,
    ConstraintError,
    Database,
    NameTakenError,
    QuotaError,
    VoiceRecord,
)

log = logging.getLogger(__name__)

MAX_NAME_LENGTH = 32


class VoiceLibraryError(UserError):
    """A refusal the member can act on; the message is shown as is."""


STORAGE_TROUBLE = tr(
    "I could not save your voice just now (a storage problem on the bot's side). Nothing was "
    "saved; please try again later."
)


def check_name(name: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise VoiceLibraryError(tr("Please give the voice a name."))
    if len(name) > MAX_NAME_LENGTH:
        raise VoiceLibraryError(
            tr(
                "That name is {length} characters long; please keep it to {most}.",
                length=len(name),
                most=MAX_NAME_LENGTH,
            )
        )
    if not name.isprintable():
        raise VoiceLibraryError(tr("Please use only printable characters in the name."))
    return name


def quota_reached(quota: int) -> Phrase:
    return tr(
        "You already have {quota} voices, the most allowed. Delete one with /voice delete first.",
        quota=quota,
    )


class VoiceRecords:
    def __init__(self, db: Database, quota: int = 3) -> None:
        self.db = db
        self.quota = quota
        # several processes share the store: states are kept there too, for the others
        self.shared = db.dialect == "postgresql"
        # a lock lives while someone holds or waits for it: the table cannot only grow
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    def lock(self, owner_id: int) -> asyncio.Lock:
        """One change at a time per member: quota and names stay consistent, and a voice's
        state is not made while it is deleted."""
        lock = self._locks.get(owner_id)
        if lock is None:
            lock = self._locks[owner_id] = asyncio.Lock()
        return lock

    # ---- creating --------------------------------------------------------------------------
    async def check_can_create(self, owner_id: int, name: str) -> str:
        """The cheap checks, before any download or model work: the name, cleaned."""
        name = check_name(name)
        if await self.db.voices.count_for(owner_id) >= self.quota:
            raise VoiceLibraryError(quota_reached(self.quota))
        if await self.db.voices.get(owner_id, name) is not None:
            raise VoiceLibraryError(
                tr("You already have a voice named “{name}”. Pick another name.", name=name)
            )
        return name

    @contextlib.contextmanager
    def saving(self, owner_id: int, name: str) -> Iterator[None]:
        """While a new voice is saved: what the store refuses, said to the member."""
        try:
            yield
        except NameTakenError:
            raise VoiceLibraryError(
                tr("You already have a voice named “{name}”.", name=name)
            ) from None
        except QuotaError:  # another process took the last place
            raise VoiceLibraryError(quota_reached(self.quota)) from None
        except STORE_ERRORS as error:
            log.error("storing a voice of user %s failed: %r", owner_id, error)
            raise VoiceLibraryError(STORAGE_TROUBLE) from error

    async def insert(self, **fields: Any) -> int:
        """The new voice's row and recording (and state, for a shared store), within the
        quota (see `VoiceRepository.insert`); its id."""
        return await self.db.voices.insert(**fields, quota=self.quota)

    # ---- reading ---------------------------------------------------------------------------
    async def list_for(self, owner_id: int) -> list[VoiceRecord]:
        return await self.db.voices.list_for(owner_id)

    async def list_all(self) -> list[VoiceRecord]:
        return await self.db.voices.list_all()

    async def by_id(self, voice_id: int) -> VoiceRecord:
        """A voice known to exist (just made)."""
        record = await self.db.voices.get_by_id(voice_id)
        assert record is not None
        return record

    async def own_voice(self, owner_id: int, name: str) -> VoiceRecord:
        """The member's own voice by name; other members' voices are invisible."""
        record = await self.db.voices.get(owner_id, name)
        if record is None:
            raise VoiceLibraryError(
                tr(
                    "You have no voice named “{name}”. See /voice list for your voices.",
                    name=" ".join(name.split())[:40],
                )
            )
        return record

    async def current(self, record: VoiceRecord) -> VoiceRecord:
        """The voice as the store has it now; refused when it was deleted meanwhile."""
        current = await self.db.voices.get_by_id(record.id)
        if current is None:
            raise VoiceLibraryError(tr("That voice was just deleted."))
        return current

    # ---- choosing --------------------------------------------------------------------------
    async def use(
        self, user_id: int, name: str, guild_id: int | None, builtin: Collection[str]
    ) -> str:
        """Choose a voice for this server (or everywhere when `guild_id` is None): one of the
        member's own, else one of the `builtin` names; the name chosen."""
        name = " ".join(name.split())
        own = await self.db.voices.get(user_id, name)
        if own is not None:
            await self.db.choices.set(user_id, guild_id, voice_id=own.id)
            return own.name
        if name.lower() in builtin:
            await self.db.choices.set(user_id, guild_id, builtin=name.lower())
            return name.lower()
        raise VoiceLibraryError(
            tr(
                "There is no voice named “{name}” among yours or the built-in ones. See /voice "
                "list.",
                name=name[:40],
            )
        )

    async def chosen_voice(self, user_id: int, guild_id: int | None) -> str | VoiceRecord | None:
        """The member's voice choice: this server's, else their global one. A built-in voice's
        name, their own cloned voice, or None (no choice, or a voice that is not theirs)."""
        choice = await self.db.choices.for_user(user_id, guild_id)
        if choice is None:
            return None
        if choice.builtin_name is not None:
            return choice.builtin_name
        voice_id = choice.voice_id
        record = await self.db.voices.get_by_id(voice_id) if voice_id is not None else None
        return record if record is not None and record.owner_id == user_id else None

    # ---- changing and deleting -------------------------------------------------------------
    async def rename(self, owner_id: int, name: str, new_name: str) -> VoiceRecord:
        async with self.lock(owner_id):
            record = await self.own_voice(owner_id, name)
            new_name = check_name(new_name)
            other = await self.db.voices.get(owner_id, new_name)
            if other is not None and other.id != record.id:
                raise VoiceLibraryError(
                    tr("You already have a voice named “{name}”.", name=new_name)
                )
            try:
                await self.db.voices.rename(record.id, new_name)
            except NameTakenError:
                raise VoiceLibraryError(
                    tr("You already have a voice named “{name}”.", name=new_name)
                ) from None
            renamed = await self.db.voices.get_by_id(record.id)
            assert renamed is not None
            log.info("voice %s of user %s renamed", record.id, owner_id)
            return renamed

    async def delete(self, record: VoiceRecord) -> None:
        """The row, its recording and kept states, its choices (ON DELETE CASCADE); other
        processes are told. The caller holds the member's lock and removes the files."""
        await self.db.voices.delete(record)

    async def forget_member(self, user_id: int) -> None:
        """A member's voice choices and settings, in every server (their voices go first)."""
        await self.db.choices.delete_for_user(user_id)
        await self.db.members.forget_user(user_id)

    async def deleted_tags(self, tags: Iterable[str]) -> set[str]:
        """Of the files' tags, those of deleted voices (see `VoiceRepository.deleted_tags`)."""
        return await self.db.voices.deleted_tags(tags)

    # ---- what a shared store keeps for the other machines ----------------------------------
    async def kept_state(self, record: VoiceRecord, fingerprint: str) -> bytes | None:
        """The voice's state for that model, when another process kept it in the store."""
        return await self.db.voices.state(record.id, fingerprint) if self.shared else None

    async def keep_state(self, record: VoiceRecord, fingerprint: str, data: bytes) -> None:
        try:
            await self.db.voices.put_state(record.id, fingerprint, data)
        except ConstraintError:  # deleted meanwhile; its files go with the notice
            log.info("voice %s was deleted while its state was made", record.id)

    async def set_state(self, record: VoiceRecord, fingerprint: str, size: int) -> None:
        """The voice's own state is now that model's (`size` bytes)."""
        await self.db.voices.set_state(record.id, fingerprint, size)

    async def recording(self, record: VoiceRecord) -> bytes | None:
        return await self.db.voices.recording(record.id)


async def keep_old_recordings(db: Database, data_dir: Path) -> list[VoiceRecord]:
    """Store the recordings of voices made before the store kept them, from their files in
    `data_dir`; the voices whose recording is nowhere (they cannot be rebuilt)."""
    lost = []
    for record in await db.voices.without_recording():
        try:
            flac = await asyncio.to_thread((data_dir / record.clip_path).read_bytes)
        except FileNotFoundError:
            lost.append(record)
            continue
        with contextlib.suppress(ConstraintError):  # deleted meanwhile
            await db.voices.put_recording(record.id, flac)
    return lost
