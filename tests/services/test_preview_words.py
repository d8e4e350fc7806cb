"""`/voice preview name text:` says its text as `/say` would (issue 48, item 12): the
server's dictionary, mentions by the names members are read by, links, markup, the length
cap; it used to speak the text raw. The same table as tests/services/test_typed_words.py,
spoken through VoiceService.preview in a built-in voice (and a cloned one: named)."""

from __future__ import annotations

import pytest

from tests.services.discord_objects import VOICE_ID, Server
from tests.services.test_typed_words import SAID, Typed, _server, _typed
from tests.services.wiring import Bot


@pytest.mark.parametrize("case", SAID.values(), ids=SAID.keys())
async def test_a_preview_says_its_text_as_say_would(bot: Bot, server: Server, case: Typed) -> None:
    bob = await _server(bot, server, case)
    voices = bot.voice_service()
    name = "Mine" if case.cloned else "alba"
    reply = await voices.preview(bob, name, _typed(server, case), bob.guild.id)
    assert reply.content == f"Playing a preview of “{name}” in <#{VOICE_ID}>."
    assert [utterance.text for utterance in bot.speaker.queue] == [case.said]
