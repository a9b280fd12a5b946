"""A quarantined Skill candidate as review shows it and prepare plans it: the exact SKILL.md
it writes, re-checked against the team memory and the target it was drafted for."""

from __future__ import annotations

from typing import TYPE_CHECKING

from teamlore.memory.documents import Skill, dump_skill
from teamlore.memory.layout import skill_path
from teamlore.memory.skills.context import read_team_memory
from teamlore.memory.skills.source import require_lint_clean
from teamlore.memory.skills.staging import check_memory_context, check_skill_target

if TYPE_CHECKING:
    from teamlore.memory.prepare import RenderContext, RenderedFile
    from teamlore.memory.review import CandidateView


def render_skill_candidate(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    """The one file promoting a Skill candidate writes (MEMORY_CONTEXT_DRIFT when the team
    memory changed since the recall, SKILL_TARGET_DRIFT when the target did, LINT_BLOCKED)."""
    from teamlore.memory.prepare import RenderedFile

    payload = view.payload
    draft = payload["skill"]
    memory = read_team_memory(ctx.worktree_root)
    check_memory_context(memory, str(payload["memoryContextDigest"]))
    check_skill_target(memory, draft["name"], draft["action"], draft["expectedContentDigest"])
    target = skill_path(draft["name"])
    content = dump_skill(
        Skill(name=draft["name"], description=draft["description"], body=draft["body"])
    )
    require_lint_clean(content, path=target, kind="skill")
    role = "update" if draft["action"] == "update" else "new"
    return [RenderedFile(target, draft["name"], role, view.candidate_id, content, ctx.read(target))]
