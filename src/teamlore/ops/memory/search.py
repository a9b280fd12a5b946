"""The team-memory search operation (`memory.search`, MCP `threadshare_memory_search`).

Apart from the other team-memory operations (`ops/memory/store.py`) because a `teamlore memory
search` process imports only this module: its request is checked by hand and its result is built
without pydantic (docs/architecture.md, "A short CLI process"). The owner (repository +
worktree) comes from the caller's context, never from request arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from teamlore.ops.owner import open_owner
from teamlore.ops.plain_request import PlainRequest, param, refuse_long_query, utf8_text
from teamlore.ops.registry import OpContext, operation


class SearchRequest(PlainRequest):
    """`memory.search`'s request."""

    # an MCP tool's contract: its schema and lax coercions are pydantic's (ops/plain_request.py)
    contract: ClassVar[bool] = True

    # memory/store/search.py's MAX_QUERY_CHARS (not imported: an MCP server lists its tools
    # without loading the search); tests/ops hold the two equal. No lower bound: an empty
    # query is QUERY_EMPTY, as a blank one is (docs/search.md)
    max_query_chars: ClassVar[int] = 1024
    query: str = param(
        max_length=max_query_chars,
        description="Words, identifiers, a situation, or Chinese.",
        convert=utf8_text,
    )
    limit: int = param(10, ge=1, le=100)
    lexical: bool = param(
        False, description="Rank by words alone (BM25); skip the embedding ranking."
    )

    @classmethod
    def said_first(cls, payload: Mapping[str, Any]) -> None:
        refuse_long_query(payload, cls.max_query_chars)


@operation(
    "memory.search",
    input_model=SearchRequest,
    side_effect="read",
    capability="team-read",
    mcp_tool="threadshare_memory_search",
    description="Search this repository's reviewed team memory (entries, scenes, doctrine, "
    "skills) by words (BM25) and by meaning (embeddings), fused by reciprocal rank; a question "
    "or a description of the situation works as well as keywords. Returns generation, "
    "coverage (when partial, leftOut names each file it left out, unreadable or invalid, and "
    "why) and which rankings ran (paths) with the results.",
)
def memory_search(ctx: OpContext, request: SearchRequest) -> dict[str, Any]:
    """Search the reviewed team memory of this worktree."""
    from teamlore.core.analyzer import searchable_query
    from teamlore.memory.store.projection import stored_diagnostics
    from teamlore.memory.store.search import search_memory
    from teamlore.ops.memory.vectors import memory_vectors

    # refused before the projection is synced: a refusal changes nothing. This search ranks by
    # words too (search_memory's mode "hybrid" or "lexical"), so it needs a term to search for
    searchable_query(request.query)
    with open_owner(ctx, for_read=True) as owner:
        stale = owner.sync_projection()
        embedder, vector_path = memory_vectors(ctx, owner, lexical=request.lexical)
        result = search_memory(
            owner.state,
            repository_key=owner.repository_key,
            worktree_key=owner.worktree_key,
            query=request.query,
            limit=request.limit,
            embedder=embedder,
            skipped=vector_path,
        )
        answer = result.to_json()
        if result.coverage == "partial":
            # results from a partial memory hold none of these files: a person told only "try
            # other words" keeps looking for the entry a merge conflict or a rename left out
            left_out = stored_diagnostics(owner.state, owner.repository_key, owner.worktree_key)
            answer["leftOut"] = [diagnostic.to_json() for diagnostic in left_out]
    # a full disk or a read-only state dir, and the tree changed since the last sync: say so
    return {**answer, "stale": stale} if stale else answer
