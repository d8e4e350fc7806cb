"""A language whose model cannot load: its speech is said in the default language instead,
and each server is told once, so that nothing is dropped silently."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import cachetools
import discord

from bot.i18n.translate import language_name, localize, tr

log = logging.getLogger(__name__)

RETRY_AFTER_S = 60.0  # a language that failed to load is not tried again for this long
TOLD_FOR_S = 3600.0  # a server hears of one language's fallback at most once in this
MAX_TRACKED = 10_000


class ModelFallback:
    """Which languages failed to load lately, and which servers were told."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._failed: cachetools.TTLCache[str, str] = cachetools.TTLCache(
            maxsize=MAX_TRACKED, ttl=RETRY_AFTER_S, timer=clock
        )
        self._told: cachetools.TTLCache[tuple[int, str], bool] = cachetools.TTLCache(
            maxsize=MAX_TRACKED, ttl=TOLD_FOR_S, timer=clock
        )

    def failed_lately(self, language: str) -> bool:
        """Its load failed a moment ago: speak in the default language without trying again
        (a gone network would make every message wait for the same failure)."""
        return language in self._failed

    def failed(self, language: str, error: BaseException) -> None:
        self._failed[language] = type(error).__name__
        log.warning(
            "the %s model could not be loaded (%s: %s): speaking in the default language",
            language,
            type(error).__name__,
            error,
        )

    def notice(self, language: str, default: str) -> str:
        return tr(
            "I could not load {language} just now, so I'm speaking in {default} instead.",
            language=language_name(language),
            default=language_name(default),
        )

    async def tell(
        self, channel: discord.abc.Messageable, guild: discord.Guild, language: str, default: str
    ) -> None:
        """Say once per server and language, in the server's locale and never pinging."""
        key = (guild.id, language)
        if key in self._told:
            return
        self._told[key] = True
        try:
            await channel.send(
                localize(self.notice(language, default), guild.preferred_locale),
                allowed_mentions=discord.AllowedMentions.none(),
            )
        except discord.HTTPException as error:
            log.info("could not post the fallback notice in server %s: %s", guild.id, error)
