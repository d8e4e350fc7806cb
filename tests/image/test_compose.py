"""Our compose files, read and run by a real compose implementation (podman-compose): both
parse and harden every service (PostgreSQL pinned by digest); the shards' PostgreSQL starts
hardened; the single-bot one builds, starts hardened (a read-only root, a tmpfs /tmp, no
capability, no new privileges), passes its health check, comes back after a crash and runs the
README's `docker compose run --rm pocketvoice doctor`, against our fake Discord."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tests.conftest import TinyModel
from tests.fakediscord import FakeDiscord
from tests.image.podman import (
    POSTGRES,
    REPO,
    STAND_IN_LABEL,
    Podman,
    Storage,
    why_podman_cannot_run,
)
from tests.image.test_image import assert_hardened, free_port, shared_folder

# what the official image's entry point needs as root: hand its data and socket folders to
# the postgres user (chown, and past their modes), then become that user (gosu)
POSTGRES_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID")

pytestmark = pytest.mark.skipif(
    why_podman_cannot_run() is not None, reason=str(why_podman_cannot_run())
)


def project(folder: Path, env: dict[str, str]) -> Path:
    """A project folder as a user has it: our compose files, unchanged, and their `.env`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("compose.yaml", "compose.shards.yaml"):
        shutil.copy(REPO / name, folder / name)
    dotenv = folder / ".env"
    dotenv.write_text("".join(f"{key}={value}\n" for key, value in env.items()))
    dotenv.chmod(0o600)
    return folder


async def wait_healthy(podman: Podman, container: str, timeout: float = 120) -> None:
    """Until the image's own HEALTHCHECK passes (run by hand: podman schedules it with systemd
    timers, and these machines have no systemd)."""
    deadline = time.monotonic() + timeout
    while (await podman.run("healthcheck", "run", container, timeout=30)).code != 0:
        logs = await podman.run("logs", container)
        assert time.monotonic() < deadline, f"never healthy:\n{logs.out}{logs.err}"
        await asyncio.sleep(1)


async def test_both_compose_files_parse(tmp_path: Path, podman_storage: Storage) -> None:
    podman = Podman(tmp_path / "podman", podman_storage)
    folder = project(tmp_path / "p", {"DISCORD_TOKEN": "x", "POSTGRES_PASSWORD": "secret"})
    for name, services in (
        ("compose.yaml", {"pocketvoice", "speech"}),  # (the speech service: its profile)
        ("compose.shards.yaml", {"postgres", "shard0", "shard1"}),
    ):
        done = await podman.compose(
            "--profile", "serve", "-f", str(folder / name), "config", timeout=60
        )
        done.check(f"podman-compose config of {name}")
        parsed = yaml.safe_load(done.out)
        assert set(parsed["services"]) == services, done.out
        for service in services - {"postgres"}:
            bot = parsed["services"][service]
            assert bot["stop_grace_period"] == "30s"
            # the hardening, as compose reads it (shards: from the x-shard anchor)
            assert bot["read_only"] is True and bot["cap_drop"] == ["ALL"], bot
            assert bot["tmpfs"] == ["/tmp:size=64m,mode=1777"], bot
            assert bot["security_opt"] == ["no-new-privileges:true"], bot
    # `serve` alone, as compose reads it: not started by `up` without its profile (or its
    # name), with its own health check
    plain = (await podman.compose("-f", str(folder / "compose.yaml"), "config")).out
    assert set(yaml.safe_load(plain)["services"]) == {"pocketvoice"}, plain
    speech = yaml.safe_load(
        (
            await podman.compose("--profile", "serve", "-f", str(folder / "compose.yaml"), "config")
        ).out
    )["services"]["speech"]
    assert speech["profiles"] == ["serve"] and speech["command"] == ["serve"], speech
    assert "SPEECH_PORT" in speech["healthcheck"]["test"][-1], speech
    shards = yaml.safe_load(
        (await podman.compose("-f", str(folder / "compose.shards.yaml"), "config")).out
    )["services"]
    # PostgreSQL: pinned by digest, and hardened but for the capabilities its entry point
    # needs as root (issue 48 item 13)
    database = shards["postgres"]
    assert re.fullmatch(r"postgres:15-bookworm@sha256:[0-9a-f]{64}", database["image"]), database
    assert database["read_only"] is True and database["cap_drop"] == ["ALL"], database
    assert set(database["cap_add"]) == set(POSTGRES_CAPABILITIES), database
    assert database["security_opt"] == ["no-new-privileges:true"], database
    assert database["tmpfs"] == ["/tmp:size=64m,mode=1777", "/var/run/postgresql:size=1m,mode=3777"]
    url = shards["shard1"]["environment"]["DATABASE_URL"]
    assert url == "postgresql://pocketvoice:secret@postgres:5432/pocketvoice"
    assert shards["shard1"]["depends_on"]["postgres"]["condition"] == "service_healthy"


async def test_the_shards_compose_file_starts_its_postgresql(
    tmp_path: Path, podman_storage: Storage
) -> None:
    """Its PostgreSQL service starts hardened, turns healthy on its own health check, and
    takes the password from .env. Docker Hub cannot be reached here, so the pinned
    `postgres:15-bookworm` is a stand-in under its tag (Debian's postgresql-15 started as the
    official image starts, as root handing its folders to postgres), labelled as one."""
    podman = Podman(tmp_path / "podman", podman_storage)
    made = await podman.ensure_postgres()
    if made.startswith("made"):
        labels = (await podman.inspect(POSTGRES))["Config"]["Labels"]
        assert STAND_IN_LABEL in labels
    folder = project(tmp_path / "p", {"DISCORD_TOKEN": "x", "POSTGRES_PASSWORD": "secret"})
    name = f"pvtest{uuid.uuid4().hex[:6]}"
    files = ["-p", name, "-f", str(folder / "compose.shards.yaml")]
    if made.startswith("made"):  # a digest names the real image's bytes, which the stand-in
        # cannot have: the stand-in in its place, every other line as written
        override = folder / "compose.stand-in.yaml"
        override.write_text(f"services:\n  postgres:\n    image: {POSTGRES}\n")
        files += ["-f", str(override)]
    container = f"{name}_postgres_1"
    try:
        (await podman.compose(*files, "up", "-d", "postgres")).check("up postgres")
        deadline = time.monotonic() + 120
        while (await podman.run("healthcheck", "run", container)).code != 0:
            logs = await podman.run("logs", container)
            assert time.monotonic() < deadline, f"never healthy:\n{logs.out}{logs.err}"
            await asyncio.sleep(1)
        # hardened as the file asks: a read-only root, no new privileges, and of root's
        # capabilities only those the entry point needs; the server runs as postgres with none
        host = (await podman.inspect(container))["HostConfig"]
        assert host["ReadonlyRootfs"] is True, host
        assert "no-new-privileges" in str(host["SecurityOpt"]), host["SecurityOpt"]
        refused = await podman.run("exec", "--user", "0", container, "touch", "/usr/probe")
        assert refused.code != 0 and "Read-only file system" in refused.err, refused
        # the server: the postmaster, whose pid its data folder records
        server = await podman.run(
            "exec",
            container,
            "sh",
            "-c",
            'grep -E "^(Uid|CapEff|NoNewPrivs)" "/proc/$(head -1 "$PGDATA/postmaster.pid")/status"',
        )
        fields = dict(line.split(":", 1) for line in server.check("status").out.splitlines())
        assert fields["Uid"].split()[0] != "0" and int(fields["CapEff"], 16) == 0, fields
        assert fields["NoNewPrivs"].strip() == "1", fields
        url = "postgresql://pocketvoice:secret@127.0.0.1:5432/pocketvoice"
        for password, works in (("secret", True), ("wrong", False)):
            asked = await podman.run(
                "exec",
                f"{name}_postgres_1",
                "psql",
                url.replace("secret", password),
                "-tAc",
                "SELECT current_user",
            )
            assert (asked.out.strip() == "pocketvoice") is works, asked.out + asked.err
    finally:
        await podman.compose(*files, "down", "-v", "-t", "5")


async def test_the_compose_file_builds_starts_turns_healthy_and_runs_doctor(
    tmp_path: Path, tiny_model: TinyModel, podman_storage: Storage
) -> None:
    podman = Podman(tmp_path / "podman", podman_storage)
    # the wheelhouse downloads while the base is made (or another run's base is waited for)
    await asyncio.gather(podman.ensure_base(), podman.wheelhouse())
    share = shared_folder(tmp_path / "share")
    model = shared_folder(tiny_model.config.parent)
    fake = FakeDiscord(share)
    await fake.start()
    port = free_port()
    folder = project(
        tmp_path / "p",
        {
            **fake.env,
            "TTS_CONFIG": str(tiny_model.config),
            "DEFAULT_VOICE": str(tiny_model.clip),
            "HF_HUB_OFFLINE": "1",
        },
    )
    # What differs here from a user's machine, and only that: the image's name (not to replace
    # a user's pocketvoice:latest), the build context (the checkout), the host's network (to
    # reach the fake Discord on 127.0.0.1, so the metrics port moves off 9108) and the model.
    override = {
        "services": {
            "pocketvoice": {
                "image": "localhost/pocketvoice:compose-test",
                "build": {"context": str(REPO)},
                "network_mode": "host",
                "environment": {"METRICS_PORT": str(port)},
                "volumes": [f"{share}:{share}:ro", f"{model}:{model}:ro"],
            }
        }
    }
    (folder / "compose.test.yaml").write_text(yaml.safe_dump(override))
    name = f"pvtest{uuid.uuid4().hex[:6]}"
    files = [
        "-p",
        name,
        "-f",
        str(folder / "compose.yaml"),
        "-f",
        str(folder / "compose.test.yaml"),
    ]
    build_args = " ".join([*await podman.build_args(), *await podman.base_args()])
    # Docker's read_only gives no tmpfs but the compose file's; podman's adds /tmp, /run and
    # /var/tmp unless told not to
    run_args = "--read-only-tmpfs=false"
    try:
        up = await podman.compose(
            f"--podman-build-args={build_args}",
            f"--podman-run-args={run_args}",
            *files,
            "up",
            "-d",
            "--build",
            timeout=1800,
        )
        up.check("podman-compose up -d --build")
        container = f"{name}_pocketvoice_1"
        await wait_healthy(podman, container)
        await assert_hardened(podman, container)

        # restart: unless-stopped brings it back after a crash
        crashed = await podman.inspect(container)
        os.kill(crashed["State"]["Pid"], signal.SIGKILL)
        await fake.wait_for(lambda: len(fake.identifies) == 2, 120, "a second IDENTIFY")
        await wait_healthy(podman, container)
        again = await podman.inspect(container)
        assert again["RestartCount"] == crashed["RestartCount"] + 1

        doctor = await podman.compose(
            f"--podman-run-args={run_args}",
            *files,
            "run",
            "--rm",
            "pocketvoice",
            "doctor",
            timeout=300,
        )
        for line in ("✔ libopus", "✔ torch: torch 2.13.0+cpu, CPU build", "✔ model", "✔ token"):
            assert line in doctor.out, doctor.out + doctor.err
        fake.registered_commands.clear()
        synced = await podman.compose(
            f"--podman-run-args={run_args}",
            *files,
            "run",
            "--rm",
            "pocketvoice",
            "sync",
            timeout=300,
        )
        assert synced.code == 0, synced.out + synced.err
        assert {c["name"] for c in fake.registered_commands} >= {"say", "clone", "voice", "set"}
    finally:
        await podman.compose(*files, "down", "-v", "-t", "5", timeout=300)
        await fake.close()
