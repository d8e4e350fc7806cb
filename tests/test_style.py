"""The formatter's output is the code's: no line is kept out of `ruff format` (`./test.sh`
checks the rest with `ruff format --check`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEPT_OUT = re.compile(r"#\s*fmt:\s*(skip|off)\b")


def test_no_line_is_kept_out_of_the_formatter() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("bot", "cogs", "tests", "bench", "scripts")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if KEPT_OUT.search(line)
    ]
    assert not found, "\n".join(found)
