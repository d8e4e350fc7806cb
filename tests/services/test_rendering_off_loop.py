"""A long message's words are made on a worker thread, not on the event loop (issue 48 item
16): rendering takes time in proportion to the text, and a 4,000-character message held the
loop tens of milliseconds where every server's speech and every command wait on it."""

from __future__ import annotations

import threading

from bot.services.wording import OFF_LOOP_CHARS, rendered
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot


async def test_a_long_text_is_rendered_on_a_worker_thread_a_short_one_on_the_loop() -> None:
    loop_thread = threading.current_thread()
    ran_on: list[threading.Thread] = []

    def render() -> str:
        ran_on.append(threading.current_thread())
        return "words"

    assert await rendered("a" * (OFF_LOOP_CHARS - 1), render) == "words"
    assert await rendered("a" * OFF_LOOP_CHARS, render) == "words"
    assert ran_on[0] is loop_thread and ran_on[1] is not loop_thread


async def test_a_long_chat_message_is_read_whole(bot: Bot, server: Server) -> None:
    """Made off the loop, the words are the same: every sentence of a long message, in order,
    with the server's settings (its length cap raised to take it all)."""
    server.add("bob")
    server.in_voice("bob", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), max_length=2000)
    sentences = [f"Sentence number {n} is here." for n in range(1, 41)]
    content = " ".join(sentences)
    assert len(content) >= OFF_LOOP_CHARS
    payload = server.message(server["bob"], content, channel_id=TEXT_ID)
    assert await bot.autoread.handle(server.message_create(payload)) == "read"
    (said,) = bot.speaker.play()
    assert said.startswith("Bob said Sentence number one is here.")
    assert said.endswith("Sentence number forty is here.")
    assert said.count("Sentence number") == 40
