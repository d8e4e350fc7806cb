"""A server's `detect_language` (bot/services/speech_plan.py's `language_for`, used by the
auto-reader): off by default; on, a chat message is read in the language it is written in,
unless its author chose theirs; an unsure detection keeps the server's language; the
detection runs in a thread, within a time limit. lingua itself stands in here as `Detected`
(its own tests: tests/text/test_language_detection.py; end to end:
tests/e2e/test_detect_language.py)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import bot.services.speech_plan as speech_plan
from bot.services.message_reading import written
from bot.storage.server_settings import SETTINGS, ServerSettings
from bot.text.phrasebook import phrasebook
from tests.services.discord_objects import TEXT_ID, VOICE_ID, Server
from tests.services.wiring import Bot

FRENCH_SAID = phrasebook("french").said.format(name="Alice")


class Detected:
    """LanguageDetection's face: answers `answer` to every text, and notes the texts and the
    threads it was asked in."""

    possible = True

    def __init__(self, answer: str | None, *, takes_s: float = 0.0) -> None:
        self.answer = answer
        self.takes_s = takes_s
        self.texts: list[str] = []
        self.threads: list[threading.Thread] = []

    def build(self) -> None:
        pass

    def detect(self, text: str) -> str | None:
        self.texts.append(text)
        self.threads.append(threading.current_thread())
        time.sleep(self.takes_s)
        return self.answer


async def _reading(bot: Bot, server: Server, answer: str | None, **settings: object) -> Detected:
    """Alice in Lounge with the bot, #general read; lingua would answer `answer`."""
    server.in_voice("alice", VOICE_ID)
    server.start()
    server.bot_joins(VOICE_ID)
    await bot.configure(read_channel=int(TEXT_ID), **settings)
    detected = Detected(answer)
    bot.planner.detection = detected  # type: ignore[assignment]
    return detected


async def _read(bot: Bot, server: Server, text: str) -> tuple[str | None, str]:
    """The model a message of Alice's is queued for (None: the default, English) and the
    words it is said in."""
    assert await bot.autoread.handle(server.post("alice", text)) == "read"
    utterance = bot.speaker.queue[-1]
    return utterance.plan.model, bot.speaker.play()[-1]


def test_detect_language_is_an_off_by_default_speech_setting() -> None:
    spec = SETTINGS["detect_language"]
    assert (spec.kind, spec.default, spec.group) == ("bool", False, "speech")
    assert ServerSettings(1).detect_language is False
    assert spec.parse("on") is True
    assert len(spec.description) <= 100  # a slash command's description


async def test_off_a_message_is_read_in_the_servers_language(bot: Bot, server: Server) -> None:
    detected = await _reading(bot, server, "french")
    assert await _read(bot, server, "bonjour à tous") == (None, "Alice said bonjour à tous")
    assert detected.texts == []  # not even asked


async def test_on_a_message_is_read_in_the_language_it_is_written_in(
    bot: Bot, server: Server
) -> None:
    detected = await _reading(bot, server, "french", detect_language=True)
    assert await _read(bot, server, "bonjour à tous") == ("french", f"{FRENCH_SAID} bonjour à tous")
    assert detected.texts == ["bonjour à tous"]  # what was written, not "Alice said"


async def test_detection_wins_over_the_servers_language(bot: Bot, server: Server) -> None:
    detected = await _reading(bot, server, "english", detect_language=True, language="german")
    assert await _read(bot, server, "see you tomorrow") == (None, "Alice said see you tomorrow")
    detected.answer = None  # unsure (below the floor): the server's language
    language, _ = await _read(bot, server, "ok")
    assert language == "german"


async def test_a_members_own_language_wins_over_detection(bot: Bot, server: Server) -> None:
    detected = await _reading(bot, server, "french", detect_language=True)
    alice = int(server["alice"].id)
    await bot.db.members.set_language(alice, bot.guild_id, "german")
    language, _ = await _read(bot, server, "bonjour à tous")
    assert language == "german"
    assert detected.texts == []
    # a language of theirs the operator no longer offers is no choice: detection decides
    await bot.db.members.set_language(alice, bot.guild_id, "klingon")
    language, _ = await _read(bot, server, "bonjour à tous")
    assert language == "french"


async def test_the_detection_runs_off_the_event_loop(bot: Bot, server: Server) -> None:
    detected = await _reading(bot, server, "french", detect_language=True)
    await _read(bot, server, "bonjour à tous")
    assert detected.threads and detected.threads[0] is not threading.current_thread()


async def test_a_detection_past_its_time_limit_keeps_the_servers_language(
    bot: Bot, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    detected = await _reading(bot, server, "french", detect_language=True)
    detected.takes_s = 0.3  # it would say French, too late
    monkeypatch.setattr(speech_plan, "DETECT_TIMEOUT_S", 0.05)
    language, _ = await _read(bot, server, "bonjour à tous")
    assert language is None
    await asyncio.sleep(0.3)  # (the thread's sleep ends: nothing left behind the test)


def test_the_detector_is_shown_what_the_author_wrote(server: Server) -> None:
    server.start()
    assert written(server.post("alice", "bonjour à tous")) == "bonjour à tous"
    result = server.message_create(server.message(server["alice"], "", kind=46))
    assert written(result) == ""  # a poll's result: Discord's words, in its own language


async def test_an_edit_is_worded_for_the_language_it_was_queued_in(
    bot: Bot, server: Server
) -> None:
    detected = await _reading(bot, server, "french", detect_language=True)
    posted = server.message(server["alice"], "bonjour à tous")
    assert await bot.autoread.handle(server.message_create(posted)) == "read"
    detected.answer = "english"  # (an edit is not detected again: its model is chosen)
    await bot.autoread.edited(server.message_update(posted, "bonsoir à tous"))
    assert bot.speaker.queue[-1].plan.model == "french"
    assert bot.speaker.play() == [f"{FRENCH_SAID} bonsoir à tous"]
