"""Failpoints: crash the process at a named point, so tests can prove crash recovery.

`TEAMLORE_FAILPOINT=name` (or a comma-separated list) makes `failpoint("name")` kill the current
process with SIGKILL, which skips every finally block and atexit hook, like a power cut would.
"""

from __future__ import annotations

import os
import signal

ENV = "TEAMLORE_FAILPOINT"


def armed(name: str) -> bool:
    """Whether `failpoint(name)` would kill the process (for checks hoisted out of hot loops)."""
    value = os.environ.get(ENV)
    return value is not None and name in value.split(",")


def failpoint(name: str) -> None:
    armed = os.environ.get(ENV)
    if armed and name in armed.split(","):
        os.kill(os.getpid(), signal.SIGKILL)
