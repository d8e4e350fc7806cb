"""How scripts/bootstrap.sh installs torch: the CPU index when it answers, the default index
otherwise (saying so), and never a CUDA build by accident."""

from __future__ import annotations

import functools
import http.server
import os
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
