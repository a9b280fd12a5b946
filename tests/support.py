"""Helpers shared by tests of every package (import as `from support import ...`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# beside the main checkout (../shared), or beside the folder of worktrees (../../shared)
SHARED_FIXTURES = next(
    (
        path
        for path in ((REPO_ROOT / up / "shared" / "fixtures").resolve() for up in ("..", "../.."))
        if path.exists()
    ),
    (REPO_ROOT / ".." / "shared" / "fixtures").resolve(),
)


def entry_file(
    entry_id: str,
    body: str,
    *,
    status: str = "approved",
    kind: str = "work_method",
    priority: int = 50,
    limitations: str = "[]",
) -> str:
    """An entry file's text as promotion writes it (docs/memory.md): every front-matter field,
    then the body."""
    return (
        f"---\nid: {entry_id}\ntype: {kind}\nstatus: {status}\npriority: {priority}\n"
        "confidence: high\nprovenance_strength: direct\nclaim_support: human-confirmed\n"
        f"limitations: {limitations}\nscope: repo\nscene: null\noccurred: []\n"
        'evidence: {"commits":[],"paths":[]}\nsuperseded_by: null\n---\n'
        f"{body}\n"
    )


def run_killed_at(point: str, script: str, *args: str) -> None:
    """Run `python -c script args...` in a child that SIGKILLs itself at failpoint `point`
    (core/failpoints.py): the test fails unless it was killed there."""
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "TEAMLORE_FAILPOINT": point},
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr


def shared_fixtures(*parts: str) -> Path:
    path = SHARED_FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real fixtures not present at {path}")
    return path


def fixture_sources() -> list[str]:
    """`--source PROVIDER=FOLDER` for each provider folder of the shared session fixtures."""
    root = shared_fixtures("sessions")
    return [arg for p in ("claude", "codex", "pi") for arg in ("--source", f"{p}={root / p}")]


def writable_copy(source: Path, target: Path) -> Path:
    """A copy of the read-only fixture folder `source` at `target` (merged into it if it
    exists) that its owner can write to: a test that promotes or edits in it runs as a user
    (root writes to a read-only copy; a user gets PermissionError)."""
    shutil.copytree(source, target, copy_function=shutil.copyfile, dirs_exist_ok=True)
    for folder, _, files in os.walk(target):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return target


def teamlore_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real `teamlore` console entry point in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "teamlore"]
    return subprocess.run(
        [*cmd, *args],
        cwd=cwd,
        env=full_env,
        text=True,
        capture_output=True,
        input=input,
        timeout=120,
    )


def in_process(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """`teamlore ARGS` run in this process, from `cwd`, with `env` over this process's
    environment: answered as `teamlore_cli` answers (exit code, stdout, stderr). ARGS in plain
    form run as the console entry runs them (`cli/entry.py`: the lean or plain invocation,
    without typer); others through typer's app (CliRunner). For a test of what a command does,
    not of a process (a kill at a failpoint, a usage error's exit, a terminal, a locale, the
    imports a process makes, `teamlore watch`: `teamlore_cli`), so no process start each.
    Nothing they read is kept per process (HOME, PATH, TEAMLORE_HOME are read on each run); the
    consoles, made with the width COLUMNS gives, are made again around each run. `input` is
    its standard input, as `teamlore_cli`'s."""
    from typer.testing import CliRunner

    from teamlore.cli import output
    from teamlore.cli.commands import plain_invocation
    from teamlore.cli.commands.sessions import lean_invocation
    from teamlore.cli.entry import _run_lean
    from teamlore.cli.main import app

    runner, argv, code, raised, invocation = CliRunner(), list(args), 1, None, None
    output.forget_consoles()
    try:
        isolation = runner.isolation(input=input, env=env)
        with contextlib.chdir(cwd or Path.cwd()), isolation as (out, err, _):
            old_argv, sys.argv = sys.argv, ["teamlore", *argv]
            try:
                invocation = lean_invocation(argv) or plain_invocation(argv)
                if invocation is not None:
                    _run_lean(invocation)  # exits as the entry's process does
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else int(bool(exit_.code))
            except Exception:  # a traceback and exit 1, as in the process
                raised = sys.exc_info()
            finally:
                sys.argv = old_argv
                sys.stdout.flush()
                sys.stderr.flush()
            stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
        if invocation is None and raised is None:  # typer parses them
            with contextlib.chdir(cwd or Path.cwd()):
                done = runner.invoke(app, argv, input=input, env=env)
            code, stdout, stderr = done.exit_code, done.stdout, done.stderr
            raised = None if isinstance(done.exception, SystemExit) else done.exc_info
    finally:
        output.forget_consoles()
    if raised is not None and raised[0] is not None:
        stderr += "".join(traceback.format_exception(*raised))  # as the process prints it
    return subprocess.CompletedProcess(["teamlore", *args], code, stdout, stderr)


class Cli:
    """The `teamlore` app in-process (typer's CliRunner) with TEAMLORE_HOME at `home`."""

    def __init__(self, home: Path) -> None:
        self.env = {"TEAMLORE_HOME": str(home)}

    def text(self, *args: str) -> str:
        from typer.testing import CliRunner

        from teamlore.cli.main import app

        done = CliRunner().invoke(app, list(args), env=self.env)
        assert done.exit_code == 0, done.output
        return done.output

    def json(self, *args: str) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.text(*args, "--format", "json"))
        return result


@contextlib.contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """`path` (a file or a folder) made unwritable for real: no write bits, and for root (who
    ignores modes) the immutable attribute; skips when neither can be had."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0
    ):
        pytest.skip("running as root without chattr +i: cannot make a file read-only")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


# a legacy 8-bit locale, where Python's file system encoding is latin-1
LATIN1 = {"LANG": "en_US.ISO-8859-1", "LC_ALL": "en_US.ISO-8859-1", "PYTHONUTF8": "0"}


def skip_without_latin1_locale() -> None:
    """Skip the test where the machine has no en_US.ISO-8859-1 locale (Debian's locales
    package: `localedef -i en_US -f ISO-8859-1 en_US.ISO-8859-1`)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"],
        env=LATIN1,
        capture_output=True,
        text=True,
    )
    if probe.stdout.strip() != "iso8859-1":
        pytest.skip("no en_US.ISO-8859-1 locale (localedef -i en_US -f ISO-8859-1 ...)")


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` with no user or system config (deterministic, hook-free)."""
    done = git_run(repo, *args)
    done.check_returncode()
    return done.stdout.strip()


def git_run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git` for a command that may fail on purpose (a merge that stops at a conflict)."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=False, capture_output=True, text=True, env=env
    )


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


RELEASE_CLAIM = (
    "Tag checks in the release script expect a v prefix; run the release tests before pushing."
)


def release_repository(tmp_path: Path, home: Path) -> Path:
    """A registered, memory-initialized git repository with one indexed three-turn Codex session
    about a failing release (one tool call carries an absolute path inside the repository)."""
    sys.path.insert(0, str(Path(__file__).parent / "memory"))
    from recall_world import CodexSession, make_repo, sync

    root = make_repo(tmp_path / "shop")
    session = CodexSession("a1", root)
    session.user("The release script fails on tag push; fix it")
    session.shell(f"pytest -q {root}/tests/test_release.py", "1 failed: test_tag_push", exit_code=1)
    session.answer("The tag check compared against the wrong prefix.")
    session.turn("use the v prefix", "Changed the tag check to expect a v prefix.")
    session.turn("anything else?", "Run pytest tests/test_release.py before pushing tags.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", root)
    memory_init(root, home)
    return root


def memory_init(root: Path, home: Path) -> None:
    """`teamlore memory init` in `root`, run in this process: a world's setup, not the command
    under test (tests/cli/test_memory_cli.py tests the command), so no process start."""
    from teamlore.ops.registry import OpContext, run_operation

    run_operation("memory.init", OpContext(cwd=root, home=home), {})


def initialized_repository(tmp_path: Path, home: Path, name: str = "acme") -> Path:
    """A new git repository `tmp_path/name` with an empty team memory (`memory_init`)."""
    root = tmp_path / name
    root.mkdir()
    git(root, "init", "-q")
    memory_init(root, home)
    return root


def draft_batch(task: dict, text: str = RELEASE_CLAIM) -> dict:
    """The CandidateDraftBatch@v1 an agent would send for `task`: one claim citing turn 1."""
    turn_evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    candidate = {
        "content": text,
        "type": "work_method",
        "priority": 60,
        "confidence": "medium",
        "scene": "release",
        "statements": [{"statementId": "s1", "text": text, "evidenceIds": [turn_evidence]}],
    }
    return {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "candidates": [candidate],
    }


def store_all(adjudication_task: dict) -> dict:
    """The AdjudicationResult@v1 that stores every draft."""
    return {
        "format": "threadshare-memory-adjudication-result@v1",
        "taskId": adjudication_task["taskId"],
        "binding": adjudication_task["binding"],
        "adjudications": [
            {"draftRef": d["candidateId"], "action": "store", "targetIds": [], "mergedFields": None}
            for d in adjudication_task["drafts"]
        ],
    }


# A real Codex session nobody here wrote (fixtures/sessions/SOURCES.md): its first turn pastes a
# 5 KB spec and makes 94 tool calls; #79 (`npm.cmd run build`) fails on a type error.
RAVE_ERA = ("sessions", "codex", "rave-era-0.125.0.jsonl")
RAVE_ERA_CWD = "C:\\Users\\YAROSLAV\\RAVE-ERA"
RAVE_ERA_WINDOW = {"since": "2026-04-26T00:00:00.000Z", "until": "2026-04-27T00:00:00.000Z"}
RAVE_ERA_CONTENT = (
    "Before finishing a change in the Rave'era web app, run `npm run build`: Next.js type-checks "
    "during the build and catches missing imports such as useEffect in "
    "components/events/event-card.tsx that the dev server lets through; re-read a file before "
    "patching it, because apply_patch refuses lines that differ, e.g. the mis-encoded title in "
    "app/layout.tsx."
)
RAVE_ERA_STATEMENTS = {
    "build": (
        'Run npm run build before finishing: next build type-checks and failed with "Cannot '
        "find name 'useEffect'\" in components/events/event-card.tsx when the hook was not "
        "imported."
    ),
    "patch": (
        "apply_patch verification fails when the expected lines in app/layout.tsx differ (the "
        "metadata title holds a mis-encoded middle dot); re-read the file before patching it."
    ),
}


def rave_era_synced(tmp_path: Path, home: Path) -> Path:
    """A registered git repository with team memory, owning the real rave-era session (its
    Windows cwd rewritten to the repository), synced."""
    from teamlore.ops.registry import OpContext, run_operation

    fixture = shared_fixtures(*RAVE_ERA)
    repo = tmp_path / "rave-era"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("rave\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "init")
    escaped = json.dumps(RAVE_ERA_CWD)[1:-1]
    day = tmp_path / "codex" / "sessions" / "2026" / "04" / "26"
    day.mkdir(parents=True)
    text = fixture.read_text(encoding="utf-8").replace(escaped, json.dumps(str(repo))[1:-1])
    (day / "rollout-2026-04-26T19-20-18-rave-era.jsonl").write_text(text, encoding="utf-8")
    ctx = OpContext(cwd=repo, home=home)
    sources = [f"codex={tmp_path / 'codex' / 'sessions'}"]
    run_operation("sync", ctx, {"sources": sources, "repository": str(repo)})
    run_operation("memory.init", ctx, {})
    return repo


def rave_era_repository(tmp_path: Path, home: Path) -> Path:
    """A registered git repository owning the real rave-era session (its Windows cwd rewritten
    to the repository) with one quarantined candidate whose statements cite its first turn."""
    from teamlore.ops.registry import OpContext, run_operation

    repo = rave_era_synced(tmp_path, home)
    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, dict(RAVE_ERA_WINDOW))["sources"][0]
    first = task["chunk"]["turnEvidence"][0]["evidenceId"]
    statements = [
        {"statementId": sid, "text": text, "evidenceIds": [first]}
        for sid, text in RAVE_ERA_STATEMENTS.items()
    ]
    batch = draft_batch(task, RAVE_ERA_CONTENT)
    batch["candidates"][0]["statements"] = statements
    staged = run_operation("memory.stage", ctx, batch)
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))
    return repo


def teamlore_in_pty(
    *args: str,
    answers: list[str | bytes | Callable[[], str | bytes]],
    cwd: Path,
    env: dict[str, str] | None = None,
    controlling: bool = False,
) -> tuple[int, str]:
    """Run the real `teamlore` with a pseudo-terminal as stdin/stdout (a person at a terminal):
    each of `answers` is typed after the next prompt ending in `]: ` appears — a text as a line,
    bytes as keys pressed (`b"\\x03"`, Ctrl-C), after a person's pause; a function is called
    then (what happens while the person reads the question) and what it returns is typed.
    `controlling`: the terminal is the process's controlling terminal, so Ctrl-C is SIGINT and
    Ctrl-D at a line's start the end of input. (exit code, everything it printed)"""
    import fcntl
    import pty
    import select
    import signal
    import termios

    def own_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background test run's children ignore it

    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "teamlore"]
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [*cmd, *args],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "80", **(env or {})},
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        close_fds=True,
        preexec_fn=own_terminal if controlling else None,
    )
    os.close(secondary)
    printed, pending = b"", list(answers)
    seen = 0
    try:
        while True:
            ready, _, _ = select.select([primary], [], [], 120)
            if not ready:
                raise AssertionError(f"no output for 120 s: {printed.decode(errors='replace')}")
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            printed += chunk
            prompts = printed.count(b"]: ")
            while pending and prompts > seen:
                answer = pending.pop(0)
                if callable(answer):
                    answer = answer()
                if isinstance(answer, bytes):
                    # a person's key, not one in the microseconds between the question and the
                    # read: a SIGINT there is handled before the read starts, which then waits
                    time.sleep(0.5)
                    os.write(primary, answer)
                else:
                    os.write(primary, answer.encode() + b"\n")
                seen += 1
        code = proc.wait(timeout=120)  # before the terminal closes: its hangup would end it
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, printed.decode("utf-8", "replace").replace("\r\n", "\n")


def queued_observations(state: Path) -> list[dict[str, Any]]:
    """Every personal-memory observation in the state dir's real runtime SQLite file, in order
    (empty when there is none yet)."""
    import sqlite3

    from teamlore.personal.runtime_db import RUNTIME_DB_NAME

    path = state / "personal" / RUNTIME_DB_NAME
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT * FROM observations ORDER BY id").fetchall()
        return [dict(row) for row in rows]


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """`folder` as a tmpfs of `size` (`4m`, `256k`): a real full disk, not a mock. Mounting needs
    root (CI runs as root); skips with the reason where it is not permitted."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
        capture_output=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def fill_to_the_last_byte(folder: Path) -> None:
    """Fill the disk `folder` is on with one file, `filler`."""
    # unbuffered: a write the disk takes only in part leaves nothing for `close` to flush (a
    # buffered file raised ENOSPC again on close, depending on how full the disk already was)
    with open(folder / "filler", "wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 65536)


_NAMESPACE_DRIVER = textwrap.dedent(
    """
    import json, os, subprocess, sys
    steps = json.loads(sys.argv[1])
    out = []
    for step in steps:
        if step[0] == "sh":
            done = subprocess.run(step[1], shell=True, capture_output=True, text=True)
            out.append({"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-300:]})
        else:
            done = subprocess.run(step, capture_output=True, text=True)
            out.append({"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-500:]})
    print(json.dumps(out))
    """
)


def in_private_namespace(tmp_path: Path, steps: list[Any]) -> list[dict[str, Any]]:
    """Run `steps` (an argv list, or `["sh", "a shell line"]`) as root of a private user and
    mount namespace (`unshare -rm`): real mounts (a read-only bind, a full tmpfs) a test may
    make and leave; each step's exit code, stdout and stderr tail. Skips with the reason where
    the kernel allows no such namespace."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("unshare/mount not installed (util-linux)")
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {tmp_path}"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.strip()[:200]}")
    driver = tmp_path / "driver.py"
    driver.write_text(_NAMESPACE_DRIVER)
    done = subprocess.run(
        ["unshare", "-rm", sys.executable, str(driver), json.dumps(steps)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def refusal_lines(text: str) -> list[str]:
    """`text`'s lines with a refusal's `error CODE: …` and `  next: …` each on one line again:
    the text view wraps them at words at the terminal's width (cli/output.py `fail`), their
    later lines under the code (6 spaces) or under `next` (8)."""
    lines: list[str] = []
    for line in text.splitlines():
        wrapped = lines and lines[-1].startswith(("error ", "  next: "))
        if wrapped and line.startswith(" " * 6) and line.strip():
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    return lines


# nobody: root reads and writes whatever a file's mode says, so a test of a refusal a person
# meets (an unreadable folder, an unwritable config) runs the command as this user when the
# suite runs as root (CI does)
UNPRIVILEGED = 65534


def unprivileged_prefix() -> list[str]:
    """What to put before a command so it runs as `UNPRIVILEGED` when the tests run as root
    (`setpriv`, util-linux), nothing otherwise; skips the test as root without `setpriv`."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is missing")
    return ["setpriv", f"--reuid={UNPRIVILEGED}", f"--regid={UNPRIVILEGED}", "--clear-groups", "--"]


def listed_labels(listing: str) -> dict[str, str]:
    """What a `sessions list` text view calls each session, by its key's first 12 hex: the
    row's `title / cwd` column, or the line under the row where the rows had no room for it."""
    lines = listing.splitlines()
    below = len(lines) > 1 and lines[1].strip() in ("title / cwd", "cwd")
    labels: dict[str, str] = {}
    if below:
        for row, label in zip(lines[2::2], lines[3::2], strict=False):
            if label.startswith("  ") and row.split():
                labels[row.split()[0]] = label.strip()
        return labels
    start = max(lines[0].find("title / cwd"), lines[0].find(" cwd") + 1)
    for row in lines[1:]:
        if row.split() and len(row.split()[0]) == 12:
            labels[row.split()[0]] = row[start:].strip()
    return labels
