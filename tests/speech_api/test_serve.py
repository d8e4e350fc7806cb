"""`python -m bot serve` as a new user runs it: no Discord token, a process of its own."""

from __future__ import annotations

import asyncio
import io
import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import openai
import pytest
import safetensors.numpy
import soundfile
from wyoming.client import AsyncTcpClient
from wyoming.tts import Synthesize

from tests.bot_process import bot_env
from tests.conftest import TinyModel

pytestmark = pytest.mark.process


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def serve(tmp_path: Path, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        cwd=tmp_path,
        env=bot_env(env),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )


async def test_serve_speaks_without_discord(tmp_path: Path, tiny_model: TinyModel) -> None:
    port, wyoming_port = free_port(), free_port()
    env = {
        "TTS_CONFIG": str(tiny_model.config),
        "DEFAULT_VOICE": str(tiny_model.voice_state),
        "SPEECH_PORT": str(port),
        "DATA_DIR": str(tmp_path),
        "WYOMING_PORT": str(wyoming_port),
    }
    process = await serve(tmp_path, env)
    assert process.stdout is not None
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 60)
        while b"speaks at" not in line and line:
            line = await asyncio.wait_for(process.stdout.readline(), 60)
        assert f"http://127.0.0.1:{port}/".encode() in line, line
        # the health endpoint, as a probe asks it (no key)
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/healthz") as health,
        ):
            assert (health.status, await health.text()) == (200, "ready\n")
        api = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="-", max_retries=0)
        speech = await api.audio.speech.create(
            model="tts-1",
            voice="default",
            input="Hello from the speech service.",
            response_format="wav",
        )
        with soundfile.SoundFile(io.BytesIO(speech.content)) as sound:
            assert sound.samplerate == 24_000 and len(sound.read(24_000 * 5)) > 2_400
        await api.close()
        async with AsyncTcpClient("127.0.0.1", wyoming_port) as client:
            await client.write_event(Synthesize("Hello, Home Assistant.").event())
            kinds = []
            while not kinds or kinds[-1] != "audio-stop":
                event = await asyncio.wait_for(client.read_event(), 30)
                assert event is not None
                kinds.append(event.type)
            assert kinds[0] == "audio-start" and "audio-chunk" in kinds
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), 20)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    log = (await process.stdout.read()).decode()
    assert code == 0, log
    assert "Traceback" not in log


async def test_serve_refuses_a_bind_beyond_this_machine_without_keys(tmp_path: Path) -> None:
    process = await serve(tmp_path, {"SPEECH_HOST": "0.0.0.0"})
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    assert (
        out.decode()
        .strip()
        .splitlines()[-1]
        .startswith(
            "Configuration error: SPEECH_HOST 0.0.0.0 is reachable from other machines: set "
            "SPEECH_API_KEYS"
        )
    )


def test_the_operator_adds_and_exports_service_voices(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    env = bot_env(
        {
            "TTS_CONFIG": str(tiny_model.config),
            "DEFAULT_VOICE": str(tiny_model.clip),
            "DATA_DIR": str(tmp_path),
        }
    )

    def voices(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bot", "voices", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    added = voices("import", "--service", "narrator", str(tiny_model.clip))
    assert added.returncode == 0, added.stderr
    path = tmp_path / "service-voices" / "narrator.wav"
    assert path.read_bytes() == tiny_model.clip.read_bytes()
    assert path.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "service-voices").stat().st_mode & 0o777 == 0o700
    out = tmp_path / "narrator.safetensors"
    exported = voices("export", "--service", "narrator", "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert set(safetensors.numpy.load_file(out)) == set(
        safetensors.numpy.load_file(tiny_model.voice_state)
    )  # the clip's voice state, as /clone saves one
    # The two refusals in one process (torch is imported once, 3 CPU-s): each is `main(argv)`,
    # what `python -m bot` exits with, and what it wrote on stderr meanwhile
    refusals = [
        ["voices", "import", "--service", "alba", str(tiny_model.clip)],
        ["voices", "export", "--service", "nobody", "--out", str(out)],
    ]
    code = (
        "import contextlib, io, json, sys\n"
        "from bot.__main__ import main\n"
        "said = []\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    stderr = io.StringIO()\n"
        "    with contextlib.redirect_stderr(stderr):\n"
        "        said.append((main(argv), stderr.getvalue()))\n"
        "print(json.dumps(said))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(refusals)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (refused, refused_stderr), (missing, missing_stderr) = json.loads(done.stdout.splitlines()[-1])
    assert refused == 1 and "built-in" in refused_stderr
    assert missing == 1 and "no service voice “nobody”" in missing_stderr


@pytest.mark.parametrize("setting", ["SPEECH_PORT", "WYOMING_PORT"])
async def test_a_port_taken_is_said_before_the_model_loads(
    tmp_path: Path, tiny_model: TinyModel, setting: str
) -> None:
    """Another program holds the port: `serve` says so in one line and stops, with no
    model loaded. Before, the model loaded first (tens of seconds with real weights)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = int(holder.getsockname()[1])
        env = {
            "TTS_CONFIG": str(tiny_model.config),
            "DEFAULT_VOICE": str(tiny_model.voice_state),
            "DATA_DIR": str(tmp_path),
            "SPEECH_PORT": str(free_port()),
            "WYOMING_PORT": str(free_port()),
            "LOG_LEVEL": "INFO",
            setting: str(held),
        }
        process = await serve(tmp_path, env)
        out, _ = await asyncio.wait_for(process.communicate(), 60)
    log = out.decode()
    assert process.returncode == 1, log
    assert "Pocket TTS loaded" not in log and "Traceback" not in log, log
    for_what = " for Wyoming" if setting == "WYOMING_PORT" else ""
    assert log.strip().splitlines()[-1] == (
        f"Speech service: cannot listen on 127.0.0.1:{held}{for_what} (Address already in "
        f"use): set {setting} to a free port"
    ), log
