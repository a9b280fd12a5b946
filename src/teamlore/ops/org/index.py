"""The org index's operations (docs/org.md).

`org.add`, `org.remove`, `org.list` and `org.sync` are local housekeeping of whoever runs the
index (CLI-only: they name clones by absolute path). `org.search` and `org.status` are the
read-only tools `org serve` exposes (capability `org`); what they return names repositories,
public remote identities and repository-relative paths, never a clone's path on disk, and to a
token's holder (`ctx.token_holder`) never the database server's address either.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator

from teamlore.contracts.formats import ORG_REPOSITORY_NAME_PATTERN, PATTERN_NAMES
from teamlore.core import errors
from teamlore.core.shapes.strict import STRICT
from teamlore.core.timeutil import now_instant
from teamlore.memory.store.search import MAX_LIMIT, MAX_QUERY_CHARS
from teamlore.ops.memory.vectors import configured_vectors
from teamlore.ops.org.stores import org_store
from teamlore.ops.registry import OpContext, operation
from teamlore.org.store import SCHEMA_VERSION, Repository, SearchFilter

if TYPE_CHECKING:
    from teamlore.org.sync import RepositorySync

REPOSITORY_NAME = ORG_REPOSITORY_NAME_PATTERN
SYNC_WAIT_SECONDS = 120.0


class _Strict(BaseModel):
    model_config = STRICT


class AddRequest(_Strict):
    path: str = Field(min_length=1, max_length=4096, description="A clone of the repository.")
    name: str | None = Field(
        None, pattern=REPOSITORY_NAME, description="Name in the index (default: the folder's)."
    )


@operation("org.add", input_model=AddRequest, side_effect="state-write")
def org_add(ctx: OpContext, request: AddRequest) -> dict[str, Any]:
    """Add a clone to the org index (its committed .threadshare/memory is indexed by org sync)."""
    import re

    from teamlore.org.reader import RepositoryGone, clone_root, head_state, public_remote

    folder = (ctx.cwd / Path(request.path).expanduser()).resolve()
    try:
        head_state(folder)
    except RepositoryGone as gone:
        if gone.error is errors.PATH_NOT_FOUND:  # its words are for a clone added, now gone
            raise errors.TeamloreError(
                errors.PATH_NOT_FOUND, f"{request.path}: no such folder; give a clone's folder"
            ) from None
        # the folder as given (`~/src/web: the clone's folder cannot be read: …`)
        raise errors.TeamloreError(gone.error, f"{request.path}: {gone.why}") from None
    clone = clone_root(folder)  # a folder inside a clone is the clone (one repository each)
    name = request.name or clone.name
    if not re.match(REPOSITORY_NAME, name):
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"the folder's name {name!r} is not {PATTERN_NAMES[REPOSITORY_NAME]}; give --name",
        )
    store = org_store(ctx)
    remote = public_remote(clone)
    # checked and added in one transaction: two `org add` at once cannot both add one clone
    store.add_repository(Repository(name, str(clone), remote, now_instant()))
    return {"repository": name, "remote": remote, "index": store.where}


class NameRequest(_Strict):
    name: str = Field(pattern=REPOSITORY_NAME, description="The repository's name in the index.")


@operation("org.remove", input_model=NameRequest, side_effect="state-write", idempotent=False)
def org_remove(ctx: OpContext, request: NameRequest) -> dict[str, Any]:
    """Remove a repository and its documents from the org index (the clone is not touched)."""
    store = org_store(ctx)
    known = {r.name: r for r in store.repositories()}
    if request.name not in known:
        raise errors.TeamloreError(
            errors.ORG_REPOSITORY_UNKNOWN, f"the org index has no repository named {request.name}"
        )
    store.remove_repository(request.name)
    return {"repository": request.name, "documentsRemoved": known[request.name].documents}


class EmptyRequest(_Strict):
    pass


@operation("org.list", input_model=EmptyRequest, side_effect="read")
def org_list(ctx: OpContext, request: EmptyRequest) -> dict[str, Any]:
    """List the org index's repositories with their clones, states and document counts."""
    store = org_store(ctx)
    return {
        "index": store.where,
        "repositories": [{**_public(r), "path": r.path} for r in store.repositories()],
    }


def _public(repository: Repository) -> dict[str, Any]:
    """What anyone may see of a repository: no path on disk. `commitState` says where the
    commit indexed stands in its clone's history now (`head`, `behind`: HEAD has moved on,
    `not-in-history`: a force-push, rebase or amend replaced it), asked of the clone's git;
    null where no clone is there to ask (a server that does not sync) or nothing is indexed."""
    from teamlore.org.reader import commit_state

    commit = repository.commit
    return {
        "name": repository.name,
        "remote": repository.remote,
        "state": repository.state,
        "commit": commit,
        "commitState": None if commit is None else commit_state(Path(repository.path), commit),
        "syncedAt": repository.synced_at,
        "documents": repository.documents,
        "problem": repository.problem,
        "findings": repository.findings,
    }


class SyncRequest(_Strict):
    wait: float = Field(
        SYNC_WAIT_SECONDS,
        ge=0,
        le=3600,
        description="Seconds to wait while another org sync holds the index.",
    )
    lexical: bool = Field(False, description="Store no embeddings (words-only search).")


@operation("org.sync", input_model=SyncRequest, side_effect="state-write")
def org_sync(ctx: OpContext, request: SyncRequest) -> dict[str, Any]:
    """Index each repository's committed memory tree: new, changed and deleted documents."""
    from teamlore.org.store import lock_holder
    from teamlore.org.sync import SyncStopped, sync_org

    store = org_store(ctx)
    embedder, vector = configured_vectors(ctx, lexical=request.lexical)
    results: list[RepositorySync] | None = None
    told = ctx.each
    try:
        results = sync_org(
            store,
            embedder,
            holder=lock_holder(),
            wait_seconds=request.wait,
            progress=ctx.progress,
            each=None if told is None else lambda result: told(_sync_result(result)),
            waiting=lambda who: _say_waiting(who, request.wait),
        )
        generation = store.generation()
    except SyncStopped as stopped:
        raise _stopped(stopped.cause, stopped.done, stopped.left) from None
    except errors.TeamloreError as failed:
        if results is None:
            raise
        raise _stopped(failed, results, []) from None
    return {
        "index": store.where,
        "generation": generation,
        "vector": vector.to_json(exclude_none=True),
        "repositories": [_sync_result(result) for result in results],
    }


def _say_waiting(holder: str, wait: float) -> None:
    """One line on stderr (whatever the format: stdout stays the result's) when this sync starts
    waiting for another's lock, so a sync waiting up to `--wait` seconds is not silent."""
    print(
        f"teamlore org sync: waiting for {holder} (another org sync), up to {wait:g} s …",
        file=sys.stderr,
        flush=True,
    )


def _sync_result(result: RepositorySync) -> dict[str, Any]:
    from dataclasses import asdict

    return {_camel(k): v for k, v in asdict(result).items()}


def _stopped(
    cause: errors.TeamloreError, done: list[RepositorySync], left: list[str]
) -> errors.TeamloreError:
    """The failure that stopped a sync, with what it had done (docs/org.md "Sync"): `details`
    `repositories` holds the results of the repositories finished before it (committed, so
    they stay synced), `notSynced` the names of the others, the one in progress first."""
    stopped = errors.TeamloreError(
        cause.error,
        cause.message,
        **cause.details,
        repositories=[_sync_result(result) for result in done],
        notSynced=left,
    )
    return stopped.advising(cause.remedy)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


Kind = Literal["entry", "scene", "doctrine", "skill"]


class SearchRequest(_Strict):
    query: str = Field(
        max_length=MAX_QUERY_CHARS,
        description="Words, identifiers, a question or a situation; Chinese works too.",
    )
    limit: int = Field(10, ge=1, le=MAX_LIMIT)
    repository: list[Annotated[str, Field(max_length=100)]] = Field(
        default_factory=list, max_length=100, description="Only these repositories."
    )
    kind: list[Kind] = Field(default_factory=list, max_length=4, description="Only these kinds.")
    lexical: bool = Field(False, description="Rank by words alone; skip the embedding ranking.")

    @field_validator("query", mode="before")
    @classmethod
    def _searchable_length(cls, value: Any) -> Any:
        """Over the limit, said as the analyzer says a word too long to search (pydantic's
        `String should have at most 1024 characters` names no query)."""
        if isinstance(value, str) and len(value) > MAX_QUERY_CHARS:
            raise ValueError(
                f"too long to search: {len(value):,} characters (at most {MAX_QUERY_CHARS:,})"
            )
        return value


@operation(
    "org.search",
    input_model=SearchRequest,
    side_effect="read",
    capability="org",
    mcp_tool="threadshare_org_search",
    description="Search the reviewed team memory of every repository in this organisation's "
    "index by words and by meaning (the ranking of threadshare_memory_search); each result "
    "names its repository and its path inside it. Filter by repository names and kinds.",
)
def org_search(ctx: OpContext, request: SearchRequest) -> dict[str, Any]:
    """Search the reviewed memory of every repository in the org index."""
    with _told_as_the_caller_may_be(ctx):
        return _search(ctx, request)


def _search(ctx: OpContext, request: SearchRequest) -> dict[str, Any]:
    from teamlore.org.search import search_org

    store = org_store(ctx)
    if request.repository:  # a misspelt name would otherwise read as "no matching memory"
        known = {r.name for r in store.repositories()}
        unknown = [name for name in request.repository if name not in known]
        if unknown:
            raise errors.TeamloreError(
                errors.ORG_REPOSITORY_UNKNOWN,
                f"the org index has no repository named {', '.join(unknown)}",
            )
    embedder, vector = configured_vectors(ctx, lexical=request.lexical)
    result = search_org(
        store,
        request.query,
        limit=request.limit,
        where=SearchFilter(tuple(request.repository), tuple(request.kind)),
        embedder=embedder,
        skipped=vector,
    )
    return result.model_dump(mode="json", by_alias=True)


@operation(
    "org.status",
    input_model=EmptyRequest,
    side_effect="read",
    capability="org",
    mcp_tool="threadshare_org_status",
    description="The organisation's memory index: its repositories (name, public remote, "
    "state, commit synced, document count, why one was not indexed), document counts and "
    "where the index lives.",
)
def org_status(ctx: OpContext, request: EmptyRequest) -> dict[str, Any]:
    """Show the org index: repositories, their sync state and document counts."""
    with _told_as_the_caller_may_be(ctx):
        store = org_store(ctx)
        repositories = store.repositories()
        return {
            "backend": store.backend,
            "index": store.public_where if ctx.token_holder else store.where,
            "schemaVersion": SCHEMA_VERSION,
            "generation": store.generation(),
            **store.counts(),
            "repositories": [_public(r) for r in repositories],
        }


DATABASE_WITHHELD = (
    "the org index's database cannot be used right now (the org server's log says why)"
)
WITHHELD_NEXT = "Try again later; if it lasts, tell whoever runs the org server."


@contextmanager
def _told_as_the_caller_may_be(ctx: OpContext) -> Iterator[None]:
    """ORG_DATABASE_UNAVAILABLE names the server's address and libpq's reason (which may name
    the host): a token's holder is told only that the database cannot be used, and the org
    server's log (stderr) gets the whole refusal, as for its 503s."""
    try:
        yield
    except errors.TeamloreError as err:
        if not ctx.token_holder or err.error is not errors.ORG_DATABASE_UNAVAILABLE:
            raise
        print(f"teamlore org serve: {err.code}: {err.message}", file=sys.stderr)
        raise errors.TeamloreError(err.error, DATABASE_WITHHELD).advising(WITHHELD_NEXT) from None
