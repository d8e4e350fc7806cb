"""The fake's ear: an underrun is heard as silence however discord.py encoded it."""

from __future__ import annotations

import numpy as np
from discord import opus

from tests.fakediscord.voice_udp import OPUS_SILENCE, ReceivedPacket

SAMPLES = 960  # 20 ms at 48 kHz


def received(packet: bytes, decoder: opus.Decoder) -> ReceivedPacket:
    pcm = b"" if packet == OPUS_SILENCE else decoder.decode(packet)
    return ReceivedPacket(0.0, 0, 0, 1, packet, pcm)


def test_an_underruns_encoded_zeros_are_silence_and_speech_is_not() -> None:
    """discord.py's player sends an underrun's PCM zeros through its encoder: ordinary packets,
    not Discord's silence frame. They are heard as silence after the previous frame's tail."""
    opus._load_default()
    encoder, decoder = opus.Encoder(), opus.Decoder()
    rng = np.random.default_rng(0)
    speech = (rng.standard_normal(SAMPLES * 2) * 3000).astype(np.int16).tobytes()
    spoken = [received(encoder.encode(speech, SAMPLES), decoder) for _ in range(5)]
    zeros = [received(encoder.encode(bytes(SAMPLES * 4), SAMPLES), decoder) for _ in range(8)]
    assert not any(p.sounds_silent for p in spoken)
    assert all(p.opus != OPUS_SILENCE and len(p.opus) > 3 for p in zeros)  # not the 3 bytes
    assert not any(p.is_silence for p in zeros)  # not Discord's silence frame, but heard so
    assert [p.sounds_silent for p in zeros[:3]].count(False) <= 2  # the tail of the speech
    assert all(p.sounds_silent for p in zeros[3:])
    assert received(OPUS_SILENCE, decoder).sounds_silent
