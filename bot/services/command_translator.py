"""The translator `bot.tree` syncs with: the command descriptions in the gettext catalogues
(`bot/i18n/locale`, kept in step with the command tree by `scripts/translations.py`), handed
to discord.py's `app_commands.Translator`."""

from __future__ import annotations

import discord
from discord import app_commands

from bot.i18n.translate import command_text


class CommandTranslator(app_commands.Translator):
    """What `bot.tree` uses when it syncs: descriptions, and context-menu names, per locale.
    Slash command names stay English, so that the README and /help name them for everyone."""

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        location = context.location
        if location is app_commands.TranslationContextLocation.command_name:
            command = context.data
            if not isinstance(command, app_commands.ContextMenu):
                return None
        elif location not in (
            app_commands.TranslationContextLocation.command_description,
            app_commands.TranslationContextLocation.group_description,
            app_commands.TranslationContextLocation.parameter_description,
        ):
            return None
        translated = command_text(string.message, locale.value)
        return translated[:100] if translated else None
