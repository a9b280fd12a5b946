"""A quarantined Skill candidate as review shows it and prepare plans it: the exact SKILL.md
it writes, re-checked against the team memory and the target it was drafted for."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from teamlore.memory.skills.context import read_team_memory
from teamlore.memory.skills.source import require_lint_clean
from teamlore.memory.skills.staging import check_memory_context, check_skill_target
from teamlore.memory.store.documents import Skill, dump_skill
from teamlore.memory.store.layout import skill_path
from teamlore.memory.store.lint import lint_bytes

if TYPE_CHECKING:
    from teamlore.memory.promotion.rendered import RenderContext, RenderedFile
    from teamlore.memory.promotion.review import CandidateView


def render_skill_candidate(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    """The one file promoting a Skill candidate writes (MEMORY_CONTEXT_DRIFT when the team
    memory changed since the recall, SKILL_TARGET_DRIFT when the target did, LINT_BLOCKED)."""
    from teamlore.memory.promotion.rendered import RenderedFile

    payload = view.payload
    draft = payload["skill"]
    memory = read_team_memory(ctx.worktree_root)
    check_memory_context(memory, str(payload["memoryContextDigest"]), staged_as=view.candidate_id)
    check_skill_target(
        memory,
        draft["name"],
        draft["action"],
        draft["expectedContentDigest"],
        staged_as=view.candidate_id,
    )
    target = skill_path(draft["name"])
    content = dump_skill(
        Skill(name=draft["name"], description=draft["description"], body=draft["body"])
    )
    require_lint_clean(content, path=target, kind="skill", known_session_ids=ctx.known_session_ids)
    # what `memory lint` will say of the file once promoted (a `<service>` GitHub drops),
    # shown under it in review as an entry's warnings are
    warnings = tuple(
        f for f in lint_bytes(content, path=target, kind="skill") if f.severity == "warn"
    )
    role = "update" if draft["action"] == "update" else "new"
    current = ctx.read(target)
    return [
        RenderedFile(target, draft["name"], role, view.candidate_id, content, current, warnings)
    ]


def stale_skill_candidates(
    conn: sqlite3.Connection, candidate_ids: Sequence[str], worktree_root: Path
) -> list[str]:
    """The Skill candidates among `candidate_ids` whose memory context no longer holds (promote
    re-checks it: entries, scenes or doctrine promoted since the Skill was drafted)."""
    rows = [
        conn.execute(
            "SELECT candidate_id, payload_json FROM candidates WHERE candidate_id = ? "
            "AND candidate_kind = 'skill'",
            (candidate_id,),
        ).fetchone()
        for candidate_id in candidate_ids
    ]
    skills = [(str(row[0]), orjson.loads(row[1])) for row in rows if row is not None]
    if not skills:
        return []
    current = read_team_memory(worktree_root).binding_digest()
    return [cid for cid, payload in skills if payload.get("memoryContextDigest") != current]
