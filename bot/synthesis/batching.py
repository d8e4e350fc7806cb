"""Continuous batching: every stream being synthesized is one row of a single flow-LM step.

On a CPU, one flow-LM step for 8 streams costs about twice a step for one, so running every
active stream in one batched step lets the same cores serve several times as many servers.
Built on pocket-tts's own modules, not a fork of them:

- A chunk's prompt (its voice state, then its text tokens) is prefilled at batch 1 on the
  batch's own thread between two steps, the way pocket-tts starts one stream
  (`prefill_chunks`).
- At a frame boundary the prefilled row joins the running batch. The batch's attention caches
  share one write offset, so the row's prompt is right-aligned to end at that offset, and the
  slots before it are masked through the cache's per-row `pad` (pocket_tts's attention
  module). Its keys are re-rotated (RoPE) to their new slots, so the row's queries see the same
  relative positions as when it runs alone.
- One step runs the flow LM once for every live row. A row leaves at its own end of speech
  (pocket-tts's EOS rule), when it is cancelled, or at its length limit; the last row moves
  into its place, so the batch stays dense and only live rows are computed.
- The Mimi decoder runs on its own thread beside the LM, as in pocket-tts: one decoder state
  per row (batch 1, decoding every frame a row has waiting in one call), fresh for each unit.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from bot.core.config import usable_cores
from bot.synthesis import pocket_tts_adapter
from bot.synthesis.capacity import BatchCost, StepCosts
from bot.synthesis.decoder_precision import half_decoder
from bot.synthesis.pocket_tts_adapter import (
    CACHE,
    MAX_TOKEN_PER_CHUNK,
    OFFSET,
    PAD,
    STATE_KEYS,
    init_states,
    is_attention,
    prepare_text_prompt,
    split_into_best_sentences,
)

log = logging.getLogger(__name__)
# Dead attention slots (no live row reads them) are dropped once there are this many.
COMPACT_SLOTS = 32
# With several languages' models loaded, each has its own batch thread and decoder thread.
# Run side by side, their torch ops each want every core: on 2 cores two models' steps at once
# made both stutter (3 and 14 underrun frames in one message each). One step at a time, and
# one decode, across all models, for each pipeline number: pipeline n of every model shares
# its two cores' worth of locks, and the pipelines themselves run side by side (each is given
# its own cores, `TTS_PIPELINES`). With one model these locks are never contended.
_PIPELINE_LOCKS: dict[int, tuple[threading.Lock, threading.Lock]] = {}
_LOCKS_LOCK = threading.Lock()


def pipeline_locks(index: int) -> tuple[threading.Lock, threading.Lock]:
    """(model steps, audio decodes): the locks of pipeline `index`, shared by every model."""
    with _LOCKS_LOCK:
        return _PIPELINE_LOCKS.setdefault(index, (threading.Lock(), threading.Lock()))


ModelState = dict[str, dict[str, torch.Tensor]]
FADE_IN_S = 0.005  # pocket-tts fades each stream's first 5 ms in (a fresh decoder clicks)


@dataclass(eq=False)
class Prefilled:
    """One text chunk, ready to join: its flow-LM state at batch 1 after voice and text."""

    state: ModelState
    length: int  # prompt positions (voice + text)
    max_gen_len: int
    frames_after_eos: int


@dataclass(eq=False)
class Request:
    """A stream's chunks and where its audio goes.

    `emit(chunk)` gets 24 kHz float32 arrays, `end(error)` is called once at the end (None:
    finished or cancelled); both run on the thread that decodes the stream (the decoder's, or
    the batch's own: `_Decoder`). `stop` cancels the stream.
    """

    chunks: collections.deque[Prefilled]
    emit: Callable[[np.ndarray], None]
    end: Callable[[BaseException | None], None]
    stop: threading.Event = field(default_factory=threading.Event)
    # run by the batch's thread with its model, between two steps, when `chunks` is empty;
    # yields the chunks one by one (`prefill_chunks`), each prefilled when the stream needs
    # it: a prompt prefilled there never runs as a third thread beside the LM and the decoder
    prepare: Callable[[Any], Iterator[Prefilled]] | None = None
    _pending: Iterator[Prefilled] | None = None  # the chunks `prepare` has not yielded yet
    # the `_Decoder` all its chunks go to, from its first join: so its audio stays in order
    _decoder: Any = None
    pipeline: int | None = None  # the pipeline it was placed on (`bot.synthesis.pipelines`)

    @property
    def more(self) -> bool:
        """Chunks left to speak (prefilled or not)."""
        return bool(self.chunks) or self._pending is not None or self.prepare is not None

    on_latent: Callable[[torch.Tensor], None] | None = None  # each latent, before decoding
    ended: bool = False
    background: bool = False  # files and previews: a free row goes to live speech first
    # seconds of audio its listener has ahead (called on the batch's thread); None: it is
    # wanted as fast as the batch runs (files). See `Batcher.PACE_S`.
    slack: Callable[[], float] | None = None
    paced_s: float = 0.0  # how long the batch held its steps back for it (`Batcher._pace`)
    # its voice state and text, for a pipeline in another process (`prepare` cannot go there)
    work: tuple[ModelState, str] | None = None


def prefill(model: Any, voice_state: ModelState, text: str) -> list[Prefilled]:
    """Split `text` as pocket-tts does and prefill each chunk's prompt at batch 1."""
    return list(prefill_chunks(model, voice_state, text))


def prefill_chunks(model: Any, voice_state: ModelState, text: str) -> Iterator[Prefilled]:
    """`prefill`, one chunk at a time: the batch prefills a chunk only when the stream needs
    it, so a long message costs the LM's thread one short prefill per chunk, not one long one
    before its first audio."""
    tokenizer = model.flow_lm.conditioner.tokenizer
    options = _text_options(model)
    chunks = split_into_best_sentences(
        tokenizer,
        text,
        MAX_TOKEN_PER_CHUNK,
        options[0],
        remove_semicolons=options[1],
        append_terminal_punctuation=options[2],
        capitalize_first_letter=options[3],
        replace_characters=options[4],
    )
    for chunk in chunks:
        with torch.no_grad():
            prefilled = _prefill_one(model, voice_state, chunk, options)
        # Not inside the `with`: a generator suspended there holds no_grad on the thread that
        # runs it, and one closed elsewhere (a stream that failed, freed on the decoder's
        # thread) turned grad mode back on there, in the middle of a decode.
        yield prefilled


def _text_options(model: Any) -> tuple[Any, ...]:
    """How pocket-tts prepares a text for this model (`prepare_text_prompt`'s options)."""
    return (
        model.pad_with_spaces_for_short_inputs,
        model.remove_semicolons,
        model.append_terminal_punctuation,
        model.capitalize_first_letter,
        model.replace_characters,
    )


def _prefill_one(
    model: Any, voice_state: ModelState, chunk: str, options: tuple[Any, ...]
) -> Prefilled:
    prompt, frames_after_eos = prepare_text_prompt(chunk, *options)
    if model.model_recommended_frames_after_eos is not None:
        frames_after_eos = model.model_recommended_frames_after_eos
    else:
        frames_after_eos += 2
    prepared = model.flow_lm.conditioner.prepare(prompt)
    tokens = prepared.shape[1]
    state = copy.deepcopy(voice_state)
    start = pocket_tts_adapter.flow_lm_current_end(model, state)
    pocket_tts_adapter.expand_kv_cache(model, state, sequence_length=start + tokens)
    pocket_tts_adapter.run_flow_lm_and_increment_step(model, state, text_tokens=prepared)
    return Prefilled(
        state,
        start + tokens,
        pocket_tts_adapter.estimate_max_gen_len(model, tokens),
        frames_after_eos,
    )


def rotate_keys(keys: torch.Tensor, shift: int, max_period: float) -> torch.Tensor:
    """Keys `[T, H, D]` that RoPE rotated at positions p, rotated to positions p + shift.

    pocket-tts's `apply_rope`, for the keys alone and one shift: the same products in fp32,
    the same rounding to the keys' dtype (tests/synthesis/test_batching.py holds it to the
    bit). Through `apply_rope` itself a decoder compaction took 64 ms at 8 rows: it turns
    queries too, and joins the halves with a slow `stack`."""
    t, h, d = keys.shape
    half = torch.arange(d // 2, dtype=torch.float32, device=keys.device)
    freqs = torch.exp(half * (-math.log(max_period) * 2 / d))
    angle = freqs * torch.full((1,), float(shift), device=keys.device)
    cos, sin = torch.cos(angle), torch.sin(angle)
    pairs = keys.view(t, h, d // 2, 2)
    real, imaginary = pairs[..., 0].float(), pairs[..., 1].float()
    rotated = torch.empty_like(keys)
    out = rotated.view(t, h, d // 2, 2)
    out[..., 0] = real * cos - imaginary * sin
    out[..., 1] = real * sin + imaginary * cos
    return rotated


@dataclass(eq=False)
class _Row:
    request: Request
    chunk: Prefilled
    latent: torch.Tensor  # the last latent [1, 1, ldim]; NaN before the first step (BOS)
    step: int = 0
    eos_step: int | None = None


class BatchedFlowLM:
    """The batch: live rows, their shared attention caches, and one step for all of them.

    Not thread-safe: one thread (`Batcher`'s) owns it. Tests drive `join`/`step` directly.
    """

    def __init__(self, model: Any, *, max_rows: int, capacity: int = 1024) -> None:
        self.model = model
        self.flow = model.flow_lm
        self.max_rows = max_rows
        self.rows: list[_Row] = []
        self.offset = 0  # the next slot every row writes (shared)
        self._attention: dict[str, float] = {}  # state name -> RoPE max period
        for name, module in self.flow.named_modules():
            if is_attention(module):
                self._attention[name] = module.rope.max_period
        self.state = self._new_state(capacity)
        if set(self.state) != set(self._attention):
            raise RuntimeError("unexpected stateful modules in the flow LM: cannot batch them")
        if any(set(module_state) != STATE_KEYS for module_state in self.state.values()):
            raise RuntimeError("pocket-tts's attention state changed: cannot batch it")

    @property
    def capacity(self) -> int:
        return next(iter(self.state.values()))[CACHE].shape[2]

    def _new_state(self, capacity: int) -> ModelState:
        state: ModelState = init_states(
            self.flow, batch_size=self.max_rows, sequence_length=capacity
        )
        for module_state in state.values():
            # Masked slots still enter the attention product (times 0): NaN there would
            # poison every row, so the batch's caches start at 0, not pocket-tts's NaN.
            module_state[CACHE].zero_()
        return state

    # ---- rows in and out ---------------------------------------------------------------
    def join(self, request: Request, chunk: Prefilled) -> None:
        """Add a row for `chunk` at this frame boundary (the caller checks `max_rows`)."""
        assert len(self.rows) < self.max_rows
        length = chunk.length
        if not self.rows:
            self.offset = length  # an empty batch starts over
        elif length > self.offset:
            self._shift(length - self.offset)  # room before the offset for the new prompt
        if self.offset + 1 > self.capacity:
            self._grow(self.offset + 1)
        index, start = len(self.rows), self.offset - length
        for name, module_state in self.state.items():
            source = chunk.state[name][CACHE][:, 0, :length]
            keys = rotate_keys(source[0], start, self._attention[name])
            module_state[CACHE][0, index, start : self.offset] = keys
            module_state[CACHE][1, index, start : self.offset] = source[1]
            module_state[PAD][index] = start
            module_state[OFFSET][:] = self.offset
        bos = torch.full((1, 1, self.flow.ldim), float("nan"), dtype=self.flow.dtype)
        self.rows.append(_Row(request, chunk, bos))

    def leave(self, index: int) -> _Row:
        """Drop row `index`; the last row moves into its place (its slots are the same)."""
        row, last = self.rows[index], len(self.rows) - 1
        if index != last:
            for module_state in self.state.values():
                start = int(module_state[PAD][last])
                cache = module_state[CACHE]
                cache[:, index, start : self.offset] = cache[:, last, start : self.offset]
                module_state[PAD][index] = start
            self.rows[index] = self.rows[last]
        self.rows.pop()
        return row

    def _first_slot(self) -> int:
        """The earliest slot any live row uses."""
        pad = next(iter(self.state.values()))[PAD]
        return int(pad[: len(self.rows)].min())

    def _shift(self, shift: int) -> None:
        """Move every live row's slots by `shift` (re-rotating its keys to the new slots)."""
        if self.offset + shift + 1 > self.capacity:
            self._grow(self.offset + shift + 1)
        count, first = len(self.rows), self._first_slot()
        for name, module_state in self.state.items():
            cache = module_state[CACHE]
            moved = cache[:, :count, first : self.offset].clone()
            keys = moved[0].reshape(-1, *moved.shape[-2:])
            moved[0] = rotate_keys(keys, shift, self._attention[name]).reshape(moved[0].shape)
            cache[:, :count, first + shift : self.offset + shift] = moved
            module_state[PAD][:count] += shift
            module_state[OFFSET][:] = self.offset + shift
        self.offset += shift

    def _make_room(self) -> None:
        """Drop the slots no live row uses any more once they are a third of the cache in
        use (or room runs out), and grow when it is full.

        pocket-tts's attention reads the cache from slot 0 to the offset, dead slots too:
        left until room ran out, they took it to 600-1000 slots where the rows used 250, and
        the attention from 0.4 ms a layer to 2.7-4.5 (4 rows, one thread). The bot's
        (`windowed_attention`) reads from the earliest live row's first slot; the dead slots
        still take room, and moving the live ones costs a pause, hence the threshold."""
        first = self._first_slot()
        if first >= max(COMPACT_SLOTS, (self.offset - first) // 2) or (
            first and self.offset + 1 > self.capacity
        ):
            self._shift(-first)
        if self.offset + 1 > self.capacity:
            self._grow(2 * self.capacity)

    def _grow(self, needed: int) -> None:
        grown = self._new_state(max(needed, 2 * self.capacity))
        for name, module_state in self.state.items():
            grown[name][CACHE][:, :, : self.offset] = module_state[CACHE][:, :, : self.offset]
            grown[name][PAD][:] = module_state[PAD]
            grown[name][OFFSET][:] = module_state[OFFSET]
        self.state = grown

    # ---- one step ----------------------------------------------------------------------
    def _view(self, rows: slice) -> ModelState:
        return {
            name: {
                CACHE: s[CACHE][:, rows],
                OFFSET: s[OFFSET][rows],
                PAD: s[PAD][rows],
            }
            for name, s in self.state.items()
        }

    def _run(self, rows: slice, latents: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        count = latents.shape[0]
        text = torch.zeros((count, 0), dtype=torch.int64)
        audio = torch.empty((count, 0, self.flow.dim), dtype=self.flow.dtype)
        view = self._view(rows)
        return pocket_tts_adapter.run_flow_lm(
            self.model,
            model_state=view,
            text_tokens=text,
            backbone_input_latents=latents,
            audio_conditioning=audio,
        )

    @torch.no_grad()
    def step(
        self, size: int | None = None
    ) -> list[tuple[_Row, torch.Tensor | None, BaseException | None]]:
        """One flow-LM step for every live row, run at `size` rows (the cheapest batch size
        at or above the live rows: see `bot.synthesis.capacity`); the extra rows attend only
        to their own slot and their outputs are dropped.

        Returns (row, latent, None) for each latent made and (row, None, error or None) for
        each row that ended; those have left the batch. A model error in the batched step is
        retried row by row, so only the row that fails ends.
        """
        if not self.rows:
            return []
        self._make_room()
        count = len(self.rows)
        size = min(max(count, size or count), self.max_rows)
        latents = torch.cat([row.latent for row in self.rows])
        if size > count:
            pad = torch.zeros((size - count, 1, self.flow.ldim), dtype=latents.dtype)
            latents = torch.cat([latents, pad])
            for module_state in self.state.values():
                module_state[PAD][count:size] = self.offset
        try:
            outputs: list[tuple[torch.Tensor, bool] | BaseException] = []
            latent, eos = self._run(slice(0, size), latents)
            outputs = [(latent[i : i + 1], bool(eos[i])) for i in range(count)]
        except Exception:
            log.exception("a batched step failed: retrying its %d rows one by one", count)
            outputs = []
            for i in range(count):
                try:
                    latent, eos = self._run(slice(i, i + 1), latents[i : i + 1])
                    outputs.append((latent, bool(eos[0])))
                except Exception as error:
                    outputs.append(error)
        self.offset += 1
        for module_state in self.state.values():
            module_state[OFFSET][:] = self.offset
        results: list[tuple[_Row, torch.Tensor | None, BaseException | None]] = []
        ended: list[int] = []
        for i, (row, output) in enumerate(zip(self.rows, outputs, strict=True)):
            if isinstance(output, BaseException):
                results.append((row, None, output))
                ended.append(i)
                continue
            latent, at_end = output
            kept, last = self._advance(row, latent, at_end)
            if kept is not None:
                results.append((row, kept, None))
            if last:
                results.append((row, None, None))
                ended.append(i)
        for i in reversed(ended):
            self.leave(i)
        return results

    def _advance(
        self, row: _Row, latent: torch.Tensor, eos: bool
    ) -> tuple[torch.Tensor | None, bool]:
        """pocket-tts's end-of-speech rule for one row: (the latent to keep, row ended)."""
        step, chunk = row.step, row.chunk
        if (
            eos
            and row.eos_step is None
            and step >= pocket_tts_adapter.min_frames_before_eos(self.model)
        ):
            row.eos_step = step
        if row.eos_step is not None and step >= row.eos_step + chunk.frames_after_eos:
            return None, True
        row.step += 1
        row.latent = latent
        if row.step >= chunk.max_gen_len:
            log.warning("a unit reached its length limit without an end of speech")
            return latent, True
        return latent, False

    def drop_stopped(self) -> list[_Row]:
        """Rows whose streams were cancelled leave now (within one step of the cancel)."""
        gone = []
        for i in reversed(range(len(self.rows))):
            if self.rows[i].request.stop.is_set():
                gone.append(self.leave(i))
        return gone


# The Mimi modules `decode_from_latent` runs with a state (`BatchedMimi` keeps theirs alone)
DECODING_MODULES = ("upsample.", "decoder_transformer.", "decoder.")


class BatchedMimi:
    """The Mimi decoder at batch n, its rows mirroring the flow-LM batch's rows.

    A row joins with a fresh decoder state: its convolution states are reset and its
    attention slots before the shared offset are masked (`pad`). Slots older than the
    decoder's attention context are dead for every row and are dropped when room runs out.
    """

    def __init__(
        self,
        model: Any,
        *,
        max_rows: int,
        capacity: int | None = None,
    ) -> None:
        """`capacity`: the attention slots to start with; by default what steady speech uses
        (`_make_room` keeps the offset under two contexts), half of the 1024 it was until
        December 2026 for the real decoder (context 250, 16 slots a frame), a tenth for the
        tests' (context 50): the cache is filled twice at each start, and it grows if
        needed."""
        self.model = model
        self.mimi = model.mimi
        self.per_latent = int(self.mimi.encoder_frame_rate / self.mimi.frame_rate)
        self.max_rows = max_rows
        self.count = 0
        self.offset = 0
        stateful = init_states(self.mimi, 1, 1)  # once: it walks every module
        # the decoding half's alone: the encoder's state (its attention caches among it, in
        # fp32) was kept, joined, moved and rotated at every compaction for nothing
        self._modules = {
            name: module
            for name, module in self.mimi.named_modules()
            if name in stateful and name.startswith(DECODING_MODULES)
        }
        self._attention = {
            name: m.rope.max_period for name, m in self._modules.items() if hasattr(m, "rope")
        }
        self.context = min(
            (m.context or 10**9) for m in self._modules.values() if hasattr(m, "rope")
        )
        self.half = half_decoder(model)  # the decoder in bfloat16 (decoder_precision)
        if capacity is None:
            steady = 2 * self.context + 2 * self.per_latent
            capacity = steady if self.context < 10**9 else 1024
        self.state = self._new_state(capacity)

    def _new_state(self, capacity: int) -> ModelState:
        state = {
            name: module.init_state(self.max_rows, sequence_length=capacity)
            for name, module in self._modules.items()
        }
        for name in self._attention:
            state[name][CACHE].zero_()  # masked slots enter the product: no NaN there
        if self.half is not None:
            self.half.cast_state(state)
        return state

    @property
    def capacity(self) -> int:
        return next(self.state[name] for name in self._attention)[CACHE].shape[2]

    def fill_context(self) -> None:
        """Move the shared offset to the attention's context, as after that many frames of
        speech (the slots hold zeros): each decode then reads as many slots as in steady
        speech, where the offset stays between one and two contexts (`_make_room`). For
        `measure_costs`: decoded from the first slot, the start-up table was too kind."""
        self._make_room(self.context + 4 * self.per_latent)  # room for a few decodes
        self.offset = self.context
        for name in self._attention:
            self.state[name][OFFSET][:] = self.offset

    def join(self) -> None:
        index = self.count
        for name, module in self._modules.items():
            if name in self._attention:
                self.state[name][PAD][index] = self.offset
                continue
            for key, value in module.init_state(1, 0).items():
                self.state[name][key][index] = value[0]
        self.count += 1

    def leave(self, index: int) -> None:
        last = self.count - 1
        if index != last:
            for name, module_state in self.state.items():
                if name in self._attention:
                    start = int(module_state[PAD][last])
                    cache = module_state[CACHE]
                    cache[:, index, start : self.offset] = cache[:, last, start : self.offset]
                    module_state[PAD][index] = start
                else:
                    for value in module_state.values():
                        value[index] = value[last]
        self.count -= 1

    def _make_room(self, needed: int) -> None:
        """Drop the slots dead for every row (before the earliest row's, or past the
        attention's context) once they are as many as the context, and grow when full: a
        frame adds 16. pocket-tts's attention reads every slot up to the offset, so until
        room ran out it read up to 1024 where 250 were live; the bot's (`windowed_attention`)
        reads the context alone, and this keeps the cache from growing."""
        pads = next(self.state[name] for name in self._attention)[PAD][: self.count]
        first = min(int(pads.min()) if self.count else self.offset, self.offset)
        dead = max(first, self.offset - self.context)
        if dead >= max(COMPACT_SLOTS, self.context) or (
            dead > 0 and self.offset + needed > self.capacity
        ):
            count, live = self.count, self.offset - dead
            for name in self._attention:
                module_state = self.state[name]
                cache = module_state[CACHE]
                keys = cache[0, :count, dead : self.offset]
                rotated = rotate_keys(
                    keys.reshape(-1, *keys.shape[-2:]), -dead, self._attention[name]
                )
                values = cache[1, :count, dead : self.offset]
                if dead < live:  # the slots overlap their new place
                    values = values.clone()
                cache[1, :count, :live] = values
                cache[0, :count, :live] = rotated.view(keys.shape)
                module_state[PAD][:] = (module_state[PAD] - dead).clamp(min=0)
                module_state[OFFSET][:] = self.offset - dead
            self.offset -= dead
        if self.offset + needed > self.capacity:
            grown = self._new_state(2 * (self.offset + needed))
            for name, module_state in self.state.items():
                for key, value in module_state.items():
                    if key == CACHE:
                        grown[name][key][:, :, : self.offset] = value[:, :, : self.offset]
                    else:
                        grown[name][key][:] = value
            self.state = grown

    @torch.no_grad()
    def decode(self, latents: torch.Tensor) -> torch.Tensor:
        """Audio `[n, samples]` for one latent per row `[n, 1, ldim]` (n = the live rows).

        All rows in one call, on one thread. Decoding them in two halves side by side (until
        December 2026) was slower on 2 cores: pocket-tts runs each torch op on one thread, so
        the LM's thread and this one already fill them, and a third only contended. Measured
        in `bench/decoding.py`, audio per row against real time, halves then one call: the
        tests' model 2.07x and 3.31x at 2 rows, 1.71x and 2.17x at 4; the real `english`
        architecture 0.75x and 0.79x at 2 rows, 0.45x and 0.55x at 4."""
        count = latents.shape[0]
        assert count == self.count
        self._make_room(self.per_latent)
        flow = self.model.flow_lm
        latents = latents * flow.emb_std + flow.emb_mean
        audio = self._decode_rows(slice(0, count), latents)
        self.offset += self.per_latent
        for name in self._attention:
            self.state[name][OFFSET][:] = self.offset
        return audio[:, 0]

    @torch.no_grad()
    def _decode_rows(self, rows: slice, latents: torch.Tensor) -> torch.Tensor:
        view = {
            name: {
                key: value[:, rows] if key == CACHE else value[rows]
                for key, value in module_state.items()
            }
            for name, module_state in self.state.items()
        }
        if self.half is not None:
            return self.half.decode(latents, view)
        audio: torch.Tensor = self.mimi.decode_from_latent(latents, view)
        return audio


class _Decoder:
    """Mimi for a share of the batch's rows, replaying their joins, steps and leaves in order.

    The batch has two: one on its own thread, and one run inline on the LM's thread after
    each step (`threaded=False`), so that both cores decode when the LM's step leaves its
    core idle (see `capacity.best_split`). Each row is decoded by one of them, from its join
    to its leave, so its audio comes out in order.

    For the threaded one, `lag` counts the steps handed over and not decoded yet: the LM's
    thread waits while it is over `Batcher.MAX_LAG`, so the two threads meet only through
    this bounded queue and the step period the batch measures includes a decoder that cannot
    keep up."""

    def __init__(
        self,
        model: Any,
        max_rows: int,
        costs: StepCosts,
        *,
        threaded: bool,
        decodes: threading.Lock | None = None,
    ) -> None:
        """`decodes`: held around each decode on the threaded one (see `pipeline_locks`)."""
        self.mimi = BatchedMimi(model, max_rows=max_rows)
        self._decodes = decodes or threading.Lock()
        self.fade = int(model.config.mimi.sample_rate * FADE_IN_S)
        self.costs = costs
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self._rows: list[_Row] = []
        self._fresh: set[_Row] = set()
        self.count = 0  # rows joined and not left, as the LM's thread has handed them over
        self.lag = 0
        self._decoded = threading.Condition()
        self._thread: threading.Thread | None = None
        if threaded:
            self._thread = threading.Thread(target=self._run, name="tts-decoder", daemon=True)
            self._thread.start()

    def _put(self, event: tuple[Any, ...]) -> None:
        if self._thread is None:
            self._process(event)
        else:
            self._queue.put(event)

    def join(self, row: _Row) -> None:
        self.count += 1
        self._put(("join", row))

    def step(self, latents: dict[_Row, torch.Tensor], keep: set[_Row]) -> None:
        """One latent for each of this decoder's rows (`keep`: those to play)."""
        if self._thread is not None:
            with self._decoded:
                self.lag += 1
        self._put(("step", latents, keep))

    def wait_under(self, lag: int, closed: Callable[[], bool]) -> None:
        """Block the caller (the LM's thread) while more than `lag` steps wait to be decoded."""
        if self._thread is None:
            return
        with self._decoded:
            while self.lag > lag and not closed() and self._thread.is_alive():
                self._decoded.wait(0.5)

    def leave(self, row: _Row, error: BaseException | None, last: bool) -> None:
        self.count -= 1
        self._put(("leave", row, error, last))

    def end(self, request: Request, error: BaseException | None) -> None:
        self._put(("end", request, error))

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=30)

    def _run(self) -> None:
        while (event := self._queue.get()) is not None:
            self._process(event)

    def _process(self, event: tuple[Any, ...]) -> None:
        try:
            self._handle(event)
        except Exception as error:  # the decoder itself failed: end every row it holds
            log.exception("the audio decoder failed")
            for row in self._rows:
                self._end(row.request, error)
            self._rows.clear()
            self._fresh.clear()
            self.mimi = BatchedMimi(self.mimi.model, max_rows=self.mimi.max_rows)
        finally:
            if event[0] == "step" and self._thread is not None:
                with self._decoded:
                    self.lag -= 1
                    self._decoded.notify_all()

    def _handle(self, event: tuple[Any, ...]) -> None:
        kind = event[0]
        if kind == "join":
            self.mimi.join()
            self._rows.append(event[1])
            self._fresh.add(event[1])
        elif kind == "step":
            _, latents, keep = event
            rows = [row for row in self._rows if row in latents]
            if not rows:
                return
            if len(rows) != len(self._rows):
                raise RuntimeError("a step without a latent for every row")
            started = time.perf_counter()
            with self._decodes if self._thread is not None else contextlib.nullcontext():
                audio = self.mimi.decode(torch.cat([latents[row] for row in rows]))
            self.costs.decodes.add(len(rows), time.perf_counter() - started)
            for row, samples in zip(rows, audio, strict=True):
                if row in keep and not row.request.stop.is_set():
                    chunk = samples.numpy().astype(np.float32, copy=True)
                    if row in self._fresh:  # pocket-tts fades a stream's first 5 ms in
                        self._fresh.discard(row)
                        n = min(self.fade, len(chunk))
                        chunk[:n] *= np.linspace(0, 1, self.fade, dtype=np.float32)[:n]
                    row.request.emit(chunk)
        elif kind == "leave":
            _, row, error, last = event
            if row in self._rows:
                index = self._rows.index(row)
                self.mimi.leave(index)
                self._rows[index] = self._rows[-1]
                self._rows.pop()
                self._fresh.discard(row)
            if error is not None or last or row.request.stop.is_set():
                self._end(row.request, error)
        else:
            self._end(event[1], event[2])

    @staticmethod
    def _end(request: Request, error: BaseException | None) -> None:
        if not request.ended:
            request.ended = True
            request.end(error)


def cost_sizes(largest: int) -> list[int]:
    """The batch sizes timed at start: every size up to 8 (padding needs them all), then a
    few larger ones."""
    return [n for n in (*range(1, 9), 12, 16, 24, 32) if n <= largest]


# What a row's attention reads in the bot: its prompt (a voice state and a 20-word text, about
# 112 slots: bench/probe.py) and the speech so far. Timed at 8 slots of prompt, the start-up
# table was so kind that it let 32 rows in where 12-16 kept up (the real `english`, int8).
MEASURED_PROMPT_SLOTS = 120


@torch.no_grad()
def measure_costs(model: Any, sizes: list[int], repeats: int = 3) -> list[BatchCost]:
    """Time one LM step and one decode at each batch size (best of `repeats`), as in steady
    speech: each LM row holds a prompt of about `MEASURED_PROMPT_SLOTS` positions, and the
    decoder's attention reads its whole context (`BatchedMimi.fill_context`)."""
    empty = init_states(model.flow_lm, batch_size=1, sequence_length=0)
    text, options = "Measuring how long one step takes.", _text_options(model)
    chunk = _prefill_one(model, empty, text, options)
    repeated = max(1, MEASURED_PROMPT_SLOTS // max(1, chunk.length))
    if repeated > 1:  # one chunk of that many positions (not split: only its length counts)
        chunk = _prefill_one(model, empty, " ".join([text] * repeated), options)
    costs = []
    for size in sizes:
        lm = BatchedFlowLM(model, max_rows=size, capacity=chunk.length + 2 * repeats + 8)
        mimi = BatchedMimi(model, max_rows=size, capacity=256)  # one thread: the whole cost
        for _ in range(size):
            lm.join(Request(collections.deque(), print, print), chunk)
            mimi.join()
        mimi.fill_context()
        latents = torch.zeros((size, 1, model.flow_lm.ldim))
        lm_times, decode_times = [], []
        for _ in range(repeats + 1):  # the first of each is a warm-up
            started = time.perf_counter()
            lm._run(slice(0, size), latents)
            lm_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            mimi.decode(latents)
            decode_times.append(time.perf_counter() - started)
        costs.append(BatchCost(size, min(lm_times[1:]), min(decode_times[1:])))
    return costs


class LiveCapacity:
    """A pipeline's capacity: how many rows stay in real time, from the live step times, the
    fastest of them spoken at `rate` (`extra`: see `StepCosts.capacity`). A change at 1x is
    logged with the live figures behind it."""

    def __init__(self, costs: StepCosts, index: int) -> None:
        self.costs = costs
        self.index = index
        self._logged: int | None = None

    def __call__(self, rate: float = 1.0, extra: int = 0) -> int:
        rows = self.costs.capacity(rate, extra)
        if rate == 1.0 and not extra and rows != self._logged:
            self._logged = rows
            log.info(
                "the batch carries %d rows now%s (live ms a step: %s)",
                rows,
                f" in pipeline {self.index}" if self.index else "",
                self.costs.live(),
            )
        return rows


class Batcher:
    """One pipeline: a `BatchedFlowLM` on one thread and the batched Mimi decoder on another.

    `submit()` (any thread) queues a stream; its prompt is prefilled on the batch's thread
    between two steps (one prefill per step at most) and it joins at the next frame boundary
    while the batch has a free row, live speech before background work. Every step, decode
    and prefill is timed (`costs`), and how many rows stay in real time (`capacity()`) follows
    those live figures: the scheduler admits new speech only within it, so an admitted stream's next
    chunk always finds its row and never waits mid-message.

    The engine runs one or more side by side (`bot.synthesis.pipelines`): `index` picks the
    locks it shares with the same pipeline of other models (`pipeline_locks`), `cores` the
    cores it may count on (its share of the process's). If its thread fails beyond one step,
    every stream it holds ends with the error, and `on_death(self)` is called on that thread
    so that its owner can start a new one in its place.
    """

    MAX_LAG = 2  # steps the LM may run ahead of the decoder
    # While every row's listener has this much audio ahead, the batch steps at the frame's
    # pace instead of as fast as it can. Run flat out, rows got ahead, left at their unit's
    # end and came back one by one: at 4 servers the batch averaged 2.5-2.9 rows, where a
    # frame costs each far more CPU than at 4 (int8: 18 ms a row at 2 rows, 13 at 4).
    PACE_S = 2.0

    def __init__(
        self,
        model: Any,
        *,
        max_rows: int,
        costs: list[BatchCost] | None = None,
        index: int = 0,
        cores: int | None = None,
        on_death: Callable[[Batcher], None] | None = None,
        on_cost: Callable[[str, int, float], None] | None = None,
    ) -> None:
        """`on_cost`: hears each live figure (see `StepCosts`)."""
        self.index = index
        self.batch = BatchedFlowLM(model, max_rows=max_rows)
        self.frame_s = 1 / model.mimi.frame_rate
        cores = usable_cores() if cores is None else cores
        self.costs = StepCosts(costs or [], max_rows, self.frame_s, cores, listener=on_cost)
        self._steps_lock, decodes = pipeline_locks(index)
        self._decoder = _Decoder(model, max_rows, self.costs, threaded=True, decodes=decodes)
        self._inline = _Decoder(model, max_rows, self.costs, threaded=False)
        self._on_death = on_death
        self.failed: BaseException | None = None  # why its thread ended, if it failed
        self._preparing: Request | None = None  # the stream whose chunk is being prefilled
        self._decoder_of: dict[_Row, _Decoder] = {}
        self._waiting: collections.deque[tuple[Request, Prefilled | None]] = collections.deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._joined = threading.Event()  # a stream was submitted: a paced wait ends
        self._last_step = 0.0
        self._closed = False
        self.steps = 0
        self.rows_stepped = 0  # sum of the batch size over steps (mean batch: / steps)
        self._capacity = LiveCapacity(self.costs, index)
        name = "tts-batch" if index == 0 else f"tts-batch-{index}"
        self._thread = threading.Thread(target=self._supervised, name=name, daemon=True)
        self._thread.start()

    def capacity(self, rate: float = 1.0, extra: int = 0) -> int:
        return self._capacity(rate, extra)

    @property
    def alive(self) -> bool:
        """Taking streams: not closed, and its thread has not failed."""
        return not self._closed and self.failed is None

    def submit(self, request: Request) -> bool:
        """Queue `request`; False (and nothing done) when this pipeline has failed."""
        if not request.more:
            request.ended = True
            request.end(None)
            return True
        with self._lock:
            if self.failed is not None:
                return False
            chunk = request.chunks.popleft() if request.chunks else None
            self._waiting.append((request, chunk))
        self._wake.set()
        self._joined.set()
        return True

    def holds(self, request: Request) -> bool:
        """Whether it holds the stream's voice state already: it takes it from this process,
        at no cost (`Pipeline.holds`)."""
        return False

    def cache_bytes(self) -> int:
        """The bytes of this pipeline's attention caches and decoder states (they grow with
        the rows' context, and shrink back when compacted)."""
        states = [self.batch.state, self._decoder.mimi.state, self._inline.mimi.state]
        return sum(
            value.nelement() * value.element_size()
            for state in states
            for module_state in list(state.values())
            for value in module_state.values()
        )

    def close(self) -> None:
        self._closed = True
        self._wake.set()
        self._joined.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=30)
        self._decoder.close()
        self._inline.close()

    def _supervised(self) -> None:
        """The pipeline's thread: `_run`, and if that fails, every stream it holds ends with
        the error (after the audio already queued for it) and its owner is told."""
        try:
            self._run()
        except Exception as error:
            log.exception("pipeline %d failed: its streams end, and it is replaced", self.index)
            self._fail(error)
            if self._on_death is not None:
                self._on_death(self)

    def _fail(self, error: BaseException) -> None:
        with self._lock:
            self.failed = error
            waiting, self._waiting = list(self._waiting), collections.deque()
        streams = [r.request for r in self.batch.rows] + [r for r, _ in waiting]
        streams += [r.request for d in (self._decoder, self._inline) for r in d._rows]
        if self._preparing is not None:
            streams.append(self._preparing)
        for i in reversed(range(len(self.batch.rows))):  # after the audio they have queued
            with contextlib.suppress(Exception):
                self._leave(i, error, True)
        for request, _ in waiting:
            self._ending(request).end(request, error)
        self._decoder.close()  # it decodes what it was given, ends those streams, then stops
        for request in streams:  # those it could not end (and those on no decoder yet)
            _Decoder._end(request, error)

    def _next_waiting(self, ready: bool) -> tuple[Request, Prefilled | None] | None:
        """The oldest waiting live stream, else the oldest background one; `ready`: among
        those prefilled, else among those still to prefill."""
        for background in (False, True):
            for i, (request, chunk) in enumerate(self._waiting):
                if request.background == background and (chunk is not None) == ready:
                    del self._waiting[i]
                    return request, chunk
        return None

    def _ending(self, request: Request) -> _Decoder:
        """The decoder to end `request` through: after the audio it has queued."""
        return request._decoder or self._decoder

    def _leave(self, index: int, error: BaseException | None, last: bool) -> _Row:
        row = self.batch.leave(index)
        self._decoder_of.pop(row).leave(row, error, last)
        return row

    def _assign(self, row: _Row) -> None:
        """A stream's first row goes to the inline decoder while it has fewer than its share
        of the rows (`StepCosts.split`), else to the decoder's thread; its later chunks' rows
        go where the first went."""
        decoder = row.request._decoder
        if decoder is None:
            share = self.costs.split(len(self.batch.rows))[1]
            decoder = self._inline if self._inline.count < share else self._decoder
            row.request._decoder = decoder
        decoder.join(row)
        self._decoder_of[row] = decoder

    def _admit(self) -> tuple[bool, Request | None]:
        """Under the lock: end streams cancelled while waiting, join the prefilled ones while
        there are rows, and take one to prefill. Returns (idle, the stream to prefill)."""
        batch = self.batch
        for request, _ in self._waiting:
            if request.stop.is_set():
                self._ending(request).end(request, None)
        self._waiting = collections.deque((r, c) for r, c in self._waiting if not r.stop.is_set())
        while len(batch.rows) < batch.max_rows and (waiting := self._next_waiting(ready=True)):
            request, chunk = waiting
            assert chunk is not None
            try:
                batch.join(request, chunk)
            except Exception as error:  # this stream ends; the batch goes on
                log.exception("a stream could not join the batch")
                self._ending(request).end(request, error)
                continue
            self._assign(batch.rows[-1])
        todo = None
        if len(batch.rows) < batch.max_rows and (waiting := self._next_waiting(ready=False)):
            todo = waiting[0]
        idle = not batch.rows and not self._waiting and todo is None
        if idle:
            self._wake.clear()
        return idle, todo

    def _prepare(self, request: Request) -> None:
        """Prefill a stream's next chunk (on this thread, between steps); it joins next."""
        self._preparing = request
        try:
            self._prefill_next(request)
        finally:
            self._preparing = None

    def _prefill_next(self, request: Request) -> None:
        if request._pending is None:
            assert request.prepare is not None
            request._pending, request.prepare = request.prepare(self.batch.model), None
        started = time.perf_counter()
        try:
            with self._steps_lock:
                chunk = next(request._pending, None)
        except Exception as error:  # delivered to the stream's caller
            request._pending = None
            self._ending(request).end(request, error)
            return
        finally:
            self.costs.add_prefill(time.perf_counter() - started)
        if chunk is None:
            request._pending = None
            self._ending(request).end(request, None)
            return
        with self._lock:
            self._waiting.appendleft((request, chunk))

    def _run(self) -> None:
        batch = self.batch
        while not self._closed:
            with self._lock:
                idle, todo = self._admit()
            if idle:
                self._wake.wait(1.0)
                continue
            if todo is not None:
                self._prepare(todo)
            for i in reversed(range(len(batch.rows))):  # cancelled: the row is free now
                if batch.rows[i].request.stop.is_set():
                    self._leave(i, None, True)
            if not batch.rows:
                continue
            self._decoder.wait_under(self.MAX_LAG, lambda: self._closed)
            self._pace()
            with self._steps_lock:  # one model's step at a time (see `pipeline_locks`)
                self._step()

    def _pace(self) -> None:
        """Hold the next step until a frame after the last one while every row is `PACE_S`
        ahead and no stream waits to join; a stream submitted meanwhile ends the wait."""
        wait = self._last_step + self.frame_s - time.perf_counter()
        if wait <= 0 or self._waiting or not all(map(self._ahead, self.batch.rows)):
            return
        self._joined.clear()
        if not self._waiting and not self._closed:
            started = time.perf_counter()
            self._joined.wait(wait)
            waited = time.perf_counter() - started
            for row in self.batch.rows:
                row.request.paced_s += waited

    def _ahead(self, row: _Row) -> bool:
        slack = row.request.slack
        if slack is None:
            return False
        try:
            return slack() >= self.PACE_S
        except Exception:  # a listener gone: no reason to wait for it
            log.debug("a stream's slack could not be read", exc_info=True)
            return False

    def _step(self) -> None:
        batch = self.batch
        rows = list(batch.rows)
        started = self._last_step = time.perf_counter()
        try:
            results = batch.step(self.costs.padded(len(rows)))
            self.costs.add_step(len(rows), time.perf_counter() - started)
        except Exception as error:  # beyond one row: end every row, keep the thread
            log.exception("the batch failed")
            while batch.rows:
                self._leave(len(batch.rows) - 1, error, True)
            return
        self.steps += 1
        self.rows_stepped += len(rows)
        made = {row: latent for row, latent, _ in results if latent is not None}
        ended = {row: error for row, latent, error in results if latent is None}
        blank = torch.zeros((1, 1, batch.flow.ldim))  # rows that ended: decoded, not played
        for decoder in (self._decoder, self._inline):  # the thread's first: it starts at once
            mine = [row for row in rows if self._decoder_of[row] is decoder]
            if mine:
                latents = {row: made.get(row, blank) for row in mine}
                decoder.step(latents, {row for row in mine if row in made})
        for row in rows:
            if row in made and row.request.on_latent is not None:
                row.request.on_latent(made[row])
        for row in reversed(rows):  # each next chunk to the front, the first row's foremost
            if row not in ended:
                continue
            failure = ended[row]
            more = failure is None and row.request.more
            self._decoder_of.pop(row).leave(row, failure, not more)
            if more:
                with self._lock:  # the stream's next chunk goes to the front
                    chunk = row.request.chunks.popleft() if row.request.chunks else None
                    self._waiting.appendleft((row.request, chunk))
