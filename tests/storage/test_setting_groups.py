"""The server settings' groups: `/config <group> <setting>` and /settings' fields, within
Discord's limits (25 subcommands a group, 25 fields an embed, 1,024 characters a field's
value, 6,000 an embed), in English and French, with every setting at its longest value."""

from __future__ import annotations

import pytest

from bot.i18n.translate import localize, tr
from bot.services.settings_commands import read_channels_line
from bot.storage.database import MAX_READ_CHANNELS, ReadChannel
from bot.storage.server_settings import GROUPS, SETTINGS, settings_in

pytestmark = pytest.mark.unit

LONGEST = {
    "bool": False,
    "int": 86_400,
    "rate": 1.25,
    "channel": 2**63 - 1,
    "role": 2**63 - 1,
    "voice_channel": 2**63 - 1,
    "voice": "x" * 32,
    "language": "portuguese",
    "str": "x" * 10,
    "timezone": "America/Argentina/ComodRivadavia",
}
MOST_READ = [ReadChannel(2**63 - 1 - n, 2**63 - 1) for n in range(MAX_READ_CHANNELS)]


def test_every_setting_is_in_one_known_group() -> None:
    assert {spec.group for spec in SETTINGS.values()} <= set(GROUPS)
    assert sum(len(settings_in(group)) for group in GROUPS) == len(SETTINGS)
    assert all(settings_in(group) for group in GROUPS), "a group without settings"


def test_the_groups_fit_discords_limits_on_commands() -> None:
    assert len(GROUPS) <= 25
    for group in GROUPS:
        assert len(settings_in(group)) <= 25, group
        assert len(group) <= 32 and group.islower(), group


@pytest.mark.parametrize("locale", [None, "fr"])
def test_settings_embed_fits_discords_limits(locale: str | None) -> None:
    total = 0
    for group, title in GROUPS.items():
        value = "\n".join(
            localize(
                tr(
                    "{name}: {value} · {description}",
                    name=spec.name,
                    value=spec.show(LONGEST[spec.kind]),
                    description=tr(spec.description),
                ),
                locale,
            )
            for spec in settings_in(group)
        )
        name = localize(tr(title), locale)
        assert len(value) <= 1024 and len(name) <= 256, (group, len(value))
        total += len(name) + len(value)
    # the read channels' field, first (the most, each with its own voice channel)
    read = localize(
        tr("{channels} · /setup add, /setup remove", channels=read_channels_line(MOST_READ)), locale
    )
    assert len(read) <= 1024
    total += len("read_channels") + len(read)
    assert total <= 6000 - 300  # the title and the dictionary's field fit beside them
    if locale == "fr":
        assert localize(tr(GROUPS["reading"]), locale) == "Quels messages sont lus"
