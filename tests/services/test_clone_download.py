"""/clone reads its clip with the capped reader (issue 48, item 17), as the other uploads
do: the size Discord's attachment declares is the uploader's to fake, so no more than the
clip limit is read whatever the file holds. The attachment is discord.py's, resolved from
a slash command's payload; its file is served over real TLS (tests/services/cdn.py)."""

from __future__ import annotations

import discord
import pytest

from bot.core.errors import UserError
from bot.services.voices import VoiceService
from bot.synthesis.clip import ClipLimits
from bot.synthesis.voice_library import VoiceLibrary, VoiceLimits
from tests.services.cdn import running_cdn
from tests.services.discord_objects import Server
from tests.services.wiring import FINGERPRINT, Bot

CAP = 64 * 1024


class CloningEngine:
    """What /clone asks of the engine before any model work: that it can clone."""

    has_voice_cloning = True
    fingerprint = FINGERPRINT


@pytest.mark.parametrize("served", [CAP + 1, 4 * CAP])
async def test_a_clip_larger_than_it_declares_is_cut_off_at_the_cap(
    bot: Bot, server: Server, served: int
) -> None:
    server.add("bob")
    guild = server.start()
    async with running_cdn() as cdn:
        file = cdn.serve("me.wav", b"\0" * served)
        payload = dict(server.attachment("me.wav", "audio/wav"), size=1024, url=cdn.url("me.wav"))
        interaction, (attachment,) = server.slash_command("bob", "clone", files=(payload,))
        assert isinstance(attachment, discord.Attachment) and attachment.size == 1024
        library = VoiceLibrary(
            bot.db,
            CloningEngine(),
            bot.data_dir,
            VoiceLimits(clip=ClipLimits(max_bytes=CAP)),  # type: ignore[arg-type]
        )
        voices = VoiceService(
            library,
            bot.speech,
            CloningEngine(),  # type: ignore[arg-type]
            cdn.client_ssl,
            planner=bot.planner,
            blocks=bot.blocks,
        )

        async def progress(_: str) -> None:
            return None

        with pytest.raises(UserError) as refused:
            await voices.clone(interaction.user, guild, "Mine", attachment, True, progress)
        assert refused.value.message == "That file is too large: at most 64 KB."
        assert file.reads == 1
    assert await bot.db.voices.get(int(server["bob"].id), "Mine") is None
