"""A dictionary sound never plays unnamed (issue 48, item 19): an admin's clip may be a
recording of a member's voice, so a message that plays one is preceded by who sent it,
with `xsaid` off too, and even right after the same author. Real discord.py Messages from
MESSAGE_CREATE; the sound as /dict sound keeps it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.test_sounds import CLIP
from tests.services.wiring import Bot

BOOM = "\uf8fdboom\uf8feboom\uf8ff"  # the word marked with its sound


@dataclass(frozen=True)
class Sounding:
    xsaid: bool
    said: list[str]


CASES = {
    "xsaid off": Sounding(False, ["first", f"Alice said {BOOM} there", "no sound"]),
    "xsaid on": Sounding(True, ["Alice said first", f"Alice said {BOOM} there", "no sound"]),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_a_message_playing_a_sound_names_its_author(
    bot: Bot, server: Server, case: Sounding
) -> None:
    server.in_voice("alice", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), xsaid=case.xsaid)
    await bot.dictionary.sounds.set(guild.id, "boom", CLIP)
    for text in ("first", "boom there", "no sound"):  # the same author, in a row
        assert await bot.autoread.handle(server.post("alice", text)) == "read"
    assert bot.speaker.play() == case.said
