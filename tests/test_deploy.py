"""The Docker image, compose file and systemd unit. Docker cannot build here (no daemon), so
the Dockerfile is linted with hadolint, and what it copies and runs is checked against the
repository; the health check's own command is run against a real health endpoint."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from bot.core.config import load_config
from bot.ops.endpoints import HttpEndpoints
from bot.ops.metrics import Metrics
from bot.ops.shards import ProcessShards
from bot.playback.stats import Snapshot

REPO = Path(__file__).resolve().parent.parent
DOCKERFILE = (REPO / "Dockerfile").read_text()


def instructions(keyword: str) -> list[str]:
    """The arguments of every `keyword` instruction, continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    return [
        line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(keyword + " ")
    ]


def env_of_image() -> dict[str, str]:
    env = {}
    for args in instructions("ENV"):
        env.update(dict(re.findall(r"(\w+)=(\S+)", args)))
    return env


def test_hadolint_finds_nothing() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), "--no-color", str(REPO / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_what_the_image_copies_exists_and_is_not_ignored() -> None:
    ignored = {line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()}
    sources = [s for args in instructions("COPY") for s in args.split()[:-1]]
    assert {"bot", "cogs", "migrations", "requirements.lock", "pyproject.toml"} <= set(sources)
    for source in sources:
        assert (REPO / source).exists(), source
        assert source not in ignored, source
    assert ".env" in ignored and ".venv" in ignored  # secrets and the local venv stay out


def test_the_image_runs_the_bot_as_a_non_root_user_with_cpu_torch() -> None:
    (entry,) = instructions("ENTRYPOINT")
    (cmd,) = instructions("CMD")
    argv = [*json.loads(entry), *json.loads(cmd)]
    assert argv == ["python", "-m", "bot", "run"]
    result = subprocess.run(
        [sys.executable, *argv[1:], "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    (user,) = instructions("USER")
    assert not user.startswith(("root", "0"))
    assert "TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in instructions("ARG")
    assert any('--extra-index-url "$TORCH_INDEX_URL"' in run for run in instructions("RUN"))
    assert any("libopus0" in run and "libsndfile1" in run for run in instructions("RUN"))
    assert DOCKERFILE.startswith("#") and "FROM python:3.11-slim" in DOCKERFILE


def locked() -> dict[str, tuple[str, list[str]]]:
    """requirements.lock: each package's version and hashes."""
    joined = re.sub(r"\\\n\s*", " ", (REPO / "requirements.lock").read_text())
    pins = {}
    for line in joined.splitlines():
        if line.strip() and not line.startswith("#"):
            name, rest = line.split("==", 1)
            version, *options = rest.split()
            pins[name] = (version, [o.removeprefix("--hash=sha256:") for o in options])
    return pins


def test_the_image_is_pinned_by_digest_and_installs_only_the_hashed_lock() -> None:
    """The base by digest; pip checks every file of the lock against its sha256, and installs
    the project itself from the copied source alone (no index, no build isolation)."""
    (base,) = instructions("FROM")
    assert re.fullmatch(r"python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", base), base
    runs = instructions("RUN")
    (install,) = [run for run in runs if "requirements.lock" in run]
    assert "--require-hashes" in install.split() and "--only-binary :all:" in install
    (project,) = [run for run in runs if "./src" in run]
    assert {"--no-deps", "--no-index", "--no-build-isolation"} <= set(project.split())
    pins = locked()
    for name, (_, hashes) in pins.items():
        assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name
    # the tested versions (constraints.txt), torch as the CPU build of bootstrap.sh's pin
    tested = dict(re.findall(r"^([\w.-]+)==(\S+)$", (REPO / "constraints.txt").read_text(), re.M))
    torch_spec = re.search(
        r"TORCH_SPEC:-torch==([\d.]+)", (REPO / "scripts/bootstrap.sh").read_text()
    )
    assert pins.pop("torch")[0] == f"{torch_spec[1]}+cpu"
    assert {name: version for name, (version, _) in pins.items()}.items() <= tested.items()
    # the runtime dependencies only: every one pyproject.toml names, no test tool
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = {
        re.split(r"[\[<>=~!; ]", d)[0].lower().replace(".", "-").replace("_", "-")
        for d in project["dependencies"]
    }
    assert wanted <= set(pins) | {"torch"}
    tools = {re.split(r"[\[<>=~!; ]", d)[0] for d in project["optional-dependencies"]["test"]}
    assert tools & set(pins) <= {"pyyaml"}  # huggingface-hub's too


# What the bot keeps under DATA_DIR: members' data all of it (a checkout's default is DATA_DIR=.)
MEMBER_DATA = [
    "pocketvoice.db",
    "pocketvoice.db-wal",
    "pocketvoice.db-shm",
    "pocketvoice.db-journal",
    "voices/123/mine.safetensors",
    "voices/123/mine.flac",
    "voices-quarantine/20260101T000000/voices/123/old.flac",
    "phrases/model/voice/text.npy",
]


def test_git_ignores_members_data_in_a_checkout() -> None:
    """With DATA_DIR=. the database, voices, set-aside voices and the phrase cache (audio in
    members' cloned voices) lie in the checkout: none may be committed."""
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin", "-v", "-n"],
        cwd=REPO,
        input="\n".join([*MEMBER_DATA, "voices/README.md", "bot/__main__.py"]) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    # -n -v: "SOURCE:LINE:PATTERN\tPATH" for each path, "::\tPATH" where no pattern matched
    # and a "!PATTERN" where the last that matched keeps it
    matched = dict(reversed(line.split("\t")) for line in result.stdout.splitlines())
    kept = {path for path, rule in matched.items() if rule == "::" or ":!" in rule}
    assert kept == {"voices/README.md", "bot/__main__.py"}, result.stdout + result.stderr


def compose_services() -> dict[str, dict]:  # type: ignore[type-arg]
    services = {}
    for name in ("compose.yaml", "compose.shards.yaml"):
        services.update(yaml.safe_load((REPO / name).read_text())["services"])
    return services


def test_both_compose_files_harden_the_bot() -> None:
    """Every bot service: a read-only root with a tmpfs /tmp, no capability, no new
    privileges (the image tests check the running container; this, that nothing lacks it)."""
    services = compose_services()
    bots = {name: s for name, s in services.items() if name != "postgres"}
    assert set(bots) == {"pocketvoice", "speech", "shard0", "shard1"}
    for name, service in bots.items():
        assert service["read_only"] is True, name
        assert [t.split(":")[0] for t in service["tmpfs"]] == ["/tmp"], name
        assert service["cap_drop"] == ["ALL"] and not service.get("cap_add"), name
        assert "no-new-privileges:true" in service["security_opt"], name


@pytest.mark.parametrize("ready", [True, False])
async def test_the_health_check_command_asks_the_health_endpoint(ready: bool) -> None:
    (check,) = instructions("HEALTHCHECK")
    argv = json.loads(check.split(" CMD ", 1)[1])
    assert argv[0] == "python"
    endpoints = HttpEndpoints(
        Metrics(lambda: None, lambda: ProcessShards(1)),
        lambda: None if ready else "loading the model",
    )
    await endpoints.start("127.0.0.1", 0)
    try:
        env = {**os.environ, **env_of_image(), "METRICS_PORT": str(endpoints.port)}
        process = await asyncio.create_subprocess_exec(sys.executable, *argv[1:], env=env)
        code = await asyncio.wait_for(process.wait(), 30)
    finally:
        await endpoints.close()
    assert (code == 0) is ready


def test_compose_keeps_data_and_the_model_cache_on_volumes() -> None:
    compose = yaml.safe_load((REPO / "compose.yaml").read_text())
    assert set(compose["services"]) == {"pocketvoice", "speech"}
    image_env = env_of_image()
    for service in compose["services"].values():  # the bot, and `serve` on the same volumes
        assert service["build"] == "."
        assert service["restart"] in ("unless-stopped", "always", "on-failure")
        assert service["env_file"] == ".env"
        mounts = {v.split(":")[1]: v.split(":")[0] for v in service["volumes"]}
        assert mounts[image_env["DATA_DIR"]] in compose["volumes"]
        assert mounts[image_env["HF_HOME"]] in compose["volumes"]
    assert (
        compose["services"]["pocketvoice"]["environment"]["METRICS_PORT"]
        == (image_env["METRICS_PORT"])
    )


def speech_service() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((REPO / "compose.yaml").read_text())["services"]["speech"]  # type: ignore[no-any-return]


def test_the_compose_speech_service_serves_on_this_machine_only_with_keys() -> None:
    """`docker compose up -d speech`: `serve` alone, started only when named (a profile), its
    port published on this machine's loopback only; inside the container it listens on every
    address, which the service allows with SPEECH_API_KEYS (from .env) and refuses without."""
    from bot.core.config import ConfigError, check_speech_binds

    service = speech_service()
    assert service["profiles"] == ["serve"] and service["command"] == ["serve"]
    port = service["environment"]["SPEECH_PORT"]
    assert service["ports"] == [f"127.0.0.1:{port}:{port}"]
    env = {k: str(v) for k, v in service["environment"].items()}
    with pytest.raises(ConfigError, match="SPEECH_API_KEYS"):
        check_speech_binds(load_config(env, dotenv_path=None, require_token=False))
    keyed = load_config({**env, "SPEECH_API_KEYS": "k" * 24}, dotenv_path=None, require_token=False)
    check_speech_binds(keyed)
    assert keyed.speech_port == int(port) and keyed.speech_host == "0.0.0.0"


@pytest.mark.parametrize("ready", [True, False])
async def test_the_compose_speech_service_health_check_asks_its_health_endpoint(
    ready: bool,
) -> None:
    """Its health check (the image's asks METRICS_PORT, which `serve` has not) against
    /healthz as the service answers it."""
    from aiohttp import web

    from bot.ops.endpoints import healthz

    check = speech_service()["healthcheck"]
    assert check["test"][:3] == ["CMD", "python", "-c"]
    app = web.Application()
    app.router.add_get("/healthz", healthz(lambda: None if ready else "starting"))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        env = {**os.environ, "SPEECH_PORT": str(runner.addresses[0][1])}
        process = await asyncio.create_subprocess_exec(sys.executable, *check["test"][2:], env=env)
        code = await asyncio.wait_for(process.wait(), 30)
    finally:
        await runner.cleanup()
    assert (code == 0) is ready


def test_the_shards_compose_file_runs_two_shards_on_one_postgresql() -> None:
    compose = yaml.safe_load((REPO / "compose.shards.yaml").read_text())
    services = compose["services"]
    shards = {name: s for name, s in services.items() if name.startswith("shard")}
    settings = []
    for service in shards.values():
        env = {k: str(v) for k, v in service["environment"].items()}
        env["DISCORD_TOKEN"] = "a.token"
        env["DATABASE_URL"] = env["DATABASE_URL"].replace("${POSTGRES_PASSWORD:?", "pw${")
        settings.append(load_config(env, dotenv_path=None))
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        data = next(v for v in service["volumes"] if v.endswith(":" + env["DATA_DIR"]))
        assert data.split(":")[0] in compose["volumes"]  # each machine's own cache
    # every shard of the count is held by exactly one process, all on the same database
    assert sorted(i for s in settings for i in s.shard_ids or ()) == list(range(2))
    assert {s.shard_count for s in settings} == {2}
    assert len({s.database_url for s in settings}) == 1
    assert services["postgres"]["image"].startswith("postgres:")
    assert len({p for s in shards.values() for p in s["ports"]}) == len(shards)


def test_the_systemd_unit_is_hardened_and_valid(tmp_path: Path) -> None:
    unit = (REPO / "deploy" / "pocketvoice.service").read_text()
    for line in (
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "StateDirectory=pocketvoice",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "UMask=0077",
        "LimitNOFILE=65536",  # systemd's default soft limit (1,024) is under the bot's need
    ):
        assert line in unit.splitlines(), line
    assert "ExecStart=/opt/pocketvoice/.venv/bin/python -m bot run" in unit
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # The unit as installed, with the checkout in a temporary folder.
    checkout = tmp_path / "pocketvoice"
    (checkout / ".venv" / "bin").mkdir(parents=True)
    (checkout / ".venv" / "bin" / "python").symlink_to(sys.executable)
    (checkout / ".env").write_text("DISCORD_TOKEN=x\n")
    copy = tmp_path / "pocketvoice.service"
    copy.write_text(unit.replace("/opt/pocketvoice", str(checkout)))
    result = subprocess.run(
        [analyze, "verify", str(copy)], capture_output=True, text=True, timeout=60
    )
    problems = [line for line in result.stderr.splitlines() if "pocketvoice.service" in line]
    assert result.returncode == 0 and not problems, result.stderr


def test_the_grafana_dashboard_asks_only_for_metrics_the_bot_serves() -> None:
    dashboard = json.loads((REPO / "deploy" / "grafana-dashboard.json").read_text())
    quiet = Snapshot(
        utterances=0,
        ttfa_p50=None,
        ttfa_p95=None,
        underruns_per_audio_min=0.0,
        real_time_factor=None,
        load=0.0,
        queued_units=0,
        speaking_servers=0,
    )
    idle = SimpleNamespace(snapshot=lambda: quiet)  # what the gauges read of a scheduler
    served = Metrics(lambda: idle, lambda: ProcessShards(1)).render().decode()  # type: ignore[arg-type,return-value]
    names = set(re.findall(r"^# TYPE (\w+) (\w+)", served, re.MULTILINE))
    known = {name for name, _ in names}
    known |= {f"{name}_{s}" for name, kind in names for s in ("total", "bucket", "count", "sum")}
    assert "pocketvoice_speaking_servers" in known
    asked = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"pocketvoice_\w+", target["expr"])
    }
    assert asked and asked <= known, asked - known
