"""The drafts that wait for their adjudication, and the command that moves them on: what
`memory status` reports and `memory recall` names when the turns it was asked for were all
extracted. Apart from the runner plans (plans.py) because recall cannot import those: they
import recall's request."""

from __future__ import annotations

from typing import Any


def plan_owner(identity: Any) -> Any:
    """The runner plans' owner of a repository identity (`runner.plans.Owner`)."""
    from teamlore.runner.plans import Owner

    return Owner(identity.repository_key, identity.worktree_key)


def memory_owner(identity: Any) -> Any:
    """The extraction tasks' owner of a repository identity (`extraction.tasks.Owner`)."""
    from teamlore.memory.extraction.tasks import Owner

    return Owner(identity.repository_key, identity.worktree_key)


def adjudicated_task_ids(source: dict[str, Any]) -> list[str]:
    """The extraction tasks an adjudication plan's source names (a single `extractionTaskId`
    in plans written before one adjudication covered a whole run)."""
    many = source.get("extractionTaskIds")
    if isinstance(many, list):
        return [str(task_id) for task_id in many]
    return [str(source.get("extractionTaskId"))]


def adjudication_waiting(home: Any, conn: Any, identity: Any) -> dict[str, Any] | None:
    """The drafts that await adjudication and what to run next: approve the pending runner
    plan(s) that adjudicate them, else plan one (docs/runner.md "Two approvals"); None when no
    draft waits. Read-only: a plan whose pool changed since is not offered."""
    from teamlore.memory.extraction.drafts import awaiting_adjudication, load_drafts

    owner = memory_owner(identity)
    waiting = awaiting_adjudication(conn, owner)
    if not waiting:
        return None
    from teamlore.memory.extraction.adjudication_tasks import live_adjudication_task
    from teamlore.runner.plans import pending_plans

    uncovered = set(waiting)
    plans: list[str] = []
    for plan_file in pending_plans(home, plan_owner(identity), "adjudication"):
        ids = adjudicated_task_ids(plan_file.source)
        if not set(ids) & uncovered or not set(ids) <= set(waiting):
            continue
        task = live_adjudication_task(conn, owner, ids)
        if task is None or task.get("taskId") != plan_file.plan.task_id:
            continue  # its approval would refuse with RUNNER_PLAN_MISMATCH
        plans.append(plan_file.digest)
        uncovered -= set(ids)
    staged = _staged_by_an_agent(conn, uncovered)
    drafts = {task_id: load_drafts(conn, task_id) for task_id in waiting}
    if uncovered - staged:
        next_step = (
            "teamlore memory extract --runner … --since … --until … (plans the adjudication "
            "of the drafts that wait along with its extractions)"
        )
    elif staged:  # the agent path: its batch, staged again, gives the adjudication task
        next_step = stage_again([d.candidate_id for t in sorted(staged) for d in drafts[t]])
    else:
        next_step = "teamlore memory extract --approve-plan " + plans[0]
    return {
        "drafts": sum(len(d) for d in drafts.values()),
        "plans": plans,
        "unplannedDrafts": sum(len(drafts[task_id]) for task_id in uncovered),
        # of those, the drafts an agent staged (`memory stage`), which no runner extracted
        "stagedDraftIds": [d.candidate_id for t in sorted(staged) for d in drafts[t]],
        "next": next_step,
    }


def stage_again(staged_ids: list[str]) -> str:
    """What moves on drafts an agent staged (`memory stage`) that wait, ADJUDICATION_STALE's
    step: the batch staged again, or a discard of each, named (runnable as printed)."""
    from teamlore.core.remedies import NOT_ADJUDICATED, discard_command
    from teamlore.ops.memory.review import short_candidate_id

    one = len(staged_ids) == 1
    shown = short_candidate_id(staged_ids[0]) if one else "ID"
    them = "it" if one else "each of stagedDraftIds"
    return (
        "stage the same draft batch again (`teamlore memory stage --request FILE`, or the MCP "
        "tool threadshare_memory_stage): it answers with the adjudication task to decide; or "
        f"discard {them} (`{discard_command(shown, NOT_ADJUDICATED)}`)"
    )


def _staged_by_an_agent(conn: Any, task_ids: set[str]) -> set[str]:
    """The extraction tasks an agent staged through `memory stage`: no runner plan was
    authorized to extract them (the runner records the plan that ran each task it extracts)."""
    return {
        task_id
        for task_id in task_ids
        if conn.execute(
            "SELECT 1 FROM tasks WHERE task_id = ? AND authorization_plan_digest IS NULL",
            (task_id,),
        ).fetchone()
    }
