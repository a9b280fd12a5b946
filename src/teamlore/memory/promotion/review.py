"""Review: everything a person must see before a candidate may become team memory.

For each quarantined candidate of the caller's worktree (`queue.review_queue` assembles the
queue from these views and prepare's previews): its adjudication and
revision, every statement with its text, its statementTextDigest and citationsDigest (what a
PrepareRequest@v1 must echo), the assessment (provenance strength, limitations, claim support,
revision), whether a typed-fact renderer verifies it, the cited evidence resolved on this machine
(kind, public-safe display, the full commit hash or repo-relative path, excerpt, strength,
limitations), the entry-level provenance (weakest statement), limitations (union) and claim
support it would get, the public evidence that would reach git, when the candidate last changed,
and the exact files prepare would write (full preview + unified diff
against the working tree, lint findings). One `approvalDigest` per item = digest of the item
without that key: it binds all of the above. Drafts whose adjudication failed are listed apart
(`failed`) for a person to discard. Read-only: nothing is written.

Evidence resolution (`EvidenceResolver`): the state DB keeps only pointer digests of what a
statement cites. Every pointer carries the task's keyed salt (`memory.evidence`), recomputable
from the recorded chunk (owner, session key, chunk digest, and the round the task was cut in: one
of the chunk's rounds so far, `evidence.task_scope`); the resolver rebuilds the pointers of
the chunk's turns, of the commits linked to them and of the paths they wrote from the current
L0 index and matches digests — so a citation resolves exactly, or not at all (`unresolved`).
A turn cited at a revision the index no longer has keeps its identity but loses its excerpt,
date and command runs (it changed after staging).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

import orjson

from teamlore.contracts import digests
from teamlore.core import errors
from teamlore.core.secrets import sanitize_text
from teamlore.core.secrets.mask import masked_text
from teamlore.core.secrets.sanitize import (
    LOCAL_PATH_PLACEHOLDER,
    PROVIDER_PATH_PLACEHOLDER,
    SESSION_FILE_PLACEHOLDER,
    SESSION_ID_PLACEHOLDER,
    WorktreeRoots,
)
from teamlore.core.text.excerpts import excerpt as cut_excerpt
from teamlore.memory.extraction.evidence import (
    NO_DELIVERY,
    STRENGTH_RANK,
    pointer_digest,
    pointer_salt,
    task_scope,
    turn_strength,
)
from teamlore.memory.extraction.typed_facts import (
    CitedSource,
    CommandRun,
    command_fact_run,
    turn_command_runs,
    verify_statement,
)
from teamlore.memory.promotion.passages import best_support
from teamlore.repo.binding import RepositoryIdentity

REVIEW_FORMAT = "threadshare-memory-review@v1"
EXCERPT_CHARS = 280
SHOWN_KEY = 12  # characters of a session key in a pointer (`sessions show` takes a prefix)
DELIVERY_STRENGTHS = frozenset({"direct", "observed"})


# -- the text as written ---------------------------------------------------------------------------

_PLACEHOLDERS = (
    LOCAL_PATH_PLACEHOLDER,
    PROVIDER_PATH_PLACEHOLDER,
    SESSION_FILE_PLACEHOLDER,
    SESSION_ID_PLACEHOLDER,
)


# what the lint blocks in a candidate's text as staged, before sanitizing could hide it
# (rendering.py `_lint_entry`): promotion refuses such a candidate, it writes no placeholder
RAW_BLOCK_RULES = ("secret.", "session.", "path.provider-local")


def as_written(text: str, worktree_root: WorktreeRoots) -> str:
    """`text` as promotion writes it into git: local references stripped (`sanitize_text`
    with the worktree's roots: its root and the prefixes `[paths] aliases` map to it).
    Rendering writes this and review shows it, so what a person confirms is what reaches git."""
    return sanitize_text(text, worktree_root=worktree_root)


def blocked_shown(text: str, known_session_ids: AbstractSet[str] = frozenset()) -> str:
    """`text` with each reference the lint blocks as staged (`RAW_BLOCK_RULES`, and a provider
    session id this machine indexed) shown by its preview (`019a…[36 chars]`), as its `blocked`
    finding names it: promotion refuses the candidate, so review must not say such an id
    "will be written as {session-id}". Unchanged when nothing in it blocks."""
    from teamlore.core.secrets import SESSION_ID_PATTERN, redact, scan_content

    spans = sorted(
        [
            (hit.start, hit.end)
            for hit in scan_content(text)
            if hit.severity == "block" and hit.rule.startswith(RAW_BLOCK_RULES)
        ]
        + [
            found.span()
            for found in SESSION_ID_PATTERN.finditer(text)
            if found.group(0).lower() in known_session_ids
        ]
    )
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    for start, end in reversed(merged):
        text = text[:start] + redact(text[start:end]) + text[end:]
    return text


def written_notice(text: str, written: str) -> str | None:
    """One line saying how `written` (`as_written(text)`) differs from `text`, None when it
    does not: `3 local references will be written as {local-path}, 1 as {session-id}`."""
    if written == text:
        return None
    counts = [(written.count(p) - text.count(p), p) for p in _PLACEHOLDERS]
    parts = [(n, p) for n, p in counts if n > 0]
    if not parts:
        return "paths under this worktree will be written relative to it"
    (first, placeholder), rest = parts[0], parts[1:]
    noun = "reference" if first == 1 else "references"
    said = f"{first} local {noun} will be written as {placeholder}"
    return ", ".join([said, *(f"{n} as {p}" for n, p in rest)])


# -- evidence ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResolvedEvidence:
    """One cited evidence id, resolved privately. Only `to_json` output leaves the host."""

    evidence_id: str
    pointer_digest: str
    kind: str  # turn | commit | path | unresolved
    strength: str | None
    limitations: tuple[str, ...]
    commit_hash: str | None = None
    path: str | None = None
    turn_index: int | None = None
    occurred: str | None = None  # YYYY-MM-DD of a cited turn
    excerpt: str | None = None
    session_key: str | None = None  # of a cited turn
    tool: int | None = None  # the tool call (`sessions show` numbering) the excerpt is from
    part: str | None = None  # user | assistant | tool: where in the turn the excerpt is
    matched_by: tuple[str, ...] = ()  # lexical / vector: how the excerpt was found
    turn_runs: tuple[CommandRun, ...] | None = None  # None: not a turn, or changed since staging
    delivered_commits: tuple[str, ...] = ()  # direct/observed commits of a cited turn
    turn_strength: str | None = None  # a cited turn's as its delivery edges give it now

    def source(self) -> CitedSource:
        return CitedSource(self.kind, self.commit_hash, self.turn_runs)

    def display(self, public_identity: str | None) -> str:
        if self.kind == "commit":
            return f"commit {self.commit_hash}" + (
                f" @ {public_identity}" if public_identity else ""
            )
        if self.kind == "path":
            return f"path {self.path}"
        if self.kind == "turn":
            when = f" @ {self.occurred}" if self.occurred else " (changed since staging)"
            where = f"session {self.session_key[:SHOWN_KEY]} · " if self.session_key else ""
            tool = f" · tool #{self.tool}" if self.tool is not None else ""
            return f"{where}turn {self.turn_index}{tool}{when}"
        return "unresolved evidence (no longer in the local index)"

    def open_command(self) -> str | None:
        """The command that prints the excerpt's place in the transcript."""
        if self.kind != "turn" or not self.session_key or self.excerpt is None:
            return None
        tool = f" --tool {self.tool}" if self.tool is not None else ""
        return (
            f"teamlore sessions show {self.session_key[:SHOWN_KEY]} --turn {self.turn_index}{tool}"
        )

    def passage_json(self) -> dict[str, Any] | None:
        if self.kind != "turn" or self.session_key is None or self.excerpt is None:
            return None
        return {
            "sessionKey": self.session_key,
            "turn": self.turn_index,
            "part": self.part,
            "tool": self.tool,
            "matchedBy": list(self.matched_by),
        }

    def to_json(self, public_identity: str | None) -> dict[str, Any]:
        return {
            "evidenceId": self.evidence_id,
            "kind": self.kind,
            "display": self.display(public_identity),
            "commit": self.commit_hash if self.kind == "commit" else None,
            "path": self.path if self.kind == "path" else None,
            "excerpt": self.excerpt,
            "passage": self.passage_json(),
            "open": self.open_command(),
            "strength": self.strength,
            "limitations": list(self.limitations),
        }


@dataclass(slots=True)
class _TaskPointers:
    by_digest: dict[str, ResolvedEvidence] = field(default_factory=dict)
    turns: list[Any] = field(default_factory=list)  # selection.SelectedTurn
    salts: tuple[str, ...] = ()  # one per extraction round the task may have been cut in


def whole_turn_excerpt(turn: Any) -> str:
    """A turn's words as one excerpt, when no passage of it supports the statement: masked,
    then cut where excerpts are (at a word, else after a path separator), never mid-name."""
    text = masked_text(" ".join(f"{turn.user_text} — {turn.assistant_text}".split()))
    return cut_excerpt(text, EXCERPT_CHARS)


class EvidenceResolver:
    """Resolves evidence_refs rows of one owner (cached per extraction task)."""

    def __init__(
        self,
        state: sqlite3.Connection,
        index: sqlite3.Connection,
        identity: RepositoryIdentity,
        *,
        home: Path | None = None,
    ) -> None:
        self._state = state
        self._index = index
        self._identity = identity
        self._home = home
        self._tasks: dict[str, _TaskPointers] = {}
        self._roots: tuple[str, ...] | None = None

    @property
    def roots(self) -> tuple[str, ...]:
        """The owner's worktree roots text is sanitized against: its root and the prefixes the
        `[paths] aliases` map to it (`repo.worktrees.worktree_roots`), read once."""
        if self._roots is None:
            from teamlore.repo.worktrees import worktree_roots

            self._roots = worktree_roots(self._identity.worktree_root, self._home)
        return self._roots

    def _task(self, task_id: str) -> _TaskPointers:
        if task_id in self._tasks:
            return self._tasks[task_id]
        from teamlore.memory.extraction.selection import load_turns

        found = _TaskPointers()
        self._tasks[task_id] = found
        row = self._state.execute(
            "SELECT c.session_key, c.turn_range, c.chunk_digest, c.extraction_round FROM tasks t "
            "JOIN chunks c ON c.chunk_ref = t.chunk_ref WHERE t.task_id = ? "
            "AND t.repository_key = ? AND t.worktree_key = ?",
            (task_id, self._identity.repository_key, self._identity.worktree_key),
        ).fetchone()
        if row is None:
            return found
        owner = {
            "repositoryKey": self._identity.repository_key,
            "worktreeKey": self._identity.worktree_key,
        }
        # the chunk records only its current round, and a task was cut in one of the rounds up
        # to it (a candidate of an earlier round outlives a put-back: a sibling, or a draft
        # adjudicated after it): its pointers carry that round's salt, no other one matches
        found.salts = tuple(
            pointer_salt(task_scope(owner, row[0], row[2], round_), self._home)
            for round_ in range(int(row[3]), -1, -1)
        )
        start, _, end = str(row[1]).partition("-")
        found.turns = load_turns(
            self._index, self._identity, row[0], list(range(int(start), int(end) + 1))
        )
        for salt in found.salts:
            for turn in found.turns:
                for edge in turn.edges:
                    pointer = {
                        "kind": "commit",
                        "repositoryKey": self._identity.repository_key,
                        "commitHash": edge.commit_hash,
                        "salt": salt,
                    }
                    found.by_digest.setdefault(
                        pointer_digest(pointer),
                        ResolvedEvidence("", "", "commit", None, (), commit_hash=edge.commit_hash),
                    )
                for path in turn.written_paths:
                    pointer = {
                        "kind": "path",
                        "worktreeKey": self._identity.worktree_key,
                        "path": path,
                        "salt": salt,
                    }
                    found.by_digest.setdefault(
                        pointer_digest(pointer),
                        ResolvedEvidence("", "", "path", None, (), path=path),
                    )
        return found

    def _turn(
        self,
        found: _TaskPointers,
        ref: Mapping[str, Any] | sqlite3.Row,
        statement: str,
        tool: int | None,
    ) -> ResolvedEvidence | None:
        session_key, revision = ref["session_key"], ref["revision"]
        if session_key is None or revision is None:
            return None
        for salt, turn in product(found.salts, found.turns):
            pointer = {
                "kind": "turn",
                "sessionKey": session_key,
                "turnIndex": turn.index,
                "revision": revision,
                "salt": salt,
            }
            if pointer_digest(pointer) != ref["pointer_digest"]:
                continue
            if turn.revision != revision:
                # its entry names no commit of it (no `delivered_commits`): a turn that
                # delivered nothing, whatever it was staged with
                return ResolvedEvidence(
                    "", "", "turn", None, (), turn_index=turn.index, turn_strength=NO_DELIVERY
                )
            # a secret someone typed or a tool printed is masked (core/secrets/mask.py), as in
            # the transcript recall hands an agent: an excerpt is on a screen, in a CI log
            # a command-exit fact shows the run it is about, whichever run its words match best
            run = command_fact_run(statement, turn.tools, worktree_root=self.roots, recorded=tool)
            support = best_support(statement, turn, self._home, tool=run) if statement else None
            # a passage was masked before windowing
            excerpt = whole_turn_excerpt(turn) if support is None else support.passage.shown()
            delivered = sorted(
                {e.commit_hash for e in turn.edges if e.strength in DELIVERY_STRENGTHS}
            )
            return ResolvedEvidence(
                "",
                "",
                "turn",
                None,
                (),
                turn_index=turn.index,
                occurred=turn.observed_at[:10] or None,
                excerpt=sanitize_text(excerpt, worktree_root=self.roots),
                session_key=str(session_key),
                tool=support.passage.tool if support else None,
                part=support.passage.part if support else None,
                matched_by=support.matched_by if support else (),
                turn_runs=tuple(turn_command_runs(turn.tools)),
                delivered_commits=tuple(delivered),
                turn_strength=turn_strength(e.strength for e in turn.edges),
            )
        return None

    def resolve(
        self, ref: Mapping[str, Any] | sqlite3.Row, statement: str = "", tool: int | None = None
    ) -> ResolvedEvidence:
        """One citation of `statement`: a cited turn's excerpt is its passage that best
        supports the statement (`passages.best_support`), a command fact's the run it names
        (`tool`, the statement's own)."""
        found = self._task(str(ref["task_id"]))
        resolved = self._turn(found, ref, statement, tool) or found.by_digest.get(
            str(ref["pointer_digest"])
        )
        limitations = tuple(orjson.loads(ref["limitations_json"] or "[]"))
        base = resolved or ResolvedEvidence("", "", "unresolved", None, ())
        return ResolvedEvidence(
            evidence_id=str(ref["evidence_id"]),
            pointer_digest=str(ref["pointer_digest"]),
            kind=base.kind,
            strength=ref["strength"],
            limitations=limitations,
            commit_hash=base.commit_hash,
            path=base.path,
            turn_index=base.turn_index,
            occurred=base.occurred,
            excerpt=base.excerpt,
            session_key=base.session_key,
            tool=base.tool,
            part=base.part,
            matched_by=base.matched_by,
            turn_runs=base.turn_runs,
            delivered_commits=base.delivered_commits,
            turn_strength=base.turn_strength,
        )


# -- candidates ----------------------------------------------------------------------------------


@dataclass(slots=True)
class StatementView:
    statement_id: str
    text: str
    text_digest: str  # of the current text
    citations: list[ResolvedEvidence]
    citations_digest: str  # of the current evidence refs
    assessment: dict[str, Any]  # assessment doc (digest form) as stored
    typed_fact: str | None  # the renderer that verifies it now
    written: str = ""  # the text as promotion writes it (`as_written`)
    notice: str | None = None  # how `written` differs from the text (`written_notice`)

    @property
    def consistent(self) -> bool:
        """The stored assessment still describes this text and these citations."""
        return bool(
            self.assessment["statementTextDigest"] == self.text_digest
            and self.assessment["citationsDigest"] == self.citations_digest
        )

    @property
    def provenance_strength(self) -> str:
        """The stored strength while every cited evidence still resolves. Evidence gone from
        the local index (a transcript deleted, the index rebuilt) links nothing a reviewer or
        a reader of the entry can follow: then the strongest of what still resolves, and
        `unknown` when nothing does — never stronger than stored. A cited turn counts as its
        delivery edges give it (`evidence.turn_strength`), whatever it was staged with: an
        earlier teamlore staged every turn `direct`, which promotion would write over evidence
        naming no commit."""
        stored = str(self.assessment["provenanceStrength"])
        if all(c.kind not in ("unresolved", "turn") for c in self.citations):
            return stored
        left = [
            c.turn_strength if c.kind == "turn" and c.turn_strength else c.strength
            for c in self.citations
            if c.kind != "unresolved" and c.strength
        ]
        now = min(left, key=STRENGTH_RANK.__getitem__, default="unknown")
        return max(stored, now, key=STRENGTH_RANK.__getitem__)

    @property
    def support(self) -> str:
        """Claim support it has now: typed-fact, human-confirmed (valid) or unverified."""
        if self.typed_fact is not None:
            return "typed-fact"
        if self.assessment["claimSupport"] == "human-confirmed" and self.consistent:
            return "human-confirmed"
        return "unverified"


@dataclass(slots=True)
class CandidateView:
    candidate_id: str
    kind: str
    status: str
    adjudication: str
    revision: int
    content_digest: str
    payload: dict[str, Any]
    statements: list[StatementView]
    written_content: str = ""  # the content as promotion writes it (`as_written`)
    notice: str | None = None  # how `written_content` differs from the content


def load_candidate_row(
    conn: sqlite3.Connection, identity: RepositoryIdentity, candidate_id: str
) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        "SELECT candidate_id, candidate_kind, status, adjudication, revision, content_digest, "
        "payload_json FROM candidates WHERE candidate_id = ? AND repository_key = ? "
        "AND worktree_key = ?",
        (candidate_id, identity.repository_key, identity.worktree_key),
    ).fetchone()
    return row


def assessment_docs(conn: sqlite3.Connection, candidate_id: str) -> dict[str, dict[str, Any]]:
    """The stored assessments of a candidate, as assessment-digest docs, by statement id."""
    docs: dict[str, dict[str, Any]] = {}
    for row in conn.execute(
        "SELECT statement_id, citations_digest, provenance_strength, limitations_json, "
        "claim_support, assessed_by, statement_text_digest, revision FROM assessments "
        "WHERE candidate_id = ?",
        (candidate_id,),
    ):
        docs[row[0]] = {
            "candidateId": candidate_id,
            "statementId": row[0],
            "citationsDigest": row[1],
            "provenanceStrength": row[2],
            "limitations": orjson.loads(row[3]),
            "claimSupport": row[4],
            "assessedBy": row[5],
            "statementTextDigest": row[6],
            "revision": int(row[7]),
        }
    return docs


def candidate_view(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    resolver: EvidenceResolver,
    worktree_root: Path,
    known_session_ids: AbstractSet[str] = frozenset(),
) -> CandidateView:
    candidate_id = str(row[0])
    payload: dict[str, Any] = orjson.loads(row[6])
    refs: dict[str, list[sqlite3.Row]] = {}
    for ref in conn.execute(
        "SELECT * FROM evidence_refs WHERE candidate_id = ? ORDER BY statement_id, evidence_id",
        (candidate_id,),
    ):
        refs.setdefault(ref["statement_id"], []).append(ref)
    docs = assessment_docs(conn, candidate_id)

    def written(text: str) -> tuple[str, str | None]:
        """The text as promotion writes it and the notice of what changed. An entry's content
        and statements reach git sanitized, but what the lint blocks in them is shown by its
        preview, not by the placeholder sanitizing would put there: promotion refuses it
        (`blocked_shown`). A Skill writes its own body."""
        if str(row[1]) != "entry":
            return text, None
        shown = blocked_shown(text, known_session_ids)
        sanitized = as_written(shown, resolver.roots)
        return sanitized, written_notice(shown, sanitized)

    statements: list[StatementView] = []
    for statement in payload.get("statements", []):
        statement_id = str(statement["statementId"])
        own = refs.get(statement_id, [])
        tool = statement.get("tool")
        cited = [resolver.resolve(ref, str(statement["text"]), tool) for ref in own]
        citations = [
            {"evidenceId": c.evidence_id, "pointerDigest": c.pointer_digest} for c in cited
        ]
        text = str(statement["text"])
        doc = docs.get(statement_id) or {
            "candidateId": candidate_id,
            "statementId": statement_id,
            "citationsDigest": "",
            "provenanceStrength": "unknown",
            "limitations": [],
            "claimSupport": "unverified",
            "assessedBy": "deterministic",
            "statementTextDigest": "",
            "revision": 0,
        }
        written_text, notice = written(text)
        statements.append(
            StatementView(
                statement_id=statement_id,
                text=text,
                text_digest=digests.statement_text_digest(text),
                citations=cited,
                citations_digest=digests.citations_digest(citations),
                assessment=doc,
                typed_fact=verify_statement(
                    text,
                    [c.source() for c in cited],
                    worktree_root=worktree_root,
                    roots=resolver.roots,
                ),
                written=written_text,
                notice=notice,
            )
        )
    written_content, content_notice = written(str(payload.get("content", "")))
    return CandidateView(
        candidate_id=candidate_id,
        kind=str(row[1]),
        status=str(row[2]),
        adjudication=str(row[3]),
        revision=int(row[4]),
        content_digest=str(row[5]),
        payload=payload,
        statements=statements,
        written_content=written_content,
        notice=content_notice,
    )


def weakest(strengths: list[str]) -> str:
    return max(strengths, key=STRENGTH_RANK.__getitem__, default="unknown")


def entry_claim_support(supports: list[str]) -> str:
    """typed-fact | human-confirmed when all agree, else mixed (an unverified one: as if
    confirmed — the preview shows what a confirmation would write)."""
    values = {"human-confirmed" if s == "unverified" else s for s in supports}
    return values.pop() if len(values) == 1 else "mixed"


# -- the queue -----------------------------------------------------------------------------------


def statement_json(view: StatementView, public_identity: str | None) -> dict[str, Any]:
    doc = view.assessment
    if view.typed_fact is not None:
        confirmation = "not-needed (typed fact)"
    elif view.support == "human-confirmed":
        confirmation = "confirmed"
    else:
        confirmation = "required"
    return {
        "statementId": view.statement_id,
        "text": view.text,
        # what promotion writes (the digests bind `text`, which the person approves)
        "writtenText": view.written,
        "writtenNotice": view.notice,
        "statementTextDigest": view.text_digest,
        "citationsDigest": view.citations_digest,
        "assessmentRevision": doc["revision"],
        "assessmentConsistent": view.consistent,
        "provenanceStrength": view.provenance_strength,
        "limitations": list(doc["limitations"]),
        "claimSupport": view.support,
        "typedFact": view.typed_fact,
        "confirmation": confirmation,
        "evidence": [c.to_json(public_identity) for c in view.citations],
    }


def prepare_candidate_fields(view: CandidateView) -> dict[str, Any]:
    """The PrepareRequest@v1 `candidates[]` item for this candidate as it is now."""
    return {
        "candidateId": view.candidate_id,
        "expectedRevision": view.revision,
        "statements": [
            {
                "statementId": s.statement_id,
                "statementTextDigest": s.text_digest,
                "citationsDigest": s.citations_digest,
            }
            for s in view.statements
        ],
    }


def candidate_ids(conn: sqlite3.Connection, identity: RepositoryIdentity) -> list[str]:
    """The ids of every candidate of this worktree, whatever its status."""
    return [
        str(row[0])
        for row in conn.execute(
            "SELECT candidate_id FROM candidates WHERE repository_key = ? AND worktree_key = ?",
            (identity.repository_key, identity.worktree_key),
        )
    ]


# a stored `candidate_kind` as a review, confirm or PrepareRequest@v1 names it (`--kind`)
REQUEST_KIND = {"entry": "entry", "skill": "skill", "consolidation-patch": "consolidation"}


def of_another_kind(
    candidate_id: str, stored_kind: str, wanted: str, status: str = "quarantined"
) -> errors.TeamloreError:
    """CANDIDATE_NOT_FOUND for a candidate a request of kind `wanted` names that is of another
    kind. One that awaits review (`status`) does so under its own kind, so the advice names the
    commands for that kind (`memory review` alone lists entries only)."""
    its = REQUEST_KIND.get(stored_kind, stored_kind)

    def a(kind: str) -> str:
        return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"

    refusal = errors.TeamloreError(
        errors.CANDIDATE_NOT_FOUND,
        f"{candidate_id} is {a(its)} candidate, not {a(wanted)} candidate",
        candidateId=candidate_id,
        kind=its,
    )
    if status != "quarantined":
        return refusal
    return refusal.advising(
        f"Review it with `teamlore memory review --kind {its}`, then confirm it with "
        f"`teamlore memory confirm --kind {its}`."
    )


def awaiting_review(conn: sqlite3.Connection, identity: RepositoryIdentity) -> dict[str, str]:
    """Every quarantined candidate of this worktree: its id → its stored kind."""
    return {
        str(row[0]): str(row[1])
        for row in conn.execute(
            "SELECT candidate_id, candidate_kind FROM candidates WHERE repository_key = ? "
            "AND worktree_key = ? AND status = 'quarantined'",
            (identity.repository_key, identity.worktree_key),
        )
    }


def waiting_in_order(
    conn: sqlite3.Connection, identity: RepositoryIdentity
) -> tuple[list[tuple[str, str]], set[tuple[str, str, str, str]]]:
    """What awaits review now, without reviewing any candidate: every quarantined candidate of
    this worktree as (id, stored kind) in review's order (updated_at, candidate_id), and every
    statement of them a person confirmed, as (candidate id, statement id, statementTextDigest,
    citationsDigest): a review shows it `confirmed` while the digests it shows are these."""
    owner = (identity.repository_key, identity.worktree_key)
    waiting = [
        (str(row[0]), str(row[1]))
        for row in conn.execute(
            "SELECT candidate_id, candidate_kind FROM candidates WHERE repository_key = ? "
            "AND worktree_key = ? AND status = 'quarantined' ORDER BY updated_at, candidate_id",
            owner,
        )
    ]
    confirmed = {
        (str(row[0]), str(row[1]), str(row[2]), str(row[3]))
        for row in conn.execute(
            "SELECT a.candidate_id, a.statement_id, a.statement_text_digest, a.citations_digest "
            "FROM assessments a JOIN candidates c ON c.candidate_id = a.candidate_id "
            "WHERE c.repository_key = ? AND c.worktree_key = ? AND c.status = 'quarantined' "
            "AND a.claim_support = 'human-confirmed'",
            owner,
        )
    }
    return waiting, confirmed


def require_candidate(
    state: sqlite3.Connection, identity: RepositoryIdentity, candidate_id: str
) -> sqlite3.Row:
    row = load_candidate_row(state, identity, candidate_id)
    if row is None:
        raise errors.TeamloreError(
            errors.CANDIDATE_NOT_FOUND,
            f"no candidate {candidate_id} in this worktree",
            candidateId=candidate_id,
        )
    return row
