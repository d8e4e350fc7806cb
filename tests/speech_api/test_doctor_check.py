"""`doctor`'s check of the speech service: its binds, its ports, its voices."""

from __future__ import annotations

import socket
from pathlib import Path

from bot.core.config import load_config
from bot.doctor import check_speech_service


def checked(tmp_path: Path, **env: str) -> list[tuple[str, bool, str]]:
    settings = load_config(
        {"DATA_DIR": str(tmp_path), **env}, dotenv_path=None, require_token=False
    )
    return [(c.name, c.ok, c.detail) for c in check_speech_service(settings)]


def test_the_doctor_checks_the_speech_service(tmp_path: Path) -> None:
    (tmp_path / "service-voices").mkdir()
    (tmp_path / "service-voices" / "narrator.wav").write_bytes(b"RIFF")
    unset = checked(tmp_path)
    assert unset[0][:2] == ("speech service", True) and "SPEECH_PORT unset" in unset[0][2]
    assert unset[1] == (
        "service voices",
        True,
        f"1 of the operator's in {tmp_path / 'service-voices'}",
    )
    (open_bind,) = checked(tmp_path, SPEECH_HOST="0.0.0.0", SPEECH_PORT="8123")
    assert not open_bind[1] and "SPEECH_API_KEYS" in open_bind[2]
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        (in_use,) = checked(tmp_path, SPEECH_PORT=str(port))
        assert not in_use[1] and f"cannot listen on 127.0.0.1:{port}" in in_use[2]
    serving = checked(tmp_path, SPEECH_PORT=str(port), SPEECH_API_KEYS="k" * 20)
    assert serving[0] == ("speech service", True, f"on 127.0.0.1:{port}, 1 API key")
