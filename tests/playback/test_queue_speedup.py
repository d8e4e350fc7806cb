"""A rate that keeps up (`queue_speedup`): the rule in bot/playback/queue_speedup.py, and the
setting that turns it on (tests/e2e/test_queue_speedup.py hears it end to end)."""

from __future__ import annotations

import pytest

from bot.playback.queue_speedup import queue_factor, queue_rate
from bot.services.speech_plan import HowSpoken, SpeechPlanner
from bot.storage.database import MemberSettings
from bot.storage.server_settings import FASTEST, SETTINGS, ServerSettings

# messages waiting behind the one about to be spoken -> how much faster it is spoken
FACTORS = [(0, 1.0), (1, 1.1), (2, 1.2), (3, 1.3), (4, 1.4), (5, 1.5), (6, 1.5), (7, 1.5)]


@pytest.mark.parametrize(("waiting", "factor"), FACTORS)
def test_the_rate_rises_with_the_queue_up_to_one_and_a_half_at_five(
    waiting: int, factor: float
) -> None:
    assert queue_factor(waiting) == factor
    assert queue_rate(1.0, waiting, speedup=True) == factor
    assert queue_rate(0.8, waiting, speedup=True) == round(0.8 * factor, 2)


@pytest.mark.parametrize("waiting", range(8))
def test_without_queue_speedup_the_chosen_rate_is_kept(waiting: int) -> None:
    for rate in (0.5, 0.75, 1.0, 1.37, 2.0):
        assert queue_rate(rate, waiting) == rate  # off unless asked for
        assert queue_rate(rate, waiting, speedup=False) == rate


@pytest.mark.parametrize(
    ("rate", "waiting", "expected"),
    [(1.5, 5, FASTEST), (1.8, 2, FASTEST), (2.0, 1, FASTEST), (1.6, 2, 1.92), (1.9, 0, 1.9)],
)
def test_a_sped_up_rate_never_passes_the_fastest(
    rate: float, waiting: int, expected: float
) -> None:
    assert queue_rate(rate, waiting, speedup=True) == expected


def test_few_rates_come_out_so_the_lead_cache_stays_small() -> None:
    """Cached leads are kept per rate: for one chosen rate, every queue length gives one of six
    rates, each in hundredths (the cache's keys)."""
    for chosen in (0.5, 0.75, 1.0, 1.25, 1.33, 2.0):
        rates = {queue_rate(chosen, waiting, speedup=True) for waiting in range(100)}
        assert len(rates) <= 6, (chosen, rates)
        assert all(rate == round(rate, 2) for rate in rates), rates
    assert queue_rate(1.0, -1, speedup=True) == 1.0  # (never slower)


def test_queue_speedup_is_an_off_by_default_server_setting() -> None:
    spec = SETTINGS["queue_speedup"]
    assert spec.kind == "bool" and spec.default is False
    assert ServerSettings(1).queue_speedup is False
    assert spec.parse("on") is True and spec.show(True) == "on"
    assert "1.5" in spec.description  # /settings says how far it goes


def test_how_a_member_is_spoken_carries_the_servers_queue_speedup() -> None:
    resolver = SpeechPlanner(None, None, "english", ["english"])  # type: ignore[arg-type]
    member = MemberSettings()

    def speedup(server: ServerSettings | None) -> bool:
        return HowSpoken(resolver, 2, None if server is None else 1, member, server).speedup

    assert speedup(ServerSettings(1, queue_speedup=True)) is True
    assert speedup(ServerSettings(1)) is False
    assert speedup(None) is False  # a DM: no server, no queue to keep up with
