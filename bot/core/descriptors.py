"""The process's open-file limit: what the configuration needs, and the soft limit raised to it.

Every socket (Discord's gateway, each voice connection's WebSocket and UDP socket, each client
of the speech service), every pipe to a worker process and every open database or log file is
a descriptor. systemd and many containers start a service with a soft limit of 1,024, and a
process that reaches it can open nothing more: no new voice connection, no database page, not
even the log. The hard limit is usually far higher and a process may raise its own soft limit
to it, as servers do at start; what remains is for `doctor` to check.
"""

from __future__ import annotations

import logging
import resource  # POSIX: the bot runs on Linux and macOS

log = logging.getLogger(__name__)

BASE = 256  # libraries, the database and its journal, logs, the gateway, the metrics port
PER_PIPELINE = 8  # a worker process: its pipe, its sentinel, its reader's and spawn's ends
PER_VOICE = 4  # a voice connection: its WebSocket, its UDP socket, and a heal beside them
VOICE_CONNECTIONS = 100  # servers speaking at once that the need leaves room for
PER_CLIENT = 2  # a client of the speech service: its socket, and one being accepted
WANTED = 65536  # the soft limit asked for at start, within the hard limit


def needed(pipelines: int, speech_clients: int = 0) -> int:
    """Descriptors the configuration may hold at once: `pipelines` worker processes, and
    `speech_clients` connections of the speech service (0: none)."""
    return (
        BASE
        + PER_PIPELINE * pipelines
        + PER_VOICE * VOICE_CONNECTIONS
        + PER_CLIENT * speech_clients
    )


def limits() -> tuple[int, int]:
    """(soft, hard) RLIMIT_NOFILE, unlimited as a large number."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    infinity = resource.RLIM_INFINITY
    return (WANTED * 16 if soft == infinity else soft, WANTED * 16 if hard == infinity else hard)


def raise_soft_limit(wanted: int = WANTED) -> int:
    """Raise the soft limit towards `wanted`, within the hard limit; the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as error:  # a sandbox that refuses: doctor says so
            log.warning("the open-file limit stays at %d: %s", soft, error)
    return soft
