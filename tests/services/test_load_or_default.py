"""`SpeechPlanner.load_or_default`: the one policy for a language whose model is not loaded,
used by chat, /say, /tts, previews and join notices. A failed load keeps the language out for
a minute; a busy pool (every model it may keep in use) is no failed load: that speech is said
in the default language and the next one tries again (issue 34: it used to block the language
for 60 s in chat, logged as "could not be loaded")."""

from __future__ import annotations

import pytest

from bot.services.fallback import RETRY_AFTER_S, ModelFallback
from bot.synthesis.model_pool import ModelsBusyError
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot


class StubPool:
    """ModelPool's face to the services: the default model loaded; `ensure` of another
    language raises `refuse` when set (each load asked is counted), else loads it."""

    def __init__(self) -> None:
        self.loaded: set[str] = set()
        self.refuse: BaseException | None = None
        self.asked: list[str] = []

    def is_loaded(self, language: str | None) -> bool:
        return language is None or language in self.loaded

    async def ensure(self, language: str) -> None:
        if language in self.loaded:
            return
        self.asked.append(language)
        if self.refuse is not None:
            raise self.refuse
        self.loaded.add(language)


@pytest.fixture
def pool(bot: Bot) -> StubPool:
    stub = StubPool()
    bot.planner.models = stub  # type: ignore[assignment]
    bot.planner.fallback = ModelFallback(clock=bot.clock)
    return stub


def busy() -> ModelsBusyError:
    return ModelsBusyError("The language models I can keep loaded are all in use.")


async def test_a_busy_pool_falls_back_for_this_speech_without_blocking_the_language(
    bot: Bot, pool: StubPool
) -> None:
    pool.refuse = busy()
    assert await bot.planner.load_or_default("french") == "english"
    assert not bot.planner.fallback.failed_lately("french")
    assert await bot.planner.load_or_default("french") == "english"
    assert pool.asked == ["french", "french"]  # each speech asks again: nothing blocked
    pool.refuse = None  # a model went idle: room now
    assert await bot.planner.load_or_default("french") == "french"


async def test_a_failed_load_blocks_the_language_for_a_minute(bot: Bot, pool: StubPool) -> None:
    pool.refuse = OSError("the network is down")
    assert await bot.planner.load_or_default("french") == "english"
    assert bot.planner.fallback.failed_lately("french")
    pool.refuse = None
    assert await bot.planner.load_or_default("french") == "english"  # not tried again yet
    assert pool.asked == ["french"]
    bot.clock.advance(RETRY_AFTER_S + 1)
    assert await bot.planner.load_or_default("french") == "french"
    assert pool.asked == ["french", "french"]


async def test_the_default_and_a_loaded_language_speak_as_they_are(
    bot: Bot, pool: StubPool
) -> None:
    pool.loaded.add("german")
    pool.refuse = OSError("never asked to load")
    assert await bot.planner.load_or_default("english") == "english"  # its model always stays
    assert await bot.planner.load_or_default("german") == "german"
    assert not bot.planner.fallback.failed_lately("german")


async def test_a_tts_file_with_the_pool_busy_is_said_in_the_default_and_says_why(
    bot: Bot, server: Server, pool: StubPool
) -> None:
    bob = server.add("bob")
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    await bot.db.members.set_language(int(bob.id), guild.id, "french")
    member = guild.get_member(int(bob.id))
    assert member is not None
    pool.refuse = busy()
    reply = await bot.speech.tts_file(member, guild, "hello there")
    assert reply.content.startswith(
        "I could not load french just now, so I'm speaking in english instead.\n"
    ), reply.content
    assert reply.file is not None and bot.speakers.scheduler.asked == ["hello there"]
    assert not bot.planner.fallback.failed_lately("french")  # the next /tts tries again


async def test_chat_with_the_pool_busy_is_read_in_the_default_and_asks_again_next_time(
    bot: Bot, server: Server, pool: StubPool
) -> None:
    bob = server.add("bob")
    server.in_voice("alice", VOICE_ID)
    server.in_voice("bob", VOICE_ID)
    guild = server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID))
    await bot.db.members.set_language(int(bob.id), guild.id, "french")
    pool.refuse = busy()
    server.http.down = True  # the channel's "Loading…" and fallback notices fail, logged
    for text in ("one", "two"):
        assert await bot.autoread.handle(server.post("bob", text)) == "read"
    assert [u.plan.model for u in bot.speaker.queue] == [None, None]  # the default model's
    assert pool.asked == ["french", "french"]
    assert not bot.planner.fallback.failed_lately("french")
