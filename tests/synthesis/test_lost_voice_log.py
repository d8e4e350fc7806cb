"""A voice whose recording is lost is reported in the log by its id and owner, never by
the name its member wrote (issue 48, item 20): logs keep no member's words."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.storage.database import Database
from bot.synthesis.voice_library import VoiceLibrary
from tests.services.wiring import FINGERPRINT, ModelOnDisk

NAME = "Bob's secret diary voice"


async def test_a_lost_voice_is_logged_without_its_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = await Database.open(tmp_path / "pocketvoice.db")
    try:
        owner = 202
        voice_id = await db.voices.insert(
            owner_id=owner,
            name=NAME,
            model_fingerprint=FINGERPRINT,
            state_path=f"{owner}/v.safetensors",
            clip_path=f"{owner}/v.flac",
            sha256="0" * 64,
            duration_s=3.0,
            state_bytes=1,
            clip_bytes=1,
            consented_at="2024-01-01T00:00:00+00:00",
        )  # (made before the store kept recordings; its clip file is gone)
        library = VoiceLibrary(db, ModelOnDisk(), tmp_path)  # type: ignore[arg-type]
        with caplog.at_level(logging.DEBUG):
            _, missing = await library.reconcile()
        assert [record.id for record in missing] == [voice_id]
        lost = [r.getMessage() for r in caplog.records if "lost its recording" in r.getMessage()]
        assert lost == [f"voice {voice_id} of user {owner} has lost its recording"]
        assert not any(NAME in record.getMessage() for record in caplog.records)
    finally:
        await db.close()
