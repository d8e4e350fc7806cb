"""Mimi's streaming attention cut to its context window: the same audio as pocket-tts's own
attention over every slot, with rows that joined at different frames and a cache compacted
on the way, while it hands torch's attention no more than the window."""

from __future__ import annotations

import collections
import copy
from dataclasses import replace
from typing import Any

import pytest
import torch
from pocket_tts import TTSModel

from bot.synthesis import windowed_attention
from bot.synthesis.batching import BatchedFlowLM, BatchedMimi, Request, prefill
from bot.synthesis.clip import read_file
from bot.synthesis.decoder_precision import HalfDecoder
from bot.synthesis.pocket_tts_adapter import StreamingMultiheadAttention
from bot.synthesis.windowed_attention import WindowedAttention, window_attention
from tests.conftest import TinyModel

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def every_slot(tiny_model: TinyModel) -> Any:
    return TTSModel.load_model(config=str(tiny_model.config))


@pytest.fixture(scope="module")
def windowed(every_slot: Any) -> Any:
    model = copy.deepcopy(every_slot)
    assert window_attention(model.mimi.decoder_transformer) > 0
    return model


def speak(model: Any, frames: int, joins: dict[int, int], capacity: int) -> list[torch.Tensor]:
    """Each frame's audio: rows join at the frames `joins` names (frame: rows joining), so
    their padding differs; a small `capacity` makes the batch compact its cache."""
    mimi = BatchedMimi(model, max_rows=sum(joins.values()), capacity=capacity)
    generator = torch.Generator().manual_seed(3)
    audio = []
    for frame in range(frames):
        for _ in range(joins.get(frame, 0)):
            mimi.join()
        latents = torch.randn(mimi.count, 1, model.flow_lm.ldim, generator=generator)
        audio.append(mimi.decode(latents))
    return audio


def test_the_window_decodes_what_every_slot_decodes(every_slot: Any, windowed: Any) -> None:
    mimi = BatchedMimi(windowed, max_rows=1)
    frames = 3 * mimi.context // mimi.per_latent  # past the context, compacting on the way
    joins = {0: 2, 5: 1, frames // 2: 1}
    want = speak(every_slot, frames, joins, capacity=2 * mimi.context)
    got = speak(windowed, frames, joins, capacity=2 * mimi.context)
    for frame, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a.shape == b.shape
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), frame


@pytest.fixture
def keys_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The keys each call of torch's attention is handed, from the test's start on."""
    keys: list[int] = []
    attention = windowed_attention.F.scaled_dot_product_attention

    def spy(q: torch.Tensor, k: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        keys.append(k.shape[2])
        return attention(q, k, *args, **kwargs)

    monkeypatch.setattr(windowed_attention.F, "scaled_dot_product_attention", spy)
    return keys


def test_torch_reads_only_the_window(windowed: Any, keys_read: list[int]) -> None:
    keys = keys_read
    mimi = BatchedMimi(windowed, max_rows=1)
    frames = 3 * mimi.context // mimi.per_latent
    speak(windowed, frames, {0: 2}, capacity=2 * mimi.context)
    assert keys
    # a decode adds `per_latent` queries; the first sees `context` keys, itself included
    assert max(keys) == mimi.context - 1 + mimi.per_latent


def test_every_streaming_attention_turns_once_and_the_half_decoder_has_them(
    every_slot: Any,
) -> None:
    model = copy.deepcopy(every_slot)
    attentions = [m for m in model.modules() if isinstance(m, StreamingMultiheadAttention)]
    assert any(m.context is None for m in attentions)  # the flow LM's
    assert any(m.context is not None for m in attentions)  # Mimi's
    assert window_attention(model) == len(attentions)
    assert window_attention(model) == 0  # already turned
    assert all(type(m) is WindowedAttention for m in attentions)
    half = HalfDecoder(every_slot.mimi)
    assert any(type(m) is WindowedAttention for m in half.transformer.modules())


def lm_steps(model: Any, voices: list[Any], steps: int) -> tuple[list[torch.Tensor], Any]:
    """Each step's latents, rows joining at different steps (their first slots differ) and
    the first leaving early, so that slots before every live row's first are left."""
    lm = BatchedFlowLM(model, max_rows=3)
    texts = {0: "Hello there, good morning friend.", 4: "A short one.", 6: "Fine."}
    out = []
    for step in range(steps):
        if step in texts:
            chunk = prefill(model, voices[step % 2], texts[step])[0]
            lm.join(
                Request(collections.deque(), _ignore, _ignore),
                replace(chunk, max_gen_len=10**9, frames_after_eos=10**9),
            )
        if step == 9:
            lm.leave(0)
        torch.manual_seed(step)
        out.append(torch.cat([latent for _, latent, _ in lm.step() if latent is not None]))
    return out, lm


def _ignore(*_: object) -> None:
    """A row's audio and end go nowhere."""


def test_the_flow_lm_reads_from_the_earliest_row_and_steps_as_before(
    every_slot: Any, tiny_model: TinyModel, keys_read: list[int]
) -> None:
    audio = torch.from_numpy(read_file(tiny_model.clip))
    voices = [
        every_slot.get_state_for_audio_prompt(audio[None, :]),
        every_slot.get_state_for_audio_prompt(audio[None, : audio.shape[0] // 2]),
    ]
    want, _ = lm_steps(every_slot, voices, 16)
    model = copy.deepcopy(every_slot)
    window_attention(model.flow_lm)
    got, lm = lm_steps(model, voices, 16)
    for step, (a, b) in enumerate(zip(got, want, strict=True)):
        assert torch.allclose(a, b, atol=1e-5, rtol=1e-4), step
    layers = sum(type(m) is WindowedAttention for m in model.flow_lm.modules())
    first = lm._first_slot()
    assert first > 0  # the first row left: the slots before the others' are no row's
    assert keys_read[-layers:] == [lm.offset - first] * layers  # the last step read there
