"""Pauses play in line (issue 50): the speech before a pause fades out, then silent frames of
the asked length (the last speech frame's padding counted in it), then the speech after it, in
one playback, never as an underrun. The model is a stand-in here (each text a constant level,
so every frame of speech is loud and a click would show); tests/e2e/test_pauses.py hears the
same through the fake Discord with the real model."""

from __future__ import annotations

import numpy as np
import pytest

from bot.playback.audio_source import FADE_SAMPLES, FRAME_S
from bot.playback.speakers import GuildSpeaker, Utterance
from bot.synthesis.scheduler import DeadlineScheduler
from bot.text.words import MAX_PAUSE_S, MessageFacts, Names, ReadOptions, announce
from tests.playback.test_sounds_in_line import LevelStream, RecordingClient
from tests.player import Ended

# each plays its seconds of audio in real time; the underruns counted are a timing
pytestmark = [pytest.mark.slow, pytest.mark.timing]


async def heard(text: str, *, pauses: bool = True) -> tuple[list[str], list[bytes], int]:
    """What the model was asked, the frames the player read, and the underruns."""
    asked: list[str] = []

    def synthesize(words: str, voice: str | None, **options: object) -> LevelStream:
        asked.append(words)
        return LevelStream(words)

    scheduler = DeadlineScheduler(synthesize, max_load=100.0)
    scheduler.start()
    client, ended = RecordingClient(), Ended()
    speaker = GuildSpeaker(scheduler, lambda: client, on_result=ended)  # type: ignore[arg-type,return-value]
    line = announce(MessageFacts(content=text), Names(), ReadOptions(pauses=pauses), say_name=False)
    try:
        speaker.enqueue(Utterance(line))
        (result,) = await ended.wait_for(1, timeout=30)
        assert result.error is None and not result.cancelled
    finally:
        await speaker.close()
        await scheduler.close()
    return asked, client.frames, result.underruns


def silent_runs(frames: list[bytes]) -> list[int]:
    """The runs of silent frames between sounding ones (the lead-in and the end left out)."""
    loud = [bool(np.frombuffer(f, "<i2").any()) for f in frames]
    first, last = loud.index(True), len(loud) - 1 - loud[::-1].index(True)
    runs, count = [], 0
    for sounding in loud[first : last + 1]:
        if sounding:
            if count:
                runs.append(count)
            count = 0
        else:
            count += 1
    return runs


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("before [pause 2s] after", 2.0),
        ("before [pause 500ms] after", 0.5),
        ("before [pause] after", 1.0),
        ("before [pause 1,5 s] after", 1.5),
        ("before [pause 30s] after", MAX_PAUSE_S),
        ("before... after", 0.5),
        ("before\n\nafter", 0.7),
    ],
)
async def test_a_pause_is_silence_of_its_length_between_the_speech(
    text: str, seconds: float
) -> None:
    asked, frames, underruns = await heard(text)
    assert [words.split()[0].strip(".") for words in asked] == ["before", "after"]
    (run,) = silent_runs(frames)
    # the last speech frame's padding is part of the pause: to the frame, it is the length
    assert abs(run * FRAME_S - seconds) <= FRAME_S
    assert underruns == 0


async def test_the_speech_fades_out_into_the_pause_without_a_click() -> None:
    _, frames, _ = await heard("before [pause 1s] after")
    samples = np.frombuffer(b"".join(frames), "<i2").reshape(-1, 2)[:, 0].astype(np.int32)
    loud = np.flatnonzero(samples)
    level = round(0.1 * 32767)  # "before"'s level
    ends = next(i for i in range(1, len(loud)) if loud[i] - loud[i - 1] > 1)
    tail = samples[loud[ends - 1] - FADE_SAMPLES + 1 : loud[ends - 1] + 1]
    assert tail[0] >= level * 0.9 and abs(tail[-1]) <= level / FADE_SAMPLES + 1
    assert np.all(np.abs(np.diff(tail)) <= level / FADE_SAMPLES * 2)  # a ramp, no step


async def test_chat_without_pauses_reads_as_before() -> None:
    asked, frames, _ = await heard("before... after", pauses=False)
    assert " ".join(asked) == "before... after" and silent_runs(frames) == []
