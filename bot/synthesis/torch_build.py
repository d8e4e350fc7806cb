"""The torch build the model runs on, as `doctor` reports it (torch is imported only in
`bot/synthesis/`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TorchBuild:
    version: str
    cuda: str | None  # the CUDA version of a CUDA build, None for a CPU build
    threads: int
    int8_engines: tuple[str, ...]  # the quantized engines that can run int8 ("none" left out)


def torch_build() -> TorchBuild:
    import torch

    return TorchBuild(
        version=torch.__version__,
        cuda=torch.version.cuda,
        threads=torch.get_num_threads(),
        int8_engines=tuple(e for e in torch.backends.quantized.supported_engines if e != "none"),
    )
