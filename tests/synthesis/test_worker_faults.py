"""Worker processes that cannot wedge: what fails on the way to a worker (a full `/dev/shm`,
a descriptor limit, a worker killed mid-batch, a state that cannot be sent) ends that request
within 10 s with its cause; the other streams go on; later requests in other voices are
spoken. Each voice state crosses to a worker once (`bot.synthesis.state_transfer`)."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from bot.synthesis.batching import Request, prefill_chunks
from bot.synthesis.engine import TTSEngine
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.model_errors import StreamRefused
from bot.synthesis.pipeline_processes import ProcessPipeline, WorkerDied
from bot.synthesis.state_transfer import StateDigests, pack, unpack
from tests.conftest import TinyModel, engine_settings
from tests.synthesis.speak_voices import ENDS_WITHIN_S, TEXT, speak

pytestmark = pytest.mark.process  # worker processes
REPO = Path(__file__).resolve().parents[2]


def distinct_voices(tiny_model: TinyModel, folder: Path, count: int, first: int = 0) -> list[Path]:
    """`count` voice states of the tiny model, each its own (the same shapes, other values)."""
    folder.mkdir(parents=True, exist_ok=True)
    state = load_file(str(tiny_model.voice_state))
    voices = []
    for n in range(first, first + count):
        generator = torch.Generator().manual_seed(n)
        voice = {
            key: tensor + 0.01 * torch.randn(tensor.shape, generator=generator, dtype=tensor.dtype)
            if tensor.is_floating_point()
            else tensor
            for key, tensor in state.items()
        }
        voices.append(folder / f"voice{n:02d}.safetensors")
        save_file(voice, str(voices[-1]))
    return voices


async def engine_of(tiny_model: TinyModel, count: int) -> AsyncIterator[TTSEngine]:
    settings = engine_settings(
        tiny_model.config,
        tiny_model.clip,
        TTS_PIPELINES=str(count),
        TTS_PIPELINE_MODE="processes",
        TTS_BATCH="2",
    )
    engine = await load_engine(settings)
    yield engine
    await engine.close()


@pytest.fixture
async def engine(tiny_model: TinyModel) -> AsyncIterator[TTSEngine]:
    """Two worker processes of two rows each, as on a 4-core machine."""
    async for made in engine_of(tiny_model, 2):
        yield made


@pytest.fixture
async def one_worker(tiny_model: TinyModel) -> AsyncIterator[TTSEngine]:
    """One worker process of two rows: for a test of one worker (another would only wait,
    and take 4 CPU-s to start)."""
    async for made in engine_of(tiny_model, 1):
        yield made


def workers(engine: TTSEngine, count: int = 2) -> list[ProcessPipeline]:
    assert engine.pipelines is not None
    found = [p for p in engine.pipelines.pipelines if isinstance(p, ProcessPipeline)]
    assert len(found) == count
    return found


def all_spoken(results: list[dict[str, Any]], count: int) -> None:
    assert len(results) == count, results
    for result in results:
        assert result["error"] is None and result["samples"] > 0, result
        assert result["took"] < ENDS_WITHIN_S, result


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare (util-linux)")
def test_a_dev_shm_too_small_for_one_voice_state_silences_no_voice(
    tiny_model: TinyModel, tmp_path: Path
) -> None:
    """As in a container whose /dev/shm is full: a tmpfs of 16 KB (a tiny voice state is
    160 KB) on /dev/shm in a user and mount namespace of the speaking process's own."""
    voices = distinct_voices(tiny_model, tmp_path, 6)
    script = 'mount -t tmpfs -o size=16k tmpfs /dev/shm && exec "$@"'
    command = [
        *("unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh"),
        *(sys.executable, "-m", "tests.synthesis.speak_voices"),
        *(str(tiny_model.config), str(tiny_model.clip), *map(str, voices)),
    ]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    shm = results.pop(0)
    assert shm["shm_bytes"] <= 16 * 1024, shm  # it ran where a state cannot be shared
    all_spoken(results, len(voices))


async def test_a_worker_at_its_descriptor_limit_speaks_every_voice(
    engine: TTSEngine, tiny_model: TinyModel, tmp_path: Path
) -> None:
    """Each worker's RLIMIT_NOFILE lowered to what it holds now and a few more: a voice state
    needs no descriptor of its own, so 8 voices, one after the other, are spoken, and a
    stream in another voice speaking meanwhile goes on whole."""
    for worker in workers(engine):
        pid = worker.process.pid
        assert pid is not None
        held = len(os.listdir(f"/proc/{pid}/fd"))
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (held + 6, held + 6))
    beside = asyncio.create_task(speak(engine, str(tiny_model.voice_state)))
    voices = distinct_voices(tiny_model, tmp_path, 8)
    results = [await speak(engine, str(voice)) for voice in voices]
    all_spoken([*results, await beside], len(voices) + 1)


async def test_a_worker_killed_mid_batch_ends_its_streams_and_others_speak_on(
    engine: TTSEngine, tiny_model: TinyModel, tmp_path: Path
) -> None:
    """Two streams, one on each worker; the worker of one is killed while it speaks: that
    stream ends with WorkerDied within 10 s, the other ends whole, and once the worker is
    replaced, other voices are spoken."""
    pipelines = engine.pipelines
    assert pipelines is not None
    long = " ".join([TEXT] * 6)
    heard = [asyncio.Event(), asyncio.Event()]
    ended: dict[int, BaseException | None] = {}
    two = distinct_voices(tiny_model, tmp_path / "two", 2)  # two servers, a voice each
    streams = [engine.stream(long, str(voice)) for voice in two]

    async def listen(n: int) -> None:
        try:
            async for _ in streams[n]:
                heard[n].set()
            ended[n] = None
        except Exception as error:
            ended[n] = error

    listening = [asyncio.create_task(listen(n)) for n in range(2)]
    await asyncio.wait_for(asyncio.gather(*(h.wait() for h in heard)), 60)
    assert sorted(pipelines.loads()) == [1, 1]  # one on each worker
    doomed = workers(engine)[0]
    assert doomed.process.pid is not None
    os.kill(doomed.process.pid, signal.SIGKILL)
    done, _ = await asyncio.wait(listening, timeout=ENDS_WITHIN_S, return_when="FIRST_COMPLETED")
    assert done, "no stream ended within 10 s of its worker's death"
    await asyncio.wait_for(asyncio.gather(*listening), 60)
    assert sorted(map(type, ended.values()), key=str) == sorted([type(None), WorkerDied], key=str)
    await asyncio.wait_for(asyncio.to_thread(wait_replaced, engine, doomed), 120)
    voices = distinct_voices(tiny_model, tmp_path, 4, first=2)
    all_spoken([await speak(engine, str(voice)) for voice in voices], len(voices))


def wait_replaced(engine: TTSEngine, doomed: ProcessPipeline) -> None:
    """Until a new worker has taken the dead one's place and loaded its model."""
    assert engine.pipelines is not None
    while doomed in engine.pipelines.pipelines:
        threading.Event().wait(0.1)
    for pipeline in workers(engine):
        pipeline.wait_ready(120)


async def test_a_stream_that_cannot_be_sent_ends_with_its_cause_and_the_worker_goes_on(
    one_worker: TTSEngine, tiny_model: TinyModel, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever fails on the way (here a state torch cannot save): that stream ends at once,
    logged once with its cause; the same worker speaks the next stream."""
    (worker,) = workers(one_worker, 1)
    good = await one_worker.voice_state(str(tiny_model.voice_state))
    endings: collections.deque[BaseException | None] = collections.deque()

    def request(state: Any) -> Request:
        made = Request(
            collections.deque(),
            emit=lambda chunk: None,
            end=endings.append,
            prepare=lambda model: prefill_chunks(model, state, TEXT),
        )
        made.work = (state, TEXT)
        return made

    bad = {"transformer": {"cache": lambda: None}}  # not a tensor: cannot be sent
    assert await asyncio.to_thread(worker.submit, request(bad)) is True
    assert isinstance(endings.popleft(), StreamRefused)
    assert caplog.text.count("could not be sent to its worker") == 1
    assert await asyncio.to_thread(worker.submit, request(good)) is True
    for _ in range(600):
        if endings:
            break
        await asyncio.sleep(0.1)
    assert list(endings) == [None]


def test_a_voice_state_crosses_once_under_the_digest_of_its_bytes(
    tiny_model: TinyModel,
) -> None:
    """The same object is packed once; equal states share a digest, other states do not;
    the bytes come back as the same tensors."""
    state = {"a": {"cache": torch.randn(2, 3), "offset": torch.tensor([4])}}
    twin = {"a": {"cache": state["a"]["cache"].clone(), "offset": torch.tensor([4])}}
    other = {"a": {"cache": state["a"]["cache"] + 1e-6, "offset": torch.tensor([4])}}
    digests = StateDigests()
    key, payload = digests.of(state)
    assert payload is not None and digests.of(state) == (key, None)
    assert digests.of(twin)[0] == key and digests.of(other)[0] != key
    back = unpack(pack(state))
    assert torch.equal(back["a"]["cache"], state["a"]["cache"])
    assert np.array_equal(back["a"]["offset"].numpy(), [4])
