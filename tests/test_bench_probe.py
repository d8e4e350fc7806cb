"""bench/probe.py: its rows hold what the bot's hold (a voice and a text), its steps read the
cache slots asked, its figure is the model's CPU per stream; bench/load.py's ratio to it."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import torch

from bench.load import RunResult, against_probe, probe_rows
from bench.probe import Probe, ProbeEstimate, ProbeResult, load_model, probe_text
from bot.playback.stats import UtteranceResult
from bot.synthesis import pocket_tts_adapter
from bot.synthesis.batching import BatchedMimi
from bot.synthesis.decoder_precision import half_decoder
from bot.synthesis.linear_packing import PackedLinear
from tests.conftest import TinyModel

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def model(tiny_model: TinyModel) -> Any:
    return load_model(tiny_model.full_length_config, False, "fp32")


@pytest.fixture(scope="module")
def probe(model: Any, tiny_model: TinyModel) -> Probe:
    return Probe(model, tiny_model.clip, probe_text(20))


@pytest.mark.slow
def test_a_probe_row_holds_the_voice_then_the_text(probe: Probe, model: Any) -> None:
    row = probe.chunk.state  # the prefilled row: voice positions, then the text's tokens
    tokens = model.flow_lm.conditioner.prepare(probe_text(20)).shape[1]
    assert tokens >= 20
    assert pocket_tts_adapter.flow_lm_current_end(model, row) == probe.prompt
    # a 3 s clip's voice state holds more positions than the text alone
    assert probe.prompt - tokens >= 3 * model.mimi.frame_rate
    # by default the steps centre on a unit's mean: the prompt and half its speech (2.5 words/s)
    assert probe.unit_slots == pytest.approx(probe.prompt + 20 / 2.5 / 0.08 / 2)


@pytest.mark.slow
def test_the_timed_steps_read_the_slots_asked(probe: Probe) -> None:
    asked = probe.prompt + 40
    result = probe.measure(2, frames=4, slots=asked)
    assert result.slots == pytest.approx(asked, abs=1)
    assert result.rows == 2 and result.lm_cpu_s > 0 and result.decode_cpu_s > 0
    natural = probe.measure(1, frames=4)
    assert natural.slots == pytest.approx(probe.unit_slots, abs=1)


@pytest.mark.slow
def test_side_by_side_the_decode_runs_on_a_thread_of_its_own(
    probe: Probe, monkeypatch: Any
) -> None:
    threads: list[str] = []
    decode = BatchedMimi.decode

    def spy(self: BatchedMimi, latents: torch.Tensor) -> torch.Tensor:
        threads.append(threading.current_thread().name)
        return decode(self, latents)

    monkeypatch.setattr(BatchedMimi, "decode", spy)
    asked = probe.prompt + 40
    beside = probe.measure(2, frames=4, slots=asked, side_by_side=True)
    assert beside.slots == pytest.approx(asked, abs=1)
    assert beside.lm_cpu_s > 0 and beside.decode_cpu_s > 0
    assert threads and all(name.startswith("probe-decoder") for name in threads)
    threads.clear()
    probe.measure(2, frames=4, slots=asked)
    assert set(threads) == {threading.current_thread().name}


def test_the_figure_is_lm_and_decode_per_row_over_the_frame() -> None:
    result = ProbeResult(4, lm_cpu_s=0.02, decode_cpu_s=0.012, wall_s=0.05, slots=110, frame_s=0.08)
    assert result.cpu_per_audio == pytest.approx(0.032 / 4 / 0.08)


@pytest.mark.slow
def test_a_mean_row_count_interpolates_the_step_between_its_neighbours(probe: Probe) -> None:
    estimate = probe.at(1.25, frames=3)
    one, two = estimate.measured
    assert (one.rows, two.rows) == (1, 2)
    step = [m.lm_cpu_s + m.decode_cpu_s for m in (one, two)]
    expected = (step[0] + 0.25 * (step[1] - step[0])) / 1.25 / probe.frame_s
    assert estimate.cpu_per_audio == pytest.approx(expected)
    whole = probe.at(2.0, frames=3)
    assert [m.rows for m in whole.measured] == [2]


@pytest.mark.slow
def test_the_model_is_loaded_as_the_bot_loads_it(tiny_model: TinyModel, monkeypatch: Any) -> None:
    monkeypatch.setattr("bot.synthesis.linear_packing.MIN_WEIGHTS", 1)  # the tiny model's too
    fp32 = load_model(tiny_model.full_length_config, False, "bf16")
    assert half_decoder(fp32) is not None
    assert any(isinstance(m, PackedLinear) for m in fp32.flow_lm.modules())
    int8 = load_model(tiny_model.full_length_config, True, "fp32")
    assert half_decoder(int8) is None
    assert any("quantized" in type(m).__module__ for m in int8.flow_lm.modules())


def _run(threads: dict[str, float], work: dict[str, float], frames: int) -> RunResult:
    played = UtteranceResult("", None, 0, frames, 0, 0.1, False)
    return RunResult([(0, played)], 0, 1.0, 10.0, threads, work)


def test_load_divides_its_cpu_per_audio_second_by_the_probes() -> None:
    run = _run(
        {"lm": 1.0, "decoder": 0.5, "players": 0.5},
        {"steps": 100, "row_steps": 340, "span": 11_000},
        frames=500,  # 10 s of audio
    )
    assert probe_rows(run) == (3.4, 110)
    estimate = ProbeEstimate(3.4, 0.1, 110, ())
    line = against_probe(run, estimate)
    assert "all threads 2.00" in line  # 2 CPU-s over 10 s of audio, against 0.1
    assert "LM+decoder threads 1.50" in line
    assert "side by side" not in line
    beside = ProbeEstimate(3.4, 0.125, 110, ())
    alone, side = against_probe(run, estimate, beside).split("side by side")
    assert "all threads 2.00" in alone and "LM+decoder threads 1.50" in alone
    assert "all threads 1.60" in side and "LM+decoder threads 1.20" in side
    stream = _run({"players": 3.0}, {}, frames=500)
    assert probe_rows(stream) == (1.0, None)  # each stream alone: one row, a unit's slots
    assert "LM+decoder" not in against_probe(stream, estimate)
    assert torch.get_num_threads() == 1  # the probe's CPU clock is its own thread's
