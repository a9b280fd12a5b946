"""The org index's storage, behind one small interface (docs/org.md "Storage").

Two backends hold the same tables: embedded SQLite (`org.sqlite3` under the state dir, the
default: one machine needs nothing) and PostgreSQL >= 15 (`--database postgresql://…` or
`TEAMLORE_ORG_DATABASE`: a team server the people who run it already back up). Both store the
documents' text already analyzed by `core.analyzer` (so Chinese is found by the same unigrams and
bigrams everywhere), their embedding vectors quantized as memory search stores them, the
repositories with the git ids they were synced at, and the hashes of the bearer tokens of
`org serve`. Each `apply` of one repository is one transaction; a whole `org sync` holds the
store's sync lock (a file lock, or a PostgreSQL advisory lock).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from teamlore.core import errors
from teamlore.core.analyzer import Query
from teamlore.core.secrets import scrub

Backend = Literal["sqlite", "postgresql"]
RepositoryState = Literal["new", "ok", "missing", "skipped"]

SCHEMA_VERSION = 2  # 2: a revoked token keeps its row (its name may be reused)
SYNC_LOCK_KEY = 0x7E4A_0F6C  # pg advisory lock id of `org sync` (one per database)


@dataclass(frozen=True, slots=True)
class Document:
    """One memory document of one repository, as stored."""

    repository: str
    path: str  # repository-relative
    kind: str  # entry | scene | doctrine | skill
    doc_id: str
    blob: str  # git blob id of the file
    entry_type: str | None
    status: str  # approved | deprecated
    title: str
    body: str
    analyzed: str  # core.analyzer.analyze(document_text(...))
    space: str | None = None  # embedding space of the vectors, None when not embedded
    vector: bytes | None = None  # memory.store.vectors.to_blobs form
    headline_vector: bytes | None = None


@dataclass(slots=True)
class Repository:
    name: str
    path: str  # the clone, absolute: local to the machine that syncs, never served
    remote: str | None  # for display
    added_at: str
    state: RepositoryState = "new"
    commit: str | None = None  # HEAD synced last
    tree: str | None = None  # its memory tree id
    synced_at: str | None = None
    problem: str | None = None  # why the last sync did not index it
    findings: list[dict[str, Any]] = field(default_factory=list)
    documents: int = 0


def read_repository(**row: Any) -> Repository:
    """A repository as a backend read its row, what every token's holder may be shown of it
    masked (its remote, problem and findings' file names): a row a teamlore before that
    masking wrote holds a secret whole (`github.com/ghp_…/web`), which would be served, and
    compared with the masked remote of the next sync, until that sync wrote over it."""
    for name in ("remote", "problem"):
        if row.get(name):
            row[name] = scrub(row[name])
    row["findings"] = [
        {**f, "file": scrub(f["file"])} if isinstance(f.get("file"), str) else f
        for f in row.get("findings") or []
    ]
    return Repository(**row)


class LexicalHit(NamedTuple):  # a tuple: a search builds up to a thousand of them
    doc: int  # the document's row id
    held: int  # query terms it holds
    strength: float  # BM25 (SQLite) or ts_rank (PostgreSQL): higher is better


@dataclass(frozen=True, slots=True)
class StoredHit:
    doc: int
    repository: str
    kind: str
    doc_id: str
    path: str
    entry_type: str | None
    status: str
    title: str
    body: str


@dataclass(frozen=True, slots=True)
class StoredVectors:
    """Every document's vectors in one space, in row-id order (rows without one are absent)."""

    docs: list[int]
    vectors: list[bytes]
    headline_vectors: list[bytes | None]
    flags: list[tuple[str, str, str]]  # (repository, kind, status) per row


@dataclass(frozen=True, slots=True)
class SearchFilter:
    repositories: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    include_deprecated: bool = False


@dataclass(frozen=True, slots=True)
class Token:
    name: str
    created_at: str
    revoked_at: str | None


class OrgStore(Protocol):
    backend: Backend

    @property
    def where(self) -> str:
        """Where the index is, for people: a file name, or `host:port/database` (never a
        password or a user)."""
        ...

    @property
    def public_where(self) -> str:
        """`where` as `org serve` tells a token's holder: no server address."""
        ...

    def close(self) -> None: ...

    # repositories
    def add_repository(self, repository: Repository) -> None:
        """Add it unless its clone or name is in already (`repository_taken`, checked in the
        transaction that adds it)."""
        ...

    def remove_repository(self, name: str) -> int: ...
    def repositories(self) -> list[Repository]: ...
    def record(self, repository: Repository) -> None: ...

    # documents
    def stored_blobs(self, repository: str) -> dict[str, str]: ...
    def unembedded(self, repository: str, space: str) -> set[str]:
        """Paths of the repository's documents without a vector of `space` (a `--lexical` sync
        stored none; another model made theirs)."""
        ...

    def apply(
        self, repository: Repository, upserts: list[Document], deletes: list[str]
    ) -> None: ...
    def generation(self) -> int: ...
    def stamp(self) -> tuple[str, int]:
        """(the index's random id, its generation): names one state of one index."""
        ...

    def sync_lock(
        self, wait_seconds: float, holder: str, waiting: Callable[[str], None] | None = None
    ) -> AbstractContextManager[None]:
        """The index's sync lock for the whole sync; `waiting` is told who holds it (`host pid
        N, since …`) once, when this one starts to wait for it."""
        ...

    # search
    def lexical(self, query: Query, where: SearchFilter, window: int) -> list[LexicalHit]: ...
    def hits(self, docs: list[int]) -> dict[int, StoredHit]: ...
    def vectors(self, space: str) -> StoredVectors: ...
    def counts(self) -> dict[str, Any]: ...

    # tokens of `org serve`
    def add_token(self, name: str, digest: str, created_at: str) -> None: ...
    def revoke_token(self, name: str, revoked_at: str) -> bool: ...
    def token_named(self, digest: str) -> str | None: ...
    def tokens(self) -> list[Token]: ...


# `org token create` adds a row; a revoked token keeps its own (created and revoked dates: the
# audit trail of each rotation). Both backends hold a unique index on the name of the live
# tokens (`revoked_at IS NULL`), so a live token's name is never taken: the insert does nothing.
ADD_A_TOKEN_UNLESS_ITS_NAME_IS_LIVE = "ON CONFLICT DO NOTHING"


def repository_taken(repository: Repository, taken: list[tuple[str, str, str | None]]) -> None:
    """ORG_REPOSITORY_EXISTS when `taken` (name, path, remote of the repositories that hold the
    new one's clone, name or public remote, read in the transaction that would add it) is not
    empty: a repository is in the index once, under one name, whichever clone of it is added
    (docs/org.md)."""
    if not taken:
        return
    same_clone = [name for name, path, _ in taken if path == repository.path]
    if same_clone:  # another --name does not help: the clone itself is in, under its name
        raise errors.TeamloreError(
            errors.ORG_REPOSITORY_EXISTS,
            f"the org index already has a repository for this clone ({same_clone[0]})",
        ).advising(
            f"It is in as {same_clone[0]} (`teamlore org list`); to rename it, "
            f"`teamlore org remove {same_clone[0]}`, then add it again with `--name`."
        )
    if any(name == repository.name for name, _, _ in taken):
        raise errors.TeamloreError(
            errors.ORG_REPOSITORY_EXISTS,
            f"the org index already has a repository named {repository.name}",
        )
    # another clone of one remote: its documents would be in twice, each result shown twice
    name, _, remote = taken[0]
    raise errors.TeamloreError(
        errors.ORG_REPOSITORY_EXISTS,
        f"the org index already has {remote} as {name} (another clone of it)",
    ).advising(
        f"A repository is in once, whichever clone (`teamlore org list`); to index this clone "
        f"instead, `teamlore org remove {name}` first."
    )


def sync_busy(holder: str) -> errors.TeamloreError:
    """LOCK_BUSY of a second `org sync`, naming who holds the index (`host pid N, since …`)."""
    return errors.TeamloreError(
        errors.LOCK_BUSY, f"another org sync is running ({holder})"
    ).advising(
        "Run `teamlore org sync` again when that one has ended (`--wait SECONDS` waits longer)."
    )


def token_exists(name: str) -> errors.TeamloreError:
    return errors.TeamloreError(errors.ORG_TOKEN_EXISTS, f"a live token is named {name} already")


def chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def lock_holder() -> str:
    """Who runs this sync, for a second one to be told: host and process id."""
    return f"{socket.gethostname()} pid {os.getpid()}"
