"""Crash recovery from receipts and two Writers on one data root, with real processes.

A real Writer process is killed (SIGKILL via a failpoint) between publishing the documents and
committing the DB; the next Writer finishes the commit from the receipt without calling the model
again. The scripted model in writer_process.py stands in for a paid model's judgement, which
cannot exist in tests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from personal_world import ScriptedModel, configure, settings

from teamlore.core import errors
from teamlore.core.lock import file_lock
from teamlore.personal import api, documents
from teamlore.personal.runtime_db import open_runtime_db
from teamlore.personal.writer import run_writer, writer_lock_path

HERE = Path(__file__).resolve().parent
LAUNCH = ["global"]


def _writer(
    home: Path, calls: Path, mode: str, *extra: str, failpoint: str | None = None
) -> subprocess.Popen[str]:
    env = {**os.environ, "TEAMLORE_HOME": str(home), "PYTHONPATH": str(HERE)}
    env.pop("TEAMLORE_FAILPOINT", None)
    if failpoint:
        env["TEAMLORE_FAILPOINT"] = failpoint
    return subprocess.Popen(
        [sys.executable, str(HERE / "writer_process.py"), str(home), str(calls), mode, *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _relay(home: Path, sid: str, text: str) -> None:
    api.relay_user_turn(
        home,
        client_id="relay",
        submission_id=sid,
        text=text,
        context_id="global",
        launch_contexts=LAUNCH,
    )


def _rows(home: Path) -> list[tuple[int, str]]:
    conn = open_runtime_db(documents.personal_root(home))
    try:
        return [(r["id"], r["state"]) for r in conn.execute("SELECT id, state FROM observations")]
    finally:
        conn.close()


@pytest.mark.parametrize("point", ["personal.writer.after_files", "personal.commit.after_marker"])
def test_a_crash_between_document_write_and_db_commit_is_recovered_from_the_receipt(
    home: Path, tmp_path: Path, point: str
) -> None:
    configure(home, settings(), project=False)
    _relay(home, "u1", "I am an ecology student.")
    calls = tmp_path / "calls.log"

    crashed = _writer(home, calls, "retain", failpoint=point)
    crashed.communicate(timeout=60)
    assert crashed.returncode == -signal.SIGKILL
    root = documents.personal_root(home)
    if point == "personal.writer.after_files":
        assert "Ecology student." in (root / "profile.md").read_text()
    assert _rows(home) == [(1, "claimed")]  # the DB never saw the commit

    recovered = _writer(home, calls, "retain")
    _out, err = recovered.communicate(timeout=60)
    assert recovered.returncode == 0, err
    assert _rows(home) == [(1, "processed")]
    assert calls.read_text().count("\n") == 1  # no second model call
    assert (root / "profile.md").read_text().count("## Background") == 1
    assert len(list((root / "receipts").glob("*.json"))) == 1
    assert not list((root / "transactions").iterdir())
    status = api.submission_status(home, client_id="relay", submission_id="u1")
    assert status is not None and status["retainedIn"] == ["profile"]


def test_a_crash_before_the_commit_marker_leaves_the_old_documents(
    home: Path, tmp_path: Path
) -> None:
    configure(home, settings(), project=False)
    _relay(home, "u1", "I am an ecology student.")
    calls = tmp_path / "calls.log"
    crashed = _writer(home, calls, "retain", failpoint="personal.commit.before_marker")
    crashed.communicate(timeout=60)
    assert crashed.returncode == -signal.SIGKILL
    root = documents.personal_root(home)
    assert not (root / "profile.md").exists()
    # the claim's lease must expire before another Writer may take the batch again
    model = ScriptedModel()
    assert run_writer(home, model, settings(), force=True).outcome == "idle"
    assert not list((root / "transactions").iterdir())
    assert _rows(home) == [(1, "claimed")]


def test_two_writers_on_one_data_root_never_process_a_batch_twice(
    home: Path, tmp_path: Path
) -> None:
    configure(home, settings(), project=False)
    _relay(home, "u1", "I am an ecology student.")
    calls, gate = tmp_path / "calls.log", tmp_path / "gate"
    first = _writer(home, calls, "gate", str(gate))
    started = Path(str(gate) + ".started")
    deadline = time.monotonic() + 60
    while not started.exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)

    second = ScriptedModel()
    with pytest.raises(errors.TeamloreError) as refused:
        run_writer(home, second, settings(), force=True)
    assert refused.value.code == "LOCK_BUSY"
    assert second.requests == []

    gate.write_text("go")
    _out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert run_writer(home, second, settings(), force=True, wait_seconds=5).outcome == "idle"
    assert calls.read_text().count("\n") == 1
    assert _rows(home) == [(1, "processed")]


def test_a_waiting_writer_runs_after_the_lock_is_released(home: Path) -> None:
    configure(home, settings(), project=False)
    root = documents.personal_root(home)
    root.mkdir(parents=True, exist_ok=True)
    with file_lock(writer_lock_path(root)), pytest.raises(errors.TeamloreError) as busy:
        run_writer(home, ScriptedModel(), settings(), wait_seconds=0.1)
    assert busy.value.code == "LOCK_BUSY"
    assert run_writer(home, ScriptedModel(), settings(), wait_seconds=0.1).outcome == "idle"
