"""The benchmarks start without pytest and the other test runners (they run with the test
extra, `scripts/bootstrap.sh --test`, for trustme: the fake Discord's TLS), and the bench
commands the docs show name scripts that exist and start."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEST_ONLY = ("pytest", "_pytest", "pytest_asyncio", "hypothesis", "jsonschema")
SCRIPTS = sorted(
    p.relative_to(REPO).as_posix()
    for p in (REPO / "bench").glob("*.py")
    if 'if __name__ == "__main__":' in p.read_text()
)
# One process for every script (torch is imported once): each is run as `script --help`.
BLOCKED = (
    "import contextlib, io, runpy, sys\n"
    f"sys.modules.update(dict.fromkeys({TEST_ONLY!r}))  # importing them now fails\n"
    "for script in sys.argv[1:]:\n"
    "    sys.argv = [script, '--help']\n"
    "    out = io.StringIO()\n"
    "    try:\n"
    "        with contextlib.redirect_stdout(out):\n"
    "            runpy.run_path(script, run_name='__main__')\n"
    "    except SystemExit as done:\n"
    "        assert done.code == 0, script\n"
    "    print(script, 'usage:' in out.getvalue())\n"
)


def test_the_docs_name_only_bench_scripts_that_exist() -> None:
    docs = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
    for doc in docs:
        named = set(re.findall(r"bench/\w+\.py", doc.read_text(encoding="utf-8")))
        assert named <= {*SCRIPTS, "bench/fifo.py", "bench/paced_engine.py"}, (
            doc.name,
            named - set(SCRIPTS),
        )
    performance = (REPO / "docs/performance.md").read_text(encoding="utf-8")
    assert set(SCRIPTS) <= set(re.findall(r"bench/\w+\.py", performance)), (
        "docs/performance.md shows how to run every benchmark"
    )


def test_every_bench_script_starts_without_the_test_tools() -> None:
    assert len(SCRIPTS) >= 5
    result = subprocess.run(
        [sys.executable, "-c", BLOCKED, *SCRIPTS],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == [word for s in SCRIPTS for word in (s, "True")]


def test_load_compares_its_cpu_with_and_without_dave() -> None:
    """`bench/load.py --dave` runs a K without DAVE and with it, every frame sealed by a ready
    davey session (the member decrypts each call's last one), and prints the ratio."""
    run = (
        "import runpy, sys\n"
        f"sys.modules.update(dict.fromkeys({TEST_ONLY!r}))\n"
        "sys.argv = sys.argv[1:]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    # --words-per-second 10: the paced engine's sentences last a quarter as long; each run
    # plays its last one out in real time, so the four runs take half the wall time (DAVE's
    # sealing and its figures do not depend on the pace)
    args = (
        "--engines paced --pipelines 1 --batch 2 --ks 2 --seconds 1 --quantize no --dave "
        "--words-per-second 10"
    )
    result = subprocess.run(
        [sys.executable, "-c", run, "bench/load.py", *args.split()],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split() for line in result.stdout.splitlines() if "deadline" in line.split()]
    assert [row[3] for row in rows] == ["off", "on", "on", "off"], result.stdout  # DAVE column
    assert re.search(r"all threads per s sent [\d.]+, [\d.]+, x[\d.]+;", result.stdout)
    assert re.search(r"encrypt_opus [\d.]+ us \(x[\d.]+\)", result.stdout)
    sealed = re.search(r"; (\d+) frames sealed", result.stdout)
    assert sealed and int(sealed[1]) > 0, result.stdout
