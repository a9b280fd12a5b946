"""MemorySearchRequest@v1: a search over approved team memory."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from teamlore.contracts._base import ContractModel

SEARCH_REQUEST_FORMAT: Literal["threadshare-memory-search-request@v1"] = (
    "threadshare-memory-search-request@v1"
)


class MemorySearchRequest(ContractModel):
    """query 1..1024 characters, limit 1..100 (omitted: the operation's default).

    The spec's search request has no `format`; ours has one with a default, so a bare
    `{query, limit}` (the MCP tool arguments) is still a valid request.
    """

    _omit_when_none: ClassVar[frozenset[str]] = frozenset({"limit"})

    format: Literal["threadshare-memory-search-request@v1"] = SEARCH_REQUEST_FORMAT
    query: Annotated[str, Field(min_length=1, max_length=1024)]
    limit: Annotated[int, Field(ge=1, le=100, strict=True)] | SkipJsonSchema[None] = None
