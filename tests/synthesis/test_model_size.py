"""A model's size read from its config before loading (`bot/synthesis/model_size.py`) is the
size the loaded model holds: the same weights, by name and shape, and the same bytes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import torch
from pocket_tts import TTSModel

from bot.synthesis.engine import TTSEngine, weights_nbytes
from bot.synthesis.model_size import config_weights_bytes, model_skeleton
from bot.synthesis.pocket_tts_adapter import load_config
from tests.conftest import TinyModel
from tests.tiny_model import write_random_config


def _zeros(tensor: torch.Tensor, *_: object, **__: object) -> torch.Tensor:
    """An initialiser of `torch.nn.init`'s kind (in place, without grad) that writes zeros."""
    with torch.no_grad():
        return tensor.zero_()


def _shapes(model: torch.nn.Module) -> dict[str, tuple[int, ...]]:
    return {k: tuple(v.shape) for k, v in model.state_dict().items() if isinstance(v, torch.Tensor)}


@pytest.mark.slow  # over a second, measured (the fast tier stays under a minute)
async def test_the_size_read_from_the_config_is_the_loaded_models(
    engine: TTSEngine, tiny_model: TinyModel
) -> None:
    """The engine under test is int8 (`TTS_QUANTIZE`'s default): within a few hundred bytes
    (each int8 layer's scale and zero point); in fp32, to the byte, with every weight's
    name and shape."""
    assert abs(config_weights_bytes(tiny_model.config, quantize=True) - engine.model_bytes) < 1024
    fp32 = await asyncio.to_thread(TTSModel.load_model, config=str(tiny_model.config))
    skeleton = model_skeleton(load_config(tiny_model.config))
    assert _shapes(skeleton) == _shapes(fp32)
    assert config_weights_bytes(tiny_model.config) == weights_nbytes(fp32)
    assert all(t.device.type == "meta" for t in skeleton.state_dict().values())


@pytest.mark.parametrize(
    "base", ["english_7m_2026-10", pytest.param("french_24l", marks=pytest.mark.slow)]
)
async def test_the_size_of_a_packaged_config_is_its_loaded_models(
    base: str, tmp_path: Path, tiny_model: TinyModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package's configs with random weights (the same modules as with theirs): 63 MB
    and 1,282 MB in fp32, the second of the sizes the model budget guessed wrong."""
    # A size does not depend on the values: the weights are zeros, not drawn at random (which
    # was most of the 24-layer model's two loads, 13 s alone and 40 s beside other workers)
    for name in ("kaiming_uniform_", "uniform_", "normal_", "trunc_normal_", "xavier_uniform_"):
        monkeypatch.setattr(torch.nn.init, name, _zeros)
    tokenizer = tiny_model.config.parent / "tokenizer.model"
    config = write_random_config(base, tmp_path, tokenizer=tokenizer)
    model = await asyncio.to_thread(TTSModel.load_model, config=str(config))
    assert config_weights_bytes(config) == weights_nbytes(model)
    del model
    int8 = await asyncio.to_thread(TTSModel.load_model, config=str(config), quantize=True)
    assert abs(config_weights_bytes(config, quantize=True) - weights_nbytes(int8)) < 4096
