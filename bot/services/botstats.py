"""What `/botstats` says: this process's speech figures and its shards."""

from __future__ import annotations

from bot.i18n.translate import lines, plural, tr
from bot.ops.shards import ProcessShards
from bot.playback.speakers import Speakers
from bot.services.replies import Reply

MAX_SHARD_LINES = 16  # /botstats names each shard of a process up to this many


def botstats(speakers: Speakers, shards: ProcessShards) -> Reply:
    """This process's figures: with shards across processes, each answers for its own."""
    snap = speakers.snapshot()

    no_data = tr("no data yet")

    def ms(value: float | None) -> str:
        return no_data if value is None else f"{value * 1000:.0f} ms"

    rtf = snap.real_time_factor
    return Reply(
        "",
        title=snap.status_line(),
        fields=[
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
                    workers=speakers.engine.workers,
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
            (
                tr("Shards in this process"),
                lines(shards.summary(), *shards.lines()[:MAX_SHARD_LINES]),
            ),
        ],
    )
