"""Back in the home voice channel and speaking at once after a kick or a move, every time,
even when Discord answers a leave late.

To heal, the bot leaves (gateway op 4, `channel_id: null`; after a kick discord.py does) and
joins again. Discord may answer the leave after the join was sent; discord.py takes that late
"left" event for a kick of the new connection and ends it, and the bot then waits out its
connect attempt (15 s). The fake answers every leave after the bot's next op 4 here
(`late_leave_answers`), and each run checks that the race happened."""

from __future__ import annotations

import time
from pathlib import Path

import discord
import pytest

from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread_hardening import set_server
from tests.e2e.test_speech import audio_packets
from tests.fakediscord import FakeDiscord

GUILD = FakeDiscord.GUILD_ID
HOME = FakeDiscord.VOICE2_ID
ELSEWHERE = FakeDiscord.VOICE_ID
RUNS = 20
BACK_WITHIN_S = 2.0  # about 0.5 s on an idle machine; a torn-down join waits out 15 s


def leaves(fake: FakeDiscord) -> int:
    """The leaves (op 4 without a channel) the bot has sent."""
    return sum(1 for p in fake.gateway_log if p["op"] == 4 and p["d"]["channel_id"] is None)


async def back_after(running: RunningBot, fault: str) -> float:
    """Inject `fault` while the bot is at home; once it is back there over a voice session
    made afresh, a member says something: seconds from the fault to the first audio."""
    fake = running.fake
    guild = running.bot.get_guild(int(GUILD))
    assert guild is not None

    def connected() -> bool:  # the handshake done, not only begun
        link = guild.voice_client
        return isinstance(link, discord.VoiceClient) and link.is_connected()

    await fake.wait_for(
        lambda: fake.bot_channel_in(GUILD) == HOME and connected(), 30, "the bot at home"
    )
    session, left, raced = fake.voice_ws[GUILD], leaves(fake), fake.leaves_answered_after_a_join
    spoken = {p.ssrc for p in fake.udp.packets}  # the sessions before: not "back"
    faulted = time.monotonic()
    if fault == "kick":  # a voice state without a channel, then close 4014
        await fake.kick_from_voice(GUILD)
    else:  # a moderator drags the bot to an empty channel: its voice state alone says so
        await fake.move_bot(ELSEWHERE)
    # the leave that the fake answers late: discord.py's after a kick, the bot's own when it
    # finds itself alone after a move
    await fake.wait_for(lambda: leaves(fake) > left, 10, f"a leave after the {fault}")

    def back() -> bool:
        ws = fake.voice_ws.get(GUILD)
        fresh = ws is not None and ws is not session and not ws.closed
        return fresh and fake.bot_channel_in(GUILD) == HOME

    await fake.wait_for(back, 60, f"the bot back home after the {fault}")
    assert fake.leaves_answered_after_a_join > raced  # the race, every run: the leave's answer
    # reached the bot after its join was sent
    speech = await (await fake.interaction("say", {"text": "Back again."})).wait_final()
    assert speech["content"].startswith("Speaking in"), speech["content"]

    def heard() -> list[float]:
        packets = audio_packets(fake.udp.packets)
        return [p.arrived for p in packets if p.arrived >= faulted and p.ssrc not in spoken]

    await fake.wait_for(heard, 30, f"speech after the {fault}")
    return heard()[0] - faulted


@pytest.mark.timing
@pytest.mark.parametrize("fault", ["kick", "move"])
async def test_back_home_and_speaking_within_2_s_every_time_though_leaves_are_answered_late(
    tmp_path: Path, tiny_model: TinyModel, fault: str
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        await fake.set_voice_state("alice", HOME)
        await set_server(fake, "config joining home_voice", HOME)
        # alice's /say every run, 20 in a few seconds: past the default 5 in 10 s
        await set_server(fake, "config limits rate_limit", 50)
        fake.late_leave_answers = True
        took: list[float] = []
        for run in range(RUNS):
            took.append(await back_after(running, fault))
            assert took[-1] < BACK_WITHIN_S, (run, took)
        print(
            f"{fault}: back home and speaking in {RUNS} of {RUNS} runs, slowest "
            f"{max(took):.2f} s, median {sorted(took)[RUNS // 2]:.2f} s"
        )
        assert fake.payload_errors == []
