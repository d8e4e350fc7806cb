"""Mimi's decoder through ONNX Runtime and OpenVINO against torch, in one run (issue 35).

Neither runtime is one of the bot's dependencies: install them beside it, not into it,
  .venv/bin/pip install --target /tmp/runtimes onnxruntime onnx openvino
and name that folder. The real `english` architecture, random weights, one thread each. The
graph is the decoder without streaming over `--frames` frames from a fresh state (the
quantizer's projection, the upsampling, the transformer, SEANet): the same operations at the
same widths as the bot's decode of one frame a step, not its exact path (the bot's bf16
decoder adds channels-last transposed convolutions; its fp32 packs the products for oneDNN).
Printed per batch size: the median milliseconds per call of torch fp32, torch under bf16
autocast, ONNX Runtime fp32, OpenVINO fp32 and bf16, and each runtime's distance from torch
fp32 (relative L2).

Usage: .venv/bin/python bench/decoder_runtimes.py --runtimes /tmp/runtimes [--rows 1 8]
       [--frames 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

RUNS = 15
WARM_UP = 3


def whole_decoder(mimi: Any) -> Any:
    """`MimiModel.decode_from_latent` from a fresh state, as one module torch can export
    (torch is imported late: `--help` needs none of it)."""
    import torch

    from bot.synthesis.pocket_tts_adapter import init_states

    class WholeDecoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mimi = mimi

        def forward(self, latent: torch.Tensor) -> torch.Tensor:
            state = init_states(self.mimi, latent.shape[0], 64)
            return self.mimi.decode_from_latent(latent, state)

    return WholeDecoder().eval()


def median_ms(call: Callable[[], object]) -> float:
    for _ in range(WARM_UP):
        call()
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtimes", type=Path, help="where onnxruntime and openvino are")
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--frames", type=int, default=4)
    args = parser.parse_args()
    if args.runtimes is None:
        parser.error("--runtimes: the folder onnxruntime, onnx and openvino were installed in")
    sys.path.append(str(args.runtimes))

    import openvino
    import torch
    from pocket_tts import TTSModel

    from tests.tiny_model import write_random_config

    torch.set_num_threads(1)
    folder = Path(tempfile.mkdtemp(prefix="runtimes-"))
    model = TTSModel.load_model(config=str(write_random_config("english", folder)))
    decoder = whole_decoder(model.mimi)
    core = openvino.Core()
    print(f"english, random weights, {args.frames} frames a call, one thread; ms a call")
    print("rows  torch fp32  torch bf16   ORT fp32    OV fp32    OV bf16   ORT/torch  L2 ORT, OV")
    for rows in args.rows:
        print(measure(decoder, core, folder, rows, args.frames), flush=True)


def measure(decoder: Any, core: Any, folder: Path, rows: int, frames: int) -> str:
    """One batch size's line: each runtime's median ms a call, and its distance from torch."""
    import numpy as np
    import onnxruntime
    import torch

    latent = torch.randn(rows, frames, 32)
    with torch.no_grad():
        expected = decoder(latent).numpy()
        path = folder / f"decoder-{rows}.onnx"
        torch.onnx.export(decoder, (latent,), str(path), opset_version=17, dynamo=False)

        def bf16() -> object:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return decoder(latent)

        torch_fp32, torch_bf16 = median_ms(lambda: decoder(latent)), median_ms(bf16)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options)
    feed = {session.get_inputs()[0].name: latent.numpy()}
    ort_ms = median_ms(lambda: session.run(None, feed))
    requests = {
        hint: core.compile_model(
            core.read_model(str(path)),
            "CPU",
            {"INFERENCE_PRECISION_HINT": hint, "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1},
        ).create_infer_request()
        for hint in ("f32", "bf16")
    }
    ov_ms = {
        hint: median_ms(lambda r=request: r.infer({0: latent.numpy()}))
        for hint, request in requests.items()
    }

    def distance(audio: np.ndarray) -> float:
        return float(np.linalg.norm(audio - expected) / np.linalg.norm(expected))

    ort_l2 = distance(session.run(None, feed)[0])
    ov_l2 = distance(next(iter(requests["f32"].infer({0: latent.numpy()}).values())))
    return (
        f"{rows:4d} {torch_fp32:11.1f} {torch_bf16:11.1f} {ort_ms:10.1f} {ov_ms['f32']:10.1f}"
        f" {ov_ms['bf16']:10.1f} {ort_ms / torch_fp32:11.2f}  {ort_l2:.1e}, {ov_l2:.1e}"
    )


if __name__ == "__main__":
    main()
