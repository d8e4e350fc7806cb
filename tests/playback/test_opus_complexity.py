"""The bot's Opus encoder runs at `OPUS_COMPLEXITY`, not libopus's default: discord.py makes
a new encoder for each `play()`, and `VoiceLink` sets it as discord.py assigns it."""

from __future__ import annotations

import discord
import pytest

from bot.playback.voice_link import (
    OPUS_COMPLEXITY,
    VoiceLink,
    complexity_of,
    load_opus,
    set_complexity,
)

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def opus() -> None:
    assert load_opus()


def test_an_encoder_discord_py_gives_the_link_runs_at_the_bot_s_complexity() -> None:
    default = complexity_of(discord.opus.Encoder())
    assert default != OPUS_COMPLEXITY  # libopus's own default (9): the check can tell
    link = VoiceLink.__new__(VoiceLink)  # the property alone: no connection needed
    link.encoder = discord.opus.Encoder()  # as discord.py's play() does, before its player
    assert complexity_of(link.encoder) == OPUS_COMPLEXITY
    assert len(link.encoder.encode(b"\0" * 3840, 960)) > 0  # it still encodes 20 ms


def test_a_complexity_libopus_refuses_is_an_error() -> None:
    encoder = discord.opus.Encoder()
    with pytest.raises(discord.opus.OpusError):
        set_complexity(encoder, 42)
    assert complexity_of(encoder) == 9
