"""The type checker's own rule of the house: a `# type: ignore` always says why, beside it
(after it on its line, or in a comment on the line above), and names the error it silences."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[^\]]*\])?(?P<after>.*)$")


def unexplained(source: str, where: str) -> list[str]:
    """The `# type: ignore` comments of `source` without a code or without a reason."""
    found = []
    lines = source.splitlines()
    for number, line in enumerate(lines, 1):
        match = IGNORE.search(line)
        if match is None:
            continue
        reason_after = re.match(r"\s+#\s*\S", match["after"]) is not None
        reason_above = number > 1 and lines[number - 2].strip().startswith("#")
        if match["codes"] is None or not (reason_after or reason_above):
            found.append(f"{where}:{number}: {line.strip()}")
    return found


def test_every_type_ignore_names_its_error_and_says_why() -> None:
    found = []
    for path in sorted([*(ROOT / "bot").rglob("*.py"), *(ROOT / "cogs").rglob("*.py")]):
        found += unexplained(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "\n".join(found)


def test_the_check_finds_a_bare_ignore() -> None:
    planted = "\n".join(
        [
            "a = f(1)  # type: ignore",
            "b = f(2)  # type: ignore[arg-type]",
            "c = f(3)  # type: ignore[arg-type]  # f takes a str, and 3 is read as one",
            "# why: g is untyped upstream",
            "d = g()  # type: ignore[no-untyped-call]",
        ]
    )
    assert unexplained(planted, "m.py") == [
        "m.py:1: a = f(1)  # type: ignore",
        "m.py:2: b = f(2)  # type: ignore[arg-type]",
    ]
