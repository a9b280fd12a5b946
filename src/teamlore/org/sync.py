"""`org sync`: bring the org index up to date with each repository's committed memory tree.

Per repository (docs/org.md "Sync"):
- HEAD's memory tree id equal to the one synced last, and every document embedded (when this
  sync embeds) → nothing is read (`unchanged`);
- else the files whose blob id changed (or that lack this embedder's vectors) are read, linted
  (`memory.store.lint`, the rules every promotion passes) and parsed
  (`projection.parse_document`, the projection's parser); files gone from the tree are deleted.
  All of it is one transaction of the store;
- a file lint blocks (a secret, a session id, a local path, a broken format) skips the whole
  repository with its findings: the index keeps what it had of it, nothing of the new tree;
- a clone that vanished (directory gone, no longer a git repository) or that git cannot be
  started in (a folder of mode 000) is reported `missing` with why, keeps its indexed
  documents, and does not stop the others;
- the repository's name is its identity in the index (its documents, `--repository`); its
  public remote is asked again each time and recorded when it changed (a remote added after
  `org add`, a repository moved): the documents stay under the name, none lost, none twice;
- the commit recorded is HEAD's whenever the index holds HEAD's memory, also when only the
  commit moved; one that HEAD's history no longer holds (a force-push, a rebase, an amend) is
  reported as replaced.

The whole run holds the store's sync lock, so two syncs (two processes, two machines) take
turns and the index is always some sync's complete result per repository. When the index itself
fails part-way (its database lost), the repositories synced before stay synced, and the run says
which (`SyncStopped`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from teamlore.core import errors
from teamlore.core.analyzer import analyze
from teamlore.core.failpoints import failpoint
from teamlore.core.secrets import scrub
from teamlore.core.timeutil import now_instant
from teamlore.memory.store.frontmatter import MemoryFormatError
from teamlore.memory.store.lint import DocumentKind, Finding, lint_bytes
from teamlore.memory.store.projection_rows import document_text, headline, parse_document
from teamlore.memory.store.tree_reader import Kind
from teamlore.memory.store.vectors import embed_in_batches
from teamlore.models.embeddings import Embedder
from teamlore.org import reader
from teamlore.org.store import Document, OrgStore, Repository

Outcome = Literal["unchanged", "synced", "missing", "skipped"]
Progress = Callable[[int, int, str], None]


@dataclass(slots=True)
class RepositorySync:
    repository: str
    outcome: Outcome
    added: int = 0
    changed: int = 0
    deleted: int = 0
    documents: int = 0
    # the commit the index holds for the repository after this sync (None: nothing yet); for
    # one skipped or missing, the one synced before, never the HEAD it did not index
    commit: str | None = None
    head_commit: str | None = None  # the clone's HEAD this sync read (None: no clone to read)
    problem: str | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    embedded: bool = True  # False: the embedder failed; the words path still finds them
    remote: str | None = None  # the public remote now
    remote_changed: bool = False  # since the last sync (or `org add`)
    previous_remote: str | None = None  # before this sync, when it changed
    # the commit indexed before, which HEAD's history no longer holds: this sync moved on
    replaced_commit: str | None = None


class SyncStopped(Exception):
    """The index itself failed part-way through a sync (its database lost, a disk full): the
    repositories synced before it (each committed on its own, so they stay synced) and the
    names of those it did not finish, the one in progress first (its changes rolled back)."""

    def __init__(
        self, cause: errors.TeamloreError, done: list[RepositorySync], left: list[str]
    ) -> None:
        super().__init__(cause.message)
        self.cause, self.done, self.left = cause, done, left


def sync_org(
    store: OrgStore,
    embedder: Embedder | None,
    *,
    holder: str,
    wait_seconds: float,
    progress: Progress | None = None,
    each: Callable[[RepositorySync], None] | None = None,
    waiting: Callable[[str], None] | None = None,
) -> list[RepositorySync]:
    """Sync every repository; a clone that cannot be read is its own result, never the run's
    end. A failure of the index after its repositories were listed is SyncStopped. `each`
    takes each repository's result as soon as it is committed; `waiting` is told who holds
    the index's sync lock when this sync starts to wait for it."""
    results: list[RepositorySync] = []
    repositories: list[Repository] | None = None
    try:
        with store.sync_lock(wait_seconds, holder, waiting):
            repositories = store.repositories()
            for done, repository in enumerate(repositories):
                if progress is not None:
                    progress(done, len(repositories), repository.name)
                results.append(sync_repository(store, repository, embedder))
                if each is not None:
                    each(results[-1])
                failpoint("org.sync.repository-done")
            if progress is not None:
                progress(len(repositories), len(repositories), "done")
    except errors.TeamloreError as failed:
        if repositories is None:  # before any repository: the refusal alone says it all
            raise
        left = [r.name for r in repositories[len(results) :]]
        raise SyncStopped(failed, results, left) from failed
    return results


def sync_repository(
    store: OrgStore, repository: Repository, embedder: Embedder | None
) -> RepositorySync:
    clone = Path(repository.path)
    try:
        commit, tree = reader.head_state(clone)
    except reader.RepositoryGone as gone:
        repository.state, repository.problem = "missing", gone.why
        store.record(repository)
        return RepositorySync(
            repository.name,
            "missing",
            documents=repository.documents,
            commit=repository.commit,
            problem=gone.why,
            remote=repository.remote,
        )
    noted = _identity_changes(clone, repository, commit)
    # no memory tree: the same HEAD decides (a symlink in its place is a new commit, not a tree)
    same = tree == repository.tree and (tree is not None or commit == repository.commit)
    # documents a `--lexical` sync (or another model) left without this embedder's vectors
    unembedded = store.unembedded(repository.name, embedder.space.key) if embedder else set()
    if same and repository.state == "ok" and not unembedded:
        if noted.remote_changed or commit != repository.commit:
            repository.commit = commit  # HEAD's memory is what the index holds
            store.record(repository)
        return replace(noted, outcome="unchanged", documents=repository.documents, commit=commit)
    stored = store.stored_blobs(repository.name)
    try:
        files = reader.list_tree(clone, commit)  # without a memory tree: a symlink in its place?
        changed = [f for f in files if stored.get(f.path) != f.blob or f.path in unembedded]
        documents, texts, findings = _read(clone, repository.name, changed)
    except errors.TeamloreError as failure:  # git cannot read it: this repository only
        repository.state, repository.problem = "skipped", reader.problem_of(failure)
        store.record(repository)
        return replace(
            noted,
            outcome="skipped",
            documents=repository.documents,
            commit=repository.commit,  # the index keeps the commit it had
            problem=repository.problem,
            replaced_commit=None,
        )
    deleted = sorted(stored.keys() - {f.path for f in files})
    blocking = [f for f in findings if f.severity == "block"]
    if blocking:
        repository.state = "skipped"
        blocked = len({f.file for f in blocking})
        repository.problem = f"lint blocks {blocked} file{'' if blocked == 1 else 's'}"
        repository.findings = [_as_served(f) for f in blocking]
        store.record(repository)
        return replace(
            noted,
            outcome="skipped",
            documents=repository.documents,
            commit=repository.commit,  # the index keeps the commit it had
            problem=repository.problem,
            findings=repository.findings,
            replaced_commit=None,
        )
    embedded = _embed(documents, texts, embedder)
    repository.state, repository.problem, repository.findings = "ok", None, []
    repository.commit, repository.tree, repository.synced_at = commit, tree, now_instant()
    store.apply(repository, documents, deleted)
    added = sum(1 for d in documents if d.path not in stored)
    return replace(
        noted,
        outcome="synced",
        added=added,
        changed=len(documents) - added,
        deleted=len(deleted),
        documents=len(files),
        commit=commit,
        embedded=embedded,
    )


def _identity_changes(clone: Path, repository: Repository, head: str) -> RepositorySync:
    """The result's start: the clone's public remote now (set on `repository`, recorded with
    what this sync records) and, when HEAD moved, whether the commit indexed before is still in
    its history. The name stays the repository's identity whatever its remote says."""
    remote = reader.public_remote(clone)
    before = scrub(repository.remote) if repository.remote else repository.remote  # shown too
    repository.remote = remote
    replaced = None
    moved = repository.commit is not None and repository.commit != head
    if moved and reader.commit_state(clone, repository.commit or "") == "not-in-history":
        replaced = repository.commit
    return RepositorySync(
        repository.name,
        "unchanged",
        head_commit=head,
        remote=remote,
        remote_changed=remote != before,
        previous_remote=before if remote != before else None,
        replaced_commit=replaced,
    )


def _read(
    clone: Path, name: str, files: list[reader.TreeFile]
) -> tuple[list[Document], list[str], list[Finding]]:
    """The documents of these files, the text each is embedded by, and the lint findings."""
    findings: list[Finding] = []
    texts: list[str] = []
    readable = []
    for file in files:
        refused = reader.refusal(file)
        if refused is None:
            readable.append(file)
        else:
            findings.append(_finding(*refused, file.path, 0))
    contents = reader.read_blobs(clone, [f.blob for f in readable])
    documents = []
    for file in readable:
        data = contents[file.blob]
        linted = lint_bytes(data, path=file.path, kind=cast(DocumentKind, file.kind))
        findings += linted
        try:
            parsed = parse_document(cast(Kind, file.kind), data, file.path)
        except MemoryFormatError as exc:
            if not any((f.rule, f.line) == (exc.reason, exc.line or 0) for f in linted):
                findings.append(_finding(exc.reason, exc.why, file.path, exc.line or 0))
            continue
        text = document_text(
            parsed.entry_id, parsed.title, parsed.entry_type, parsed.frontmatter, parsed.body
        )
        texts.append(text)
        documents.append(
            Document(
                repository=name,
                path=file.path,
                kind=file.kind,
                doc_id=parsed.entry_id,
                blob=file.blob,
                entry_type=parsed.entry_type,
                status=parsed.status,
                title=parsed.title,
                body=parsed.body,
                analyzed=analyze(text),
            )
        )
    return documents, texts, findings


def _as_served(finding: Finding) -> dict[str, Any]:
    """A finding as the index stores it and `org status` serves it to every token's holder: a
    secret in the file's name masked as its message masks it (`entries/ghp_…[40 chars].md`)."""
    return finding.model_copy(update={"file": scrub(finding.file)}).model_dump(mode="json")


def _finding(rule: str, message: str, path: str, line: int) -> Finding:
    return Finding(rule=rule, severity="block", file=path, line=line, message=message)


def _embed(documents: list[Document], texts: list[str], embedder: Embedder | None) -> bool:
    """Give each document its vectors (whole text and headline, as memory search embeds them);
    False when the embedder failed (the documents are then stored without)."""
    if embedder is None or not documents:
        return embedder is not None
    lines = [headline(d.title, d.body) for d in documents]
    try:
        vectors = embed_in_batches(embedder, texts)
        own = [i for i, line in enumerate(lines) if line and embedder.reads(line)]
        headline_vectors = list(vectors)
        for i, blob in zip(own, embed_in_batches(embedder, [lines[i] for i in own]), strict=True):
            headline_vectors[i] = blob
    except errors.TeamloreError:
        return False
    space = embedder.space.key
    for i, doc in enumerate(documents):
        documents[i] = replace(
            doc, space=space, vector=vectors[i], headline_vector=headline_vectors[i]
        )
    return True
