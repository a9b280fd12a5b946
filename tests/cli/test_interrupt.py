"""Ctrl-C in the first moments of a command: the process exits as an interrupted command does
(130), never by a crash. orjson 3.13's import, interrupted by SIGINT, leaves the process to die
of SIGSEGV later; the console entry holds SIGINT pending around that import wherever a command
makes it (cli/entry.py, `OrjsonImportHold`): `sync` imports orjson, `status` does not."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TRIES = 60
SPREAD = 0.6  # of the start's time: orjson is imported early, the rest only ends in 130


@pytest.mark.parametrize("name", ["status", "sync"])
def test_ctrl_c_while_a_command_starts_never_crashes_it(name: str, tmp_path: Path) -> None:
    nothing = tmp_path / "no-sessions"
    nothing.mkdir()
    given = ["--source", f"claude={nothing}"] if name == "sync" else []
    command = [*_console_entry(), name, *given, "--format", "json"]
    env = {**os.environ, "TEAMLORE_HOME": str(tmp_path / "state"), "TEAMLORE_NO_WATCH": "1"}
    begun = time.monotonic()
    assert subprocess.run(command, env=env, capture_output=True).returncode == 0
    whole = time.monotonic() - begun  # spreads the interrupts over the start; nothing asserted
    codes = [_interrupted_after(command, env, whole * SPREAD * i / TRIES) for i in range(TRIES)]
    # -SIGINT alone: a Ctrl-C before the interpreter installed its own handler (no code of ours)
    assert [c for c in codes if c < 0 and c != -signal.SIGINT] == [], codes
    assert codes.count(130) > 0, codes


def _interrupted_after(command: list[str], env: dict[str, str], seconds: float) -> int:
    # Ctrl-C as a person's terminal delivers it, also when this suite runs as a background job
    # (whose children would inherit SIGINT ignored)
    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(seconds)
    proc.send_signal(signal.SIGINT)
    return proc.wait(timeout=60)


def _console_entry() -> list[str]:
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "teamlore.cli.entry"]
