"""A model's weights in bytes, read from its pocket-tts config before it is loaded.

The model pool checks its memory budget (`TTS_MEMORY_MB`) before a load starts, so it must
know a model's size first. This builds the model's modules as `TTSModel.load_model` does, on
torch's `meta` device: shapes and dtypes only, no memory, no weights and no tokenizer to
fetch, in milliseconds. Their bytes are counted as the engine counts a loaded model
(`weights_nbytes`); with `TTS_QUANTIZE` the int8 layers' weights take one byte each.

The construction mirrors pocket-tts's own (`FlowLMModel.from_pydantic_config` without the
tokenizer, the voice-cloning projection, `build_mimi`), written for `WRITTEN_FOR` of
`pocket_tts_adapter`; tests/synthesis/test_model_size.py compares the names and shapes with a
real load, so an upgrade that changes them fails there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import torch
from torch import nn

from bot.synthesis.engine import weights_nbytes

INT8_SAVING = 3  # bytes per weight of a layer quantized to int8 (fp32: 4 bytes, int8: 1)


class _TableOnly(nn.Module):
    """`LUTConditioner`'s weights (same names and shapes) without its tokenizer."""

    def __init__(self, n_bins: int, dim: int, rank: int | None) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_bins + 1, rank or dim)  # + 1: padding
        self.proj = None if rank is None else nn.Linear(rank, dim, bias=False)


def model_skeleton(config: Any) -> nn.Module:
    """The `TTSModel` of a loaded pocket-tts `Config`, as modules on the meta device."""
    from bot.synthesis.pocket_tts_adapter import (
        FlowLMModel,
        SimpleMLPAdaLN,
        StreamingTransformer,
        build_mimi,
    )

    lm, latent_dim = config.flow_lm, config.mimi.quantizer.dimension
    d_model, table = lm.transformer.d_model, lm.lookup_table
    with torch.device("meta"):
        flow_lm = FlowLMModel(
            conditioner=_TableOnly(table.n_bins, table.dim, table.rank),
            flow_net=SimpleMLPAdaLN.from_pydantic_config(lm, latent_dim, lm.z_dim or d_model),
            transformer=StreamingTransformer.from_pydantic_config(lm.transformer),
            dim=d_model,
            ldim=latent_dim,
            dtype=getattr(torch, lm.dtype),
            insert_bos_before_voice=lm.insert_bos_before_voice,
            flow_type=lm.flow.type,
            z_dim=lm.z_dim,
        )
        flow_lm.speaker_proj_weight = nn.Parameter(
            torch.zeros(d_model, config.mimi.inner_dim or config.mimi.seanet.dimension)
        )
        model = nn.Module()
        model.flow_lm = flow_lm
        model.mimi = build_mimi(config.mimi)
    return model


def _int8_weights(flow_lm: nn.Module) -> int:
    """The weights that `TTS_QUANTIZE` makes int8: as pocket-tts's `RECOMMENDED_CONFIG`,
    every linear layer of each transformer layer's attention and feed-forward part."""
    count = 0
    for layer in flow_lm.transformer.layers:  # type: ignore[union-attr]  # modules, typed loosely
        linears = [m for m in layer.self_attn.modules() if isinstance(m, nn.Linear)]
        linears += [layer.linear1, layer.linear2]
        count += sum(linear.weight.nelement() for linear in linears)
    return count


def config_weights_bytes(config: Path | str, quantize: bool = False) -> int:
    """The bytes of weights the model of this config holds once loaded (as the engine's
    `model_bytes`). Blocking (reads the YAML): run in a thread."""
    from bot.synthesis.pocket_tts_adapter import load_config

    model = model_skeleton(load_config(config))
    size = weights_nbytes(model)
    if quantize:
        size -= INT8_SAVING * _int8_weights(cast("nn.Module", model.flow_lm))
    return size
