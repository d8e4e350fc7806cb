"""Speech faster or slower, its pitch kept, and higher or lower, its formants kept: Rubber
Band's real-time stretcher (`pylibrb`), one stretcher doing both.

One `Tempo` per utterance: every unit's chunks go through the same stretcher, so the joins
between units stay as seamless as the model left them, and `finish()` once at the end gives
the tail it holds back. The stretcher runs where the model's audio is made (the engine's
threads), never on the event loop. Why this library, and its costs: `bench/stretch.py`.
"""

from __future__ import annotations

import numpy as np
import pylibrb

from bot.storage.server_settings import FASTEST, HIGHEST_PITCH, LOWEST_PITCH, SLOWEST
from bot.synthesis.audio_files import MODEL_RATE

# R3 ("finer", the engine made for voice) with the short window: its look-ahead is ~27 ms of
# output, and it gives audio from the first chunk on. No start pad: the pad would only
# delay the first sound (a unit starts with the model's own 5 ms fade-in).
_OPTIONS = (
    pylibrb.Option.PROCESS_REALTIME
    | pylibrb.Option.ENGINE_FINER
    | pylibrb.Option.WINDOW_SHORT
    | pylibrb.Option.THREADING_NEVER
)
# A pitch shift keeps the formants (the voice's timbre), so a voice higher or lower still
# sounds like itself rather than sped-up tape (bench/stretch.py: its cost).
_PITCH_OPTIONS = _OPTIONS | pylibrb.Option.FORMANT_PRESERVED
_EMPTY = np.zeros(0, dtype=np.float32)
BLOCK = 4096  # samples given to the stretcher at once (a model chunk is 1,920)


def normal(rate: float, pitch: int = 0) -> bool:
    """At this rate and pitch the audio passes unchanged (no stretcher at all)."""
    return abs(rate - 1.0) < 1e-3 and pitch == 0


def pitch_scale(semitones: int) -> float:
    """The frequency factor of a shift by `semitones` (12: an octave, twice as high)."""
    return float(2.0 ** (semitones / 12))


class Tempo:
    """A stream of 24 kHz mono float32 chunks, `rate` times as fast (2.0: half as long) and
    `pitch` semitones higher (negative: lower), the formants kept.

    Not thread-safe: one thread at a time (the units of an utterance run one after another).
    """

    def __init__(self, rate: float, pitch: int = 0) -> None:
        if not SLOWEST <= rate <= FASTEST:
            raise ValueError(f"rate {rate} is outside {SLOWEST}-{FASTEST}")
        if not LOWEST_PITCH <= pitch <= HIGHEST_PITCH:
            raise ValueError(f"pitch {pitch} is outside {LOWEST_PITCH}-{HIGHEST_PITCH}")
        self.rate = rate
        self.pitch = pitch
        self._stretcher = pylibrb.RubberBandStretcher(
            MODEL_RATE,
            1,
            _PITCH_OPTIONS if pitch else _OPTIONS,
            initial_time_ratio=1.0 / rate,
            initial_pitch_scale=pitch_scale(pitch),
        )
        self._stretcher.set_max_process_size(BLOCK)
        self._in = 0
        self._out = 0
        self._finished = False

    def push(self, chunk: np.ndarray) -> np.ndarray:
        """The stretched audio ready after `chunk` (may be empty: the stretcher looks ahead)."""
        if self._finished:
            raise RuntimeError("this tempo stream has finished")
        if not len(chunk):
            return _EMPTY
        self._in += len(chunk)
        samples = np.ascontiguousarray(chunk, dtype=np.float32).reshape(1, -1)
        outs = []
        for at in range(0, samples.shape[1], BLOCK):
            self._stretcher.process(samples[:, at : at + BLOCK])
            outs.append(self._take())
        out = outs[0] if len(outs) == 1 else np.concatenate(outs)
        self._out += len(out)
        return out

    def finish(self) -> np.ndarray:
        """The rest of the audio; the whole stream is then `rate` times shorter, to the sample."""
        if self._finished:
            return _EMPTY
        self._finished = True
        if self._in == 0:
            return _EMPTY
        self._stretcher.process(np.zeros((1, 0), dtype=np.float32), final=True)
        tail = self._take()
        wanted = max(round(self._in / self.rate) - self._out, 0)
        if len(tail) >= wanted:
            tail = tail[:wanted]
        else:  # (the stretcher gave a few samples fewer: silence keeps the length exact)
            tail = np.concatenate([tail, np.zeros(wanted - len(tail), dtype=np.float32)])
        self._out += len(tail)
        return tail

    def _take(self) -> np.ndarray:
        out = self._stretcher.retrieve_available()
        return np.ascontiguousarray(out[0], dtype=np.float32) if out.shape[1] else _EMPTY


def stretch(audio: np.ndarray, rate: float, pitch: int = 0) -> np.ndarray:
    """A whole clip at `rate` and `pitch` (a cached phrase, a /tts file): the same stretcher
    as speech, in one go."""
    if normal(rate, pitch) or not len(audio):
        return audio
    tempo = Tempo(rate, pitch)
    return np.concatenate([tempo.push(audio), tempo.finish()])
