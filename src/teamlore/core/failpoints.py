"""Failpoints: crash the process at a named point, so tests can prove crash recovery.

`TEAMLORE_FAILPOINT=name` (or a comma-separated list) makes `failpoint("name")` kill the current
process with SIGKILL, which skips every finally block and atexit hook, like a power cut would.
"""

from __future__ import annotations

import os
import signal

ENV = "TEAMLORE_FAILPOINT"


def failpoint(name: str) -> None:
    armed = os.environ.get(ENV)
    if armed and name in armed.split(","):
        os.kill(os.getpid(), signal.SIGKILL)
