"""A read-only state dir serves the read-only memory commands, as a full disk does.

`memory search` and `memory status` (and their MCP tools, annotated readOnlyHint) answer from
the state as it is; when the memory tree has changed since the projection was last synced they
say so (`stale`); writing commands still say STATE_READ_ONLY. The read-only state dir is a real
read-only bind mount in a private user+mount namespace (`unshare -rm`), skipped with the reason
where the kernel does not allow one (as in tests/sessions/test_index_health.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from support import entry_file, teamlore_cli

_DRIVER = textwrap.dedent(
    """
    import json, subprocess, sys
    out = []
    for step in json.loads(sys.argv[1]):
        done = subprocess.run(step, shell=True, capture_output=True, text=True)
        out.append({"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-500:]})
    print(json.dumps(out))
    """
)


def _in_namespace(tmp_path: Path, steps: list[str]) -> list[dict[str, Any]]:
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
    driver.write_text(_DRIVER)
    done = subprocess.run(
        ["unshare", "-rm", sys.executable, str(driver), json.dumps(steps)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def _teamlore(repo: Path, home: Path, *args: str) -> str:
    exe = shutil.which("teamlore", path=str(Path(sys.executable).parent))
    cmd = exe or f"{sys.executable} -m teamlore.cli.main"
    return f"cd {repo} && TEAMLORE_HOME={home} {cmd} {' '.join(args)}"


def test_memory_search_and_status_answer_from_a_read_only_state_dir(tmp_path: Path) -> None:
    """Walk defect: both refused with STATE_READ_ONLY (`… needs to write to it`), while on a
    full disk they answered."""
    home, repo = tmp_path / "state", tmp_path / "repo"
    env = {"TEAMLORE_HOME": str(home)}
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert teamlore_cli("memory", "init", cwd=repo, env=env).returncode == 0
    entries = repo / ".threadshare/memory/entries"
    (entries / "tag-before-push.md").write_text(
        entry_file("tag-before-push", "Tag the release before pushing it.")
    )
    synced = teamlore_cli("memory", "search", "tag", "--lexical", cwd=repo, env=env)
    assert synced.returncode == 0, synced.stderr

    added = entry_file("sign-the-tag", "Sign the release tag with the team key.")
    found, status, edit, stale, stale_status, stale_text, write = _in_namespace(
        tmp_path,
        [
            f"mount --bind {home} {home} && mount -o remount,bind,ro {home} {home}",
            _teamlore(repo, home, "memory", "search", "tag", "--lexical", "--format", "json"),
            _teamlore(repo, home, "memory", "status", "--format", "json"),
            f"cat > {entries / 'sign-the-tag.md'} <<'EOF'\n{added}EOF",
            _teamlore(repo, home, "memory", "search", "tag", "--lexical", "--format", "json"),
            _teamlore(repo, home, "memory", "status", "--format", "json"),
            _teamlore(repo, home, "memory", "search", "tag", "--lexical"),
            _teamlore(repo, home, "sync", "--repository", ".", "--format", "json"),
        ],
    )[1:]
    # the projection is that of the tree: the answer, and nothing to warn about
    assert found["rc"] == 0, found
    assert [r["id"] for r in json.loads(found["stdout"])["results"]] == ["tag-before-push"]
    assert "stale" not in json.loads(found["stdout"])
    assert status["rc"] == 0, status
    assert json.loads(status["stdout"])["entries"]["approved"] == 1
    assert "stale" not in json.loads(status["stdout"])

    # the tree changed since: the memory as last synced, and why the new entry is not in it
    assert edit["rc"] == 0, edit
    assert stale["rc"] == 0, stale
    result = json.loads(stale["stdout"])
    assert [r["id"] for r in result["results"]] == ["tag-before-push"]
    assert result["stale"].startswith("the state directory is read-only: this is the memory as")
    assert stale_status["rc"] == 0, stale_status
    assert json.loads(stale_status["stdout"])["stale"] == result["stale"]
    assert (
        stale_text["rc"] == 0
        and "Not synced: the state directory is read-only" in (stale_text["stdout"])
    )

    # a command that writes the state is still refused
    assert write["rc"] == 1, write
    assert json.loads(write["stdout"])["error"]["code"] == "STATE_READ_ONLY"
