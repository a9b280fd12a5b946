"""A plan prepared and not promoted, then a `git pull` of a teammate's commit that writes one of
the plan's target files: a file at the path the plan creates, or a new version of a file it
rewrites. `memory status` listed the plan as `prepared, not yet promoted` with its promote
command (and the review page offered Promote) until `memory promote` refused it with
PROMOTION_TARGET_DRIFT; both now say at once that it is void, with promote's words.

Two clones of one team repository (a bare repository stands for the shared remote), the git
binary and a real `git pull`: bo's clone is the release world of `test_review.Flow` (a new
entry) or of `merge_world` (a merge rewriting two approved entries)."""

from __future__ import annotations

from pathlib import Path

from consumed_world import prepare_plan, quarantined_release_candidate
from merge_world import REWRITTEN, merging_repository
from test_review import request_for

from support import git, teamlore_cli
from teamlore.ops.memory.promote import current_plan_states
from teamlore.ops.registry import OpContext, run_operation


def share(bo: Path, remote: Path) -> Path:
    """bo's repository pushed to a new bare `remote`, and a teammate's clone of it."""
    git(remote.parent, "init", "-q", "--bare", "-b", "main", str(remote))
    git(bo, "remote", "add", "team", str(remote))
    git(bo, "push", "-q", "team", "main")
    mate = remote.parent / "mate"
    git(remote.parent, "clone", "-q", str(remote), str(mate))
    return mate


def teammate_commits(mate: Path, target: str, text: str) -> None:
    (mate / target).parent.mkdir(parents=True, exist_ok=True)
    (mate / target).write_text(text)
    git(mate, "add", target)
    git(mate, "commit", "-q", "-m", "memory: a teammate's entry")
    git(mate, "push", "-q", "origin", "main")


def test_status_says_a_plan_is_void_once_a_pull_added_a_file_where_it_creates_one(
    tmp_path: Path, home: Path
) -> None:
    flow, candidate_id = quarantined_release_candidate(tmp_path, home)
    plan_id = prepare_plan(flow, candidate_id)
    (target,) = [f["targetPath"] for f in flow.op("memory.review", {})["items"][0]["files"]]
    mate = share(flow.repo, tmp_path / "team.git")
    teammate_commits(mate, target, "---\nid: a-teammates-entry\n---\nTheir words.\n")
    assert flow.op("memory.status", {})["plansToPromote"] == [plan_id]

    git(flow.repo, "pull", "-q", "--ff-only", "team", "main")

    status = flow.op("memory.status", {})
    assert status["plansToPromote"] == []
    why = f"{target} changed after the plan was made"
    again = "review again and prepare a new plan (`teamlore memory confirm`)"
    assert status["plansVoided"] == [
        {"planId": plan_id, "voidCode": "PROMOTION_TARGET_DRIFT", "why": why, "next": again}
    ]
    shown = teamlore_cli("memory", "status", cwd=flow.repo, env={"COLUMNS": "400"})
    assert shown.returncode == 0, shown.stderr
    assert "not yet promoted" not in shown.stdout
    assert "Promotion    1 plan prepared can no longer be promoted: review again" in shown.stdout
    assert f"  {plan_id}: {why} (PROMOTION_TARGET_DRIFT)" in shown.stdout
    on_the_page = current_plan_states(OpContext(cwd=flow.repo, home=home))[plan_id]
    assert on_the_page == {
        "status": "voided",
        "voidCode": "PROMOTION_TARGET_DRIFT",
        "voidPath": target,
        "voidMessage": why,
    }
    refused = flow.refused("memory.promote", {"planId": plan_id})
    assert (refused.code, refused.message.split("; plan voided")[0]) == (
        "PROMOTION_TARGET_DRIFT",
        why,
    )
    assert (flow.repo / target).read_text().endswith("Their words.\n")


def test_status_says_a_plan_is_void_once_a_pull_changed_a_file_it_rewrites(
    tmp_path: Path, home: Path
) -> None:
    repo, _ = merging_repository(tmp_path, home)
    ctx = OpContext(cwd=repo, home=home)
    git(repo, "add", ".threadshare")
    git(repo, "commit", "-q", "-m", "memory: the team's entries")
    (item,) = run_operation("memory.review", ctx, {})["items"]
    plan_id = run_operation("memory.prepare", ctx, request_for(item))["planId"]
    rewritten = f".threadshare/memory/entries/{REWRITTEN}.md"
    assert rewritten in [f["targetPath"] for f in item["files"]]
    mate = share(repo, tmp_path / "team.git")
    theirs = (mate / rewritten).read_text()
    fixed = theirs.replace("two-stage", "two stage")
    assert fixed != theirs
    teammate_commits(mate, rewritten, fixed)

    git(repo, "pull", "-q", "--ff-only", "team", "main")

    status = run_operation("memory.status", ctx, {})
    assert status["plansToPromote"] == []
    assert status["plansVoided"] == [
        {
            "planId": plan_id,
            "voidCode": "PROMOTION_TARGET_DRIFT",
            "why": f"{rewritten} changed after the plan was made",
            "next": "review again and prepare a new plan (`teamlore memory confirm`)",
        }
    ]


def test_a_pending_plan_whose_files_are_as_bound_is_still_one_to_promote(
    tmp_path: Path, home: Path
) -> None:
    """A pull of commits that touch none of the plan's files leaves it to promote."""
    flow, candidate_id = quarantined_release_candidate(tmp_path, home)
    plan_id = prepare_plan(flow, candidate_id)
    mate = share(flow.repo, tmp_path / "team.git")
    teammate_commits(mate, "docs/release.md", "Tags need a v prefix.\n")

    git(flow.repo, "pull", "-q", "--ff-only", "team", "main")

    status = flow.op("memory.status", {})
    assert (status["plansToPromote"], status["plansVoided"]) == ([plan_id], [])
    assert flow.op("memory.promote", {"planId": plan_id})["status"] == "applied"
