"""`/voice export` end to end (issue 58): refused where the server's admins switched cloning
off (in the member's language, to them alone), and the file it gives says whose voice it is
(the owner's id, their consent time, "a cloned voice", in the safetensors metadata) with the
very tensors the bot speaks with; the command line's `say --voice FILE` names that owner."""

from __future__ import annotations

from pathlib import Path

import safetensors
import torch

from tests.conftest import RunningBot, TinyModel
from tests.e2e.test_voices import MANAGE_GUILD, clone, voice_files
from tests.test_cli import run_cli

REFUSED = {
    "en-US": "Voice cloning is switched off in this server by its admins, so voices cannot be "
    "exported here.",
    "fr": "Le clonage de voix est désactivé sur ce serveur par ses admins : les voix ne peuvent "
    "pas y être exportées.",
}


def tensors(path: Path) -> dict[str, torch.Tensor]:
    with safetensors.safe_open(str(path), framework="pt") as file:
        return {key: file.get_tensor(key) for key in file.keys()}  # noqa: SIM118 (no iteration)


async def test_an_exported_voice_says_whose_it_is(
    running_bot: RunningBot, tiny_model: TinyModel, tmp_path: Path
) -> None:
    fake, bot = running_bot.fake, running_bot.bot
    alice = fake.humans["alice"].id
    await (await clone(fake, "Mine")).wait_content("is ready")
    (record,) = await bot.app.voices.library.records.list_for(int(alice))
    exported = await fake.interaction("voice export", {"name": "Mine"})
    answer = await exported.wait_content("as a file")
    assert exported.responses[0]["flags"] & 64  # to her alone
    path = tmp_path / "Mine.safetensors"
    path.write_bytes(answer["_files"]["Mine.safetensors"])

    with safetensors.safe_open(str(path), framework="pt") as file:
        metadata = file.metadata()
    assert metadata == {
        "pocketvoice": "a cloned voice",
        "owner_id": alice,
        "consented_at": record.consented_at,
    }
    state = next(p for p in voice_files(running_bot) if p.suffix == ".safetensors")
    kept, given = tensors(state), tensors(path)
    assert kept.keys() == given.keys()
    assert all(torch.equal(kept[key], given[key]) for key in kept)

    # the command line speaks with it (pocket-tts reads the file as any) and says whose it is
    env = {"TTS_CONFIG": str(tiny_model.config)}
    out = tmp_path / "said.wav"
    done = run_cli(["say", "Hello there", "--out", str(out), "--voice", str(path)], tmp_path, env)
    assert done.returncode == 0, done.stderr
    assert f"is a cloned voice of member {alice} (consent given {record.consented_at})." in (
        done.stdout
    )
    assert out.stat().st_size > 0


async def test_no_export_where_cloning_is_off(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await (await clone(fake, "Mine")).wait_content("is ready")
    switched = await fake.interaction(
        "config speech cloning",
        {"value": False},
        permissions=fake.EVERYONE_PERMISSIONS | MANAGE_GUILD,
    )
    assert (await switched.wait_final())["content"] == "cloning is now off."
    for locale, refusal in REFUSED.items():
        asked = await fake.interaction("voice export", {"name": "Mine"}, locale=locale)
        answer = await asked.wait_final()
        assert answer["content"] == refusal
        assert asked.responses[0]["flags"] & 64  # to her alone
        assert not answer.get("_files")
        assert answer.get("allowed_mentions") == {"parse": []}
