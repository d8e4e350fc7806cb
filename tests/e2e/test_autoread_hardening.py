"""Auto-reading under pressure, end to end through the fake Discord: floods cost no rendering,
"Speak this message" keeps the reading rules, a cloned voice's speech cannot be stripped of or
given a forged name, and a language whose model cannot load is read in the default one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import bot.text.words
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN, LONG, outcome, setup_read_channel, speaker
from tests.e2e.test_speech import audio_packets
from tests.e2e.test_voices import clone
from tests.fakediscord import FakeDiscord

TEXT, VOICE = FakeDiscord.TEXT_ID, FakeDiscord.VOICE_ID
VIEW_CHANNEL = 1 << 10


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text `bot.text.words.speakable` is given (messages and the names in them)."""
    calls: list[str] = []
    original = bot.text.words.speakable

    def counting(text: str, *args: Any, **kwargs: Any) -> str:
        calls.append(text)
        return original(text, *args, **kwargs)

    monkeypatch.setattr(bot.text.words, "speakable", counting)
    return calls


async def set_server(fake: FakeDiscord, command: str, value: object) -> None:
    reply = await (
        await fake.interaction(command, {"value": value}, permissions=ADMIN)
    ).wait_final()
    assert " is now " in reply["content"], reply["content"]


# about 9 s of speech with its "NAME said": long enough for a few requests to wait behind it
TALKING = "This keeps the bot talking."


def full_length(tiny_model: TinyModel, **extra: str) -> dict[str, str]:
    return {"TTS_CONFIG": str(tiny_model.full_length_config), **extra}  # speech of its length


# ---- 5: the rate limit comes before any rendering; long messages are cut first ---------------
async def test_rate_limited_messages_and_edits_are_not_rendered(
    tmp_path: Path, tiny_model: TinyModel, rendered: list[str]
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, full_length(tiny_model)) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await set_server(fake, "config limits rate_limit", 1)
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", VOICE)
        flood = [await fake.post("alice", f"flood {i} " + "__a " * 900) for i in range(10)]
        outcomes = [await outcome(running, m) for m in flood]
        assert outcomes == ["read"] + ["rate limited"] * 9
        # one rendering, of the message's first 8 x max_length (300) characters at most
        floods = [text for text in rendered if text.startswith("flood")]
        assert len(floods) == 1 and len(floods[0]) <= 2_400

        # edits of a waiting message are rate-limited too (apart from messages): past the
        # limit the reading is dropped, not rendered again
        await (await fake.interaction("stop")).wait_final()
        await set_server(fake, "config limits rate_limit", 2)
        talking = await fake.post("bob", LONG)
        assert await outcome(running, talking) == "read"
        await fake.wait_for(lambda: speaker(running).busy, 10, "bob's message")
        waiting = await fake.post("bob", "waiting")
        assert await outcome(running, waiting) == "read"
        rendered.clear()
        before = speaker(running).queued  # 'waiting' among them, behind bob's long message
        assert before >= 1
        for number in range(5):
            await fake.edit(waiting, f"edit {number}")

        def edits() -> int:
            return len([text for text in rendered if text.startswith("edit")])

        # the edits are handled in turn: two rendered, then the reading dropped (before, this
        # waited only for the queue to empty, which a long message ending early also did)
        dropped = lambda: speaker(running).queued < before  # noqa: E731
        await fake.wait_for(lambda: edits() >= 2 and dropped(), 10, "the reading dropped")
        assert edits() == 2


# ---- 8: "Speak this message" keeps the reading rules ----------------------------------------
async def test_speak_this_message_keeps_the_reading_rules(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)

    async def menu(message: dict) -> str:
        asked = await fake.interaction("Speak this message", user="alice", target=message)
        return str((await asked.wait_final())["content"])

    skipped = await fake.post("bob", "-not for reading")
    assert await menu(skipped) == ("Messages starting with “-” are not read aloud in this server.")
    await set_server(fake, "config limits rate_limit", 1)
    first = await fake.post("bob", "read me")
    assert await menu(first) == f"Speaking that message in <#{VOICE}>."
    assert await menu(first) == "That is a lot of reading at once: please wait a few seconds."
    # bob, in voice with alice (the owner, who sees everything), cannot see #general
    await fake.set_voice_state("bob", VOICE)
    fake.deny_voice_permissions(TEXT, VIEW_CHANNEL)
    await fake.resend_guild()

    def bob_cannot_see() -> bool:
        guild = running_bot.bot.get_guild(int(fake.GUILD_ID))
        bob = guild.get_member(int(fake.humans["bob"].id)) if guild else None
        channel = guild.get_channel(int(TEXT)) if guild else None
        return (
            bob is not None
            and channel is not None
            and (not channel.permissions_for(bob).read_messages)
        )

    await fake.wait_for(bob_cannot_see, 10, "the overwrite")
    hidden = await fake.post("alice", "only for some")
    assert await menu(hidden) == (
        f"Someone in <#{VOICE}> cannot see that message's channel, so I won't read it there."
    )
    await fake.wait_for(lambda: len(speaker(running_bot).history) == 1, 20, "the one reading")
    assert [r.text for r in speaker(running_bot).history] == ["Bob said read me"]


# ---- 4: a cloned voice's speech cannot lose its name or take another's -----------------------
async def test_a_cloned_voice_is_announced_under_its_owners_username_edits_included(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model, full_length(tiny_model)) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("bob", VOICE)
        # a nickname that is another member's name is refused, however it is written
        for forged in ("Bob", "bob", "𝓑𝓸𝓫"):
            refused = await (await fake.interaction("set nick", {"name": forged})).wait_final()
            assert refused["content"] == (
                f"“{forged}” is the name of another member here: please choose another."
            )
        nick = await (await fake.interaction("set nick", {"name": "Captain"})).wait_final()
        assert nick["content"] == "I will call you “Captain” when reading your messages."
        await set_server(fake, "config text xsaid", False)
        await (await clone(fake, "Mine")).wait_content("is ready")
        await (await fake.interaction("voice use", {"name": "Mine"})).wait_final()
        # alice joins her voice channel only now: in it, her clone's ready would have played
        # its sample there, 12 s of speech at full length that nothing here is about (the
        # sample goes through the speech service, not the reader: it names no one, and who
        # spoke last is the reader's; test_voices.py hears the sample)
        await fake.set_voice_state("alice", VOICE)

        talking = await fake.post("bob", TALKING)  # keeps the next messages waiting
        assert await outcome(running, talking) == "read"
        await fake.wait_for(lambda: speaker(running).busy, 10, "bob's message")
        mine = await fake.post("alice", "first words")
        assert await outcome(running, mine) == "read"
        await fake.edit(mine, "good")  # (a word the tests' model says whole: 4 s less speech)
        await fake.wait_for(lambda: len(speaker(running).history) == 2, 60, "alice's message")
        spoken = [r.text for r in speaker(running).history]
        # in her cloned voice: named (xsaid is off), by her username, not her /set nick
        assert spoken[0] == TALKING  # (xsaid is off: a built-in voice goes unnamed)
        assert spoken[1] == "alice said good"


async def test_a_message_after_a_deleted_one_is_announced(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """Who spoke last is who was heard last: a message deleted before its turn does not take
    the next one's "NAME said"."""
    async with bot_on_fake_discord(tmp_path, tiny_model, full_length(tiny_model)) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", VOICE)
        for text in (TALKING, "and then"):  # bob talks; alice's messages wait behind him
            assert await outcome(running, await fake.post("bob", text)) == "read"
        await fake.wait_for(lambda: speaker(running).busy, 10, "bob's message")
        gone = await fake.post("alice", "oops")
        assert await outcome(running, gone) == "read"
        await fake.delete(gone)
        again = await fake.post("alice", "good")  # (said whole: 4 s less than "what I meant")
        assert await outcome(running, again) == "read"
        await fake.wait_for(lambda: len(speaker(running).history) == 3, 60, "the messages")
        spoken = [r.text for r in speaker(running).history]
        assert spoken[1:] == ["and then", "Alice said good"]


# ---- a language whose model cannot load: read in the default one, the channel told once ------
async def test_a_language_that_cannot_load_is_spoken_in_the_default_one(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    for language in ("french", "german"):  # a config broken after the languages were chosen
        (folder / f"{language}.yaml").write_text("flow_lm: [unclosed\n", encoding="utf-8")
    env = {"TTS_CONFIG_DIR": str(folder), "TTS_LANGUAGES": "french,german"}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake, bot_ = running.fake, running.bot
        assert bot_.app.db is not None
        guild_id = int(fake.GUILD_ID)
        await setup_read_channel(fake)
        await bot_.app.db.guilds.set(guild_id, "language", "french")
        await fake.set_voice_state("alice", VOICE)
        for number in (1, 2):
            message = await fake.post("alice", f"message {number}")
            assert await outcome(running, message, timeout=60) == "read"
        await fake.wait_for(lambda: len(speaker(running).history) == 2, 60, "both messages")
        for result in speaker(running).history:  # heard, in the default language
            assert result.language is None and result.error is None and result.frames_played
        assert speaker(running).history[0].text == "Alice said message one"
        assert len(audio_packets(fake.udp.packets)) > 0
        fallback = "I could not load french just now, so I'm speaking in english instead."
        notices = [m for m in fake.channel_messages if m["content"] == fallback]
        assert len(notices) == 1 and notices[0]["channel_id"] == TEXT
        assert all(m["allowed_mentions"] == {"parse": []} for m in fake.channel_messages)

        # /say in a language that fails after the member was told "Loading…": spoken in the
        # default language, and the voice channel's chat is told once
        await bot_.app.db.members.set_language(int(fake.humans["alice"].id), guild_id, "german")
        for number in (1, 2):
            said = await (await fake.interaction("say", {"text": f"say {number}"})).wait_final()
            if number == 1:
                assert said["content"].startswith("Loading german…")
            else:  # it failed a moment ago: straight to the default, and said so
                assert said["content"].startswith(
                    "I could not load german just now, so I'm speaking in english instead.\n"
                )
            await fake.wait_for(
                lambda n=number: len(speaker(running).history) == 2 + n, 60, "the /say"
            )
        assert all(r.language is None and r.frames_played for r in speaker(running).history)
        german = [m for m in fake.channel_messages if "load german" in m["content"]]
        assert len(german) == 1 and german[0]["channel_id"] == VOICE

        # /tts too (the soak found it raising with an error id): the file, in the default
        # language, and the reply says why
        await bot_.app.db.members.set_language(int(fake.humans["bob"].id), guild_id, "french")
        tts = await (await fake.interaction("tts", {"text": "a file"}, user="bob")).wait_final(60)
        assert tts["content"].startswith(
            "I could not load french just now, so I'm speaking in english instead.\n"
        ), tts["content"]
        assert tts["content"].endswith("s of speech.") and tts["_files"]
