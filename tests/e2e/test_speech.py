"""The real bot against the fake Discord: slash commands in, encrypted Opus out."""

from __future__ import annotations

import asyncio
import time
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

from bot.__main__ import sync_commands
from bot.core.config import load_config
from bot.playback.speakers import GuildSpeaker
from tests.conftest import RunningBot, TinyModel, bot_on_fake_discord
from tests.fakediscord import FakeDiscord, ReceivedPacket

VOICE = FakeDiscord.VOICE_ID
VOICE2 = FakeDiscord.VOICE2_ID
LONG_TEXT = (
    "This is a long message that keeps the bot talking for quite a while, long enough "
    "for somebody in the channel to decide that they have heard enough of it."
)
TWO_SERVERS_TEXT = "Both servers hear this message at the same time, from start to end."
# about 18 s with the full-length tiny model (3 tokens a second, 2 s more)
SHORT_TEXT = "This keeps the bot talking."  # about 8 s
FOUR_SERVERS_TEXT = "This keeps the bot talking for a while."  # about 11 s
CONNECT, SPEAK = 1 << 20, 1 << 21
GAP_FRAMES = 5  # 100 ms of 20 ms frames: a voiced gap this long or longer is a stutter


def speaker_of(running: RunningBot) -> GuildSpeaker:
    speaker = running.bot.app.speakers.get(int(FakeDiscord.GUILD_ID))
    assert speaker is not None
    return speaker


async def packets_settled(fake: FakeDiscord, quiet: float = 0.4, timeout: float = 30) -> None:
    """Wait until no packet has arrived for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last = fake.udp.packets[-1].arrived if fake.udp.packets else 0.0
        if fake.udp.packets and time.monotonic() - last > quiet:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError("packets kept coming")


def audio_packets(packets: list[ReceivedPacket]) -> list[ReceivedPacket]:
    return [p for p in packets if not p.is_silence]


@pytest.mark.timing
async def test_say_streams_encrypted_opus_of_the_engine_audio(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)
    inter = await fake.interaction("say", {"text": "Hello there, friend."})
    reply = await inter.wait_final()

    assert inter.responses[0]["_callback"] and inter.responses[0]["flags"] & 64  # ephemeral
    assert reply["content"] == f"Speaking in <#{VOICE}>."
    assert reply["allowed_mentions"] == {"parse": []}
    assert fake.bot_voice_channel == VOICE
    assert any(p["op"] == 4 and p["d"]["self_deaf"] for p in fake.gateway_log)

    speaker = speaker_of(running_bot)
    await fake.wait_for(lambda: len(speaker.history) == 1, 30, "the utterance to end")
    await packets_settled(fake)
    result = speaker.history[0]
    assert result.error is None and not result.cancelled and result.underruns == 0

    packets = fake.udp.packets
    assert not fake.udp.errors
    assert any(p["op"] == 5 for p in fake.voice_log)  # SPEAKING
    assert all((b.sequence - a.sequence) % 65536 == 1 for a, b in pairwise(packets))
    assert all((b.timestamp - a.timestamp) % 2**32 == 960 for a, b in pairwise(packets))
    audio = audio_packets(packets)
    assert all(len(p.pcm) == 3840 for p in audio)
    decoded = np.frombuffer(b"".join(p.pcm for p in audio), dtype="<i2").reshape(-1, 2)
    produced_at_48k = result.model_samples * 2
    assert abs(len(decoded) - produced_at_48k) <= 0.060 * 48_000
    assert np.abs(decoded).max() > 0  # sound, not just silence
    assert result.frames_played == len(audio)
    assert result.first_frame_latency is not None and result.first_frame_latency < 5


@pytest.mark.timing
async def test_skip_stops_packets_and_keeps_the_queue(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}  # utterances of natural length
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = running.fake
        await fake.set_voice_state("alice", VOICE)
        await (await fake.interaction("say", {"text": LONG_TEXT})).wait_final()
        await fake.wait_for(lambda: len(audio_packets(fake.udp.packets)) > 25, 30, "speech")
        queued = await (await fake.interaction("say", {"text": "Second one."})).wait_final()
        assert queued["content"] == f"Queued: 1 ahead of you in <#{VOICE}>."

        skip = await fake.interaction("skip")
        skipped_at = time.monotonic()
        assert (await skip.wait_final())["content"] == "Skipped."
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 2, 30, "both utterances to end")
        await packets_settled(fake)

        first, second = speaker.history
        assert first.cancelled and not second.cancelled
        assert first.model_samples / 24_000 < 10  # far from the ~25 s the text would give
        audio = audio_packets(fake.udp.packets)
        assert len(audio) == first.frames_played + second.frames_played
        last_of_first = audio[first.frames_played - 1]
        assert last_of_first.arrived - skipped_at < 0.2
        assert second.frames_played > 0


async def test_stop_clears_the_queue(tmp_path: Path, tiny_model: TinyModel) -> None:
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = running.fake
        await fake.set_voice_state("alice", VOICE)
        for text in (LONG_TEXT, "Two.", "Three."):
            await (await fake.interaction("say", {"text": text})).wait_final()
        await fake.wait_for(lambda: len(fake.udp.packets) > 5, 30, "speech")
        reply = await (await fake.interaction("stop")).wait_final()
        assert reply["content"] == "Stopped and cleared 3 messages."
        speaker = speaker_of(running)
        await fake.wait_for(lambda: len(speaker.history) == 1, 10, "the stop")
        await packets_settled(fake)
        assert speaker.history[0].cancelled and speaker.queued == 0
        again = await (await fake.interaction("skip")).wait_final()
        assert again["content"] == "Nothing is being spoken right now."


async def test_bot_leaves_when_the_last_human_leaves(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    await fake.set_voice_state("alice", VOICE)
    await fake.set_voice_state("bob", VOICE)
    reply = await (await fake.interaction("join")).wait_final()
    assert reply["content"] == f"Joined <#{VOICE}>."
    await fake.wait_for(lambda: fake.bot_voice_channel == VOICE, 10, "the bot in voice")
    await fake.set_voice_state("alice", None)
    await asyncio.sleep(0.3)
    assert fake.bot_voice_channel == VOICE  # bob is still there
    await fake.set_voice_state("bob", None)
    await fake.wait_for(lambda: fake.bot_voice_channel is None, 10, "the bot to leave")
    assert fake.gateway_log[-1]["op"] == 4 and fake.gateway_log[-1]["d"]["channel_id"] is None


async def test_leave_and_join_commands(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    nothing = await (await fake.interaction("leave")).wait_final()
    assert nothing["content"] == "I'm not in a voice channel."
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("join")).wait_final()
    await fake.wait_for(lambda: fake.bot_voice_channel == VOICE, 10, "join")
    left = await (await fake.interaction("leave")).wait_final()
    assert left["content"] == "Left the voice channel."
    await fake.wait_for(lambda: fake.bot_voice_channel is None, 10, "leave")


async def test_user_errors_get_clear_ephemeral_answers(running_bot: RunningBot) -> None:
    fake = running_bot.fake

    async def ask(text: str, user: str = "alice") -> str:
        inter = await fake.interaction("say", {"text": text}, user=user)
        reply = await inter.wait_final()
        assert inter.responses[0]["flags"] & 64
        return reply["content"]

    assert await ask("Hello") == "Join a voice channel first, then try again."
    await fake.set_voice_state("alice", VOICE)
    assert await ask("   ") == "There is nothing to say: please give me some text."
    assert await ask("a" * 1001) == (
        "That text is 1,001 characters long; the limit is 1,000. Please shorten it."
    )
    assert fake.bot_voice_channel is None and not fake.udp.packets  # nothing happened

    # busy: the bot is with alice in one channel, bob asks from another
    await (await fake.interaction("join")).wait_final()
    await fake.set_voice_state("bob", VOICE2)
    assert await ask("Over here", user="bob") == (
        f"I'm already speaking in <#{VOICE}> for other members. "
        "Join that channel, or try again when they are done."
    )
    assert fake.bot_voice_channel == VOICE

    # missing permissions in bob's channel, once alice has gone
    await fake.set_voice_state("alice", None)
    await fake.wait_for(lambda: fake.bot_voice_channel is None, 10, "the bot to leave")
    fake.deny_voice_permissions(VOICE2, CONNECT | SPEAK)
    await fake.resend_guild()
    await asyncio.sleep(0.1)
    assert await ask("Hello", user="bob") == (
        f"I don't have the Connect and Speak permission in <#{VOICE2}>. "
        "Please ask a server admin to grant it."
    )
    assert fake.bot_voice_channel is None
    assert not fake.unknown_routes


async def test_sync_registers_the_slash_commands(tmp_path: Path) -> None:
    fake = FakeDiscord(tmp_path)
    await fake.start()
    try:
        await sync_commands(load_config(fake.env, dotenv_path=None))
        names = {command["name"] for command in fake.registered_commands}
        assert names == {
            "say",
            "join",
            "leave",
            "skip",
            "stop",
            "clear",
            "tts",
            "Speak this message",
            "botstats",
            "clone",
            "voice",
            "setup",
            "settings",
            "set",
            "config",
            "dict",
            "help",
            "block",
            "unblock",
            "blocked",
            "dictionary",
        }
        shown_to = {
            c["name"]: int(c["default_member_permissions"])
            for c in fake.registered_commands
            if c.get("default_member_permissions")
        }
        manage_server, manage_messages = 1 << 5, 1 << 13
        assert shown_to == {
            "setup": manage_server,
            "config": manage_server,
            "dict": manage_server,
            "block": manage_messages,
            "unblock": manage_messages,
            "blocked": manage_messages,
        }
        # the dictionary: everyone reads it (/dictionary), only admins change it (/dict)
        by_name = {c["name"]: c for c in fake.registered_commands}
        assert {o["name"] for o in by_name["dictionary"]["options"]} == {"list", "export"}
        assert {o["name"] for o in by_name["dict"]["options"]} == {
            "add",
            "remove",
            "import",
            "sound",
            "sound_remove",
        }
        assert not fake.identified.is_set()  # no gateway session was needed
        # every description has its French, the message menu its French name
        untranslated = []

        def check(item: dict, where: str) -> None:
            if item.get("description") and "fr" not in (
                item.get("description_localizations") or {}
            ):
                untranslated.append(f"{where}: {item['description']}")
            for option in item.get("options", []):
                check(option, f"{where} {option['name']}")

        for command in fake.registered_commands:
            check(command, command["name"])
        assert untranslated == []
        by_name = {c["name"]: c for c in fake.registered_commands}
        assert by_name["say"]["description_localizations"]["fr"] == (
            "Dire une phrase dans votre salon vocal"
        )
        assert by_name["Speak this message"]["name_localizations"]["fr"] == "Lire ce message"
        assert "de" not in by_name["say"].get("description_localizations", {})  # falls back
    finally:
        await fake.close()


async def test_the_bot_with_sync_commands_registers_the_tree_sync_registers(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """`sync` has a small client of its own; the whole bot started with SYNC_COMMANDS=1
    registers the very same commands."""

    def registered(fake: FakeDiscord) -> list[dict]:
        ids = ("id", "version")  # the fake's own, new on every registration
        return [{k: v for k, v in c.items() if k not in ids} for c in fake.registered_commands]

    async with bot_on_fake_discord(tmp_path, tiny_model, {"SYNC_COMMANDS": "1"}) as running:
        by_the_bot = registered(running.fake)
        running.fake.registered_commands = []
        await sync_commands(load_config(running.fake.env, dotenv_path=None))
        by_sync = registered(running.fake)
    assert len(by_the_bot) == 21
    assert by_sync == by_the_bot


async def test_botstats_reports_time_to_first_audio(running_bot: RunningBot) -> None:
    fake = running_bot.fake
    empty = await (await fake.interaction("botstats")).wait_response(2)
    fields = {f["name"]: f["value"] for f in empty["embeds"][0]["fields"]}
    assert fields["Time to first audio"].startswith("p50 no data yet")
    await fake.set_voice_state("alice", VOICE)
    await (await fake.interaction("say", {"text": "Measure me."})).wait_final()
    speaker = speaker_of(running_bot)
    await fake.wait_for(lambda: len(speaker.history) == 1, 20, "speech")
    shown = await (await fake.interaction("botstats")).wait_response(2)
    embed = shown["embeds"][0]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    latency_ms = round(speaker.history[0].first_frame_latency * 1000)
    assert fields["Time to first audio"] == (
        f"p50 {latency_ms} ms · p95 {latency_ms} ms (1 recent message)"
    )
    # what this message's playback met (0 on an idle machine; a loaded one may underrun)
    result = speaker.history[0]
    per_minute = result.underruns * 0.02 / (result.frames_played * 0.02 / 60)
    assert fields["Underruns"] == f"{per_minute:.2f} s per minute of audio"
    idle = ("Ready to speak", "Speaking in 1 server")
    # (a loaded machine: the underruns, or the workers' share of busy time, say "at capacity")
    assert embed["title"] in (idle if per_minute <= 1.0 else ()) + (
        "At capacity: speech may start late",
    ), (embed["title"], per_minute)
    # one process holds the one shard Discord recommends, with both servers, one in voice
    assert fields["Shards in this process"].startswith("0 of 1 · 2 servers · 1 in voice\n")
    assert fields["Shards in this process"].split("\n")[1].startswith("shard 0: 2 servers, 1 in")


async def test_two_servers_speak_at_once(tmp_path: Path, tiny_model: TinyModel) -> None:
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}  # utterances of natural length
    async with bot_on_fake_discord(tmp_path, tiny_model, env) as running:
        fake = running.fake
        await fake.set_voice_state("alice", VOICE)
        await fake.set_voice_state("bob", FakeDiscord.GUILD2_VOICE_ID)
        first = await fake.interaction("say", {"text": TWO_SERVERS_TEXT})
        second = await fake.interaction(
            "say", {"text": TWO_SERVERS_TEXT}, user="bob", guild=fake.GUILD2_ID
        )
        for inter in (first, second):
            assert (await inter.wait_final())["content"].startswith("Speaking in")
        scheduler = running.bot.app.speakers
        speakers = [scheduler.get(int(g)) for g in (fake.GUILD_ID, fake.GUILD2_ID)]
        await fake.wait_for(
            lambda: all(s is not None and len(s.history) == 1 for s in speakers), 120, "both"
        )
        await packets_settled(fake)
        assert not fake.udp.errors
        by_ssrc: dict[int, list[ReceivedPacket]] = {}
        for packet in audio_packets(fake.udp.packets):
            by_ssrc.setdefault(packet.ssrc, []).append(packet)
        assert {fake.ssrc_guild[s] for s in by_ssrc} == {fake.GUILD_ID, fake.GUILD2_ID}
        spans = []
        for ssrc, packets in by_ssrc.items():
            result = speakers[0 if fake.ssrc_guild[ssrc] == fake.GUILD_ID else 1].history[0]  # type: ignore[union-attr]
            assert result.error is None and result.frames_played > 200
            # every frame read was sent: the speech, plus a silent frame for each underrun
            assert len(packets) == result.frames_played + result.underruns
            assert result.first_frame_latency is not None and result.first_frame_latency < 5
            spans.append((packets[0].arrived, packets[-1].arrived))
        # at once, not one after the other: each message overlaps the other by most of it.
        # Whether 2 cores keep both without underruns is a capacity figure: bench/load.py
        # measures it (this machine's speed varies too much for a timed assertion here).
        (start_a, end_a), (start_b, end_b) = spans
        shorter = min(end_a - start_a, end_b - start_b)
        assert shorter > 10
        assert min(end_a, end_b) - max(start_a, start_b) > 0.7 * shorter


def longest_voiced_gap(packets: list[ReceivedPacket]) -> float:
    """The longest stretch of silence inside one message's audio (from its first voiced
    packet to its last), as a listener hears it (`sounds_silent`): a stalled player sends
    nothing, and an underrun sends frames that decode to near zero after the fading tail of
    the speech before (one or two frames: a test of short gaps also reads the bot's
    `longest_underrun`)."""
    voiced = [i for i, p in enumerate(packets) if not p.sounds_silent]
    longest, silent_since = 0.0, None
    for packet in packets[voiced[0] : voiced[-1] + 1]:
        if packet.sounds_silent:
            silent_since = silent_since if silent_since is not None else packet.arrived
            continue
        if silent_since is not None:
            longest = max(longest, packet.arrived - silent_since)
            silent_since = None
    arrivals = [p.arrived for p in packets[voiced[0] : voiced[-1] + 1]]
    return max(longest, *(b - a for a, b in pairwise(arrivals)))


async def four_servers_say(
    running: RunningBot, text: str, *, joined_first: bool = False
) -> tuple[
    list[tuple[str, str, str]], list[str], list[GuildSpeaker], dict[str, list[ReceivedPacket]]
]:
    """Four members in four servers `/say` `text` at once; waits until every message has
    played. Returns the (member, server, voice channel)s, the replies, the servers' speakers
    and the packets each server sent. `joined_first`: the bot is in each voice channel before
    anyone asks (/join), so the messages reach the scheduler in the order they were asked
    (joining on a /say, the one whose voice connection is ready first goes first)."""
    fake, bot = running.fake, running.bot
    members = [("alice", fake.GUILD_ID, VOICE), ("bob", fake.GUILD2_ID, fake.GUILD2_VOICE_ID)]
    members += [
        (f"member{n}", guild, fake.channels[guild][1])
        for n, guild in enumerate(list(fake.channels)[2:4])
    ]
    for user, guild, voice in members:
        await fake.set_voice_state(user, voice, guild)
        if joined_first:
            await (await fake.interaction("join", user=user, guild=guild)).wait_final()
            await fake.wait_for(lambda g=guild, v=voice: fake.bot_channel_in(g) == v, 30, "join")
    interactions = [
        await fake.interaction("say", {"text": text}, user=user, guild=guild)
        for user, guild, _ in members
    ]
    replies = [(await inter.wait_final())["content"] for inter in interactions]
    scheduler = bot.app.speakers
    found = [scheduler.get(int(guild)) for _, guild, _ in members]
    await fake.wait_for(
        lambda: all(s is not None and len(s.history) == 1 for s in found), 150, "all four"
    )
    speakers = [s for s in found if s is not None]
    await packets_settled(fake)
    assert not fake.udp.errors
    by_guild: dict[str, list[ReceivedPacket]] = {}
    for packet in fake.udp.packets:
        by_guild.setdefault(fake.ssrc_guild[packet.ssrc], []).append(packet)
    return members, replies, speakers, by_guild


@pytest.mark.timing
async def test_four_servers_speak_at_once_without_gaps(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """The batched engine keeps four servers speaking at the same time, each without a voiced
    gap over 100 ms (the tiny model: what is measured is the batching, not the model's size)."""
    env = {"TTS_CONFIG": str(tiny_model.full_length_config)}
    async with bot_on_fake_discord(tmp_path, tiny_model, env, extra_guilds=2) as running:
        assert running.bot.app.engine.batched and running.bot.app.engine.workers >= 4
        members, replies, speakers, by_guild = await four_servers_say(running, FOUR_SERVERS_TEXT)
        assert all(reply.startswith("Speaking in") for reply in replies)
        spans = []
        for speaker, (_, guild, _) in zip(speakers, members, strict=True):
            result = speaker.history[0]  # type: ignore[union-attr]
            assert result.error is None and result.frames_played > 200, result
            packets = by_guild[guild]
            voiced = audio_packets(packets)
            first, last = packets.index(voiced[0]), packets.index(voiced[-1])
            silent = sum(p.is_silence for p in packets[first : last + 1])
            gaps = sorted(b.arrived - a.arrived for a, b in pairwise(packets[first : last + 1]))
            # what kind of gap, if any: silence frames (the model was late: underruns) or
            # packets that arrived late (a stalled player, or this process's own event loop)
            assert result.longest_underrun < GAP_FRAMES, result  # the gaps the wire hides
            assert longest_voiced_gap(packets) < 0.1, (
                f"guild {guild}: {result.underruns} underruns, {silent} silence frames inside "
                f"the speech, longest arrival gaps {[round(g, 3) for g in gaps[-3:]]} s"
            )
            spans.append((voiced[0].arrived, voiced[-1].arrived))
        # all four at once: every message overlaps every other one by most of its length
        assert min(end for _, end in spans) - max(start for start, _ in spans) > 8


@pytest.mark.timing
async def test_servers_beyond_the_capacity_start_later_in_order_without_gaps(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """Four servers `/say` at once where the batch carries two (TTS_BATCH=2): two speak at
    once without a voiced gap over 100 ms, the others start later, in the order they asked,
    and every message is heard to its end."""
    env = {"TTS_CONFIG": str(tiny_model.full_length_config), "TTS_BATCH": "2"}
    async with bot_on_fake_discord(tmp_path, tiny_model, env, extra_guilds=2) as running:
        assert running.bot.app.engine.batched and 1 <= running.bot.app.engine.capacity() <= 2
        members, replies, speakers, by_guild = await four_servers_say(
            running, SHORT_TEXT, joined_first=True
        )
        # a member asking once the two rows are taken is told their speech starts later
        waiting = "I am speaking in as many servers as I can carry"
        assert all(r.startswith(("Speaking in", waiting)) for r in replies), replies
        assert all(r.startswith("Speaking in") for r in replies[:2])
        starts, ends = [], []
        for speaker, (_, guild, _) in zip(speakers, members, strict=True):
            result = speaker.history[0]  # type: ignore[union-attr]
            assert result.error is None and not result.cancelled, result
            assert result.frames_played * 480 >= result.model_samples  # all of it was played
            packets = by_guild[guild]
            assert result.longest_underrun < GAP_FRAMES, result  # the gaps the wire hides
            assert longest_voiced_gap(packets) < 0.1, f"guild {guild}: {result.underruns}"
            voiced = audio_packets(packets)
            starts.append(voiced[0].arrived)
            ends.append(voiced[-1].arrived)
        # the first two at once (each starts before the other ends); the third waits for a
        # row, the fourth for the next one
        assert starts[1] < ends[0] and starts[0] < ends[1]
        assert starts[2] > max(starts[:2]) + 0.5
        assert starts[3] >= starts[2]
