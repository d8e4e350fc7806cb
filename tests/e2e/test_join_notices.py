"""Spoken join and leave notices ("Bob joined", "Bob left"), end to end through the fake
Discord's VOICE_STATE_UPDATE events."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import discord
import numpy as np
import pytest

from bot.synthesis.audio_files import MODEL_RATE
from bot.text.phrasebook import phrasebook
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import ADMIN, LONG, speaker
from tests.e2e.test_languages import env_for
from tests.fakediscord import FakeDiscord

VOICE, VOICE2 = FakeDiscord.VOICE_ID, FakeDiscord.VOICE2_ID


class Notices(logging.Handler):
    """What the bot decided about each voice state change, as it logs it (never a name)."""

    LINE = re.compile(r"voice notice for member (\d+): (.+)")

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.outcomes: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = self.LINE.fullmatch(record.getMessage())
        if found is not None:
            self.outcomes.append((int(found[1]), found[2]))


@pytest.fixture
def notices() -> Iterator[Notices]:
    handler = Notices()
    logger = logging.getLogger("cogs.speech")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)


async def moved(running: RunningBot, notices: Notices, user: str, channel: str | None) -> str:
    """Move `user` (None: out of voice) and wait for what the bot decided about it."""
    fake = running.fake
    seen = len(notices.outcomes)
    await fake.set_voice_state(user, channel)
    member = fake.other_bot.id if user == "otherbot" else fake.humans[user].id
    return await decided(fake, notices, int(member), seen)


async def decided(fake: FakeDiscord, notices: Notices, member: int, seen: int) -> str:
    """The first decision about `member` after the `seen` first ones."""

    def found() -> str | None:
        return next((o for m, o in notices.outcomes[seen:] if m == member), None)

    # (a way out, not a timing: the decision may wait for a model to load and the phrase to be
    # said, which took more than 10 s beside three other workers once)
    await fake.wait_for(lambda: found() is not None, 60, "a notice decision")
    return found() or ""


async def spoken_after(running: RunningBot, count: int, timeout: float = 20) -> list[str]:
    fake = running.fake
    await fake.wait_for(lambda: len(speaker(running).history) >= count, timeout, "speech")
    await fake.wait_for(lambda: not speaker(running).busy, timeout, "the queue to empty")
    return [r.text for r in speaker(running).history]


def a_minute_later(running: RunningBot) -> None:
    clock = running.bot.app.notices.clock
    running.bot.app.notices.clock = lambda: clock() + 61.0


async def test_members_joining_and_leaving_are_announced(
    running_bot: RunningBot, notices: Notices
) -> None:
    fake, bot = running_bot.fake, running_bot.bot
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("join")).wait_final()
    assert fake.bot_voice_channel == VOICE
    # off by default
    assert await moved(running_bot, notices, "bob", VOICE) == "notices off"
    turned_on = await fake.interaction(
        "config joining join_leave", {"value": True}, permissions=ADMIN
    )
    assert (await turned_on.wait_final())["content"] == "join_leave is now on."
    refused = await fake.interaction("config joining join_leave", {"value": False}, user="bob")
    assert "Manage Server" in (await refused.wait_final())["content"]  # checked by the bot too

    assert await moved(running_bot, notices, "bob", VOICE2) == "left"  # moved out of its channel
    assert await spoken_after(running_bot, 1) == ["Bob left"]
    # flapping: not again within a minute, either way
    assert await moved(running_bot, notices, "bob", VOICE) == "announced lately"
    assert await moved(running_bot, notices, "bob", None) == "announced lately"
    # the first notice was kept in the phrase cache: the same words play from it, not the model
    phrases = bot.app.engine.phrases
    assert phrases is not None
    voice = bot.app.engine.default_voice
    await fake.wait_for(lambda: phrases.in_memory(voice, "Bob left") is not None, 10, "cache")
    marker = np.zeros(MODEL_RATE, dtype=np.float32)  # 1 s exactly: no model's output
    phrases.put(voice, "Bob left", marker)
    await fake.set_voice_state("bob", VOICE)
    a_minute_later(running_bot)
    assert await moved(running_bot, notices, "bob", None) == "left"
    await spoken_after(running_bot, 2)
    from_cache = speaker(running_bot).history[1]
    assert (from_cache.text, from_cache.model_samples) == ("Bob left", MODEL_RATE)
    assert from_cache.frames_played >= 50 and from_cache.error is None

    # the name members are read by: their /set nick
    nick = await fake.interaction("set nick", {"name": "Robert"}, user="bob")
    await nick.wait_final()
    a_minute_later(running_bot)
    assert await moved(running_bot, notices, "bob", VOICE) == "joined"
    assert (await spoken_after(running_bot, 3))[2] == "Robert joined"

    # never other bots, nor members who opted out of reading
    assert await moved(running_bot, notices, "otherbot", VOICE) == "a bot"
    opt_out = await fake.interaction("set autoread", {"value": "off"}, user="bob")
    await opt_out.wait_final()
    a_minute_later(running_bot)
    assert await moved(running_bot, notices, "bob", None) == "member opted out"
    # nor the bot's own moves
    seen = len(notices.outcomes)
    await fake.move_bot(VOICE2)
    assert await decided(fake, notices, int(fake.bot.id), seen) == "the bot itself"
    assert len(speaker(running_bot).history) == 3


async def test_notices_are_said_in_the_servers_language(
    tmp_path: Path, tiny_model: TinyModel, notices: Notices
) -> None:
    """In the server's language (its model, loaded for the notice if need be, and its
    phrasebook), whatever the member's own; under their server nickname, made speakable."""
    async with bot_on_fake_discord(tmp_path, tiny_model, env_for(tmp_path, tiny_model)) as run:
        fake = run.fake
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("join")).wait_final()
        for setting, value in (
            ("config joining join_leave", True),
            ("config speech language", "german"),
        ):
            changed = await fake.interaction(setting, {"value": value}, permissions=ADMIN)
            assert " is now " in (await changed.wait_final())["content"]
        mine = await fake.interaction("set my_language", {"language": "french"}, user="bob")
        await mine.wait_final()
        fake.nicks[fake.humans["bob"].id] = "🔥Bobby🔥"  # their server nickname
        # the notices' clock stands still: a notice that waits over NOTICE_STALE_S for its
        # model is dropped ("too late"), and beside five other workers the german model's load
        # once took that long; the language is what this test is about
        run.bot.app.notices.clock = lambda: 1_000.0
        assert await moved(run, notices, "bob", VOICE) == "joined"
        await spoken_after(run, 1)
        notice = speaker(run).history[0]
        assert notice.text == phrasebook("german").joined.format(name="Bobby")
        assert notice.language == "german" and notice.error is None and notice.frames_played


async def test_a_notice_never_pushes_a_message_out_of_a_full_queue(
    tmp_path: Path, tiny_model: TinyModel, notices: Notices
) -> None:
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}  # a long message keeps it busy
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as run:
        fake = run.fake
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("join")).wait_final()
        for setting, value in (
            ("config joining join_leave", True),
            ("config limits queue_limit", 1),
        ):
            changed = await fake.interaction(setting, {"value": value}, permissions=ADMIN)
            await changed.wait_final()
        for text in (LONG, "second line"):
            await (await fake.interaction("say", {"text": text})).wait_final()
        assert speaker(run).queued == 1
        assert await moved(run, notices, "bob", VOICE) == "queue full"
        assert speaker(run).queued == 1
        await (await fake.interaction("skip")).wait_final()  # (no need to hear it all)
        assert await spoken_after(run, 2) == [LONG, "second line"]  # the message, kept


async def test_a_notice_kept_on_disk_plays_from_it_after_a_restart(
    tmp_path: Path, tiny_model: TinyModel, notices: Notices
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model) as run:
        fake, phrases = run.fake, run.bot.app.engine.phrases
        assert phrases is not None
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("join")).wait_final()
        on = await fake.interaction("config joining join_leave", {"value": True}, permissions=ADMIN)
        await on.wait_final()
        assert await moved(run, notices, "bob", VOICE) == "joined"
        assert await spoken_after(run, 1) == ["Bob joined"]
        await fake.wait_for(lambda: phrases.disk_bytes > 0, 10, "the phrase on disk")
        phrases.put(
            run.bot.app.engine.default_voice, "Bob joined", np.zeros(MODEL_RATE, np.float32)
        )
    async with bot_on_fake_discord(tmp_path, tiny_model) as run:
        fake = run.fake
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("join")).wait_final()
        assert await moved(run, notices, "bob", VOICE) == "joined"  # the setting was kept
        await spoken_after(run, 1)
        notice = speaker(run).history[0]
        assert (notice.text, notice.model_samples) == ("Bob joined", MODEL_RATE)


async def notices_on(running: RunningBot) -> None:
    fake = running.fake
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("join")).wait_final()
    on = await fake.interaction("config joining join_leave", {"value": True}, permissions=ADMIN)
    await on.wait_final()


async def test_no_notice_for_blocked_members_nor_the_ignored_role(
    running_bot: RunningBot, notices: Notices
) -> None:
    """A blocked member's name (their /set nick, chosen by them) is not said, nor that of a
    member with the server's ignored role."""
    fake = running_bot.fake
    await notices_on(running_bot)
    nick = await fake.interaction("set nick", {"name": "Mallory"}, user="bob")
    await nick.wait_final()
    blocked = await fake.interaction(
        "block", {"member": fake.humans["bob"]}, permissions=ADMIN | (1 << 13)
    )
    assert " is blocked" in (await blocked.wait_final())["content"]
    assert await moved(running_bot, notices, "bob", VOICE) == "blocked by a moderator"
    unblocked = await fake.interaction(
        "unblock", {"member": fake.humans["bob"]}, permissions=ADMIN | (1 << 13)
    )
    await unblocked.wait_final()
    # (a refusal does not count as an announcement: unblocked, they are announced at once)
    assert await moved(running_bot, notices, "bob", None) == "left"
    assert await spoken_after(running_bot, 1) == ["Mallory left"]
    role = await fake.add_role("No TTS")
    fake.give_role("bob", role)
    ignored = await fake.interaction(
        "config reading ignored_role", {"value": role}, permissions=ADMIN
    )
    await ignored.wait_final()
    a_minute_later(running_bot)
    assert await moved(running_bot, notices, "bob", VOICE) == "has the ignored role"
    assert len(speaker(running_bot).history) == 1


async def test_a_notice_says_names_as_the_dictionary_says_for_its_language(
    running_bot: RunningBot, notices: Notices
) -> None:
    fake = running_bot.fake
    await notices_on(running_bot)
    entry = await fake.interaction(
        "dict add", {"word": "Bob", "spoken": "Bobby", "language": "english"}, permissions=ADMIN
    )
    assert "“Bobby”" in (await entry.wait_final())["content"]
    assert await moved(running_bot, notices, "bob", VOICE) == "joined"
    assert await spoken_after(running_bot, 1) == ["Bobby joined"]


async def test_two_quick_moves_are_announced_once(
    running_bot: RunningBot, notices: Notices
) -> None:
    """In and out at once: the second event comes while the first is still deciding. (Called
    directly: discord.py hands both handlers the member's one live voice state, so two events
    it reads in one go look like none.)"""
    fake, bot = running_bot.fake, running_bot.bot
    await notices_on(running_bot)
    guild = bot.get_guild(int(FakeDiscord.GUILD_ID))
    assert guild is not None and guild.voice_client is not None
    assert await moved(running_bot, notices, "bob", VOICE2) == "not the bot's channel"
    bob = guild.get_member(int(fake.humans["bob"].id))  # (known from their voice state)
    elsewhere = guild.get_channel(int(VOICE2))
    assert bob is not None and isinstance(elsewhere, discord.VoiceChannel)
    channel = guild.voice_client.channel
    outcomes = await asyncio.gather(
        bot.app.notices.on_voice_state(bob, elsewhere, channel),
        bot.app.notices.on_voice_state(bob, channel, elsewhere),
    )
    assert sorted(outcomes) == ["announced lately", "joined"]
    assert await spoken_after(running_bot, 1) == ["Bob joined"]
