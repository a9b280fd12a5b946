"""The personal-memory library API that the MCP tools and `teamlore personal` commands call.

Identity and contexts come from the caller (launch flags, cwd), never from payloads:
`launch_contexts` are the contexts the process was started with; `client_id` is the launch
namespace. Every function takes the state dir `home`; `now` (epoch seconds) is for tests.

Write side: `enqueue_init`, `relay_user_turn`, `import_markdown` (queue only, no model), then
`flush` (needs a `DecisionModel`; the Writer is `teamlore.personal.writer`). Status: `status`,
`init_status`, `submission_status`, `markdown_status`. Repair: `retry`. Read side:
`teamlore.personal.reader` (`read_memory`, `render_memory`, `readable_contexts`) and `show` here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamlore.core import errors
from teamlore.core.config import load_config
from teamlore.core.db import write_tx
from teamlore.core.shapes.records import Record, field
from teamlore.personal import documents, importing, init_import, queue, reader
from teamlore.personal.model_port import DecisionModel
from teamlore.personal.policy import DefaultPolicy, Policy, registered_project_ids
from teamlore.personal.runtime_db import open_runtime_db, open_runtime_db_if_exists
from teamlore.personal.safety import first_secret, pii_rules, refuse_secrets, secret_rules_in

if TYPE_CHECKING:
    import sqlite3

    from teamlore.personal.config import PersonalSettings
    from teamlore.personal.writer import RunOutcome

__all__ = [
    "FlushResult",
    "MarkdownImport",
    "SubmitResult",
    "enqueue_init",
    "flush",
    "import_markdown",
    "init_status",
    "markdown_status",
    "relay_user_turn",
    "retry",
    "show",
    "status",
    "submission_status",
]


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def _settings(home: Path, settings: PersonalSettings | None) -> PersonalSettings:
    """`settings`, else the state dir's. A state dir that does not exist yet holds none: the
    defaults, and it is not created for them (a call they refuse, `INIT_DISABLED` by default,
    leaves no trace; one they let through creates it as it writes)."""
    from teamlore.personal.config import load_personal_settings, load_personal_settings_readonly

    if settings is not None:
        return settings
    if not os.path.lexists(home):
        return load_personal_settings_readonly(home)
    return load_personal_settings(home)


def load_policy(home: Path, *, readonly: bool = False) -> Policy:
    """The `[personal]` settings as the write checks read them (personal/policy.py): the
    defaults without the schema when config.toml has no such table, else the table validated by
    its schema (its refusals)."""
    if not load_config(home, readonly=readonly).personal:
        return DefaultPolicy()
    from teamlore.personal.config import load_personal_settings, load_personal_settings_readonly

    return load_personal_settings_readonly(home) if readonly else load_personal_settings(home)


def _allowed_contexts(home: Path, settings: Policy, launch_contexts: Collection[str]) -> list[str]:
    projects = registered_project_ids(home)
    return [
        c
        for c in launch_contexts
        if settings.scope_allowed(c) and (c == "global" or c[len("project:") :] in projects)
    ]


class SubmitResult(Record, frozen=True):
    """What queueing one relayed user turn did."""

    accepted: bool
    duplicate: bool
    state: str
    context_id: str
    observation_id: int

    def to_json(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "duplicate": self.duplicate,
            "state": self.state,
            "contextId": self.context_id,
        }


def enqueue_init(
    home: Path,
    payload: dict[str, object],
    *,
    client_id: str,
    launch_contexts: Collection[str],
    settings: PersonalSettings | None = None,
    now: float | None = None,
) -> SubmitResult:
    """`memory_init`: validate, queue one `agent_import` observation (claimable at once)."""
    settings = _settings(home, settings)
    init_import.check_client_id(client_id)
    if not settings.provenance_allowed("agent_observation"):
        raise errors.TeamloreError(errors.INIT_DISABLED)
    parsed = init_import.validate_init_payload(
        payload, _allowed_contexts(home, settings, launch_contexts)
    )
    refuse_secrets(
        [parsed.source_label, parsed.understanding, parsed.gaps or ""],
        "memory_init payload",
        allowed_pii=settings.allowed_pii,
    )
    namespace, key = init_import.init_namespace(client_id, parsed.import_id)
    conn = open_runtime_db(documents.personal_root(home))
    try:
        item = queue.EnqueueItem(
            namespace, key, parsed.envelope(), parsed.context_id, "agent_import"
        )
        result = queue.enqueue(conn, item, now=_now(now))
    finally:
        conn.close()
    return SubmitResult(
        True, result.duplicate, result.state, parsed.context_id, result.observation_id
    )


def relay_user_turn(
    home: Path,
    *,
    client_id: str,
    submission_id: str,
    text: str,
    context_id: str,
    launch_contexts: Collection[str],
    conversation_id: str | None = None,
    settings: Policy | None = None,
    now: float | None = None,
    source: str = "mcp_user_submission",
) -> SubmitResult:
    """`memory_submit_user_turn`: one verbatim user expression; waits for the batch triggers.
    `source` is the host's own capture when it saw the user type (`interactive`) or received the
    prompt over its RPC (`rpc`): the Pi extension (queue.SOURCE_PROVENANCE)."""
    settings = settings if settings is not None else load_policy(home)
    init_import.check_client_id(client_id)
    init_import.check_relay_ids(submission_id, conversation_id)
    if not settings.provenance_allowed("user_explicit"):
        raise errors.TeamloreError(errors.SUBMISSION_DISABLED)
    context = init_import.check_context(
        context_id, _allowed_contexts(home, settings, launch_contexts)
    )
    init_import.check_relay_text(text, settings.max_request_bytes // 2)
    refuse_secrets([text], "user turn", allowed_pii=settings.allowed_pii)
    namespace, key = init_import.relay_namespace(client_id, submission_id, conversation_id)
    conn = open_runtime_db(documents.personal_root(home))
    try:
        item = queue.EnqueueItem(namespace, key, text, context, source)
        result = queue.enqueue(conn, item, now=_now(now))
    finally:
        conn.close()
    return SubmitResult(True, result.duplicate, result.state, context, result.observation_id)


class MarkdownImport(Record, frozen=True):
    """What importing one Markdown file queued."""

    import_id: str
    context_id: str
    file_name: str
    bytes: int
    parts: int
    duplicate: bool
    label: str
    author: str
    front_matter: bool = False  # the file opens with one, which was left out of the import

    def to_json(self) -> dict[str, Any]:
        return {
            "importId": self.import_id,
            "contextId": self.context_id,
            "fileName": self.file_name,
            "bytes": self.bytes,
            "parts": self.parts,
            "duplicate": self.duplicate,
            "label": self.label,
            "declaredAuthor": self.author,
            "frontMatter": self.front_matter,
        }


def _first_secret_line(file: importing.MarkdownFile) -> str | None:
    """`name:line` of the first secret in an imported file (front matter lines counted), as a
    hand-edited document's refusal names it; never the secret."""
    found = first_secret(file.text)
    if found is None:
        return None
    line = file.front_matter.count("\n") + found[0]
    return f"{importing.printable_name(file.file_name)}:{line}"


def _first_pii_line(file: importing.MarkdownFile, allowed: Collection[str]) -> str | None:
    """`name:line` of the first line of an imported file holding personal data of a category
    not `allowed` (each category's pattern is within a line); never the data."""
    for number, line in enumerate(file.text.split("\n"), start=1):
        if pii_rules(line, allowed):
            line_number = file.front_matter.count("\n") + number
            return f"{importing.printable_name(file.file_name)}:{line_number}"
    return None


def import_markdown(
    home: Path,
    path: Path,
    *,
    context_id: str = "global",
    author: str = "unknown",
    label: str | None = None,
    settings: PersonalSettings | None = None,
    now: float | None = None,
) -> MarkdownImport:
    """Check, chunk and queue a Markdown file (all parts in one transaction). Nothing is written
    to the state dir when the file or the options are refused. The options are checked first
    (usage errors), then the file, then the policy: a typo is told as one whatever is allowed."""
    importing.check_author(author)
    if label is not None:
        importing.check_label(label)
    file = importing.read_markdown_file(path)
    settings = _settings(home, settings)
    if not settings.provenance_allowed("document_import"):
        raise errors.TeamloreError(errors.IMPORT_DISABLED)
    if not settings.scope_allowed(context_id):  # said to a person, not to an MCP process
        raise errors.TeamloreError(
            errors.CONTEXT_UNAVAILABLE, f"[personal] allowed_scopes does not allow {context_id}"
        )
    init_import.check_context(context_id, _allowed_contexts(home, settings, [context_id]))
    label = label if label is not None else importing.default_label(file.file_name)
    refuse_secrets([label], "the label", allowed_pii=settings.allowed_pii)  # named as itself
    parts = importing.chunk_markdown(file.text, above=file.front_matter.count("\n"))
    count = len(parts)
    secret_at = _first_secret_line(file)
    pii_at = _first_pii_line(file, settings.allowed_pii)
    for index, part in enumerate(parts, start=1):
        values = [part.text, *part.heading_path]
        # parts are in file order: the first part holding a secret holds the file's first one,
        # and the first holding personal data the file's first line of it
        where = f"part {index}/{count}"
        if secret_at and secret_rules_in(values):
            where, secret_at = f"{secret_at} ({where})", None
        elif pii_at and any(pii_rules(value, settings.allowed_pii) for value in values):
            where, pii_at = f"{pii_at} ({where})", None
        refuse_secrets(values, where, allowed_pii=settings.allowed_pii)
    namespace = importing.markdown_namespace(file.import_id, context_id)
    conn = open_runtime_db(documents.personal_root(home))
    try:
        moment = _now(now)
        with write_tx(conn):
            duplicate = queue.find_observation(conn, namespace, importing.part_key(1)) is not None
            if not duplicate:
                for index, part in enumerate(parts, start=1):
                    envelope = importing.part_envelope(
                        file, part, index, count, label=label, author=author
                    )
                    item = queue.EnqueueItem(
                        namespace,
                        importing.part_key(index),
                        envelope,
                        context_id,
                        "document_import",
                    )
                    queue.enqueue_in_tx(conn, item, now=moment)
    finally:
        conn.close()
    return MarkdownImport(
        file.import_id,
        context_id,
        file.file_name,
        file.size,
        count,
        duplicate,
        label,
        author,
        bool(file.front_matter),
    )


def _status_json(status: queue.ObservationStatus) -> dict[str, Any]:
    return {
        "state": status.state,
        "issue": status.issue,
        "retainedIn": status.retained_in,
        "jobId": status.job_id,
        "jobState": status.job_state,
        "attempts": status.attempts,
        "retryAt": status.retry_at,
        "leaseEnds": status.lease_ends,
    }


def _outcome(conn: sqlite3.Connection, observation_id: int) -> dict[str, Any]:
    """One observation's outcome, with the job of its context it waits behind when pending
    (`waitsFor`: one job per context runs at a time), as `memory_status` and `personal status`
    and `personal import` show it alike."""
    out = _status_json(queue.observation_status(conn, observation_id))
    held = queue.blocker(conn, observation_id)
    out["waitsFor"] = None if held is None else held.to_json()
    return out


def _lookup(home: Path, namespace: str, key: str) -> dict[str, Any] | None:
    conn = open_runtime_db_if_exists(documents.personal_root(home))
    if conn is None:
        return None
    try:
        observation = queue.find_observation(conn, namespace, key)
        if observation is None:
            return None
        return _outcome(conn, observation)
    finally:
        conn.close()


def init_status(home: Path, *, client_id: str, import_id: str) -> dict[str, Any] | None:
    """`memory_status {importId}`: state, issue and `retainedIn`, or None (not in
    namespace)."""
    namespace, key = init_import.init_namespace(client_id, import_id)
    return _lookup(home, namespace, key)


def submission_status(
    home: Path, *, client_id: str, submission_id: str, conversation_id: str | None = None
) -> dict[str, Any] | None:
    namespace, key = init_import.relay_namespace(client_id, submission_id, conversation_id)
    return _lookup(home, namespace, key)


def markdown_status(home: Path, *, import_id: str, context_id: str) -> dict[str, Any]:
    """Per-part status of a Markdown import; `complete` only when every part is processed."""
    namespace = importing.markdown_namespace(import_id, context_id)
    parts: list[dict[str, Any]] = []
    conn = open_runtime_db_if_exists(documents.personal_root(home))
    if conn is not None:
        try:
            rows = conn.execute(
                "SELECT id, key FROM observations WHERE namespace = ? ORDER BY id", (namespace,)
            ).fetchall()
            for row in rows:
                parts.append({"part": int(row["key"].split("-")[1]), **_outcome(conn, row["id"])})
        finally:
            conn.close()
    retained = sorted({t for p in parts for t in p["retainedIn"]})
    return {
        "importId": import_id,
        "contextId": context_id,
        "complete": bool(parts) and all(p["state"] == "processed" for p in parts),
        "parts": parts,
        "retainedIn": retained,
    }


class FlushResult(Record, frozen=True):
    """The Writer runs a flush made, and whether nothing is left to process."""

    runs: list[RunOutcome]
    complete: bool  # nothing pending, claimed or dead is left, and no run failed
    # the jobs left dead, backing off or held by a lease (`status`'s jobs): what an incomplete
    # flush waits for
    waiting: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": [r.to_json() for r in self.runs],
            "complete": self.complete,
            "waiting": self.waiting,
        }


def flush(
    home: Path,
    model: DecisionModel,
    *,
    settings: PersonalSettings | None = None,
    now: float | None = None,
    max_runs: int = 64,
    wait_seconds: float = 0.0,
) -> FlushResult:
    """Run the Writer with `force` until nothing is due. A failed job is reported and the others
    still run (only its own scope waits behind its backoff); a job that fails again within the
    same flush (due at once) ends it, as do `max_runs`. Never skips a backoff or another
    process's lease."""
    # the Writer (its decision schema, prompts) loads only here: queueing a host's user turn
    # never needs it (docs/architecture.md, "A short CLI process")
    from teamlore.personal.writer import run_writer

    settings = _settings(home, settings)
    runs: list[RunOutcome] = []
    failed_jobs: set[str | None] = set()
    for _ in range(max_runs):
        outcome = run_writer(home, model, settings, force=True, now=now, wait_seconds=wait_seconds)
        runs.append(outcome)
        if outcome.outcome == "idle":
            break
        if outcome.outcome == "failed":
            if outcome.job_id in failed_jobs:  # due again at once: it would only use up attempts
                break
            failed_jobs.add(outcome.job_id)
    after = status(home)
    counts = after["observations"]
    left = sum(counts.get(state, 0) for state in ("pending", "claimed", "dead"))
    failed = any(r.outcome == "failed" for r in runs)
    waiting = after["jobs"]  # dead, backing off, or running under another (or a killed) run
    return FlushResult(runs, complete=not failed and left == 0, waiting=waiting)


def status(home: Path) -> dict[str, Any]:
    """Queue counts and active/dead jobs; never bodies. Creates nothing."""
    conn = open_runtime_db_if_exists(documents.personal_root(home))
    out: dict[str, Any] = {"observations": {}, "jobs": []}
    if conn is None:
        return out
    try:
        out["observations"] = {
            r["state"]: r["n"]
            for r in conn.execute("SELECT state, count(*) AS n FROM observations GROUP BY state")
        }
        out["jobs"] = [
            {
                "id": r["id"],
                "scope": r["scope"],
                "provenance": r["provenance"],
                "state": r["state"],
                "attempts": r["attempts"],
                "issue": r["issue"],
                "retryAt": queue.instant(r["available_at"]) if r["state"] == "retry" else None,
                "leaseEnds": (
                    queue.instant(r["lease_expires"]) if r["state"] == "running" else None
                ),
            }
            for r in conn.execute(
                "SELECT * FROM jobs WHERE state IN ('running', 'retry', 'dead') ORDER BY created_at"
            )
        ]
        return out
    finally:
        conn.close()


def retry(home: Path, job_id: str, *, now: float | None = None) -> int:
    """`teamlore personal retry JOB`: requeue a dead or backing-off job's observations."""
    conn = open_runtime_db(documents.personal_root(home))
    try:
        return queue.retry_job(conn, job_id, now=_now(now))
    finally:
        conn.close()


def show(home: Path, launch_contexts: Sequence[str]) -> reader.MemoryView:
    """`teamlore personal show`: exactly what a reader process with these contexts gets."""
    return reader.read_memory(home, reader.readable_contexts(home, launch_contexts))
