"""The names members are read by: `/set nick` for another member (Manage Nicknames), and the
rule that no nickname makes one member sound like another, a cloned voice's least of all."""

from __future__ import annotations

from tests.conftest import RunningBot
from tests.e2e.test_autoread import outcome, setup_read_channel, speaker
from tests.e2e.test_voices import clone
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
MODERATOR = FakeDiscord.EVERYONE_PERMISSIONS | (1 << 27)  # Manage Nicknames


async def nick(
    fake: FakeDiscord,
    name: str,
    *,
    by: str,
    member: str | None = None,
    permissions: int | None = None,
) -> dict:
    options = {"name": name} if member is None else {"name": name, "member": member}
    return await (
        await fake.interaction("set nick", options, user=by, permissions=permissions)
    ).wait_final()


async def read(running: RunningBot, user: str, text: str) -> str:
    """What is said for `user`'s message (the next line spoken)."""
    existing = running.bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
    count = len(existing.history) if existing is not None else 0
    message = await running.fake.post(user, text)
    assert await outcome(running, message) == "read"
    await running.fake.wait_for(lambda: len(speaker(running).history) > count, 30, "reading")
    return speaker(running).history[count].text


async def test_a_moderator_sets_the_name_another_member_is_read_by(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake  # (alice, the owner, outranks bob: a moderator names only below)
    bob = fake.humans["bob"].id
    await setup_read_channel(fake)
    await fake.set_voice_state("bob", VOICE)
    await fake.set_voice_state("alice", VOICE)
    # without Manage Nicknames (checked by the bot, whatever Discord shows): refused
    refused = await nick(fake, "Captain", by="alice", member="bob")
    assert refused["content"] == (
        "You need the Manage Nicknames permission to choose another member's name."
    )
    assert await read(running_bot, "bob", "hello") == "Bob said hello"
    # with it: set, in a reply that names the member without pinging them
    done = await nick(fake, "Captain", by="alice", member="bob", permissions=MODERATOR)
    assert done["content"] == f"I will call <@{bob}> “Captain” when reading their messages."
    assert done["allowed_mentions"] == {"parse": []}
    answered = next(i for i in fake.interactions.values() if i.name == "set nick")
    assert answered.responses[0]["_callback"] and answered.responses[0]["flags"] & 64  # ephemeral
    assert await read(running_bot, "alice", "over") == "Alice said over"
    assert await read(running_bot, "bob", "hello again") == "Captain said hello again"
    # a moderator cannot give one member another's name either: a server name, their own,
    # or the name another member is read by here (their /set nick)
    own = await nick(fake, "Robert", by="alice")
    assert own["content"] == "I will call you “Robert” when reading your messages."
    for forged in ("alice", "𝓐𝓵𝓲𝓬𝓮", "ROBERT"):
        refused = await nick(fake, forged, by="alice", member="bob", permissions=MODERATOR)
        assert refused["content"] == (
            f"“{forged}” is the name of another member here: please choose another."
        ), forged
    taken = await nick(fake, "Captain", by="bob")  # (his already: not another's)
    assert taken["content"] == "I will call you “Captain” when reading your messages."
    refused = await nick(fake, "captain", by="alice")  # nor take a name bob is read by
    assert refused["content"].startswith("“captain” is the name of another member here")
    # and back to his own name
    reset = await nick(fake, "reset", by="alice", member="bob", permissions=MODERATOR)
    assert reset["content"] == f"I will call <@{bob}> by their server name again."
    assert await read(running_bot, "alice", "next") == "Robert said next"
    assert await read(running_bot, "bob", "back") == "Bob said back"


async def test_no_nickname_names_a_cloned_voices_speech(running_bot: RunningBot) -> None:
    """Alice's server nickname is "Bob" and a moderator set her reading name: her cloned
    voice's speech is still named by her username, in /say as in chat."""
    fake = running_bot.fake
    await setup_read_channel(fake)
    await (await clone(fake, "Mine")).wait_content("is ready")
    await (await fake.interaction("voice use", {"name": "Mine"})).wait_final()
    fake.nicks[fake.humans["alice"].id] = "Bob"  # a server nickname she chose herself
    await fake.set_voice_state("alice", VOICE)
    await fake.set_voice_state("bob", VOICE)
    done = await nick(fake, "Captain", by="alice")  # (a moderator may not rename the owner)
    assert "“Captain”" in done["content"]
    await (await fake.interaction("say", {"text": "In my own voice."})).wait_final()
    await fake.wait_for(lambda: len(speaker(running_bot).history) == 1, 30, "speech")
    assert speaker(running_bot).history[0].text == "alice said: In my own voice."
    assert await read(running_bot, "alice", "and in chat") == "alice said and in chat"
