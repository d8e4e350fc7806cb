"""A real PostgreSQL server for the tests: Debian's `postgresql` package, started by the
suite in a temporary directory, on a loopback port, as a non-root user (the server refuses
root), with durability switched off (test data), and stopped afterwards."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import asyncpg

SERVER_USER = "postgres"  # Debian's package makes this system user; used when we are root
DB_USER = "pocketvoice"


class PostgresUnavailableError(RuntimeError):
    """The server could not be started; the message says why and what to install."""


def binaries() -> Path:
    """The folder of initdb and pg_ctl: the newest /usr/lib/postgresql/<N>/bin, else PATH."""
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1].parent
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).parent
    raise PostgresUnavailableError(
        "PostgreSQL's server programs (initdb, pg_ctl) are missing: install Debian's "
        "postgresql package (./test.sh does: scripts/bootstrap.sh --test)"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    def __init__(self) -> None:
        self.bin = binaries()
        self.root = Path(tempfile.mkdtemp(prefix="pocketvoice-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            try:
                account = pwd.getpwnam(SERVER_USER)
            except KeyError:
                raise PostgresUnavailableError(
                    f"running as root, and there is no {SERVER_USER!r} user to run PostgreSQL "
                    "as (Debian's postgresql package creates it)"
                ) from None
            os.chown(self.root, account.pw_uid, account.pw_gid)
            self._as = ["runuser", "-u", SERVER_USER, "--"]

    def _run(self, *command: str, timeout: float = 60) -> None:
        done = subprocess.run(
            [*self._as, *command], capture_output=True, text=True, timeout=timeout, check=False
        )
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise PostgresUnavailableError(
                f"{Path(command[0]).name} failed ({done.returncode}): "
                f"{done.stderr.strip() or done.stdout.strip()}\n{log}"
            )

    def start(self) -> None:
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            DB_USER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        )
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c full_page_writes=off -c synchronous_commit=off -c max_connections=200"
        )
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.log),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        with contextlib.suppress(PostgresUnavailableError, subprocess.TimeoutExpired):
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{DB_USER}@127.0.0.1:{self.port}/{database}"

    async def new_database(self) -> str:
        """The URL of a new, empty database (each test gets its own)."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        admin = await asyncpg.connect(self.url(), timeout=10)
        try:
            await admin.execute(f'CREATE DATABASE "{name}"')
        finally:
            await admin.close()
        return self.url(name)
