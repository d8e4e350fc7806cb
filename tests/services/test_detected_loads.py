"""A detected language (`detect_language`) loads its model within limits (issue 48, item
8): a member writing in turn in more languages than the pool keeps used to load and unload
a model for each message. A detected language whose model is loaded costs nothing; past
DETECTED_LOADS loads in the window (per member, and per server), the message is read in the
member's language without detection. Real discord.py Messages from MESSAGE_CREATE; the model
pool is a stand-in keeping one model beside the default (TTS_MODELS=2)."""

from __future__ import annotations

from bot.services.fallback import ModelFallback
from bot.services.speech_plan import DETECTED_LOADS, DETECTED_LOADS_WINDOW_S
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.test_language_detection import Detected
from tests.services.wiring import Bot


class OneMorePool:
    """ModelPool's face: the default model, and room for one more: loading another unloads
    it (each load asked is counted)."""

    def __init__(self) -> None:
        self.other: str | None = None
        self.asked: list[str] = []

    def is_loaded(self, language: str | None) -> bool:
        return language is None or language == self.other

    async def ensure(self, language: str) -> None:
        if language != self.other:
            self.asked.append(language)
            self.other = language


async def test_detected_languages_load_within_the_limits(bot: Bot, server: Server) -> None:
    server.add("bob")
    for name in ("alice", "bob"):
        server.in_voice(name, VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), detect_language=True, rate_limit=50)
    pool = OneMorePool()
    bot.planner.models = pool  # type: ignore[assignment]
    bot.planner.fallback = ModelFallback(clock=bot.clock)
    detected = Detected(None)
    bot.planner.detection = detected  # type: ignore[assignment]

    async def model_of(author: str, language: str) -> str | None:
        detected.answer = language
        assert await bot.autoread.handle(server.post(author, f"in {language}")) == "read"
        return bot.speaker.queue[-1].plan.model

    turns = ["french", "german"] * 3
    models = [await model_of("alice", language) for language in turns]
    assert pool.asked == turns[:DETECTED_LOADS]  # then no more loads for her
    # past the limit: her language without detection (the default, English: None), unless
    # the detected one is loaded already (French, the last loaded)
    assert models == ["french", "german", "french", None, "french", None]
    assert await model_of("alice", "french") == "french"  # loaded: no load, no limit
    # the server's limit is reached too: Bob's detected German does not load either
    assert await model_of("bob", "german") is None
    bot.clock.advance(DETECTED_LOADS_WINDOW_S + 1)
    assert await model_of("bob", "german") == "german"
    assert pool.asked == [*turns[:DETECTED_LOADS], "german"]
