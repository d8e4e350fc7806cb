"""Another library's private names live in one adapter module for that library (CONTRIBUTING.md,
"The layout and its rules"): a static scan of the code proves no module outside the adapters
touches a private part of pocket-tts, torch or discord.py, and proves its own checker on
planted violations.

Private, here:
- a name starting with `_` (not a dunder) reached on one of those libraries' modules, on an
  object of theirs, or (`self._x`) inside a class of ours built on one of their classes;
- an import from a private submodule (`torch._dynamo`) or of a private name; for pocket-tts,
  any import but its declared public API (its `__all__`: `TTSModel`, `export_model_state`);
- rewriting one of their attributes for the whole process (`discord.http.Route.BASE = ...`).

An object's type is unknown to a static scan, so `x._name` counts as a library's when no code
of ours defines `_name` (a def, a class, an assignment to a name or to `self._name`): our own
private names are all ours. (So a library's private name that one of ours happens to share,
such as discord.py's voice state's `_runner` and our endpoints' own, is not seen on an object
of unknown type: the check narrows the places to look, review does the rest.)
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LIBRARIES = ("discord", "torch", "pocket_tts")
# The one adapter of each library, where its private names are allowed.
ADAPTERS = {
    "pocket_tts": "bot/synthesis/pocket_tts_adapter.py",
    "torch": "bot/synthesis/torch_private.py",
    "discord": "bot/playback/voice_link.py",
}
# The code checked: the bot, the cogs, the benchmarks and the tests. The tests' own stand-ins
# for Discord build real discord.py objects offline (a ConnectionState fed payloads, voice
# clients registered in it, the fake server's websockets), which needs discord.py's insides:
# they are the tests' discord.py adapter, and the only exception.
SHIPPED = ("bot", "cogs", "bench")  # scanned in the fast tier: half a second
CHECKED = (*SHIPPED, "tests")  # the tests too: twice the code, a `slow` test
TEST_DISCORD_ADAPTERS = ("tests/services/discord_objects.py", "tests/fakediscord/")
# Underscore names that are public API: namedtuple's methods; `sys._getframe` is not used.
PUBLIC_UNDERSCORE = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
ACCESSORS = ("getattr", "hasattr", "setattr", "delattr")
NOT_OURS = "a library's private name (no code of ours defines it)"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORE


@functools.cache
def pocket_tts_public() -> frozenset[str]:
    """pocket-tts's declared public API: the `__all__` of its package (read, not imported)."""
    spec = importlib.util.find_spec("pocket_tts")
    assert spec is not None and spec.origin is not None
    for node in ast.walk(ast.parse(Path(spec.origin).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return frozenset(ast.literal_eval(node.value))
    raise AssertionError("pocket_tts declares no __all__")


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


@dataclass(frozen=True)
class _Facts:
    """What one walk over a module finds."""

    defined: frozenset[str]  # names its defs, classes, assignments, parameters bind
    reached: tuple[tuple[int, str], ...]  # (line, private name) reached on any object
    imports_a_library: bool  # imports one of LIBRARIES (else only `reached` can break a rule)


@functools.cache
def _facts(source: str) -> _Facts:
    defined: set[str] = set()
    reached: list[tuple[int, str]] = []
    imports = False
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.Attribute):
            if isinstance(node.ctx, ast.Store) and _is_self(node.value):
                defined.add(node.attr)  # `other._x = ...` sets someone else's
            if _private(node.attr):
                reached.append((node.lineno, node.attr))
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif isinstance(node, ast.Call) and (kind := _accessor(node)) is not None:
            name = node.args[1].value  # type: ignore[attr-defined]
            if kind == "setattr" and _is_self(node.args[0]):
                defined.add(name)
            if _private(name):
                reached.append((node.lineno, name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                modules.append(node.module or "")
            imports |= any(m.split(".")[0] in LIBRARIES for m in modules)
    return _Facts(frozenset(defined), tuple(reached), imports)


def defined_names(sources: dict[str, str]) -> frozenset[str]:
    """Every name a def, class, assignment (to a name, or to `self.x`) or parameter of ours
    binds."""
    return frozenset().union(*(_facts(source).defined for source in sources.values()))


def _accessor(node: ast.Call) -> str | None:
    """`getattr(x, "name", ...)` and its kin with a constant name: which one, else None."""
    if (
        isinstance(node.func, ast.Name)
        and node.func.id in ACCESSORS
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.func.id
    return None


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from (`a` in `a.b.c`), if it is a plain name."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _is_chain(node: ast.expr) -> bool:
    """`a.b.c`: names and attributes only (a module's or a class's attribute, not an
    object's that a call made)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


class _Scan(ast.NodeVisitor):
    """One module's private uses of the libraries in `libraries`."""

    def __init__(self, libraries: tuple[str, ...], ours: frozenset[str]) -> None:
        self.libraries = libraries
        self.ours = ours
        self.bound: dict[str, str] = {}  # a name bound to a library's module or object -> it
        self.library_classes: list[tuple[str, set[str]]] = []  # (library, names it defines)
        self.problems: list[tuple[int, str]] = []

    def flag(self, node: ast.AST, what: str) -> None:
        self.problems.append((getattr(node, "lineno", 0), what))

    # ---- imports ----------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top, *rest = alias.name.split(".")
            if top not in self.libraries:
                continue
            self._check_module(node, top, rest)
            self.bound[alias.asname or top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        top, *rest = (node.module or "").split(".")
        if node.level or top not in self.libraries:
            return
        self._check_module(node, top, rest)
        for alias in node.names:
            if _private(alias.name):
                self.flag(node, f"imports {top}'s private {alias.name}")
            elif top == "pocket_tts" and not rest and alias.name not in pocket_tts_public():
                self.flag(node, f"imports pocket_tts.{alias.name}, not in pocket-tts's API")
            self.bound[alias.asname or alias.name] = top

    def _check_module(self, node: ast.AST, top: str, rest: list[str]) -> None:
        dotted = ".".join([top, *rest])
        if any(_private(part) for part in rest):
            self.flag(node, f"imports {dotted}, a private module")
        elif top == "pocket_tts" and rest:
            self.flag(node, f"imports {dotted}, not pocket-tts's API (its __all__)")

    # ---- classes built on a library's ------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        library = next((self.bound[r] for b in node.bases if (r := _root(b)) in self.bound), None)
        if library is None:
            self.generic_visit(node)
            return
        own = {
            n.name
            for n in ast.walk(node)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        own |= {
            n.attr
            for n in ast.walk(node)
            if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
        }
        own |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.library_classes.append((library, own))
        self.generic_visit(node)
        self.library_classes.pop()

    # ---- attributes -------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._check_attribute(
            node, node.value, node.attr, isinstance(node.ctx, ast.Store | ast.Del)
        )
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        kind = _accessor(node)
        if kind is not None:
            name = node.args[1].value  # type: ignore[attr-defined]
            self._check_attribute(node, node.args[0], name, kind in ("setattr", "delattr"))
        self.generic_visit(node)

    def _check_attribute(self, node: ast.AST, value: ast.expr, name: str, writes: bool) -> None:
        root = _root(value)
        library = self.bound.get(root) if root is not None else None
        if library is not None:
            if _private(name):
                self.flag(node, f"reaches {library}'s private {name}")
            elif writes and _is_chain(value):  # not `discord.Embed().title = ...`
                self.flag(
                    node, f"rewrites {ast.unparse(value)}.{name}, {library}'s, for the process"
                )
            return
        if not _private(name):
            return
        if _is_self(value) and self.library_classes:
            library, own = self.library_classes[-1]
            if name not in own:
                self.flag(node, f"reaches {library}'s private {name} on self")
            return
        if name not in self.ours:
            self.flag(node, f"reaches {name}, {NOT_OURS}")


def private_uses(sources: dict[str, str], adapters: dict[str, str] = ADAPTERS) -> list[str]:
    """What in `sources` (path -> source) touches a library's private names outside its
    adapter: one line each, `path:line: what`."""
    ours = defined_names(sources)
    problems = []
    for path, source in sorted(sources.items()):
        facts = _facts(source)
        libraries = tuple(lib for lib in LIBRARIES if adapters.get(lib) != path)
        if path.startswith(TEST_DISCORD_ADAPTERS):
            libraries = tuple(lib for lib in libraries if lib != "discord")
        known = ours
        if len(libraries) < len(LIBRARIES):
            # An adapter reaches its own library's objects: don't take those for another's.
            known = ours | {name for _, name in facts.reached}
        if facts.imports_a_library:
            scan = _Scan(libraries, known)
            scan.visit(ast.parse(source))
            problems += [f"{path}:{line}: {what}" for line, what in scan.problems]
        else:  # the one rule left: private names no code of ours defines
            problems += [
                f"{path}:{line}: reaches {name}, {NOT_OURS}"
                for line, name in facts.reached
                if name not in known
            ]
    return sorted(problems)


def _sources(tops: tuple[str, ...] = SHIPPED) -> dict[str, str]:
    paths = [p for top in tops for p in sorted((ROOT / top).rglob("*.py"))]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths}


def test_no_module_outside_the_adapters_touches_a_library_s_private_names() -> None:
    problems = private_uses(_sources())
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_no_test_module_touches_them_either() -> None:
    """The tests and benchmarks use the adapters too, but for the tests' own stand-ins for
    Discord (`TEST_DISCORD_ADAPTERS`)."""
    problems = private_uses(_sources(CHECKED))
    assert not problems, "\n".join(problems)


def test_each_adapter_exists_and_says_what_it_was_written_for() -> None:
    for path in ADAPTERS.values():
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assigned = {
            t.id
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        assert {"LIBRARY", "WRITTEN_FOR"} <= assigned, path


def test_the_check_finds_each_kind_of_private_use() -> None:
    """The scan is not vacuous: each planted module (beside the real ones) is found, once, in a
    tree that is otherwise clean; and the adapters themselves, taken for ordinary modules, are
    flagged."""
    sources = _sources()
    planted = {
        "bot/synthesis/planted_engine.py": "import torch\nx = torch._C\n",
        "bot/synthesis/planted_scheduler.py": "from torch._dynamo import config\n",
        "bot/synthesis/planted_clip.py": "from torch.nn import _reduction\n",
        "bot/synthesis/planted_tempo.py": "from pocket_tts.modules.rope import apply_rope\n",
        "bot/synthesis/planted_voice_library.py": "from pocket_tts import _private_thing\n",
        "bot/synthesis/planted_model_pool.py": "def f(model):\n    return model._run_flow_lm(1)\n",
        "bot/synthesis/planted_phrase_cache.py": "def f(m):\n    hasattr(m, '_cache_backend')\n",
        "bot/planted_client.py": "import discord\ndiscord.http.Route.BASE = 'x'\n",
        "bot/playback/planted_speakers.py": "from discord import opus as o\no._load_default()\n",
        "bot/playback/planted_connection.py": (
            "import discord\n\nclass Link(discord.VoiceClient):\n"
            "    def f(self):\n        self.mine = 1\n        return self._connection, self.mine\n"
        ),
        "cogs/planted_speech.py": "def f(vc):\n    return getattr(vc, '_expecting_disconnect')\n",
        "bench/planted_load.py": "import torch.nn.functional as F\nF._in_projection\n",
        "tests/planted_player.py": "import discord\ndiscord.opus._load_default()\n",
    }
    problems = private_uses({**sources, **planted})
    flagged = [problem.split(":")[0] for problem in problems]
    assert sorted(flagged) == sorted(planted), "\n".join(problems)
    # The real adapters, checked as if they were not adapters: each is caught.
    caught = {p.split(":")[0] for p in private_uses(sources, adapters={})}
    assert set(ADAPTERS.values()) <= caught, caught
