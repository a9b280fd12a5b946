"""Run git plumbing read-only and safely.

Every git process teamlore starts goes through `run_git`:

- the environment is scrubbed of every inherited `GIT_*` variable (so a caller's `GIT_DIR`,
  `GIT_INDEX_FILE`, `GIT_EXTERNAL_DIFF`, ... cannot redirect or extend what runs), then
  `GIT_OPTIONAL_LOCKS=0` (no opportunistic index refresh), `GIT_TERMINAL_PROMPT=0` (never ask for
  credentials), `GIT_NO_LAZY_FETCH=1`, no pager and `LC_ALL=C` (stable messages) are set;
- config overrides switch off everything that could execute repository-controlled programs or
  touch the network: hooks (`core.hooksPath=/dev/null`), fsmonitor, external diff drivers,
  and every transport (`protocol.allow=never`, so a partial clone cannot lazily fetch);
- stdin is closed unless the caller supplies input, output is bounded and a timeout kills the
  process.

Callers pass `--no-textconv --no-ext-diff` to diff-producing commands themselves.
Failures become `TeamloreError(GIT_FAILED)`, or `REPOSITORY_NOT_TRUSTED` when git refuses a
repository another user owns (its `safe.directory` check, kept, never bypassed), or
`FolderNotEntered` (PERMISSION_DENIED naming the folder) when git cannot even be started in `cwd`
(a folder of mode 000); callers that can tell "not a repository" or "bare repository" apart map
those to their own codes.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from teamlore.core import errors
from teamlore.core.paths import display_path

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_MAX_OUTPUT_BYTES = 256 << 20
_READ_CHUNK = 1 << 16
_STDERR_KEEP = 4096

SAFE_CONFIG: tuple[str, ...] = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "diff.external=",
    "protocol.allow=never",
    "color.ui=false",
    "log.showSignature=false",
)


class GitCommandError(errors.TeamloreError):
    """A git command exited non-zero; `stderr` keeps its (bounded) message for classification."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        first_line = stderr.strip().splitlines()[0] if stderr.strip() else "no message"
        untrusted = _UNTRUSTED.search(stderr)
        if untrusted:  # a shared mount, a container, a clone another account made
            folder = Path(untrusted.group(1)).name or untrusted.group(1)
            super().__init__(
                errors.REPOSITORY_NOT_TRUSTED,
                f"git refuses the repository {folder}: another user owns it, and git runs "
                "nothing in a repository it does not trust",
                returncode=returncode,
            )
        else:
            super().__init__(
                errors.GIT_FAILED,
                f"git {args[0] if args else ''} failed (exit {returncode}): {first_line}",
                returncode=returncode,
            )
        self.returncode = returncode
        self.stderr = stderr


class FolderNotEntered(errors.TeamloreError):
    """git could not be started in `cwd`: the folder cannot be entered (a folder of mode 000,
    one another account owns). PERMISSION_DENIED naming the folder; `reason` is the system's
    words alone (`Permission denied`), for a caller that must not name where the folder is."""

    def __init__(self, cwd: Path, cause: OSError) -> None:
        reason = cause.strerror or type(cause).__name__
        denied = cause.errno in (errno.EACCES, errno.EPERM)
        super().__init__(
            errors.PERMISSION_DENIED if denied else errors.GIT_FAILED,
            f"cannot run git in {display_path(cwd)}: {reason}",
        )
        self.reason = reason


# git's words (LC_ALL=C) when safe.directory does not list a repository another user owns
_UNTRUSTED = re.compile(r"detected dubious ownership in repository at '([^'\n]*)'")


def git_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        {
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_ASKPASS": "true",
            "SSH_ASKPASS": "true",
            "LC_ALL": "C",
            "LANGUAGE": "C",
        }
    )
    return env


def git_command(args: Sequence[str]) -> list[str]:
    command = ["git", "--no-pager"]
    for setting in SAFE_CONFIG:
        command += ["-c", setting]
    return command + list(args)


def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    stdin: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> bytes:
    """Run `git <args>` in `cwd` and return its stdout; raise on failure, overflow or timeout."""
    if not cwd.is_dir():
        raise errors.TeamloreError(errors.GIT_FAILED, "git working directory does not exist")
    try:
        proc = subprocess.Popen(
            git_command(args),
            cwd=cwd,
            env=git_environment(),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout kills git's children too
        )
    except OSError as exc:
        if exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
            raise FolderNotEntered(cwd, exc) from exc  # its mode, its owner: not git's fault
        if isinstance(exc, FileNotFoundError):
            raise errors.TeamloreError(
                errors.GIT_FAILED, "cannot start git: binary not found"
            ).advising("Install git and put it on PATH, then run the command again.") from exc
        raise errors.TeamloreError(errors.GIT_FAILED, f"cannot start git: {exc.strerror}") from exc

    stdout, stderr_pipe = proc.stdout, proc.stderr
    assert stdout is not None and stderr_pipe is not None
    stderr_parts: list[bytes] = []
    timed_out = threading.Event()

    def kill_group() -> None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()

    def kill_on_timeout() -> None:
        timed_out.set()
        kill_group()

    def drain_stderr() -> None:
        kept = 0
        for chunk in iter(lambda: stderr_pipe.read(_READ_CHUNK), b""):
            if kept < _STDERR_KEEP:
                stderr_parts.append(chunk[: _STDERR_KEEP - kept])
                kept += len(stderr_parts[-1])

    def feed_stdin() -> None:
        assert proc.stdin is not None and stdin is not None
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    timer = threading.Timer(timeout, kill_on_timeout)
    helpers = [threading.Thread(target=drain_stderr, daemon=True)]
    if stdin is not None:
        helpers.append(threading.Thread(target=feed_stdin, daemon=True))
    timer.start()
    for helper in helpers:
        helper.start()
    out = bytearray()
    overflow = False
    try:
        for chunk in iter(lambda: stdout.read(_READ_CHUNK), b""):
            out += chunk
            if len(out) > max_output_bytes:
                overflow = True
                kill_group()
                break
        returncode = proc.wait()
    finally:
        timer.cancel()
        for helper in helpers:
            helper.join(timeout=5)
        stdout.close()
        stderr_pipe.close()

    if timed_out.is_set():
        raise errors.TeamloreError(
            errors.GIT_FAILED, f"git {args[0]} did not finish within {timeout:g} s", timeout=timeout
        )
    if overflow:
        raise errors.TeamloreError(
            errors.GIT_FAILED,
            f"git {args[0]} output exceeds {max_output_bytes} bytes",
            max_output_bytes=max_output_bytes,
        )
    if returncode != 0:
        raise GitCommandError(args, returncode, b"".join(stderr_parts).decode("utf-8", "replace"))
    return bytes(out)


def run_git_text(args: Sequence[str], *, cwd: Path, timeout: float = DEFAULT_TIMEOUT_S) -> str:
    return run_git(args, cwd=cwd, timeout=timeout).decode("utf-8", "replace")


# a full commit id: SHA-1 or SHA-256
_OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def head_commit(worktree_root: Path) -> str | None:
    """HEAD's commit id read from the files of the worktree's git folder (no git process):
    its loose ref, else `packed-refs`; None when it is not found that way."""
    try:
        dot_git = worktree_root / ".git"
        git_dir = dot_git
        if dot_git.is_file():  # a linked worktree or a submodule: `gitdir: <path>`
            pointer = dot_git.read_text("utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return None
            git_dir = worktree_root / pointer[len("gitdir:") :].strip()
        common = git_dir
        if (git_dir / "commondir").is_file():
            common = git_dir / (git_dir / "commondir").read_text("utf-8").strip()
        head = (git_dir / "HEAD").read_text("utf-8").strip()
        for _ in range(5):  # a symbolic ref may name another
            if not head.startswith("ref: "):
                break
            head = _ref(head[len("ref: ") :].strip(), git_dir, common) or ""
    except (OSError, UnicodeDecodeError):
        return None
    return head if _OBJECT_ID.fullmatch(head) else None


def _ref(name: str, git_dir: Path, common: Path) -> str | None:
    if not name.startswith("refs/") or ".." in name.split("/"):
        return None
    for folder in (git_dir, common):
        if (folder / name).is_file():
            return (folder / name).read_text("utf-8").strip()
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text("utf-8").splitlines():
            object_id, _, ref = line.partition(" ")
            if ref == name:
                return object_id
    return None
