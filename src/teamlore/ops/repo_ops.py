"""`repo.show`: the commit or path behind a piece of evidence, as `git show` renders it, from the
caller's worktree (read-only, local). CLI-only (no MCP tool): the review page links commit and
path evidence here; agents already have git.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, model_validator

from teamlore.core import errors
from teamlore.core.strict import STRICT
from teamlore.ops.registry import OpContext, operation


class ShowRequest(BaseModel):
    model_config = STRICT

    commit: str | None = Field(
        None, description="A commit hash (full or ≥ 7 digits): `git show` of it."
    )
    path: str | None = Field(
        None, max_length=4096, description="A repository-relative path: its recent history."
    )

    @model_validator(mode="after")
    def _one(self) -> ShowRequest:
        if (self.commit is None) == (self.path is None):
            raise ValueError("give either commit or path")
        return self


@operation("repo.show", input_model=ShowRequest, side_effect="read")
def repo_show(ctx: OpContext, request: ShowRequest) -> dict[str, Any]:
    """Show a commit (git show) or the recent history of a path in this worktree."""
    from teamlore.ops.owner import resolve_owner
    from teamlore.repo.show import path_history, show_commit

    root = resolve_owner(ctx).worktree_root
    if request.commit is not None:
        return show_commit(root, request.commit)
    if request.path is None:  # pragma: no cover - the validator guarantees one of them
        raise errors.TeamloreError(errors.INVALID_ARGUMENT, "give either commit or path")
    return path_history(root, request.path)
