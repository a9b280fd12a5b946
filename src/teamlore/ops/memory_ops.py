"""Team-memory operations: init, status, search, lint.

The owner (repository + worktree) comes from the caller's context — the CLI's cwd or
`--repository`, the MCP server's launch directory — never from request arguments.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.strict import STRICT
from teamlore.ops.registry import OpContext, operation
from teamlore.repo.binding import RepositoryIdentity, resolve_repository


class _Strict(BaseModel):
    model_config = STRICT


def owner(ctx: OpContext) -> RepositoryIdentity:
    return resolve_repository(ctx.cwd, home=ctx.home)


@contextmanager
def owner_state(
    ctx: OpContext, *, sync: bool = True
) -> Iterator[tuple[RepositoryIdentity, sqlite3.Connection]]:
    """The caller's worktree and the state DB, with the approved projection brought up to date
    first (glossary: projection). With `sync=False` a
    missing or unsafe memory tree is left for the caller to report instead of refused."""
    from teamlore.memory.store.layout import MEMORY_ROOT
    from teamlore.memory.store.projection import sync_approved_projection
    from teamlore.ops.stores import worktree_state

    with worktree_state(ctx) as (identity, conn):
        tree = identity.worktree_root / MEMORY_ROOT
        if sync or (tree.is_dir() and not tree.is_symlink()):
            sync_approved_projection(
                conn,
                repository_key=identity.repository_key,
                worktree_key=identity.worktree_key,
                worktree_root=identity.worktree_root,
            )
        yield identity, conn


class InitRequest(_Strict):
    pass


@operation("memory.init", input_model=InitRequest, side_effect="repo-write")
def memory_init(ctx: OpContext, request: InitRequest) -> dict[str, Any]:
    """Create the .threadshare/memory skeleton in this worktree (idempotent)."""
    from teamlore.memory.store.layout import init_tree

    identity = owner(ctx)
    created = init_tree(identity.worktree_root)
    return {
        "worktree": identity.worktree_root.name,
        "repositoryKey": identity.repository_key,
        "worktreeKey": identity.worktree_key,
        "created": [_relative(p, identity.worktree_root) for p in created],
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
    "coverage, counts of entries by status and candidates by state, lint summary.",
)
def memory_status(ctx: OpContext, request: StatusRequest) -> dict[str, Any]:
    """Show the team memory's owner, projection generation/coverage, counts and lint summary."""
    from teamlore.memory.status import memory_status as compute

    with owner_state(ctx, sync=False) as (identity, conn):
        result = compute(
            conn,
            repository_key=identity.repository_key,
            worktree_key=identity.worktree_key,
            worktree_root=identity.worktree_root,
        )
    return result.model_dump(mode="json", by_alias=True)


class SearchRequest(_Strict):
    query: str = Field(min_length=1, max_length=4096, description="Words, identifiers or Chinese.")
    limit: int = Field(10, ge=1, le=100)


@operation(
    "memory.search",
    input_model=SearchRequest,
    side_effect="read",
    capability="team-read",
    mcp_tool="threadshare_memory_search",
    description="Search this repository's reviewed team memory (entries, scenes, doctrine, "
    "skills) with BM25. Returns generation and coverage with the results.",
)
def memory_search(ctx: OpContext, request: SearchRequest) -> dict[str, Any]:
    """Search the reviewed team memory of this worktree."""
    from teamlore.memory.store.search import search_memory

    with owner_state(ctx) as (identity, conn):
        result = search_memory(
            conn,
            repository_key=identity.repository_key,
            worktree_key=identity.worktree_key,
            query=request.query,
            limit=request.limit,
        )
    return result.model_dump(mode="json", by_alias=True)


class LintRequest(_Strict):
    paths: list[str] = Field(default_factory=list, description="Files to lint; default: the tree.")


def _lint_root(ctx: OpContext) -> Path:
    """Where linted files are shown relative to: their worktree, or the current directory when
    they are not in a git repository (a draft anywhere can be linted before it is copied in)."""
    try:
        return owner(ctx).worktree_root
    except errors.TeamloreError as err:
        if err.code not in (errors.NOT_A_GIT_REPOSITORY.code, errors.BARE_REPOSITORY.code):
            raise
        return ctx.cwd


@operation("memory.lint", input_model=LintRequest, side_effect="read")
def memory_lint(ctx: OpContext, request: LintRequest) -> dict[str, Any]:
    """Lint the memory tree (or the given files) for secrets, private references and format."""
    from teamlore.memory.store.lint import lint_paths, lint_tree

    if request.paths:
        paths = [p if p.is_absolute() else ctx.cwd / p for p in map(Path, request.paths)]
        report = lint_paths(_lint_root(ctx), paths)
    else:
        report = lint_tree(owner(ctx).worktree_root)
    result: dict[str, Any] = report.model_dump(mode="json", by_alias=True)
    result["blocked"] = report.blocked
    return result
