"""Replies in the member's language: every template of the code has its French, with the
same placeholders; a French Discord client gets French replies, errors and embeds, everyone
else English."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import discord

from bot.i18n.reply_tables import FRENCH_REPLIES, TABLES
from bot.i18n.translate import Phrase, lines, localize, plural, tr
from bot.storage.server_settings import SETTINGS
from bot.synthesis.model_pool import available_languages
from tests.conftest import RunningBot, shown_settings
from tests.e2e.test_autoread import ADMIN

ROOT = Path(__file__).resolve().parents[2]
FRENCH = TABLES[discord.Locale.french.value]


def _calls(name: str) -> list[tuple[str, ast.Call]]:
    """Every call of `name(...)` in the shipped code, with where it is."""
    found = []
    for path in sorted((ROOT / "bot").rglob("*.py")) + sorted((ROOT / "cogs").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == name:
                found.append((f"{path.name}:{node.lineno}", node))
    return found


def _placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def _templates() -> dict[str, str]:
    """The literal templates of `tr("…")`, and both forms of each `plural(n, "noun")`."""
    templates = {}
    for where, call in _calls("tr"):
        if call.args and isinstance(call.args[0], ast.Constant):
            templates[call.args[0].value] = where
    for where, call in _calls("plural"):
        noun = call.args[1]
        assert isinstance(noun, ast.Constant), f"{where}: plural() needs a literal noun"
        templates[f"{{count}} {noun.value}"] = templates[f"{{count}} {noun.value}s"] = where
    return templates


def test_every_reply_template_has_its_french_with_the_same_placeholders() -> None:
    templates = _templates()
    assert len(templates) > 150  # the scan finds the code's replies
    missing = [f"{where}: {t!r}" for t, where in templates.items() if t not in FRENCH_REPLIES]
    assert not missing, "no French for:\n" + "\n".join(missing)
    for template in templates:
        assert _placeholders(FRENCH_REPLIES[template]) == _placeholders(template), template
    unused = set(FRENCH_REPLIES) - set(templates)
    # words the code translates from values: languages, settings' kinds and descriptions
    dynamic = set(available_languages()) | {spec.kind for spec in SETTINGS.values()}
    assert unused <= dynamic, f"French for templates the code no longer has: {unused - dynamic}"
    for language in available_languages():
        assert language in FRENCH_REPLIES, language
    for spec in SETTINGS.values():
        assert spec.description in FRENCH, spec.description


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
    assert fields["dictionary"] == "0 mots · /dictionary list"
    helped = await (await fake.interaction("help", locale="fr")).wait_response(2)
    assert helped["embeds"][0]["title"] == "Ce que je sais faire"
    names = [f["name"] for f in helped["embeds"][0]["fields"]]
    assert names[:2] == ["Parler", "Votre voix"] and "Sur ce serveur" in names
    # a locale without a table reads English
    german = await (await fake.interaction("say", {"text": "hi"}, locale="de")).wait_final()
    assert german["content"] == "Join a voice channel first, then try again."
