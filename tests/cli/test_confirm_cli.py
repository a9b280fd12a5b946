"""`teamlore memory confirm` then `promote`: a person's path from quarantine to the tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support import draft_batch, release_repository, store_all, teamlore_cli
from teamlore.ops.registry import OpContext, load_operations


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


def op(name: str, repo: Path, payload: dict[str, Any]) -> dict[str, Any]:
    return load_operations().get(name).run(OpContext(cwd=repo), payload)


@pytest.fixture()
def quarantined(repo: Path) -> Path:
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    staged = op("memory.stage", repo, draft_batch(task["sources"][0]))
    op("memory.stage", repo, store_all(staged["adjudicationTask"]))
    return repo


def test_confirm_needs_a_terminal_or_yes(quarantined: Path) -> None:
    proc = teamlore_cli("memory", "confirm", "--format", "json", cwd=quarantined)
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["code"] == "USAGE"


def test_confirm_then_promote_writes_the_entry(quarantined: Path) -> None:
    proc = teamlore_cli("memory", "confirm", "--yes", "--format", "json", cwd=quarantined)
    assert proc.returncode == 0, proc.stdout
    plan = json.loads(proc.stdout)
    promoted = teamlore_cli(
        "memory", "promote", "--plan", plan["planId"], "--format", "json", cwd=quarantined
    )
    assert promoted.returncode == 0, promoted.stdout
    files = json.loads(promoted.stdout)["files"]
    assert len(files) == 1 and (quarantined / files[0]["targetPath"]).is_file()
    found = json.loads(
        teamlore_cli("memory", "search", "tag prefix", "--format", "json", cwd=quarantined).stdout
    )
    assert [r["path"] for r in found["results"]] == [files[0]["targetPath"]]
