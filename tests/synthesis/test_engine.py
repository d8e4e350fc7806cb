import asyncio
import gc
import time

import numpy as np
import pytest
import torch
from pocket_tts import TTSModel, export_model_state

from bot.synthesis.engine import SAMPLE_RATE, TTSEngine, UnusableVoiceError
from bot.synthesis.engine_loading import load_engine
from bot.synthesis.tempo import Tempo
from tests.conftest import TinyModel, engine_settings
from tests.tiny_model import write_random_config

LONG_TEXT = (
    "This is a long message that keeps the model busy for many seconds, so that we can "
    "cancel it in the middle and check that the worker really stops."
)


async def cpu_seconds_over(window: float) -> float:
    """CPU time the whole process used during `window` seconds of idling on the loop."""
    start = time.process_time()
    await asyncio.sleep(window)
    return time.process_time() - start


async def test_chunks_are_24k_float32_mono(engine: TTSEngine) -> None:
    stream = engine.stream("Hello there, how are you today?")
    chunks = [chunk async for chunk in stream]
    assert engine.model.sample_rate == SAMPLE_RATE
    assert chunks
    assert all(c.dtype == np.float32 and c.ndim == 1 for c in chunks)
    assert stream.stats.samples == sum(len(c) for c in chunks) > 0
    assert stream.stats.first_chunk_latency is not None
    assert not stream.stats.cancelled


@pytest.mark.slow
@pytest.mark.timing
async def test_cancel_ends_stream_and_frees_worker(full_engine: TTSEngine) -> None:
    stream = full_engine.stream(LONG_TEXT)
    async with stream:
        await anext(stream)
        cancelled_at = time.monotonic()
        stream.cancel()
        async for _ in stream:  # frames in flight may still arrive, then the end
            pass
        assert time.monotonic() - cancelled_at < 0.1  # the model stops within 100 ms
    assert stream.stats.cancelled
    assert stream.stats.audio_seconds < 5  # far less than the ~20 s the text would give
    await asyncio.sleep(0.05)
    assert await cpu_seconds_over(0.3) < 0.06
    follow_up = full_engine.stream("Next one.")
    async with follow_up:
        await asyncio.wait_for(anext(follow_up), 2.0)


async def test_abandoned_stream_stops_using_cpu(full_engine: TTSEngine) -> None:
    stream = full_engine.stream(LONG_TEXT)
    await anext(stream)
    del stream
    gc.collect()
    await asyncio.sleep(0.2)
    assert await cpu_seconds_over(0.3) < 0.06
    follow_up = full_engine.stream("Still here?")
    async with follow_up:
        await asyncio.wait_for(anext(follow_up), 2.0)


async def test_unknown_voice_reaches_the_caller(engine: TTSEngine) -> None:
    with pytest.raises(UnusableVoiceError, match="unknown voice"):
        async for _ in engine.stream("Hello", voice="no-such-voice!"):
            pass


async def test_corrupt_voice_state_reaches_the_caller(engine: TTSEngine, tmp_path) -> None:
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a safetensors file")
    with pytest.raises(UnusableVoiceError, match="not a usable voice state"):
        await engine.synthesize("Hello", voice=str(bad))


async def test_model_error_during_generation_reaches_the_caller(
    engine: TTSEngine, tiny_model: TinyModel, tmp_path
) -> None:
    """A state made by another architecture fails inside pocket-tts's generation thread."""
    tokenizer = tiny_model.config.parent / "tokenizer.model"
    other = TTSModel.load_model(
        config=str(write_random_config("english_7m_2026-10", tmp_path, tokenizer=tokenizer))
    )
    state = other.get_state_for_audio_prompt(torch.zeros(1, SAMPLE_RATE) + 0.01)
    foreign = tmp_path / "foreign.safetensors"
    export_model_state(state, foreign)
    with pytest.raises(Exception) as caught:
        await engine.synthesize("Hello there", voice=str(foreign))
    assert not isinstance(caught.value, UnusableVoiceError)  # the model's own error, as raised
    # and the engine still works afterwards
    assert len(await engine.synthesize("Fine again.")) > 0


async def test_voice_from_clip_and_from_exported_state(
    engine: TTSEngine, tiny_model: TinyModel, tmp_path
) -> None:
    state = await engine.voice_state(str(tiny_model.clip))
    path = tmp_path / "voice.safetensors"
    await asyncio.to_thread(export_model_state, state, path)
    loaded = await engine.voice_state(str(path))
    assert loaded.keys() == state.keys()
    assert len(await engine.synthesize("Hi", voice=str(path))) > 0


async def test_a_spare_lane_runs_a_second_stream_while_the_worker_is_busy(
    tiny_model: TinyModel,
) -> None:
    """The one-stream-per-thread engine (TTS_BATCH=1) has a spare lane for urgent units."""
    settings = engine_settings(tiny_model.full_length_config, tiny_model.clip, TTS_BATCH="1")
    full_engine = await load_engine(settings)
    assert full_engine.workers == 1 and full_engine.spare_lanes == 1
    busy = full_engine.stream(LONG_TEXT)
    async with busy:
        await anext(busy)  # the worker is in the middle of a long unit
        urgent = full_engine.stream("Quick one.")
        async with urgent:
            await asyncio.wait_for(anext(urgent), 2.0)  # starts without waiting for the first
        assert not busy.stats.cancelled and busy.stats.samples < 20 * SAMPLE_RATE
    await full_engine.close()


async def test_an_int8_engine_loads_counts_its_weights_and_speaks(tiny_model: TinyModel) -> None:
    """TTS_QUANTIZE=1 (the default): packed int8 layers hold their weights in tuples beside
    dtypes, and weigh less than the fp32 model's (TTS_QUANTIZE=0)."""
    int8 = await load_engine(
        engine_settings(tiny_model.config, tiny_model.clip, TTS_QUANTIZE="1"), batch=1
    )
    fp32 = await load_engine(
        engine_settings(tiny_model.config, tiny_model.clip, TTS_QUANTIZE="0"), batch=1
    )
    try:
        assert 0 < int8.model_bytes < fp32.model_bytes
        samples = 0
        async with int8.stream("Hello there.") as stream:
            async for chunk in stream:
                samples += len(chunk)
        assert samples > 0
    finally:
        await int8.close()
        await fp32.close()


async def test_a_stream_at_a_rate_is_stretched_on_the_engines_thread(engine: TTSEngine) -> None:
    """The stretcher runs where the audio is made (batched: the decoder's thread); one that
    fails ends its own stream with the error, and the next stream speaks as before."""
    text = "Hello there, how are you today?"
    plain = await engine.synthesize(text)
    async with engine.stream(text, tempo=Tempo(1.5)) as stream:
        faster = [chunk async for chunk in stream]
    assert sum(map(len, faster)) == round(len(plain) / 1.5)
    spent = Tempo(2.0)
    spent.finish()  # a finished stretcher refuses more audio

    async def fails() -> None:
        async with engine.stream(text, tempo=spent) as stream:
            _ = [chunk async for chunk in stream]

    beside = asyncio.create_task(engine.synthesize(text))  # a row of the same batch
    with pytest.raises(RuntimeError, match="finished"):
        await fails()
    assert len(await beside) == len(plain)
