"""Mimi's decoder in bfloat16 (`TTS_DECODER_PRECISION`): close to fp32, the same in a batch
as alone, and chosen by the CPU's flags."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import torch
from pocket_tts import TTSModel

from bot.core.config import ConfigError, load_config
from bot.synthesis import decoder_precision
from bot.synthesis.batching import BatchedMimi
from bot.synthesis.decoder_precision import (
    ChannelsLastConvTranspose1d,
    HalfDecoder,
    cpu_has_bf16,
    half_decoder,
    wants_half,
)
from tests.conftest import TinyModel

pytestmark = pytest.mark.unit
# bfloat16 keeps 8 bits of mantissa: the decoder's audio differs from fp32's by about 0.6% of
# its level (relative L2) here; the bound leaves room for other weights and CPUs
RELATIVE_L2 = 0.03
FRAMES = 24


@pytest.fixture(scope="module")
def fp32_model(tiny_model: TinyModel) -> Any:
    return TTSModel.load_model(config=str(tiny_model.config))


@pytest.fixture(scope="module")
def half_model(fp32_model: Any) -> Any:
    model = copy.deepcopy(fp32_model)
    model.half_decoder = HalfDecoder(model.mimi)
    return model


def latents(model: Any, rows: int, frames: int = FRAMES) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(7)
    return [torch.randn(rows, 1, model.flow_lm.ldim, generator=generator) for _ in range(frames)]


def decode(model: Any, frames: list[torch.Tensor], capacity: int = 1024) -> torch.Tensor:
    """Each row's audio, `[rows, samples]`, decoded a frame at a time in one batch."""
    mimi = BatchedMimi(model, max_rows=frames[0].shape[0], capacity=capacity)
    for _ in range(frames[0].shape[0]):
        mimi.join()
    return torch.cat([mimi.decode(frame) for frame in frames], dim=1)


def relative_l2(got: torch.Tensor, want: torch.Tensor) -> float:
    return float((got - want).norm() / want.norm())


def test_the_bf16_decoder_sounds_as_fp32_within_the_bound(fp32_model: Any, half_model: Any) -> None:
    frames = latents(fp32_model, rows=3)
    want, got = decode(fp32_model, frames), decode(half_model, frames)
    assert got.dtype == torch.float32 and got.shape == want.shape
    error = relative_l2(got, want)
    assert 0 < error < RELATIVE_L2  # not fp32 (0), and close to it


def test_a_row_in_a_bf16_batch_sounds_as_the_same_row_alone(half_model: Any) -> None:
    frames = latents(half_model, rows=4)
    batch = decode(half_model, frames)
    for row in (0, 3):
        alone = decode(half_model, [frame[row : row + 1] for frame in frames])[0]
        assert relative_l2(batch[row], alone) < 0.01


def test_the_bf16_decoder_state_survives_compaction(fp32_model: Any, half_model: Any) -> None:
    """A small capacity makes the batch drop dead slots and re-rotate its keys (in fp32,
    then back to bfloat16): the audio stays as close to fp32's."""
    frames = latents(fp32_model, rows=2, frames=48)
    want = decode(fp32_model, frames, capacity=64)
    got = decode(half_model, frames, capacity=64)
    assert relative_l2(got, want) < RELATIVE_L2


def test_the_half_keeps_the_upsampling_in_fp32_and_is_shared_by_replicas(
    half_model: Any,
) -> None:
    half = half_decoder(half_model)
    assert half is not None
    assert all(p.dtype == torch.bfloat16 for p in half.decoder.parameters())
    assert all(p.dtype == torch.bfloat16 for p in half.transformer.parameters())
    assert all(p.dtype == torch.float32 for p in half_model.mimi.parameters())  # untouched
    assert any(isinstance(m, ChannelsLastConvTranspose1d) for m in half.decoder.modules())
    assert half_decoder(copy.deepcopy(half_model)) is half
    mimi = BatchedMimi(half_model, max_rows=2)
    dtypes = {
        name: {value.dtype for value in state.values() if value.is_floating_point()}
        for name, state in mimi.state.items()
    }
    assert dtypes["upsample.convtr"] == {torch.float32}
    assert all(d == {torch.bfloat16} for n, d in dtypes.items() if HalfDecoder.holds(n) and d)


def test_an_fp32_model_has_no_half(fp32_model: Any) -> None:
    assert half_decoder(fp32_model) is None


def test_channels_last_transposed_convolution_is_the_same_product() -> None:
    torch.manual_seed(0)
    for cin, cout, kernel, stride, groups in ((16, 8, 8, 4, 1), (12, 12, 6, 3, 12)):
        conv = torch.nn.ConvTranspose1d(cin, cout, kernel, stride=stride, groups=groups)
        x = torch.randn(3, cin, 20)
        want = conv(x)
        conv.__class__ = ChannelsLastConvTranspose1d
        assert torch.allclose(conv(x), want, atol=1e-5)
        with torch.no_grad():  # its 2-D weight is made once, and again when the weight changes
            conv.weight.mul_(2)
        conv.__class__ = torch.nn.ConvTranspose1d
        want = conv(x)
        conv.__class__ = ChannelsLastConvTranspose1d
        assert torch.allclose(conv(x), want, atol=1e-5)


def cpuinfo(tmp_path: Path, flags: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(f"processor\t: 0\nflags\t\t: fpu sse2 {flags}\n\n", encoding="utf-8")
    return path


def test_the_cpu_flags_decide_auto(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cpu_has_bf16(cpuinfo(tmp_path, "avx512f avx512_bf16"))
    assert cpu_has_bf16(cpuinfo(tmp_path, "amx_bf16 amx_tile"))
    assert not cpu_has_bf16(cpuinfo(tmp_path, "avx512f avx2"))
    assert not cpu_has_bf16(tmp_path / "missing")
    assert wants_half("bf16") and not wants_half("fp32")
    for has in (True, False):
        monkeypatch.setattr(decoder_precision, "cpu_has_bf16", lambda has=has: has)
        assert wants_half("auto") is has


def settings(**env: str) -> Any:
    return load_config(env, dotenv_path=None, require_token=False)


def test_the_setting_is_checked() -> None:
    assert settings().tts_decoder_precision == "auto"
    assert settings(TTS_DECODER_PRECISION="FP32").tts_decoder_precision == "fp32"
    with pytest.raises(ConfigError, match="TTS_DECODER_PRECISION must be auto, fp32 or bf16"):
        settings(TTS_DECODER_PRECISION="fp16")
