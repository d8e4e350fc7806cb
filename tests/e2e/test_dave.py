"""The bot on a fake Discord that speaks DAVE (end-to-end encrypted voice), as Discord has
since 2026-03-02: every frame counted here is one a member in the channel decrypted with davey
(tests/fakediscord/dave_wiring.py). The voice gateway's messages take 50 ms each way, as a
real one's round trip does, so the bot's DAVE session is ready a few hundred milliseconds
after its voice connection: audio sent before that is lost to every member, and the bot must
not send any. One test runs without DAVE (protocol version 0): frames pass as plain Opus."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_healing import inject
from tests.e2e.test_speech import audio_packets, packets_settled, speaker_of
from tests.fakediscord import FakeDiscord

VOICE, VOICE2 = FakeDiscord.VOICE_ID, FakeDiscord.VOICE2_ID
ALICE, BOB = 1200000000000000001, 1200000000000000002  # their user ids in the fake
DAVE_DELAY_S = 0.05  # each way, between a client and the voice gateway
FIRST_AUDIO_S = 0.5  # from the voice session's start to the first frame a member decrypts
# About 7.7 s of speech (17 tokens at 3 a second, plus 2 s: the full-length model): each change
# below comes 0.5 s in, and the longest (the gateway identified again) takes 5 s, so speech goes
# on across it; each test checks that it did. (11.3 s cost 3.6 s more of real-time playback and
# synthesis in each of the six tests speaking it.)
LONG = "This keeps the bot talking."


async def privacy_field(fake: FakeDiscord, locale: str = "en-US") -> str:
    """What /botstats shows in the server of the bot's call there."""
    reply = await (await fake.interaction("botstats", locale=locale)).wait_response(2)
    fields = {f["name"]: f["value"] for f in reply["embeds"][0]["fields"]}
    return str(
        fields["Voice privacy code" if locale == "en-US" else "Code de confidentialité vocale"]
    )


def code_in(shown: str) -> str:
    """The code in a /botstats line, without the spaces between its groups."""
    found = re.search(r"`([0-9 ]+)`", shown)
    assert found, shown
    return found[1].replace(" ", "")


def with_dave(running: RunningBot, on: bool = True) -> FakeDiscord:
    fake = running.fake
    fake.dave.version = 1 if on else 0
    fake.dave.delay = DAVE_DELAY_S
    return fake


@pytest.mark.timing
async def test_a_say_into_a_fresh_join_is_heard_from_the_first_frame(
    running_bot: RunningBot,
) -> None:
    """/say makes the bot join alice's channel: not one frame is lost to her (discord.py
    2.7.1 alone sends plain Opus until its DAVE session is ready: 5-8 frames lost), and the
    first frame she decrypts leaves within 0.5 s of the voice session's start."""
    fake = with_dave(running_bot)
    await fake.set_voice_state("alice", VOICE)
    reply = await (await fake.interaction("say", {"text": "Hello there, friend."})).wait_final()
    assert reply["content"] == f"Speaking in <#{VOICE}>."
    speaker = speaker_of(running_bot)
    await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the utterance to end")
    await packets_settled(fake)
    result = speaker.history[0]
    assert result.error is None and not result.cancelled

    lost = [p for p in fake.udp.undecrypted]
    alice = fake.dave.listener(ALICE, VOICE)
    print(f"join: {len(lost)} frames lost")
    assert not fake.udp.errors and not fake.dave.errors and not alice.errors
    assert lost == [], f"{len(lost)} frames lost at the join"
    assert alice.lost == 0 and alice.heard == len(fake.udp.packets)
    audio = audio_packets(fake.udp.packets)
    # each frame played, and each underrun's frame of silence (a busy host), is a packet
    assert result.frames_played + result.underruns == len(audio) and result.frames_played > 0
    first = fake.udp.packets[0].arrived - fake.dave.connected_at[0]
    print(f"first decrypted frame {first * 1000:.0f} ms after the voice session's start")
    assert first < FIRST_AUDIO_S, first


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
    result = speaker.history[0]  # (an underrun's frame of silence is a packet too)
    assert result.frames_played + result.underruns == len(audio_packets(fake.udp.packets))
    assert result.frames_played > 0
    assert all(not p.opus.endswith(b"\xfa\xfa") for p in fake.udp.packets)  # DAVE's marker
    shown = await privacy_field(fake)
    assert shown == f"<#{VOICE}>: this call is not end-to-end encrypted"


async def test_botstats_shows_the_voice_privacy_code_the_members_have(
    running_bot: RunningBot,
) -> None:
    """/botstats shows the code of the bot's call in the member's server, as Discord's call
    panel shows it (six groups of five digits): the one alice's davey session has; after bob
    joins, the call's new code, which both have; in French too."""
    fake = with_dave(running_bot)
    assert await privacy_field(fake) == "not in a voice channel in this server"
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("say", {"text": "Hello there, friend."})).wait_final()
    speaker = speaker_of(running_bot)
    await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the utterance to end")
    alice = fake.dave.listener(ALICE, VOICE).client.dave
    code = alice.voice_privacy_code
    assert code is not None and len(code) == 30
    shown = await privacy_field(fake)
    groups = " ".join(code[i : i + 5] for i in range(0, 30, 5))
    assert shown.startswith(f"<#{VOICE}>: end-to-end encrypted, code `{groups}`. "), shown
    assert code_in(shown) == code

    await fake.set_voice_state("bob", VOICE)
    bob = fake.dave.listener(BOB, VOICE).client
    await fake.wait_for(
        lambda: (
            bob.session is not None
            and bob.dave.ready
            and bob.dave.voice_privacy_code == alice.voice_privacy_code != code
        ),
        10,
        "the call's new group with bob",
    )
    new_code = alice.voice_privacy_code
    shown_now = ""
    for _ in range(50):  # the bot executes the transition as the members do, within moments
        shown_now = await privacy_field(fake)
        if code_in(shown_now) == new_code:
            break
        await asyncio.sleep(0.1)
    assert code_in(shown_now) == new_code, (shown_now, new_code)
    french = await privacy_field(fake, locale="fr")
    assert french.startswith(f"<#{VOICE}> : chiffré de bout en bout, code `"), french
    assert code_in(french) == new_code


async def test_members_joining_and_leaving_mid_speech_lose_nothing(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """bob joins while the bot speaks to alice, then leaves: each change is a new MLS epoch,
    and alice decrypts every frame across both; bob hears the bot from his welcome on."""
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}  # speech long enough to span both
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = with_dave(running)
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("say", {"text": LONG})).wait_final()
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 25, 30, "speech")
        await fake.set_voice_state("bob", VOICE)
        bob = fake.dave.listener(BOB, VOICE)
        await fake.wait_for(lambda: bob.heard > 25, 10, "bob to hear the bot")
        await fake.set_voice_state("bob", None)
        heard_with_bob = bob.heard
        alice = fake.dave.listener(ALICE, VOICE)
        alice_with_bob = alice.heard
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 1, 60, "the message to end")
        await packets_settled(fake)

        assert not fake.udp.errors and not fake.dave.errors and not alice.errors + bob.errors
        assert alice.heard - alice_with_bob > 50  # speech went on 1 s or more after bob left
        assert fake.dave.gateways[VOICE].epoch >= 3  # alice+bot, +bob, -bob: three epochs
        assert alice.lost == 0 and fake.udp.undecrypted == []
        result = speaker.history[0]
        # (an underrun's frame of silence is a packet too)
        assert result.frames_played + result.underruns == len(audio_packets(fake.udp.packets))
        assert bob.heard == heard_with_bob  # nothing after he left
        assert bob.lost < 25  # only what came before his welcome


@pytest.mark.parametrize(
    "fault", ["4006", "4015 state first", "voice server moved", "gateway re-identified"]
)
async def test_after_a_voice_fault_no_frame_is_lost_to_the_member(
    tmp_path: Path, tiny_model: TinyModel, fault: str
) -> None:
    """A voice connection made afresh mid-message starts a new DAVE session: the bot holds its
    audio until that session can encrypt, so nothing is sent that alice cannot decrypt. (After
    the gateway identified again (4014), the old session's audio goes nowhere, `udp.dropped`,
    and the heal replays it: not a frame sent to a new session that she cannot decrypt.)"""
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = with_dave(running)
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("say", {"text": LONG})).wait_final()
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 25, 30, "speech")
        sessions = len(fake.dave.connected_at)
        at_join = len(fake.udp.undecrypted)
        await inject(running, fault)
        await fake.wait_for(lambda: len(fake.dave.connected_at) > sessions, 30, "a new session")
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 1, 90, "the message to end")
        await packets_settled(fake)
        result = speaker.history[0]
        assert result.error is None and not result.cancelled
        assert not fake.udp.errors and not fake.dave.errors
        # the message went on in the new session (so it proves something of that session)
        new_session = fake.dave.connected_at[sessions]
        assert any(p.arrived > new_session for p in audio_packets(fake.udp.packets)), fault
        lost = fake.udp.undecrypted
        print(
            f"{fault}: {at_join} frames lost at the join, {len(lost) - at_join} after the fault,"
            f" sessions {len(fake.dave.connected_at)}"
        )
        assert lost == [], f"{len(lost)} frames lost after {fault}"


async def test_a_moved_bot_is_heard_in_its_new_channel_without_a_lost_frame(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """A moderator drags the bot, mid-message, to bob's channel: a DAVE group is a channel's,
    so it gets a voice session there, and what it says goes on, decrypted by bob from its
    first frame there; alice, left behind, decrypted every frame it sent before."""
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = with_dave(running)
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", VOICE2)
        await (await fake.interaction("say", {"text": LONG})).wait_final()
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 25, 30, "speech")
        sessions = len(fake.dave.connected_at)
        at_join = len(fake.udp.undecrypted)
        await fake.move_bot(VOICE2)
        await fake.wait_for(lambda: len(fake.dave.connected_at) > sessions, 30, "a new session")
        bob = fake.dave.listener(BOB, VOICE2)
        await fake.wait_for(lambda: bob.heard > 25, 30, "bob to hear the bot")
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 1, 90, "the message to end")
        await packets_settled(fake)
        lost = len(fake.udp.undecrypted)
        print(f"moved: {at_join} frames lost at the join, {lost - at_join} after the move")
        assert not fake.udp.errors and not fake.dave.errors
        assert fake.udp.undecrypted == [] and bob.lost == 0
        assert fake.dave.listener(ALICE, VOICE).lost == 0
