"""A model answer slower than the job lease is still written: the Writer renews the lease while
the call is in flight. A Writer killed mid-call stops renewing, so its job is taken over once its
lease ends (a crashed holder never keeps a job); until then `status` says its lease ended,
not "running"."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from personal_ops_world import KEY_ENV, ModelServer, retain, write_config

from support import in_process
from teamlore.personal import documents
from teamlore.personal.runtime_db import open_runtime_db

ENV = {KEY_ENV: "sk-scripted"}
LEASE = 1.0


def _lease_ends(home: Path) -> float:
    conn = open_runtime_db(documents.personal_root(home))
    try:
        return float(conn.execute("SELECT max(lease_expires) FROM jobs").fetchone()[0])
    finally:
        conn.close()


def test_an_answer_slower_than_the_lease_is_written(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url, lease_seconds=LEASE)
    (tmp_path / "n.md").write_text("# Tools\n\nI use neovim.\n", encoding="utf-8")
    model.script("document_import", retain("preferences", "Editor", "Uses neovim."))
    model.delay = 2.5 * LEASE

    done = in_process("personal", "import", "n.md", cwd=tmp_path, env=ENV)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "STALE_LEASE" not in done.stdout + done.stderr
    assert "Uses neovim." in (home / "personal" / "preferences.md").read_text()
    assert len(model.requests) == 1


def test_a_writer_killed_mid_call_loses_its_job_to_the_next_flush(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url, lease_seconds=LEASE)
    (tmp_path / "n.md").write_text("# Tools\n\nI use neovim.\n", encoding="utf-8")
    queued = in_process("personal", "import", "n.md", "--no-wait", cwd=tmp_path, env=ENV)
    assert queued.returncode in (0, 1), queued.stdout + queued.stderr
    answer = retain("preferences", "Editor", "Uses neovim.")
    model.script("document_import", answer, answer)
    model.delay = 60.0  # the first Writer is killed while it waits
    env = {**os.environ, **ENV, "TEAMLORE_HOME": str(home)}
    holder = subprocess.Popen(
        [str(Path(sys.executable).parent / "teamlore"), "personal", "flush"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not model.requests:
            assert holder.poll() is None, "the Writer ended before it asked the model"
            time.sleep(0.05)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    model.delay = 0.0

    while time.time() <= _lease_ends(home):  # the killed holder renews it no more
        time.sleep(0.1)
    # a lease in the past is not "running": its holder is gone, and the next flush takes it over
    status = in_process("personal", "status", env=ENV).stdout
    (_, block) = status.split("\njob ")  # one job, wrapped at 80 columns under its id
    line = " ".join(f"job {block}".split())
    assert " not held (" in line and "; the next flush takes it over)" in line, line
    assert "running" not in line and "lease ends" not in line
    refused = in_process("personal", "retry", line.split()[1], env=ENV)
    assert refused.returncode == 1 and "lease ended at" in refused.stderr
    assert "is running until" not in refused.stderr

    flushed = in_process("personal", "flush", env=ENV)

    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    assert "Uses neovim." in (home / "personal" / "preferences.md").read_text()
    assert len(model.requests) == 2
