"""`memory.list`, `memory.show`: browse the reviewed team memory of this worktree (read-only).

Both read the approved projection (brought up to date first, like search), so they list exactly
what `memory.search` searches: entries, scenes, doctrine and skills. CLI-only (no MCP tool):
agents find memory with `threadshare_memory_search`; people browse it in `teamlore ui`.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from teamlore.core import errors
from teamlore.core.shapes.strict import STRICT
from teamlore.ops.owner import open_owner
from teamlore.ops.registry import OpContext, operation

DocumentKind = Literal["entry", "scene", "doctrine", "skill"]
# doctrine first: it is what every agent reads first, then scenes, skills and the entries
KIND_ORDER = "CASE kind WHEN 'doctrine' THEN 0 WHEN 'scene' THEN 1 WHEN 'skill' THEN 2 ELSE 3 END"


class ListRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kind: DocumentKind | None = Field(None, description="Only this kind of document.")
    include_deprecated: bool = Field(False, alias="includeDeprecated")


class ShowRequest(BaseModel):
    model_config = STRICT

    kind: DocumentKind
    id: str = Field(min_length=1, max_length=256)


def _memory_path(path: str) -> str:
    from teamlore.memory.store.layout import MEMORY_ROOT

    return f"{MEMORY_ROOT}/{path}"


# the columns every listed or shown document starts with, in the order _document reads them
_DOCUMENT_COLUMNS = "kind, entry_id, entry_type, status, superseded_by, path, title"


def _document(row: Any) -> dict[str, Any]:
    """One document's summary from a row that starts with _DOCUMENT_COLUMNS."""
    return {
        "id": row[1],
        "type": row[0],
        "entryType": row[2],
        "status": row[3],
        "supersededBy": row[4],
        "path": _memory_path(row[5]),
        "title": row[6],
    }


# a listed document's summary, in terminal cells (a Chinese character takes two)
SUMMARY_CELLS = 120


def _summary(title: str | None, body: str | None) -> str:
    """What a listed document is about, in one line: its headline (title, else its body's
    first sentence), cut between words and marked `…`. An entry has no title: without this a
    list of Chinese entries is a list of ids that tell them apart by a hash."""
    from teamlore.core.text.excerpts import excerpt, without_markup
    from teamlore.memory.store.projection_rows import headline

    return excerpt(without_markup(headline(title or "", body or "")), SUMMARY_CELLS)


@operation("memory.list", input_model=ListRequest, side_effect="read")
def memory_list(ctx: OpContext, request: ListRequest) -> dict[str, Any]:
    """List the reviewed memory documents of this worktree (doctrine, scenes, skills, entries),
    and the files of the tree that could not be read (`diagnostics`)."""
    with open_owner(ctx) as owner:
        owner.sync_projection()
        identity, conn = owner.identity, owner.state
        generation = conn.execute(
            "SELECT generation, coverage, diagnostics_json FROM approved_projection "
            "WHERE repository_key = ? AND worktree_key = ?",
            (identity.repository_key, identity.worktree_key),
        ).fetchone()
        rows = conn.execute(
            f"SELECT {_DOCUMENT_COLUMNS}, body_text "
            "FROM approved_entries WHERE repository_key = ? AND worktree_key = ? "
            "AND (? IS NULL OR kind = ?) AND (? OR status = 'approved') "
            f"ORDER BY {KIND_ORDER}, status = 'deprecated', entry_id",
            (
                identity.repository_key,
                identity.worktree_key,
                request.kind,
                request.kind,
                int(request.include_deprecated),
            ),
        ).fetchall()
    documents = [{**_document(row), "summary": _summary(row[6], row[7])} for row in rows]
    counts: dict[str, int] = {}
    for document in documents:
        counts[document["type"]] = counts.get(document["type"], 0) + 1
    return {
        "generation": int(generation[0]) if generation else 0,
        "coverage": generation[1] if generation else "partial",
        # the files the projection could not read and why (repository-relative), as
        # `memory status` lists them: what coverage `partial` leaves out
        "diagnostics": orjson.loads(generation[2]) if generation else [],
        "counts": counts,
        "documents": documents,
    }


@operation("memory.show", input_model=ShowRequest, side_effect="read")
def memory_show(ctx: OpContext, request: ShowRequest) -> dict[str, Any]:
    """Show one reviewed memory document: its front matter and body."""
    with open_owner(ctx) as owner:
        owner.sync_projection()
        identity, conn = owner.identity, owner.state
        row = conn.execute(
            f"SELECT {_DOCUMENT_COLUMNS}, "
            "frontmatter_json, body_text FROM approved_entries WHERE repository_key = ? "
            "AND worktree_key = ? AND kind = ? AND entry_id = ?",
            (identity.repository_key, identity.worktree_key, request.kind, request.id),
        ).fetchone()
    if row is None:
        raise errors.TeamloreError(
            errors.MEMORY_DOCUMENT_NOT_FOUND,
            f"no reviewed {request.kind} {request.id} in this worktree",
        )
    return {
        **_document(row),
        "frontmatter": orjson.loads(row[7]),
        "body": row[8],
    }
