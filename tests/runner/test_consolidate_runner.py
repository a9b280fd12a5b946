"""`teamlore memory consolidate --runner` with a fake runner: synthesize → plan (nothing sent)
→ approval by digest → ConsolidationPatch@v1 staged as one consolidation candidate for review."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import pytest
from fake_runner import FakeRunner

from teamlore.contracts.consolidation import CONSOLIDATION_PATCH_FORMAT
from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.runner.prompt import parse_answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "consolidation"))
from consolidation_world import World as ConsolidationWorld


@pytest.fixture()
def world(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> ConsolidationWorld:
    made = ConsolidationWorld(tmp_path, home)
    fake = FakeRunner(tmp_path / "bin")
    fake.install("claude")
    for name, value in fake.env().items():
        monkeypatch.setenv(name, value)
    made.fake = fake  # type: ignore[attr-defined]
    return made


def test_consolidate_plans_then_runs_one_reviewable_candidate(world: ConsolidationWorld) -> None:
    fake: FakeRunner = world.fake  # type: ignore[attr-defined]
    world.op("memory.reverify_runner", {"runner": "claude"})
    probes = len(fake.sent())
    preview = world.op("memory.consolidate_preview", {"runner": "claude"})
    assert len(fake.sent()) == probes and preview["sent"] is False
    (plan,) = preview["plans"]
    assert plan["taskKind"] == "consolidation" and plan["disclosure"]["entries"] == 17
    assert preview["approve"] == f"teamlore memory consolidate --approve-plan {plan['planDigest']}"
    code, out = world.cli_json("memory", "consolidate", "--approve-plan", plan["planDigest"])
    assert code == 0, out
    (result,) = out["results"]
    assert result["taskKind"] == "consolidation" and result["quarantined"] == 1
    assert out["next"] == "teamlore memory review --kind consolidation"
    assert fake.sent()[-1]["sha256"] == plan["runnerInputDigest"]
    review = world.op("memory.review", {"kind": "consolidation"})
    assert review["count"] == 1
    # a second plan waits: the first consolidation awaits review
    again = world.op("memory.consolidate_preview", {"runner": "claude"})
    assert again["plans"] == [] and "awaiting review" in again["note"]


def test_a_runner_answer_echoing_the_binding_digest_is_staged(world: ConsolidationWorld) -> None:
    """The task's prompt says to echo bindingDigest; the runner's answer may do so."""
    fake: FakeRunner = world.fake  # type: ignore[attr-defined]
    world.op("memory.reverify_runner", {"runner": "claude"})
    fake.mode("binding-digest")
    (plan,) = world.op("memory.consolidate_preview", {"runner": "claude"})["plans"]
    done = world.op("memory.run_plan", {"approvePlan": plan["planDigest"]})
    (result,) = done["results"]
    assert result["quarantined"] == 1, result
    assert world.op("memory.review", {"kind": "consolidation"})["count"] == 1


def test_a_runner_answer_with_another_tasks_binding_digest_is_invalid() -> None:
    task = {"taskId": "consolidate-1", "binding": {"entryRevisions": []}}
    answer = {"format": CONSOLIDATION_PATCH_FORMAT, "taskId": "consolidate-1", "operations": []}
    for echoed, staged in ((digest(task["binding"]), task["binding"]), ("f" * 64, None)):
        text = orjson.dumps(answer | {"bindingDigest": echoed}).decode()
        if staged is None:
            with pytest.raises(errors.TeamloreError) as caught:
                parse_answer("consolidation", text, task)
            assert caught.value.code == "RUNNER_OUTPUT_INVALID"
            assert caught.value.details["reason"] == "foreign-binding"
        else:
            assert parse_answer("consolidation", text, task) == answer | {"binding": staged}


def test_a_runner_answer_with_both_binding_and_its_digest_is_invalid() -> None:
    """The prompt asks for one of them; the answer was refused with the stage's code."""
    task = {"taskId": "consolidate-1", "binding": {"entryRevisions": []}}
    answer = {"format": CONSOLIDATION_PATCH_FORMAT, "taskId": "consolidate-1", "operations": []}
    both = answer | {"binding": task["binding"], "bindingDigest": digest(task["binding"])}
    with pytest.raises(errors.TeamloreError) as caught:
        parse_answer("consolidation", orjson.dumps(both).decode(), task)
    assert caught.value.code == "RUNNER_OUTPUT_INVALID"
    assert caught.value.details["reason"] == "binding-and-digest"


def test_a_tree_that_changed_after_the_plan_voids_it(world: ConsolidationWorld) -> None:
    world.op("memory.reverify_runner", {"runner": "claude"})
    (plan,) = world.op("memory.consolidate_preview", {"runner": "claude"})["plans"]
    scene = world.root / ".threadshare/memory/scenes/team-memory-design.md"
    scene.write_text(scene.read_text().replace("avoid live traffic", "never tap live traffic"))
    code, out = world.cli_json("memory", "consolidate", "--approve-plan", plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH", out
    assert world.op("memory.review", {"kind": "consolidation"})["count"] == 0


def test_the_plan_text_view_prints_no_markup(world: ConsolidationWorld) -> None:
    """The text a person reads at 80 columns: plain words, never `[bold]`, `[/]` or `\\[`."""
    world.op("memory.reverify_runner", {"runner": "claude"})
    done = world.cli("memory", "consolidate", "--runner", "claude", env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    printed = done.stdout
    assert "To approve:" in printed and "Nothing was sent." in printed
    assert "teamlore memory consolidate --approve-plan" in " ".join(printed.split())
    for markup in ("[bold]", "[/]", "\\["):
        assert markup not in printed
