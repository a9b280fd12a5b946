"""`safe_write.remove_dead_temps` (what `memory assemble` runs under its lock) removes only the
temp files of killed writers: a live writer of another command whose temp it took in the instant
between the temp's creation and the writer's flock on it still installs its file (it sees the
name gone and writes a new temp), never fails on a temp that vanished. Real processes: the
writer stands still at that instant (TEAMLORE_PAUSEPOINT) while the sweep runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from teamlore.core import safe_write

WRITER = """
import sys
from pathlib import Path
from teamlore.core import safe_write
safe_write.write_file(Path(sys.argv[1]), "CLAUDE.md", b"written by the live writer\\n")
"""


def test_a_temp_taken_before_its_writer_locked_it_does_not_fail_the_writer(tmp_path: Path) -> None:
    root = tmp_path / "worktree"
    root.mkdir()
    flag = tmp_path / "paused"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(root)],
        env={**os.environ, "TEAMLORE_PAUSEPOINT": f"write.temp-created={flag}"},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not flag.exists():
            assert writer.poll() is None and time.monotonic() < deadline, writer.stderr
            time.sleep(0.01)
        temps = [p.name for p in root.iterdir() if p.name.startswith(safe_write.TEMP_PREFIX)]
        assert len(temps) == 1, temps
        # the sweep of a command that started after the temp was made: it is not locked yet
        swept = safe_write.remove_dead_temps(root, "", older_than=time.time() + 1)
        assert swept == temps
    finally:
        deadline = time.monotonic() + 60
        while writer.poll() is None and time.monotonic() < deadline:
            flag.unlink(missing_ok=True)  # each temp the writer makes stops it there
            time.sleep(0.01)
        _, stderr = writer.communicate(timeout=60)
    assert writer.returncode == 0, stderr
    assert (root / "CLAUDE.md").read_bytes() == b"written by the live writer\n"
    assert [p.name for p in root.iterdir()] == ["CLAUDE.md"]
