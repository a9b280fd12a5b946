"""`memory status` finishing a promotion a kill interrupted changes the working tree: it says
which files it wrote and the step after (`git status`, commit) as `memory promote` says them,
in lines that fit 80 columns. Real git worktree, real `teamlore` processes, a real SIGKILL."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from test_apply import A, B, World, cli_promote, two_new_entries

from support import teamlore_cli
from teamlore.ops.memory.promote import GIT_NOTE


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


def killed_mid_promotion(world: World) -> str:
    plan_id, _files = two_new_entries(world)
    assert cli_promote(world, plan_id, "promotion.after-mark").returncode == -9
    assert world.status(plan_id) == "applying"
    return plan_id


def test_status_lists_the_files_it_wrote_and_the_next_step_as_promote_does(world: World) -> None:
    plan_id = killed_mid_promotion(world)
    env = {"COLUMNS": "80"}

    shown = teamlore_cli("memory", "status", cwd=world.root, env=env)

    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    head = f"Promotion    {plan_id} interrupted; finished now:"
    assert head in lines
    after = lines[lines.index(head) + 1 :]
    # the first file was written before the kill, the second by status
    assert after[:2] == [f"  {A}: applied earlier", f"  {B}: written"]
    # promote's own rendering of the same plan (now applied): its files and the step after
    promoted = teamlore_cli("memory", "promote", "--plan", plan_id, cwd=world.root, env=env)
    assert promoted.returncode == 0, promoted.stderr
    told = promoted.stdout.splitlines()[1:]  # under `Plan … already applied.`
    step = told[told.index(next(line for line in told if line.startswith("working tree"))) :]
    assert "`git status`" in " ".join(step) and "commit" in step[-1]
    at = after.index(step[0])
    assert after[2:at] == ["Promoted candidates: cand-1, cand-2"]
    assert after[at : at + len(step)] == step


def test_status_answers_a_finished_plan_as_promote_does_in_json(world: World) -> None:
    plan_id = killed_mid_promotion(world)

    shown = teamlore_cli("memory", "status", "--format", "json", cwd=world.root)

    assert shown.returncode == 0, shown.stderr
    (resumed,) = orjson.loads(shown.stdout)["promotionRecovery"]["resumed"]
    assert (resumed["planId"], resumed["status"], resumed["resumed"]) == (plan_id, "applied", True)
    assert [(f["targetPath"], f["outcome"]) for f in resumed["files"]] == [
        (A, "already-applied"),
        (B, "written"),
    ]
    assert resumed["git"] == GIT_NOTE and resumed["ignoredByGit"] == []
