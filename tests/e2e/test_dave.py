"""The bot on a fake Discord that speaks DAVE (end-to-end encrypted voice), as Discord has
since 2026-03-02: every frame counted here is one a member in the channel decrypted with davey
(tests/fakediscord/dave_wiring.py). The voice gateway's messages take 50 ms each way, as a
real one's round trip does, so the bot's DAVE session is ready a few hundred milliseconds
after its voice connection: audio sent before that is lost to every member, and the bot must
not send any. One test runs without DAVE (protocol version 0): frames pass as plain Opus."""

from __future__ import annotations

from tests.conftest import RunningBot
from tests.e2e.test_speech import audio_packets, packets_settled, speaker_of
from tests.fakediscord import FakeDiscord

VOICE = FakeDiscord.VOICE_ID
DAVE_DELAY_S = 0.05  # each way, between a client and the voice gateway


def with_dave(running: RunningBot, on: bool = True) -> FakeDiscord:
    fake = running.fake
    fake.dave.version = 1 if on else 0
    fake.dave.delay = DAVE_DELAY_S
    return fake


async def test_without_dave_frames_pass_as_plain_opus(running_bot: RunningBot) -> None:
    """Protocol version 0 (the switch): no DAVE message, and every frame as it was sent."""
    fake = with_dave(running_bot, on=False)
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("say", {"text": "Hello there, friend."})).wait_final()
    speaker = speaker_of(running_bot)
    await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the utterance to end")
    await packets_settled(fake)
    assert fake.dave.to_bot == [] and fake.dave.from_bot == [] and not fake.dave.listeners
    assert not fake.udp.undecrypted
    assert speaker.history[0].frames_played == len(audio_packets(fake.udp.packets)) > 0
    assert all(not p.opus.endswith(b"\xfa\xfa") for p in fake.udp.packets)  # DAVE's marker
