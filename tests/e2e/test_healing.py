"""Voice and gateway faults in the orders Discord really sends them, end to end: the bot heals
each server's voice link by itself, the interrupted message goes on, and the next `/say` is
heard at once.

The fake Discord follows discord.py 2.7.1's `voice_state.py` cases (see
`../shared/notes/discord-py-offline.md`): 4015 with the voice state update first (its resume
waits for a state it never reaches) or the server update first (it resumes), a resume the
voice server refuses (4006), 4006 alone, 1006, a voice server move, and the gateway resumed or
invalidated and identified again (the old session's voice websocket closed with 4014)."""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.e2e.test_speech import audio_packets, speaker_of
from tests.fakediscord import FakeDiscord
from tests.fakediscord.voice_udp import ReceivedPacket

VOICE = FakeDiscord.VOICE_ID
# About 9.3 s of speech (its 22 tokens at 3 a second, plus 2 s: the full-length model). The
# fault comes 0.5 s in and the next /say 3 s after it (after the gateway is back: 5 s for a
# re-identify): the interrupted message must still be playing then, or the silence measured
# would be the wait for that /say, not the heal's. 7.7 s left a re-identify 1.8 s of it; 11.3 s
# (28 tokens) cost 2 s more of real-time playback and synthesis in each test here.
LONG = "This keeps the bot talking long."
# the message after the fault: its length does not matter, only that it is heard whole
NEXT = "Hi."
FRAME_SAMPLES_24K = 480  # one 20 ms frame of the model's 24 kHz audio
HEARD_WITHIN_S = 3.0  # with nothing else at its CPU priority (the `timing` tests)
# Beside the other tests (6 workers on 2 cores, then with the image builds) a heal's reconnect
# waits for CPU: a CI-like run once heard a 3.86 s silence where an idle machine hears under 3 s.
# This bound still shows that the bot healed by itself: discord.py alone waits out its 45 s
# timeout in these cases (../shared/notes/discord-py-offline.md).
HEARD_WITHIN_LOADED_S = 10.0

FAULTS = [
    "4015 state first",  # discord.py's resume waits out its timeout
    "4015 server first",  # discord.py resumes by itself
    "4015 resume refused",  # the resume is answered with 4006
    "4006",
    "1006",
    "voice server moved",
    "gateway resumed",
    "gateway re-identified",  # the old voice websocket closes with 4014
]


@dataclass
class Heard:
    longest_gap: float  # the longest silence between audio packets after the fault
    after_request: float  # from the /say after the fault to the next audio packet


async def inject(running: RunningBot, fault: str) -> None:
    fake = running.fake
    guild = fake.GUILD_ID
    if fault.startswith("4015"):
        await fake.close_voice(guild, 4015)
    elif fault == "4006":
        await fake.close_voice(guild, 4006)
    elif fault == "1006":
        fake.abort_voice(guild)
    elif fault == "voice server moved":
        await fake.move_voice_server(guild)
    else:
        fake.invalidate_resume = fault == "gateway re-identified"
        before = fake._gateways[0]
        await fake.close_gateway(4000)
        back = lambda: fake._gateways.get(0) not in (None, before)  # noqa: E731
        await fake.wait_for(back, 30, "the gateway back")
        await running.bot.wait_until_ready()


def configure(fake: FakeDiscord, fault: str) -> None:
    fake.server_update_first = fault in ("4015 server first", "4015 resume refused")
    fake.voice_resume_fails = fault == "4015 resume refused"


def audio_after(fake: FakeDiscord, since: float) -> list[ReceivedPacket]:
    return [p for p in audio_packets(fake.udp.packets) if p.arrived >= since]


def longest_gap(packets: list[ReceivedPacket], since: float) -> float:
    times = [since, *(p.arrived for p in packets)]
    return max((b - a for a, b in itertools.pairwise(times)), default=0.0)


async def fault_while_speaking(running: RunningBot, fault: str) -> Heard:
    """Speak `LONG`, inject the fault, `/say` again 3 s later; both must be heard whole."""
    fake = running.fake
    configure(fake, fault)
    await fake.set_voice_state("alice", VOICE)
    first = await (await fake.interaction("say", {"text": LONG})).wait_final()
    assert first["content"].startswith("Speaking in"), first["content"]
    speaker = speaker_of(running)
    await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 25, 30, "speech")
    faulted = time.monotonic()
    await inject(running, fault)
    await asyncio.sleep(3.0)  # as a member would: after the silence was noticed
    requested = time.monotonic()
    reply = await (await fake.interaction("say", {"text": NEXT})).wait_final(20)
    assert "in <#" in reply["content"], reply["content"]
    await fake.wait_for(lambda: len(speaker.history) >= 2, 90, f"both messages after {fault}")
    interrupted, following = speaker.history[0], speaker.history[1]
    assert interrupted.error is None and not interrupted.cancelled, interrupted
    assert following.error is None and not following.cancelled, following
    # what the silence below measures is the heal's: the interrupted message was still playing
    # when the next /say came (see LONG)
    assert interrupted.ended_at > requested, (interrupted.ended_at - requested, fault)
    after = audio_after(fake, faulted)
    # nothing lost: every frame of both messages reached a live voice session (a healed link
    # replays what the dead one swallowed, so a few frames may come twice)
    frames = sum(-(-r.model_samples // FRAME_SAMPLES_24K) for r in (interrupted, following))
    # Counted whole, not as "before the fault" plus "after": a packet is stamped when it reached
    # the socket, and one still waiting for the busy event loop when the first part was counted
    # fell in neither (a loaded run "lost" 2 of 804 frames that way, with 4006)
    heard = len(audio_packets(fake.udp.packets)) + 2  # a player waiting for its link holds one
    played = [(r.frames_played, r.model_samples, r.underruns) for r in (interrupted, following)]
    assert heard >= frames, (heard, frames, fake.udp.dropped, played)
    next_audio = next((p.arrived for p in after if p.arrived >= requested), None)
    assert next_audio is not None
    return Heard(longest_gap(after, faulted), next_audio - requested)


async def heal_mid_message(
    tmp_path: Path, tiny_model: TinyModel, fault: str, within: float
) -> None:
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = running.fake
        heard = await fault_while_speaking(running, fault)
        heals = running.bot.app.connections.heals
        gaps = f"longest silence {heard.longest_gap:.2f} s"
        print(f"{fault}: {gaps}, /say to audio {heard.after_request:.2f} s, heals {heals}")
        assert heard.longest_gap < within, heard
        assert heard.after_request < within, heard
        if fault == "4015 server first":
            assert fake.voice_resumed == 1  # discord.py's own resume did it, as it should
        if fault == "voice server moved":
            assert fake.voice_hosts[-1] == "localhost"
        if fault == "gateway re-identified":
            # healing mattered: discord.py alone never recovers from it, the bot's watchdog
            # did; without DAVE the old link's audio went nowhere (with DAVE the bot holds its
            # audio once the old session's websocket closed, so none may reach it)
            assert heals >= 1
            assert fake.dave.version or fake.udp.dropped > 0


@pytest.mark.parametrize("fault", FAULTS)
async def test_after_a_fault_mid_message_speech_goes_on_and_the_next_say_is_heard(
    tmp_path: Path, tiny_model: TinyModel, fault: str
) -> None:
    await heal_mid_message(tmp_path, tiny_model, fault, HEARD_WITHIN_LOADED_S)


async def test_without_dave_a_healed_link_replays_what_the_dead_one_swallowed(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """Without DAVE (protocol version 0) nothing holds the audio when the gateway is identified
    again: the bot sends on to the old session, which Discord has ended (`udp.dropped`), until
    its watchdog heals the link, and then sends those frames again (`PlayerLink.relink`). With
    DAVE on, the other tests here, the audio is held instead and none is swallowed."""
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        running.fake.dave.version = 0
        await fault_while_speaking(running, "gateway re-identified")  # every frame heard
        assert running.bot.app.connections.heals >= 1
        assert running.fake.udp.dropped > 2, "no frame was swallowed: nothing was replayed"


@pytest.mark.timing
async def test_healed_mid_message_within_3_s_on_an_idle_machine(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """The slowest heal (the gateway identified again: discord.py alone never recovers, and
    the old link's audio goes nowhere): the silence lasts under 3 s. The idle cases below
    time the other heal, of a 4015 whose state came first."""
    await heal_mid_message(tmp_path, tiny_model, "gateway re-identified", HEARD_WITHIN_S)


@pytest.mark.timing
@pytest.mark.parametrize("fault", ["4015 state first", "gateway re-identified"])
async def test_after_a_fault_while_idle_the_next_say_is_heard_at_once(
    tmp_path: Path, tiny_model: TinyModel, fault: str
) -> None:
    async with bot_on_fake_discord(tmp_path, tiny_model) as running:
        fake = running.fake
        configure(fake, fault)
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("say", {"text": "Hello."})).wait_final()
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the first message")
        await inject(running, fault)
        await asyncio.sleep(1.0)
        requested = time.monotonic()
        reply = await (await fake.interaction("say", {"text": "Still here."})).wait_final(20)
        assert reply["content"].startswith("Speaking in"), reply["content"]
        await fake.wait_for(lambda: audio_after(fake, requested), 20, "the next message")
        first_audio = audio_after(fake, requested)[0].arrived - requested
        await fake.wait_for(lambda: len(speaker.history) == 2, 30, "the next message to end")
        assert speaker.history[1].error is None and speaker.history[1].frames_played > 0
        assert first_audio < HEARD_WITHIN_S, first_audio
