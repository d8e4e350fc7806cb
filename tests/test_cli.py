"""`python -m bot ...` as an operator runs it: real processes, real files, real signals."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import soundfile

from tests.bot_process import bot_env
from tests.conftest import TinyModel
from tests.fakediscord import FakeDiscord

pytestmark = pytest.mark.process  # `python -m bot ...` in a process of its own


def run_cli(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=cwd,
        env=bot_env(env),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("suffix", [".ogg", ".wav"])
def test_say_writes_a_file_of_the_spoken_length(
    tmp_path: Path, tiny_model: TinyModel, suffix: str
) -> None:
    out = tmp_path / f"hello{suffix}"
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    done = run_cli(
        ["say", "Hello there", "--out", str(out), "--voice", str(tiny_model.clip)], tmp_path, env
    )
    assert done.returncode == 0, done.stderr
    spoken = float(re.search(r"\(([\d.]+) s of audio\)", done.stdout).group(1))  # type: ignore[union-attr]
    assert re.search(r"First chunk after \d+ ms; real-time factor [\d.]+x", done.stdout)
    decoded, rate = soundfile.read(str(out))
    assert rate == 24_000
    assert spoken > 1.0
    assert abs(len(decoded) / rate - spoken) < 0.03


def test_say_refuses_an_unknown_file_type_before_loading(tmp_path: Path) -> None:
    done = run_cli(["say", "Hi", "--out", str(tmp_path / "x.mp3")], tmp_path, {})
    assert done.returncode != 0
    assert "--out must end in .wav or .ogg" in done.stderr
    assert not (tmp_path / "x.mp3").exists()


def test_missing_token_stops_start_with_one_clear_line(tmp_path: Path) -> None:
    done = run_cli(["run"], tmp_path, {})
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "DISCORD_TOKEN" in lines[0]


def test_unreachable_weights_name_the_ways_out(tmp_path: Path) -> None:
    env = {"TTS_LANGUAGE": "english", "HF_HUB_OFFLINE": "1"}
    done = run_cli(["say", "Hi", "--out", str(tmp_path / "x.wav")], tmp_path, env)
    assert done.returncode == 1
    assert "TTS_CONFIG" in done.stderr and "HF_TOKEN" in done.stderr
    assert "Traceback" not in done.stderr


async def test_sigterm_leaves_voice_and_exits_cleanly(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    fake = FakeDiscord(tmp_path)
    await fake.start()
    env = {
        **fake.env,
        "TTS_CONFIG": str(tiny_model.full_length_config),
        "DEFAULT_VOICE": str(tiny_model.clip),
        "LOG_LEVEL": "DEBUG",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "run",
        cwd=tmp_path,
        env=bot_env(env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output = asyncio.create_task(process.stdout.read())  # type: ignore[union-attr]
    try:
        await asyncio.wait_for(fake.identified.wait(), 60)
        await fake.set_voice_state("alice", FakeDiscord.VOICE_ID)
        inter = await fake.interaction("say", {"text": "A long message that is still being spoken"})
        await inter.wait_final(timeout=60)
        await fake.wait_for(lambda: len(fake.udp.packets) > 10, 30, "speech")
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), 20)
    finally:
        if process.returncode is None:
            process.kill()
        log = (await output).decode()
        await fake.close()
    assert code == 0, log
    assert fake.bot_voice_channel is None  # it left voice on the way out
    assert "Traceback" not in log and "terminate called" not in log
    assert fake.token not in log  # never log the token, even at DEBUG


async def test_unusable_default_voice_stops_start_with_a_clear_line(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    fake = FakeDiscord(tmp_path)
    await fake.start()
    env = {
        **fake.env,
        "TTS_CONFIG": str(tiny_model.config),
        "DEFAULT_VOICE": str(tmp_path / "missing.wav"),
    }
    try:
        done = await asyncio.to_thread(run_cli, ["run"], tmp_path, env)
    finally:
        await fake.close()
    assert done.returncode == 1
    assert "DEFAULT_VOICE cannot be used: voice file" in done.stderr
    assert "missing.wav does not exist" in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_metrics_port_in_use_stops_start_with_a_clear_line(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    fake = FakeDiscord(tmp_path)
    await fake.start()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {**fake.env, "TTS_CONFIG": str(tiny_model.config), "METRICS_PORT": str(port)}
        try:
            done = await asyncio.to_thread(run_cli, ["run"], tmp_path, env)
        finally:
            await fake.close()
    assert done.returncode == 1
    assert f"METRICS_PORT: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "choose another METRICS_PORT" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unusable_data_dir_stops_start_with_a_clear_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    env = {"DISCORD_TOKEN": "x", "DATA_DIR": str(tmp_path / "a-file" / "data")}
    done = run_cli(["migrate"], tmp_path, env)
    assert done.returncode == 1
    assert done.stderr.startswith(f"DATA_DIR: cannot use {tmp_path / 'a-file' / 'data'}")
    assert "set DATA_DIR to another folder" in done.stderr
    assert "Traceback" not in done.stderr


@dataclass
class Step:
    """What one `python -m bot ARGS` said and left: its exit code, stdout and stderr, and
    the files in `watched` once it had ended."""

    returncode: int
    stdout: str
    stderr: str
    files: list[str] | None  # None: no such folder


def run_steps(steps: list[list[str]], cwd: Path, env: dict[str, str], watched: Path) -> list[Step]:
    """Each step as `python -m bot STEP` runs it (`main(STEP)`, what it exits with), one
    after another in one process: torch and the model are loaded in it once, not once a
    step (4 CPU-s each, 2026-12-06). Each step's stdout and stderr are its own."""
    code = (
        "import contextlib, io, json, os, sys\n"
        "from bot.__main__ import main\n"
        "said = []\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    out, err = io.StringIO(), io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
        "        code = main(argv)\n"
        "    files = sorted(os.listdir(sys.argv[2])) if os.path.isdir(sys.argv[2]) else None\n"
        "    said.append((code, out.getvalue(), err.getvalue(), files))\n"
        "print(json.dumps(said))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(steps), str(watched)],
        cwd=cwd,
        env=bot_env(env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    said = [Step(*step) for step in json.loads(done.stdout.splitlines()[-1])]
    assert len(said) == len(steps)
    return said


def test_migrate_and_operator_voice_commands(tmp_path: Path, tiny_model: TinyModel) -> None:
    from tests.audio_samples import encode, speech_like

    env = {"DATA_DIR": str(tmp_path / "data"), "TTS_CONFIG": str(tiny_model.config)}
    first = run_cli(["migrate"], tmp_path, env)
    assert first.returncode == 0, first.stderr
    assert (
        first.stdout.strip()
        == "Migrations applied: 0001, 0002, 0003, 0004, 0005, 0006, 0007, 0008, 0009, 0010,"
        " 0011, 0012."
        " Schema version 12."
    )

    clip = tmp_path / "owner.flac"
    clip.write_bytes(encode(speech_like(4.0), "flac"))
    # the commands after the first, in one process (`run_steps`)
    again, imported, duplicate, listed, listed_7, missing, deleted = run_steps(
        [
            ["migrate"],
            ["voices", "import", "--user", "42", "--name", "Boss", str(clip)],
            ["voices", "import", "--user", "42", "--name", "boss", str(clip)],
            ["voices", "list"],
            ["voices", "list", "--user", "7"],
            ["voices", "delete", "--user", "7", "--name", "Boss"],
            ["voices", "delete", "--user", "42", "--name", "boss"],
        ],
        tmp_path,
        env,
        watched=tmp_path / "data" / "voices" / "42",
    )
    assert again.stdout.strip() == "Migrations applied: nothing to do. Schema version 12."

    assert imported.returncode == 0, imported.stderr
    assert "Imported voice 1 “Boss” for user 42" in imported.stdout
    assert imported.files is not None and len(imported.files) == 2
    assert duplicate.returncode == 1 and "already have a voice named" in duplicate.stderr

    assert listed.stdout.splitlines()[0].startswith("42\t1\tBoss\t4.")
    assert listed.stdout.splitlines()[-1] == "1 voice."
    assert listed_7.stdout.strip() == "0 voices."

    assert missing.returncode == 1 and "no voice named “Boss”" in missing.stderr
    assert deleted.returncode == 0 and "Deleted voice 1 “Boss” of user 42" in deleted.stdout
    assert deleted.files == []


def test_database_commands_do_not_load_the_model_libraries(tmp_path: Path) -> None:
    """`migrate` and `voices list` answer in about a second: torch is never imported."""
    code = (
        "import sys; from bot.__main__ import main\n"
        "codes = [main(['migrate']), main(['voices', 'list'])]\n"
        "print(codes, sorted(m for m in ('torch', 'pocket_tts') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=bot_env({"DATA_DIR": str(tmp_path / "data")}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[0, 0] []"
