"""Failpoints: crash the process at a named point, so tests can prove crash recovery.

`TEAMLORE_FAILPOINT=name` (or a comma-separated list) makes `failpoint("name")` kill the current
process with SIGKILL, which skips every finally block and atexit hook, like a power cut would.

`TEAMLORE_INTERRUPTPOINT=name` (or a list) makes `failpoint("name")` send the process SIGINT, as
a Ctrl-C at that point would (`entry-import`: while the console entry loads, `cli/entry.py`).

`TEAMLORE_PAUSEPOINT=name=FLAG` makes `failpoint("name")` create the file FLAG and wait until it
is removed (at most PAUSE_SECONDS), each time the point is reached: a test acts as a concurrent
writer while the process stands still at a known step.
"""

from __future__ import annotations

import os
import signal
import time

ENV = "TEAMLORE_FAILPOINT"
INTERRUPT_ENV = "TEAMLORE_INTERRUPTPOINT"
PAUSE_ENV = "TEAMLORE_PAUSEPOINT"
PAUSE_SECONDS = 60.0


def armed(name: str) -> bool:
    """Whether `failpoint(name)` would kill the process (for checks hoisted out of hot loops)."""
    value = os.environ.get(ENV)
    return value is not None and name in value.split(",")


def failpoint(name: str) -> None:
    armed = os.environ.get(ENV)
    if armed and name in armed.split(","):
        os.kill(os.getpid(), signal.SIGKILL)
    interrupt = os.environ.get(INTERRUPT_ENV)
    if interrupt and name in interrupt.split(","):
        os.kill(os.getpid(), signal.SIGINT)
    pause = os.environ.get(PAUSE_ENV)
    if pause and pause.partition("=")[0] == name:
        _pause(pause.partition("=")[2])


def _pause(flag: str) -> None:
    with open(flag, "w"):
        pass
    deadline = time.monotonic() + PAUSE_SECONDS
    while os.path.exists(flag) and time.monotonic() < deadline:
        time.sleep(0.01)
