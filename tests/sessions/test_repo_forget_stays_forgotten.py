"""`teamlore repo forget` is for good: a sync, which registers again the worktrees config.toml
lists (a rebuilt index starts empty), must not bring back one the user forgot, whether the
forget was killed half way or the worktree was only left in config.toml (its folder was gone
when the index was rebuilt). Real CLI subprocesses, real git repositories, real SQLite."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from records import codex_meta, codex_user_message, write_jsonl
from test_storage_failures_walk import git_project

from support import teamlore_cli

AT = "2026-01-01T00:00:01Z"


def _codex(folder: Path, cwd: Path) -> Path:
    write_jsonl(
        folder / "rollout-0.jsonl",
        [
            codex_meta("019a0000-0000-7000-8000-000000000000", cwd=str(cwd)),
            codex_user_message("hi", AT),
        ],
    )
    return folder


def _json(home: Path, *args: str, **extra: str) -> tuple[int, dict[str, Any]]:
    done = teamlore_cli(*args, "--format", "json", env={"TEAMLORE_HOME": str(home), **extra})
    return done.returncode, json.loads(done.stdout or "{}")


def _listed(home: Path) -> list[str]:
    rc, out = _json(home, "repo", "list")
    assert rc == 0, out
    return [r["name"] for r in out["repositories"]]


def test_a_forget_killed_half_way_is_not_undone_by_the_next_sync(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", git_project(tmp_path)
    codex = _codex(tmp_path / "codex", proj)
    rc, out = _json(home, "sync", "--source", f"codex={codex}", "--repository", str(proj))
    assert rc == 0 and _listed(home) == ["proj"], out

    killed = teamlore_cli(
        "repo",
        "forget",
        str(proj),
        env={"TEAMLORE_HOME": str(home), "TEAMLORE_FAILPOINT": "repo.forget.index-forgotten"},
    )
    assert killed.returncode == -9, (killed.stdout, killed.stderr)

    rc, out = _json(home, "sync", "--source", f"codex={codex}")
    assert rc == 0, out
    assert out["restoredRepositories"] == [] and _listed(home) == [], out
    assert str(proj) not in (home / "config.toml").read_text(encoding="utf-8")


def test_a_worktree_only_config_toml_still_lists_can_be_forgotten(tmp_path: Path) -> None:
    """Its folder was away when the index was rebuilt: config.toml alone keeps it, and `repo
    forget` drops it there, so the folder coming back does not register it again."""
    home, proj = tmp_path / "home", git_project(tmp_path)
    codex = _codex(tmp_path / "codex", proj)
    rc, out = _json(home, "sync", "--source", f"codex={codex}", "--repository", str(proj))
    assert rc == 0, out
    away = tmp_path / "away"
    os.rename(proj, away)
    os.truncate(home / "index.sqlite3", 50000)
    rc, out = _json(home, "sync", "--source", f"codex={codex}", "--rebuild")
    assert rc == 0 and out["restoredRepositories"] == [] and _listed(home) == [], out

    rc, out = _json(home, "repo", "forget", str(proj))
    assert rc == 0, out
    assert out["forgotten"]["name"] == "proj" and out["sessionsKept"] == 0, out

    os.rename(away, proj)
    rc, out = _json(home, "sync", "--source", f"codex={codex}")
    assert rc == 0 and out["restoredRepositories"] == [] and _listed(home) == [], out
