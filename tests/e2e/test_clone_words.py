"""A cloned voice says only its owner's words, end to end (issue 58): the real bot on the
fake Discord, Alice's clone made by /clone from an uploaded clip (the tiny model). Bob's
server nickname is a sentence and an admin's dictionary turns "hello" into "I quit": her
clone, mentioning him and replying to him, says neither; once she speaks with the built-in
voice again, both are read as before. (The services-tier table: tests/services/
test_clone_words.py.)"""

from __future__ import annotations

from typing import Any

from tests.conftest import RunningBot
from tests.e2e.test_autoread import ADMIN, outcome, setup_read_channel, speaker
from tests.e2e.test_voices import clone
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
CONFESSION = "I confess I lied to you all"


async def read(running: RunningBot, user: str, text: str, **options: Any) -> tuple[str, str | None]:
    """What is said for `user`'s message (the next line spoken), and in which voice."""
    existing = running.bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
    count = len(existing.history) if existing is not None else 0
    message = await running.fake.post(user, text, **options)
    assert await outcome(running, message) == "read"
    await running.fake.wait_for(lambda: len(speaker(running).history) > count, 30, "reading")
    played = speaker(running).history[count]
    return played.text, played.voice


async def test_a_clone_never_says_a_nickname_or_a_dictionary_word(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    bob = fake.humans["bob"].id
    await setup_read_channel(fake)
    await (await clone(fake, "Mine")).wait_content("is ready")
    await (await fake.interaction("voice use", {"name": "Mine"})).wait_final()
    added = await (
        await fake.interaction("dict add", {"word": "hello", "spoken": "I quit"}, permissions=ADMIN)
    ).wait_final()
    assert "I quit" in added["content"]
    fake.nicks[bob] = CONFESSION  # his own server nickname: 27 characters of a sentence
    await fake.set_voice_state("alice", VOICE)
    await fake.set_voice_state("bob", VOICE)

    said, voice = await read(running_bot, "alice", f"<@{bob}> hello", mentions=("bob",))
    assert said == "alice said someone hello"
    assert voice is not None and voice.endswith(".safetensors")  # her clone spoke
    bobs = await fake.post("bob", "are you there")  # (his message, in the built-in voice)
    await fake.wait_for(lambda: len(speaker(running_bot).history) == 2, 30, "bob's message")
    assert speaker(running_bot).history[1].text == f"{CONFESSION} said are you there"
    said, voice = await read(running_bot, "alice", "hello there", reply_to=bobs)
    assert said == "alice said, replying to someone, hello there"
    assert voice is not None and voice.endswith(".safetensors")

    # the built-in voice again: his nickname and the dictionary are read as before
    await (await fake.interaction("voice delete", {"name": "Mine"})).wait_final()
    said, voice = await read(running_bot, "alice", f"<@{bob}> hello", mentions=("bob",))
    assert (said, voice) == (f"{CONFESSION} I quit", None)  # (her name said a moment ago)
