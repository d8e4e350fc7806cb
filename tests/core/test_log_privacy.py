"""Members' words stay out of the logs above DEBUG (issue 58): pocket-tts logs a chunk too long
for the model at WARNING with its first 50 characters ("Chunk has %d tokens (max %d),
generation may skip words: '%.50s...'", pocket_tts/models/text_chunking.py), from the bot's
process or, forwarded, from a model worker's. The command line's `say` drives the real
pocket-tts (the tiny model) into that warning with a run-on text, in both pipeline modes: the
warning is logged, the text is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TinyModel
from tests.test_cli import run_cli

SECRET = "mysecretword"
# one sentence of 120 words without a stop or a comma: past pocket-tts's 50 tokens a chunk
RUN_ON = " ".join(["hello", SECRET, "there"] * 40)
WARNING = "generation may skip words"
WITHHELD = "[text withheld]"  # (bot.core.log_privacy.WITHHELD)


@pytest.mark.process  # the command line, and its model workers
@pytest.mark.parametrize("mode", ["threads", "processes"])
def test_pocket_tts_warns_without_the_members_words(
    tmp_path: Path, tiny_model: TinyModel, mode: str
) -> None:
    env = {"TTS_CONFIG": str(tiny_model.config), "TTS_PIPELINE_MODE": mode, "LOG_LEVEL": "DEBUG"}
    out = tmp_path / "said.wav"
    done = run_cli(
        ["say", RUN_ON, "--out", str(out), "--voice", str(tiny_model.clip)], tmp_path, env
    )
    assert done.returncode == 0, done.stderr
    (warned,) = [line for line in done.stderr.splitlines() if WARNING in line]
    assert "WARNING" in warned and "pocket_tts" in warned
    assert f"'{WITHHELD}...'" in warned  # its message kept, the text withheld
    assert SECRET not in done.stderr + done.stdout
