"""The language each message is in, end to end: a server in English with French offered and
`/config speech detect_language on` has a French message read by the French model, in French
words; with the setting off, the same message is read in English (tests/e2e/test_languages.py's
tiny random-weight model per language). Alice and Bob take turns, so that each message is
named ("NAME said" is left out for the same author again within a minute)."""

from __future__ import annotations

from pathlib import Path

from bot.text.phrasebook import phrasebook
from tests.conftest import TinyModel, bot_on_fake_discord, shown_settings
from tests.e2e.test_autoread import ADMIN, setup_read_channel
from tests.e2e.test_languages import language_configs, model_calls, read_aloud
from tests.fakediscord import FakeDiscord

__all__ = ["model_calls"]  # (a fixture, used by name)

FRENCH = "Bonsoir à tous, la partie de ce soir commence un peu plus tard que prévu."


async def test_a_french_message_is_read_by_the_french_model_when_detection_is_on(
    tmp_path: Path, tiny_model: TinyModel, model_calls: list[tuple[str, str, str]]
) -> None:
    folder = language_configs(tmp_path, tiny_model.config, ("french",))
    env = {"TTS_CONFIG_DIR": str(folder), "TTS_LANGUAGES": "french"}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as run:
        fake, bot = run.fake, run.bot
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", FakeDiscord.VOICE_ID)
        await fake.set_voice_state("bob", FakeDiscord.VOICE_ID)

        # off by default: the server's language, English, reads French too
        english = await read_aloud(run, "alice", FRENCH, 1)
        assert english.language is None and english.error is None
        assert english.text.startswith("Alice said ")
        assert bot.app.models.loaded() == ["english"]

        denied = await fake.interaction("config speech detect_language", {"value": True})
        assert "Manage Server" in (await denied.wait_final())["content"]
        done = await fake.interaction(
            "config speech detect_language", {"value": True}, permissions=ADMIN
        )
        assert (await done.wait_final())["content"] == "detect_language is now on."
        shown = await (await fake.interaction("settings")).wait_response(2)
        assert shown_settings(shown)["detect_language"].startswith("on · Read each message")

        french = await read_aloud(run, "bob", FRENCH, 2)
        assert french.language == "french" and french.error is None and french.frames_played > 0
        assert french.text.startswith(phrasebook("french").said.format(name="Bob") + " ")
        french_model = bot.app.models.engine_for("french").fingerprint
        assert french_model != bot.app.models.default.fingerprint
        assert any(lang == "french" and model == french_model for lang, model, _ in model_calls)
        # an English message in the same server stays English
        hello = await read_aloud(run, "alice", "Good evening everyone, see you all tomorrow.", 3)
        assert hello.language is None

        # off again: English
        off = await fake.interaction(
            "config speech detect_language", {"value": False}, permissions=ADMIN
        )
        assert (await off.wait_final())["content"] == "detect_language is now off."
        again = await read_aloud(run, "bob", FRENCH, 4)
        assert again.language is None and again.text.startswith("Bob said ")
