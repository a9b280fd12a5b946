"""Team-memory operations: init, status, lint (search: `ops/memory/search.py`).

The owner (repository + worktree) comes from the caller's context — the CLI's cwd or
`--repository`, the MCP server's launch directory — never from request arguments.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.paths import escaped_path
from teamlore.core.shapes.strict import STRICT
from teamlore.ops.owner import OwnerContext, open_owner, resolve_owner
from teamlore.ops.registry import OpContext, operation


class _Strict(BaseModel):
    model_config = STRICT


class InitRequest(_Strict):
    pass


@operation("memory.init", input_model=InitRequest, side_effect="repo-write")
def memory_init(ctx: OpContext, request: InitRequest) -> dict[str, Any]:
    """Create the .threadshare/memory skeleton in this worktree (idempotent)."""
    from teamlore.memory.store.layout import init_tree, skeleton_files
    from teamlore.repo.ignored import ignored_by_git

    identity = resolve_owner(ctx)
    created = init_tree(identity.worktree_root)
    return {
        "worktree": escaped_path(identity.worktree_root.name),  # a name not UTF-8 as `\xf3`
        "repositoryKey": identity.repository_key,
        "worktreeKey": identity.worktree_key,
        "created": [_relative(p, identity.worktree_root) for p in created],
        "ignoredByGit": ignored_by_git(identity.worktree_root, skeleton_files()),
    }


def _relative(path: Path | str, root: Path) -> str:
    p = Path(path)
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


class StatusRequest(_Strict):
    pass


@operation(
    "memory.status",
    input_model=StatusRequest,
    side_effect="read",
    capability="team-read",
    mcp_tool="threadshare_memory_status",
    description="Team memory of this repository: whether it exists, projection generation and "
    "coverage, counts of entries by status and candidates by state, lint summary, and any "
    "promotion a crash interrupted (finished here from the command line; named with the "
    "command that finishes it over MCP).",
)
def memory_status(ctx: OpContext, request: StatusRequest) -> dict[str, Any]:
    """Show the team memory's owner, projection generation/coverage, counts and lint summary.

    First finishes any promotion a crash left `applying` (docs/memory.md, "A promotion a crash
    interrupted")."""
    from teamlore.memory.status import memory_status as compute
    from teamlore.ops.runner.waiting import adjudication_waiting

    with open_owner(ctx, for_read=True) as owner:
        recovery = _recover_promotions(ctx, owner)
        stale = owner.sync_projection(only_if_present=True)
        result = compute(
            owner.state,
            repository_key=owner.repository_key,
            worktree_key=owner.worktree_key,
            worktree_root=owner.worktree_root,
            progress=ctx.progress,
        )
        adjudication = adjudication_waiting(ctx.home, owner.state, owner.identity)
    status = {
        **result.model_dump(mode="json", by_alias=True),
        "promotionRecovery": recovery,
        "adjudication": adjudication,
    }
    # a full disk or a read-only state dir, and the tree changed since the last sync: say so
    return {**status, "stale": stale} if stale else status


def _recover_promotions(ctx: OpContext, owner: OwnerContext) -> dict[str, Any]:
    """docs/memory.md (promotion journal): after a crash, status resumes a plan left `applying` from
    its journal, file by file and idempotently; the person approved those exact bytes already.
    An MCP client without the `team` tier (`team-read` is read-only) gets the plan ids and the
    command that finishes them instead."""
    from teamlore.memory.extraction.tasks import Owner
    from teamlore.memory.promotion.apply import recover_promotions, unfinished_plan_ids
    from teamlore.ops.memory.review import load_candidate_kinds

    unfinished = unfinished_plan_ids(owner.state, Owner(owner.repository_key, owner.worktree_key))
    if unfinished["generated"]:
        # a plan to promote is listed void with the drift promote would refuse it with, and a
        # consolidation's is first the tree it was synthesized from (its kind's check)
        load_candidate_kinds()
    interrupted = unfinished["applying"]
    if not interrupted:
        return {"interrupted": [], "resumed": [], "next": None}
    if ctx.capabilities and "team" not in ctx.capabilities:
        return {
            "interrupted": interrupted,
            "resumed": [],
            "next": "run `teamlore memory status` (or `teamlore memory promote --plan "
            f"{interrupted[0]}`) in this worktree to finish it",
        }
    from teamlore.ops.memory.promote import promotion_result

    load_candidate_kinds()  # a plan of Skills or of a consolidation resumes with its kind's hooks
    resumed: list[dict[str, Any]] = []
    for plan_id, outcome in recover_promotions(owner.state, identity=owner.identity, home=ctx.home):
        if isinstance(outcome, errors.TeamloreError):
            resumed.append({"planId": plan_id, "status": "refused", "error": outcome.to_json()})
        else:  # as `memory promote` answers it: each file written, and the step after (git)
            resumed.append(promotion_result(outcome, owner.worktree_root))
    return {"interrupted": interrupted, "resumed": resumed, "next": None}


def interrupted_promotion_note(plan_id: str) -> str | None:
    """What a `memory promote` stopped by Ctrl-C left, for the person at the terminal: the plan
    half applied and the command that finishes it (memory/interrupted.py); None when it wrote
    nothing yet."""
    from teamlore.memory.interrupted import interrupted_note

    return interrupted_note(None, plan_id)


class LintRequest(_Strict):
    paths: list[str] = Field(
        default_factory=list, description="Files or folders to lint; default: the tree."
    )


def _lint_root(ctx: OpContext) -> Path:
    """Where linted files are shown relative to: the owner's worktree when the current directory
    is inside it, else the current directory (a draft anywhere can be linted before it is
    copied in)."""
    from teamlore.repo.binding import is_within

    try:
        root = resolve_owner(ctx).worktree_root
    except errors.TeamloreError as err:
        if err.code not in (errors.NOT_A_GIT_REPOSITORY.code, errors.BARE_REPOSITORY.code):
            raise
        return ctx.cwd
    return root if is_within(os.path.realpath(ctx.cwd), str(root)) else ctx.cwd


@operation("memory.lint", input_model=LintRequest, side_effect="read")
def memory_lint(ctx: OpContext, request: LintRequest) -> dict[str, Any]:
    """Lint the memory tree (or the given files) for secrets, private references and format."""
    from teamlore.memory.assembled import with_assembled_conflicts
    from teamlore.memory.deprecations import with_deprecation_findings
    from teamlore.memory.interrupted import with_interrupted_promotions
    from teamlore.memory.line_ends import without_checkout_crlf
    from teamlore.memory.store.lint import lint_paths, lint_tree

    if request.paths:
        paths = [p if p.is_absolute() else ctx.cwd / p for p in map(Path, request.paths)]
        report = lint_paths(_lint_root(ctx), paths)
    else:
        identity = resolve_owner(ctx)
        root = identity.worktree_root
        report = with_deprecation_findings(lint_tree(root, progress=ctx.progress), root)
        report = without_checkout_crlf(report, root)  # git's checkout wrote them, not the team
        # CLAUDE.md, AGENTS.md and the Skill copies a merge left conflicted (every agent reads them)
        report = with_assembled_conflicts(report, root)
        # a promotion a kill left half applied (memory/interrupted.py)
        report = with_interrupted_promotions(
            report, ctx.home, identity.repository_key, identity.worktree_key
        )
    result: dict[str, Any] = report.model_dump(mode="json", by_alias=True)
    result["blocked"] = report.blocked
    return result
