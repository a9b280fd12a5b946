"""`memory.assemble`: the reviewed team memory into CLAUDE.md / AGENTS.md and the provider's
Skill folder (docs/assemble.md). Writes only the worktree and a private manifest; never stages
or commits."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.shapes.strict import STRICT
from teamlore.ops.registry import OpContext, operation


class AssembleRequest(BaseModel):
    model_config = STRICT

    provider: Literal["claude", "codex"] = Field(
        description="claude: CLAUDE.md + .claude/skills/; codex: AGENTS.md + .agents/skills/."
    )
    repair: bool = Field(
        default=False,
        description="When the file's BEGIN/END markers were damaged by hand "
        "(ASSEMBLY_MARKERS_INVALID): replace each old block, drop stray markers, keep every "
        "other byte, and write one block.",
    )
    check: bool = Field(
        default=False,
        description="Write nothing; refuse with ASSEMBLY_STALE, naming each file and why, when "
        "the instructions file or a Skill projection is not what assemble would write now (an "
        "unresolved git merge in it included). For CI.",
    )


@operation(
    "memory.assemble",
    input_model=AssembleRequest,
    side_effect="repo-write",
    capability="team",
    mcp_tool="threadshare_memory_assemble",
    idempotent=True,
    description="Write the reviewed team memory where the agent reads it without a tool call: "
    "the managed block (doctrine, scene index, Skill index) in CLAUDE.md (claude) or AGENTS.md "
    "(codex) at the worktree root, and every team Skill copied to .claude/skills/ or "
    ".agents/skills/. Text outside the block is kept byte for byte; a re-run with nothing new "
    "reports changed: false. A block whose markers were damaged by hand is refused "
    "(ASSEMBLY_MARKERS_INVALID, naming the lines) until re-run with repair: true; a git merge "
    "left unresolved outside the block or across its markers is refused whatever repair says "
    "(ASSEMBLY_MERGE_UNRESOLVED): the person resolves it. With check: true it writes nothing and "
    "refuses with ASSEMBLY_STALE when a file is not what it would write now. Never stages or "
    "commits.",
)
def memory_assemble(ctx: OpContext, request: AssembleRequest) -> dict[str, Any]:
    """Write the team memory block into CLAUDE.md/AGENTS.md and project the team's Skills."""
    from teamlore.core.paths import resolve_home
    from teamlore.memory.assemble import assemble, check
    from teamlore.memory.assembled_git import git_note
    from teamlore.memory.interrupted import refuse_if_interrupted
    from teamlore.ops.owner import resolve_owner
    from teamlore.repo.ignored import ignored_by_git

    if request.check and request.repair:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, "check writes nothing: give check or repair, not both"
        )
    identity = resolve_owner(ctx)
    # a promotion a kill left half applied: finished first, never assembled from
    refuse_if_interrupted(ctx.home, identity.repository_key, identity.worktree_key)
    home = resolve_home(ctx.home)
    if request.check:
        return check(
            identity.worktree_root,
            request.provider,
            home=home,
            worktree_key=identity.worktree_key,
        )
    result = assemble(
        identity.worktree_root,
        request.provider,
        home=home,
        worktree_key=identity.worktree_key,
        repair=request.repair,
    )
    written = written_by(result)
    return {
        **result,
        "ignoredByGit": ignored_by_git(identity.worktree_root, written),
        # what to do in git next: `git add` finishes a stopped merge; new files need -N to diff
        "git": git_note(identity.worktree_root, written, skills_folder=result["skillsFolder"]),
    }


def written_by(result: dict[str, Any]) -> list[str]:
    """The files an assemble result names, repo-relative: the instructions file (or the file
    it links to), then each Skill projection."""
    target = result["targetLinksTo"] or result["target"]
    copies = [
        path
        for skill in result["skills"]
        for path in (skill["path"], *(file["path"] for file in skill.get("files", [])))
    ]
    return [target, *copies]
