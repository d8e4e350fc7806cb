"""Several read channels and the home voice channel, end to end through the fake Discord: a
message in a second read channel is heard, and no longer once it is removed; a webhook's
message is read in the home voice channel with no member in voice; after a move, a kick or a
voice fault the bot is back in its home channel, heard by the member who joined it
(tests/services/test_read_channels.py and tests/playback/test_connection.py hold the rules)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from bot.services.upkeep import IdleUpkeep
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord, shown_settings
from tests.e2e.test_autoread import ADMIN, outcome, setup_read_channel, speaker
from tests.e2e.test_speech import audio_packets
from tests.fakediscord import FakeDiscord

GUILD, TEXT = FakeDiscord.GUILD_ID, FakeDiscord.TEXT_ID
VOICE, VOICE2 = FakeDiscord.VOICE_ID, FakeDiscord.VOICE2_ID


async def heard(running: RunningBot, count: int) -> list[str]:
    """What the bot has said so far, once it has said `count` lines."""
    history = speaker(running).history
    await running.fake.wait_for(lambda: len(history) >= count, 30, f"{count} lines said")
    return [result.text for result in history]


async def test_a_second_read_channel_is_heard_until_it_is_removed(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    await setup_read_channel(fake)
    second = await fake.add_text_channel("bridge")
    added = await (
        await fake.interaction("setup add", {"channel": second}, permissions=ADMIN)
    ).wait_final()
    assert added["content"].startswith(f"I will read <#{second}> aloud.")
    shown = await (await fake.interaction("settings")).wait_response(2)
    assert shown_settings(shown)["read_channels"].split(" · ")[0] == f"<#{TEXT}>, <#{second}>"
    await fake.set_voice_state("alice", VOICE)
    message = await fake.post("alice", "over here", second)
    assert await outcome(running_bot, message) == "read"
    assert await heard(running_bot, 1) == ["Alice said over here"]
    assert audio_packets(fake.udp.packets)
    removed = await (
        await fake.interaction("setup remove", {"channel": second}, permissions=ADMIN)
    ).wait_final()
    assert removed["content"] == f"I no longer read <#{second}>."
    ignored = await fake.post("alice", "not any more", second)
    assert await outcome(running_bot, ignored) == "not a read channel"
    still = await fake.post("alice", "but here", TEXT)
    assert await outcome(running_bot, still) == "read"
    assert fake.payload_errors == []


async def test_the_home_channel_hears_webhooks_and_is_returned_to_after_faults(
    running_bot: RunningBot,
) -> None:
    fake = running_bot.fake
    await setup_read_channel(fake)
    for command, value in (
        ("config reading bot_ignore", False),
        ("config joining home_voice", VOICE2),
    ):
        reply = await (
            await fake.interaction(command, {"value": value}, permissions=ADMIN)
        ).wait_final()
        assert " is now " in reply["content"]
    await fake.wait_for(lambda: fake.bot_channel_in(GUILD) == VOICE2, 30, "the bot at home")
    assert fake.voice_states.keys() == {fake.bot.id}  # no member in voice: none summoned it
    bridged = await fake.post_webhook("Bridge", "hello from the bridge")
    assert await outcome(running_bot, bridged) == "read"
    assert await heard(running_bot, 1) == ["Bridge said hello from the bridge"]
    # it went out; on DAVE nobody can decrypt it, as nobody is there to be in the call
    assert audio_packets(fake.udp.packets) or fake.udp.undecrypted
    # the first member to join the home channel hears what follows (judged at the end)
    await fake.set_voice_state("alice", VOICE2)
    # a moderator drags it elsewhere: it goes back home
    await fake.move_bot(VOICE)
    await fake.wait_for(lambda: fake.bot_channel_in(GUILD) == VOICE2, 30, "back home after a move")
    # Discord removes it from voice: back home again
    await fake.kick_from_voice(GUILD)
    await fake.wait_for(lambda: fake.bot_channel_in(GUILD) == VOICE2, 30, "back home after a kick")
    # its voice server crashes while it has nothing to say: the link is made afresh
    await fake.wait_for(lambda: GUILD in fake.voice_ws, 30, "the voice websocket")
    await fake.close_voice(GUILD, 4015)
    await fake.wait_for(
        lambda: GUILD in fake.voice_ws and not fake.voice_ws[GUILD].closed,
        60,
        "a voice link again",
    )
    assert fake.bot_channel_in(GUILD) == VOICE2
    since = time.monotonic()
    again = await fake.post_webhook("Bridge", "still here")
    assert await outcome(running_bot, again) == "read"
    await fake.wait_for(
        lambda: [p for p in audio_packets(fake.udp.packets) if p.arrived >= since],
        60,
        "speech heard after the fault",
    )
    assert fake.bot_channel_in(GUILD) == VOICE2
    assert fake.payload_errors == []


async def test_the_home_channel_is_joined_at_start_and_never_left_idle(
    tmp_path: Path, tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(IdleUpkeep, "every_s", 0.2)  # the idle check runs often
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        for command, value in (
            ("config joining home_voice", VOICE2),
            ("config joining idle_timeout", 1),
        ):
            reply = await (
                await fake.interaction(command, {"value": value}, permissions=ADMIN)
            ).wait_final()
            assert " is now " in reply["content"]
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:  # same DATA_DIR
        fake = running.fake
        await fake.wait_for(lambda: fake.bot_channel_in(GUILD) == VOICE2, 30, "home at start")
        await asyncio.sleep(3)  # 1 s of quiet, many idle checks: it stays
        assert fake.bot_channel_in(GUILD) == VOICE2
        assert fake.payload_errors == []
