"""The embedding side of a hybrid memory operation (docs/hybrid-search.md): which embedder runs,
with the owner's vectors brought up to date first, or why none does."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from teamlore.core import errors
from teamlore.core.fusion import EMBEDDINGS_OFF, LEXICAL_ASKED
from teamlore.memory.store.search import VectorPath
from teamlore.ops.owner import OwnerContext
from teamlore.ops.registry import OpContext

if TYPE_CHECKING:
    from teamlore.models.embeddings import Embedder


def memory_vectors(
    ctx: OpContext, owner: OwnerContext, *, lexical: bool = False
) -> tuple[Embedder | None, VectorPath]:
    """Memory's embedder (`multilingual.memory_embedder`) with the owner's approved vectors up
    to date (call after `owner.sync_projection()`); or None and why the vector path will not
    run: lexical was asked for, embeddings are off, or the model cannot be loaded or reached
    (lexical alone then runs)."""
    embedder, path = configured_vectors(ctx, lexical=lexical)
    if embedder is None:
        return None, path
    if _nothing_to_embed(owner):
        return embedder, path  # the vector side (numpy) and the model load only with documents
    from teamlore.memory.store.vectors import sync_approved_vectors  # numpy: the vector side

    try:
        sync_approved_vectors(
            owner.state,
            repository_key=owner.repository_key,
            worktree_key=owner.worktree_key,
            embedder=embedder,
            progress=_embedding_progress(ctx),
        )
    except errors.TeamloreError as exc:
        return None, VectorPath(ran=False, reason=exc.message, code=exc.code)
    return embedder, VectorPath(ran=True, space=embedder.space.key)


def _nothing_to_embed(owner: OwnerContext) -> bool:
    """The owner has no projected document and no stored vector (an empty memory tree)."""
    found = owner.state.execute(
        "SELECT EXISTS (SELECT 1 FROM approved_entries WHERE repository_key = ?1 AND "
        "worktree_key = ?2) OR EXISTS (SELECT 1 FROM approved_vectors WHERE repository_key = ?1 "
        "AND worktree_key = ?2)",
        (owner.repository_key, owner.worktree_key),
    ).fetchone()
    return not found[0]


def configured_vectors(
    ctx: OpContext, *, lexical: bool = False
) -> tuple[Embedder | None, VectorPath]:
    """Memory's embedder (`multilingual.memory_embedder`: what config.toml names, the bilingual
    model by default), or None and why the vector path will not run: lexical was asked for,
    embeddings are off, or the model cannot be loaded (lexical alone then runs)."""
    if lexical:
        return None, VectorPath(ran=False, reason=LEXICAL_ASKED)
    # the models load only for a search whose vector path may run
    from teamlore.models.multilingual import memory_embedder

    try:
        embedder = memory_embedder(ctx.home)
    except errors.TeamloreError as exc:
        return None, VectorPath(ran=False, reason=exc.message, code=exc.code)
    if embedder is None:
        return None, VectorPath(ran=False, reason=EMBEDDINGS_OFF)
    return embedder, VectorPath(ran=True, space=embedder.space.key)


def _embedding_progress(ctx: OpContext) -> Callable[[int, int], None] | None:
    report = ctx.progress
    if report is None:
        return None
    return lambda done, total: report(done, total, "embedding memory")


def recall_embedder(ctx: OpContext, owner: OwnerContext) -> Embedder | None:
    """The embedder for staging drafts (dedup recall `recall-hybrid-rrf@2`), with the owner's
    approved and live candidate vectors up to date; None when embeddings are off or fail (the
    recall is then `recall-rrf@1`, lexical)."""
    from teamlore.memory.extraction.dedup import sync_candidate_vectors

    embedder, _ = memory_vectors(ctx, owner)
    if embedder is None:
        return None
    try:
        sync_candidate_vectors(
            owner.state,
            repository_key=owner.repository_key,
            worktree_key=owner.worktree_key,
            embedder=embedder,
        )
    except errors.TeamloreError:
        return None
    return embedder


def adjudication_vectors(ctx: OpContext, owner: OwnerContext, document: object) -> None:
    """Before an adjudication result is checked (its recall rerun, which reads stored vectors
    only): when the task it answers was ranked with embeddings (`recall-hybrid-rrf@2`), the
    owner's approved and candidate vectors brought up to date by the embedder configured now
    (`recall_embedder`; a model changed since the drafts were staged ranks otherwise, and the
    rerun is refused as stale), so the rerun ranks as the task did over what the team knows now
    (an entry a `git pull` brought in, alike only in meaning, included). A task ranked by words
    alone is rerun by words alone: nothing is embedded, no model loads."""
    from teamlore.memory.extraction.dedup import RECALL_HYBRID_VERSION
    from teamlore.memory.extraction.tasks import find_task

    task_id = document.get("taskId") if isinstance(document, dict) else None
    task = find_task(owner.state, task_id) if isinstance(task_id, str) else None
    if task is None or task.kind != "adjudication" or task.status not in ("pending", "claimed"):
        return  # a replay answers with the recorded outcome; an ended task is refused
    if task.binding.get("recallAlgorithmVersion") == RECALL_HYBRID_VERSION:
        recall_embedder(ctx, owner)
