"""Packed oneDNN products give what MKL's give, alone and inside a batch."""

from __future__ import annotations

import collections
from typing import Any

import pytest
import torch
from pocket_tts import TTSModel
from torch import nn

from bot.synthesis import linear_packing
from bot.synthesis.batching import BatchedFlowLM, Request, prefill
from bot.synthesis.linear_packing import PackedLinear, pack_linears
from tests.conftest import TinyModel
from tests.synthesis.test_batching import TEXTS, alone, assert_same


@pytest.mark.parametrize("shape", [(1, 1), (2, 1), (8, 1), (1, 40)], ids=str)
def test_a_packed_layer_gives_the_products_of_the_dense_one(shape: tuple[int, int]) -> None:
    """One row (MKL), a batch of rows and a prompt of 40 tokens (oneDNN)."""
    torch.manual_seed(0)
    linear = nn.Linear(1024, 1024)
    packed = PackedLinear(linear)
    x = torch.randn(*shape, 1024)
    with torch.no_grad():
        got, want = packed(x), linear(x)
    assert got.shape == want.shape
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-4)


def test_only_large_fp32_layers_are_packed(tiny_model: TinyModel) -> None:
    """The tests' model has a small flow LM and a full-size Mimi."""
    model = TTSModel.load_model(config=str(tiny_model.full_length_config))
    count = pack_linears(model)
    packed = [m for m in model.modules() if isinstance(m, PackedLinear)]
    dense = [m for m in model.modules() if type(m) is nn.Linear]
    assert count == len(packed) > 0 and dense
    assert all(m.in_features * m.out_features >= linear_packing.MIN_WEIGHTS for m in packed)
    assert all(m.in_features * m.out_features < linear_packing.MIN_WEIGHTS for m in dense)
    assert not any(isinstance(m, PackedLinear) for m in model.flow_lm.modules())


@pytest.fixture(scope="module")
def models(tiny_model: TinyModel) -> tuple[Any, Any]:
    """The tests' model twice, the second with every layer packed; zero noise."""
    dense = TTSModel.load_model(config=str(tiny_model.full_length_config))
    packed = TTSModel.load_model(config=str(tiny_model.full_length_config))
    packed.load_state_dict(dense.state_dict())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(linear_packing, "MIN_WEIGHTS", 1)
        assert pack_linears(packed) > 0
    for model in (dense, packed):
        model.temp, model.noise_clamp = 0.0, None
    return dense, packed


@pytest.mark.slow
def test_a_packed_model_speaks_as_the_dense_one_alone_and_batched(
    models: tuple[Any, Any], tiny_model: TinyModel
) -> None:
    dense, packed = models
    voice_dense = dense.get_state_for_audio_prompt(str(tiny_model.clip))
    voice_packed = packed.get_state_for_audio_prompt(str(tiny_model.clip))
    expected = [alone(dense, voice_dense, text) for text in TEXTS[:3]]
    # alone, packed: the prompt (many rows) and each step (one row)
    for text, want in zip(TEXTS[:3], expected, strict=True):
        assert_same(alone(packed, voice_packed, text), want)
    # batched, packed: every step has 3 rows
    batch = BatchedFlowLM(packed, max_rows=3)
    requests = [
        Request(collections.deque(prefill(packed, voice_packed, text)), print, print)
        for text in TEXTS[:3]
    ]
    made: dict[int, list[torch.Tensor]] = collections.defaultdict(list)
    for request in requests:
        batch.join(request, request.chunks.popleft())
    while batch.rows:
        for row, latent, _ in batch.step():
            if latent is not None:
                made[requests.index(row.request)].append(latent)
    for n, want in enumerate(expected):
        assert_same(torch.cat(made[n], dim=1), want)
