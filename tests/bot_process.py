"""A bot as an operator runs it: `python -m bot run` in a process of its own, its output in a
file (for the tests of several processes, and bench/shards.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bot_env(extra: dict[str, str]) -> dict[str, str]:
    """This environment without our own settings, then `extra`."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "TTS_"))}
    keep = {k: v for k, v in keep.items() if k not in ("DATABASE_URL", "SHARD_COUNT", "SHARD_IDS")}
    return {**keep, "PYTHONPATH": str(REPO), **extra}


class BotProcess:
    def __init__(self, env: dict[str, str], cwd: Path, name: str = "bot") -> None:
        self.env = bot_env(env)
        self.cwd = cwd
        self.log_path = cwd / f"{name}.log"
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.cwd.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                "run",
                cwd=self.cwd,
                env=self.env,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
            )

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    async def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        """Send `sig` and wait for the end (killed past `timeout`); the exit code."""
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(sig)
            try:
                await asyncio.wait_for(self.process.wait(), timeout)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        assert self.process.returncode is not None
        return self.process.returncode
