"""Replies in the member's language: every message of the code is in the gettext catalogues
(bot/i18n/locale, kept by Babel: scripts/translations.py) and has its French, with the same
placeholders; a French Discord client gets French replies, errors and embeds, everyone else
English; each language counts with its own plural rule."""

from __future__ import annotations

import functools
import importlib.util
import string
from pathlib import Path
from types import ModuleType

import discord
import pytest
from babel.messages.catalog import Catalog

from bot.i18n.translate import CATALOGUES, Phrase, command_text, lines, localize, plural, tr
from bot.storage.server_settings import SETTINGS
from bot.synthesis.model_pool import available_languages
from tests.conftest import RunningBot, shown_settings
from tests.e2e.test_autoread import ADMIN

ROOT = Path(__file__).resolve().parents[2]
FRENCH = CATALOGUES[discord.Locale.french.value]


@functools.cache
def translations() -> ModuleType:
    """scripts/translations.py, loaded once (its extraction is cached)."""
    path = ROOT / "scripts/translations.py"
    spec = importlib.util.spec_from_file_location("translations", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def test_every_message_of_the_code_has_its_french_with_the_same_placeholders() -> None:
    script = translations()
    extracted = [m for m in script.extracted() if m.id]
    assert len(extracted) > 150  # the scan finds the code's replies
    assert sum(isinstance(m.id, tuple) for m in extracted) >= 6  # and its plurals
    assert script.problems("fr") == [] and script.problems("en") == []
    for message in script.read("fr"):
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        for said in strings:
            assert _placeholders(said) == _placeholders(ids[0]), message.id
    for language in available_languages():
        assert FRENCH.gettext(language) != language, language
    for spec in SETTINGS.values():  # the /config commands' descriptions, in the catalogues
        assert FRENCH.gettext(spec.description) != spec.description, spec.description


def test_the_commands_descriptions_are_read_from_the_tree_and_checked_like_replies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What Discord shows of the commands comes from the command tree the cogs build (the
    settings' hints too), and a description without its French fails the check."""
    script = translations()
    shown = script.command_messages()
    assert ("Speak a line in your voice channel", "/say: Discord shows at most 100 characters") in (
        shown
    )
    assert ("What to say", "/say text") in shown
    assert ("Speak this message", "the message menu's name") in shown
    assert "default: none (leave empty for none)" in dict(shown)  # a /config value's hint
    assert command_text("Speak a line in your voice channel", "fr") == (
        "Dire une phrase dans votre salon vocal"
    )
    assert command_text("Speak a line in your voice channel", "ja") is None
    real = script.read

    def read(locale: str) -> Catalog:
        catalog = real(locale)
        catalog.get("What to say").string = ""
        return catalog

    monkeypatch.setattr(script, "read", read)
    assert "untranslated or fuzzy: 'What to say'" in script.problems("fr")


def test_the_check_finds_a_reply_without_french(monkeypatch: pytest.MonkeyPatch) -> None:
    script = translations()
    real = script.read

    def read(locale: str) -> Catalog:  # a fresh copy, with two faults
        catalog = real(locale)
        catalog.get("Skipped.").string = ""  # untranslated
        catalog.delete("Nothing is waiting to be read.")  # missing
        return catalog

    monkeypatch.setattr(script, "read", read)
    found = script.problems("fr")
    assert "untranslated or fuzzy: 'Skipped.'" in found
    assert "not in the catalogue: 'Nothing is waiting to be read.'" in found


def test_each_language_counts_with_its_own_plural_rule() -> None:
    """French says 0 in the singular (CLDR), English in the plural."""
    said = {n: localize(plural(n, "word"), "fr") for n in (0, 1, 2, 1_000_000)}
    assert said == {0: "0 mot", 1: "1 mot", 2: "2 mots", 1_000_000: "1000000 mots"}
    assert [plural(n, "word") for n in (0, 1, 2)] == ["0 words", "1 word", "2 words"]
    assert localize(plural(0, "voice"), "fr") == "0 voix"
    assert localize(plural(0, "waiting message"), "fr") == "0 message en attente"


def test_a_phrase_is_its_english_and_is_said_again_in_the_members_language() -> None:
    voices = plural(2, "voice")
    done = tr("Done: deleted {voices} and all your voice choices.", voices=voices)
    assert done == "Done: deleted 2 voices and all your voice choices."
    assert isinstance(done, str) and str(done) == done
    assert localize(done, discord.Locale.french) == (
        "C'est fait : 2 voix et tous vos choix de voix sont supprimés."
    )
    for english in (discord.Locale.american_english, discord.Locale.german, None):
        assert localize(done, english) == done
    # text that is not a phrase (a member's own words) is never changed
    assert localize("Skipped.", discord.Locale.french) == "Skipped."
    assert localize(tr("Skipped."), discord.Locale.french) == "Passé."
    # a template nobody translated yet reads in English, its values still translated
    untranslated = Phrase("{a}!", a=tr("Skipped."))
    assert localize(untranslated, discord.Locale.french) == "Passé.!"
    both = lines(tr("**Your voices**"), "• Me")
    assert both == "**Your voices**\n• Me"
    assert localize(both, discord.Locale.french) == "**Vos voix**\n• Me"


async def test_a_french_client_gets_french_replies_errors_and_embeds(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    # a member's mistake, in each member's language
    english = await (await fake.interaction("say", {"text": "hello"})).wait_final()
    assert english["content"] == "Join a voice channel first, then try again."
    french = await (await fake.interaction("say", {"text": "hello"}, locale="fr")).wait_final()
    assert french["content"] == "Rejoignez d'abord un salon vocal, puis réessayez."
    # a refusal made of several pieces (a setting's bounds) and a success
    bad = await fake.interaction(
        "config joining idle_timeout", {"value": "-5"}, permissions=ADMIN, locale="fr"
    )
    assert (await bad.wait_final())["content"] == "idle_timeout va de 0 à 86400."
    good = await fake.interaction(
        "config text xsaid", {"value": False}, permissions=ADMIN, locale="fr"
    )
    assert (await good.wait_final())["content"] == "xsaid vaut maintenant désactivé."
    # embeds: titles, field names and values
    shown = await (await fake.interaction("settings", locale="fr")).wait_response(2)
    embed = shown["embeds"][0]
    assert embed["title"].startswith("Réglages de PocketVoice pour ")
    fields = shown_settings(shown)
    assert fields["xsaid"] == "désactivé · Dire qui parle (« NOM a dit »)"
    assert fields["dictionary"] == "0 mot · /dictionary list"  # French: 0 is singular
    helped = await (await fake.interaction("help", locale="fr")).wait_response(2)
    assert helped["embeds"][0]["title"] == "Ce que je sais faire"
    names = [f["name"] for f in helped["embeds"][0]["fields"]]
    assert names[:2] == ["Parler", "Votre voix"] and "Sur ce serveur" in names
    # a locale without a table reads English
    german = await (await fake.interaction("say", {"text": "hi"}, locale="de")).wait_final()
    assert german["content"] == "Join a voice channel first, then try again."
