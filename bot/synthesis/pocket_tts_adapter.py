"""Every private pocket-tts name PocketVoice uses, in one place: the continuous batching runs
the model's own flow LM step by step, which pocket-tts only offers through underscore methods,
its submodules and the layout of its attention state. pocket-tts's public API is its
package's `__all__` (`TTSModel`, `export_model_state`); anything else of it is reached here,
and the rest of the bot (benchmarks and tests too) uses the names below, never pocket-tts's
own (tests/test_private_names.py checks). Written for pocket-tts `WRITTEN_FOR`
(`pyproject.toml` pins `>=4.0.1,<5`): after an upgrade, check this module first (`doctor`
warns when the installed version differs)."""

from __future__ import annotations

from typing import Any

import torch

from bot.synthesis.torch_private import compile_markers_skipped

with compile_markers_skipped():
    from pocket_tts import TTSModel
    from pocket_tts.default_parameters import (
        DEFAULT_VOICE_FOR_LANGUAGE,
        MAX_TOKEN_PER_CHUNK,
        get_default_voice_for_language,
    )
    from pocket_tts.models.flow_lm import FlowLMModel
    from pocket_tts.models.mimi import build_mimi
    from pocket_tts.models.text_chunking import prepare_text_prompt, split_into_best_sentences
    from pocket_tts.modules.attention import StreamingMultiheadAttention
    from pocket_tts.modules.mlp import SimpleMLPAdaLN
    from pocket_tts.modules.rope import apply_rope
    from pocket_tts.modules.stateful_module import increment_steps, init_states
    from pocket_tts.modules.transformer import StreamingTransformer
    from pocket_tts.utils.config import CONFIGS_DIR, load_config
    from pocket_tts.utils.utils import _ORIGINS_OF_PREDEFINED_VOICES, make_cache_directory

__all__ = [  # pocket-tts's own names, passed on as they are
    "CONFIGS_DIR",
    "DEFAULT_VOICE_FOR_LANGUAGE",
    "MAX_TOKEN_PER_CHUNK",
    "FlowLMModel",
    "SimpleMLPAdaLN",
    "StreamingMultiheadAttention",
    "StreamingTransformer",
    "apply_rope",
    "build_mimi",
    "get_default_voice_for_language",
    "increment_steps",
    "init_states",
    "load_config",
    "make_cache_directory",
    "prepare_text_prompt",
    "split_into_best_sentences",
]

LIBRARY = "pocket-tts"  # the distribution name, for importlib.metadata
WRITTEN_FOR = "4.0.1"  # the version whose private names this module uses

# The names of the voices pocket-tts ships (it keeps them in a private table).
PREDEFINED_VOICES: tuple[str, ...] = tuple(_ORIGINS_OF_PREDEFINED_VOICES)

# The keys of one attention module's state (`init_states`'s dict per module, and the model's
# voice states): `cache`, keys and values [2, batch, positions, heads, dim]; `offset`, each
# row's next position; `pad`, each row's first valid position (slots before it are masked).
CACHE = "cache"
OFFSET = "offset"
PAD = "pad"
STATE_KEYS = frozenset({CACHE, OFFSET, PAD})


def is_attention(module: torch.nn.Module) -> bool:
    """Whether `module` is one of the flow LM's attention modules (it holds a KV cache)."""
    return hasattr(module, "_cache_backend")


def set_generation_length(tokens_per_second: float, padding_s: float) -> None:
    """pocket-tts's bound on a chunk's generated length: tokens / this rate + this padding,
    for every model (the benchmarks' random weights never say "end of speech")."""
    TTSModel._TOKENS_PER_SECOND_ESTIMATE = tokens_per_second
    TTSModel._GEN_SECONDS_PADDING = padding_s


def generation_length() -> tuple[float, float]:
    """What `set_generation_length` set (pocket-tts's own figures until then)."""
    return TTSModel._TOKENS_PER_SECOND_ESTIMATE, TTSModel._GEN_SECONDS_PADDING


def flow_lm_current_end(model: Any, state: dict[str, Any]) -> int:
    """How many positions `state`'s attention cache already holds."""
    return int(model._flow_lm_current_end(state))


def expand_kv_cache(model: Any, state: dict[str, Any], sequence_length: int) -> None:
    """Grow `state`'s attention cache to hold `sequence_length` positions."""
    model._expand_kv_cache(state, sequence_length=sequence_length)


def run_flow_lm_and_increment_step(
    model: Any, state: dict[str, Any], text_tokens: torch.Tensor
) -> None:
    """Feed `text_tokens` through the flow LM into `state` (the prompt's prefill)."""
    model._run_flow_lm_and_increment_step(model_state=state, text_tokens=text_tokens)


def estimate_max_gen_len(model: Any, tokens: int) -> int:
    """pocket-tts's bound on the frames generated for a chunk of `tokens` text tokens."""
    return int(model._estimate_max_gen_len(tokens))


def run_flow_lm(
    model: Any,
    model_state: dict[str, Any],
    text_tokens: torch.Tensor,
    backbone_input_latents: torch.Tensor,
    audio_conditioning: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One flow-LM step: (the next latents, the end-of-speech logits)."""
    latents: tuple[torch.Tensor, torch.Tensor] = model._run_flow_lm(
        model_state=model_state,
        text_tokens=text_tokens,
        backbone_input_latents=backbone_input_latents,
        audio_conditioning=audio_conditioning,
    )
    return latents


def autoregressive_generation(
    model: Any,
    state: dict[str, Any],
    max_gen_len: int,
    frames_after_eos: int,
    latents: Any,
    stop: Any,
) -> None:
    """pocket-tts's own batch-1 generation from a prefilled `state`: its latents into the
    queue `latents`, then None (the tests' reference for the batched one)."""
    model._autoregressive_generation(state, max_gen_len, frames_after_eos, latents, stop)


def min_frames_before_eos(model: Any) -> int:
    """The frames pocket-tts generates before it honours an end of speech."""
    return int(model._MIN_FRAMES_BEFORE_EOS)
