"""How scripts/bootstrap.sh installs torch: the CPU index when it answers, the default index
otherwise (saying so), and never a CUDA build by accident."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def torch_command(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REPO / "scripts" / "bootstrap.sh"), "--torch-command"],
        env={**os.environ, "PYTHON": sys.executable, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def cpu_index(tmp_path: Path) -> Iterator[str]:
    """A package index on loopback that has a torch page, standing in for the CPU index."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "index.html").write_text("<html><body></body></html>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_the_cpu_index_is_used_when_it_answers(cpu_index: str) -> None:
    result = torch_command(TORCH_INDEX_URL=cpu_index)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"pip install torch==2.13.0 --index-url {cpu_index}"
    assert "cannot be reached" not in result.stderr


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
def test_without_the_cpu_index_the_default_index_is_used_and_the_build_checked() -> None:
    result = torch_command(TORCH_INDEX_URL="http://127.0.0.1:9/")  # nothing listens there
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pip install torch==2.13.0"
    assert "cannot be reached" in result.stderr
    assert "CUDA build of several GB" in result.stderr  # what the fallback may cost
    assert "torch 2.13.0+cpu: a CPU build" in result.stderr  # this machine's own wheel


def fake_cuda_torch(folder: Path) -> None:
    """A wheel named torch whose metadata asks for NVIDIA's CUDA libraries, like PyPI's (an
    old version number: some machines cap torch in their pip configuration)."""
    folder.mkdir()
    info = "torch-2.0.0.dist-info"
    with zipfile.ZipFile(folder / "torch-2.0.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("torch/__init__.py", "")
        wheel.writestr(
            f"{info}/METADATA",
            "Metadata-Version: 2.1\nName: torch\nVersion: 2.0.0\n"
            "Requires-Dist: nvidia-cublas ; platform_system == 'Linux'\n",
        )
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")


def test_a_cuda_build_is_refused_unless_asked_for(tmp_path: Path) -> None:
    fake_cuda_torch(tmp_path / "wheels")
    env = {
        "TORCH_INDEX_URL": "http://127.0.0.1:9/",
        "TORCH_SPEC": "torch==2.0.0",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(tmp_path / "wheels"),
    }
    refused = torch_command(**env)
    assert refused.returncode != 0
    assert "torch 2.0.0: a CUDA build" in refused.stderr
    assert "refusing to download a CUDA build" in refused.stderr
    assert "TORCH_ALLOW_CUDA=1" in refused.stderr

    allowed = torch_command(**env, TORCH_ALLOW_CUDA="1")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.strip() == "pip install torch==2.0.0"


def test_libraries_found_are_never_installed_again(tmp_path: Path) -> None:
    """libopus and libsndfile present: nothing is installed. Before, `ldconfig -p | grep -q`
    under pipefail failed whenever grep, done at its first match, left ldconfig writing to a
    closed pipe (SIGPIPE), and libopus was installed again (about 1 run in 20; here every
    run: this ldconfig writes on after the matches)."""
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "bootstrap.sh", project / "scripts" / "bootstrap.sh")
    fake = tmp_path / "bin"
    fake.mkdir()
    asked = tmp_path / "asked"
    scripts = {
        # the two libraries first, then more than a pipe holds, after grep has surely gone
        "ldconfig": "printf '\\tlibopus.so.0 (libc6,x86-64) => /lib/libopus.so.0\\n"
        "\\tlibsndfile.so.1 (libc6,x86-64) => /lib/libsndfile.so.1\\n'\nsleep 0.3\n"
        "for i in $(seq 4000); do printf '\\tlibother%d.so (libc6) => /lib/x.so\\n' $i; done\n",
        "apt-get": f'echo "$@" >> {asked}\n',
        "sudo": '"$@"\n',
    }
    for name, body in scripts.items():
        (fake / name).write_text(f"#!/usr/bin/env bash\n{body}")
        (fake / name).chmod(0o755)
    # (no pyproject.toml: the script stops at its second step, the Python environment)
    subprocess.run(
        [str(project / "scripts" / "bootstrap.sh")],
        env={**os.environ, "PYTHON": sys.executable, "PATH": f"{fake}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    installed = asked.read_text() if asked.exists() else ""
    assert "libopus0" not in installed and "libsndfile1" not in installed, installed
