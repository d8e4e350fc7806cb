"""Loading a model into a `TTSEngine`: the weights (int8 or not, from pocket-tts's cache or
a local config), the batch size measured on this machine (once per process and model), the
worker processes' way to load the same, and the fingerprint voice states are kept under."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

from bot.core.config import Config, usable_cores
from bot.synthesis import decoder_precision
from bot.synthesis.batching import cost_sizes, measure_costs
from bot.synthesis.capacity import BatchCost, choose_batch
from bot.synthesis.engine import TTSEngine, pipeline_cores, replicate
from bot.synthesis.linear_packing import pack_linears
from bot.synthesis.model_errors import ModelUnavailableError
from bot.synthesis.phrase_cache import PhraseCache
from bot.synthesis.pocket_tts_adapter import (
    generation_length,
    get_default_voice_for_language,
    set_generation_length,
)
from bot.synthesis.windowed_attention import window_attention

log = logging.getLogger(__name__)
T = TypeVar("T")
SPARE_LANES = 1  # model threads beyond TTS_WORKERS, for urgent units only
# (model, int8, decoder, TTS_BATCH, cores a pipeline) -> (the largest batch, the start-up costs)
_CHOSEN_BATCH: dict[tuple[str, bool, str, int, int], tuple[int, list[BatchCost]]] = {}


def load_in_worker(config: Config, length: tuple[float, float]) -> Any:
    """A pipeline's worker process: the model as `load_engine` sets it up, generating
    as long as in the bot's process (`set_generation_length`)."""
    set_generation_length(*length)
    return load_model(config)


def processes(config: Config, pipelines: int) -> bool:
    """Whether the pipelines run as worker processes (TTS_PIPELINE_MODE; `auto`: when there
    is more than one, where threads would share one interpreter lock)."""
    mode = config.tts_pipeline_mode
    return mode == "processes" or (mode == "auto" and pipelines > 1)


def _weights_unavailable(spec: str, error: BaseException) -> ModelUnavailableError:
    return ModelUnavailableError(
        f"Could not download the Pocket TTS weights for {spec} ({type(error).__name__}). "
        "Check the network, or set HF_TOKEN (after accepting the model licence on Hugging Face) "
        "for the gated voice-cloning weights, or set TTS_CONFIG to a local model config."
    )


LOAD_NICENESS = 10  # a model loading while others speak yields the CPU to them


async def at_low_priority(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a thread of its own at lower CPU priority. On Linux the nice value is
    per thread, so the speaking threads keep theirs; elsewhere this is just a thread."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(result: Any, error: BaseException | None) -> None:
        if future.done():  # the caller gave up
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run() -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOAD_NICENESS)
        try:
            result = fn(*args)
        except BaseException as error:  # delivered to the caller, not swallowed
            loop.call_soon_threadsafe(deliver, None, error)
        else:
            loop.call_soon_threadsafe(deliver, result, None)

    threading.Thread(target=run, name="tts-load", daemon=True).start()
    return await future


async def load_engine(
    config: Config,
    batch: int | None = None,
    *,
    background: bool = False,
    phrases: Path | None = None,
) -> TTSEngine:
    """Load the model in the engine's worker thread (never on the event loop).

    `batch`: the batch size, when already known (another language's model of the same
    size): measuring it takes seconds of both cores, which speaking servers need.
    `background`: others are speaking: load in a thread of lower CPU priority.
    `phrases`: the folder of the phrase cache, kept per model fingerprint."""
    workers = config.tts_workers
    threads = workers + SPARE_LANES
    executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tts-engine")
    loop = asyncio.get_running_loop()

    async def run(fn: Callable[..., T], *args: Any) -> T:
        if background:
            return await at_low_priority(fn, *args)
        return await loop.run_in_executor(executor, fn, *args)

    try:
        model = await run(load_model, config)
        replicas = [await run(replicate, model) for _ in range(threads - 1)]
    except BaseException:
        executor.shutdown(wait=False)
        raise
    costs = None
    pipelines = config.tts_pipelines if (batch or config.tts_batch) > 1 else 1
    if batch is None:
        batch, costs = await measured_batch(config, executor, model)
        if pipelines > 1 and config.tts_batch > 1:
            # the operator asked for pipelines: each stays a batch, even where the start-up
            # table (a pipeline's share of the cores, timed with the machine idle) fits one
            # row; the live figures still decide how many run (`StepCosts.capacity`)
            batch = max(2, batch)
    default_voice = config.default_voice or language_default_voice(config)
    fingerprint = model_fingerprint(config)
    # Not on the event loop: the batched engine copies the model and sets up its batch
    # (0.4 s alone, over 1 s beside speech), and every stream's audio passes the loop.
    engine = await run(
        functools.partial(
            TTSEngine,
            model,
            default_voice=default_voice,
            fingerprint=fingerprint,
            executor=executor,
            replicas=replicas,
            spare_lanes=SPARE_LANES,
            batch=batch,
            costs=costs,
            phrases=None if phrases is None else PhraseCache(phrases, fingerprint),
            pipelines=pipelines,
            source=worker_source(config) if processes(config, pipelines) else None,
        )
    )
    log.info("%s", engine.describe())
    if not engine.has_voice_cloning:
        log.warning(
            "These weights cannot clone voices (the gated weights need an accepted licence "
            "and HF_TOKEN): only built-in voices and exported voice states will work."
        )
    return engine


async def measured_batch(
    config: Config, executor: Any, model: Any
) -> tuple[int, list[BatchCost] | None]:
    """As large as the measured costs allow, at most TTS_BATCH, and those costs
    (measured once per process and model)."""
    batch = config.tts_batch
    if batch <= 1:
        return batch, None
    cores = pipeline_cores(config.tts_pipelines)
    key = (
        model_fingerprint(config),
        config.tts_quantize,
        config.tts_decoder_precision,
        batch,
        cores,
    )
    if key not in _CHOSEN_BATCH:
        loop = asyncio.get_running_loop()
        _CHOSEN_BATCH[key] = await loop.run_in_executor(executor, batch_size, model, batch, cores)
    return _CHOSEN_BATCH[key]


def batch_size(model: Any, largest: int, cores: int = 0) -> tuple[int, list[BatchCost]]:
    """Measure the step costs on this machine and choose the largest batch from them,
    for a pipeline of `cores` cores (0: all the process's)."""
    costs = measure_costs(model, cost_sizes(largest))
    frame_s = 1 / model.mimi.frame_rate
    chosen = choose_batch(costs, frame_s, cores or usable_cores())
    table = ", ".join(f"{c.rows}: {c.lm_s * 1000:.0f}+{c.decode_s * 1000:.0f} ms" for c in costs)
    log.info("step costs by batch size (LM+decoder): %s; largest batch %d", table, chosen)
    return chosen, costs


def worker_source(config: Config) -> Callable[[], Any]:
    """The model loaded as here, in a worker process: the settings it needs go over, not
    the secrets (HF_TOKEN reaches it in the environment, `export_hf_token`), and
    pocket-tts's bound on generated length as this process has it."""
    secrets = {"discord_token": None, "hf_token": None, "database_url": None}
    return functools.partial(load_in_worker, config.model_copy(update=secrets), generation_length())


def load_model(config: Config) -> Any:
    from pocket_tts import TTSModel

    spec = str(config.tts_config) if config.tts_config else config.tts_language
    try:
        if config.tts_config is not None:
            model = TTSModel.load_model(config=str(config.tts_config), quantize=config.tts_quantize)
        else:
            model = TTSModel.load_model(language=config.tts_language, quantize=config.tts_quantize)
    except (HfHubHTTPError, LocalEntryNotFoundError, ConnectionError) as error:
        raise _weights_unavailable(spec, error) from error
    except FileNotFoundError as error:
        if config.tts_config is None:
            raise ModelUnavailableError(
                f"TTS_LANGUAGE={config.tts_language!r} is not a pocket-tts language"
            ) from error
        raise
    window_attention(model)  # the flow LM's and Mimi's (the half decoder copies it)
    decoder_precision.attach(model, config.tts_decoder_precision)  # before the packing
    log.info("matrix products packed for oneDNN: %d layers", pack_linears(model))
    return model


def language_default_voice(config: Config) -> str:
    path = str(config.tts_config) if config.tts_config else None
    voice: str = get_default_voice_for_language(config.tts_language, path)
    return voice


def model_fingerprint(config: Config) -> str:
    """Identifies the model a voice state was made with (states are model-specific)."""
    digest = hashlib.sha256()
    if config.tts_config is not None:  # one config may serve several languages
        digest.update(config.tts_config.read_bytes())
        digest.update(f"\nlanguage:{config.tts_language}".encode())
    else:
        digest.update(f"language:{config.tts_language}".encode())
    return digest.hexdigest()[:16]
