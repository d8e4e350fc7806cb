"""Whose a voice state file is, in its safetensors header (`bot.storage.voice_metadata`): a
file pocket-tts wrote (the tiny model's voice state) gains its owner without a tensor changed,
what its metadata held is kept, and what is not safetensors names no owner."""

from __future__ import annotations

from pathlib import Path

import pytest
import safetensors
import safetensors.torch
import torch

from bot.storage.voice_metadata import NotSafetensors, VoiceOwner, owner_in, owner_of, with_owner
from tests.conftest import TinyModel

WHEN = "2026-12-06T17:00:00+00:00"


def test_a_voice_state_gains_its_owner_and_keeps_its_tensors(
    tiny_model: TinyModel, tmp_path: Path
) -> None:
    plain = tiny_model.voice_state.read_bytes()
    assert owner_in(plain) is None
    stamped = with_owner(plain, 1234, WHEN)
    path = tmp_path / "stamped.safetensors"
    path.write_bytes(stamped)
    assert owner_of(path) == VoiceOwner(1234, WHEN)
    assert int.from_bytes(stamped[:8], "little") % 8 == 0  # aligned, as safetensors writes
    before = safetensors.torch.load(plain)
    after = safetensors.torch.load(stamped)
    assert before.keys() == after.keys()
    assert all(torch.equal(before[key], after[key]) for key in before)
    assert with_owner(stamped, 1234, WHEN) == stamped  # stamped again: the same file


def test_metadata_already_there_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "own.safetensors"
    safetensors.torch.save_file({"a": torch.ones(3)}, str(path), metadata={"format": "pt"})
    stamped = with_owner(path.read_bytes(), 7, WHEN)
    path.write_bytes(stamped)
    with safetensors.safe_open(str(path), framework="pt") as file:
        assert file.metadata() == {
            "format": "pt",
            "pocketvoice": "a cloned voice",
            "owner_id": "7",
            "consented_at": WHEN,
        }


@pytest.mark.parametrize("data", [b"", b"RIFF....WAVEfmt ", (2**40).to_bytes(8, "little") + b"{}"])
def test_what_is_not_safetensors_names_no_owner(data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "clip.wav"
    path.write_bytes(data)
    assert owner_of(path) is None
    assert owner_of(tmp_path / "missing.safetensors") is None
    with pytest.raises(NotSafetensors):
        with_owner(data, 1, WHEN)
