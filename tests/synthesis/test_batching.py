"""Continuous batching gives the same latents as pocket-tts generating each stream alone.

The noise is fixed at zero (temperature 0), so any difference between a stream generated
inside the batch and alone comes from the batching: alignment, masking, re-rotated keys,
rows joining, leaving and moving. The reference is pocket-tts's own batch-1 generation
(`TTSModel._autoregressive_generation`).
"""

from __future__ import annotations

import collections
import copy
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import soundfile
import torch
from pocket_tts import TTSModel

from bot.synthesis.batching import (
    COMPACT_SLOTS,
    DECODING_MODULES,
    BatchedFlowLM,
    BatchedMimi,
    Batcher,
    Request,
    prefill,
    prefill_chunks,
    rotate_keys,
)
from bot.synthesis.capacity import (
    COLD_ROWS,
    LIVE_SAMPLES,
    MARGIN,
    STALE_S,
    BatchCost,
    Live,
    StepCosts,
    choose_batch,
    slow_step,
)
from bot.synthesis.pocket_tts_adapter import (
    apply_rope,
    autoregressive_generation,
    expand_kv_cache,
    flow_lm_current_end,
    increment_steps,
    init_states,
)
from tests.conftest import TinyModel

# Words the tests' tokenizer knows whole (tests/tiny_model.py): a word it spells in pieces costs
# a third of a second of generation per piece. 19, 9, 23 and 24 tokens: 105, 63, 121 and 125
# frames; together more than one chunk of 50 tokens.
TEXTS = [
    "Hello there, good morning friend, how is the weather?",
    "A short one.",
    "The quick brown fox jumps over the lazy dog, then they play a game in the rain.",
    "A fourth one joins late: four people join the chat tonight.",
]
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def model(tiny_model: TinyModel) -> Iterator[Any]:
    model = TTSModel.load_model(config=str(tiny_model.full_length_config))
    model.temp, model.noise_clamp = 0.0, None  # fixed (zero) noise
    yield model


@pytest.fixture(scope="module")
def voices(model: Any, tiny_model: TinyModel) -> list[Any]:
    """Two voice prompts of different lengths."""
    audio = torch.from_numpy(soundfile.read(str(tiny_model.clip), dtype="float32")[0])
    long = model.get_state_for_audio_prompt(audio[None, :])
    short = model.get_state_for_audio_prompt(audio[None, : audio.shape[0] // 2])
    assert flow_lm_current_end(model, long) != flow_lm_current_end(model, short)
    return [long, short]


# What `alone_chunks` made, by model, voice and text (each kept, so that no id is reused): the
# tests ask for the same few again and again, at 1.3 CPU-s each (2026-12-06)
_ALONE: dict[tuple[int, int, str], tuple[Any, Any, list[torch.Tensor]]] = {}


def alone_chunks(model: Any, voice: Any, text: str) -> list[torch.Tensor]:
    """`alone_chunk` of each of the text's prefilled chunks, made once per model, voice and
    text: the noise is zero, so a second generation gives the same latents (the tests only
    read them)."""
    key = (id(model), id(voice), text)
    if key not in _ALONE:
        latents = [alone_chunk(model, voice, chunk) for chunk in prefill(model, voice, text)]
        _ALONE[key] = (model, voice, latents)
    return _ALONE[key][2]


def alone(model: Any, voice: Any, text: str) -> torch.Tensor:
    """Latents of pocket-tts's own batch-1 generation, from the same prefilled prompt."""
    return alone_chunks(model, voice, text)[0]


def alone_chunk(model: Any, voice: Any, chunk: Any) -> torch.Tensor:
    """`alone` for one prefilled chunk."""
    state = copy.deepcopy(chunk.state)
    expand_kv_cache(model, state, chunk.length + chunk.max_gen_len + 1)
    latents: queue.Queue[torch.Tensor | None] = queue.Queue()
    autoregressive_generation(
        model, state, chunk.max_gen_len, chunk.frames_after_eos, latents, threading.Event()
    )
    out = []
    while (item := latents.get()) is not None:
        out.append(item)
    return torch.cat(out, dim=1)


def request(model: Any, voice: Any, text: str) -> Request:
    return Request(collections.deque(prefill(model, voice, text)), emit=print, end=print)


def run(
    batch: BatchedFlowLM,
    joins: dict[int, list[Request]],
    cancels: dict[int, Request] | None = None,
    every_step: Any = None,
) -> dict[int, torch.Tensor]:
    """Step the batch, joining requests at the given steps; the latents made per request."""
    made: dict[int, list[torch.Tensor]] = collections.defaultdict(list)
    ids = {id(r): n for n, r in enumerate(r for rs in joins.values() for r in rs)}
    last_join = max(joins)
    for step in range(2000):
        for r in joins.get(step, []):
            batch.join(r, r.chunks.popleft())
        if cancels and step in cancels:
            cancels[step].stop.set()
            batch.drop_stopped()
        if every_step is not None:
            every_step(batch, step)
        for row, latent, _ in batch.step():
            if latent is not None:
                made[ids[id(row.request)]].append(latent)
        if step > last_join and not batch.rows:
            break
    return {n: torch.cat(latents, dim=1) for n, latents in made.items()}


def assert_same(got: torch.Tensor, expected: torch.Tensor) -> None:
    assert got.shape == expected.shape
    assert (got - expected).abs().max().item() < TOLERANCE


@pytest.mark.slow
def test_rows_with_different_voices_joining_at_different_times_match_alone(
    model: Any, voices: list[Any]
) -> None:
    pairs = [(voices[i % 2], text) for i, text in enumerate(TEXTS)]
    expected = [alone(model, v, t) for v, t in pairs]
    requests = [request(model, v, t) for v, t in pairs]
    batch = BatchedFlowLM(model, max_rows=4, capacity=64)  # small: it must grow
    got = run(batch, {0: [requests[0]], 3: [requests[1]], 7: [requests[2]], 150: [requests[3]]})
    for n in range(4):
        assert_same(got[n], expected[n])
    assert batch.capacity > 64


@pytest.mark.slow
def test_a_row_next_to_a_cancelled_one_matches_alone(model: Any, voices: list[Any]) -> None:
    expected = alone(model, voices[1], TEXTS[2])
    cancelled = request(model, voices[0], TEXTS[0])
    kept = request(model, voices[1], TEXTS[2])
    late = request(model, voices[0], TEXTS[1])  # takes the freed row
    batch = BatchedFlowLM(model, max_rows=2)
    got = run(batch, {0: [cancelled, kept], 12: [late]}, cancels={10: cancelled})
    assert got[0].shape[1] == 10  # the cancelled row stopped at once
    assert_same(got[1], expected)
    assert_same(got[2], alone(model, voices[0], TEXTS[1]))


@pytest.mark.slow
def test_compacting_the_caches_keeps_every_row_the_same(model: Any, voices: list[Any]) -> None:
    """Slots no live row uses are dropped by moving (and re-rotating) every row left."""
    pairs = [(voices[0], TEXTS[0]), (voices[1], TEXTS[3])]
    expected = [alone(model, v, t) for v, t in pairs]
    requests = [request(model, v, t) for v, t in pairs]
    first_slots: list[int] = []

    def compact(batch: BatchedFlowLM, step: int) -> None:
        if step in (40, 90, 130) and batch.rows:
            first_slots.append(batch._first_slot())
            batch._shift(-batch._first_slot())

    got = run(
        BatchedFlowLM(model, max_rows=2), {0: [requests[0]], 30: [requests[1]]}, None, compact
    )
    assert max(first_slots) > 0  # something was really moved
    for n in range(2):
        assert_same(got[n], expected[n])


@pytest.mark.slow
def test_the_attention_spans_only_the_slots_live_rows_use(model: Any, voices: list[Any]) -> None:
    """Streams come and go for far longer than any one lasts; the slots before the earliest
    live row's are dropped as they die, so every step's attention (which reads the cache from
    slot 0) stays near what the rows use, and every row still matches alone."""
    pairs = [(voices[n % 2], TEXTS[n % len(TEXTS)]) for n in range(8)]
    expected = [alone(model, v, t) for v, t in pairs]
    requests = [request(model, v, t) for v, t in pairs]
    spans: list[tuple[int, int]] = []  # (slots read, slots in use) before each step

    def record(batch: BatchedFlowLM, step: int) -> None:
        if batch.rows:
            spans.append((batch.offset, batch.offset - batch._first_slot()))

    joins = {60 * n: [r] for n, r in enumerate(requests)}
    got = run(BatchedFlowLM(model, max_rows=8), joins, None, record)
    for n in range(len(pairs)):
        assert_same(got[n], expected[n])
    steps = len(spans)
    assert steps > 2 * max(used for _, used in spans)  # far longer than any row's span
    # a step may end rows (so the slots in use shrink) before the next one drops theirs
    assert max(read for read, _ in spans) < 1.6 * max(used for _, used in spans) + COMPACT_SLOTS


@pytest.mark.slow
def test_the_batcher_streams_audio_for_several_requests_at_once(
    model: Any, voices: list[Any]
) -> None:
    """Threads: the LM thread batches, the decoder thread makes audio; every stream ends."""
    done = threading.Event()
    audio: dict[int, list[np.ndarray]] = collections.defaultdict(list)
    ended: dict[int, BaseException | None] = {}
    batcher = Batcher(model, max_rows=4)
    try:
        for n, text in enumerate(TEXTS):

            def end(error: BaseException | None, n: int = n) -> None:
                ended[n] = error
                if len(ended) == len(TEXTS):
                    done.set()

            batcher.submit(
                Request(
                    collections.deque(prefill(model, voices[n % 2], text)),
                    emit=lambda chunk, n=n: audio[n].append(chunk),
                    end=end,
                )
            )
        assert done.wait(120)
    finally:
        batcher.close()
    assert ended == {n: None for n in range(len(TEXTS))}
    for n, text in enumerate(TEXTS):
        samples = sum(len(c) for c in audio[n])
        frames = alone(model, voices[n % 2], text).shape[1]
        assert samples == frames * 1920  # 80 ms of 24 kHz audio per latent
    assert batcher.rows_stepped > batcher.steps  # rows really shared steps


_DECODED: dict[tuple[int, int], tuple[Any, torch.Tensor, torch.Tensor]] = {}


def decode_alone(model: Any, latents: torch.Tensor) -> torch.Tensor:
    """`decode_alone_once`, made once per model and latents (2.5 CPU-s each): the same
    samples every time; not to be written to."""
    key = (id(model), id(latents))
    if key not in _DECODED:
        _DECODED[key] = (model, latents, decode_alone_once(model, latents))
    return _DECODED[key][2]


def decode_alone_once(model: Any, latents: torch.Tensor) -> torch.Tensor:
    """pocket-tts's batch-1 decoding, one latent frame per call."""
    per = int(model.mimi.encoder_frame_rate / model.mimi.frame_rate)
    state = init_states(model.mimi, 1, latents.shape[1] * per)
    flow, audio = model.flow_lm, []
    with torch.no_grad():
        for i in range(latents.shape[1]):
            frame = latents[:, i : i + 1] * flow.emb_std + flow.emb_mean
            audio.append(model.mimi.decode_from_latent(frame, state)[0, 0])
            increment_steps(model.mimi, state, increment=per)
    return torch.cat(audio)


@pytest.mark.slow
def test_the_batched_decoder_gives_the_same_audio_as_alone(model: Any, voices: list[Any]) -> None:
    """Rows joining at different times, one leaving, the caches compacted and grown."""
    latents = [alone(model, voices[n % 2], TEXTS[n]) for n in range(3)]
    mimi = BatchedMimi(model, max_rows=3, capacity=16)
    rows: list[int] = []  # which latents each live row decodes, in row order
    steps = [0, 0, 0]
    audio: dict[int, list[torch.Tensor]] = collections.defaultdict(list)
    joins = {0: 0, 2: 1, 5: 2}
    for tick in range(max(t.shape[1] for t in latents) + 10):
        if tick in joins:
            mimi.join()
            rows.append(joins[tick])
        if tick == 9 and 2 in rows:  # the third one is cancelled: its row leaves
            index = rows.index(2)
            mimi.leave(index)
            rows[index] = rows[-1]
            rows.pop()
        done = [n for n in rows if steps[n] >= latents[n].shape[1]]
        for n in done:
            index = rows.index(n)
            mimi.leave(index)
            rows[index] = rows[-1]
            rows.pop()
        if not rows:
            if tick > max(joins):
                break
            continue
        batch = torch.cat([latents[n][:, steps[n] : steps[n] + 1] for n in rows])
        for n, samples in zip(rows, mimi.decode(batch), strict=True):
            audio[n].append(samples)
            steps[n] += 1
    assert mimi.capacity > 16
    for n in (0, 1):
        expected = decode_alone(model, latents[n])
        got = torch.cat(audio[n])
        assert got.shape == expected.shape
        assert (got - expected).abs().max().item() < 1e-4
    assert len(audio[2]) == 9 - 5  # the cancelled row stopped when it left


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_keys_turn_to_the_bit_as_pocket_tts_turns_them(dtype: torch.dtype) -> None:
    keys = torch.randn(40, 4, 16, generator=torch.Generator().manual_seed(1)).to(dtype)
    for shift in (-266, -1, 7, 1000):
        as_batch = keys[:, None]
        _, want = apply_rope(as_batch, as_batch, offset=shift, max_period=10_000.0)
        got = rotate_keys(keys, shift, 10_000.0)
        assert got.dtype == dtype
        assert torch.equal(got, want[:, 0])


def test_the_decoder_batch_keeps_the_decoding_modules_state_alone(model: Any) -> None:
    """The encoder's state (its attention caches among it) is never read by a decode."""
    mimi = BatchedMimi(model, max_rows=2)
    full = init_states(model.mimi, 1, 1)
    assert set(mimi.state) == {name for name in full if name.startswith(DECODING_MODULES)}
    assert any(name.startswith("encoder") for name in full)
    assert any(name.startswith("decoder_transformer.") for name in mimi.state)
    assert not any(name.startswith(("encoder", "downsample")) for name in mimi.state)


def test_the_largest_batch_is_the_largest_that_fits_the_frame() -> None:
    frame = 0.072 / MARGIN  # the frame whose share the steps may take is 72 ms
    costs = [
        BatchCost(1, 0.045, 0.030),
        BatchCost(2, 0.050, 0.040),
        BatchCost(4, 0.055, 0.060),
        BatchCost(8, 0.070, 0.120),  # the decoder's thread: 120 ms > 72 ms, too slow
    ]
    assert choose_batch(costs, frame, cores=2) == 4
    assert choose_batch(costs, frame, cores=1) == 1  # one core: 75 ms for one row already
    # one noisy timing (3 rows, on a busy machine) does not stop the growth
    noisy = [
        BatchCost(1, 0.007, 0.011),
        BatchCost(2, 0.008, 0.012),
        BatchCost(3, 0.074, 0.021),
        BatchCost(4, 0.009, 0.017),
        BatchCost(8, 0.009, 0.029),
    ]
    assert choose_batch(noisy, frame, cores=2) == 8


@pytest.mark.timing
def test_both_cores_decode_when_the_lm_step_is_cheap() -> None:
    """int8 on our machine: the LM's step is a fifth of the frame and the decoder's 8 rows
    take 78 ms alone. Split, the LM's thread decodes some rows after its step, so 8 fit."""
    frame = 0.072 / MARGIN  # the frame whose share the steps may take is 72 ms
    startup = [
        BatchCost(1, 0.013, 0.015),
        BatchCost(2, 0.016, 0.024),
        BatchCost(4, 0.016, 0.039),
        BatchCost(8, 0.021, 0.078),
    ]
    assert choose_batch(startup, frame, cores=2) == 8
    costs = StepCosts(startup, max_rows=8, frame_s=frame, cores=2)
    period, share = costs.split(8)
    assert 2 <= share <= 4 and period < 0.060  # the decoder's thread alone: 82 ms
    assert costs.capacity() == COLD_ROWS  # nothing seen live yet
    fill(costs.steps, 6, 0.0185 * 1.25)  # 6 rows seen live, as the start-up guess said: the
    fill(costs.decodes, 6, 0.0585 * 1.05)  # ramp allows 1.5 times that
    assert costs.capacity() == 8
    # a row spoken at 2x needs every step within 36 ms: 8 rows (split) take more
    assert costs.estimate(8) > 0.036 and costs.capacity(2.0) < 8
    assert costs.estimate(costs.capacity(2.0)) <= 0.036
    assert costs.capacity(0.5) == costs.capacity(1.0) == 8  # slower: still a frame a step
    # 4 rows: the decoder's thread alone keeps up (41 ms), and 2 + 2 would cost more CPU
    assert costs.split(4)[1] == 0
    assert costs.estimate(4) < costs.split(4)[0]  # the capacity counts the shortest period
    alone = StepCosts(startup, max_rows=8, frame_s=frame, cores=1)  # one core: no split
    fill(alone.steps, 4, 0.016)
    fill(alone.decodes, 4, 0.039)
    assert alone.split(8)[1] == 0
    assert alone.split(2)[0] == pytest.approx(0.016 + 0.024)
    assert alone.capacity() == 5  # one after the other: 21 + 49 ms at 5 rows, 80 at 6


def fill(live: Live, rows: int, seconds: float, count: int = LIVE_SAMPLES) -> None:
    for _ in range(count):
        live.add(rows, seconds)


def test_the_capacity_follows_the_live_step_times() -> None:
    """The start-up table is a first guess (scaled by the measured side-by-side slowdown);
    live figures replace it, a slow step now and then does not move them, and the capacity
    grows to at most RAMP times the largest size seen live (COLD_ROWS before any)."""
    startup = [BatchCost(n, 0.010 + 0.005 * n, 0.008 * n) for n in range(1, 9)]
    costs = StepCosts(startup, max_rows=8, frame_s=0.072 / MARGIN, cores=2)
    # guesses: the decoder (8 ms a row, x1.05) fits 8 rows in 72 ms (8 x 8.4 = 67 ms), but
    # before any live figure only COLD_ROWS are admitted
    assert costs.capacity() == COLD_ROWS == 2
    fill(costs.steps, 2, 0.050)  # live: the LM runs far slower beside the decoder
    fill(costs.decodes, 2, 0.020)
    assert costs.estimate(2) == pytest.approx(0.050)
    # 3 rows, guessed: 25 ms x 2.5 (live over start-up at 2 rows) = 62.5 ms: fits (up to 1.5
    # times the largest size seen live are tried)
    assert costs.capacity() == 3
    fill(costs.steps, 3, 0.065)
    fill(costs.decodes, 3, 0.030)
    assert costs.capacity() == 3  # 4 rows: 30 ms x 2.6 = 78 ms > 72
    costs.steps.add(3, 2.0)  # one very slow step (a collection): the median does not move
    assert costs.estimate(3) == pytest.approx(0.065)
    fill(costs.steps, 2, 0.040, count=Live.WINDOW)  # faster now: the old figures give way
    assert costs.estimate(2) == pytest.approx(0.040)


def test_the_slow_step_leaves_out_the_slowest_five_percent_at_least_one() -> None:
    """The spread the log shows beside each typical step (`Live.get(rows, slow=True)`)."""
    assert slow_step([0.01] * 30 + [1.0]) == 0.01  # the slowest one left out
    assert slow_step([0.01] * 29 + [0.5, 1.0]) == 0.01  # 5% of 31: two left out
    assert slow_step([0.01] * 28 + [0.3, 0.5, 1.0]) == 0.3
    assert slow_step([0.01] * 7 + [1.0]) == 0.01  # few samples: the second slowest
    live = Live()
    fill(live, 4, 0.050, count=Live.WINDOW - 3)
    for seconds in (0.085, 0.090, 0.5):
        live.add(4, seconds)
    assert live.get(4) == pytest.approx(0.050) and live.get(4, slow=True) == pytest.approx(0.085)


def test_the_capacity_is_worked_out_once_per_live_figure() -> None:
    """The scheduler asks every pipeline's capacity each time it wakes: the medians behind it
    are taken again only when a figure arrives, and each answer is kept until then."""
    startup = [BatchCost(n, 0.010 + 0.005 * n, 0.008 * n) for n in range(1, 9)]
    costs = StepCosts(startup, max_rows=8, frame_s=0.072 / MARGIN, cores=2)
    fill(costs.steps, 2, 0.050)
    fill(costs.decodes, 2, 0.020)
    taken = []
    seen = costs.steps.seen
    costs.steps.seen = lambda: taken.append(1) or seen()  # type: ignore[method-assign]
    answers = {costs.capacity() for _ in range(100)} | {costs.capacity(2.0) for _ in range(100)}
    assert answers == {3, 1} and len(taken) == 1
    costs.steps.add(2, 0.500)  # a new figure: worked out again, once
    assert costs.capacity() == 3 and costs.capacity() == 3 and len(taken) == 2
    fill(costs.steps, 2, 0.500, count=Live.WINDOW)  # far slower now: the answer follows
    assert costs.capacity() == 1


def test_live_figures_go_stale_and_the_prefills_count() -> None:
    now = [0.0]
    live = Live(clock=lambda: now[0])
    fill(live, 4, 0.070)
    assert live.get(4) == pytest.approx(0.070)
    now[0] += STALE_S + 1
    assert live.get(4) is None  # not renewed: the scaled guess again
    costs = StepCosts([BatchCost(1, 0.01, 0.01)], max_rows=4, frame_s=0.08, cores=2)
    for _ in range(200):
        costs.add_step(2, 0.030)
    costs.add_prefill(0.8)
    assert costs.prefill_per_row() > 0
    assert costs.estimate(2) > 0.030  # each row's prompts add to the LM's thread


def test_a_batch_runs_at_the_cheapest_size_at_or_above_its_rows() -> None:
    """MKL's fp32 products of 2 or 3 rows cost like 2 or 3 of one row: 4 are cheaper."""
    startup = [
        BatchCost(1, 0.027, 0),
        BatchCost(2, 0.047, 0),
        BatchCost(3, 0.065, 0),
        BatchCost(4, 0.052, 0),
        BatchCost(5, 0.057, 0),
        BatchCost(6, 0.056, 0),
    ]
    costs = StepCosts(startup, max_rows=6, frame_s=0.08, cores=2)
    assert [costs.padded(n) for n in range(1, 7)] == [1, 2, 4, 4, 5, 6]  # 5: within 3% of 6


def test_a_size_not_timed_at_start_runs_as_itself_unless_a_timed_one_is_cheaper() -> None:
    """Past 8 rows only 12 and 16 are timed at start: 9 rows ran as 12 rows, 12-14% more."""
    startup = [BatchCost(8, 0.026, 0), BatchCost(12, 0.032, 0), BatchCost(16, 0.039, 0)]
    costs = StepCosts(startup, max_rows=16, frame_s=0.08, cores=2)
    assert [costs.padded(n) for n in (8, 9, 10, 11, 12, 13, 16)] == [8, 9, 10, 11, 12, 13, 16]
    assert costs.padded(17) == 17  # past the bound: as itself
    cheaper = [BatchCost(8, 0.040, 0), BatchCost(12, 0.030, 0)]  # a kernel with a step at 12
    costs = StepCosts(cheaper, max_rows=12, frame_s=0.08, cores=2)
    assert [costs.padded(n) for n in (9, 10, 11)] == [12, 12, 12]


@pytest.mark.slow
def test_padded_rows_leave_the_live_rows_as_they_were(model: Any, voices: list[Any]) -> None:
    """A step run at more rows than are live (the extra rows masked to their own slot) gives
    the live rows the same latents as alone."""
    requests = [request(model, voices[n % 2], TEXTS[n]) for n in range(3)]
    expected = [alone(model, voices[n % 2], TEXTS[n]) for n in range(3)]
    batch = BatchedFlowLM(model, max_rows=6)
    made: dict[int, list[torch.Tensor]] = collections.defaultdict(list)
    ids = {id(r): n for n, r in enumerate(requests)}
    for r in requests:
        batch.join(r, r.chunks.popleft())
    for _ in range(2000):
        for row, latent, _ in batch.step(size=6):
            if latent is not None:
                made[ids[id(row.request)]].append(latent)
        if not batch.rows:
            break
    for n in range(3):
        assert_same(torch.cat(made[n], dim=1), expected[n])


# the LM's step costs next to nothing and each row's decode 10 ms: half the rows are decoded
# on the LM's thread
CHEAP_LM = [BatchCost(n, 0.001, 0.010 * n) for n in range(1, 5)]


PREFILLED_TEXTS = [TEXTS[0], TEXTS[2], " ".join(TEXTS), TEXTS[3]]  # the third: several chunks


@pytest.fixture(scope="module")
def prefilled_alone(model: Any, voices: list[Any]) -> list[np.ndarray]:
    """`PREFILLED_TEXTS`' audio as pocket-tts alone makes it, chunk by chunk, each chunk a
    fresh row (faded in): made once for both of the test's cases (4 CPU-s each)."""
    fade = np.linspace(0, 1, int(model.config.mimi.sample_rate * 0.005), dtype=np.float32)
    audio = []
    for n, text in enumerate(PREFILLED_TEXTS):
        expected = []
        for latents in alone_chunks(model, voices[n % 2], text):
            samples = decode_alone(model, latents).numpy().copy()
            samples[: len(fade)] *= fade
            expected.append(samples)
        audio.append(np.concatenate(expected))
    return audio


@pytest.mark.parametrize("costs", [None, CHEAP_LM], ids=["decoder-thread", "split"])
@pytest.mark.slow
def test_streams_prefilled_chunk_by_chunk_sound_as_alone(
    model: Any, voices: list[Any], prefilled_alone: list[np.ndarray], costs: list[BatchCost] | None
) -> None:
    """Streams whose prompts the batch's thread prefills one chunk at a time each get the
    audio of their latents decoded alone, chunk after chunk, in order: on the decoder's
    thread, or (split) some on the LM's thread, each stream on one of them throughout."""
    texts = PREFILLED_TEXTS
    audio: dict[int, list[np.ndarray]] = collections.defaultdict(list)
    threads: dict[int, set[str]] = collections.defaultdict(set)
    ended: dict[int, BaseException | None] = {}
    done = threading.Event()
    requests: list[Request] = []

    def emit(chunk: np.ndarray, n: int) -> None:
        audio[n].append(chunk)
        threads[n].add(threading.current_thread().name)

    batcher = Batcher(model, max_rows=4, costs=costs)
    try:
        for n, text in enumerate(texts):

            def end(error: BaseException | None, n: int = n) -> None:
                ended[n] = error
                if len(ended) == len(texts):
                    done.set()

            requests.append(
                Request(
                    collections.deque(),
                    emit=lambda chunk, n=n: emit(chunk, n),
                    end=end,
                    prepare=lambda m, text=text, n=n: prefill_chunks(m, voices[n % 2], text),
                )
            )
            batcher.submit(requests[-1])
        assert done.wait(120)
    finally:
        batcher.close()
    assert ended == {n: None for n in range(len(texts))}
    for n in range(len(texts)):
        got, want = np.concatenate(audio[n]), prefilled_alone[n]
        assert got.shape == want.shape
        assert np.abs(got - want).max() < 1e-3
    assert all(len(names) == 1 for names in threads.values())  # one decoder per stream
    used = set().union(*threads.values())
    assert used == ({"tts-decoder", "tts-batch"} if costs else {"tts-decoder"})


def test_a_long_text_is_prefilled_one_chunk_at_a_time(model: Any, voices: list[Any]) -> None:
    text = " ".join(TEXTS * 6)
    chunks = prefill_chunks(model, voices[0], text)
    first = next(chunks)
    rest = list(chunks)
    assert rest  # more than one chunk, made only when asked for
    eager = prefill(model, voices[0], text)
    assert [c.length for c in [first, *rest]] == [c.length for c in eager]


def test_a_prefill_left_unfinished_on_another_thread_leaves_grad_modes_alone(
    model: Any, voices: list[Any]
) -> None:
    """A stream's chunks are prefilled on the batch's thread; one that fails may be freed on
    the decoder's, in the middle of its decode. Neither thread's grad mode may change (it
    did: the decode then refused to write its caches)."""
    chunks = prefill_chunks(model, voices[0], " ".join(TEXTS * 6))
    next(chunks)
    assert torch.is_grad_enabled()  # the caller's own mode, not the prefill's
    seen: list[bool] = []

    def decode() -> None:
        with torch.no_grad():
            chunks.close()
            seen.append(torch.is_grad_enabled())

    thread = threading.Thread(target=decode)
    thread.start()
    thread.join()
    assert seen == [False]


def test_a_stream_cancelled_while_waiting_for_a_row_ends_at_once(
    model: Any, voices: list[Any]
) -> None:
    batcher = Batcher(model, max_rows=1)
    ended: dict[str, threading.Event] = {"long": threading.Event(), "waiting": threading.Event()}
    try:
        requests = {
            name: Request(
                collections.deque(prefill(model, voices[0], TEXTS[2])),
                emit=lambda chunk: None,
                end=lambda error, name=name: ended[name].set(),
            )
            for name in ended
        }
        batcher.submit(requests["long"])
        batcher.submit(requests["waiting"])  # the only row is taken: it waits
        requests["waiting"].stop.set()
        assert ended["waiting"].wait(1.0)
        assert not ended["long"].is_set()  # the row's stream goes on meanwhile
    finally:
        for request in requests.values():
            request.stop.set()
        batcher.close()


@pytest.mark.slow
@pytest.mark.timing
def test_the_batch_steps_at_the_frames_pace_while_every_row_is_far_ahead(
    model: Any, voices: list[Any]
) -> None:
    """A row whose listener has `PACE_S` of audio ahead gets a frame per frame's time (so
    rows step together instead of running ahead and leaving); one that needs its audio
    (no slack, or too little) gets frames as fast as the batch makes them."""
    batcher = Batcher(model, max_rows=2)
    times: dict[str, list[float]] = collections.defaultdict(list)
    paced: dict[str, float] = {}

    def speak(name: str, slack: Any) -> None:
        ended = threading.Event()
        request = Request(
            collections.deque(prefill(model, voices[0], TEXTS[0])),
            emit=lambda chunk: None,
            end=lambda error: ended.set(),
        )
        request.slack = slack
        request.on_latent = lambda latent: times[name].append(time.perf_counter())
        batcher.submit(request)
        assert ended.wait(60)
        paced[name] = request.paced_s

    try:
        speak("far ahead", lambda: Batcher.PACE_S + 1)
        speak("needs it", lambda: Batcher.PACE_S / 2)
        speak("a file", None)
    finally:
        batcher.close()
    gaps = {name: np.diff(t) for name, t in times.items()}
    assert len(gaps["far ahead"]) >= 5
    # the steps start a frame apart; each latent comes at its step's end, a few ms later
    assert gaps["far ahead"].mean() >= 0.95 * batcher.frame_s
    assert np.median(gaps["far ahead"]) >= 0.9 * batcher.frame_s
    for name in ("needs it", "a file"):  # the tests' model steps in a few ms
        assert np.median(gaps[name]) < 0.5 * batcher.frame_s
    # the held-back time is counted, for the speed figures to leave out
    assert paced["far ahead"] > 0.5 * (times["far ahead"][-1] - times["far ahead"][0])
    assert paced["needs it"] == paced["a file"] == 0.0


@pytest.mark.slow
def test_a_changed_attention_state_is_refused(model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch rewrites pocket-tts's attention state by its keys (the adapter's `STATE_KEYS`):
    a pocket-tts whose state has others is refused at start, not batched wrongly."""
    from bot.synthesis import batching

    real = batching.init_states

    def with_another_key(*args: Any, **kwargs: Any) -> Any:
        state = real(*args, **kwargs)
        for module_state in state.values():
            module_state["window"] = torch.zeros(1)
        return state

    BatchedFlowLM(model, max_rows=2)  # as it is: accepted
    monkeypatch.setattr(batching, "init_states", with_another_key)
    with pytest.raises(RuntimeError, match="attention state changed"):
        BatchedFlowLM(model, max_rows=2)
