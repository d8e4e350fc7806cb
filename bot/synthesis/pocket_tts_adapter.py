"""Every private pocket-tts name PocketVoice uses, in one place: the continuous batching runs
the model's own flow LM step by step, which pocket-tts only offers through underscore methods.
Written for pocket-tts `WRITTEN_FOR` (`pyproject.toml` pins `>=4.0.1,<5`): after an upgrade,
check this module first (`doctor` warns when the installed version differs). The rest of the
bot calls these functions, never the private names."""

from __future__ import annotations

from typing import Any

import torch
from pocket_tts.utils.utils import _ORIGINS_OF_PREDEFINED_VOICES

LIBRARY = "pocket-tts"  # the distribution name, for importlib.metadata
WRITTEN_FOR = "4.0.1"  # the version whose private names this module uses

# The names of the voices pocket-tts ships (it keeps them in a private table).
PREDEFINED_VOICES: tuple[str, ...] = tuple(_ORIGINS_OF_PREDEFINED_VOICES)


def flow_lm_current_end(model: Any, state: dict) -> int:
    """How many positions `state`'s attention cache already holds."""
    return model._flow_lm_current_end(state)


def expand_kv_cache(model: Any, state: dict, sequence_length: int) -> None:
    """Grow `state`'s attention cache to hold `sequence_length` positions."""
    model._expand_kv_cache(state, sequence_length=sequence_length)


def run_flow_lm_and_increment_step(model: Any, state: dict, text_tokens: torch.Tensor) -> None:
    """Feed `text_tokens` through the flow LM into `state` (the prompt's prefill)."""
    model._run_flow_lm_and_increment_step(model_state=state, text_tokens=text_tokens)


def estimate_max_gen_len(model: Any, tokens: int) -> int:
    """pocket-tts's bound on the frames generated for a chunk of `tokens` text tokens."""
    return model._estimate_max_gen_len(tokens)


def run_flow_lm(
    model: Any,
    model_state: dict,
    text_tokens: torch.Tensor,
    backbone_input_latents: torch.Tensor,
    audio_conditioning: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One flow-LM step: (the next latents, the end-of-speech logits)."""
    return model._run_flow_lm(
        model_state=model_state,
        text_tokens=text_tokens,
        backbone_input_latents=backbone_input_latents,
        audio_conditioning=audio_conditioning,
    )


def min_frames_before_eos(model: Any) -> int:
    """The frames pocket-tts generates before it honours an end of speech."""
    return model._MIN_FRAMES_BEFORE_EOS
