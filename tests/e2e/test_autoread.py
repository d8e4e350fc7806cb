"""Reading chat aloud, end to end through the fake Discord."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.playback.speakers import GuildSpeaker
from bot.services.upkeep import IdleUpkeep
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord, shown_settings
from tests.fakediscord import FakeDiscord

TEXT, VOICE, VOICE2 = FakeDiscord.TEXT_ID, FakeDiscord.VOICE_ID, FakeDiscord.VOICE2_ID
ADMIN = FakeDiscord.EVERYONE_PERMISSIONS | (1 << 5)
# About 20 s of speech with the full-length tiny model (its tokenizer: 3 tokens a second, 2 s
# more): long enough for the next messages to wait behind it, no longer
LONG = "This is a long message that keeps the bot talking for a while."


def speaker(running: RunningBot) -> GuildSpeaker:
    found = running.bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
    assert found is not None
    return found


async def outcome(running: RunningBot, message: dict, timeout: float = 10) -> str:
    """What the reader decided about a message the fake posted (as the bot logs it)."""
    wanted = int(message["id"])

    def decided() -> str | None:
        return running.decisions.by_message.get(wanted)

    await running.fake.wait_for(lambda: decided() is not None, timeout, "a decision")
    return decided() or ""


async def setup_read_channel(fake: FakeDiscord) -> None:
    reply = await (
        await fake.interaction("setup add", {"channel": TEXT}, permissions=ADMIN)
    ).wait_final()
    assert reply["content"].startswith(f"I will read <#{TEXT}> aloud.")


async def test_a_message_is_heard_after_autojoin(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    message = await fake.post(
        "alice", "hello <@1200000000000000002> 👍 **look**", mentions=("bob",)
    )
    assert await outcome(running_bot, message) == "read"
    assert fake.bot_voice_channel == VOICE  # autojoin
    await fake.wait_for(lambda: len(speaker(running_bot).history) == 1, 20, "reading")
    result = speaker(running_bot).history[0]
    assert result.text == "Alice said hello Bob thumbs up look"
    assert result.frames_played > 0 and result.error is None
    audio = [p for p in fake.udp.packets if not p.is_silence]
    assert len(audio) >= result.frames_played  # decoded audio arrived
    # the same author again right away: no "said" the second time
    again = await fake.post("alice", "and more")
    assert await outcome(running_bot, again) == "read"
    await fake.wait_for(lambda: len(speaker(running_bot).history) == 2, 20, "reading")
    assert speaker(running_bot).history[1].text == "and more"
    # the chat of the bot's voice channel is read too
    in_voice = await fake.post("alice", "from the voice chat", channel_id=VOICE)
    assert await outcome(running_bot, in_voice) == "read"
    # and the last human leaving makes the bot leave
    await fake.set_voice_state("alice", None)
    await fake.wait_for(lambda: fake.bot_voice_channel is None, 10, "the bot to leave")


async def test_messages_that_are_not_read(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    elsewhere = await fake.post("alice", "no channel is set up yet")
    assert await outcome(running_bot, elsewhere) == "not a read channel"
    await setup_read_channel(fake)
    outside = await fake.post("alice", "I am not in voice")
    assert await outcome(running_bot, outside) == "not in voice"
    await fake.set_voice_state("alice", VOICE)
    await fake.set_voice_state("bob", VOICE2)
    cases = [
        (await fake.post("otherbot", "beep boop"), "from a bot"),
        (await fake.post_webhook("Captain Hook", "hook"), "from a bot"),
        (await fake.post("alice", "-not this one"), "skip prefix"),
    ]
    for message, reason in cases:
        assert await outcome(running_bot, message) == reason
    first = await fake.post("alice", "this one is read")
    assert await outcome(running_bot, first) == "read"
    bob_elsewhere = await fake.post("bob", "I am in another channel")
    assert await outcome(running_bot, bob_elsewhere) == "author not in the bot's voice channel"
    await fake.set_voice_state("bob", VOICE)
    opt_out = await fake.interaction("set autoread", {"value": "off"}, user="bob")
    assert "will not be read" in (await opt_out.wait_final())["content"]
    bob_opted_out = await fake.post("bob", "please do not read me")
    assert await outcome(running_bot, bob_opted_out) == "member opted out"
    only_emoji = await fake.post("alice", "   ")
    assert await outcome(running_bot, only_emoji) == "nothing to say"
    # the rate limit: 5 per 10 s per member (one was read above)
    burst = [await fake.post("alice", f"message {i}") for i in range(6)]
    outcomes = [await outcome(running_bot, m) for m in burst]
    assert outcomes == ["read"] * 4 + ["rate limited"] * 2
    await fake.wait_for(lambda: not speaker(running_bot).busy, 30, "the queue to empty")
    spoken = [r.text for r in speaker(running_bot).history]
    numbers = ("zero", "one", "two", "three")  # (read as words)
    assert spoken == ["Alice said this one is read"] + [f"message {n}" for n in numbers]


async def test_skip_clear_delete_and_edit(tmp_path: Path, tiny_model: TinyModel) -> None:
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}  # messages of natural length
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", VOICE)
        long = await fake.post("alice", LONG)
        assert await outcome(running, long) == "read"
        await fake.wait_for(lambda: speaker(running).busy and speaker(running).queued == 0, 10, "")
        second = await fake.post("alice", "second")
        third = await fake.post("alice", "third")
        fourth = await fake.post("alice", "fourth")
        for message in (second, third, fourth):
            assert await outcome(running, message) == "read"
        await fake.delete(third)
        await fake.edit(fourth, "fourth, edited")
        await fake.wait_for(lambda: speaker(running).queued == 2, 5, "the deletion")
        skip = await (await fake.interaction("skip")).wait_final()
        assert skip["content"] == "Skipped."
        await fake.wait_for(lambda: len(speaker(running).history) >= 1, 10, "the skip")
        assert speaker(running).history[0].cancelled
        fifth = await fake.post("alice", "fifth")
        assert await outcome(running, fifth) == "read"
        cleared = await (await fake.interaction("clear")).wait_final()
        assert cleared["content"] in ("Cleared 2 waiting messages.", "Cleared 1 waiting message.")
        await fake.wait_for(lambda: not speaker(running).busy, 60, "the end")
        spoken = [r.text for r in speaker(running).history]
        assert spoken[0].startswith("Alice said This is a long message")
        assert "third" not in spoken and "fifth" not in spoken
        assert set(spoken[1:]) <= {"second", "fourth, edited"}
        nothing = await (await fake.interaction("clear")).wait_final()
        assert nothing["content"] == "Nothing is waiting to be read."


async def test_settings_persist_across_a_restart(tmp_path: Path, tiny_model: TinyModel) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        await setup_read_channel(fake)
        for command, value in [
            ("config text xsaid", False),
            ("config reading skip_prefix", "!"),
            ("config text max_length", 40),
        ]:
            reply = await (
                await fake.interaction(command, {"value": value}, permissions=ADMIN)
            ).wait_final()
            assert " is now " in reply["content"]
        refused = await (
            await fake.interaction("config text max_length", {"value": 5}, permissions=ADMIN)
        ).wait_final()
        assert refused["content"] == "max_length goes from 20 to 2000."
        nick = await (await fake.interaction("set nick", {"name": "Captain"})).wait_final()
        assert nick["content"] == "I will call you “Captain” when reading your messages."
        added = await (
            await fake.interaction(
                "dict add", {"word": "brb", "spoken": "be right back"}, permissions=ADMIN
            )
        ).wait_final()
        assert added["content"] == "“brb” will be said as “be right back”."
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:  # same DATA_DIR
        fake = running.fake
        shown = await (await fake.interaction("settings")).wait_response(2)
        fields = {name: value.split(" · ")[0] for name, value in shown_settings(shown).items()}
        assert fields["read_channels"] == f"<#{TEXT}>"
        assert (fields["xsaid"], fields["skip_prefix"], fields["max_length"]) == ("off", "!", "40")
        assert fields["dictionary"] == "1 word"
        await fake.set_voice_state("alice", VOICE)
        skipped = await fake.post("alice", "!quiet")
        assert await outcome(running, skipped) == "skip prefix"
        read = await fake.post(
            "alice", "brb, <@1200000000000000001> needs a very long break now", mentions=("alice",)
        )
        assert await outcome(running, read) == "read"
        await fake.wait_for(lambda: len(speaker(running).history) == 1, 20, "reading")
        assert speaker(running).history[0].text == "be right back, Captain needs a and so on"


async def test_bot_leaves_when_its_voice_channel_is_deleted(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("join")).wait_final()
    await fake.wait_for(lambda: fake.bot_voice_channel == VOICE, 10, "join")
    await fake.delete_channel(VOICE)
    await fake.wait_for(lambda: fake.bot_voice_channel is None, 10, "the bot to leave")


async def test_idle_timeout_leaves_voice(
    tmp_path: Path, tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(IdleUpkeep, "every_s", 0.2)  # the upkeep's round, every 15 s
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        idle = await fake.interaction(
            "config joining idle_timeout", {"value": 1}, permissions=ADMIN
        )
        await idle.wait_final()
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("join")).wait_final()
        await fake.wait_for(lambda: fake.bot_voice_channel == VOICE, 10, "join")
        await fake.wait_for(lambda: fake.bot_voice_channel is None, 10, "the idle leave")


async def test_tts_file_and_speak_this_message(running_bot: RunningBot) -> None:
    import io

    import soundfile

    fake = running_bot.fake
    tts = await fake.interaction("tts", {"text": "A file for you."})
    answer = await tts.wait_content("s of speech.")
    audio, rate = soundfile.read(io.BytesIO(answer["_files"]["speech.ogg"]))
    assert rate == 24_000 and len(audio) > 0
    message = await fake.post("bob", "read me <@1200000000000000001>", mentions=("alice",))
    menu = await fake.interaction("Speak this message", user="alice", target=message)
    assert "Join a voice channel first" in (await menu.wait_final())["content"]
    await fake.set_voice_state("alice", VOICE)
    menu = await fake.interaction("Speak this message", user="alice", target=message)
    assert (await menu.wait_final())["content"] == f"Speaking that message in <#{VOICE}>."
    await fake.wait_for(lambda: len(speaker(running_bot).history) == 1, 20, "speech")
    assert speaker(running_bot).history[0].text == "Bob said read me Alice"


async def test_bot_copes_with_being_moved_and_kicked(running_bot: RunningBot) -> None:
    fake, bot = running_bot.fake, running_bot.bot
    await setup_read_channel(fake)
    await fake.set_voice_state("alice", VOICE)
    await fake.set_voice_state("bob", VOICE2)
    first = await fake.post("alice", "hello")
    assert await outcome(running_bot, first) == "read"
    await fake.wait_for(lambda: fake.bot_voice_channel == VOICE, 10, "autojoin")
    await fake.move_bot(VOICE2)  # moved to where bob is: it stays and follows
    guild = bot.get_guild(int(FakeDiscord.GUILD_ID))
    assert guild is not None
    await fake.wait_for(
        lambda: guild.voice_client is not None and str(guild.voice_client.channel.id) == VOICE2,
        10,
        "the move",
    )
    from_bob = await fake.post("bob", "hi from the new channel")
    assert await outcome(running_bot, from_bob) == "read"
    await fake.move_bot(None)  # kicked
    await fake.wait_for(lambda: guild.voice_client is None, 10, "the disconnect")
    # the queue goes once the disconnect has settled (not a reconnect of discord.py's own)
    await fake.wait_for(lambda: speaker(running_bot).queued == 0, 5, "the queue to go")
    back = await fake.post("alice", "are you back")
    assert await outcome(running_bot, back) == "read"  # autojoin again
    await fake.wait_for(lambda: fake.bot_voice_channel == VOICE, 10, "rejoin")


async def test_the_glue_words_are_in_the_operators_language(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """TTS_LANGUAGE=french: what the bot adds to a message is said in French (the tiny model
    stands in for the french one; what the engine is given is what is checked)."""
    async with bot_on_fake_discord(tmp_path, tiny_model, {"TTS_LANGUAGE": "french"}) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", VOICE)
        message = await fake.post("alice", "regarde https://example.com ❤️ <3")
        assert await outcome(running, message) == "read"
        await fake.wait_for(lambda: len(speaker(running).history) == 1, 20, "reading")
        assert speaker(running).history[0].text == (
            "Alice a dit regarde un lien vers example.com cœur rouge cœur"
        )
