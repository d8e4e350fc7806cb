"""The README's table of variables and `.env.example`, written from `Config`'s declarations.

    .venv/bin/python scripts/config_docs.py           rewrite both (after a setting changes)
    .venv/bin/python scripts/config_docs.py --check   exit 1 when either differs from them

`tests/core/test_config_docs.py` runs the check, so the documents cannot drift from the code.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: the checkout's bot package

from bot.core.config import OTHER_VARIABLES, SECTIONS, Config  # noqa: E402

README = ROOT / "README.md"
ENV_EXAMPLE = ROOT / ".env.example"
TABLE_START = "<!-- the variables: written by scripts/config_docs.py from bot/core/config.py -->"
TABLE_END = "<!-- end of the variables -->"
WIDTH = 100
ENV_HEADER = """\
# PocketVoice settings. Copy to .env and fill in DISCORD_TOKEN; everything else is optional.
# Written by scripts/config_docs.py from bot/core/config.py: edit the settings there.
"""


def _extra(name: str) -> dict[str, Any]:
    extra = Config.model_fields[name].json_schema_extra
    assert isinstance(extra, dict), name
    return extra


def _shown_default(value: object) -> str:
    """A default as the table shows it (`1` for on: what the operator would write)."""
    if value is None or value == ():
        return ""
    if isinstance(value, bool):
        return f"`{int(value)}`"
    return f"`{value}`"


def readme_table() -> str:
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Config.model_fields.items():
        extra = _extra(name)
        default = extra["default_text"]
        if default is None:
            default = _shown_default(field.get_default(call_default_factory=False))
        rows.append(f"| `{name.upper()}` | {default} | {extra['meaning']} |")
    for other in OTHER_VARIABLES:
        rows.append(f"| `{other.name}` | {other.default_text} | {other.meaning} |")
    return "\n".join(rows)


def plain(markdown: str) -> str:
    """Markdown's words as a comment says them: links as `text (target)`, no backticks."""
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", markdown)
    return text.replace("`", "")


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - 2, initial_indent="# ", subsequent_indent="# ")


def env_example() -> str:
    lines = [ENV_HEADER.rstrip("\n")]
    firsts = {next(iter(section.model_fields)): section for section in SECTIONS}
    for name, field in Config.model_fields.items():
        extra = _extra(name)
        if name in firsts:
            lines += ["", *_comment(firsts[name].heading)]
        default = extra["default_text"]
        if default is None:
            default = _shown_default(field.get_default(call_default_factory=False))
        default = plain(default).removeprefix("(").removesuffix(")")
        meaning = plain(extra["meaning"]) + (f" (default: {default})" if default else "")
        lines += _comment(f"{name.upper()}: {meaning}")
        if extra["shown"] is not None:
            lines.append(f"{name.upper()}={extra['shown']}")
        else:
            assert extra["example"] is not None, f"{name}: give `shown` or `example`"
            lines.append(f"# {name.upper()}={extra['example']}")
    others = [other for other in OTHER_VARIABLES if other.example is not None]
    if others:
        lines += ["", "# Read by other tools, not the bot"]
        for other in others:
            lines += _comment(f"{other.name}: {plain(other.meaning)}")
            lines.append(f"# {other.name}={other.example}")
    return "\n".join(lines) + "\n"


def readme_with_table(readme: str) -> str:
    """The README with its table of variables replaced by the one the declarations give."""
    start, end = readme.index(TABLE_START), readme.index(TABLE_END)
    return f"{readme[: start + len(TABLE_START)]}\n{readme_table()}\n{readme[end:]}"


def main(argv: list[str]) -> int:
    wanted = {
        README: readme_with_table(README.read_text(encoding="utf-8")),
        ENV_EXAMPLE: env_example(),
    }
    stale = [path for path, text in wanted.items() if path.read_text(encoding="utf-8") != text]
    if "--check" in argv:
        for path in stale:
            print(f"{path.name} differs from bot/core/config.py: run scripts/config_docs.py")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
        print(f"wrote {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
