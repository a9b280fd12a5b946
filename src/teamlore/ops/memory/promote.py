"""`memory.promote`: approve and apply one PromotionPlan@v1 to this worktree's memory tree.

Approval is not a separate step: running promote with a plan id *is* the approval of that plan
(`generated → approved`, bound to the plan's digest), immediately followed by the apply. The
person approves by running `teamlore memory promote --plan ID` with the id of the plan whose diff
they reviewed (from `memory prepare`); `--digest` additionally pins the exact plan digest shown
by prepare, so a different plan under that id is refused (`PLAN_DIGEST_MISMATCH`).

Over MCP (`threadshare_memory_promote`, capability `team`) an agent may only pass a plan id the
person gave it after reviewing that plan's diff — never one it prepared and decided on by itself.
teamlore cannot tell the two apart (it does not authenticate the person; glossary: plan); the tool
description says so to the agent, and the plan's digest CAS guarantees that what is written is
exactly what was shown.

The owner is the worktree of the caller's directory; a plan made in another worktree or
repository is refused. The result names every file and what happened to it; nothing is staged,
committed or pushed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from teamlore.contracts.formats import HEX64_PATTERN, UUID4_PATTERN
from teamlore.core import errors
from teamlore.ops.registry import OpContext, operation

if TYPE_CHECKING:
    from teamlore.memory.promotion.apply import PromotionOutcome

# New files are untracked, so plain `git diff` prints nothing for them: the note names
# commands that show new files too (docs/memory.md).
# what a promotion did to git, then what to do next: a stopped merge's `git add` goes between
GIT_NOTE_DONE = "working tree only: nothing was staged, committed or pushed"
GIT_NOTE_NEXT = (
    "`git status` lists the changed and new files, and `git add --intent-to-add "
    ".threadshare/memory && git diff` shows every line (new files too); then commit through "
    "your usual review"
)
GIT_NOTE = f"{GIT_NOTE_DONE}; {GIT_NOTE_NEXT}"


class PromoteRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    plan_id: str = Field(
        alias="planId",
        pattern=UUID4_PATTERN,
        description="The id of the plan the user reviewed and told you to promote.",
    )
    plan_digest: str | None = Field(
        default=None,
        alias="planDigest",
        pattern=HEX64_PATTERN,
        description="Optional: the planDigest shown with the reviewed plan; a different plan "
        "is refused.",
    )


@operation(
    "memory.promote",
    input_model=PromoteRequest,
    side_effect="repo-write",
    capability="team",
    mcp_tool="threadshare_memory_promote",
    approval_policy="canonical-write",
    destructive=True,  # it overwrites reviewed memory files (the seed's hint)
    idempotent=True,
    description="Approve and apply a prepared team-memory PromotionPlan@v1 to this worktree's "
    ".threadshare/memory (working tree only: no stage, commit or push). Call it ONLY with a "
    "plan id the user gave you after reviewing that plan's diff; never promote a plan on your "
    "own. If anything the plan bound changed (target file, candidate, assessment, lint policy) "
    "the plan is voided and must be reviewed and prepared again.",
)
def memory_promote(ctx: OpContext, request: PromoteRequest) -> dict[str, Any]:
    """Approve and apply a promotion plan to this worktree (idempotent once applied)."""
    from teamlore.memory.promotion.apply import promote
    from teamlore.ops.memory.review import load_candidate_kinds
    from teamlore.ops.owner import open_owner

    load_candidate_kinds()
    try:
        with open_owner(ctx) as owner:
            outcome = promote(
                owner.state,
                request.plan_id,
                identity=owner.identity,
                home=ctx.home,
                plan_digest=request.plan_digest,
            )
    except errors.TeamloreError as refusal:
        if refusal.code == errors.PROMOTION_TARGET_DRIFT.code:
            raise _the_step_that_works(ctx, refusal, request.plan_id) from None
        raise
    return promotion_result(outcome, owner.identity.worktree_root)


def promotion_result(outcome: PromotionOutcome, worktree_root: Path) -> dict[str, Any]:
    """What `memory promote` answers for an applied plan: the outcome (each file and what
    happened to it), the note on git and the files git ignores. `memory status` answers the
    same for a plan it finished (ops/memory/store.py), so both say what was written and what
    to do next."""
    from teamlore.repo.ignored import ignored_by_git

    result: dict[str, Any] = outcome.model_dump(mode="json", by_alias=True)
    written = [f.target_path for f in outcome.files if f.operation == "write"]
    result["git"] = promotion_git_note(worktree_root, [f.target_path for f in outcome.files])
    result["ignoredByGit"] = ignored_by_git(worktree_root, written)
    return result


def promotion_git_note(worktree_root: Path, paths: list[str]) -> str:
    """`GIT_NOTE`; where git holds a file the plan wrote or deleted unmerged (a merge stopped on
    it), also what finishes that merge, as `memory assemble` says it: a warning, not a refusal
    (the promotion wrote the working tree only, and the person finishes the merge)."""
    from teamlore.memory.assembled_git import git_states, still_unmerged

    unmerged, _ = git_states(worktree_root, paths)
    if not unmerged:
        return GIT_NOTE
    return f"{GIT_NOTE_DONE}; {still_unmerged(unmerged)}; {GIT_NOTE_NEXT}"


def _the_step_that_works(
    ctx: OpContext, refusal: errors.TeamloreError, plan_id: str
) -> errors.TeamloreError:
    """A plan voided because a target file changed: when the file is one a candidate of the
    plan updates, reviewing again only leads to that candidate's own refusal (`TARGET_DRIFT`:
    discard it and extract it again), so the refusal says that step at once; otherwise it is
    left as it is (review again and prepare a new plan)."""
    from teamlore.memory.promotion.stored_plan import load_plan
    from teamlore.ops.memory.review import (
        FROM_TURNS,
        left_out_of_a_plan,
        review_everything,
        short_candidate_id,
    )
    from teamlore.ops.owner import open_owner

    try:
        with open_owner(ctx, for_read=True) as owner:
            held = set(load_plan(owner.state, plan_id).plan.candidate_ids)
        stuck = [
            out
            for kind in FROM_TURNS
            for item in review_everything(ctx, kind)["items"]
            if item["candidateId"] in held
            and (out := left_out_of_a_plan(item)) is not None
            and out["next"].endswith(" --extract-again")
        ]
    except errors.TeamloreError:  # what review refuses now (a target no longer parses, …)
        return refusal  # the drift is still what to report
    if not stuck:
        return refusal
    said = "; ".join(f"{short_candidate_id(out['candidateId'])}: {out['why']}" for out in stuck)
    # each candidate's own command (its id, the --reason a run without a terminal needs)
    commands = ", ".join(f"`{out['next']}`" for out in stuck)
    voided = refusal.message.removesuffix(", review and prepare again")  # it will not do
    it = "it" if len(stuck) == 1 else "each"
    message = (
        f"{voided}; {said}, so {it} cannot be promoted as it is: discard {it} and extract it "
        f"again ({commands})"
    )
    details = {**refusal.details, "candidateIds": [o["candidateId"] for o in stuck]}
    return errors.TeamloreError(refusal.error, message, **details).advising(
        f"Discard {it} with {commands}, then recall."
    )


def current_plan_states(ctx: OpContext) -> dict[str, dict[str, Any]]:
    """This worktree's promotion plans as they stand now (planId → status, and for a voided
    plan its `voidCode`, `voidPath` and `voidMessage`: promote's drift, or a candidate or a
    target file changed since), read with the function `memory status` lists plans with.
    Read-only; the review page shows the plans it prepared by it."""
    from teamlore.memory.extraction.tasks import Owner
    from teamlore.memory.promotion.stored_plan import plan_states
    from teamlore.ops.owner import open_owner

    with open_owner(ctx, for_read=True) as owner:
        found = plan_states(
            owner.state,
            Owner(owner.repository_key, owner.worktree_key),
            owner.identity.worktree_root,
        )
    return {
        plan.plan_id: {
            "status": plan.status,
            "voidCode": plan.void_code,
            "voidPath": plan.void_path,
            "voidMessage": plan.void_message,
        }
        for plan in found
    }


def pending_plans(ctx: OpContext) -> list[dict[str, Any]]:
    """The plans `memory status` lists as plans to promote (status `generated` now), whoever
    prepared them (the review page, `memory confirm`, `memory prepare`, the MCP tool), newest
    first, each as `memory.prepare` returned it (`planId`, `planDigest`, `plan`: the stored
    PromotionPlan@v1, verified against its digest). Read-only: the review page lists them and
    promotes them as it does its own."""
    from teamlore.memory.extraction.tasks import Owner
    from teamlore.memory.promotion.stored_plan import load_plan, plan_states
    from teamlore.ops.owner import open_owner

    with open_owner(ctx, for_read=True) as owner:
        found = plan_states(
            owner.state,
            Owner(owner.repository_key, owner.worktree_key),
            owner.identity.worktree_root,
        )
        stored = [load_plan(owner.state, p.plan_id) for p in found if p.status == "generated"]
    return [
        {"planId": s.plan.plan_id, "planDigest": s.plan_digest, "plan": s.plan.to_wire()}
        for s in stored
    ]
