"""A fake Discord on 127.0.0.1: REST, gateway, voice websocket (TLS) and voice UDP."""

from tests.fakediscord.server import FakeDiscord, FakeFile, FakeInteraction, FakeRole, FakeUser
from tests.fakediscord.voice_udp import ReceivedPacket

__all__ = [
    "FakeDiscord",
    "FakeFile",
    "FakeInteraction",
    "FakeRole",
    "FakeUser",
    "ReceivedPacket",
]
