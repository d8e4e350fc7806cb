"""What /botstats tells members of the bot's call (`call_privacy`, read from discord.py's voice
state through the adapter, and `privacy_line`): each case on a stand-in of that state, in
English and French. tests/e2e/test_dave.py compares the code with a member's on the fake."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bot.i18n.translate import localize
from bot.playback.voice_link import CallPrivacy, call_privacy
from bot.services.botstats import privacy_line, shown_code
from tests.playback.test_dave_wait import Link, State

pytestmark = pytest.mark.unit
CHANNEL = 1090000000000000007
CODE = "050816499102734452556434026529"  # davey's: 30 digits


@dataclass
class Session:
    """What the adapter reads of a davey session."""

    ready: bool
    voice_privacy_code: str | None


def link(state: State, session: Session | None) -> Link:
    voice = Link(state, [])
    state.dave_session = session  # type: ignore[attr-defined]  # discord.py's state has it
    voice.channel = type("Channel", (), {"id": CHANNEL})()  # type: ignore[assignment]  # stand-in
    return voice


@pytest.mark.parametrize(
    ("version", "connected", "session", "expected"),
    [
        (1, True, Session(True, CODE), CallPrivacy(CHANNEL, True, CODE)),
        (1, True, Session(False, None), CallPrivacy(CHANNEL, True, None)),  # no group yet
        (1, True, Session(False, CODE), CallPrivacy(CHANNEL, True, None)),  # an old group's
        (0, True, Session(True, CODE), CallPrivacy(CHANNEL, False, None)),  # downgraded
        (0, True, None, CallPrivacy(CHANNEL, False, None)),
        (1, False, Session(True, CODE), None),
    ],
)
def test_the_call_s_privacy_is_read_from_the_voice_state(
    version: int, connected: bool, session: Session | None, expected: CallPrivacy | None
) -> None:
    state = State(dave_protocol_version=version, connected=connected)
    assert call_privacy(link(state, session)) == expected


def test_no_voice_connection_is_no_call() -> None:
    assert call_privacy(None) is None


def test_each_case_is_said_in_the_member_s_language() -> None:
    cases = {
        None: (
            "not in a voice channel in this server",
            "pas dans un salon vocal de ce serveur",
        ),
        CallPrivacy(CHANNEL, False, None): (
            f"<#{CHANNEL}>: this call is not end-to-end encrypted",
            f"<#{CHANNEL}> : cet appel n'est pas chiffré de bout en bout",
        ),
        CallPrivacy(CHANNEL, True, None): (
            f"<#{CHANNEL}>: end-to-end encrypted; its code is agreed once a member is in the call",
            f"<#{CHANNEL}> : chiffré de bout en bout ; son code est convenu dès qu'un membre est "
            "dans l'appel",
        ),
    }
    for call, (english, french) in cases.items():
        line = privacy_line(call)
        assert (line, localize(line, "fr")) == (english, french)
    shown = privacy_line(CallPrivacy(CHANNEL, True, CODE))
    assert "`05081 64991 02734 45255 64340 26529`" in shown
    assert "`05081 64991 02734 45255 64340 26529`" in localize(shown, "fr")
    assert shown_code(CODE).replace(" ", "") == CODE
