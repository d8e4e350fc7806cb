"""The suite's tiers, applied by folder, fixture and what a test starts, so that nobody has to
remember to mark a test:

- `image`: builds and runs the container image (tests/image/);
- `e2e`: a bot on the fake Discord (tests/e2e/, `running_bot`, `bot_on_fake_discord`);
- `postgres`: the test PostgreSQL server;
- `process`: starts another process (a bot, the CLI, pip, a bench script);
- `unit`: none of those; `./test.sh --fast` runs these, but for the ones marked `slow` by hand
  (a second or more each, measured: seconds of model work).

Across tiers, `timing` (by hand) marks a test that asserts wall-clock timings: gaps between
packets, underruns, latencies. `./test.sh` runs the others side by side (pytest-xdist: most
wait on the wire, not the CPU), then these in one process, with nothing beside them but the
image tests at the lowest CPU priority (nice 19): no other work at their own priority. A
`timing` test that loads both cores by design is also marked `alone` (by hand): it runs first,
with nothing beside it at all, since even work at the lowest priority slows the host (its cores
slow under sustained load, docs/performance.md) and its figures then move under it. The image tests
run in pytest processes of their own (test.sh): they share one build.

A `unit` test that starts one of those anyway fails, naming the tier it belongs to
(`guard_unit_tier`): the fast tier cannot grow slow by accident.
"""

from __future__ import annotations

import inspect
import multiprocessing.process
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

SLOW_TIERS = {
    "image": "builds and runs the container image with podman",
    "e2e": "runs a bot on the fake Discord",
    "postgres": "uses the test PostgreSQL server",
    "process": "starts another process",
}
MARKERS = {
    **SLOW_TIERS,
    "unit": "none of the other tiers",
    "slow": "a unit test that takes a second or more (seconds of model work): not in --fast",
    "timing": "asserts wall-clock timings: ./test.sh runs it after the others, in one process",
    "alone": "a timing test that loads both cores by design: ./test.sh runs it with nothing beside",
}

# what a test's own code (or its module's helpers) calls, by tier
CALLS = {
    "e2e": ("bot_on_fake_discord(", "FakeDiscord("),
    "postgres": ("PostgresServer(",),
    "process": ("BotProcess(", "subprocess.", "create_subprocess_"),
}
FIXTURES = {"running_bot": "e2e", "postgres": "postgres"}
# the programs a unit test may not start (the library's own helpers, such as ctypes' ldconfig
# lookup, may run)
HEAVY_PROGRAMS = ("python", "pip", "podman", "pg_ctl", "initdb", "postgres", "debootstrap", "bash")


TESTS = Path(__file__).resolve().parent


def tiers_of(item: pytest.Item) -> set[str]:
    # the folders under tests/ only: a checkout in a folder named image (or e2e) is no tier
    path = item.path.resolve()
    parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
    found = {tier for tier in ("image", "e2e") if tier in parts}
    names = getattr(item, "fixturenames", ())
    found |= {tier for fixture, tier in FIXTURES.items() if fixture in names}
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("database_at") == "postgresql":
        found.add("postgres")
    function = getattr(item, "function", None)
    if function is not None:
        source = inspect.getsource(function)
        found |= {tier for tier, calls in CALLS.items() if any(c in source for c in calls)}
    explicit = {mark.name for mark in item.iter_markers() if mark.name in SLOW_TIERS}
    return found | explicit


def mark(items: list[pytest.Item]) -> None:
    for item in items:
        tiers = tiers_of(item) or {"unit"}
        for tier in tiers:
            item.add_marker(tier)


class WrongTierError(AssertionError):
    pass


@pytest.fixture(autouse=True)
def guard_unit_tier(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """In a `unit` test, starting a process, the fake Discord or PostgreSQL fails the test."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    from tests.fakediscord import FakeDiscord
    from tests.postgres_server import PostgresServer

    def refuse(tier: str):  # type: ignore[no-untyped-def]
        def refused(*args: object, **kwargs: object) -> None:
            raise WrongTierError(
                f"this test {SLOW_TIERS[tier]}, so it is not a unit test: mark it "
                f"`@pytest.mark.{tier}` (tests/tiers.py)"
            )

        return refused

    monkeypatch.setattr(FakeDiscord, "start", refuse("e2e"))
    monkeypatch.setattr(PostgresServer, "start", refuse("postgres"))
    popen = subprocess.Popen.__init__
    refused = refuse("process")

    def guarded(self: subprocess.Popen[bytes], args: object, *more: object, **kw: object) -> None:
        program = args if isinstance(args, str | bytes | os.PathLike) else next(iter(args))  # type: ignore[call-overload]
        if Path(os.fsdecode(program)).name.startswith(HEAVY_PROGRAMS):
            refused()
        popen(self, args, *more, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)
    # worker processes (multiprocessing's spawn starts them without subprocess)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refused)
    yield
