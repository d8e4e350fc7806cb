"""A message's sounds (/dict sound) play in line: the speech before the word, the clip's own
48 kHz frames as they are (never through the model), the speech after it, in one playback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import numpy as np

from bot.playback.audio_source import FRAME_BYTES, StreamingSource, pcm_frames
from bot.playback.speakers import GuildSpeaker, Utterance
from bot.synthesis.engine import UnusableVoiceError
from bot.synthesis.scheduler import DeadlineScheduler
from bot.synthesis.speech_plan import SpeechPlan
from bot.text.words import Names, ReadOptions, speakable
from tests.player import Ended, PlayerVoiceClient

LEVELS = {"before": 0.1, "after": 0.3, "more": 0.2}  # each text's constant level
CLIP_VALUE = 16_384  # the clip's samples (0.5 of full scale), 0.1 s at 48 kHz
CLIP = np.full(4_800, CLIP_VALUE, dtype="<i2").tobytes()


class LevelStream:
    """Speech for a text: 0.3 s at the level its first word names."""

    paced_seconds = 0.0

    def __init__(self, text: str) -> None:
        self.level = LEVELS.get(text.split()[0].strip("!,."), 0.05)

    def cancel(self) -> None:
        pass

    async def _chunks(self) -> AsyncIterator[np.ndarray]:
        await asyncio.sleep(0.01)
        yield np.full(int(0.3 * 24_000), self.level, dtype=np.float32)

    def __aiter__(self) -> AsyncIterator[np.ndarray]:
        return self._chunks()


class RecordingClient(PlayerVoiceClient):
    """The player, keeping every frame it read."""

    def __init__(self) -> None:
        super().__init__(encode=False)
        self.frames: list[bytes] = []

    def play(self, source: StreamingSource, *, after: Callable[[Exception | None], None]) -> None:
        read = source.read

        def recorded() -> bytes:
            data = read()
            if data:
                self.frames.append(data)
            return data

        source.read = recorded  # type: ignore[method-assign]
        super().play(source, after=after)


def kinds(frames: list[bytes]) -> str:
    """Each sounding frame as a letter: c (the clip, exact), s (speech), in order, runs
    collapsed ("scs": speech, the clip, speech)."""
    letters = []
    for frame in frames:
        samples = np.frombuffer(frame, dtype="<i2")
        if not samples.any():
            continue  # silence (prebuffering, an underrun, a frame's padding)
        letters.append("c" if np.all(samples == CLIP_VALUE) else "s")
    return "".join(letter for i, letter in enumerate(letters) if i == 0 or letters[i - 1] != letter)


class UnusableVoice(LevelStream):
    async def _chunks(self) -> AsyncIterator[np.ndarray]:
        raise UnusableVoiceError("that voice state cannot be read")
        yield np.zeros(0, np.float32)  # (an async generator)


async def speak(
    text: str, sounds: dict[str, bytes], voice: str | None = None
) -> tuple[list[str], RecordingClient, int]:
    """Say `text` (marked for the word "boom") in `voice`; what the model was asked (with the
    voice, when one was asked for), what was heard, and how many frames were exactly the
    clip's. The voice "broken after" is unusable from the words after the first sound on."""
    asked: list[str] = []

    def synthesize(words: str, voice: str | None, **options: object) -> LevelStream:
        asked.append(words if voice is None else f"{words} ({voice})")
        if voice == "broken after" and len(asked) > 1:
            return UnusableVoice(words)
        return LevelStream(words)

    scheduler = DeadlineScheduler(synthesize, max_load=100.0)
    scheduler.start()
    client, ended = RecordingClient(), Ended()
    speaker = GuildSpeaker(scheduler, lambda: client, on_result=ended)  # type: ignore[arg-type,return-value]
    marked = speakable(text, Names(), ReadOptions(sounds=frozenset({"boom"})))
    try:
        speaker.enqueue(Utterance(marked, SpeechPlan(voice=voice), sounds=sounds))
        (result,) = await ended.wait_for(1, timeout=30)
        assert result.error is None and not result.cancelled
    finally:
        await speaker.close()
        await scheduler.close()
    clip_frames = sum(1 for f in client.frames if np.all(np.frombuffer(f, "<i2") == CLIP_VALUE))
    return asked, client, clip_frames


def test_a_clip_is_whole_frames_of_stereo_at_48_khz() -> None:
    frames = pcm_frames(CLIP + b"\x01")  # (an odd byte is no sample)
    assert len(frames) == 5 and all(len(f) == FRAME_BYTES for f in frames)
    assert np.all(np.frombuffer(b"".join(frames), "<i2") == CLIP_VALUE)


async def test_the_clip_plays_between_the_speech_before_and_after_it() -> None:
    asked, client, clip_frames = await speak("before boom after", {"boom": CLIP})
    assert asked == ["before", "after"]  # the word never reached the model
    assert kinds(client.frames) == "scs"
    assert clip_frames == 5  # 0.1 s: all of it, as it is
    assert len(client.started) == 1  # one playback for the message


async def test_a_message_plays_three_sounds_at_most_then_says_the_word() -> None:
    asked, client, clip_frames = await speak(
        "boom before boom more boom after boom", {"boom": CLIP}
    )
    assert asked == ["before", "more", "after boom"]
    assert kinds(client.frames) == "cscscs" and clip_frames == 15


async def test_a_sound_missing_from_the_message_is_said() -> None:
    asked, _, clip_frames = await speak("before boom after", {})
    assert asked == ["before boom after"] and clip_frames == 0


async def test_a_voice_that_fails_after_a_sound_gives_way_to_the_default_one() -> None:
    asked, client, clip_frames = await speak("before boom after", {"boom": CLIP}, "broken after")
    assert asked == ["before (broken after)", "after (broken after)", "after"]
    assert kinds(client.frames) == "scs" and clip_frames == 5
