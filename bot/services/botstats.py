"""What `/botstats` says: this process's speech figures and its shards, and the voice privacy
code of the bot's call in the member's server."""

from __future__ import annotations

import discord

from bot.i18n.translate import lines, plural, tr
from bot.ops.shards import ProcessShards
from bot.playback.speakers import Speakers
from bot.playback.stats import Snapshot
from bot.playback.voice_link import CallPrivacy, call_privacy
from bot.services.replies import Reply

MAX_SHARD_LINES = 16  # /botstats names each shard of a process up to this many
CODE_GROUP = 5  # Discord's call panel shows the voice privacy code in groups of five digits


def shown_code(code: str) -> str:
    """A voice privacy code as Discord's call panel shows it, for a member to compare."""
    return " ".join(code[i : i + CODE_GROUP] for i in range(0, len(code), CODE_GROUP))


def privacy_line(call: CallPrivacy | None) -> str:
    """Whether the bot's call here is end-to-end encrypted (DAVE), and its code if so."""
    if call is None:
        return tr("not in a voice channel in this server")
    channel = f"<#{call.channel_id}>"
    if not call.encrypted:
        return tr("{channel}: this call is not end-to-end encrypted", channel=channel)
    if call.code is None:
        return tr(
            "{channel}: end-to-end encrypted; its code is agreed once a member is in the call",
            channel=channel,
        )
    return tr(
        "{channel}: end-to-end encrypted, code `{code}`. Where Discord shows you the same "
        "voice privacy code (the lock in its voice panel), you and the bot are in one "
        "encrypted call",
        channel=channel,
        code=shown_code(call.code),
    )


def botstats(
    speakers: Speakers, shards: ProcessShards, guild: discord.Guild | None = None
) -> Reply:
    """This process's figures: with shards across processes, each answers for its own. In a
    server, also the bot's call there as its members can check it."""
    snap = speakers.snapshot()
    fields = [
        *_speech_fields(snap, speakers.engine.workers),
        (tr("Shards in this process"), lines(shards.summary(), *shards.lines()[:MAX_SHARD_LINES])),
    ]
    if guild is not None:
        fields.append((tr("Voice privacy code"), privacy_line(call_privacy(guild.voice_client))))
    return Reply("", title=snap.status_line(), fields=fields)


def _speech_fields(snap: Snapshot, workers: int) -> list[tuple[str, str]]:
    """How fast and how busy speech is: first audio, underruns, speed, load, background."""
    no_data = tr("no data yet")

    def ms(value: float | None) -> str:
        return no_data if value is None else f"{value * 1000:.0f} ms"

    rtf = snap.real_time_factor
    return [
        (
            tr("Time to first audio"),
            tr(
                "p50 {p50} · p95 {p95} ({messages})",
                p50=ms(snap.ttfa_p50),
                p95=ms(snap.ttfa_p95),
                messages=plural(snap.utterances, "recent message"),
            ),
        ),
        (
            tr("Underruns"),
            tr("{seconds:.2f} s per minute of audio", seconds=snap.underruns_per_audio_min),
        ),
        (
            tr("Speed"),
            no_data if rtf is None else tr("{rtf:.1f}x real time per worker", rtf=rtf),
        ),
        (
            tr("Load"),
            tr(
                "{percent:.0f}% of {workers} worker(s) · {units} units waiting · speaking in "
                "{servers} server(s) · {waiting} message(s) waiting for room",
                percent=snap.load * 100,
                workers=workers,
                units=snap.queued_units,
                servers=snap.speaking_servers,
                waiting=snap.waiting_for_room,
            ),
        ),
        (
            tr("Background work"),
            tr(
                "{waiting} waiting (files, previews, clones) · {done} done · {refused} "
                "refused over the limits",
                waiting=snap.background_waiting,
                done=snap.background_done,
                refused=snap.background_refused,
            ),
        ),
    ]
