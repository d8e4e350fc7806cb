"""A member's attachment, read with a cap: its size as Discord declares it is checked before
anything is fetched, and no more than the cap is read even if the file holds more."""

from __future__ import annotations

import logging
import ssl

import aiohttp
import discord

from bot.core.errors import UserError
from bot.i18n.translate import tr

log = logging.getLogger(__name__)
DOWNLOAD_TIMEOUT_S = 20.0


async def read_capped(
    attachment: discord.Attachment, most: int, ssl_context: ssl.SSLContext | None = None
) -> bytes:
    """The attachment's bytes, or a UserError when it is larger than `most` bytes (declared
    or read) or cannot be downloaded now."""
    too_large = UserError(tr("That file is too large: at most {kb} KB.", kb=max(1, most // 1024)))
    if attachment.size > most:
        raise too_large
    timeout = aiohttp.ClientTimeout(total=DOWNLOAD_TIMEOUT_S)
    data = bytearray()
    try:
        async with (
            aiohttp.ClientSession(
                timeout=timeout, connector=aiohttp.TCPConnector(ssl=ssl_context or True)
            ) as session,
            session.get(attachment.url) as response,
        ):
            if response.status != 200:
                raise aiohttp.ClientResponseError(response.request_info, (), status=response.status)
            while len(data) <= most:
                chunk = await response.content.read(most + 1 - len(data))
                if not chunk:
                    break
                data += chunk
    except (aiohttp.ClientError, TimeoutError) as error:
        log.warning("attachment download failed: %s", type(error).__name__)
        raise UserError(tr("I could not download your file. Please try again.")) from None
    if len(data) > most:
        raise too_large
    return bytes(data)
