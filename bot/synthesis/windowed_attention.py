"""Streaming attention that reads only the cache slots some query can see.

The decoder's transformer attends to the last `context` positions (250 for `english`), but
pocket-tts's streaming attention hands every slot up to the offset to torch's attention and
masks the old ones. `BatchedMimi` keeps the offset between one and two contexts (it drops
the dead slots when they are a context's worth: dropping them each frame would rotate the
whole cache each frame), so a decode would read about half as many slots again as can count.

The flow LM's attention has no context, but its batch (`BatchedFlowLM`) drops the slots
before every live row's first only once they are half as many as the live ones (moving and
turning the rest costs a pause), and until then each step would read them too; that
attention is bound by memory (fp32 keys and values, one query a row).

`WindowedAttention` computes the same thing (the same keys, positions and mask) over the
slots from the first any query can see: after the context (Mimi's decoder), and from the
earliest row's first slot (any batch). Without a state, or with a mask from the caller, it is
pocket-tts's own forward. The figures: docs/performance.md, "The decoder in bfloat16".
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from bot.synthesis.pocket_tts_adapter import CACHE, OFFSET, PAD, StreamingMultiheadAttention


# pocket-tts ships no type information: its class is Any to mypy
class WindowedAttention(StreamingMultiheadAttention):  # type: ignore[misc]
    """pocket-tts's streaming attention, its keys and values cut to the slots it can use."""

    def forward(
        self,
        query: torch.Tensor,
        model_state: Any,
        attn_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if model_state is None or attn_mask is not None:
            whole: torch.Tensor = super().forward(query, model_state, attn_mask)
            return whole
        state = self.get_state(model_state)
        projected = self.in_proj(query)
        b, t, _ = projected.shape
        d = self.dim_per_head
        q = projected[..., : self.attn_dim].view(b, t, self.num_heads, d)
        kv = projected[..., self.attn_dim :].view(b, t, 2, self.num_kv_heads, d)
        k, v = torch.unbind(kv, dim=2)
        offsets = state[OFFSET]
        offset = int(offsets.view(-1)[0])
        if offsets.numel() > 1 and not bool((offsets == offset).all()):
            raise ValueError("Linear cache offset must be identical across batch.")  # as theirs
        q, k = self.rope(q, k, offset=offsets.view(-1)[0])
        cache = state[CACHE]
        cache[0, :, offset : offset + t] = k
        cache[1, :, offset : offset + t] = v
        pad = state.get(PAD)
        first = 0
        if self.context is not None:  # the first query, at `offset`, sees offset - context on
            first = offset - self.context + 1
        if pad is not None and pad.numel():  # slots before every row's first are no row's
            first = max(first, min(int(pad.min()), offset))
        first = max(0, first)
        keys = cache[0, :, first : offset + t].permute(0, 2, 1, 3)
        values = cache[1, :, first : offset + t].permute(0, 2, 1, 3)
        if self.num_kv_heads != self.num_heads:
            keys = keys.repeat_interleave(self.num_heads // self.num_kv_heads, dim=1)
            values = values.repeat_interleave(self.num_heads // self.num_kv_heads, dim=1)
        shift = pad if pad is not None else torch.zeros(b, dtype=torch.long, device=q.device)
        # positions as pocket-tts counts them: a row's padded slots fall below 0
        positions = torch.arange(first, offset + t, dtype=torch.long, device=q.device)
        pos_k = positions.view(1, -1) - shift.view(-1, 1)
        steps = torch.arange(t, dtype=torch.long, device=q.device)
        pos_q = (offset - shift).view(-1, 1) + steps.view(1, -1)
        delta = pos_q[:, :, None] - pos_k[:, None, :]
        mask = (pos_k[:, None, :] >= 0) & (delta >= 0)
        if self.context is not None:
            mask &= delta < self.context
        x = F.scaled_dot_product_attention(q.transpose(1, 2), keys, values, mask[:, None])
        out: torch.Tensor = self.out_proj(x.transpose(1, 2).reshape(b, t, self.attn_dim))
        return out


def window_attention(module: nn.Module) -> int:
    """Turn `module`'s streaming attentions into `WindowedAttention` (in place: the class
    only, weights and state names unchanged). How many it turned."""
    turned = 0
    for child in module.modules():
        if type(child) is StreamingMultiheadAttention:
            child.__class__ = WindowedAttention
            turned += 1
    return turned
