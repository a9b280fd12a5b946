"""`teamlore ui` and `teamlore demo --ui`: a refused folder exits 1 with its code; the demo
leaves its candidates in quarantine and serves them on a one-time link until interrupted."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx2 as httpx

from support import git, teamlore_cli


def test_ui_refuses_a_folder_that_is_not_a_registered_repository(
    tmp_path: Path, home: Path
) -> None:
    git(tmp_path, "init", "-q")
    proc = teamlore_cli("ui", "--no-open", "--repository", str(tmp_path))
    assert proc.returncode == 1
    assert re.search(r"error (REPOSITORY_NOT_REGISTERED|OWNER_NOT_FOUND)", proc.stderr)


def test_a_port_out_of_range_is_a_usage_error_not_a_traceback(home: Path) -> None:
    for port in ("-1", "65536", "9" * 20):
        proc = teamlore_cli("ui", "--no-open", "--port", port)
        assert proc.returncode == 2, proc.stderr
        assert "--port" in proc.stderr and "Traceback" not in proc.stderr


def test_ui_is_in_the_help(tmp_path: Path) -> None:
    proc = teamlore_cli("ui", "--help")
    assert proc.returncode == 0
    assert "--port" in proc.stdout and "--no-open" in proc.stdout


def test_demo_stops_before_confirmation_when_asked(tmp_path: Path) -> None:
    proc = teamlore_cli("demo", "--dir", str(tmp_path / "d"), "--format", "json")
    assert proc.returncode == 0  # without --ui: the whole chain, as before
    assert json.loads(proc.stdout)["steps"][-1]["step"] == "git-status"


def test_demo_ui_serves_the_review_on_a_one_time_link(tmp_path: Path) -> None:
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe else [sys.executable, "-m", "teamlore.cli.main"]
    server = subprocess.Popen(
        [*cmd, "demo", "--ui", "--no-open", "--dir", str(tmp_path / "d")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "300"},
    )
    try:
        assert server.stdout is not None
        url = None
        for line in server.stdout:
            found = re.search(r"http://127\.0\.0\.1:\d+/queue\?token=\S+", line)
            if found:
                url = found.group(0)
                break
        assert url, server.stderr.read() if server.stderr else ""
        with httpx.Client(follow_redirects=True, timeout=30) as client:
            queue = client.get(url)
            assert queue.status_code == 200
            assert queue.text.count('<tr class="row') == 2
            # the link logs in once: opened again it only serves the browser that holds the
            # session (docs/ui.md, "Security")
            assert client.get(url).status_code == 200
            assert httpx.get(url, follow_redirects=False).status_code == 401
        entries = tmp_path / "d" / "acme-billing" / ".threadshare" / "memory" / "entries"
        assert list(entries.glob("*.md")) == []  # nothing promoted: the person decides
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=20)
