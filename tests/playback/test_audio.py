import time

import numpy as np
import pytest
import soundfile
import soxr

from bot.playback.audio_source import FRAME_BYTES, SILENCE, FrameConverter, StreamingSource
from bot.synthesis.audio_files import encode_audio, write_audio_file


def tone(seconds: float, freq: float = 440.0, rate: int = 24_000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def stream_through(signal: np.ndarray, chunk_sizes: list[int]) -> list[bytes]:
    converter = FrameConverter()
    frames: list[bytes] = []
    position, index = 0, 0
    while position < len(signal):
        size = chunk_sizes[index % len(chunk_sizes)]
        frames += converter.push(signal[position : position + size])
        position += size
        index += 1
    return frames + converter.flush()


def to_left_right(frames: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    pcm = np.frombuffer(b"".join(frames), dtype="<i2").reshape(-1, 2)
    return pcm[:, 0].astype(np.float64) / 32767, pcm[:, 1].astype(np.float64) / 32767


def peak_frequency(samples: np.ndarray, rate: int) -> float:
    windowed = samples * np.hanning(len(samples))
    spectrum = np.abs(np.fft.rfft(windowed, n=len(samples) * 8))
    k = int(np.argmax(spectrum))
    a, b, c = np.log(spectrum[k - 1 : k + 2])
    offset = 0.5 * (a - c) / (a - 2 * b + c)  # parabolic interpolation of the peak
    return (k + offset) * rate / (len(samples) * 8)


def test_tone_keeps_its_frequency_at_48k_in_exact_frames() -> None:
    signal = tone(2.0)
    frames = stream_through(signal, [1920, 5760, 777, 1])
    assert all(len(frame) == FRAME_BYTES for frame in frames)
    left, right = to_left_right(frames)
    assert np.array_equal(left, right)
    assert abs(len(left) - 2 * len(signal)) < 960  # only the last frame's padding
    assert abs(peak_frequency(left[4800:-4800], 48_000) - 440.0) < 1.0


def test_chunk_joins_are_seamless() -> None:
    """Streaming in odd chunks gives the same samples as resampling all at once."""
    signal = tone(1.0, freq=1000.0)
    streamed, _ = to_left_right(stream_through(signal, [1920, 333, 4000, 7]))
    whole = np.clip(soxr.resample(signal, 24_000, 48_000), -1, 1)
    n = len(whole)
    assert np.max(np.abs(streamed[:n] - whole)) < 3 / 32767
    # and no click: away from the abrupt start and end, steps stay what a 1 kHz tone allows
    max_step = 0.5 * 2 * np.pi * 1000 / 48_000
    assert np.max(np.abs(np.diff(streamed[1000 : n - 1000]))) < max_step * 1.02


def test_silence_then_end_is_padded_and_counted() -> None:
    converter = FrameConverter()
    frames = converter.push(np.zeros(100, dtype=np.float32)) + converter.flush()
    assert len(frames) == 1
    assert frames[0] == SILENCE
    assert converter.samples_out == 200


@pytest.mark.timing  # `read()` answers within 5 ms
def test_source_prebuffers_plays_in_order_and_never_blocks() -> None:
    source = StreamingSource(prebuffer_frames=3)
    a, b, c = (bytes([i]) * FRAME_BYTES for i in (1, 2, 3))
    assert source.read() == SILENCE  # nothing yet: silence, not the end
    source.feed([a, b])
    assert source.read() == SILENCE  # still pre-buffering
    assert source.underruns == 0
    source.feed([c])
    assert [source.read(), source.read(), source.read()] == [a, b, c]
    started = time.perf_counter()
    assert source.read() == SILENCE  # underrun: silence at once
    assert time.perf_counter() - started < 0.005
    assert source.underruns == 1
    assert source.frames_played == 3
    assert not source.ended.is_set()


def test_source_signals_the_end_once_after_the_last_frame() -> None:
    source = StreamingSource(prebuffer_frames=3)
    frame = b"\x01" * FRAME_BYTES
    source.feed([frame])
    source.finish()  # finished before the pre-buffer filled: play what there is
    assert source.read() == frame
    assert not source.ended.is_set()
    assert source.read() == b""
    assert source.ended.is_set()
    assert source.read() == b""
    assert source.underruns == 0


def test_cancel_drops_queued_and_later_frames() -> None:
    source = StreamingSource(prebuffer_frames=1)
    frame = b"\x02" * FRAME_BYTES
    source.feed([frame, frame])
    assert source.read() == frame
    source.cancel()
    source.feed([frame])
    assert source.read() == b""


@pytest.mark.parametrize("suffix", [".wav", ".ogg"])
def test_audio_files_decode_back_to_their_length(tmp_path, suffix: str) -> None:
    signal = tone(1.5)
    path = tmp_path / f"out{suffix}"
    write_audio_file(path, signal)
    decoded, rate = soundfile.read(str(path))
    assert rate == 24_000
    assert abs(len(decoded) - len(signal)) <= 0.02 * rate
    assert not list(tmp_path.glob(".*.tmp"))


def test_unknown_file_type_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\.wav or \.ogg"):
        encode_audio(tone(0.1), ".mp3")


def test_the_longest_underrun_counts_the_most_silent_frames_in_a_row() -> None:
    source = StreamingSource(prebuffer_frames=1)
    frame = b"\x01" * FRAME_BYTES
    played = []
    for fed, empty_reads in ((1, 2), (1, 4), (1, 1)):  # gaps of 2, 4 and 1 frames
        source.feed([frame] * fed)
        played.append(source.read())
        played += [source.read() for _ in range(empty_reads)]
    assert played.count(frame) == 3
    assert source.underruns == 7 and source.longest_underrun == 4
