"""The container image, built from our Dockerfile and run for real with podman: it starts as its
non-root user, speaks through our fake Discord, turns healthy only once ready, keeps its data
on its volume, stops cleanly within the compose file's grace period, and answers its CLI."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
import urllib.request
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.audio_samples import encode, speech_like
from tests.conftest import TinyModel
from tests.fakediscord import FakeDiscord
from tests.image.podman import REPO, Podman, Storage, why_podman_cannot_run

pytestmark = pytest.mark.skipif(
    why_podman_cannot_run() is not None, reason=str(why_podman_cannot_run())
)

TAG = "localhost/pocketvoice:image-test"
ADMIN = FakeDiscord.EVERYONE_PERMISSIONS | (1 << 5)  # Manage Server
CLIP = encode(speech_like(4.0), "wav")
GRACE_S = float(
    yaml.safe_load((REPO / "compose.yaml").read_text())["services"]["pocketvoice"][
        "stop_grace_period"
    ].rstrip("s")
)


@dataclass
class Image:
    podman: Podman
    tag: str
    build_s: float
    base: str


@pytest.fixture(scope="module")
async def image(tmp_path_factory: pytest.TempPathFactory, podman_storage: Storage) -> Image:
    podman = Podman(tmp_path_factory.mktemp("podman"), podman_storage)
    base = await podman.ensure_base()
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
    args = ["run", "-d", "--name", name, "--network", "host", "-v", f"{volume}:/data",
            "-v", f"{share}:{share}:ro", "-v", f"{model}:{model}:ro"]  # fmt: skip
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
            changed = await fake.interaction("config max_length", {"value": 77}, permissions=ADMIN)
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

            # ... survive a start with the same volume
            fake.identified.clear()
            await bot.podman("start", bot.name)
            await bot.wait_healthy()
            listed = await (await fake.interaction("voice list")).wait_final()
            assert "Mine" in listed["content"]
            shown = await (await fake.interaction("settings", permissions=ADMIN)).wait_response(2)
            fields = {f["name"]: f["value"] for f in shown["embeds"][0]["fields"]}
            assert fields["max_length"].startswith("77"), fields
            stats = await bot.podman("exec", bot.name, "stat", "-c", "%a %u", "/data")
            assert stats.split() == ["700", "10001"]  # private, the image user's
    finally:
        await image.podman.run("volume", "rm", "-f", volume)


async def test_the_image_answers_its_cli(
    image: Image, tmp_path: Path, tiny_model: TinyModel
) -> None:
    model = shared_folder(tiny_model.config.parent)
    volume = f"pocketvoice-test-cli-{uuid.uuid4().hex[:8]}"
    run = ["run", "--rm", "--network", "none", "-v", f"{volume}:/data", "-v", f"{model}:{model}:ro",
           "-e", f"TTS_CONFIG={tiny_model.config}", "-e", f"DEFAULT_VOICE={tiny_model.clip}",
           "-e", "HF_HUB_OFFLINE=1", "-e", "DISCORD_TOKEN=not-a-real-token"]  # fmt: skip
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
