"""The container image, built from our Dockerfile and run for real with podman, hardened as
compose.yaml runs it (a read-only root, a tmpfs /tmp, no capability, no new privileges): it
starts as its non-root user, speaks through our fake Discord, turns healthy only once ready,
keeps its data on its volume, stops cleanly within the compose file's grace period, and
answers its CLI. It is built from the pinned base and the hashed lock alone, and its build
context carries no member's data."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import socket
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.audio_samples import encode, make_clip, speech_like
from tests.conftest import TinyModel, shown_settings
from tests.fakediscord import FakeDiscord
from tests.image.podman import (
    BASE,
    REPO,
    STAND_IN_LABEL,
    Podman,
    Storage,
    pinned_base,
    why_podman_cannot_run,
)
from tests.test_deploy import MEMBER_DATA, locked
from tests.tiny_model import write_random_config, write_voice_state

pytestmark = pytest.mark.skipif(
    why_podman_cannot_run() is not None, reason=str(why_podman_cannot_run())
)

TAG = "localhost/pocketvoice:image-test"
ADMIN = FakeDiscord.EVERYONE_PERMISSIONS | (1 << 5)  # Manage Server
CLIP = encode(speech_like(4.0), "wav")
SERVICE = yaml.safe_load((REPO / "compose.yaml").read_text())["services"]["pocketvoice"]
GRACE_S = float(SERVICE["stop_grace_period"].rstrip("s"))


def hardening() -> list[str]:
    """compose.yaml's hardening as `podman run` flags, so that the image runs here as the
    compose file runs it (but its `ulimits`: podman here runs in a user namespace, which may
    not set them). Podman's --read-only also mounts tmpfs of its own on /tmp, /run and
    /var/tmp, and Docker's does not: turned off, only the compose file's tmpfs are there."""
    args = ["--read-only", "--read-only-tmpfs=false"] if SERVICE.get("read_only") else []
    for flag, key in (
        ("--tmpfs", "tmpfs"),
        ("--cap-drop", "cap_drop"),
        ("--cap-add", "cap_add"),
        ("--security-opt", "security_opt"),
    ):
        for value in SERVICE.get(key, []):
            args += [flag, value]
    return args


async def assert_hardened(podman: Podman, name: str) -> None:
    """The running container is as compose.yaml asks, as podman records it and as the kernel
    holds the bot's process to it: root read-only, /tmp the one place written outside the
    volumes, no capability in any set, no_new_privs."""
    inspected = await podman.inspect(name)
    host = inspected["HostConfig"]
    assert host["ReadonlyRootfs"] is True
    assert not host["CapAdd"] and not inspected["EffectiveCaps"], inspected["EffectiveCaps"]
    assert "no-new-privileges" in json.dumps(host["SecurityOpt"]), host["SecurityOpt"]
    status = (await podman.run("exec", name, "cat", "/proc/1/status")).check("status").out
    fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
    assert fields["NoNewPrivs"].strip() == "1"
    for held in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(fields[held], 16) == 0, (held, fields[held])
    # even root in the container cannot write the image's files; the bot's user can write /tmp
    refused = await podman.run("exec", "--user", "0", name, "touch", "/usr/local/probe")
    assert refused.code != 0 and "Read-only file system" in refused.err, refused
    wrote = await podman.run("exec", name, "sh", "-c", "echo x > /tmp/probe && rm /tmp/probe")
    assert wrote.code == 0, wrote
    mounts = (await podman.run("exec", name, "cat", "/proc/mounts")).check("mounts").out
    assert re.search(r"^tmpfs /tmp tmpfs ", mounts, re.M), mounts


@dataclass
class Image:
    podman: Podman
    tag: str
    build_s: float
    base: str


@pytest.fixture(scope="module")
async def image(tmp_path_factory: pytest.TempPathFactory, podman_storage: Storage) -> Image:
    podman = Podman(tmp_path_factory.mktemp("podman"), podman_storage)
    base, _ = await asyncio.gather(podman.ensure_base(), podman.wheelhouse())
    build_s = await podman.build(TAG)
    return Image(podman, TAG, build_s, base)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def shared_folder(path: Path) -> Path:
    """A folder the image's user (10001) may read, mounted at the same path inside."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)
    return path


@dataclass
class Container:
    image: Image
    name: str
    fake: FakeDiscord
    port: int

    async def podman(self, *args: str, timeout: float = 60) -> str:
        done = await self.image.podman.run(*args, timeout=timeout)
        return done.check(" ".join(args[:2])).out

    async def healthy(self) -> bool:
        """What the image's own HEALTHCHECK says now."""
        done = await self.image.podman.run("healthcheck", "run", self.name, timeout=30)
        return done.code == 0

    async def wait_healthy(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not await self.healthy():
            if time.monotonic() > deadline:
                raise AssertionError(f"never healthy:\n{await self.logs()}")
            await asyncio.sleep(1)

    async def wait_answering(self, timeout: float = 120) -> None:
        """Until /livez answers: the bot's process is up (ready or not)."""
        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.port}/livez"
        while True:
            try:
                await asyncio.to_thread(urllib.request.urlopen, url, timeout=2)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"never answered:\n{await self.logs()}") from None
                await asyncio.sleep(0.5)

    async def wait_identified(self, timeout: float = 60) -> None:
        """Until the bot IDENTIFYs to the fake Discord; if the container ends first, why."""
        deadline = time.monotonic() + timeout
        while not self.fake.identified.is_set():
            state = await self.state()
            if not state["Running"] or time.monotonic() > deadline:
                raise AssertionError(f"no IDENTIFY ({state['Status']}):\n{await self.logs()}")
            await asyncio.sleep(0.5)

    async def logs(self) -> str:
        done = await self.image.podman.run("logs", self.name, timeout=30)
        return done.out + done.err

    async def state(self) -> dict:  # type: ignore[type-arg]
        return (await self.image.podman.inspect(self.name))["State"]  # type: ignore[no-any-return]


@contextlib.asynccontextmanager
async def container(
    image: Image, tmp_path: Path, tiny_model: TinyModel, volume: str
) -> AsyncIterator[Container]:
    share = shared_folder(tmp_path / "share")
    model = shared_folder(tiny_model.config.parent)
    fake = FakeDiscord(share)
    fake.ready_allowed.clear()
    await fake.start()
    port = free_port()
    env = {
        **fake.env,
        "TTS_CONFIG": str(tiny_model.full_length_config),
        "DEFAULT_VOICE": str(tiny_model.clip),
        "METRICS_PORT": str(port),
        "HF_HUB_OFFLINE": "1",
    }
    name = f"pocketvoice-test-{uuid.uuid4().hex[:8]}"
    args = [
        "run",
        "-d",
        "--name",
        name,
        "--network",
        "host",
        "-v",
        f"{volume}:/data",
        "-v",
        f"{share}:{share}:ro",
        "-v",
        f"{model}:{model}:ro",
        *hardening(),
    ]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    running = Container(image, name, fake, port)
    try:
        await running.podman(*args, image.tag)
        yield running
    finally:
        await image.podman.remove(name)
        await fake.close()


async def test_the_image_speaks_turns_healthy_keeps_its_data_and_stops_cleanly(
    image: Image, tmp_path: Path, tiny_model: TinyModel
) -> None:
    volume = f"pocketvoice-test-data-{uuid.uuid4().hex[:8]}"
    try:
        async with container(image, tmp_path, tiny_model, volume) as bot:
            fake = bot.fake
            # 1. it starts, as its non-root user
            await bot.wait_answering()
            assert (await bot.podman("exec", bot.name, "id", "-u")).strip() == "10001"
            await assert_hardened(image.podman, bot.name)
            # 3. not healthy while Discord has not said READY; healthy once it has
            await bot.wait_identified()
            assert not await bot.healthy()
            fake.ready_allowed.set()
            await bot.wait_healthy()

            # 2. it speaks: a /say is heard
            await fake.set_voice_state("alice", FakeDiscord.VOICE_ID)
            said = await fake.interaction("say", {"text": "Hello from the container."})
            assert (await said.wait_final(60))["content"].startswith("Speaking in")
            await fake.wait_for(
                lambda: sum(not p.is_silence for p in fake.udp.packets) > 10, 60, "speech"
            )

            # 4. a voice cloned and a setting changed ...
            clip = fake.attachment("me.wav", CLIP)
            cloned = await fake.interaction(
                "clone", {"name": "Mine", "clip": clip, "consent": True}
            )
            await cloned.wait_content("is ready", 120)
            changed = await fake.interaction(
                "config text max_length", {"value": 77}, permissions=ADMIN
            )
            await changed.wait_final()

            # 5. podman stop (SIGTERM) ends it within the grace period, leaving voice first
            await fake.wait_for(lambda: fake.bot_voice_channel is not None, 30, "the bot in voice")
            started = time.monotonic()
            await bot.podman("stop", "-t", str(int(GRACE_S)), bot.name, timeout=GRACE_S + 30)
            took = time.monotonic() - started
            state = await bot.state()
            assert state["ExitCode"] == 0, await bot.logs()
            assert took < GRACE_S
            assert fake.bot_voice_channel is None  # it left voice on the way out
            logs = await bot.logs()
            assert "Traceback" not in logs and fake.token not in logs
            assert "Read-only file system" not in logs  # nothing wanted writing elsewhere

            # ... survive a start with the same volume
            fake.identified.clear()
            await bot.podman("start", bot.name)
            await bot.wait_healthy()
            listed = await (await fake.interaction("voice list")).wait_final()
            assert "Mine" in listed["content"]
            shown = await (await fake.interaction("settings", permissions=ADMIN)).wait_response(2)
            fields = shown_settings(shown)
            assert fields["max_length"].startswith("77"), fields
            stats = await bot.podman("exec", bot.name, "stat", "-c", "%a %u", "/data")
            assert stats.split() == ["700", "10001"]  # private, the image user's
            # all it wrote there is what the ignore files keep out of git and images (no
            # stray cache: HOME is /data)
            found = await bot.podman("exec", bot.name, "ls", "-A", "/data")
            assert set(found.split()) <= {path.split("/")[0] for path in MEMBER_DATA}, found
    finally:
        await image.podman.run("volume", "rm", "-f", volume)


async def test_the_image_answers_its_cli(
    image: Image, tmp_path: Path, tiny_model: TinyModel
) -> None:
    model = shared_folder(tiny_model.config.parent)
    volume = f"pocketvoice-test-cli-{uuid.uuid4().hex[:8]}"
    run = [
        "run",
        "--rm",
        "--network",
        "none",
        "-v",
        f"{volume}:/data",
        "-v",
        f"{model}:{model}:ro",
        "-e",
        f"TTS_CONFIG={tiny_model.config}",
        "-e",
        f"DEFAULT_VOICE={tiny_model.clip}",
        "-e",
        "HF_HUB_OFFLINE=1",
        "-e",
        "DISCORD_TOKEN=not-a-real-token",
        *hardening(),
    ]
    try:
        migrated = await image.podman.run(*run, image.tag, "migrate", timeout=120)
        assert migrated.code == 0, migrated.out + migrated.err
        doctor = await image.podman.run(*run, image.tag, "doctor", timeout=180)
        for line in ("✔ libopus", "✔ torch: torch 2.13.0+cpu, CPU build", "✔ model", "✔ DATA_DIR"):
            assert line in doctor.out, doctor.out + doctor.err
    finally:
        await image.podman.run("volume", "rm", "-f", volume)


async def test_the_image_is_lean(image: Image) -> None:
    """No compilers, no pip cache, no test tools in what users pull."""
    probe = (
        "for c in gcc cc g++ make; do command -v $c; done;"
        " ls -A /root/.cache /data/.cache 2>/dev/null;"
        " python -c 'import importlib.util as u;"
        ' print(*[m for m in ("pytest", "ruff", "hypothesis", "uv") if u.find_spec(m)])\''
    )
    found = await image.podman.run(
        "run", "--rm", "--network", "none", "--entrypoint", "sh", image.tag, "-c", probe
    )
    assert found.code == 0 and found.out.strip() == "", found.out


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


async def test_the_image_is_built_from_its_pinned_base_and_hashed_lock(image: Image) -> None:
    """FROM names the base by digest (here the stand-in takes its place: `--from`, see
    tests/image/podman.py); pip installed requirements.lock with --require-hashes, and what the
    image holds is exactly what the lock names, at its versions."""
    assert re.fullmatch(r"docker\.io/library/python:[\w.-]+@sha256:[0-9a-f]{64}", pinned_base())
    if await image.podman.base_args():
        labels = (await image.podman.inspect(image.tag))["Config"]["Labels"] or {}
        assert STAND_IN_LABEL in labels  # built on the stand-in for the pinned base
        assert (await image.podman.run("image", "exists", BASE)).code == 0
    history = await image.podman.run(
        "history", "--no-trunc", "--format", "{{.CreatedBy}}", image.tag
    )
    (install,) = [
        line
        for line in history.check("history").out.splitlines()
        if "pip install" in line and "requirements.lock" in line
    ]
    assert "--require-hashes" in install.split(), install
    listed = await image.podman.run(
        "run",
        "--rm",
        "--network",
        "none",
        *hardening(),
        "--entrypoint",
        "python",
        image.tag,
        "-m",
        "pip",
        "list",
        "--format",
        "json",
    )
    installed = {canonical(p["name"]): p["version"] for p in json.loads(listed.check("pip").out)}
    assert installed.pop("pocketvoice") == "0.1.0"
    for tool in ("pip", "wheel"):  # the base's own
        installed.pop(tool, None)
    assert installed == {name: version for name, (version, _) in locked().items()}


async def test_a_download_that_does_not_match_the_lock_stops_the_build(
    image: Image, tmp_path: Path
) -> None:
    """The build checks every file pip takes against the lock (here from the run's wheelhouse,
    `Podman.build_args`): with one package's hashes replaced, the build stops at that package
    (the steps before come from the image's cache)."""
    context = tmp_path / "context"
    context.mkdir()
    for name in (
        "Dockerfile",
        ".dockerignore",
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "NOTICE.md",
        "bot",
        "cogs",
        "migrations",
    ):
        copy = shutil.copytree if (REPO / name).is_dir() else shutil.copy
        copy(REPO / name, context / name)
    lock = (REPO / "requirements.lock").read_text()
    emoji = re.search(r"^emoji==.*?\n(?=\S)", lock, re.M | re.S)  # its line and its hashes
    assert emoji is not None and "--hash" in emoji[0]
    wrong = re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, emoji[0])
    (context / "requirements.lock").write_text(lock.replace(emoji[0], wrong))
    args = [*await image.podman.build_args(), *await image.podman.base_args()]
    tag = "localhost/pocketvoice:tampered-lock"
    done = await image.podman.run("build", *args, "-t", tag, str(context), timeout=900)
    assert done.code != 0
    assert "DO NOT MATCH THE HASHES" in done.err + done.out, done.out[-2000:] + done.err[-2000:]
    assert "emoji==" in done.err + done.out


async def test_the_build_context_leaves_members_data_out(image: Image, tmp_path: Path) -> None:
    """A checkout run with DATA_DIR=. holds the database, voices and the phrase cache: built
    from there, none of it reaches an image (.dockerignore, as the builder reads it)."""
    context = tmp_path / "checkout"
    for path in [*MEMBER_DATA, ".env", "bot/__init__.py", "compose.yaml"]:
        (context / path).parent.mkdir(parents=True, exist_ok=True)
        (context / path).write_text("member data\n")
    (context / ".dockerignore").write_text((REPO / ".dockerignore").read_text())
    containerfile = tmp_path / "Containerfile"
    containerfile.write_text(f"FROM {BASE}\nCOPY . /checkout/\n")
    tag = "localhost/pocketvoice:context-test"
    done = await image.podman.run(
        "build", "--pull=never", "-f", str(containerfile), "-t", tag, str(context), timeout=300
    )
    done.check("building the context probe")
    found = await image.podman.run(
        "run", "--rm", "--network", "none", tag, "find", "/checkout", "-type", "f"
    )
    copied = {line.removeprefix("/checkout/") for line in found.check("find").out.split()}
    assert copied - {".dockerignore"} == {"bot/__init__.py", "compose.yaml"}, copied


VOICES = 30  # distinct voices, one after the other: 180 MB of states against a 64 MB /dev/shm


def english_sized_voices(folder: Path) -> tuple[Path, list[Path]]:
    """The `english` architecture with random weights (its config, in `folder`) and VOICES
    distinct voice states of its size, each cloned from 10 s (about 6 MB), in `folder/voices`."""
    import torch
    from safetensors.torch import load_file, save_file

    config = write_random_config("english", folder)
    clip = make_clip(folder / "ten-seconds.wav", seconds=10.0)
    state = load_file(str(write_voice_state(config, clip, folder / "english.safetensors")))
    voices = shared_folder(folder / "voices")
    made = []
    for n in range(VOICES):
        generator = torch.Generator().manual_seed(n)
        made.append(voices / f"voice{n:02d}.safetensors")
        save_file(
            {
                key: tensor + 0.01 * torch.randn(tensor.shape, generator=generator)
                if tensor.is_floating_point()
                else tensor
                for key, tensor in state.items()
            },
            str(made[-1]),
        )
        made[-1].chmod(0o644)
    for path in folder.iterdir():
        if path.is_file():
            path.chmod(0o644)
    return config, made


async def test_two_worker_processes_speak_30_voices_under_the_default_dev_shm(
    image: Image, tmp_path: Path, tiny_model: TinyModel
) -> None:
    """The image's speech service with 2 worker processes on these 2 cores, the container's
    default /dev/shm (64 MB), hardened as compose runs it: 30 operator voices of the English
    model's size, each asked for once, one after the other, are each heard."""
    folder = shared_folder(tmp_path / "english")
    config, voices = await asyncio.to_thread(english_sized_voices, folder)
    clip = shared_folder(tmp_path / "clip") / "clip.wav"
    shutil.copy(tiny_model.clip, clip)
    clip.chmod(0o644)
    total = sum(voice.stat().st_size for voice in voices)
    port = free_port()
    name = f"pocketvoice-test-{uuid.uuid4().hex[:8]}"
    volume = f"pocketvoice-test-voices-{uuid.uuid4().hex[:8]}"
    env = {
        "TTS_CONFIG": str(config),
        "DEFAULT_VOICE": str(clip),
        "TTS_PIPELINES": "2",
        "TTS_PIPELINE_MODE": "processes",
        "SPEECH_PORT": str(port),
        "HF_HUB_OFFLINE": "1",
    }
    args = ["run", "-d", "--name", name, "--network", "host", "-v", f"{volume}:/data"]
    args += ["-v", f"{folder}:{folder}:ro", "-v", f"{clip.parent}:{clip.parent}:ro"]
    args += ["-v", f"{folder / 'voices'}:/data/service-voices:ro", *hardening()]
    for key, value in env.items():
        args += ["-e", f"{key}={value}"]
    try:
        (await image.podman.run(*args, image.tag, "serve")).check("podman run")
        shm = await image.podman.run("exec", name, "df", "-k", "/dev/shm")
        shm_kb = int(shm.check("df").out.splitlines()[-1].split()[1])
        assert shm_kb <= 64 * 1024 < total // 1024, (shm_kb, total)
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 300
        while True:  # three copies of the English model load (this one and two workers)
            try:
                await asyncio.to_thread(urllib.request.urlopen, f"{base}/models", timeout=5)
                break
            except OSError:
                logs = await image.podman.run("logs", name)
                assert time.monotonic() < deadline, logs.out + logs.err
                await asyncio.sleep(2)
        heard = []
        for voice in voices:
            body = {
                "model": "tts-1",
                "input": "Hello.",
                "voice": voice.stem,
                "response_format": "wav",
            }
            request = urllib.request.Request(
                f"{base}/audio/speech",
                data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with await asyncio.to_thread(urllib.request.urlopen, request, timeout=120) as answer:
                audio = await asyncio.to_thread(answer.read)
            heard.append((voice.stem, len(audio)))
        assert all(size > 44 + 4800 for _, size in heard), heard  # each past 0.1 s of audio
        logs = await image.podman.run("logs", name)
        assert "Traceback" not in logs.out + logs.err, logs.out[-3000:] + logs.err[-3000:]
    finally:
        await image.podman.remove(name)
        await image.podman.run("volume", "rm", "-f", volume)
