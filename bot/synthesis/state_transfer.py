"""Voice states to worker processes: sent once, as plain bytes, named by their SHA-256.

A tensor sent through a `multiprocessing` pipe goes by torch's shared memory: a file in
`/dev/shm` (64 MB in a Docker container by default: a few voice states) and descriptors held
in the worker for each of the state's tensors. A state packed to bytes (`pack`) travels in the
pipe itself and is unpacked into the worker's own memory, so neither `/dev/shm`'s size nor the
descriptor limit decides how many voices a worker can hold.

Each state crosses to a worker once: the worker keeps it under its digest (`WorkerStates`,
bounded) and later streams name it. A digest of the bytes, not an object's id (which Python
reuses) nor a voice's name (whose file can be rebuilt), can only ever name the same state.
"""

from __future__ import annotations

import collections
import hashlib
import io
import threading
from typing import Any

import torch

ModelState = dict[str, dict[str, torch.Tensor]]

# What each worker keeps (and the bot's process mirrors): a state is a few MB for a real model
STATES_PER_WORKER = 32
STATE_BYTES_PER_WORKER = 256 * 1024 * 1024
# The states whose digests this process remembers (each entry holds its state): as many as the
# engine's `StateCache` keeps, since a state it has let go comes back as a new object anyway
KNOWN_STATES = 32


def pack(state: ModelState) -> bytes:
    """A voice state as bytes (`torch.save`'s format: every dtype, nested dicts)."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def unpack(payload: bytes) -> ModelState:
    """A voice state from `pack`'s bytes; tensors only, nothing else is unpickled."""
    state: ModelState = torch.load(io.BytesIO(payload), weights_only=True)
    return state


def digest(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


class StateDigests:
    """The digest of each state object this process has packed, so that a state used again
    is not packed and hashed again. Each entry holds its state: while it is here its id cannot
    be given to another object. Shared by every worker's pipeline (thread-safe)."""

    def __init__(self, size: int = KNOWN_STATES) -> None:
        self._size = size
        self._known: collections.OrderedDict[int, tuple[Any, str]] = collections.OrderedDict()
        self._lock = threading.Lock()

    def of(self, state: ModelState) -> tuple[str, bytes | None]:
        """The state's digest, and its bytes when they were packed just now for it."""
        with self._lock:
            known = self._known.get(id(state))
            if known is not None and known[0] is state:
                self._known.move_to_end(id(state))
                return known[1], None
        payload = pack(state)
        key = digest(payload)
        with self._lock:
            self._known[id(state)] = (state, key)
            self._known.move_to_end(id(state))
            while len(self._known) > self._size:
                self._known.popitem(last=False)
        return key, payload


class WorkerStates:
    """The states one worker holds, least recently used first, bounded by count and bytes.

    The bot's process keeps this mirror and decides what the worker keeps: the pipe carries
    its `("state", key, bytes)` and `("forget", key)` in order, before the streams that name
    them, so a stream never names a state its worker has let go."""

    def __init__(
        self, max_items: int = STATES_PER_WORKER, max_bytes: int = STATE_BYTES_PER_WORKER
    ) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._sizes: collections.OrderedDict[str, int] = collections.OrderedDict()
        self.bytes = 0
        self.sent_bytes = 0  # all states' bytes sent to the worker so far

    def __contains__(self, key: str) -> bool:
        return key in self._sizes

    def __len__(self) -> int:
        return len(self._sizes)

    def messages(self, key: str, state: ModelState, payload: bytes | None) -> list[tuple[Any, ...]]:
        """What the worker must be sent before a stream naming `key` (`payload`: the state's
        bytes when already packed): the state unless it holds it, then what it forgets."""
        if key in self._sizes:
            self._sizes.move_to_end(key)
            return []
        payload = payload if payload is not None else pack(state)
        forgotten = self.add(key, len(payload))
        return [("state", key, payload), *([("forget", forgotten)] if forgotten else [])]

    def add(self, key: str, size: int) -> list[str]:
        """`key` is sent to the worker; the keys it must forget to stay within bounds (never
        `key` itself)."""
        self._sizes[key] = size
        self.bytes += size
        self.sent_bytes += size
        forgotten = []
        while len(self._sizes) > 1 and (
            len(self._sizes) > self.max_items or self.bytes > self.max_bytes
        ):
            old, old_size = self._sizes.popitem(last=False)
            self.bytes -= old_size
            forgotten.append(old)
        return forgotten
