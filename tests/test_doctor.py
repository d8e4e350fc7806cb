"""`python -m bot doctor` against the fake Discord: a good setup passes, and each failure a test
can cause is named with its fix."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.__main__ import sync_commands
from bot.core.config import Config, load_config
from bot.doctor import Check, check_data_dir, check_dave, run_checks
from bot.storage.database import Database
from bot.storage.migrations import discover_migrations
from tests.conftest import TinyModel
from tests.fakediscord import FakeDiscord

LATEST = discover_migrations()[-1].version  # the schema a new database is migrated to

pytestmark = pytest.mark.process  # `python -m bot ...` in a process of its own

REPO = Path(__file__).resolve().parent.parent
VIEW, READ_HISTORY, CONNECT, SPEAK = 1 << 10, 1 << 16, 1 << 20, 1 << 21


@pytest.fixture
async def fake(tmp_path: Path) -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord(tmp_path)
    await fake.start()
    yield fake
    await fake.close()


def env_for(fake: FakeDiscord, tiny_model: TinyModel, data: Path, **extra: str) -> dict[str, str]:
    return {
        **fake.env,
        "TTS_CONFIG": str(tiny_model.config),
        "DEFAULT_VOICE": str(tiny_model.clip),
        "DATA_DIR": str(data),
        **extra,
    }


async def doctor(env: dict[str, str]) -> tuple[bool, dict[str, Check]]:
    found: dict[str, Check] = {}

    def keep(check: Check) -> None:
        assert check.name not in found, f"{check.name} reported twice"
        found[check.name] = check

    ok = await run_checks(load_config(env, dotenv_path=None), keep)
    return ok, found


def settings_of(env: dict[str, str]) -> Config:
    return load_config(env, dotenv_path=None)


async def test_a_good_setup_passes_every_check(
    fake: FakeDiscord, tiny_model: TinyModel, tmp_path: Path
) -> None:
    env = env_for(fake, tiny_model, tmp_path / "data")
    await sync_commands(settings_of(env))
    db = await Database.open(tmp_path / "data" / "pocketvoice.db")
    await db.read_channels.add(int(fake.GUILD_ID), int(fake.TEXT_ID))
    await db.close()

    ok, checks = await doctor(env)
    failed = [line for c in checks.values() if not c.ok for line in c.lines()]
    assert ok, failed
    for name in (
        "libopus",
        "libsndfile",
        "torch",
        "pocket-tts adapter",
        "torch adapter",
        "discord.py adapter",
        "DAVE",
        "model",
        "voice cloning",
        "DEFAULT_VOICE",
        "DATA_DIR",
        "private files",
        "free space",
        "database",
        "token",
        "Message Content intent",
        "slash commands",
    ):
        assert name in checks
    assert f"schema {LATEST}, up to date" in checks["database"].detail
    assert checks["server 'Fake Guild'"].detail == (
        "can read its read channel; can speak in 3 of 3 voice channels"
    )
    assert "no read channel set" in checks["server 'Second Guild'"].detail
    assert "HF_TOKEN" not in checks  # not set: nothing to check


async def test_each_failure_is_named_with_its_fix(
    fake: FakeDiscord, tiny_model: TinyModel, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    env = env_for(fake, tiny_model, data, DEFAULT_VOICE="nobody-by-this-name", HF_TOKEN="hf_x")
    fake.application_flags = 0  # the Message Content intent switched off
    # no Connect/Speak in any voice channel, the stage included
    for channel in (*fake.channels[fake.GUILD_ID][1:], fake.STAGE_ID):
        fake.deny_voice_permissions(channel, CONNECT | SPEAK)
    fake.deny_voice_permissions(fake.GUILD2_TEXT_ID, READ_HISTORY)
    db = await Database.open(data / "pocketvoice.db")
    await db.read_channels.add(int(fake.GUILD2_ID), int(fake.GUILD2_TEXT_ID))
    await db.close()
    with sqlite3.connect(data / "pocketvoice.db") as raw:  # migrated by a newer PocketVoice
        raw.execute("INSERT INTO schema_migrations VALUES (99, 'future', '2030-01-01')")
    os.chmod(data / "pocketvoice.db", 0o644)
    # and the slash commands were never registered

    ok, checks = await doctor(env)
    assert not ok
    expected = {
        "DEFAULT_VOICE": "set DEFAULT_VOICE to a built-in voice name",
        "HF_TOKEN": "check this machine's network",  # Hugging Face is out of reach here
        "private files": "chmod -R go-rwx",
        "database": "run the newer PocketVoice, or restore a backup",
        "Message Content intent": "Privileged Gateway Intents > Message Content Intent",
        "server 'Fake Guild'": "give the bot View Channel and Read Message History",
        "server 'Second Guild'": "Connect and Speak where it speaks",
        "slash commands": "./run.sh sync",
    }
    for name, fix in expected.items():
        assert not checks[name].ok, name
        assert fix in (checks[name].fix or ""), (name, checks[name])
    assert "cannot speak in any voice channel (lacks Connect, Speak)" in (
        checks["server 'Fake Guild'"].detail
    )
    assert "in #general (read channel) it lacks Read Message History" in (
        checks["server 'Second Guild'"].detail
    )
    assert "not registered: /" in checks["slash commands"].detail
    assert "others can read" in checks["private files"].detail
    passed = {name for name, check in checks.items() if check.ok}
    assert {"libopus", "model", "token", "DATA_DIR"} <= passed


async def test_a_rejected_token_and_a_broken_model_are_reported(
    fake: FakeDiscord, tiny_model: TinyModel, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("flow_lm: {not: a model}\n")
    env = env_for(fake, tiny_model, tmp_path / "data", TTS_CONFIG=str(broken))
    env["DISCORD_TOKEN"] = "not.the.token"
    ok, checks = await doctor(env)
    assert not ok
    assert not checks["model"].ok and "does not load" in checks["model"].detail
    assert "DEFAULT_VOICE" not in checks  # nothing to try a voice on
    assert not checks["token"].ok and "Reset Token" in (checks["token"].fix or "")
    assert "slash commands" not in checks  # nothing more can be asked of Discord


async def test_the_command_prints_one_line_per_check_and_exits_non_zero_on_failure(
    fake: FakeDiscord, tiny_model: TinyModel, tmp_path: Path
) -> None:
    env = env_for(fake, tiny_model, tmp_path / "data")
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "TTS_"))}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "doctor",
        cwd=tmp_path,
        env={**keep, "PYTHONPATH": str(REPO), **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 120)
    lines = stdout.decode().splitlines()
    assert process.returncode == 1, stderr.decode()[-2000:]
    assert lines[0].startswith("✔ libopus")
    failed = [i for i, line in enumerate(lines) if line.startswith("✖")]
    assert [lines[i] for i in failed] == [
        "✖ slash commands: not registered: " + lines[failed[0]].split("not registered: ")[1]
    ]
    assert lines[failed[0] + 1] == "    fix: ./run.sh sync (or start once with SYNC_COMMANDS=1)"
    assert lines[-1] == "Some checks failed: see the fixes above."
    assert fake.token not in stdout.decode() + stderr.decode()


def test_weights_that_cannot_be_downloaded_and_a_missing_token_are_reported(
    tmp_path: Path,
) -> None:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "TTS_", "HF_"))}
    env = {
        **keep,
        "PYTHONPATH": str(REPO),
        "DATA_DIR": str(tmp_path / "data"),
        "TTS_LANGUAGE": "english",
        "HF_HUB_OFFLINE": "1",  # the weights are not cached here
        "HF_HOME": str(tmp_path / "hf"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "bot", "doctor"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 1
    model = lines.index("✖ model: TTS_LANGUAGE=english: weights not cached and not downloadable")
    assert lines[model + 1].startswith("    fix: Could not download the Pocket TTS weights")
    assert "set TTS_CONFIG to a local model config" in lines[model + 1]
    assert "✖ token: DISCORD_TOKEN is not set" in lines


CHECK_WORKERS = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[1]), int(sys.argv[1])))
from bot.core.config import load_config
from bot.core.descriptors import raise_soft_limit
from bot.doctor import check_workers
env = {"TTS_PIPELINES": "4", "TTS_BATCH": "4", "TTS_PIPELINE_MODE": "processes"}
check = check_workers(load_config(env, dotenv_path=None, require_token=False))
print(json.dumps([check.ok, check.warning, check.detail, check.fix, raise_soft_limit()]))
"""


@pytest.mark.parametrize("limit", [512, 4096])
def test_the_workers_open_file_need_is_checked_against_the_hard_limit(limit: int) -> None:
    """Four worker processes under a hard limit of 512 (a container's or a unit's): a warning
    with the fix; under 4,096, the need and the limit said, and the soft limit raised to it."""
    done = subprocess.run(
        [sys.executable, "-c", CHECK_WORKERS, str(limit)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    ok, warning, detail, fix, soft = json.loads(done.stdout.splitlines()[-1])
    assert "4 worker processes" in detail and "no /dev/shm needed" in detail
    assert soft == limit
    if limit == 512:
        assert ok and warning and "the open-file limit is 512, under the" in detail
        assert "LimitNOFILE=65536" in fix
    else:
        assert ok and not warning and f"open files up to {limit}" in detail


def test_dave_is_checked_and_its_protocol_version_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """davey imports and discord.py offers Discord its DAVE version; without davey, the check
    fails with the fix (Discord closes a voice connection without DAVE with 4017)."""
    import davey
    import discord.voice_state

    check = check_dave()
    assert check.ok and not check.warning
    assert f"DAVE protocol version {davey.DAVE_PROTOCOL_VERSION}" in check.detail
    assert davey.DAVE_PROTOCOL_VERSION >= 1

    monkeypatch.setitem(sys.modules, "davey", None)  # `import davey` now fails
    monkeypatch.setattr(discord.voice_state, "has_dave", False)  # as discord.py found it
    missing = check_dave()
    assert not missing.ok and "davey cannot be imported" in missing.detail
    assert missing.fix is not None and "4017" in missing.fix


def data_dir_checks(data: Path) -> dict[str, Check]:
    config = load_config({"DATA_DIR": str(data)}, dotenv_path=None, require_token=False)
    return {check.name: check for check in check_data_dir(config)}


def test_a_fresh_checkout_s_open_voices_folder_is_made_private(tmp_path: Path) -> None:
    """git makes the checkout's voices/ with the umask's mode (0755), holding only its README:
    no voice yet, so the doctor makes it private (0700) and passes, saying so."""
    voices = tmp_path / "voices"
    voices.mkdir(mode=0o755)
    os.chmod(voices, 0o755)
    (voices / "README.md").write_text("# voices/\n")
    checks = data_dir_checks(tmp_path)
    assert checks["private files"].ok, checks["private files"].lines()
    assert "made so: it held no voice yet" in checks["private files"].detail
    assert stat.S_IMODE(voices.stat().st_mode) == 0o700
    assert (voices / "README.md").read_text() == "# voices/\n"


def test_an_open_voices_folder_holding_voices_is_left_to_the_operator(tmp_path: Path) -> None:
    """Once it holds a member's voices, an open voices/ fails with the fix, unchanged: its
    folders' names are members' ids, and a restore that loosened it should be seen."""
    voices = tmp_path / "voices"
    (voices / "1200000000000000001").mkdir(parents=True, mode=0o700)
    os.chmod(voices, 0o755)
    (voices / "README.md").write_text("# voices/\n")
    checks = data_dir_checks(tmp_path)
    private = checks["private files"]
    assert not private.ok and f"others can read {voices}" in private.detail
    assert private.fix is not None and "chmod -R go-rwx" in private.fix
    assert stat.S_IMODE(voices.stat().st_mode) == 0o755
