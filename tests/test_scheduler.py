"""The per-guild queue: order, limits, edits and deletions of waiting messages."""

import pytest

from bot.deadlines import DeadlineScheduler
from bot.engine import TTSEngine
from bot.scheduler import GuildSpeaker, QueueFullError, Utterance


async def test_queue_limit_refuses_or_drops_the_oldest(engine: TTSEngine) -> None:
    speaker = GuildSpeaker(DeadlineScheduler(engine.stream), lambda: None, max_queue=3)
    try:
        for i in range(3):
            assert speaker.enqueue(Utterance(f"m{i}", message_id=i)) == i
        with pytest.raises(QueueFullError):
            speaker.enqueue(Utterance("refused"))
        speaker.enqueue(Utterance("m3", message_id=3), drop_oldest=True)
        speaker.enqueue(Utterance("m4", message_id=4), drop_oldest=True)
        assert [u.text for u in speaker._queue] == ["m2", "m3", "m4"]
        assert speaker.drop(3) is True and speaker.drop(3) is False
        assert speaker.replace_text(4, "m4 edited") is True
        assert speaker.replace_text(99, "nothing") is False
        assert [u.text for u in speaker._queue] == ["m2", "m4 edited"]
        assert speaker.clear_waiting() == 2 and speaker.queued == 0
    finally:
        await speaker.close()


async def test_without_a_voice_connection_utterances_end_with_an_error(engine: TTSEngine) -> None:
    speaker = GuildSpeaker(DeadlineScheduler(engine.stream), lambda: None)
    try:
        speaker.enqueue(Utterance("hello"))
        speaker.finished.clear()
        await speaker.finished.wait()
        (result,) = speaker.history
        assert result.error == "not connected to voice" and result.frames_played == 0
        assert not speaker.busy and speaker.idle_seconds >= 0
    finally:
        await speaker.close()
