"""How fast the model speaks, measured as it runs: audio seconds per second of work and
seconds of speech per character, recent units weighing most (x0.9 a unit), so the figures
follow a change of voice or language."""

from __future__ import annotations

DEFAULT_SPEED = 2.0  # audio seconds per second of work, until measured
DEFAULT_SECONDS_PER_CHAR = 0.07  # speech runs about 14 characters a second
MIN_SPEED = 0.05  # a model that gave no audio yet is slow, not infinitely slow


class SpeedEstimate:
    """The scheduler's figures: totals for /botstats, recent figures for its choices."""

    def __init__(self) -> None:
        self.busy_seconds = 0.0  # synthesis wall time, summed over workers
        self.audio_seconds = 0.0  # audio produced
        self._recent_busy = self._recent_audio = 0.0
        self._recent_chars = self._recent_chars_audio = 0.0

    def record_unit(
        self, chars: int, audio_s: float, busy_s: float, complete: bool, crowded: bool = False
    ) -> None:
        """Take one unit's figures into the estimates: the speed only from units that ran
        without a spare lane beside them (so it stays the speed of the workers alone), the
        speech rate only from units synthesized to their end."""
        self.busy_seconds += busy_s
        self.audio_seconds += audio_s
        if not crowded:
            self._recent_busy = 0.9 * self._recent_busy + busy_s
            self._recent_audio = 0.9 * self._recent_audio + audio_s
        if complete:
            self._recent_chars = 0.9 * self._recent_chars + chars
            self._recent_chars_audio = 0.9 * self._recent_chars_audio + audio_s

    def speed(self) -> float:
        """Audio seconds one worker makes per second of work."""
        if self._recent_busy < 0.5:
            return DEFAULT_SPEED
        return max(MIN_SPEED, self._recent_audio / self._recent_busy)

    def seconds_per_char(self) -> float:
        """Seconds of speech per character of text."""
        if self._recent_chars < 30:
            return DEFAULT_SECONDS_PER_CHAR
        return self._recent_chars_audio / self._recent_chars
