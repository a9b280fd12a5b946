"""`memory.stage`: the agent's candidate drafts in, then its adjudication.

One operation, several documents, told apart by their `format` (`STAGE_HANDLERS`):
- `threadshare-memory-candidate-draft-batch@v1` (first call): the drafts for one ExtractionTask
  from `memory.recall`. Returns the staged drafts with their evidence assessments and an
  AdjudicationTask@v1 (the drafts' recall sets against team memory) — or, for an empty batch, a
  no-op.
- `threadshare-memory-adjudication-result@v1` (second call): one decision per draft. Returns
  what happened to each draft; kept ones are quarantined, awaiting review.
- `threadshare-memory-consolidation-patch@v1`: the agent's answer to a ConsolidationTask@v1
  from `memory.synthesize` — one quarantined consolidation candidate (or a no-op run).
- `threadshare-memory-skill-candidate@v1`: a Skill drafted from one recall task; quarantined at
  once as a `skill` candidate (docs/assemble.md).

The document itself is the request (CLI `--request FILE|-`, MCP arguments). The owner is the
worktree of the caller's directory, never a field of the document. The approved projection is
synced before each call; the first call holds the sync lock (lock order: sync lock, then the
state transaction) so the L0 index cannot change between the related-input check and the commit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from teamlore.contracts.formats import (
    ADJUDICATION_RESULT_FORMAT,
    CANDIDATE_TYPES,
    CONSOLIDATION_PATCH_FORMAT,
    DRAFT_BATCH_FORMAT,
    SKILL_CANDIDATE_FORMAT,
    STAGE_FORMAT,
)
from teamlore.core import errors
from teamlore.ops.registry import OpContext, operation

SYNC_LOCK_WAIT_SECONDS = 30.0


class StageRequest(BaseModel):
    """A stage document as is: a draft batch, an adjudication, a patch or a Skill (`format`)."""

    model_config = ConfigDict(extra="allow")

    format: str = Field(
        description=f"'{DRAFT_BATCH_FORMAT}' (first call: drafts, shaped as recall's "
        f"guidance.draftShape; a draft's type is one of {', '.join(CANDIDATE_TYPES)}), "
        f"'{ADJUDICATION_RESULT_FORMAT}' (second call: decisions), "
        f"'{CONSOLIDATION_PATCH_FORMAT}' (the answer to a synthesize task) or "
        f"'{SKILL_CANDIDATE_FORMAT}' (a Skill to create or update, shaped as recall's "
        "guidance.skillShape); the rest of the "
        "document follows that contract."
    )


@operation(
    "memory.stage",
    input_model=StageRequest,
    side_effect="state-write",
    capability="team",
    mcp_tool="threadshare_memory_stage",
    idempotent=True,  # the same document again replays the recorded outcome
    response=STAGE_FORMAT,
    description="Stage team-memory candidates. First call: a CandidateDraftBatch@v1 (<= 8 "
    "drafts for one recall task, every statement citing that task's evidence ids) -> the drafts "
    "with evidence assessments and an AdjudicationTask@v1 comparing them with what the team "
    "already knows. Second call: the AdjudicationResult@v1 (store/skip/update/merge per draft, "
    "decided with the user) -> kept drafts quarantined for review. A ConsolidationPatch@v1 "
    "(the answer to memory synthesize) -> one consolidation candidate quarantined for review, "
    "or a no-op when it has no operations. A SkillCandidate@v1 (a repeatable procedure as a "
    "Skill, shaped as recall's guidance.skillShape, echoing its memoryContext.bindingDigest) "
    "-> quarantined as a `skill` candidate for review. A draft becomes one entry: its content "
    "is the lesson written to git; when its statements cite different turns, each statement "
    "is listed under the content with its evidence (nothing is split off or dropped).",
)
def memory_stage(ctx: OpContext, request: StageRequest) -> dict[str, Any]:
    """Stage candidate drafts (first call) or their adjudication (second call), or a Skill."""
    document = request.model_dump(mode="json")
    handler = STAGE_HANDLERS.get(request.format)
    if handler is None:
        raise errors.TeamloreError(
            errors.STAGE_REQUEST_INVALID,
            f"unknown stage format {errors.echoed(request.format)!r}; "
            f"expected one of {', '.join(STAGE_HANDLERS)}",
            format=errors.echoed(request.format),
        )
    return handler(ctx, document)


def _stage_drafts(ctx: OpContext, document: dict[str, Any]) -> dict[str, Any]:
    from teamlore.core.lock import file_lock
    from teamlore.core.paths import resolve_home
    from teamlore.memory.extraction.staging import RecallTaskSources, stage_draft_batch
    from teamlore.memory.extraction.tasks import Owner
    from teamlore.ops.memory.vectors import recall_embedder
    from teamlore.ops.owner import open_owner
    from teamlore.ops.sessions.index import SYNC_LOCK

    with open_owner(ctx, sessions=True) as stores:
        stores.sync_projection()
        embedder = recall_embedder(ctx, stores)
        identity = stores.identity
        lock = resolve_home(ctx.home) / SYNC_LOCK
        with file_lock(lock, wait_seconds=SYNC_LOCK_WAIT_SECONDS, what="a sync"):
            return stage_draft_batch(
                stores.state,
                document,
                owner=Owner(identity.repository_key, identity.worktree_key),
                sources=RecallTaskSources(stores.index, stores.state, identity, home=ctx.home),
                embedder=embedder,
            )


def _stage_adjudication(ctx: OpContext, document: dict[str, Any]) -> dict[str, Any]:
    from teamlore.memory.extraction.adjudication import submit_adjudication
    from teamlore.memory.extraction.tasks import Owner
    from teamlore.ops.memory.vectors import adjudication_vectors
    from teamlore.ops.owner import open_owner

    with open_owner(ctx, sessions=True) as stores:
        stores.sync_projection()
        adjudication_vectors(ctx, stores, document)  # the rerun ranks as the task did
        owner = Owner(stores.identity.repository_key, stores.identity.worktree_key)
        return submit_adjudication(stores.state, document, owner=owner)


def _stage_consolidation_patch(ctx: OpContext, document: dict[str, Any]) -> dict[str, Any]:
    from teamlore.ops.memory.consolidation import stage_consolidation_patch

    return stage_consolidation_patch(ctx, document)


def _stage_skill(ctx: OpContext, document: dict[str, Any]) -> dict[str, Any]:
    from teamlore.core.lock import file_lock
    from teamlore.core.paths import resolve_home
    from teamlore.memory.extraction.staging import RecallTaskSources
    from teamlore.memory.extraction.tasks import Owner
    from teamlore.memory.skills.staging import stage_skill_candidate
    from teamlore.ops.owner import open_owner
    from teamlore.ops.sessions.index import SYNC_LOCK
    from teamlore.sessions.index_db import provider_session_uuids

    with open_owner(ctx, sessions=True) as stores:
        stores.sync_projection()
        identity = stores.identity
        lock = resolve_home(ctx.home) / SYNC_LOCK
        with file_lock(lock, wait_seconds=SYNC_LOCK_WAIT_SECONDS, what="a sync"):
            return stage_skill_candidate(
                stores.state,
                document,
                owner=Owner(identity.repository_key, identity.worktree_key),
                sources=RecallTaskSources(stores.index, stores.state, identity, home=ctx.home),
                worktree_root=identity.worktree_root,
                known_session_ids=provider_session_uuids(stores.index),
            )


# one row per stageable document format
STAGE_HANDLERS: dict[str, Callable[[OpContext, dict[str, Any]], dict[str, Any]]] = {
    DRAFT_BATCH_FORMAT: _stage_drafts,
    ADJUDICATION_RESULT_FORMAT: _stage_adjudication,
    CONSOLIDATION_PATCH_FORMAT: _stage_consolidation_patch,
    SKILL_CANDIDATE_FORMAT: _stage_skill,
}
