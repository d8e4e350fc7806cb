"""`doctor`'s adapter checks: each library whose private names the bot uses is reported against
the version its adapter was written for, with a warning (not a failure) when they differ."""

from __future__ import annotations

import importlib
from importlib.metadata import version
from types import SimpleNamespace

import pytest

from bot.doctor import ADAPTERS, check_adapter, check_adapters, same_release
from tests.test_private_names import ADAPTERS as CHECKED_ADAPTERS


def test_every_adapter_the_layout_check_knows_is_checked_by_doctor() -> None:
    """One list of adapters: those whose private names tests/test_private_names.py allows."""
    paths = {f"{module.replace('.', '/')}.py" for module in ADAPTERS}
    assert paths == set(CHECKED_ADAPTERS.values())
    libraries = {importlib.import_module(module).LIBRARY for module in ADAPTERS}
    assert libraries == {"pocket-tts", "torch", "discord.py"}


def test_the_installed_libraries_are_those_the_adapters_were_written_for() -> None:
    checks = check_adapters()
    assert [check.name for check in checks] == [
        "pocket-tts adapter",
        "torch adapter",
        "discord.py adapter",
    ]
    for check in checks:
        assert check.ok and not check.warning, check.lines()
    assert checks[0].detail == (
        f"pocket-tts {version('pocket-tts')}, as bot/synthesis/pocket_tts_adapter.py was "
        "written for"
    )


@pytest.mark.parametrize(
    ("installed", "written_for", "same"),
    [
        ("2.13.0+cpu", "2.13.0", True),  # torch's CPU build
        ("2.13.0", "2.13.0", True),
        ("2.13.1+cpu", "2.13.0", False),
        ("4.0.1", "4.0.10", False),
        ("none", "2.7.1", False),
    ],
)
def test_a_local_build_is_the_release_it_builds(
    installed: str, written_for: str, same: bool
) -> None:
    assert same_release(installed, written_for) is same


def test_another_version_is_a_warning_naming_the_adapter_and_the_fix() -> None:
    adapter = SimpleNamespace(
        __name__="bot.playback.voice_link", LIBRARY="discord.py", WRITTEN_FOR="1.7.3"
    )
    check = check_adapter(adapter)
    assert check.ok and check.warning  # it may work: doctor does not fail for it
    installed = version("discord.py")
    assert check.detail == (
        f"discord.py {installed} installed, bot/playback/voice_link.py was written for 1.7.3"
    )
    assert check.fix is not None and "discord.py 1.7.3" in check.fix
    assert "update its WRITTEN_FOR" in check.fix
    assert check.lines()[0].startswith("⚠ discord.py adapter:")


def test_a_library_not_installed_is_a_warning_too() -> None:
    adapter = SimpleNamespace(
        __name__="bot.synthesis.nothing", LIBRARY="no-such-distribution-here", WRITTEN_FOR="1.0"
    )
    check = check_adapter(adapter)
    assert check.warning
    assert check.detail.startswith("no-such-distribution-here none installed")
