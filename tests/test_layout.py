"""The house rules of `bot/` (CONTRIBUTING.md, "The layout and its rules"): packages by role, each
importing only those below it; the lower floors never import discord; torch and pocket-tts only
inside `bot/synthesis/`; synthesis never reaches into the database (storage's classes do); the
cogs never reach past the services into synthesis or playback."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# From the bottom up: a module may import its own floor and those below, never one above.
FLOORS = ("core", "text", "i18n", "storage", "synthesis", "playback", "ops", "services")
WAYS_IN = ("app", "client", "__main__", "doctor")  # the floor above the services
WAY_IN_PACKAGES = ("speech_api",)  # ways in of more than a module: the speech service
ORDER = (*FLOORS, "ways in", "cogs")
NO_DISCORD = ("core", "text", "i18n", "storage", "synthesis")
MODEL_LIBRARIES = ("torch", "pocket_tts")  # imported only inside synthesis/


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    paths = sorted((ROOT / "bot").rglob("*.py")) + sorted((ROOT / "cogs").rglob("*.py"))
    return {_module_name(path): path for path in paths}


def _floor(module: str) -> str | None:
    """The floor a module of ours stands on; None for the `bot` package itself."""
    parts = module.split(".")
    if parts[0] == "cogs":
        return "cogs"
    if len(parts) == 1:
        return None
    if parts[1] in FLOORS:
        return parts[1]
    if parts[1] in WAYS_IN or parts[1] in WAY_IN_PACKAGES:
        return "ways in"
    if parts[1] == "migrations":  # the SQL files shipped as a package
        return "storage"
    raise AssertionError(f"{module}: not in a package of bot/ (one of {', '.join(FLOORS)})")


def _imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """Every module `source` imports, anywhere in it (inside functions and TYPE_CHECKING too):
    (line, dotted name). `from a import b` names both `a` and `a.b` (b may be a module)."""
    found = []
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against this module's package
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def _ours(name: str, modules: dict[str, str]) -> str | None:
    """The module of ours `name` is (or is in), if any."""
    while name:
        if name in modules or name == "bot.migrations" or name.startswith("bot.migrations."):
            return name
        name = name.rpartition(".")[0]
    return None


def _database_uses(source: str) -> list[int]:
    """The lines using a database object (`db.x`, `self.db.x`, ...): its repositories, its SQL.
    Handing one on (`follow(self.records.db)`) is not a use."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            base = node.value
            named = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
            if named in ("db", "_db"):
                lines.append(node.lineno)
    return lines


def layout_problems(modules: dict[str, str]) -> list[str]:
    """What breaks the rules in `modules` (dotted name -> source; a package is its
    `__init__`)."""
    problems = set()
    packages = {name.rpartition(".")[0] for name in modules}
    for module, source in modules.items():
        floor = _floor(module)
        where = module
        if floor == "synthesis":
            for line in _database_uses(source):
                problems.add(f"{where}:{line}: synthesis/ uses the database (go through storage/)")
        for line, name in _imports(source, module, module in packages):
            top = name.split(".")[0]
            if top == "discord" and floor in NO_DISCORD:
                problems.add(f"{where}:{line}: {floor}/ imports discord")
            if top in MODEL_LIBRARIES and floor != "synthesis":
                problems.add(f"{where}:{line}: {top} imported outside bot/synthesis/")
            target = _ours(name, modules) if top in ("bot", "cogs") else None
            if target is None or floor is None:
                continue
            target_floor = _floor(target)
            if target_floor is None:
                continue
            if floor == "cogs" and target_floor in ("synthesis", "playback"):
                problems.add(f"{where}:{line}: a cog imports {target_floor}/ (use a service)")
            if ORDER.index(target_floor) > ORDER.index(floor):
                problems.add(f"{where}:{line}: {floor} imports {target_floor}, above it")
    return sorted(problems)


def _sources() -> dict[str, str]:
    return {name: path.read_text(encoding="utf-8") for name, path in _modules().items()}


def test_no_import_runs_up_the_floors_or_crosses_a_forbidden_line() -> None:
    problems = layout_problems(_sources())
    assert not problems, "\n".join(problems)


def test_every_module_of_bot_is_in_a_package_by_role() -> None:
    top = {p.stem for p in (ROOT / "bot").glob("*.py")} - {"__init__"}
    assert top == set(WAYS_IN), f"at the top of bot/, only the ways in: {sorted(top)}"
    packages = {p.parent.name for p in (ROOT / "bot").glob("*/__init__.py")}
    assert packages == set(FLOORS) | set(WAY_IN_PACKAGES)


def test_the_check_flags_each_kind_of_forbidden_import() -> None:
    """The walk is not vacuous: one module of each kind breaking one rule, each flagged."""
    sources = _sources()
    broken = {
        "bot.storage.database": "from bot.services.replies import Reply\n",  # upward
        "bot.synthesis.engine": "def f():\n    import discord\n",  # discord below playback
        "bot.core.config": "from bot import playback\n",  # upward, `from bot import x`
        "bot.playback.speakers": "import torch\n",  # torch outside synthesis
        "bot.ops.metrics": "from pocket_tts import TTSModel\n",
        "bot.text.words": "from ..i18n import translate\nfrom ..synthesis import engine\n",
        "cogs.settings": "from bot.synthesis.engine import BUILTIN_VOICES\n",  # past services
        "bot.services.help": "import cogs.common\n",  # bot never imports cogs
        "bot.synthesis.voice_states": "async def f(library):\n    await library.db.voices.get(1)\n",
    }
    problems = layout_problems({**sources, **broken})
    flagged = {problem.split(":")[0] for problem in problems}
    assert flagged == set(broken), problems
    assert len(problems) == len(broken) + 1, problems  # words.py breaks the rule twice


def test_the_lower_floors_import_with_discord_blocked() -> None:
    """bot.synthesis and bot.storage (and core, text, i18n), every module of them, import in a
    process where discord cannot be imported; core, text, i18n and storage load no torch; and
    synthesis loads no `torch._dynamo` (pocket_tts_adapter: 1.4 CPU-s at each start), leaving
    `torch.compiler.disable` torch's own."""
    lower = [name for name in _modules() if _floor(name) in NO_DISCORD]
    code = textwrap.dedent(
        f"""
        import importlib, importlib.abc, sys

        class NoDiscord(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "discord" or name.startswith("discord."):
                    raise ImportError(f"discord is blocked: {{name}}")
                return None

        sys.meta_path.insert(0, NoDiscord())
        modules = {lower!r}
        below_synthesis = [m for m in modules if m.split(".")[1] != "synthesis"]
        for name in below_synthesis:
            importlib.import_module(name)
        assert "torch" not in sys.modules, "torch loaded below synthesis/"
        import bot.synthesis, bot.storage
        for name in modules:
            importlib.import_module(name)
        assert not any(m == "discord" or m.startswith("discord.") for m in sys.modules)
        import torch
        assert "torch._dynamo" not in sys.modules, "pocket-tts's import loaded torch._dynamo"
        assert torch.compiler.disable.__module__ == "torch.compiler"
        print(len(modules), "modules")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "bot.synthesis.engine" in lower and "bot.storage.database" in lower
    assert result.stdout.strip() == f"{len(lower)} modules"


def import_circles(modules: dict[str, str]) -> list[list[str]]:
    """The circles among our modules' imports (TYPE_CHECKING ones too: a circle there is still
    two modules that cannot be read apart), each from its smallest name."""
    packages = {name.rpartition(".")[0] for name in modules}
    graph = {
        module: {
            target
            for _, name in _imports(source, module, module in packages)
            if name.split(".")[0] in ("bot", "cogs")
            and (target := _ours(name, modules)) not in (None, module)
            and target in modules
            and not target.startswith(module + ".")  # a package's own parts
            and not module.startswith(target + ".")  # a package and what it re-exports
        }
        for module, source in modules.items()
    }
    circles: set[tuple[str, ...]] = set()

    def walk(path: list[str]) -> None:
        for target in graph[path[-1]]:
            if target == path[0]:
                circles.add(tuple(path))
            elif target > path[0] and target not in path:  # each circle once, from its smallest
                walk([*path, target])

    for module in sorted(graph):
        walk([module])
    return [list(circle) for circle in sorted(circles)]


def test_no_two_modules_import_each_other_even_for_types() -> None:
    circles = import_circles(_sources())
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_the_check_finds_a_circle_through_a_type_only_import() -> None:
    planted = {
        "bot.playback.a": "from bot.playback.b import B\n",
        "bot.playback.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from bot.playback.a import A\n",
        "bot.playback.c": "from bot.playback.a import A\n",
    }
    assert import_circles(planted) == [["bot.playback.a", "bot.playback.b"]]
