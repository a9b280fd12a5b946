"""`teamlore watch` (docs/watch.md): the warm server answers the read commands with the bytes and
exit code the command prints in its own process, keeps the index fresh, and a command falls back to
its own process on any failure. Real processes: the server is `teamlore watch` started as a
subprocess, the clients are the `teamlore` console entry."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pty
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import termios
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_cli import DATA, _imported_by, sources, sync_json
from test_search_walk import teamlore_to_a_closed_pipe

from support import in_process, refusal_lines, teamlore_cli
from teamlore.cli import warm, watch
from teamlore.cli.watch import _peer_uid
from teamlore.core.locations import state_dir_path
from teamlore.core.paths import WATCH_SOCKET_NAME

__all__ = ["sources"]  # the fixture, shared with test_cli

SRC = Path(__file__).resolve().parents[2] / "src"
OWN_PROCESS = {"TEAMLORE_NO_WATCH": "1"}
CLOCK = re.compile(r"\d\d:\d\d:\d\d ")  # the local time that starts each event's text
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")  # a JSON event's `at`


@pytest.fixture(autouse=True)
def patient_clients_and_a_user_of_our_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A client waits for a busy server (on a loaded machine its answer, not a fallback, is what
    is checked), a server looks at its files every turn of its loop (a test waits for what it
    notices there, not for 2 s to pass), and the default session folders are a temporary
    user's, not the real user's."""
    monkeypatch.setenv("TEAMLORE_WATCH_ACCEPT_SECONDS", "60")
    monkeypatch.setenv("TEAMLORE_WATCH_FILES_CHECK_SECONDS", str(watch.SELECT_SECONDS))
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))


class Watch:
    """A running `teamlore watch` and its log (JSON lines)."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path, socket_path: Path) -> None:
        self.proc, self.log, self.socket = proc, log, socket_path

    def events(self, name: str) -> list[dict[str, Any]]:
        lines = self.log.read_text().splitlines()
        return [e for e in map(json.loads, lines) if e["event"] == name]

    def answered(self) -> int:
        return len(self.events("answered"))

    def answered_exactly(self, count: int) -> bool:
        """`count` requests answered: the server logs an answer after sending it, so a client
        can return before its answer is in the log."""
        self.wait_for("answered", count)
        return self.answered() == count

    def wait_for(self, name: str, count: int = 1) -> None:
        deadline = time.monotonic() + 120  # a bound for a hung server, not a timing assertion
        while len(self.events(name)) < count:
            assert self.proc.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, f"no {name!r} event: {self.log.read_text()}"
            time.sleep(0.05)


def unstamped(lines: list[str]) -> list[str]:
    """The text log's lines without the local time each event starts with (`14:03:27 `), nor
    the indent of its later lines under it."""
    for line in lines:
        assert CLOCK.match(line) or line.startswith(" " * 9), line
    return [line[9:] for line in lines]


def start_watch(tmp_path: Path, env: dict[str, str] | None = None, *flags: str) -> Watch:
    log = tmp_path / f"watch-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "teamlore.cli.entry", "watch", "--format", "json", *flags],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
    home = Path((env or {}).get("TEAMLORE_HOME") or os.environ["TEAMLORE_HOME"])
    server = Watch(proc, log, home / warm.SOCKET_NAME)
    server.wait_for("synced")  # started, and the first sync done
    return server


def make_repo(folder: Path) -> Path:
    """A worktree holding a team memory (memory search resolves it from the working directory)."""
    worktree = folder / "repo"
    subprocess.run(["git", "init", "-q", str(worktree)], check=True)
    assert teamlore_cli("memory", "init", "--repository", str(worktree)).returncode == 0
    return worktree


@contextlib.contextmanager
def serving(home: Path, sources: Path, folder: Path) -> Iterator[Watch]:
    """`teamlore watch` over the fixture sessions (configured as the sync sources)."""
    sync_json(sources)
    (home / "config.toml").write_text(
        f'[sources]\nclaude = ["{sources / "claude"}"]\ncodex = ["{sources / "codex"}"]\n'
    )
    running = start_watch(folder, None, "--min-interval", "0")  # a change is synced at once
    yield running
    if running.proc.poll() is None:  # SIGTERM stops it cleanly: exit 0, its socket gone
        running.proc.send_signal(signal.SIGTERM)
        assert running.proc.wait(timeout=60) == 0, running.log.read_text()
        assert not running.socket.exists()
        assert running.events("stopped")


@pytest.fixture()
def server(home: Path, sources: Path, tmp_path: Path) -> Iterator[Watch]:
    with serving(home, sources, tmp_path) as running:
        yield running


@pytest.fixture(scope="module")
def read_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Watch, Path]]:
    """One server and worktree for every read command compared with its own process: a case
    compares the two answers it gets one after the other, so the cases share a server (a start
    and its first sync cost seconds) and each finds it warm, as a client mostly does."""
    folder = tmp_path_factory.mktemp("read-server")
    sources = folder / "sources"
    for provider in ("claude", "codex"):
        shutil.copytree(DATA / provider, sources / provider)
    (folder / "user").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEAMLORE_HOME", str(folder / "state"))
        patch.setenv("TEAMLORE_WATCH_ACCEPT_SECONDS", "60")
        patch.setenv("TEAMLORE_WATCH_FILES_CHECK_SECONDS", str(watch.SELECT_SECONDS))
        patch.setenv("HOME", str(folder / "user"))
        worktree = make_repo(folder)
        with serving(folder / "state", sources, folder) as running:
            yield running, worktree


@pytest.fixture(scope="module")
def unused_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Watch, Path]]:
    """One server and worktree for the cases where nothing may reach the server: it answers
    none of them, so they share it (a start and its first sync cost seconds) and each still
    finds it has answered nothing. TEAMLORE_HOME is its state dir during a case only
    (`idle_server`): the module's other servers keep theirs."""
    folder = tmp_path_factory.mktemp("unused-server")
    sources = folder / "sources"
    for provider in ("claude", "codex"):
        shutil.copytree(DATA / provider, sources / provider)
    (folder / "user").mkdir()
    with contextlib.ExitStack() as stack:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TEAMLORE_HOME", str(folder / "state"))
            patch.setenv("TEAMLORE_WATCH_ACCEPT_SECONDS", "60")
            patch.setenv("TEAMLORE_WATCH_FILES_CHECK_SECONDS", str(watch.SELECT_SECONDS))
            patch.setenv("HOME", str(folder / "user"))
            worktree = make_repo(folder)
            running = stack.enter_context(serving(folder / "state", sources, folder))
        yield running, worktree


@pytest.fixture()
def idle_server(unused_server: tuple[Watch, Path], monkeypatch: pytest.MonkeyPatch) -> Watch:
    """The shared server nothing may reach, with TEAMLORE_HOME its state dir."""
    running, _ = unused_server
    monkeypatch.setenv("TEAMLORE_HOME", str(running.socket.parent))
    assert running.answered() == 0  # no earlier case reached it either
    return running


def both_ways(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], ...]:
    """`teamlore ARGS` through the server, then in its own process (text at 80 columns)."""
    columns = {"COLUMNS": "80"}
    return (
        teamlore_cli(*args, cwd=cwd, env=columns),
        teamlore_cli(*args, cwd=cwd, env={**columns, **OWN_PROCESS}),
    )


def session_key() -> str:
    listed = teamlore_cli("sessions", "list", "--format", "json", env=OWN_PROCESS).stdout
    return str(json.loads(listed)["sessions"][0]["sessionKey"])


COMMANDS = [
    ("sessions", "search", "fixture"),
    ("sessions", "search", "fixture", "--format", "json"),
    ("sessions", "search", "fixture", "--lexical", "--limit", "3"),
    ("sessions", "search", "fixture", "--repository", "nowhere-such"),  # a refusal
    ("sessions", "search", "fixture", "--repository", "nowhere-such", "--format", "json"),
    ("sessions", "search", "--since", "yesterday-ish", "x"),  # a refused value
    ("sessions", "list"),
    ("sessions", "list", "--format", "json"),
    ("sessions", "show", "SESSION"),
    ("sessions", "show", "SESSION", "--format", "json"),
    ("sessions", "show", "no-such-session", "--format", "json"),
    ("status",),
    ("status", "--format", "json"),
    ("memory", "search", "invoice"),
    ("memory", "search", "invoice", "--format", "json"),
    ("memory", "search", "invoice", "--repository", "/no/such/repository"),
    ("sessions", "search", "-fixture", "--lexical"),  # a query word that starts with `-`
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_served_command_prints_the_bytes_and_exit_code_of_its_own_process(
    read_server: tuple[Watch, Path], command: tuple[str, ...]
) -> None:
    server, repo = read_server
    args = [session_key() if a == "SESSION" else a for a in command]
    before = server.answered()
    served, own = both_ways(*args, cwd=repo)
    assert server.answered_exactly(before + 1)  # the first went to the server
    assert (served.returncode, served.stdout, served.stderr) == (
        own.returncode,
        own.stdout,
        own.stderr,
    )
    assert served.stdout or served.stderr


def test_a_served_command_whose_reader_went_away_exits_0_quietly(
    read_server: tuple[Watch, Path],
) -> None:
    """As in its own process (tests/cli/test_search_walk.py): the client, writing the server's
    bytes to a pipe nobody reads any more (`| head -1`), exited 1."""
    server, repo = read_server
    before = server.answered()
    done = teamlore_to_a_closed_pipe("sessions", "search", "fixture", cwd=repo)
    assert server.answered_exactly(before + 1)  # the server answered it
    assert (done.returncode, done.stderr) == (0, "")


def on_a_terminal(*args: str, columns: int, env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """`teamlore ARGS` with stdin, stdout and stderr on a pseudo-terminal `columns` wide: its
    exit code and what the terminal received."""
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    assert exe is not None
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, columns, 0, 0))
    full_env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(
        [exe, *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**full_env, "TERM": "xterm-256color", **(env or {})},
        start_new_session=True,
    )
    os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal closed with the process
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    return proc.wait(timeout=120), received


@pytest.mark.parametrize(
    "command",
    [
        ("sessions", "search", "fixture"),
        ("sessions", "list"),
        ("status",),
        ("sessions", "show", "x"),
    ],
    ids=" ".join,
)
def test_on_a_terminal_a_served_command_prints_what_it_prints_in_its_own_process(
    server: Watch, command: tuple[str, ...]
) -> None:
    # colours, and a table as wide as the terminal (not the server's): rich reads both
    served = on_a_terminal(*command, columns=100)
    assert server.answered_exactly(1)
    own = on_a_terminal(*command, columns=100, env=OWN_PROCESS)
    assert served == own
    assert b"\x1b[" in served[1] or command == ("status",)  # (status prints no style)


def test_on_a_terminal_of_no_size_a_served_command_prints_at_80_columns_as_its_own_process(
    server: Watch,
) -> None:
    # a pseudo-terminal that reports 0 x 0 (as `script` makes): rich falls back to 80 x 25
    served = on_a_terminal("sessions", "list", columns=0)
    assert server.answered_exactly(1)
    assert served == on_a_terminal("sessions", "list", columns=0, env=OWN_PROCESS)
    assert b"session" in served[1]


def test_a_turn_appended_is_found_through_the_server_without_running_sync(
    server: Watch, sources: Path
) -> None:
    sys.path.insert(0, str(SRC.parent / "bench"))
    import corpus

    synced = len(server.events("synced"))
    corpus.append_turn(sources / "claude" / "synthetic-main.jsonl", "zqwarm", at_ms=1_780_000_000)
    server.wait_for("synced", synced + 1)  # the watcher saw the file grow and synced it
    search = ("sessions", "search", "zqwarm", "--no-sync", "--lexical", "--format", "json")
    found = teamlore_cli(*search)
    assert ["zqwarm" in hit["snippet"] for hit in json.loads(found.stdout)["hits"]] == [True]
    assert server.answered_exactly(1)
    assert server.events("answered")[-1]["command"] == "sessions search"


def test_a_sync_that_changed_nothing_is_not_logged_and_a_removed_file_is_said_removed(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    """Walk defect: a search that synced a grown file itself was followed by the watch's own
    `synced: 0 changed files` line, and a deleted session file was logged as `0 changed
    files`. A sync that changed nothing logs nothing (the first, at start, always logs); one
    that found a file removed says so."""
    sys.path.insert(0, str(SRC.parent / "bench"))
    import corpus

    def last_sync_at() -> str:
        return str(json.loads(in_process("status", "--format", "json").stdout)["lastSyncAt"])

    sync_json(sources)
    (home / "config.toml").write_text(f'[sources]\nclaude = ["{sources / "claude"}"]\n')
    running = start_watch(tmp_path, None, "--min-interval", "0")
    try:
        grown = sources / "claude" / "synthetic-main.jsonl"
        # held stopped, the watch sees the grown file only after the search below synced it
        running.proc.send_signal(signal.SIGSTOP)
        corpus.append_turn(grown, "zqquiet", at_ms=1_780_000_000)
        search = ("sessions", "search", "zqquiet", "--lexical", "--format", "json")
        assert json.loads(teamlore_cli(*search, env=OWN_PROCESS).stdout)["hits"]
        searched = last_sync_at()
        running.proc.send_signal(signal.SIGCONT)
        turns = json.loads(teamlore_cli("status", "--format", "json").stdout)["turns"]
        wait_until(lambda: last_sync_at() != searched)  # the watch synced it: it changed nothing
        grown.unlink()
        running.wait_for("synced", 2)
        time.sleep(1)  # nothing else comes
    finally:
        running.proc.send_signal(signal.SIGCONT)  # held stopped still if the search failed
        running.proc.send_signal(signal.SIGTERM)
        assert running.proc.wait(timeout=60) == 0, running.log.read_text()
    removed = running.events("synced")[1:]
    assert all(INSTANT.fullmatch(event.pop("at")) for event in removed)
    assert removed == [
        {"event": "synced", "changedFiles": 0, "removedFiles": 1, "turnsWritten": 0, "turns": turns}
    ]
    said = watch.event_lines("synced", {k: v for k, v in removed[0].items() if k != "event"})
    assert " ".join(" ".join(unstamped(said)).split()) == (
        f"synced: 1 session file removed (its turns stay indexed); the index holds {turns} turns."
    )


def test_an_index_removed_while_the_server_runs_is_synced_again_without_a_session_change(
    server: Watch, home: Path
) -> None:
    """Removing the index to start afresh while `watch` runs: the server notices (its index file
    is gone, or another file stands in its place) and syncs, not waiting for a session file to
    change; `status` through it then counts what it counted before."""

    def status() -> dict[str, Any]:
        return dict(json.loads(teamlore_cli("status", "--format", "json").stdout))

    before = status()
    assert before["turns"] > 0
    synced = len(server.events("synced"))
    for file in home.glob("index.sqlite3*"):
        file.unlink()
    server.wait_for("index-replaced")
    server.wait_for("synced", synced + 1)
    after = status()
    assert (after["sessions"], after["turns"]) == (before["sessions"], before["turns"])
    assert len(server.events("index-replaced")) == 1


def test_another_index_made_in_the_same_file_is_synced_again(
    server: Watch, home: Path, tmp_path: Path
) -> None:
    """The index removed and made anew by a command within a files check: on ext4 the new file
    got the removed one's inode, so the server, which knew its index by device and inode, never
    synced it (`status`: `Sessions 0` until a session file changed). Here a new index is written
    into the same file, which keeps its inode whatever the file system."""

    def status() -> dict[str, Any]:
        return dict(json.loads(teamlore_cli("status", "--format", "json").stdout))

    before = status()
    fresh = tmp_path / "fresh"
    made = teamlore_cli("status", env={"TEAMLORE_HOME": str(fresh), **OWN_PROCESS})
    assert made.returncode == 0 and not list(fresh.glob("index.sqlite3-*"))  # all in one file
    index = home / "index.sqlite3"
    inode, synced = index.stat().st_ino, len(server.events("synced"))
    for file in home.glob("index.sqlite3-*"):
        file.unlink()
    shutil.copyfile(fresh / "index.sqlite3", index)
    assert index.stat().st_ino == inode
    server.wait_for("index-replaced")
    server.wait_for("synced", synced + 1)
    after = status()
    assert (after["sessions"], after["turns"]) == (before["sessions"], before["turns"])


def test_a_sync_refused_after_the_index_was_replaced_is_not_run_again_every_files_check(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    """The index removed, and the sync that follows refused with a code that is not the index's
    (a config.toml broken meanwhile): the server says so once and waits for a session file. It
    took the refused sync's index (none) for a replaced one at every files check, and synced
    again every 2 s. The files check that sees a session folder appear sees the index too."""
    late = tmp_path / "late-codex"
    sync_json(sources)
    config = f'[sources]\nclaude = ["{sources / "claude"}"]\ncodex = ["{late}"]\n'
    (home / "config.toml").write_text(config)
    running = start_watch(tmp_path, None, "--min-interval", "0")
    try:
        (home / "config.toml").write_text("[sources\n")
        for file in home.glob("index.sqlite3*"):
            file.unlink()
        running.wait_for("sync-failed")
        [failed] = running.events("sync-failed")
        assert (failed["code"], failed["retryWhen"]) == ("CONFIG_INVALID", "a session file")
        late.mkdir()
        running.wait_for("folders-changed")
        assert len(running.events("index-replaced")) == 1
    finally:
        running.proc.send_signal(signal.SIGTERM)
        assert running.proc.wait(timeout=60) == 0, running.log.read_text()


def test_a_crash_in_a_sync_is_not_reported_as_a_stopped_sync(home: Path, sources: Path) -> None:
    """An unexpected error in the sync ends the server with that error, not with "the sync in
    progress was stopped": only Ctrl-C or SIGTERM stops a sync."""
    home.mkdir()
    (home / "config.toml").write_text(f'[sources]\nclaude = ["{sources / "claude"}"]\n')
    program = textwrap.dedent(
        """
        import sys
        from teamlore.sessions.indexer import Indexer

        def crash(*args, **kwargs):
            raise RuntimeError("a bug in the sync")

        Indexer.sync = crash
        sys.argv = ["teamlore", "watch", "--format", "json"]
        from teamlore.cli.entry import main
        main()
        """
    )
    ran = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, env=os.environ.copy()
    )
    assert ran.returncode != 0
    assert "a bug in the sync" in ran.stdout + ran.stderr
    events = [json.loads(line)["event"] for line in ran.stdout.splitlines() if '"event"' in line]
    assert events == ["started", "stopped"]


def test_a_damaged_index_is_logged_once_and_synced_again_once_it_is_mended(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    """An index damaged in place (the same file, so no "removed or replaced") refuses every sync
    with DB_CORRUPT, and no retry cures that: the server says so once, then leaves it, however
    the session files change, until the index changes (`teamlore sync --rebuild` sets it aside
    and starts a fresh one) and syncs again. It was retried, and logged, every loop."""
    sys.path.insert(0, str(SRC.parent / "bench"))
    import corpus

    sync_json(sources)
    (home / "config.toml").write_text(f'[sources]\nclaude = ["{sources / "claude"}"]\n')
    running = start_watch(tmp_path, None, "--min-interval", "0")
    session = sources / "claude" / "synthetic-main.jsonl"
    try:
        index = home / "index.sqlite3"
        inode = index.stat().st_ino
        with index.open("r+b") as damaged:
            damaged.write(os.urandom(100_000))
        assert index.stat().st_ino == inode
        corpus.append_turn(session, "zqdamaged", at_ms=1_780_000_000)
        running.wait_for("sync-failed")
        corpus.append_turn(session, "zqagain", at_ms=1_780_000_100)
        # each request is answered between two turns of the loop, and a retry took one of them
        for _ in range(3):
            assert teamlore_cli("status", "--format", "json").returncode == 1
        assert running.answered_exactly(3)
        assert not running.events("sync-refused")
        [failed] = running.events("sync-failed")
        assert (failed["code"], failed["retryWhen"]) == ("DB_CORRUPT", "the index")

        synced = len(running.events("synced"))
        rebuilt = teamlore_cli("sync", "--rebuild", "--format", "json", env=OWN_PROCESS)
        assert rebuilt.returncode == 0, rebuilt.stdout
        running.wait_for("synced", synced + 1)
        assert len(running.events("sync-failed")) == 1
        search = ("sessions", "search", "zqagain", "--no-sync", "--lexical", "--format", "json")
        assert json.loads(teamlore_cli(*search).stdout)["hits"]
    finally:
        running.proc.send_signal(signal.SIGTERM)
        assert running.proc.wait(timeout=60) == 0, running.log.read_text()


def test_a_folder_moved_into_a_watched_folder_is_synced_with_its_sessions(
    server: Watch, sources: Path, tmp_path: Path
) -> None:
    """A backup of a project folder restored into the session folder (or a Codex day folder
    made with its file): the folder's own event is the only one, its files make none."""

    def sessions() -> int:
        status = teamlore_cli("status", "--format", "json", env=OWN_PROCESS).stdout
        return int(json.loads(status)["sessions"])

    before = sessions()
    synced = len(server.events("synced"))
    project = SRC.parent / "tests" / "fixtures" / "sessions" / "claude" / "-home-dev-project"
    backup = tmp_path / "backup" / project.name
    shutil.copytree(project, backup)
    backup.rename(sources / "claude" / project.name)
    server.wait_for("synced", synced + 1)
    assert sessions() == before + 1


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_ctrl_c_in_the_middle_of_a_sync_says_the_sync_was_stopped(
    home: Path, sources: Path, tmp_path: Path, fmt: str
) -> None:
    """Stopped while it syncs, the server leaves the index with part of the sync and says so
    (a clean stop all the same: exit 0); `teamlore sync` then finishes it."""
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude = ["{sources / "claude"}"]\ncodex = ["{sources / "codex"}"]\n'
    )
    flag = tmp_path / "paused"
    log = tmp_path / "watch.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "teamlore.cli.entry", "watch", "--format", fmt],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "TEAMLORE_PAUSEPOINT": f"sync.after-file={flag}"},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        wait_until(flag.exists)  # its first sync stands still after one session file
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 0, log.read_text()
    finally:
        proc.kill()
    lines = log.read_text().splitlines()
    if fmt == "text":
        lines = unstamped(lines)
    if fmt == "json":
        assert [json.loads(line)["event"] for line in lines] == [
            "started",
            "sync-stopped",
            "stopped",
        ]
    else:  # after the start line, wrapped at the width
        assert lines[-2:] == [
            "the sync in progress was stopped; `teamlore sync` finishes it.",
            "teamlore watch stopped.",
        ]

    def sessions() -> int:
        status = teamlore_cli("status", "--format", "json", env=OWN_PROCESS).stdout
        return int(json.loads(status)["sessions"])

    partial = sessions()
    assert teamlore_cli("sync", env=OWN_PROCESS).returncode == 0
    assert sessions() > partial


def test_a_session_folder_that_appears_or_comes_back_is_watched_from_then_on(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    """A client used for the first time after `watch` started makes its session folder then:
    the server watches it from then on and syncs what it holds. A folder moved away and back
    is another folder to the system; it is watched again too."""
    sys.path.insert(0, str(SRC.parent / "bench"))
    import corpus

    late = tmp_path / "late-codex"
    home.mkdir()
    (home / "config.toml").write_text(
        f'[sources]\nclaude = ["{sources / "claude"}"]\ncodex = ["{late}"]\n'
    )
    running = start_watch(tmp_path)
    try:
        assert running.events("started")[0]["folders"] == 1

        def turns() -> int:
            return int(json.loads(teamlore_cli("status", "--format", "json").stdout)["turns"])

        claude_only = turns()
        synced = len(running.events("synced"))
        shutil.copytree(sources / "codex", late)
        running.wait_for("folders-changed")
        assert running.events("folders-changed")[0]["folders"] == 2
        running.wait_for("synced", synced + 1)
        assert turns() > claude_only

        claude = sources / "claude"
        claude.rename(tmp_path / "away")
        running.wait_for("folders-changed", 2)
        (tmp_path / "away").rename(claude)
        running.wait_for("folders-changed", 3)
        synced = len(running.events("synced"))
        corpus.append_turn(claude / "synthetic-main.jsonl", "zqback", at_ms=1_780_000_000)
        running.wait_for("synced", synced + 1)
        search = ("sessions", "search", "zqback", "--no-sync", "--lexical", "--format", "json")
        hits = json.loads(teamlore_cli(*search, env=OWN_PROCESS).stdout)["hits"]
        assert ["zqback" in hit["snippet"] for hit in hits] == [True]
    finally:
        running.proc.send_signal(signal.SIGTERM)
        assert running.proc.wait(timeout=60) == 0, running.log.read_text()


def test_a_watch_whose_state_dir_is_deleted_stops_saying_why_and_leaves_the_next_one_alone(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    """Deleting the state dir (to start afresh) takes the socket with it, so no command can
    reach the server: it stops with WATCH_SOCKET_GONE and exit 1 instead of running on unseen,
    and it does not remove the socket of a watch started since (the first is held stopped
    while the second starts, so it notices only then)."""

    def configure() -> None:
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(f'[sources]\nclaude = ["{sources / "claude"}"]\n')

    configure()
    first = start_watch(tmp_path)
    first.proc.send_signal(signal.SIGSTOP)
    shutil.rmtree(home)
    configure()
    second = start_watch(tmp_path)
    try:
        first.proc.send_signal(signal.SIGCONT)
        assert first.proc.wait(timeout=120) == 1, first.log.read_text()
        log, refusal = re.split(r'\{"event":"stopped"[^\n]*\n', first.log.read_text())  # then it
        assert '"event":"started"' in log
        assert json.loads(refusal)["error"]["code"] == "WATCH_SOCKET_GONE"

        assert second.socket.exists()
        assert json.loads(teamlore_cli("status", "--format", "json").stdout)["turns"] > 0
        assert second.answered_exactly(1)
    finally:
        first.proc.kill()
        second.proc.send_signal(signal.SIGTERM)
        assert second.proc.wait(timeout=60) == 0, second.log.read_text()


def test_after_the_server_is_killed_the_next_command_answers_in_its_own_process(
    server: Watch,
) -> None:
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=60)
    assert server.socket.exists()  # stale: nobody listens on it
    served, own = both_ways("sessions", "search", "fixture", "--format", "json")
    assert served.returncode == own.returncode == 0
    assert served.stdout == own.stdout
    restarted = start_watch(server.socket.parent.parent)  # a new server replaces the socket
    assert teamlore_cli("status", "--format", "json").returncode == 0
    assert restarted.answered_exactly(1)
    restarted.proc.send_signal(signal.SIGTERM)
    assert restarted.proc.wait(timeout=60) == 0, restarted.log.read_text()


def wait_until(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 120  # a bound for a hung process, not a timing assertion
    while not done():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_sigterm_in_the_middle_of_a_request_stops_the_server_and_the_client_answers_itself(
    home: Path, sources: Path, tmp_path: Path
) -> None:
    sys.path.insert(0, str(SRC.parent / "bench"))
    import corpus

    sync_json(sources)
    (home / "config.toml").write_text(f'[sources]\nclaude = ["{sources / "claude"}"]\n')
    running = start_watch(tmp_path, None, "--min-interval", "3600")  # no sync of its own now
    corpus.append_turn(sources / "claude" / "synthetic-main.jsonl", "zqstop", at_ms=1_780_000_000)
    flag = tmp_path / "paused"
    client = subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.entry", "sessions", "search", "zqstop", "--lexical"],
        env={**os.environ, "TEAMLORE_PAUSEPOINT": f"sync.after-file={flag}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_until(flag.exists)  # the server stands still indexing the grown file for the search
    running.proc.send_signal(signal.SIGTERM)
    flag.unlink()
    assert running.proc.wait(timeout=120) == 0
    assert not running.socket.exists() and running.answered() == 0
    # the client runs the search itself (past the same pause point, if the file is still stale)
    wait_until(lambda: flag.unlink(missing_ok=True) or client.poll() is not None)
    out, err = client.communicate(timeout=120)
    assert client.returncode == 0, err
    assert b"zqstop" in out


def test_sighup_stops_the_server_as_sigterm_does(home: Path, tmp_path: Path) -> None:
    """Its terminal closed (SIGHUP) killed it: `Hangup`, exit 129, no `stopped` line, and its
    socket left behind."""
    running = start_watch(tmp_path)
    running.proc.send_signal(signal.SIGHUP)
    assert running.proc.wait(timeout=60) == 0, running.log.read_text()
    assert running.events("stopped") and not running.socket.exists()


def test_a_watch_started_with_sighup_ignored_outlives_its_terminal(
    home: Path, tmp_path: Path
) -> None:
    """`nohup teamlore watch &` (SIGHUP ignored from the start) is how a watch is kept running
    past a logout: handling SIGHUP as SIGTERM must not undo that."""
    ignoring = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # inherited, as nohup does it
    try:
        running = start_watch(tmp_path)
    finally:
        signal.signal(signal.SIGHUP, ignoring)
    running.proc.send_signal(signal.SIGHUP)
    # a request answered after the signal proves no handler took it: a handler stops the server
    # at once, in the middle of a request too (a stopped server answers none); one turn of its
    # loop (SELECT_SECONDS) then shows it did not stop between requests either
    header, _, _ = warm._ask(str(running.socket), warm.request_for(["status", "--format", "json"]))
    assert header["ok"] and running.answered_exactly(1)
    with pytest.raises(subprocess.TimeoutExpired):
        running.proc.wait(timeout=watch.SELECT_SECONDS)
    assert running.socket.exists() and not running.events("stopped")
    running.proc.terminate()
    assert running.proc.wait(timeout=60) == 0


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_server_whose_log_reader_went_away_stops_quietly(home: Path, fmt: str) -> None:
    """`teamlore watch | head -1`, then a command it answers: it ended with `error INTERNAL:
    BrokenPipeError` and exit 120 (exit 1 with --format json). A reader that stops reading ends
    a command quietly (docs/cli-output.md): the server stops, exit 0, its socket removed."""
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.entry", "watch", "--format", fmt],
        stdout=write_end,
        stderr=subprocess.PIPE,
    )
    os.close(write_end)
    with os.fdopen(read_end) as log:  # read up to its first sync, then gone
        while (line := log.readline()) and "synced" not in line:
            pass
    assert teamlore_cli("status").returncode == 0
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, b"")
    assert not (home / warm.SOCKET_NAME).exists()


@pytest.mark.parametrize(
    "command",
    [
        ("sync", "--format", "json"),
        ("sessions", "search", "--help"),
        ("memory", "list", "--format", "json"),
        ("sessions", "exclude", "--help"),
    ],
    ids=" ".join,
)
def test_a_command_it_does_not_serve_never_reaches_the_server(
    idle_server: Watch, unused_server: tuple[Watch, Path], command: tuple[str, ...]
) -> None:
    _, repo = unused_server
    teamlore_cli(*command, cwd=repo)
    assert idle_server.answered() == 0


def test_a_request_for_another_command_is_refused_on_the_socket(idle_server: Watch) -> None:
    request = warm.request_for(["sync"])
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(idle_server.socket))
        warm.send_message(sock, request)
        assert sock.recv(1) == b""  # closed without accepting it
    assert idle_server.answered() == 0


def test_the_socket_is_private_to_its_user(idle_server: Watch) -> None:
    assert stat.S_IMODE(idle_server.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(idle_server.socket.parent.stat().st_mode) == 0o700
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:  # the peer's uid is what the server compares with its own
        assert _peer_uid(left) == os.getuid()


def test_a_server_of_other_code_is_not_used(home: Path, tmp_path: Path) -> None:
    # a server that answers anything with its own bytes, under another code fingerprint
    fake = tmp_path / "fake_server.py"
    fake.write_text(
        textwrap.dedent(
            """\
            import socket, sys
            from teamlore.cli import warm, watch
            s = socket.socket(socket.AF_UNIX)
            s.bind(sys.argv[1])
            s.listen()
            print("ready", flush=True)
            while True:
                c, _ = s.accept()
                warm.read_message(c)
                c.sendall(warm.ACCEPTED)
                header = {"ok": True, "code": "other", "exit": 0, "stdout": 4, "stderr": 0}
                warm.send_message(c, header)
                c.sendall(b"FAKE")
                c.close()
            """
        )
    )
    home.mkdir(mode=0o700)
    proc = subprocess.Popen(
        [sys.executable, str(fake), str(home / warm.SOCKET_NAME)], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
        served, own = both_ways("status", "--format", "json")
    finally:
        proc.kill()
        proc.wait()
    assert "FAKE" not in served.stdout
    assert (served.returncode, served.stdout) == (own.returncode, own.stdout)


def test_a_server_whose_files_changed_restarts_and_old_code_never_answers(
    home: Path, tmp_path: Path
) -> None:
    # an editable install: the server runs a copy of the package, then a module of it changes
    copy = tmp_path / "checkout"
    shutil.copytree(
        SRC / "teamlore", copy / "teamlore", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {"PYTHONPATH": str(copy)}
    running = start_watch(tmp_path, env)
    try:
        assert teamlore_cli("status", "--format", "json", env=env).returncode == 0
        assert running.answered_exactly(1)
        # a client of another checkout (ours) is not answered by it
        assert teamlore_cli("status", "--format", "json").returncode == 0
        assert running.answered() == 1
        edited = copy / "teamlore" / "cli" / "warm.py"
        edited.write_text(edited.read_text() + "\n# changed\n")
        assert teamlore_cli("status", "--format", "json", env=env).returncode == 0
        running.wait_for("restarting")
        running.wait_for("started", 2)
        assert teamlore_cli("status", "--format", "json", env=env).returncode == 0
        assert running.answered_exactly(2)  # by the restarted server, with the changed code
    finally:
        running.proc.send_signal(signal.SIGTERM)
        assert running.proc.wait(timeout=60) == 0, running.log.read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stop_that_lands_in_code_compiled_from_a_string_still_exits_0(
    sig: signal.Signals,
) -> None:
    """The server runs `eval` and `exec` (typer reads annotations, dataclasses build methods).
    A KeyboardInterrupt leaving such code made the interpreter exit by SIGINT after a clean stop
    (the restart test's -2, one run in four on Debian's Python 3.11.2)."""
    program = textwrap.dedent(
        f"""
        import os, signal
        from teamlore.cli.watch import _stopped_by_signals
        try:
            with _stopped_by_signals():
                exec("os.kill(os.getpid(), {int(sig)})\\nfor _ in range(99): pass")
                print("not stopped")
        except KeyboardInterrupt:  # caught, as the server caught it
            pass
        print("stopped")
        """
    )
    # SIGINT as a terminal delivers it, also when this suite runs as a background job
    ran = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert (ran.returncode, ran.stdout) == (0, "stopped\n"), ran.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stop_that_lands_in_a_class_being_made_still_exits_0(sig: signal.Signals) -> None:
    """A sync imports modules as it goes, so a stop may land while a class is made (dataclasses
    set up its fields there). Python 3.11 wraps what `__set_name__` raises in a RuntimeError:
    the server ended with a traceback and exit 1 (the restart test, one run in six with the
    files checked every 0.25 s)."""
    program = textwrap.dedent(
        f"""
        import os
        from teamlore.cli.watch import _stopped_by_signals

        class Field:
            def __set_name__(self, owner, name):
                os.kill(os.getpid(), {int(sig)})
                for _ in range(99): pass

        with _stopped_by_signals():
            class Holder:
                field = Field()
            print("not stopped")
        print("stopped")
        """
    )
    ran = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert (ran.returncode, ran.stdout) == (0, "stopped\n"), ran.stderr


def test_watch_refuses_a_state_dir_too_long_for_a_socket_and_leaves_no_trace(
    tmp_path: Path,
) -> None:
    long_home = tmp_path / ("d" * 60) / ("e" * 60) / "state"
    proc = teamlore_cli("watch", "--format", "json", env={"TEAMLORE_HOME": str(long_home)})
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "WATCH_SOCKET_PATH_TOO_LONG"
    assert not (tmp_path / ("d" * 60)).exists()
    text = teamlore_cli("watch", env={"TEAMLORE_HOME": str(long_home)})
    assert text.stderr.startswith("error WATCH_SOCKET_PATH_TOO_LONG: the socket path")
    assert refusal_lines(text.stderr)[1:] == [
        "  next: Use a shorter TEAMLORE_HOME, or run commands without watch."
    ]


def test_watch_on_a_read_only_state_dir_is_refused_with_its_code_not_a_traceback(
    tmp_path: Path,
) -> None:
    """A real read-only bind mount in a private user+mount namespace (`unshare -rm`), as in
    tests/sessions/test_index_health.py; skipped where the kernel does not allow one."""
    home = tmp_path / "state"
    assert (
        teamlore_cli("status", "--format", "json", env={"TEAMLORE_HOME": str(home)}).returncode == 0
    )
    read_only = f"mount --bind {home} {home} && mount -o remount,bind,ro {home} {home}"
    if shutil.which("unshare") is None:
        pytest.skip("unshare not installed (util-linux)")
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", read_only], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode()[:200]}")
    watch = f"{sys.executable} -m teamlore.cli.entry watch"
    for fmt in ("json", "text"):
        done = subprocess.run(
            ["unshare", "-rm", "sh", "-c", f"{read_only} && {watch} --format {fmt}"],
            capture_output=True,
            text=True,
            env={**os.environ, "TEAMLORE_HOME": str(home)},
            timeout=120,  # a bound for a hung process, not a timing assertion
        )
        assert done.returncode == 1, done.stderr
        if fmt == "json":
            assert json.loads(done.stdout)["error"]["code"] == "STATE_READ_ONLY"
        else:
            assert done.stderr.startswith("error STATE_READ_ONLY: the state directory is read-only")
            assert len(refusal_lines(done.stderr)) == 2  # the refusal, then its next step
    assert not (home / "watch.lock").exists() and not (home / "watch.sock").exists()


def test_the_text_log_counts_with_nouns_in_the_right_number_and_fits_the_width(
    home: Path, sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`home`: a state dir path short enough for a socket under pytest-xdist's tmp_path. The
    start line was 126 columns in a pipe at COLUMNS=80: teamlore's own sentences fit the
    width."""
    monkeypatch.delenv("CODEX_HOME")
    folder = Path(os.environ["HOME"]) / ".codex" / "sessions"  # the default codex folder
    folder.mkdir(parents=True)
    one = sorted((sources / "codex").rglob("*.jsonl"))[0]
    shutil.copy(one, folder / one.name)
    proc = subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.entry", "watch"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert proc.stdout is not None
    try:
        lines = [proc.stdout.readline()]
        while lines[-1] and "synced" not in lines[-1]:
            lines.append(proc.stdout.readline())
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    assert max(map(len, lines)) <= 81  # with its newline
    lines = unstamped(lines)  # each event starts with its local time
    started = " ".join(" ".join(lines[:-1]).split())
    assert started.startswith("teamlore watch: watching 1 session folder; answering sessions")
    assert lines[-1] == "synced: 1 changed file, 1 turn written; the index holds 1 turn.\n"


def test_the_text_log_shows_the_control_characters_of_a_folder_name_as_escapes() -> None:
    """Walk defect: a folder named with ESC (a terminal's escape sequence) or a newline went
    into the text log as it was: the terminal obeyed the one, the wrapping made the other a
    space. The log shows them as every text view does (`\\x1b`), the newline and tab too."""
    folder = "~/.claude/projects/a\x1b[2J\nb\tc"
    lines = watch.event_lines("folder-unreadable", {"folder": folder})
    assert not any(character in line for line in lines for character in "\x1b\n\t")
    assert " ".join(" ".join(unstamped(lines)).split()).startswith(
        "cannot read ~/.claude/projects/a\\x1b[2J\\x0ab\\x09c (its mode or owner):"
    )


def test_a_second_watch_on_the_same_state_dir_is_refused(server: Watch) -> None:
    proc = teamlore_cli("watch", "--format", "json")
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "LOCK_BUSY"
    assert "running `teamlore watch`" in error["message"]
    assert "stop a watch with Ctrl-C" in error["next"]  # a watch never ends by itself
    assert server.socket.exists() and server.proc.poll() is None


def test_the_client_looks_for_the_socket_in_the_state_dir_teamlore_uses() -> None:
    assert warm.socket_path(os.environ) == str(state_dir_path() / warm.SOCKET_NAME)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("60", 60.0), ("0.5", 0.5), ("", 2.0), ("0", 2.0), ("-1", 2.0), ("inf", 2.0), ("x", 2.0)],
)
def test_a_client_waits_for_a_busy_server_as_long_as_the_environment_says(
    value: str, seconds: float
) -> None:
    assert warm.ACCEPT_SECONDS == 2.0
    assert warm.accept_seconds({"TEAMLORE_WATCH_ACCEPT_SECONDS": value}) == seconds
    assert warm.accept_seconds({}) == 2.0


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("0.25", 0.25), ("10", 10.0), ("", 2.0), ("0", 2.0), ("-1", 2.0), ("nan", 2.0), ("x", 2.0)],
)
def test_a_server_looks_at_its_files_as_often_as_the_environment_says(
    value: str, seconds: float
) -> None:
    assert watch.FILES_CHECK_SECONDS == 2.0
    assert watch._files_check_seconds({"TEAMLORE_WATCH_FILES_CHECK_SECONDS": value}) == seconds
    assert watch._files_check_seconds({}) == 2.0


# the client's process: the interpreter, the console entry, the client (`_socket`, `zlib`,
# `json`, `core.locations`) and nothing of the command: 66 modules measured, 3 % more; the
# interpreter floor of bench/bench_cli.py (`import sqlite3, json`) loads ~50
CLIENT_BUDGET = 68


def test_a_served_command_imports_only_the_client(server: Watch) -> None:
    out, modules = _imported_by("sessions", "search", "fixture", "--format", "json")
    assert server.answered_exactly(1) and "hits" in json.loads(out)
    ours = {m for m in modules if m.startswith("teamlore")}
    # the console entry runs as __main__
    assert ours == {"teamlore", "teamlore.cli", "teamlore.cli.warm", "teamlore.core"} | {
        "teamlore.core.locations"
    }
    assert not {"pathlib", "socket", "sqlite3", "orjson", "hashlib"} & modules
    assert len(modules) <= CLIENT_BUDGET, f"{len(modules)} modules: {sorted(modules)}"


def _doctor_watch_check() -> dict[str, Any]:
    done = in_process("doctor", "--client", "codex", "--format", "json")
    checks = json.loads(done.stdout)["checks"]
    return next(c for c in checks if c["check"] == "watch")


def test_doctor_says_whether_a_watch_is_running(server: Watch, home: Path) -> None:
    running = _doctor_watch_check()
    assert running["status"] == "ok" and running["message"].startswith("running since 20")
    assert server.answered() == 0  # doctor only connects: it never asks the server anything
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=60) == 0
    assert _doctor_watch_check()["message"].startswith("not running (")
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(home / warm.SOCKET_NAME))  # bound, never listening: as a watch killed -9 leaves
    stale.close()
    left = _doctor_watch_check()
    assert left["status"] == "warn" and "stale socket" in left["message"]
    (home / warm.SOCKET_NAME).unlink()


def test_doctor_and_the_client_name_the_same_socket() -> None:
    assert warm.SOCKET_NAME == WATCH_SOCKET_NAME
