"""Every private torch name PocketVoice uses, in one place: the oneDNN packed matrix products
of `linear_packing`, which torch only offers as underscore operators (`torch.ops.mkldnn`,
the ones its own inductor and `torch.jit` freezing call). Written for torch `WRITTEN_FOR`
(`scripts/bootstrap.sh`'s `TORCH_SPEC`): after an upgrade, check this module first (`doctor`
warns when the installed version differs; `linear_packing` also checks at load that a packed
product still matches torch's own, and falls back to it when not). The rest of the bot calls
these functions, never the private names (tests/test_private_names.py checks); and a
tensor's version counter (`tensor_version`). Also here:
the one rewrite of torch's own, `compile_markers_skipped`, while pocket-tts imports."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

LIBRARY = "torch"  # the distribution name, for importlib.metadata
WRITTEN_FOR = "2.13.0"  # the version whose private names this module uses (any local build)


def reorder_linear_weight(weight: torch.Tensor, rows_hint: int) -> torch.Tensor:
    """`weight` (out x in) in oneDNN's packed layout, for products of about `rows_hint` rows."""
    packed: torch.Tensor = torch.ops.mkldnn._reorder_linear_weight(weight, rows_hint)
    return packed


def linear_pointwise(
    x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None
) -> torch.Tensor:
    """`x @ weight.T + bias` through oneDNN, with the weight packed by `reorder_linear_weight`."""
    product: torch.Tensor = torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")
    return product


def tensor_version(tensor: torch.Tensor) -> int:
    """The count of in-place changes torch keeps on `tensor` (autograd's version counter): a
    copy made from it is stale once this moves."""
    return tensor._version


@contextlib.contextmanager
def compile_markers_skipped() -> Iterator[None]:
    """While pocket-tts imports: its `@torch.compiler.disable` (one attention method) left as
    the plain function. That decorator only keeps `torch.compile` out of the method, and the
    bot never compiles; but applying it imports `torch._dynamo`, 1.4 of the ~4 CPU-s a
    process spends importing pocket-tts (2026-12-03), at every start of the bot."""

    def plain(fn: Callable[..., Any] | None = None, *_: Any, **__: Any) -> Any:
        return fn if fn is not None else (lambda f: f)

    marker = torch.compiler.disable
    torch.compiler.disable = plain
    try:
        yield
    finally:
        torch.compiler.disable = marker
