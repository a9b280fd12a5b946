"""Two people (or two cron jobs) adding repositories to one org index at the same moment
(docs/org.md): a clone is in the index once and a name names one clone, however the two
`org add` interleave; the one that comes second is refused with ORG_REPOSITORY_EXISTS, never
an internal error. Real processes released together, on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from org_support import make_clone
from support import git, in_process
from teamlore.cli.main import app
from teamlore.core import errors

RACER = """
import sys, time
from pathlib import Path
import teamlore.ops.org.index  # registers org.add
from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation

go, home, name, clone, ready = sys.argv[1:]
Path(ready).touch()
while not Path(go).exists():
    time.sleep(0.0005)
try:
    run_operation("org.add", OpContext(cwd=Path(clone), home=Path(home)),
                  {"path": clone, "name": name})
    print("added")
except errors.TeamloreError as err:
    print(err.code)
"""


def _race(home: Path, database: str | None, tmp: Path, adds: list[tuple[str, Path]]) -> list[str]:
    """Start one `org add` process per (name, clone), let them all go at once; what each
    printed: `added` or the refusal's code (anything else is a crash)."""
    go = tmp / f"go-{time.monotonic_ns()}"
    env = {**os.environ, "TEAMLORE_ORG_DATABASE": database or ""}
    racers = []
    for number, (name, clone) in enumerate(adds):
        ready = tmp / f"{go.name}.ready-{number}"
        argv = [sys.executable, "-c", RACER, str(go), str(home), name, str(clone), str(ready)]
        racers.append((ready, subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)))
    deadline = time.monotonic() + 60
    while not all(ready.exists() for ready, _ in racers):
        assert time.monotonic() < deadline, "a racer never started"
        time.sleep(0.01)
    go.touch()
    said = []
    for _, racer in racers:
        out, _ = racer.communicate(timeout=60)
        said.append(out.strip().splitlines()[-1] if out.strip() else f"exit {racer.returncode}")
    return said


def _fresh(database: str | None, attempt: int) -> str | None:
    """An empty index for each attempt: the embedded one is per state dir; a PostgreSQL
    database of the test's cluster, made for it."""
    if database is None:
        return None
    import psycopg

    base, _, name = database.rpartition("/")
    fresh = f"{name}_{attempt}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {fresh}")  # type: ignore[arg-type]
    return f"{base}/{fresh}"


def _listed(home: Path, database: str | None) -> list[tuple[str, str]]:
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    done = CliRunner().invoke(app, ["org", "list", "--format", "json"], env=env)
    assert done.exit_code == 0, done.output
    return [(r["name"], r["path"]) for r in json.loads(done.output)["repositories"]]


ATTEMPTS = 4  # the two processes interleave differently each time: every way must hold


def test_one_clone_added_twice_at_once_under_two_names_is_in_the_index_once(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    for attempt in range(ATTEMPTS):
        state = home / f"attempt-{attempt}"
        clone = make_clone(tmp_path / f"clones-{attempt}", "billing", {"deploy": "Deploy it."})
        database_now = _fresh(database, attempt)
        said = _race(state, database_now, tmp_path, [("billing", clone), ("payments", clone)])
        assert sorted(said) == ["ORG_REPOSITORY_EXISTS", "added"], (attempt, said)
        assert [path for _, path in _listed(state, database_now)] == [str(clone)]


def test_two_clones_added_at_once_under_one_name_are_refused_not_crashed(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    for attempt in range(ATTEMPTS):
        state = home / f"attempt-{attempt}"
        first = make_clone(tmp_path / f"a-{attempt}", "billing", {"deploy": "Deploy it."})
        second = make_clone(tmp_path / f"b-{attempt}", "billing", {"cache": "Keys by tenant."})
        database_now = _fresh(database, attempt)
        said = _race(state, database_now, tmp_path, [("billing", first), ("billing", second)])
        assert sorted(said) == ["ORG_REPOSITORY_EXISTS", "added"], (attempt, said)
        assert [name for name, _ in _listed(state, database_now)] == ["billing"]


def test_adding_a_clone_again_under_another_name_is_told_it_is_in_once(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    clone = make_clone(tmp_path / "clones", "billing", {"deploy": "Deploy with the script."})
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    assert CliRunner().invoke(app, ["org", "add", str(clone)], env=env).exit_code == 0
    again = CliRunner().invoke(
        app, ["org", "add", str(clone), "--name", "payments", "--format", "json"], env=env
    )
    error = json.loads(again.output)["error"]
    assert again.exit_code == 1 and error["code"] == "ORG_REPOSITORY_EXISTS"
    assert error["message"].endswith("for this clone (billing)")
    assert "teamlore org list" in error["next"]  # not only "pick another --name"


def test_a_second_clone_of_a_remote_already_in_the_index_is_refused(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """Two clones of one repository (`git clone … ~/src2billing`) would put every entry in the
    index twice: a repository is in once, whichever clone, however its remote is spelt
    (`git@github.com:Acme/Billing.git`: GitHub takes either case)."""
    clone = make_clone(tmp_path / "src", "billing", {"deploy": "Deploy with the script."})
    other = make_clone(tmp_path / "src2", "src2billing", {"deploy": "Deploy with the script."})
    git(other, "remote", "set-url", "origin", "git@github.com:Acme/Billing.git")
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    assert CliRunner().invoke(app, ["org", "add", str(clone)], env=env).exit_code == 0
    again = CliRunner().invoke(app, ["org", "add", str(other), "--format", "json"], env=env)
    error = json.loads(again.output)["error"]
    assert again.exit_code == 1 and error["code"] == "ORG_REPOSITORY_EXISTS"
    assert error["message"] == (
        "the org index already has github.com/acme/billing as billing (another clone of it)"
    )
    assert "teamlore org remove billing" in error["next"]
    assert _listed(home, database) == [("billing", str(clone))]


def test_a_sync_killed_part_way_leaves_in_its_log_each_repository_it_synced(
    home: Path, tmp_path: Path
) -> None:
    """`org sync > log`, then kill -9 after a repository: the log (not a terminal) says it."""
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": ""}
    clone = make_clone(tmp_path / "src", "alpha", {"alpha-note": "How alpha deploys."})
    assert CliRunner().invoke(app, ["org", "add", str(clone)], env=env).exit_code == 0
    log = tmp_path / "log"
    with log.open("w") as out:
        killed = subprocess.run(
            [sys.executable, "-m", "teamlore.cli.main", "org", "sync", "--lexical"],
            env={
                **os.environ,
                **env,
                "TEAMLORE_FAILPOINT": "org.sync.repository-done",  # SIGKILL after alpha
                "PYTHONPATH": os.pathsep.join(sys.path),
            },
            stdout=out,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
    assert killed.returncode == -9
    assert log.read_text().splitlines() == [
        "alpha  synced  1 document (1 added, 0 changed, 0 deleted)"
    ]


def test_a_sync_stopped_before_its_first_repository_says_so_within_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`after 0 repositories (these stay as synced)` on one 113-character line was the text."""
    from teamlore.cli import output
    from teamlore.cli.commands.org import _before_sync_error

    monkeypatch.setenv("COLUMNS", "80")
    output.forget_consoles()
    left = ["billing", "payments", "web-app"]
    stopped = errors.TeamloreError(
        errors.ORG_DATABASE_UNAVAILABLE, "gone", repositories=[], notSynced=left
    )
    _before_sync_error(stopped)
    output.forget_consoles()
    assert capsys.readouterr().out.splitlines() == [
        "Stopped by the error below before any repository was synced; not synced:",
        "  billing, payments, web-app.",
    ]


def test_a_sync_that_waits_for_anothers_lock_says_so_on_stderr(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """A second `org sync` was silent for up to `--wait` seconds (120 by default)."""
    from teamlore.core.paths import resolve_home
    from teamlore.org.backends import open_store

    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or ""}
    store = open_store(database, resolve_home(home))
    try:
        with store.sync_lock(0, "build-7 pid 42"):
            waited = in_process("org", "sync", "--wait", "0.2", env=env)
            at_once = in_process("org", "sync", "--wait", "0", env=env)
    finally:
        store.close()
    assert waited.returncode == 1 and "LOCK_BUSY" in waited.stderr
    said = waited.stderr.splitlines()[0]
    assert said.startswith("teamlore org sync: waiting for build-7 pid 42, since ")
    assert said.endswith(" (another org sync), up to 0.2 s …")
    assert "waiting for" not in at_once.stderr  # it did not wait


def test_status_and_list_fit_80_columns_and_status_says_whether_pgvector_is_offered(
    home: Path, database: str | None, tmp_path: Path
) -> None:
    """A repository's row ran to 91 characters with its remote; the text never said pgvector."""
    name = "payments-reconciliation"
    clone = make_clone(tmp_path / "src", name, {"deploy": "Deploy with the script."})
    env = {"TEAMLORE_HOME": str(home), "TEAMLORE_ORG_DATABASE": database or "", "COLUMNS": "80"}
    assert in_process("org", "add", str(clone), env=env).returncode == 0
    assert in_process("org", "sync", "--lexical", env=env).returncode == 0
    for command in ("status", "list"):
        lines = in_process("org", command, env=env).stdout.splitlines()
        words = [line for line in lines if not line.startswith(f"    {tmp_path}")]  # a path: whole
        assert all(len(line) <= 80 for line in words), lines
        row = next(i for i, line in enumerate(lines) if line.startswith(name))
        assert lines[row + 1] == f"    remote github.com/acme/{name}"
    status = in_process("org", "status", env=env).stdout.splitlines()
    pgvector = [line for line in status if line.startswith("pgvector    ")]
    if database is None:
        assert pgvector == []  # the embedded index has no server to ask
    else:
        assert pgvector[0].endswith(" (vectors are ranked in the serving process)")
