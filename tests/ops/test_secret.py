"""`teamlore sync --regenerate-secret`: a new origin secret, and everything keyed by the old one
re-keyed under it (config, index, team-memory state, personal project memory), staged then
switched; a kill before the switch leaves the old state as it was, a kill after it is rolled
forward by the next process (docs/sessions.md, "A new origin secret")."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from support import draft_batch, store_all, teamlore_cli
from teamlore.core import keys
from teamlore.core.paths import SWITCH_DIR

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
from runner_world import World, make_world

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW

NOTE = "# Project\n\n## Release\nTags need a v prefix before the release script runs.\n"


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    made = make_world(tmp_path, home)
    config = made.home / "config.toml"
    config.write_text(
        config.read_text() + '\n[personal]\nallowed_scopes = ["global", "project:*"]\n'
    )
    project = made.home / "personal" / "projects"
    project.mkdir(parents=True, mode=0o700)
    (project / f"{_keys(made)['repositoryKey']}.md").write_text(NOTE)
    return made


def _keys(world: World) -> dict[str, str]:
    code, listed = world.op("repo.list", {})
    assert code == 0, listed
    (worktree,) = listed["repositories"]
    return {"repositoryKey": worktree["repositoryKey"], "worktreeKey": worktree["worktreeKey"]}


def _session_keys(world: World) -> list[str]:
    code, listed = world.op("sessions.list", {})
    assert code == 0, listed
    return sorted(s["sessionKey"] for s in listed["sessions"])


def _project_memory(world: World) -> str:
    code, read = world.op("personal.show", {"workspace": str(world.repo)})
    assert code == 0, read
    return json.dumps(read)


def _snapshot(home: Path) -> dict[str, str]:
    """Digest of every file of the state dir except locks (what "as it was" means)."""
    return {
        str(p.relative_to(home)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.name.endswith((".lock", "-shm", "-wal"))
    }


def _regenerate(world: World, failpoint: str | None = None) -> tuple[int, dict[str, Any]]:
    env = {"TEAMLORE_FAILPOINT": failpoint} if failpoint else {}
    return world.cli("sync", "--regenerate-secret", env=env)


def test_every_key_moves_to_the_new_secret_and_project_memory_is_still_found(
    world: World,
) -> None:
    old_keys, old_sessions = _keys(world), _session_keys(world)
    assert "v prefix" in _project_memory(world)
    code, report = _regenerate(world)
    assert code == 0, report
    new_keys, new_sessions = _keys(world), _session_keys(world)
    assert new_keys["repositoryKey"] != old_keys["repositoryKey"]
    assert new_keys["worktreeKey"] != old_keys["worktreeKey"]
    assert len(new_sessions) == len(old_sessions) and not set(new_sessions) & set(old_sessions)
    # the personal project memory is found under the new key, and only there
    assert "v prefix" in _project_memory(world)
    projects = world.home / "personal" / "projects"
    assert [p.name for p in projects.iterdir()] == [f"{new_keys['repositoryKey']}.md"]
    assert (projects / f"{new_keys['repositoryKey']}.md").read_text() == NOTE
    # config.toml and the index agree, and keys are what the new secret derives
    config = (world.home / "config.toml").read_text()
    assert new_keys["repositoryKey"] in config and old_keys["repositoryKey"] not in config
    assert keys.worktree_key(str(world.repo.resolve()), world.home) == new_keys["worktreeKey"]
    # team memory still works end to end: recall from the re-keyed index and state
    code, recalled = world.cli(
        "memory", "recall", "--since", WINDOW["since"], "--until", WINDOW["until"]
    )
    assert code == 0 and recalled["owner"]["repositoryKey"] == new_keys["repositoryKey"]
    assert recalled["selection"]["sessions"][0]["sessionKey"] in new_sessions
    migrated = {item["what"]: item["changed"] for item in report["migrated"]}
    assert migrated["personal"] == 1 and migrated["index.sqlite3"] > 0
    assert migrated["config.toml"] == 2  # the repository and the worktree key
    assert not (world.home / SWITCH_DIR).exists()
    assert (world.home / "secret").stat().st_mode & 0o777 == 0o600


def test_extraction_state_carries_over_so_nothing_is_extracted_twice(world: World) -> None:
    """The seed migrates chunk state by chunkDigest and sends failures back to pending; here
    the chunk rows keep their state under the new session key."""
    window = {"since": WINDOW["since"], "until": WINDOW["until"]}
    code, recalled = world.op("memory.recall", window)
    assert code == 0, recalled
    code, staged = world.op("memory.stage", draft_batch(recalled["sources"][0]))
    assert code == 0, staged
    code, stored = world.op("memory.stage", store_all(staged["adjudicationTask"]))
    assert code == 0, stored
    code, before = world.op("memory.recall", window)
    assert before["sources"] == [] and before["coverage"]["alreadyExtractedTurns"] > 0
    code, report = _regenerate(world)
    assert code == 0 and not report["notMigrated"], report
    code, after = world.op("memory.recall", window)
    assert after["sources"] == [] and after["coverage"] == before["coverage"]
    assert after["owner"]["repositoryKey"] != before["owner"]["repositoryKey"]
    code, status = world.op("memory.status", {})
    assert code == 0 and json.dumps(status).count(before["owner"]["repositoryKey"]) == 0


def test_the_text_view_says_what_was_migrated_and_what_was_not(world: World) -> None:
    plans = world.home / "runner-plans"
    plans.mkdir(mode=0o700)
    (plans / ("ab" * 32 + ".json")).write_text("{}")
    (world.home / "personal" / "projects" / ("cd" * 32 + ".md")).write_text(NOTE)
    proc = teamlore_cli("sync", "--regenerate-secret", cwd=world.repo, env=world.env)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "New origin secret: 3 keys re-derived under it."
    assert "  re-keyed personal: 1 change" in lines
    left = lines.index("  left as it was: personal project documents (1)")
    assert "no longer registered" in lines[left + 1]
    assert "  left as it was: runner plans (1)" in lines
    assert all(len(line) <= 80 for line in lines)
    assert str(world.home) not in proc.stdout


def test_a_kill_before_the_switch_leaves_the_old_secret_and_all_state_usable(
    world: World,
) -> None:
    before_keys, before_files = _keys(world), _snapshot(world.home)
    code, _ = _regenerate(world, failpoint="secret.staged")
    assert code != 0  # SIGKILL: the staging was complete, the switch never happened
    after = {k: v for k, v in _snapshot(world.home).items() if not k.startswith(SWITCH_DIR)}
    assert after == before_files
    assert _keys(world) == before_keys and "v prefix" in _project_memory(world)
    # the next regeneration discards the abandoned staging and succeeds
    code, report = _regenerate(world)
    assert code == 0, report
    assert _keys(world) != before_keys and "v prefix" in _project_memory(world)


@pytest.mark.parametrize("point", ["secret.after-switch-file", "secret.mid-switch"])
def test_a_kill_after_the_switch_is_rolled_forward_by_the_next_process(
    world: World, point: str
) -> None:
    before_keys = _keys(world)
    code, _ = _regenerate(world, failpoint=point)
    assert code != 0
    after_keys = _keys(world)  # this process finishes the switch before it reads any key
    assert after_keys != before_keys
    assert not (world.home / SWITCH_DIR).exists()
    assert "v prefix" in _project_memory(world)
    assert (world.home / "personal" / "projects" / f"{after_keys['repositoryKey']}.md").exists()


def test_a_write_during_the_staging_refuses_the_switch_and_keeps_the_write(
    world: World, tmp_path: Path
) -> None:
    """A hand edit (or another process's write) while the copies are made would be lost by
    the switch: the regeneration refuses instead, and nothing changes."""
    before_keys = _keys(world)
    flag = tmp_path / "paused"
    env = {**world.env, "TEAMLORE_PAUSEPOINT": f"secret.staged={flag}"}
    args = [sys.executable, "-m", "teamlore.cli.main", "sync", "--regenerate-secret"]
    proc = subprocess.Popen(
        [*args, "--format", "json"],
        cwd=world.repo,
        env={**os.environ, "TEAMLORE_HOME": str(world.home), **env},
        stdout=subprocess.PIPE,
        text=True,
    )
    for _ in range(3000):
        if flag.exists() or proc.poll() is not None:
            break
        time.sleep(0.01)
    assert flag.exists(), "the regeneration never reached its pause point"
    document = world.home / "personal" / "projects" / f"{before_keys['repositoryKey']}.md"
    document.write_text(NOTE + "\n## Later\nAdded by hand meanwhile.\n")
    flag.unlink()
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1 and json.loads(out)["error"]["code"] == "LOCK_BUSY"
    assert _keys(world) == before_keys and "Added by hand" in document.read_text()
    assert not (world.home / SWITCH_DIR).exists()


def test_it_takes_no_other_sync_option(world: World) -> None:
    before = _snapshot(world.home)
    code, out = world.cli("sync", "--regenerate-secret", "--rebuild")
    assert code == 2 and out["error"]["code"] == "USAGE"
    assert _snapshot(world.home) == before
