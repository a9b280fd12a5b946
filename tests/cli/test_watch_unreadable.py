"""`teamlore watch` (docs/watch.md) where it meets what it may not read or write: a folder under
the session folders that cannot be read, a watch the system refuses, a state dir it cannot
write to. Real processes: the server is `teamlore watch` started as a subprocess.

Root reads every folder, so when the tests run as root (CI does) the processes that must be
refused run as nobody through `setpriv` (util-linux), as in tests/sessions/test_poison_records.py;
otherwise as the user running the tests. The system's limit of file watches is lowered in a
user namespace of the test's own (`unshare -r`), where the kernel allows one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_watch_links import append_turn

from support import UNPRIVILEGED, in_private_namespace, unprivileged_prefix
from teamlore.cli import warm

DOCS = Path(__file__).resolve().parents[2] / "docs"
SESSION = "4f1c2d3e-0000-4000-8000-00000000b0{:02d}"


def turn_in(folder: Path, n: int, turn: int) -> Callable[[], None]:
    """Writing turn `turn` of session `n` in `folder`, as Claude Code appends it."""
    return lambda: append_turn(folder / f"{SESSION.format(n)}.jsonl", SESSION.format(n), turn)


class World:
    """A folder of its own (not under pytest's temporary folder, which is private to root),
    with a state dir, a home and two session folders (claude, codex), and `teamlore` run as a
    user who cannot read what they may not."""

    def __init__(self) -> None:
        self.prefix = unprivileged_prefix()
        self.root = Path(tempfile.mkdtemp(prefix="teamlore-watch-unreadable-"))
        os.chmod(self.root, 0o755)
        self.state, self.user = self.root / "state", self.root / "user"
        self.claude, self.codex = self.root / "claude", self.root / "codex"
        for folder in (self.user, self.claude, self.codex):
            folder.mkdir(parents=True)
        self.state.mkdir(mode=0o700)
        (self.state / "config.toml").write_text(
            f'[sources]\nclaude = ["{self.claude}"]\ncodex = ["{self.codex}"]\n'
        )
        env = {k: v for k, v in os.environ.items() if k != "TEAMLORE_MODEL_CACHE"}  # root's
        self.env = {
            **env,
            "TEAMLORE_HOME": str(self.state),
            "HOME": str(self.user),
            "TEAMLORE_WATCH_ACCEPT_SECONDS": "60",
            "TEAMLORE_WATCH_FILES_CHECK_SECONDS": "0.25",
        }
        self.locked: list[Path] = []

    def hand_over(self) -> None:
        """Give everything made under `root` so far to the user the commands run as."""
        if self.prefix:
            for path in [self.root, *self.root.rglob("*")]:
                os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)

    def lock(self, folder: Path, mode: int = 0) -> None:
        os.chmod(folder, mode)
        self.locked.append(folder)

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, sys.executable, "-m", "teamlore.cli.entry", *args]

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args), env={**self.env, **env}, capture_output=True, text=True, timeout=300
        )

    def clean_up(self) -> None:
        for folder in self.locked:
            os.chmod(folder, stat.S_IRWXU)
        shutil.rmtree(self.root)


@pytest.fixture()
def world() -> Iterator[World]:
    made = World()
    try:
        yield made
    finally:
        made.clean_up()


class Server:
    """A running `teamlore watch --format json`: its log (stdout) and its stderr, apart."""

    def __init__(self, world: World, *wrapper: str) -> None:
        self.log, self.stderr = world.root / "watch.log", world.root / "watch.err"
        with self.log.open("wb") as out, self.stderr.open("wb") as err:
            self.proc = subprocess.Popen(
                [*wrapper, *world.argv("watch", "--format", "json", "--min-interval", "0")],
                stdout=out,
                stderr=err,
                env=world.env,
            )

    def events(self, name: str) -> list[dict[str, Any]]:
        lines = [ln for ln in self.log.read_text().splitlines() if ln.startswith('{"event"')]
        return [e for e in map(json.loads, lines) if e.get("event") == name]

    def wait(self, done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 60  # a bound for a watch that never sees it
        while not done():
            assert self.proc.poll() is None, self.log.read_text() + self.stderr.read_text()
            assert time.monotonic() < deadline, f"{what}: {self.log.read_text()}"
            time.sleep(0.05)

    def syncs_a_change(self, write: Callable[[], None]) -> None:
        """`write`, then wait for a sync that found a changed file (the watcher saw it)."""
        before = len(self.events("synced"))
        write()
        self.wait(
            lambda: any(e["changedFiles"] for e in self.events("synced")[before:]),
            "no sync of the change",
        )


def turns_of(world: World, session_id: str) -> list[str]:
    shown = world.run("sessions", "show", session_id, "--format", "json", TEAMLORE_NO_WATCH="1")
    assert shown.returncode == 0, shown.stderr
    return [t["user"] for t in json.loads(shown.stdout)["turns"]]


def doctor_watch_check(world: World) -> dict[str, Any]:
    done = world.run("doctor", "--client", "codex", "--format", "json")
    return next(c for c in json.loads(done.stdout)["checks"] if c["check"] == "watch")


def test_an_unreadable_folder_is_logged_once_and_the_rest_stays_watched(world: World) -> None:
    """Walk defect: one `chmod 000` folder under the session folders failed the watcher's
    recursive watch, and its thread died with a traceback on stderr; the server ran on, doctor
    said `ok … running`, and no append (in any session folder) was synced again."""
    project, locked = world.claude / "p1", world.claude / "locked"
    project.mkdir()
    locked.mkdir()
    turn_in(project, 1, 1)()
    rollouts = world.codex / "2026" / "12" / "01"
    fixtures = Path(__file__).parents[1] / "fixtures" / "sessions"
    shutil.copytree(fixtures / "codex", world.codex, dirs_exist_ok=True)
    world.hand_over()
    world.lock(locked)
    server = Server(world)
    try:
        server.wait(lambda: bool(server.events("synced")), "no first sync")

        # the other folders are watched: an append in each is synced
        server.syncs_a_change(turn_in(project, 1, 2))
        assert turns_of(world, SESSION.format(1)) == ["q1", "q2"]
        assert [e["folder"] for e in server.events("folder-unreadable")] == [str(locked)]
        rollout = next(rollouts.glob("*.jsonl"))
        last = rollout.read_text().splitlines()[-1]
        server.syncs_a_change(lambda: rollout.write_text(f"{rollout.read_text()}{last}\n"))

        # a folder made since is watched: a session in it, then a write to that session
        later = world.claude / "p2"
        later.mkdir()
        world.hand_over()
        server.syncs_a_change(turn_in(later, 2, 1))
        server.syncs_a_change(turn_in(later, 2, 2))
        assert turns_of(world, SESSION.format(2)) == ["q1", "q2"]

        # and the locked folder, once it may be read
        os.chmod(locked, 0o755)  # synced then: empty, it changes nothing, so nothing is logged
        server.syncs_a_change(turn_in(locked, 3, 1))
        server.syncs_a_change(turn_in(locked, 3, 2))
        assert turns_of(world, SESSION.format(3)) == ["q1", "q2"]

        assert len(server.events("folder-unreadable")) == 1  # logged once
        check = doctor_watch_check(world)
        assert check["status"] == "ok" and check["message"].startswith("running since 20")
    finally:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=60) == 0, server.log.read_text()
    assert server.stderr.read_text() == ""  # no traceback


def test_a_folder_made_unreadable_while_it_runs_is_logged_and_synced_once_readable(
    world: World,
) -> None:
    """Walk defect: a folder `chmod 000` while the watch ran was not logged (the recursive
    watch's filter dropped a folder's mode change), and once readable again it was not synced
    until a file in it changed: a turn written while it could not be read stayed unindexed."""
    project = world.claude / "p1"
    project.mkdir()
    turn_in(project, 1, 1)()
    world.hand_over()
    server = Server(world)
    try:
        server.wait(lambda: bool(server.events("synced")), "no first sync")
        world.lock(project)
        server.wait(lambda: bool(server.events("folder-unreadable")), "not logged")
        assert [e["folder"] for e in server.events("folder-unreadable")] == [str(project)]

        # written where it may be written but not listed: the sync cannot see it
        world.lock(project, stat.S_IWUSR | stat.S_IXUSR)
        turn_in(project, 1, 2)()
        world.hand_over()
        time.sleep(3)  # the watch saw the write, and its sync could not list the folder
        assert turns_of(world, SESSION.format(1)) == ["q1"]

        os.chmod(project, 0o755)  # nothing in it changes: its mode says it may be read
        server.wait(lambda: turns_of(world, SESSION.format(1)) == ["q1", "q2"], "not synced")
        world.lock(project)  # unreadable again: logged again
        server.wait(lambda: len(server.events("folder-unreadable")) == 2, "not logged again")

        # deleted while unreadable (no mode change comes), then a folder of its name made
        # unreadable: it was still held as unreadable, so that one went unlogged
        # (its one file removed by name: a user who is not root cannot list it to remove it)
        world.lock(project, stat.S_IWUSR | stat.S_IXUSR)
        (project / f"{SESSION.format(1)}.jsonl").unlink()
        project.rmdir()
        time.sleep(1)  # the watch sees the deletion, the server its next check
        project.mkdir()
        world.hand_over()
        time.sleep(1)  # the watch takes the new folder in before its mode changes
        world.lock(project)
        server.wait(lambda: len(server.events("folder-unreadable")) == 3, "the new one unlogged")
    finally:
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=60) == 0, server.log.read_text()
    assert server.stderr.read_text() == ""  # no traceback


def test_a_watch_the_system_refuses_stops_the_server_saying_why(world: World) -> None:
    """A watcher thread that dies (here: the system's limit of file watches, lowered to 2 in a
    user namespace of the test's own) must not leave a server that answers, and that doctor
    calls running, while nothing keeps the index fresh: it stops with WATCH_NOTIFY_FAILED and
    exit 1, its socket gone, and commands run in their own process. Walk defect: the thread
    died with a traceback and the server ran on. The folder watchfiles names in its words is
    shown as every path is (`~` for the home), not as its absolute path."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare not installed (util-linux)")
    limit = "echo 2 > /proc/sys/user/max_inotify_watches"
    probe = subprocess.run(["unshare", "-r", "sh", "-c", limit], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot lower the limit of file watches here: {probe.stderr.strip()[:200]}")
    for folder in ("p1", "p2", "p3"):
        (world.claude / folder).mkdir()
    world.prefix = []  # root of the namespace: its own limit applies, and nothing is unreadable
    world.env["HOME"] = str(world.root)  # the session folders are in the home
    server = Server(world, "unshare", "-r", "sh", "-c", f'{limit} && exec "$0" "$@"')
    try:
        assert server.proc.wait(timeout=120) == 1, server.log.read_text()
    finally:
        server.proc.kill()
    log = server.log.read_text()
    refusal = json.loads(log[log.index("\n", log.index('{"event":"stopped"')) :])["error"]
    assert refusal["code"] == "WATCH_NOTIFY_FAILED"
    assert "file watch limit" in refusal["message"]
    # the folder the limit stopped at (a p* folder, or ~/claude itself when the machine is busy)
    assert str(world.root) not in refusal["message"] and '"~/claude' in refusal["message"]
    assert server.events("stopped")
    assert server.stderr.read_text() == ""  # no traceback
    assert not (world.state / warm.SOCKET_NAME).exists()
    check = doctor_watch_check(world)
    assert check["message"].startswith("not running (commands run in their own process)")


def test_a_state_dir_it_cannot_write_to_is_refused_as_sync_refuses_it(
    world: World, tmp_path: Path
) -> None:
    """Walk defect: docs/watch.md promised STATE_READ_ONLY for a read-only state dir, while a
    `chmod 500` one got PERMISSION_DENIED. A later walk asked for one code from every command
    for a state dir that cannot be written, whatever the cause (a read-only mount, its mode or
    owner): STATE_READ_ONLY, from `watch` as from `sync`."""
    world.hand_over()
    world.lock(world.state, 0o500)
    denied = [world.run(command, "--format", "json") for command in ("watch", "sync")]
    assert [json.loads(d.stdout)["error"]["code"] for d in denied] == ["STATE_READ_ONLY"] * 2
    assert [d.returncode for d in denied] == [1, 1]
    assert sorted(p.name for p in world.state.iterdir()) == ["config.toml"]  # nothing made

    home = tmp_path / "state"
    home.mkdir(mode=0o700)
    env = f"TEAMLORE_HOME={home} HOME={tmp_path}"
    mount, watch, sync = in_private_namespace(
        tmp_path,
        [
            ["sh", f"mount --bind {home} {home} && mount -o remount,bind,ro {home} {home}"],
            ["sh", f"{env} {sys.executable} -m teamlore.cli.entry watch --format json"],
            ["sh", f"{env} {sys.executable} -m teamlore.cli.entry sync --format json"],
        ],
    )
    assert mount["rc"] == 0, mount
    read_only = [json.loads(done["stdout"])["error"] for done in (watch, sync)]
    assert [error["code"] for error in read_only] == ["STATE_READ_ONLY"] * 2
    # the file it could not make, from `~`, and why in words (not `[Errno 30] …: '…'`)
    assert [error["message"].split(" (")[-1] for error in read_only] == [
        f"~/state/{lock}: Read-only file system)" for lock in ("watch.lock", "sync.lock")
    ]

    documented = next(
        line
        for line in (DOCS / "watch.md").read_text().split("\n- ")
        if "state dir it cannot write to" in line
    )
    assert "`STATE_READ_ONLY`, on a read-only mount as on a folder" in " ".join(documented.split())
