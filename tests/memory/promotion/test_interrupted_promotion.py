"""A promotion killed half way (SIGKILL at a failpoint, or Ctrl-C) leaves the memory tree holding
part of a plan, maybe with the temp file of the file being written: `memory lint` blocks and
`memory assemble` refuses, each naming the plan and the command that finishes it, until
`memory status` (or promote again) finishes it; Ctrl-C says so at once (memory/interrupted.py).
Real git worktree, real `teamlore` processes, real kills."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from test_apply import ENTRIES, World, cli_promote, entry_bytes

from support import git
from teamlore.core import safe_write


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


def three_entries(world: World) -> tuple[str, dict[str, bytes]]:
    files = {
        f"{ENTRIES}/release-smoke-suite.md": entry_bytes("release-smoke-suite"),
        f"{ENTRIES}/tag-after-ci.md": entry_bytes("tag-after-ci", "Tag only after CI is green."),
        f"{ENTRIES}/sign-the-tag.md": entry_bytes("sign-the-tag", "Sign every release tag."),
    }
    return world.plan(dict(files), candidates=("cand-1", "cand-2", "cand-3")), files


def temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(safe_write.TEMP_PREFIX))


def teamlore(*args: str, cwd: Path, env: dict[str, str] | None = None) -> CompletedProcess[str]:
    """A command after the kill (lint, assemble, status): the CLI's app run in this process
    (typer's CliRunner) on what the killed `teamlore` process left on disk, for the ~0.4 s a
    process spends starting; the promotions themselves run and die as processes."""
    from typer.testing import CliRunner

    from teamlore.cli.main import app

    env = {"TEAMLORE_HOME": os.environ["TEAMLORE_HOME"], **(env or {})}
    with contextlib.chdir(cwd):
        done = CliRunner().invoke(app, list(args), env=env)
    return CompletedProcess(list(args), done.exit_code, done.stdout, done.stderr)


def lint(world: World) -> tuple[int, dict]:
    done = teamlore("memory", "lint", "--format", "json", cwd=world.root)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize(
    ("point", "written", "temp_left"),
    [("write.temp-synced", 0, True), ("promotion.after-mark", 1, False)],
)
def test_lint_blocks_and_assemble_refuses_until_the_killed_promotion_is_finished(
    world: World, point: str, written: int, temp_left: bool
) -> None:
    plan_id, files = three_entries(world)
    killed = cli_promote(world, plan_id, point)
    assert killed.returncode == -9, killed.stdout + killed.stderr
    assert world.status(plan_id) == "applying"
    assert bool(temps(world.root / ENTRIES)) is temp_left
    untracked = git(world.root, "status", "--porcelain", "--untracked-files=all")
    assert (".teamlore-write-" in untracked) is temp_left

    code, report = lint(world)

    assert code != 0 and report["blocked"] is True, report
    [finding] = [f for f in report["findings"] if f["rule"] == "promotion.interrupted"]
    assert finding["severity"] == "block"
    said = (
        f"after {written} of its 3 files: the memory tree holds only part of it"
        if written
        else "before it wrote any of its 3 files: the memory tree holds none of it yet"
    )
    assert f"promotion {plan_id} was interrupted {said}" in finding["message"]
    assert f"`teamlore memory promote --plan {plan_id}`" in finding["message"]
    text = teamlore("memory", "lint", cwd=world.root)
    assert text.returncode != 0 and "promotion.interrupted" in text.stdout + text.stderr

    for args in (("-p", "claude"), ("-p", "codex", "--check")):
        refused = teamlore("memory", "assemble", *args, "--format", "json", cwd=world.root)
        assert refused.returncode != 0, refused.stdout
        error = json.loads(refused.stdout)["error"]
        assert error["code"] == "PLAN_STATE_INVALID"
        assert f"teamlore memory promote --plan {plan_id}" in error["message"]
        assert error["details"]["planId"] == plan_id
    assert not (world.root / "CLAUDE.md").exists()

    finished = teamlore("memory", "status", cwd=world.root)
    assert finished.returncode == 0, finished.stderr
    assert f"Promotion    {plan_id} interrupted; finished now:" in finished.stdout
    assert world.status(plan_id) == "applied"
    assert temps(world.root / ENTRIES) == []
    for path, data in files.items():
        assert (world.root / path).read_bytes() == data
    code, report = lint(world)
    assert code == 0 and report["blocked"] is False, report
    assembled = teamlore("memory", "assemble", "-p", "claude", cwd=world.root)
    assert assembled.returncode == 0, assembled.stdout + assembled.stderr


def test_a_lint_without_a_state_dir_says_nothing_of_promotions(
    world: World, tmp_path: Path
) -> None:
    """CI, a fresh clone: no journal, nothing to finish."""
    plan_id, _ = three_entries(world)
    assert cli_promote(world, plan_id, "promotion.after-mark").returncode == -9
    elsewhere = {"TEAMLORE_HOME": str(tmp_path / "another-state")}

    done = teamlore("memory", "lint", "--format", "json", cwd=world.root, env=elsewhere)

    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["blocked"] is False
    assert not (tmp_path / "another-state" / "memory-state.sqlite3").exists()


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_ctrl_c_during_promote_says_the_plan_is_half_applied_and_how_to_finish_it(
    world: World, fmt: str
) -> None:
    plan_id, files = three_entries(world)
    flag = world.root.parent / "paused"
    promote = subprocess.Popen(
        ["teamlore", "memory", "promote", "--plan", plan_id, "--format", fmt],
        cwd=world.root,
        env={**os.environ, "TEAMLORE_PAUSEPOINT": f"promotion.after-mark={flag}"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():  # the first file is written and marked
            assert promote.poll() is None, promote.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.01)
        promote.send_signal(signal.SIGINT)
        out, err = promote.communicate(timeout=60)
    finally:
        flag.unlink(missing_ok=True)
        if promote.poll() is None:
            promote.kill()

    assert promote.returncode == 130, out + err
    assert out == ""
    said = " ".join(err.split())
    assert f"promotion {plan_id} was interrupted after 1 of its 3 files" in said, err
    assert f"teamlore memory promote --plan {plan_id}" in said
    assert world.status(plan_id) == "applying"

    again = cli_promote(world, plan_id)
    assert again.returncode == 0, again.stdout + again.stderr
    for path, data in files.items():
        assert (world.root / path).read_bytes() == data
