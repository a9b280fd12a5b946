"""`teamlore hook session-start`: print the SessionStart brief, within a hard time budget.

This module is imported by the console entry point (`teamlore.cli.entry`) *before* the rest of
the CLI, so a hook pays only for what the brief needs. The brief is built in a worker thread; if
it is not ready within the budget (`TEAMLORE_HOOK_BUDGET` seconds, default 0.9), or anything at
all fails, the hook prints nothing and exits 0: a slow or broken state never blocks or breaks the
agent's session. Output is the hook JSON both Claude Code and Codex read:
`{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": …}}`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from teamlore.cli.literal import json_text

BUDGET_ENV = "TEAMLORE_HOOK_BUDGET"
DEFAULT_BUDGET_SECONDS = 0.9
USER_TURN_BUDGET_SECONDS = 5.0  # the host waits for it once, before the model request
CLIENTS = ("claude", "codex", "pi")


def _budget() -> float:
    try:
        return max(0.05, float(os.environ.get(BUDGET_ENV, DEFAULT_BUDGET_SECONDS)))
    except ValueError:
        return DEFAULT_BUDGET_SECONDS


def _read_payload() -> dict[str, Any]:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    try:  # bytes: the clients write UTF-8 whatever the locale says stdin is
        payload = json.loads(sys.stdin.buffer.read() or b"{}")
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def _brief(client: str, out: list[str]) -> None:
    payload = _read_payload()
    cwd = Path(str(payload.get("cwd") or os.getcwd()))
    from teamlore.ops.integrations.session_brief import compose_brief

    out.append(compose_brief(cwd, client))


def session_start(client: str) -> int:
    """Print the brief for `client` and return 0, whatever happens."""
    started = time.monotonic()
    out: list[str] = []

    def work() -> None:
        try:
            _brief(client, out)
        except BaseException:
            out.clear()

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(max(0.0, _budget() - (time.monotonic() - started)))
    if worker.is_alive() or not out or not out[0]:
        return 0
    hook_output = {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": out[0]}
    }
    try:
        sys.stdout.write(json_text(hook_output) + "\n")
        sys.stdout.flush()
    except OSError:
        pass
    return 0


def _client(argv: list[str]) -> str:
    """The client `--client` names; a name it does not know (`clade`) is said on stderr, one
    line (stdout is what the client injects), and the hook goes on as for Claude Code."""
    if "--client" in argv:
        index = argv.index("--client")
        name = argv[index + 1] if index + 1 < len(argv) else ""
        if name in CLIENTS:
            return name
        with contextlib.suppress(OSError, ValueError):  # a hook never fails the session
            sys.stderr.write(
                f"teamlore hook: unknown client {name!r} (known: {', '.join(CLIENTS)});"
                " going on as for claude\n"
            )
            sys.stderr.flush()
    return "claude"


def run_from_argv(argv: list[str]) -> int:
    """`hook session-start [--client claude|codex|pi]`; unknown extras are ignored (exit 0)."""
    return session_start(_client(argv))


def _start_sync(client: str) -> None:
    payload = _read_payload()
    transcript = payload.get("transcript_path")
    if not isinstance(transcript, str) or not os.path.isfile(transcript):
        return
    import subprocess

    sync = ["sync", "--source", f"{client}={transcript}"]
    subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.entry", *sync],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def session_end(client: str) -> int:
    """Start `teamlore sync --source <client>=<transcript>` for the session that just stopped,
    detached in the background, and return 0 within the budget (whatever happens)."""

    def work() -> None:
        with contextlib.suppress(BaseException):  # a hook never fails the session
            _start_sync(client)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(_budget())
    return 0


def user_turn(client: str) -> int:
    """`hook user-turn`: queue the prompt on stdin for personal memory (ops/integrations/
    user_turn.py) and print the outcome as one JSON line; returns 0 whatever happens (a host's
    prompt never fails because of teamlore)."""
    out: list[dict[str, Any]] = []

    def work() -> None:
        try:
            from teamlore.core.locations import state_dir_path
            from teamlore.ops.integrations.user_turn import capture

            out.append(capture(state_dir_path(), client, _read_payload()))
        except BaseException as exc:
            out.append({"accepted": False, "code": "INTERNAL", "message": type(exc).__name__})

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(USER_TURN_BUDGET_SECONDS)
    if worker.is_alive() or not out:
        return 0
    with contextlib.suppress(OSError):
        sys.stdout.write(json_text(out[0]) + "\n")
        sys.stdout.flush()
    return 0


def user_turn_from_argv(argv: list[str]) -> int:
    """`hook user-turn [--client pi]`."""
    return user_turn(_client(argv) if "--client" in argv else "pi")


def session_end_from_argv(argv: list[str]) -> int:
    """`hook session-end [--client claude|codex]`."""
    return session_end(_client(argv))


def exit_now(code: int) -> None:
    """Leave without waiting for a stuck worker thread or interpreter teardown."""
    try:
        sys.stdout.flush()
    finally:
        os._exit(code)
