"""Discord's timestamps read by their style (issue 50, item 7): t and T a time of day, d and D
a date, f (the default) both, F with the weekday, R relative to now; in the server's time zone
(`/config text timezone`, UTC by default, said after a time of day in that default)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

from bot.services.wording import read_options
from bot.storage.server_settings import SETTINGS, ServerSettings, SettingError
from bot.text.numbers import read_timestamp, zone, zone_names
from bot.text.words import Names, ReadOptions, speakable

MOMENT = 1700000000  # Tuesday 14 November 2023, 22:13:20 UTC

STYLES = [
    # English, in UTC (the default: said)
    ("english", "UTC", "t", "ten thirteen p.m. UTC"),
    ("english", "UTC", "T", "ten thirteen p.m. UTC"),
    ("english", "UTC", "d", "the fourteenth of November twenty twenty-three"),
    ("english", "UTC", "D", "the fourteenth of November twenty twenty-three"),
    (
        "english",
        "UTC",
        "f",
        "the fourteenth of November twenty twenty-three at ten thirteen p.m. UTC",
    ),
    (
        "english",
        "UTC",
        "F",
        "Tuesday, the fourteenth of November twenty twenty-three at ten thirteen p.m. UTC",
    ),
    # the server's own zone: the hour (and the day) move, the zone goes unsaid
    ("english", "Asia/Tokyo", "t", "seven thirteen a.m."),
    ("english", "Asia/Tokyo", "D", "the fifteenth of November twenty twenty-three"),
    (
        "english",
        "America/New_York",
        "f",
        "the fourteenth of November twenty twenty-three at five thirteen p.m.",
    ),
    ("french", "Europe/Paris", "t", "vingt-trois heures treize"),
    (
        "french",
        "Europe/Paris",
        "F",
        "mardi, quatorze novembre deux mille vingt-trois à vingt-trois heures treize",
    ),
    ("german", "Europe/Berlin", "D", "vierzehnter November zweitausenddreiundzwanzig"),
    (
        "german",
        "Europe/Berlin",
        "f",
        "vierzehnter November zweitausenddreiundzwanzig um dreiundzwanzig Uhr dreizehn",
    ),
    ("spanish", "UTC", "t", "veintidós y trece UTC"),
    (
        "italian",
        "Europe/Rome",
        "F",
        "martedì, quattordici novembre duemilaventitré alle ventitré e tredici",
    ),
    (
        "portuguese",
        "America/Sao_Paulo",
        "f",
        "catorze de novembro de dois mil e vinte e três às dezenove e treze",
    ),
    ("dutch", "Europe/Amsterdam", "T", "drieëntwintig uur dertien"),
]


@pytest.mark.parametrize(("language", "zone", "style", "said"), STYLES)
def test_a_timestamp_is_read_by_its_style_in_the_servers_zone(
    language: str, zone: str, style: str, said: str
) -> None:
    options = ReadOptions(language=language, timezone=zone)
    assert speakable(f"<t:{MOMENT}:{style}>", Names(), options) == said


def test_without_a_style_a_timestamp_is_read_as_f() -> None:
    options = ReadOptions(timezone="Europe/London")
    assert speakable(f"<t:{MOMENT}>", Names(), options) == speakable(
        f"<t:{MOMENT}:f>", Names(), options
    )


NOW = datetime.fromtimestamp(MOMENT, UTC)

RELATIVE = [
    ("english", timedelta(hours=3), "in 3 hours"),
    ("english", -timedelta(days=2), "2 days ago"),
    ("english", -timedelta(seconds=40), "40 seconds ago"),
    ("french", timedelta(hours=3), "dans 3 heures"),
    ("french", -timedelta(days=2), "il y a 2 jours"),
    ("german", -timedelta(days=2), "vor 2 Tagen"),
    ("spanish", timedelta(hours=3), "dentro de 3 horas"),
    ("italian", -timedelta(days=2), "2 giorni fa"),
    ("portuguese", timedelta(hours=3), "em 3 horas"),
    ("dutch", -timedelta(days=2), "2 dagen geleden"),
]


@pytest.mark.parametrize(("language", "offset", "said"), RELATIVE)
def test_r_is_relative_to_now(language: str, offset: timedelta, said: str) -> None:
    seconds = int((NOW + offset).timestamp())
    assert read_timestamp(seconds, "R", language, "UTC", NOW) == said


@pytest.mark.parametrize(
    ("language", "hours", "said"),
    [
        ("english", 3, "in three hours"),
        ("english", -50, "two days ago"),
        ("french", 1, "dans une heure"),
        ("german", -26, "vor einem Tag"),
    ],
)
def test_r_in_a_message_is_read_from_the_present(language: str, hours: int, said: str) -> None:
    seconds = int(time.time()) + hours * 3600 + (30 if hours > 0 else -30)
    options = ReadOptions(language=language)
    assert speakable(f"<t:{seconds}:R>", Names(), options) == said


def test_an_unknown_zone_reads_as_utc_and_an_impossible_moment_as_a_time() -> None:
    assert speakable(f"<t:{MOMENT}:t>", Names(), ReadOptions(timezone="Mars/Olympus")) == (
        "ten thirteen p.m. UTC"
    )
    assert speakable("<t:99999999999999:R>", Names(), ReadOptions()) == "a time"


def test_the_timezone_setting_takes_iana_names_and_defaults_to_utc() -> None:
    spec = SETTINGS["timezone"]
    assert spec.group == "text"
    assert (
        spec.default == "UTC" and read_options(ServerSettings(1), {}, "english").timezone == "UTC"
    )
    assert spec.parse(" Europe/Paris ") == "Europe/Paris"
    assert spec.parse("none") == "UTC" and spec.parse("utc") == "UTC"
    for wrong in ("Europe/Atlantis", "../../etc/passwd", "x" * 200, "Paris"):
        with pytest.raises(SettingError):
            spec.parse(wrong)
    chosen = read_options(ServerSettings(1, timezone="Asia/Tokyo"), {}, "english")
    assert chosen.timezone == "Asia/Tokyo"


def test_the_zones_offered_as_one_types_are_iana_names_and_few() -> None:
    assert zone_names("paris") == ["Europe/Paris"]
    assert "America/New_York" in zone_names("new_y")
    assert "UTC" in zone_names("utc")
    assert len(zone_names("")) == 25 and zone_names("x" * 500) == []
    assert all(zone(name) is not None for name in zone_names("america/"))
