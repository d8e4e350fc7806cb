"""Mimi's decoder in bfloat16, where the CPU multiplies bfloat16 natively (AVX512-BF16, AMX).

The decoder is the batch's wall at 8 rows and more: one decode costs as much as an LM step.
Its transformer's products and its convolutions hold most of that time, and on a CPU with
AVX512-BF16 torch runs those products in bfloat16 through oneDNN several times faster, and
the transposed convolutions faster again in a channels-last 2-D layout.

So `HalfDecoder` holds a bfloat16 copy of the decoder's half of Mimi: its transformer and its
SEANet decoder. The depthwise upsampling before them stays fp32: in bfloat16 it falls to a
slow kernel. The audio differs from fp32's by under 1% of its level
(`tests/synthesis/test_decoder_precision.py` holds the bound). pocket-tts's own modules are
left as they are: clones, voice states and the unbatched path run in fp32. The figures:
docs/performance.md, "The decoder in bfloat16".

`TTS_DECODER_PRECISION`: `auto` (bf16 where the CPU has it, the default), `fp32`, `bf16`.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from bot.synthesis.torch_private import tensor_version
from bot.synthesis.windowed_attention import window_attention

log = logging.getLogger(__name__)

PRECISIONS = ("auto", "fp32", "bf16")
HALF = torch.bfloat16
# The state of the modules under these names (ModelState keys) is kept in bfloat16
HALF_MODULES = ("decoder_transformer.", "decoder.")
_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """The CPU multiplies bfloat16 natively (Linux's flags; elsewhere: no)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[-1].split())
            return any(flag in flags for flag in _CPU_FLAGS)
    return False


def wants_half(precision: str) -> bool:
    """Whether `TTS_DECODER_PRECISION` asks for the bfloat16 decoder on this machine."""
    if precision == "auto":
        return cpu_has_bf16()
    return precision == "bf16"


class ChannelsLastConvTranspose1d(nn.ConvTranspose1d):
    """The same transposed convolution, run as a 2-D one in channels-last layout, which
    oneDNN runs far faster in bfloat16. Attributes and weights are the 1-D module's."""

    def _weight_2d(self) -> torch.Tensor:
        """The weight in the 2-D channels-last layout, made once, not at every call (it
        copied 3 MB a decode: 0.7 ms at 8 rows), and again if the weight changes."""
        key = (self.weight.data_ptr(), tensor_version(self.weight), self.weight.dtype)
        cached = self.__dict__.get("_weight_2d_cache")
        if cached is None or cached[0] != key:
            weight = self.weight.detach().unsqueeze(2)
            cached = (key, weight.contiguous(memory_format=torch.channels_last))
            self.__dict__["_weight_2d_cache"] = cached
        return cached[1]

    def forward(self, x: torch.Tensor, output_size: list[int] | None = None) -> torch.Tensor:
        assert output_size is None
        image = x.unsqueeze(2).contiguous(memory_format=torch.channels_last)
        out = F.conv_transpose2d(
            image,
            self._weight_2d(),
            self.bias,
            stride=(1, self.stride[0]),
            padding=(0, self.padding[0]),  # type: ignore[arg-type]  # ints: never "same" here
            output_padding=(0, self.output_padding[0]),
            groups=self.groups,
            dilation=(1, self.dilation[0]),
        )
        return out.squeeze(2).contiguous()


def _half_copy(module: nn.Module) -> nn.Module:
    """A bfloat16 copy of `module` with channels-last transposed convolutions (a subclass
    that only runs them another way) and the attention cut to its window
    (`windowed_attention`); the copies keep pocket-tts's state names. `module`'s
    linears must not be packed yet (`linear_packing`'s oneDNN layout cannot be copied)."""
    copied = copy.deepcopy(module)
    window_attention(copied)
    for parent in list(copied.modules()):
        for child in list(parent.children()):
            if type(child) is nn.ConvTranspose1d:
                child.__class__ = ChannelsLastConvTranspose1d
    return copied.to(HALF).eval()


class HalfDecoder:
    """The decoder's half of a Mimi model in bfloat16 (built before its linears are packed).

    Shared, not copied, by the model's replicas: its modules keep no state of their own (the
    state is the `ModelState` each caller passes), as pocket-tts's modules do not."""

    def __init__(self, mimi: Any) -> None:
        self.mimi = mimi
        self.transformer = _half_copy(mimi.decoder_transformer)
        self.decoder = _half_copy(mimi.decoder)

    def __deepcopy__(self, memo: dict[int, Any]) -> HalfDecoder:
        return self

    @staticmethod
    def holds(state_name: str) -> bool:
        """Whether a ModelState entry belongs to the bfloat16 half."""
        return state_name.startswith(HALF_MODULES)

    def cast_state(self, state: dict[str, dict[str, torch.Tensor]]) -> None:
        """Turn the bfloat16 half's float state (caches, convolution tails) to bfloat16."""
        for name, module_state in state.items():
            if self.holds(name):
                for key, value in module_state.items():
                    if value.is_floating_point():
                        module_state[key] = value.to(HALF)

    @torch.no_grad()
    def decode(self, latents: torch.Tensor, state: dict[str, Any]) -> torch.Tensor:
        """Mimi's `decode_from_latent` with its decoder half in bfloat16: audio in fp32."""
        mimi = self.mimi
        latent = mimi.quantizer(latents.transpose(-1, -2))
        if mimi.encoder_frame_rate != mimi.frame_rate:
            latent = mimi.upsample(latent, state)
        (emb,) = self.transformer(latent.to(HALF), state)
        audio: torch.Tensor = self.decoder(emb, state).float()
        return audio


def attach(model: Any, precision: str) -> bool:
    """Give `model` a bfloat16 decoder (`half_decoder`) when `precision` asks for one here.
    Call before `pack_linears`. Whether it did."""
    if not wants_half(precision):
        return False
    model.half_decoder = HalfDecoder(model.mimi)
    log.info("Mimi's decoder runs in bfloat16 (TTS_DECODER_PRECISION=%s)", precision)
    return True


def half_decoder(model: Any) -> HalfDecoder | None:
    """The model's bfloat16 decoder, if `attach` gave it one."""
    half = vars(model).get("half_decoder")
    return half if isinstance(half, HalfDecoder) else None
