"""The model's large fp32 matrix products through oneDNN, with each weight packed once.

torch's `nn.Linear` on the CPU calls MKL, which multiplies a few rows by a weight one row at
a time, so a flow-LM step of 2 to 8 rows costs nearly as much per row as a step of one.
oneDNN, given the weight in its own packed layout, runs those products several times faster;
at one row MKL stays faster, so a one-row product still goes to it and each packed layer
keeps its dense weight for that (the weight's size again in memory). The figures:
docs/performance.md, "Precision: int8 and fp32".

Only layers of at least `MIN_WEIGHTS` weights are packed: below that, a oneDNN call's fixed
cost is more than it saves. int8 layers (`TTS_QUANTIZE`) are not `nn.Linear` and stay as they
are. Results are the same products, summed in another order (within 1e-6 of MKL's,
relatively).
"""

from __future__ import annotations

import logging
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from bot.synthesis.torch_private import linear_pointwise, reorder_linear_weight

log = logging.getLogger(__name__)

MIN_WEIGHTS = 1024 * 1024  # in x out: the transformer's products, not the small heads
ROWS_HINT = 8  # the batch sizes oneDNN packs for; 2 to 16 rows all run well with it


class PackedLinear(nn.Module):
    """`nn.Linear` with its weight also in oneDNN's packed layout, used from 2 rows up."""

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.weight = linear.weight  # dense: one-row products, and what pocket-tts reads
        self.bias = linear.bias
        packed = reorder_linear_weight(linear.weight.detach(), ROWS_HINT)
        self.packed: torch.Tensor
        self.register_buffer("packed", packed, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.numel() == self.in_features:  # one row
            return F.linear(x, self.weight, self.bias)
        return linear_pointwise(x, self.packed, self.bias)


def _supported() -> bool:
    """oneDNN is in this torch build, and a packed product matches MKL's."""
    if not torch.backends.mkldnn.is_available():  # type: ignore[no-untyped-call]  # torch's own
        return False
    try:
        with torch.no_grad():
            linear = nn.Linear(64, 32)
            x = torch.randn(4, 1, 64)
            packed = PackedLinear(linear)(x)
            return bool(torch.allclose(packed, linear(x), rtol=1e-4, atol=1e-5))
    except (RuntimeError, AttributeError):  # no such op in this build
        return False


def pack_linears(model: Any) -> int:
    """Swap the large fp32 `nn.Linear` layers of the model's flow LM and Mimi for
    `PackedLinear`; returns how many. Does nothing where oneDNN is missing."""
    if not _supported():
        log.info("oneDNN is not usable in this torch build: matrix products stay on MKL")
        return 0
    count = 0
    for root in (model.flow_lm, model.mimi):
        for parent in list(root.modules()):
            for name, child in list(parent.named_children()):
                if type(child) is nn.Linear and (
                    child.in_features * child.out_features >= MIN_WEIGHTS
                ):
                    setattr(parent, name, PackedLinear(child))
                    count += 1
    return count
