"""How an operator installs PocketVoice: the built wheel works on its own, without the source."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCE_IGNORE = shutil.ignore_patterns(
    ".venv",
    ".git",
    "*.egg-info",
    "build",
    "dist",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    "*.db",
    "voices",
)


def run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, timeout=300, **kwargs)  # type: ignore[call-overload]
    assert result.returncode == 0, f"{args[:4]} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.mark.process  # pip builds and installs the wheel
def test_the_wheel_installed_without_editable_mode_migrates_an_empty_store(
    tmp_path: Path,
) -> None:
    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=SOURCE_IGNORE)
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ]
    )
    (wheel,) = (tmp_path / "dist").glob("pocketvoice-*.whl")

    # A fresh environment holding only the wheel. Its dependencies come from the test
    # environment's site-packages (a path in a .pth file), so no network is needed; our own
    # editable install there is not activated, since .pth files are not read from that path.
    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=False)
    python = fresh / "bin" / "python"
    site = Path(
        run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
        ).stdout.strip()
    )
    (site / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ]
    )

    data = tmp_path / "data"
    data.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATA_DIR")}
    env["DATA_DIR"] = str(data)
    where = run([str(python), "-c", "import bot; print(bot.__file__)"], cwd=tmp_path, env=env)
    assert where.stdout.strip().startswith(str(site)), "the wheel's copy must be the one used"

    result = run([str(python), "-m", "bot", "migrate"], cwd=tmp_path, env=env)
    assert "Migrations applied: 0001" in result.stdout
    with sqlite3.connect(data / "pocketvoice.db") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        versions = [row[0] for row in db.execute("SELECT version FROM schema_migrations")]
    assert {"voices", "schema_migrations"} <= tables
    shipped = sorted(p.name for p in (REPO / "migrations").glob("*.sql"))
    assert len(versions) == len(shipped) >= 3
    # the PostgreSQL forms of the migrations ship too
    postgresql = sorted(p.name for p in (REPO / "migrations" / "postgresql").glob("*.sql"))
    in_wheel = sorted(p.name for p in (site / "bot" / "migrations" / "postgresql").glob("*.sql"))
    assert in_wheel == postgresql and len(postgresql) >= 3
