"""Numbers read as words in the message's language, end to end through the fake Discord
(issue 36, item 1): the reading language reaches the numbers reader, and the engine is given
words, never digits. The rules case by case, per language: tests/text/test_numbers.py."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import TinyModel, bot_on_fake_discord
from tests.e2e.test_autoread import VOICE, outcome, setup_read_channel, speaker


async def test_a_message_with_numbers_is_spoken_as_words_in_its_language(
    tmp_path: Path, tiny_model: TinyModel
) -> None:
    """TTS_LANGUAGE=french: a time, a date, money and a sum, as French writes them, reach the
    engine as French words (the tiny model stands in for the french one; what the engine is
    given is what is checked)."""
    async with bot_on_fake_discord(tmp_path, tiny_model, {"TTS_LANGUAGE": "french"}) as running:
        fake = running.fake
        await setup_read_channel(fake)
        await fake.set_voice_state("alice", VOICE)
        message = await fake.post("alice", "rdv à 15h30 le 02/12, ça coûte 4,99 € et 2+2=4")
        assert await outcome(running, message) == "read"
        await fake.wait_for(lambda: len(speaker(running).history) == 1, 20, "reading")
        said = speaker(running).history[0]
        assert said.text == (
            "Alice a dit rdv à quinze heures trente le deux décembre, ça coûte quatre euros "
            "quatre-vingt-dix-neuf et deux plus deux égale quatre"
        )
        assert not any(c.isdigit() for c in said.text)
        assert said.error is None and said.frames_played > 0
