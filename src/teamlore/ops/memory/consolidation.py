"""`memory.synthesize`: a ConsolidationTask@v1 for the agent (docs/memory.md, "Consolidation").

The patch the agent answers with goes through `memory.stage` (dispatch by `format`); review,
prepare and promote take it from there (`kind: consolidation`). The owner is the worktree of the
caller's directory, never a request field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from teamlore.ops.registry import OpContext, operation


class SynthesizeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    if_due: bool = Field(
        False,
        alias="ifDue",
        description="Return no task unless at least 20 approved entries are new or changed "
        "since the last consolidation.",
    )
    full: bool = Field(
        False,
        description="Carry every approved entry, not only those new or changed since the last "
        "consolidation.",
    )

    @model_validator(mode="after")
    def _exclusive(self) -> SynthesizeRequest:
        if self.if_due and self.full:
            raise ValueError("ifDue and full cannot be combined")
        return self


@operation(
    "memory.synthesize",
    input_model=SynthesizeRequest,
    side_effect="state-write",
    capability="team",
    mcp_tool="threadshare_memory_synthesize",
    response="threadshare-memory-synthesis@v1",
    description="Start an L2/L3 consolidation: returns a ConsolidationTask@v1 with the approved "
    "team-memory entries new or changed since the last consolidation (all with full=true), "
    "every scene and the doctrine, plus instructions. Consolidate them with the user, then send "
    "the ConsolidationPatch@v1 to threadshare_memory_stage. Returns task null (with the reason "
    "in status/note) when nothing is new, when not due (ifDue) or while an earlier "
    "consolidation awaits review.",
    idempotent=True,
)
def memory_synthesize(ctx: OpContext, request: SynthesizeRequest) -> dict[str, Any]:
    """Build a ConsolidationTask@v1 for the agent (or say why there is none)."""
    from teamlore.memory.consolidation.synthesize import synthesize
    from teamlore.ops.owner import open_owner

    with open_owner(ctx) as owner:
        return synthesize(owner.state, owner.identity, full=request.full, if_due=request.if_due)


def stage_consolidation_patch(ctx: OpContext, document: dict[str, Any]) -> dict[str, Any]:
    """`memory.stage` for a ConsolidationPatch@v1 (see `teamlore.ops.memory.stage`)."""
    from teamlore.memory.consolidation.staging import stage_patch
    from teamlore.ops.owner import open_owner

    with open_owner(ctx) as owner:
        return stage_patch(owner.state, document, identity=owner.identity)


__all__ = ["SynthesizeRequest", "memory_synthesize", "stage_consolidation_patch"]
