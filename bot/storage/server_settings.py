"""Every per-server setting in one place: name, type, default, bounds, description.

`ServerSettings` holds a server's values (defaults unless changed); `SETTINGS` describes each
one, parses what an admin typed and shows the current value.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from bot.core.errors import UserError
from bot.i18n.translate import tr
from bot.text.numbers import DEFAULT_ZONE, zone

_BOOL_WORDS = {
    "on": True,
    "true": True,
    "yes": True,
    "1": True,
    "off": False,
    "false": False,
    "no": False,
    "0": False,
}


# what a command gives a setting: text, or a typed option (a switch, a number, an id; None)
SettingInput = str | bool | int | float | None


class SettingError(UserError, ValueError):
    """A value an admin gave that does not fit; the message says what would."""


SLOWEST, FASTEST = 0.5, 2.0  # speaking rates: half and twice the model's own speed


def parse_rate(raw: str, name: str) -> float:
    """A speaking rate as typed ("1.5", "1,5", "1.5x", "x1.5"), within SLOWEST-FASTEST;
    kept to hundredths."""
    text = raw.strip().lower().strip("x×").strip().replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        raise SettingError(tr("{name} is a number such as 1.5.", name=name)) from None
    return check_rate(value, name)


def check_rate(value: float, name: str) -> float:
    """A speaking rate within SLOWEST-FASTEST, kept to hundredths."""
    if not SLOWEST <= value <= FASTEST:  # (NaN too)
        raise SettingError(tr("{name} goes from {lo} to {hi}.", name=name, lo=SLOWEST, hi=FASTEST))
    return round(value, 2)


def parse_timezone(raw: str, name: str) -> str:
    """A time zone's IANA name as typed ("Europe/Paris", "utc"); "none" or "off": UTC."""
    text = raw.strip()
    if text.lower() in ("", "none", "off", "utc", "default"):
        return DEFAULT_ZONE
    if zone(text) is None:
        raise SettingError(
            tr("{name} is a time zone such as Europe/Paris or America/New_York.", name=name)
        )
    return text


def show_rate(rate: float) -> str:
    return f"{rate:g}×"


LOWEST_PITCH, HIGHEST_PITCH = -6, 6  # semitones below and above the voice's own pitch


def parse_pitch(raw: str, name: str) -> int:
    """A pitch in semitones as typed ("3", "+3", "-2", "−2"), within LOWEST-HIGHEST_PITCH."""
    text = raw.strip().replace("\u2212", "-")
    try:
        value = int(text)
    except ValueError:
        raise SettingError(tr("{name} is a whole number.", name=name)) from None
    if not LOWEST_PITCH <= value <= HIGHEST_PITCH:
        raise SettingError(
            tr("{name} goes from {lo} to {hi}.", name=name, lo=LOWEST_PITCH, hi=HIGHEST_PITCH)
        )
    return value


def show_pitch(pitch: int) -> str:
    return f"{pitch:+d}" if pitch else "0"


# The settings' groups, in the order /settings shows them: `/config <group> <setting>` (Discord
# allows 25 subcommands a group, and 25 fields an embed; one group each keeps room to grow).
GROUPS: dict[str, str] = {
    "reading": "Which messages are read",
    "text": "How a message becomes words",
    "speech": "How the bot sounds",
    "joining": "When the bot joins and leaves voice",
    "limits": "How much is read",
}


def _setting(default: Any, description: str, *, group: str, **bounds: Any) -> Any:
    assert group in GROUPS, group
    return field(default=default, metadata={"description": description, "group": group, **bounds})


@dataclass(frozen=True)
class ServerSettings:
    guild_id: int
    read_threads: bool = _setting(
        True, "Also read the threads of the read channels", group="reading"
    )
    text_in_voice: bool = _setting(
        True, "Also read the chat of the voice channel the bot is in", group="reading"
    )
    autojoin: bool = _setting(
        True, "Join when someone in voice posts in a read channel", group="joining"
    )
    home_voice: int | None = _setting(
        None,
        "Voice channel the bot stays in, and reads webhooks into ('none': off)",
        kind="voice_channel",
        group="joining",
    )
    idle_timeout: int = _setting(
        300, "Seconds of quiet before leaving voice (0: stay)", lo=0, hi=86_400, group="joining"
    )
    xsaid: bool = _setting(True, "Say who is speaking (“NAME said”)", group="text")
    join_leave: bool = _setting(
        False,
        "Say when members join or leave the bot's voice channel (“NAME joined”)",
        group="joining",
    )
    skip_emoji: bool = _setting(
        False, "Leave emoji out instead of reading their names", group="text"
    )
    repeated_characters: int = _setting(
        4, "Cut runs of one character to this many (0: keep)", lo=0, hi=50, group="text"
    )
    max_length: int = _setting(
        300, "Longest spoken message, in characters", lo=20, hi=2_000, group="text"
    )
    pauses: bool = _setting(
        False,
        "Make pauses of “...” and blank lines in chat (/say and /tts always do)",
        group="text",
    )
    timezone: str = _setting(
        "UTC",
        "Time zone Discord's timestamps are read in (such as Europe/Paris)",
        kind="timezone",
        group="text",
    )
    bot_ignore: bool = _setting(True, "Ignore messages from bots and webhooks", group="reading")
    skip_prefix: str = _setting(
        "-", "Messages starting with this are not read ('none': off)", max_len=10, group="reading"
    )
    required_role: int | None = _setting(
        None, "Only read members with this role ('none': everyone)", kind="role", group="reading"
    )
    ignored_role: int | None = _setting(
        None, "Never read members with this role ('none': no one)", kind="role", group="reading"
    )
    require_voice: bool = _setting(
        True, "Only read members who are in the bot's voice channel", group="reading"
    )
    skip_silent: bool = _setting(
        True, "Do not read @silent messages (sent without notifications)", group="reading"
    )
    audience_ignore: bool = _setting(
        True, "In a stage, do not read members of the audience", group="reading"
    )
    queue_limit: int = _setting(
        20, "Most messages waiting; beyond, the oldest is dropped", lo=1, hi=100, group="limits"
    )
    rate_limit: int = _setting(
        5, "Most messages read per member every 10 seconds", lo=1, hi=50, group="limits"
    )
    cloning: bool = _setting(True, "Members may clone their own voice here", group="speech")
    default_voice: str | None = _setting(
        None, "Built-in voice for members without one", kind="voice", group="speech"
    )
    language: str | None = _setting(
        None, "Language spoken here ('none': the bot's default)", kind="language", group="speech"
    )
    detect_language: bool = _setting(
        False,
        "Read each message in the language it is written in, of those offered",
        group="speech",
    )
    speaking_rate: float = _setting(
        1.0,
        "How fast speech is here, the pitch kept (0.5 to 2)",
        kind="rate",
        lo=SLOWEST,
        hi=FASTEST,
        group="speech",
    )
    queue_speedup: bool = _setting(
        False, "Speak faster while messages wait, up to 1.5× at 5 waiting", group="speech"
    )
    pitch: int = _setting(
        0,
        "Pitch of speech here in semitones, -6 to +6 (the voice's character kept)",
        lo=LOWEST_PITCH,
        hi=HIGHEST_PITCH,
        group="speech",
    )


@dataclass(frozen=True)
class SettingSpec:
    name: str
    kind: str  # bool, int, str, channel, voice_channel, role, voice, language, rate
    default: Any
    description: str
    group: str
    lo: float | None = None
    hi: float | None = None
    max_len: int | None = None

    def parse(self, raw: str) -> Any:
        """An admin's text (or the id of a picked channel/role) to a stored value."""
        text = raw.strip()
        if self.kind == "bool":
            try:
                return _BOOL_WORDS[text.lower()]
            except KeyError:
                raise SettingError(tr("{name} is on or off.", name=self.name)) from None
        if self.kind == "int":
            try:
                value = int(text)
            except ValueError:
                raise SettingError(tr("{name} is a whole number.", name=self.name)) from None
            return self._within_bounds(value)
        if self.kind == "rate":
            return parse_rate(text, self.name)
        if self.kind == "timezone":
            return parse_timezone(text, self.name)
        if text.lower() in ("none", "off", ""):
            if self.kind == "str":
                return ""
            return None
        if self.kind in ("channel", "voice_channel", "role"):
            digits = text.strip("<#@&>")
            if not digits.isdigit():
                kinds = {
                    "channel": tr("channel"),
                    "voice_channel": tr("voice channel"),
                    "role": tr("role"),
                }
                kind = kinds[self.kind]
                raise SettingError(tr("{name} needs a {kind}.", name=self.name, kind=kind))
            return int(digits)
        if self.max_len is not None and len(text) > self.max_len:
            raise SettingError(
                tr("{name} is at most {most} characters.", name=self.name, most=self.max_len)
            )
        return text

    def accept(self, given: SettingInput) -> Any:
        """A value as a command's option gives it: text is parsed (`parse`); a typed one (a
        switch, a number, a picked channel's or role's id, None for none) is checked as it
        is. A type that does not fit the setting is the caller's bug (TypeError)."""
        if isinstance(given, str):
            return self.parse(given)
        ids = ("channel", "voice_channel", "role")
        number = isinstance(given, int | float) and not isinstance(given, bool)
        if given is None and self.kind in ids:
            return None
        if self.kind == "bool" and isinstance(given, bool):
            return given
        if self.kind == "int" and number and isinstance(given, int):
            return self._within_bounds(given)
        if self.kind == "rate" and number and given is not None:
            return check_rate(float(given), self.name)
        if self.kind in ids and number and isinstance(given, int):
            return given
        raise TypeError(f"{self.name} ({self.kind}) cannot take {type(given).__name__}")

    def _within_bounds(self, value: int) -> int:
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise SettingError(
                tr("{name} goes from {lo} to {hi}.", name=self.name, lo=self.lo, hi=self.hi)
            )
        return value

    def show(self, value: Any) -> str:
        if self.kind == "bool":
            return tr("on") if value else tr("off")
        if value is None or value == "":
            return tr("none")
        if self.kind == "rate":
            return show_rate(value)
        if self.kind in ("channel", "voice_channel"):
            return f"<#{value}>"
        if self.kind == "role":
            return f"<@&{value}>"
        return str(value)


def _kind(f: dataclasses.Field[Any]) -> str:
    if "kind" in f.metadata:
        return str(f.metadata["kind"])
    return {bool: "bool", int: "int", str: "str"}[type(f.default)]


SETTINGS: dict[str, SettingSpec] = {
    f.name: SettingSpec(
        f.name,
        _kind(f),
        f.default,
        f.metadata["description"],
        f.metadata["group"],
        f.metadata.get("lo"),
        f.metadata.get("hi"),
        f.metadata.get("max_len"),
    )
    for f in dataclasses.fields(ServerSettings)
    if f.name != "guild_id"
}


def settings_in(group: str) -> list[SettingSpec]:
    """The settings of one group, in the order they are declared."""
    return [spec for spec in SETTINGS.values() if spec.group == group]
