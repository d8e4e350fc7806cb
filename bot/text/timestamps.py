"""Discord's timestamps (`<t:SECONDS:STYLE>`) as a reader of the message sees them, by style,
in the server's time zone. Pure functions (the present moment is an argument).

Discord shows each style in the reader's own time zone, which the bot cannot know; it reads
them in the server's (`/config text timezone`, UTC by default), and says "UTC" after a time of
day read in the default zone, where a listener elsewhere would otherwise take it for theirs.
The styles, as Discord documents them: t (a short time), T (a long time: said as the short
one), d (a short date), D (a long date), f (date and time, the default), F (the weekday, the
date and the time), R (relative: "in 3 hours", "2 days ago", from babel's CLDR data).

What is made here still has digits ("14 November 2023 at 4:13 pm"): the number reader turns
them into words in the same language afterwards, as everything else in the message.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from babel.dates import format_timedelta, get_day_names

from bot.text.numbers import numbering
from bot.text.phrasebook import phrasebook

STYLES = "tTdDfFR"
DEFAULT_ZONE = "UTC"
MAX_ZONE_NAME = 64  # an IANA name is at most about 30 characters

# "{date} at {time}" per language (numbers' code): the word before a time of day
_AT_TIME = {
    "en": "{date} at {time}",
    "fr": "{date} à {time}",
    "de": "{date} um {time}",
    "es": "{date} a las {time}",
    "it": "{date} alle {time}",
    "pt_BR": "{date} às {time}",
    "nl": "{date} om {time}",
}
_LOCALE = {"pt_BR": "pt_BR"}  # babel's locale for a numbers code (the same elsewhere)


@functools.lru_cache(maxsize=64)
def zone(name: str) -> tzinfo | None:
    """The time zone called `name` (an IANA name such as Europe/Paris, or UTC), or None."""
    if not name or len(name) > MAX_ZONE_NAME or name.startswith(("/", ".")) or ".." in name:
        return None
    if name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


@functools.cache
def _zone_names() -> tuple[str, ...]:
    return tuple(sorted(available_timezones() | {DEFAULT_ZONE}))


def zone_names(typed: str, most: int = 25) -> list[str]:
    """Up to `most` time zone names holding what was typed (any case), for a choice list."""
    wanted = typed.strip().casefold()[:MAX_ZONE_NAME]
    return [name for name in _zone_names() if wanted in name.casefold()][:most]


def read_timestamp(
    seconds: int, style: str, language: str, zone_name: str, now: datetime
) -> str | None:
    """The words (with digits) for a timestamp in `style`, in `language`, in the zone
    `zone_name` (UTC when it is unknown); None when the moment cannot be a date."""
    code = numbering(language).code
    where = zone(zone_name) or UTC
    try:
        moment = datetime.fromtimestamp(seconds, where)
    except (OverflowError, OSError, ValueError):
        return None
    if style == "R":
        return format_timedelta(
            moment - now, add_direction=True, locale=_LOCALE.get(code, code.split("_")[0])
        )
    book = phrasebook(language)
    date = book.date.format(day=moment.day, month=book.months[moment.month - 1], year=moment.year)
    # a no-break space after the day: "14. November" starting a line is no list's "14. "
    date = date.replace(" ", "\u00a0", 1)
    if style in "dD":
        return date
    time = _time_of_day(moment, code)
    if where is UTC:
        time += " UTC"
    if style in "tT":
        return time
    said = _AT_TIME.get(code, _AT_TIME["en"]).format(date=date, time=time)
    if style == "F":
        locale = _LOCALE.get(code, code.split("_")[0])
        weekday = get_day_names("wide", locale=locale)[moment.weekday()]
        said = f"{weekday}, {said}"
    return said


def _time_of_day(moment: datetime, code: str) -> str:
    """4:13 pm in English (as Discord shows it there), 16:13 elsewhere."""
    if code == "en":
        hour = moment.hour % 12 or 12
        ampm = "am" if moment.hour < 12 else "pm"
        return f"{hour}:{moment.minute:02d} {ampm}" if moment.minute else f"{hour} {ampm}"
    return f"{moment.hour}:{moment.minute:02d}"
