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
from pathlib import Path

from support import entry_file, in_private_namespace, teamlore_cli


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
    found, status, edit, stale, stale_status, stale_text, write = in_private_namespace(
        tmp_path,
        [
            ["sh", step]
            for step in [
                f"mount --bind {home} {home} && mount -o remount,bind,ro {home} {home}",
                _teamlore(repo, home, "memory", "search", "tag", "--lexical", "--format", "json"),
                _teamlore(repo, home, "memory", "status", "--format", "json"),
                f"cat > {entries / 'sign-the-tag.md'} <<'EOF'\n{added}EOF",
                _teamlore(repo, home, "memory", "search", "tag", "--lexical", "--format", "json"),
                _teamlore(repo, home, "memory", "status", "--format", "json"),
                _teamlore(repo, home, "memory", "search", "tag", "--lexical"),
                _teamlore(repo, home, "sync", "--repository", ".", "--format", "json"),
            ]
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
