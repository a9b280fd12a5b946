"""Running a runner CLI as a bounded child process (docs/runner.md, "Limits").

`run_bounded` starts the child in its own session (so its whole process group can be killed),
writes the task bytes to its stdin and closes it, reads stdout and stderr concurrently and:
- kills the group when the wall-clock limit passes → RUNNER_TIMEOUT;
- kills the group as soon as stdout or stderr passes the output cap → RUNNER_OUTPUT_TOO_LARGE;
- reports a non-zero exit → RUNNER_EXIT_NONZERO with the last few lines of the child's stderr,
  sanitized (local paths, session ids and secret-shaped tokens removed) and bounded, and the
  login command to run when they say the runner is not logged in (`stderr_summary`); a CLI
  that says why it failed on stdout (claude's `--output-format json` result: `API Error: 500 …`)
  has that said first (`reported_failure`), and what it says it spent (`spent`, in the error's
  `usage` detail: a run that failed may still have been billed);
- a missing or non-executable binary → RUNNER_BINARY_NOT_FOUND.
After the leader exits, anything left in its process group is killed too (`lingering` says so).
On Linux the child also gets SIGKILL when teamlore itself dies (PR_SET_PDEATHSIG), and its pgid
is reported through `on_start` so a later run can clean up after a SIGKILLed teamlore.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from teamlore.core import errors
from teamlore.core.secrets import sanitize_text, scan_content

# set in a runner's environment: marks the processes of one run (leftovers are found by it)
RUN_MARKER_ENV = "TEAMLORE_RUNNER_RUN"

STDERR_TAIL_BYTES = 8192
# what an error message shows of a failed runner's stderr: its last lines, each and all bounded
SHOWN_STDERR_LINES = 3
SHOWN_STDERR_LINE_CHARS = 160
_NOT_LOGGED_IN = re.compile(
    r"not (?:logged|signed) in|please (?:run \S+ )?(?:log ?in|sign ?in)|/login\b|"
    r"unauthori[sz]ed|invalid api key|authentication (?:failed|required)",
    re.IGNORECASE,
)
_LOGIN_COMMANDS = {
    "codex": "run `codex login` (or set OPENAI_API_KEY)",
    "claude": "run `claude` once and log in with /login (or set ANTHROPIC_API_KEY)",
}
_READ_CHUNK = 65536
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class Limits:
    timeout_s: float
    max_output_bytes: int
    # what sets `timeout_s`, as a refusal names it (the openai runner may take its profile's)
    timeout_setting: str = "TEAMLORE_RUNNER_TIMEOUT_S"


@dataclass(frozen=True, slots=True)
class ProcessResult:
    stdout: bytes
    stderr_tail: bytes
    exit_code: int
    lingering: bool


def _die_with_parent() -> None:  # pragma: no cover - runs in the forked child
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def kill_group(pgid: int) -> bool:
    """SIGKILL every process of group `pgid`; False when the group no longer exists."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False
    return True


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class _Capture:
    """Reads one pipe to EOF, keeping at most `cap` bytes (or only a tail)."""

    def __init__(self, stream: IO[bytes], cap: int, on_over: Callable[[], None], *, tail: bool):
        self.stream = stream
        self.cap = cap
        self.on_over = on_over
        self.tail = tail
        self.data = bytearray()
        self.total = 0
        self.over = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = self.stream.read1(_READ_CHUNK)  # type: ignore[attr-defined]
            except (OSError, ValueError):
                break
            if not chunk:
                break
            self.total += len(chunk)
            if self.total > self.cap and not self.over:
                self.over = True
                self.on_over()
            if self.tail:
                self.data += chunk
                del self.data[: max(0, len(self.data) - STDERR_TAIL_BYTES)]
            elif not self.over:
                self.data += chunk

    def join(self) -> None:
        self.thread.join()
        with contextlib.suppress(OSError):
            self.stream.close()


def _feed(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # the child did not read its input; its exit status tells the rest
    finally:
        with contextlib.suppress(OSError, ValueError):
            stream.close()


def run_bounded(
    argv: Sequence[str],
    *,
    stdin: bytes,
    env: Mapping[str, str],
    cwd: Path,
    limits: Limits,
    what: str = "the runner",
    on_start: Callable[[int], None] | None = None,
    reported_failure: Callable[[bytes], str | None] | None = None,
    spent: Callable[[bytes], dict[str, Any]] | None = None,
) -> ProcessResult:
    """Run `argv` to completion within `limits`; raise a RUNNER_* error otherwise."""
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise errors.TeamloreError(
            errors.RUNNER_BINARY_NOT_FOUND,
            f"{what}: cannot execute {Path(argv[0]).name} ({exc.strerror})",
        ) from None
    except OSError as exc:
        raise errors.TeamloreError(
            errors.RUNNER_SPAWN_FAILED, f"{what}: {Path(argv[0]).name}: {exc.strerror}"
        ) from None
    pgid = proc.pid
    if on_start is not None:
        on_start(pgid)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None

    def over_cap() -> None:
        kill_group(pgid)

    out = _Capture(proc.stdout, limits.max_output_bytes, over_cap, tail=False)
    err = _Capture(proc.stderr, limits.max_output_bytes, over_cap, tail=True)
    feeder = threading.Thread(target=_feed, args=(proc.stdin, stdin), daemon=True)
    feeder.start()
    timed_out = False
    try:
        proc.wait(timeout=limits.timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_group(pgid)
        proc.wait()
    except BaseException:
        # Ctrl-C reaches teamlore, not the runner (its own session): the runner dies now, before
        # its scratch folder is removed, not when teamlore exits
        kill_group(pgid)
        proc.wait()
        raise
    lingering = kill_group(pgid) and not timed_out and not (out.over or err.over)
    out.join()
    err.join()
    feeder.join(timeout=5)
    if timed_out:
        raise errors.TeamloreError(
            errors.RUNNER_TIMEOUT,
            f"{what} ran longer than its {limits.timeout_s:g} s limit "
            f"({limits.timeout_setting}) and was killed",
            timeoutSeconds=limits.timeout_s,
        )
    if out.over or err.over:
        stream = "stdout" if out.over else "stderr"
        raise errors.TeamloreError(
            errors.RUNNER_OUTPUT_TOO_LARGE,
            f"{what} printed more than {limits.max_output_bytes} bytes on {stream} and was killed",
            maxOutputBytes=limits.max_output_bytes,
            stream=stream,
        )
    if proc.returncode != 0:
        stdout = bytes(out.data)
        reported = reported_failure(stdout) if reported_failure is not None else None
        failure = errors.TeamloreError(
            errors.RUNNER_EXIT_NONZERO,
            f"{what} exited with status {proc.returncode}"
            + stderr_summary(what, bytes(err.data), scratch=cwd.parent, reported=reported),
            exitCode=proc.returncode,
        )
        if spent is not None:
            failure.details["usage"] = spent(stdout)
        raise failure
    return ProcessResult(bytes(out.data), bytes(err.data), proc.returncode, lingering)


def _shown_line(line: str, scratch: Path) -> str:
    """One stderr line as an error message may show it: no local reference (the run's scratch
    folder included), no secret."""
    clean = sanitize_text(line.replace(str(scratch), "<scratch>"))
    for hit in sorted(scan_content(clean), key=lambda h: h.start, reverse=True):
        if hit.severity == "block":
            clean = f"{clean[: hit.start]}[redacted]{clean[hit.end :]}"
    if len(clean) > SHOWN_STDERR_LINE_CHARS:
        clean = clean[: SHOWN_STDERR_LINE_CHARS - 1] + "…"
    return clean


def stderr_summary(what: str, tail: bytes, *, scratch: Path, reported: str | None = None) -> str:
    """`; it reported "…"; stderr ends: "…" | "…"; run `codex login`` — what a person needs
    from a failed run: what the CLI said the failure was (`reported`, from its stdout), its
    stderr's last lines (empty when it printed neither); `scratch`: the run's temporary
    folder."""
    lines = [line.strip() for line in tail.decode("utf-8", "replace").splitlines()]
    last = [_shown_line(line, scratch) for line in lines if line][-SHOWN_STDERR_LINES:]
    reported = (reported or "").strip()
    summary = f'; it reported "{_shown_line(reported, scratch)}"' if reported else ""
    if last:
        summary += "; stderr ends: " + " | ".join(f'"{line}"' for line in last)
    if not summary:
        return ""
    if _NOT_LOGGED_IN.search(" ".join([*lines[-20:], reported])):
        summary += f"; it is not logged in: {_LOGIN_COMMANDS.get(what, 'log the runner in')}"
    return summary


def kill_leftover(pgid: int) -> bool:
    """Kill the group of a runner a SIGKILLed teamlore left behind — only if its leader still
    carries the runner marker in its environment (a reused pid is never touched)."""
    try:
        environ = Path(f"/proc/{pgid}/environ").read_bytes()
    except OSError:
        return False
    if f"{RUN_MARKER_ENV}=".encode() not in environ:
        return False
    return kill_group(pgid)
