"""A cloned voice never speaks unnamed after a name its author chose: the same-author rule
("NAME said" once a minute) counts only an announcement by username (issue 33, item 2)."""

from __future__ import annotations

import pytest

from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

SEQUENCES = {
    # a nickname heard in a built-in voice, then the clone: named again, by username
    "built-in under a nickname, then the clone": (
        ["built-in", "clone", "clone"],
        ["Boss said hello everyone", "alice said this is alice and I quit", "bye"],
    ),
    "the clone first, then built-in": (
        ["clone", "built-in"],
        ["alice said hello everyone", "this is alice and I quit"],
    ),
    "built-in twice": (
        ["built-in", "built-in"],
        ["Boss said hello everyone", "this is alice and I quit"],
    ),
}
TEXTS = ["hello everyone", "this is alice and I quit", "bye"]


@pytest.mark.parametrize(("voices", "said"), SEQUENCES.values(), ids=SEQUENCES.keys())
@pytest.mark.parametrize("xsaid", [True, False])
async def test_a_clone_is_named_by_username_after_a_nickname(
    bot: Bot, server: Server, voices: list[str], said: list[str], xsaid: bool
) -> None:
    server.add("alice", nick="Boss")
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), rate_limit=50, xsaid=xsaid)
    cloned = None
    texts = []
    for voice, text in zip(voices, TEXTS, strict=False):
        if voice == "clone" and cloned is None:
            cloned = await bot.clone("alice")
        elif voice == "built-in" and cloned is not None:
            await bot.db.choices.delete_for_user(int(server["alice"].id))  # the default voice
            cloned = None
        assert await bot.autoread.handle(server.post("alice", text)) == "read"
        texts += bot.speaker.play()
    if not xsaid:  # only a cloned voice names its author, and each time it must
        said = [
            line if line.startswith("alice said") else line.split(" said ")[-1] for line in said
        ]
    assert texts == said
