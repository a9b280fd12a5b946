"""The Writer: one claimed batch -> one model decision -> a guarded, section-level commit.

`run_writer` (one run):
1. take the Writer lock (`personal/writer.lock`): a second Writer on the same data root waits up
   to `wait_seconds`, then refuses with `LOCK_BUSY` — never two Writers at once;
2. finish interrupted commits (`commit.recover_transactions`, `commit.recover_receipts`);
3. claim a batch (one scope, one provenance class);
4. authorize before any model call: a provenance class not allowed in config quarantines the
   batch (`UNAUTHORIZED_PROVENANCE`), an unregistered project (`UNREGISTERED_PROJECT`), a scope
   not allowed (`UNAUTHORIZED_SCOPE`);
5. secret preflight per observation (`SENSITIVE_INPUT` quarantine), snapshot the documents,
   build the projection and fit it under the request cap (128 KiB; trailing observations go back
   to the queue, a single observation that cannot fit is quarantined `OVERSIZED_OBSERVATION`);
6. ask the model once; parse and validate the decision; apply the import guards;
7. apply the section operations, scan the new text for secrets, commit with CAS + receipt.

Any failure after the claim is recorded on the job (retry with backoff, dead at max attempts).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from teamlore.core import errors
from teamlore.core.canonical import sha256_hex
from teamlore.core.db import write_tx
from teamlore.core.failpoints import failpoint
from teamlore.core.lock import file_lock
from teamlore.core.paths import ensure_private_dir
from teamlore.personal import commit, documents, queue
from teamlore.personal.config import PersonalSettings
from teamlore.personal.decision import (
    RESPONSE_SCHEMA,
    SCHEMA_NAME,
    Decision,
    Forget,
    Ignore,
    MaintenanceResponse,
    PutSectionOp,
    RemoveSectionOp,
    ValidationContext,
    operations_of,
    parse_response,
    validate_response,
)
from teamlore.personal.documents import DOCUMENT_HARD_LIMIT, DOCUMENT_SOFT_BUDGET
from teamlore.personal.importing import printable_name
from teamlore.personal.model_port import PERMANENT_MODEL_CODES, DecisionModel, WriterRequest
from teamlore.personal.policy import registered_project_ids
from teamlore.personal.runtime_db import open_runtime_db
from teamlore.personal.safety import first_secret, secret_rules_in

PROMPT_VERSION = "teamlore-personal-maintenance@1"
SOURCE_KINDS = {
    "user_explicit": "user_turn",
    "agent_observation": "agent_import",
    "document_import": "document_import",
}

Outcome = Literal["idle", "committed", "ignored", "quarantined", "failed"]


def load_prompt() -> str:
    return (resources.files("teamlore.personal") / "prompts" / "maintenance.md").read_text(
        encoding="utf-8"
    )


@dataclass(frozen=True, slots=True)
class RunOutcome:
    outcome: Outcome
    job_id: str | None = None
    code: str | None = None
    job_state: str | None = None
    model_calls: int = 0
    recovered: list[str] = field(default_factory=list)
    message: str | None = None  # why it failed, for a person (e.g. the file and line to fix)

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "jobId": self.job_id,
            "code": self.code,
            "jobState": self.job_state,
            "modelCalls": self.model_calls,
            "recovered": self.recovered,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class _Member:
    id: int
    scope: str
    source: str
    observed_at: str
    text: str


@dataclass
class _Snapshot:
    data: dict[str, bytes | None]
    parsed: dict[str, documents.Document]
    hand_edited: set[str]  # documents whose file is not what the Writer last committed
    whole_file_edits: set[str]  # of those, the ones with no section digests (before schema 2)
    hand_written: set[tuple[str, str]]  # (target, section_key) of sections changed by hand
    links: dict[tuple[str, str], set[int]]  # (target, section_key) -> observation ids
    import_sources: set[int]  # linked observation ids whose source is an import


def writer_lock_path(root: Path) -> Path:
    return root / "writer.lock"


def run_writer(
    home: Path,
    model: DecisionModel,
    settings: PersonalSettings,
    *,
    force: bool = False,
    now: float | None = None,
    wait_seconds: float = 0.0,
) -> RunOutcome:
    """One Writer run. `force` claims relayed user turns without waiting for the triggers."""
    root = documents.personal_root(home)
    ensure_private_dir(root)
    with file_lock(writer_lock_path(root), wait_seconds=wait_seconds, what="the personal Writer"):
        conn = open_runtime_db(root)
        try:
            return _Run(home, root, conn, model, settings, now).run(force=force)
        finally:
            conn.close()


# how long a model call whose model states no limit may keep renewing its job's lease
_HANGING_CALL_SECONDS = 600.0


def lease_renewal_cap(model: object, lease_seconds: float) -> float:
    """How long the lease heartbeat renews a job's lease while one model call runs: the model's
    own limit for a call (`WriterModelAdapter.call_limit_s`: from its profile's timeout and
    retries) when it states one, else `_HANGING_CALL_SECONDS`; then one lease more."""
    limit = getattr(model, "call_limit_s", None) or _HANGING_CALL_SECONDS
    return float(limit) + lease_seconds


class _Run:
    def __init__(
        self,
        home: Path,
        root: Path,
        conn: sqlite3.Connection,
        model: DecisionModel,
        settings: PersonalSettings,
        now: float | None,
    ) -> None:
        self.home, self.root, self.conn, self.model = home, root, conn, model
        self.settings = settings
        self.fixed_now = now

    def now(self) -> float:
        return self.fixed_now if self.fixed_now is not None else time.time()

    def run(self, *, force: bool) -> RunOutcome:
        commit.recover_transactions(self.root)
        recovered = commit.recover_receipts(self.root, self.conn, now=self.now())
        job = queue.claim(self.conn, self.settings, now=self.now(), force=force)
        if job is None:
            return RunOutcome("idle", recovered=recovered)
        calls = 0
        try:
            refusal = self._authorize(job)
            if refusal is not None:
                queue.quarantine(self.conn, job, list(job.observation_ids), refusal, now=self.now())
                return RunOutcome("quarantined", job.id, refusal, "done", 0, recovered)
            members = self._preflight(job)
            if not members:
                return RunOutcome("quarantined", job.id, "SENSITIVE_INPUT", "done", 0, recovered)
            snapshot = self._snapshot(job)
            request, members = self._fit_request(job, members, snapshot)
            if request is None:
                return RunOutcome(
                    "quarantined", job.id, "OVERSIZED_OBSERVATION", "done", 0, recovered
                )
            calls = 1
            with self._lease_heartbeat(job):
                raw = self.model.decide(request)
            response = parse_response(raw)
            ctx = ValidationContext(
                request_id=job.id,
                batch_scope=job.scope,
                evidence_refs=frozenset(f"ev_{m.id}" for m in members),
                documents=snapshot.parsed,
                writable=frozenset(t for t in snapshot.parsed if self._writable(t)),
            )
            validate_response(response, ctx)
            _guard_imports(response, job, members, snapshot)
            new_docs = self._apply(response, snapshot)
            receipt = self._receipt(job, members, response, snapshot, new_docs)
            self._commit(job, snapshot, receipt, new_docs)
            outcome: Outcome = "committed" if new_docs else "ignored"
            return RunOutcome(outcome, job.id, None, "done", calls, recovered)
        except errors.TeamloreError as exc:
            return self._failed(job, exc.code, calls, recovered, exc.message)
        except Exception:  # an adapter bug must not lose the batch: it is retried
            return self._failed(job, errors.MODEL_CALL_FAILED.code, calls, recovered)

    @contextmanager
    def _lease_heartbeat(self, job: queue.Job) -> Iterator[None]:
        """Renew the job's lease every third of a lease while the model call runs (an answer may
        take longer than the lease); a killed Writer stops renewing, so its lease still ends
        within one lease period and the next run takes the job over. A call that hangs (the
        client's timeout is per read, not for the whole answer) is renewed for at most its
        model's `call_limit_s`, then the lease runs out as a killed Writer's would."""
        lease = self.settings.queue.lease_seconds
        longest = lease_renewal_cap(self.model, lease)
        started = time.monotonic()
        stop = threading.Event()

        def beat() -> None:
            conn = open_runtime_db(self.root)
            try:
                while not stop.wait(lease / 3) and time.monotonic() - started < longest:
                    try:
                        if not queue.renew_lease(conn, job, now=self.now(), lease_seconds=lease):
                            return
                    except Exception:  # a busy database: the next beat tries again
                        continue
            finally:
                conn.close()

        thread = threading.Thread(target=beat, name=f"lease-{job.id}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    # --- authorization and preflight -----------------------------------------------------

    def _authorize(self, job: queue.Job) -> str | None:
        if not self.settings.provenance_allowed(job.provenance):
            return errors.UNAUTHORIZED_PROVENANCE.code
        if documents.is_project_target(job.scope) and (
            job.scope[len("project:") :] not in registered_project_ids(self.home)
        ):
            return errors.UNREGISTERED_PROJECT.code
        if not self.settings.scope_allowed(job.scope):
            return errors.UNAUTHORIZED_SCOPE.code
        return None

    def _writable(self, target: str) -> bool:
        return self.settings.scope_allowed(documents.context_of_target(target))

    def _preflight(self, job: queue.Job) -> list[_Member]:
        marks = ",".join("?" * len(job.observation_ids))
        rows = self.conn.execute(
            f"SELECT id, scope, source, observed_at, text FROM observations"
            f" WHERE id IN ({marks}) ORDER BY id",
            job.observation_ids,
        ).fetchall()
        members: list[_Member] = []
        sensitive: list[int] = []
        for row in rows:
            member = _Member(
                row["id"], row["scope"], row["source"], row["observed_at"], row["text"]
            )
            if secret_rules_in(_strings(_project_observation(member))):
                sensitive.append(member.id)
            else:
                members.append(member)
        if sensitive:
            queue.quarantine(self.conn, job, sensitive, "SENSITIVE_INPUT", now=self.now())
        return members

    # --- snapshot and projection ---------------------------------------------------------

    def _snapshot(self, job: queue.Job) -> _Snapshot:
        targets = [t for t in documents.GLOBAL_TARGETS if self.settings.scope_allowed("global")]
        if documents.is_project_target(job.scope):
            targets.append(job.scope)
        data = {t: documents.read_document_bytes(self.root, t) for t in targets}
        parsed = {t: documents.parse_document(t, data[t]) for t in targets}
        versions = {
            r["target"]: r["hash"] for r in self.conn.execute("SELECT * FROM document_versions")
        }
        hand_edited = {
            t
            for t in targets
            if versions.get(t, documents.MISSING_HASH) != documents.content_hash(data[t])
        }
        digests: dict[str, dict[str, str]] = {}
        for row in self.conn.execute("SELECT target, section_key, digest FROM section_versions"):
            digests.setdefault(row["target"], {})[row["section_key"]] = row["digest"]
        # a document the Writer committed before section digests were kept: a hand edit makes
        # all of it hand-written, as it did then (it gets digests at its next commit)
        whole_file_edits = {t for t in hand_edited if t not in digests}
        hand_written = {
            (t, s.key)
            for t in hand_edited
            for s in parsed[t].sections
            if t in whole_file_edits or digests[t].get(s.key) != s.digest
        }
        links: dict[tuple[str, str], set[int]] = {}
        for row in self.conn.execute(
            "SELECT target, section_key, observation_id FROM associations"
        ):
            links.setdefault((row["target"], row["section_key"]), set()).add(row["observation_id"])
        import_sources = {
            r["id"]
            for r in self.conn.execute(
                "SELECT DISTINCT o.id, o.source FROM observations o"
                " JOIN associations a ON a.observation_id = o.id"
            )
            if queue.is_import_source(r["source"])
        }
        return _Snapshot(
            data, parsed, hand_edited, whole_file_edits, hand_written, links, import_sources
        )

    def _section_sources(self, snapshot: _Snapshot, target: str, key: str) -> set[int]:
        """Trusted source links of a section (none when its text was edited by hand)."""
        if (target, key) in snapshot.hand_written:
            return set()
        return set(snapshot.links.get((target, key), set()))

    def _origin(self, snapshot: _Snapshot, target: str, key: str) -> str:
        sources = self._section_sources(snapshot, target, key)
        if not sources:
            return "unsourced"
        return "import" if sources <= snapshot.import_sources else "user"

    def _projection(
        self, job: queue.Job, members: list[_Member], snapshot: _Snapshot
    ) -> dict[str, Any]:
        docs = []
        for target, document in snapshot.parsed.items():
            docs.append(
                {
                    "target": target,
                    "hash": documents.content_hash(snapshot.data[target]),
                    "writable": self._writable(target),
                    "sections": [
                        {
                            "ref": s.ref,
                            "title": s.title,
                            "body": s.body,
                            "origin": self._origin(snapshot, target, s.key),
                        }
                        for s in document.sections
                    ],
                }
            )
        return {
            "version": SCHEMA_NAME,
            "request_id": job.id,
            "now": queue.instant(self.now()),
            "batch_scope": job.scope,
            "limits": {
                "soft_budget_bytes": DOCUMENT_SOFT_BUDGET,
                "hard_budget_bytes": DOCUMENT_HARD_LIMIT,
            },
            "documents": docs,
            "observations": [_project_observation(m) for m in members],
        }

    def _fit_request(
        self, job: queue.Job, members: list[_Member], snapshot: _Snapshot
    ) -> tuple[WriterRequest | None, list[_Member]]:
        cap = self.settings.max_request_bytes
        kept = list(members)
        while kept:
            projection = self._projection(job, kept, snapshot)
            text = json.dumps(projection, ensure_ascii=False, sort_keys=True)
            size = len(text.encode("utf-8"))
            if size <= cap:
                trimmed = [m.id for m in members if m not in kept]
                if trimmed:
                    queue.release(self.conn, job, trimmed)
                # the front matter is not sent, but a document holding a secret is not updated
                front_matters = [d.front_matter for d in snapshot.parsed.values()]
                if secret_rules_in(_strings(projection) + front_matters):
                    raise errors.TeamloreError(
                        errors.SENSITIVE_CONTENT_REJECTED, _where_a_secret_is(snapshot)
                    )
                prompt = load_prompt()
                return (
                    WriterRequest(
                        request_id=job.id,
                        system_prompt=prompt,
                        prompt_version=PROMPT_VERSION,
                        projection_json=text,
                        response_schema=RESPONSE_SCHEMA,
                        schema_name=SCHEMA_NAME,
                        disclosed_bytes=size,
                        max_disclosed_bytes=cap,
                    ),
                    kept,
                )
            if len(kept) == 1:
                break
            kept.pop()
        self._refuse_oversized_documents(job, snapshot, cap)
        queue.release(self.conn, job, [m.id for m in members[1:]])
        queue.quarantine(self.conn, job, [members[0].id], "OVERSIZED_OBSERVATION", now=self.now())
        return None, []

    def _refuse_oversized_documents(self, job: queue.Job, snapshot: _Snapshot, cap: int) -> None:
        """When the documents alone fill most of a request (a file grown by hand past what the
        Writer writes), the observation is not at fault: the job fails naming the document,
        its input kept for `personal retry` once the file is shortened, instead of quarantined
        as an oversized observation it is not."""
        alone = json.dumps(self._projection(job, [], snapshot), ensure_ascii=False, sort_keys=True)
        if len(alone.encode("utf-8")) <= cap // 2:
            return
        sizes = {target: len(data) for target, data in snapshot.data.items() if data is not None}
        largest = max(sizes, key=lambda target: sizes[target])
        raise errors.TeamloreError(
            errors.PERSONAL_DOCUMENT_TOO_LARGE,
            f"{documents.relative_path(largest)} holds {sizes[largest]:,} bytes, over the"
            f" {DOCUMENT_HARD_LIMIT:,} a document may hold: the Writer cannot send it within"
            f" {cap:,} bytes; shorten it by hand, then `teamlore personal retry {job.id}`",
        )

    # --- apply, receipt, commit ----------------------------------------------------------

    def _apply(self, response: MaintenanceResponse, snapshot: _Snapshot) -> dict[str, bytes]:
        by_target: dict[str, list[documents.SectionOperation]] = {}
        for decision in response.decisions:
            for op in operations_of(decision):
                converted: documents.SectionOperation = (
                    documents.PutSection(op.section, op.title, op.body)
                    if isinstance(op, PutSectionOp)
                    else documents.RemoveSection(op.section)
                )
                by_target.setdefault(op.target, []).append(converted)
        new_docs: dict[str, bytes] = {}
        for target, ops in by_target.items():
            updated = documents.apply_operations(snapshot.parsed[target], ops)
            text = updated.text()
            if secret_rules_in([text]):
                raise errors.TeamloreError(
                    errors.SENSITIVE_CONTENT_REJECTED, "the new document text holds a secret"
                )
            data = documents.saved_like(snapshot.data[target], text)
            if data != snapshot.data[target]:
                new_docs[target] = data
        return new_docs

    def _receipt(
        self,
        job: queue.Job,
        members: list[_Member],
        response: MaintenanceResponse,
        snapshot: _Snapshot,
        new_docs: dict[str, bytes],
    ) -> dict[str, Any]:
        remove_keys: dict[tuple[str, str], None] = {}
        links: dict[tuple[str, str], set[int]] = {}
        forget: set[int] = set()
        for decision in response.decisions:
            evidence = {int(ref[3:]) for ref in decision.evidence}
            removed_sources: set[int] = set()
            for op in operations_of(decision):
                if isinstance(op, RemoveSectionOp):
                    gone = snapshot.parsed[op.target].section(op.section)
                    assert gone is not None
                    removed_sources |= self._section_sources(snapshot, op.target, gone.key)
            for op in operations_of(decision):
                prior: set[int] = set()
                if op.section is not None:
                    section = snapshot.parsed[op.target].section(op.section)
                    assert section is not None
                    remove_keys[(op.target, section.key)] = None
                    prior = self._section_sources(snapshot, op.target, section.key)
                    if isinstance(decision, Forget):
                        forget |= prior
                if isinstance(op, PutSectionOp):
                    key = (op.target, documents.title_key(op.title))
                    links.setdefault(key, set()).update(prior | removed_sources | evidence)
            if isinstance(decision, Forget):
                forget |= evidence
        changed = sorted(new_docs)
        return {
            "format": commit.RECEIPT_FORMAT,
            "job_id": job.id,
            "outcome": "committed" if new_docs else "ignored",
            "observation_ids": [m.id for m in members],
            "decisions": [d.kind for d in response.decisions],
            "prompt_version": PROMPT_VERSION,
            "prompt_digest": sha256_hex(load_prompt().encode("utf-8")),
            "model": self.model.model_name,
            "committed_at": queue.instant(self.now()),
            "documents": [
                {
                    "target": t,
                    "before": documents.content_hash(snapshot.data[t]),
                    "after": documents.content_hash(new_docs[t]),
                }
                for t in changed
            ],
            "clear_targets": sorted(t for t in snapshot.whole_file_edits if t in new_docs),
            "clear_keys": _hand_edit_keys(snapshot, new_docs),
            "remove_keys": [{"target": t, "section_key": k} for t, k in remove_keys],
            "associations": [
                {"target": t, "section_key": k, "observation_ids": sorted(ids)}
                for (t, k), ids in sorted(links.items())
                if ids
            ],
            "forget_observation_ids": sorted(forget),
            **_section_digests(snapshot, new_docs),
        }

    def _commit(
        self,
        job: queue.Job,
        snapshot: _Snapshot,
        receipt: dict[str, Any],
        new_docs: dict[str, bytes],
    ) -> None:
        with write_tx(self.conn):
            queue.assert_lease(self.conn, job, now=self.now())
            for target, before in snapshot.data.items():
                current = documents.read_document_bytes(self.root, target)
                if documents.content_hash(current) != documents.content_hash(before):
                    raise errors.TeamloreError(
                        errors.STALE_REVISION, f"{target} changed after it was projected"
                    )
            commit.publish(self.root, receipt, new_docs)
            failpoint("personal.writer.after_files")
            commit.apply_receipt(self.conn, receipt, now=self.now())

    def _failed(
        self,
        job: queue.Job,
        code: str,
        calls: int,
        recovered: list[str],
        message: str | None = None,
    ) -> RunOutcome:
        # a receipt may exist if the files were published before the DB failed: finish it
        try:
            done = commit.recover_receipts(self.root, self.conn, now=self.now())
        except errors.TeamloreError as exc:
            code, message, done = exc.code, exc.message, []
        if job.id in done:
            return RunOutcome("committed", job.id, None, "done", calls, recovered + done)
        state = queue.fail(
            self.conn,
            job,
            code,
            self.settings,
            now=self.now(),
            permanent=code in PERMANENT_MODEL_CODES,
        )
        return RunOutcome("failed", job.id, code, state, calls, recovered, message)


def _where_a_secret_is(snapshot: _Snapshot) -> str:
    """Which document holds the secret that stops a request, and on which line (it was typed
    there by hand: the Writer never writes one), never the secret itself."""
    for target, data in sorted(snapshot.data.items()):
        found = first_secret(data.decode("utf-8", "replace")) if data is not None else None
        if found is not None:
            line, rule = found
            return (
                f"{documents.relative_path(target)}:{line} holds a secret ({rule}); remove it by"
                " hand, then `teamlore personal retry` the job"
            )
    return "a document holds a secret"


def _guard_imports(
    response: MaintenanceResponse,
    job: queue.Job,
    members: list[_Member],
    snapshot: _Snapshot,
) -> None:
    """Imports may add sections and rewrite import-only sections; never forget, never replace or
    remove a user-sourced, unsourced or hand-edited section."""
    import_refs = {f"ev_{m.id}" for m in members if queue.is_import_source(m.source)}
    batch_is_import = job.provenance in queue.IMPORT_PROVENANCE
    for decision in response.decisions:
        if isinstance(decision, Ignore):
            continue
        if not _import_only(decision, import_refs, batch_is_import):
            continue
        if isinstance(decision, Forget):
            raise errors.TeamloreError(
                errors.UNAUTHORIZED_FORGET_EVIDENCE, "imported material cannot justify a forget"
            )
        for op in operations_of(decision):
            if op.section is None:
                continue
            section = snapshot.parsed[op.target].section(op.section)
            assert section is not None
            sources = (
                set()
                if (op.target, section.key) in snapshot.hand_written
                else snapshot.links.get((op.target, section.key), set())
            )
            if not sources or not sources <= snapshot.import_sources:
                raise errors.TeamloreError(
                    errors.UNAUTHORIZED_IMPORT_OVERWRITE,
                    f"{op.target} {op.section} is not import-owned",
                )


def _hand_edit_keys(snapshot: _Snapshot, new_docs: dict[str, bytes]) -> list[dict[str, str]]:
    """Source links a commit drops from a document edited by hand, section by section: those of
    the sections whose text changed and those of sections no longer in the file. Once the
    commit records that text as the Writer's, they would otherwise count as its sources."""
    drop: set[tuple[str, str]] = set()
    for target in sorted(snapshot.hand_edited - snapshot.whole_file_edits):
        if target not in new_docs:
            continue
        present = {s.key for s in snapshot.parsed[target].sections}
        drop |= {(t, k) for t, k in snapshot.hand_written if t == target}
        drop |= {(t, k) for t, k in snapshot.links if t == target and k not in present}
    return [{"target": t, "section_key": k} for t, k in sorted(drop)]


def _section_digests(snapshot: _Snapshot, new_docs: dict[str, bytes]) -> dict[str, Any]:
    """The section digests a commit records: of each document it writes, and of each one it
    found as the Writer last left it (so a document committed before digests were kept gets
    them). A hand edit is then told apart section by section (`_Run._snapshot`)."""
    kept: dict[str, documents.Document] = {
        t: snapshot.parsed[t] for t in snapshot.parsed if t not in snapshot.hand_edited
    }
    kept.update({t: documents.parse_document(t, data) for t, data in new_docs.items()})
    return {
        "section_targets": sorted(kept),
        "sections": [
            {"target": t, "section_key": s.key, "digest": s.digest}
            for t in sorted(kept)
            for s in kept[t].sections
        ],
    }


def _import_only(decision: Decision, import_refs: set[str], batch_is_import: bool) -> bool:
    if decision.evidence:
        return all(ref in import_refs for ref in decision.evidence)
    return batch_is_import


def _project_observation(member: _Member) -> dict[str, Any]:
    provenance = queue.provenance_of(member.source) or ""
    base: dict[str, Any] = {
        "ref": f"ev_{member.id}",
        "source_kind": SOURCE_KINDS.get(provenance, "unknown"),
        "source_scope": member.scope,
        "observed_at": member.observed_at,
    }
    if provenance == "agent_observation":
        envelope = json.loads(member.text)
        base["text"] = envelope["understanding"]
        base["import"] = {
            "source_label": envelope["sourceLabel"],
            "basis": envelope["basis"],
            "gaps": envelope.get("gaps"),
        }
    elif provenance == "document_import":
        envelope = json.loads(member.text)
        base["text"] = envelope["text"]
        base["import"] = {
            "source_label": envelope["sourceLabel"],
            "declared_author": envelope["declaredAuthor"],
            # cleaned as it is queued today; a part queued before was not
            "file_name": printable_name(envelope["fileName"]),
            "part": envelope["part"],
            "heading_path": envelope["headingPath"],
        }
    else:
        base["text"] = member.text
    return base


def _strings(value: Any) -> list[str]:
    """Every string value and key in a JSON-like value (what the preflight scans)."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            out.append(str(key))
            out.extend(_strings(item))
    elif isinstance(value, list):
        for item in value:
            out.extend(_strings(item))
    return out


def new_request_id() -> str:
    return uuid.uuid4().hex
