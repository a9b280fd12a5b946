"""Keeping a session out of extraction: `sessions.exclude` / `sessions.include` (CLI only,
docs/sessions.md "Keeping a session out"). The list lives in memory-state.sqlite3
(memory/extraction/exclusions.py); recall, the batch runner and its previews honour it, and
`sessions show` says when a session is excluded.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from teamlore.core.shapes.strict import STRICT
from teamlore.ops.registry import OpContext, operation

EXCLUSION_FORMAT = "teamlore-session-exclusion@1"


class ExclusionRequest(BaseModel):
    model_config = STRICT

    session_key: str = Field(
        min_length=1,
        max_length=200,
        description="A sessionKey (or its first 8+ characters) from `teamlore sessions list`.",
    )


def _set(ctx: OpContext, request: ExclusionRequest, *, excluded: bool) -> dict[str, Any]:
    from teamlore.memory.extraction import exclusions
    from teamlore.memory.store.state_db import open_state_db
    from teamlore.sessions.index_health import index_errors, open_index_for_read
    from teamlore.sessions.queries import resolve_session_key

    with index_errors(open_index_for_read(ctx.home)) as index:
        key = resolve_session_key(index, request.session_key)
    state = open_state_db(ctx.home)
    try:
        change = exclusions.exclude if excluded else exclusions.include
        changed = change(state, key)
    finally:
        state.close()
    return {
        "action": "exclude" if excluded else "include",
        "format": EXCLUSION_FORMAT,
        "sessionKey": key,
        "excluded": excluded,
        "changed": changed,
    }


@operation("sessions.exclude", input_model=ExclusionRequest, side_effect="state-write")
def sessions_exclude(ctx: OpContext, request: ExclusionRequest) -> dict[str, Any]:
    """Keep a session out of extraction: recall, the batch runner and its previews never
    select its turns (the index keeps it; search and show still find it)."""
    return _set(ctx, request, excluded=True)


@operation("sessions.include", input_model=ExclusionRequest, side_effect="state-write")
def sessions_include(ctx: OpContext, request: ExclusionRequest) -> dict[str, Any]:
    """Take an excluded session back into extraction."""
    return _set(ctx, request, excluded=False)
