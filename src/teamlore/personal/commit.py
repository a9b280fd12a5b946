"""Section-level commits: journaled publication of documents + receipt, and recovery.

A commit runs inside one `BEGIN IMMEDIATE` transaction of the runtime DB:

1. the lease is checked and every projected document is re-read: a hash other than the one the
   model saw is `STALE_REVISION` (CAS on the document bytes);
2. the new documents and the receipt are staged under `transactions/<job>/` with a journal
   (`before`/`after` hashes), then a `COMMITTING` marker makes the commit irrevocable;
3. the files are published by atomic rename (documents, then `receipts/<job>.json`);
4. the receipt is applied to the DB (observations `processed`, job `done`, document versions
   and section digests, source links, forget purges) and the transaction commits.

A crash before the marker leaves the old documents (the staging is discarded); a crash after it
is rolled forward by `recover_transactions`; a crash after the files but before the DB commit is
completed by `recover_receipts` from the receipt file — without another model call, so no
observation is lost or processed twice. A document that someone changed by hand during an
interrupted commit is never overwritten (`RECOVERY_CONFLICT`).

Receipts hold hashes, ids and decision kinds only: never Markdown, section titles or the model's
reasons.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.db import write_tx
from teamlore.core.failpoints import failpoint
from teamlore.core.paths import ensure_private_dir, write_private_file
from teamlore.personal import documents
from teamlore.personal.queue import instant

RECEIPT_FORMAT = "teamlore-personal-receipt@1"
MARKER = "COMMITTING"


def receipts_dir(root: Path) -> Path:
    return root / "receipts"


def transactions_dir(root: Path) -> Path:
    return root / "transactions"


def _publish(root: Path, relative: str, data: bytes) -> None:
    path = root / relative
    ensure_private_dir(path.parent)
    if path.is_symlink():
        raise documents.symlink_refusal(relative)
    write_private_file(path, data)


def _current_hash(root: Path, relative: str) -> str:
    path = root / relative
    if path.is_symlink():
        raise documents.symlink_refusal(relative)
    try:
        return documents.content_hash(path.read_bytes())
    except FileNotFoundError:
        return documents.MISSING_HASH


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(root: Path, receipt: dict[str, Any], new_documents: dict[str, bytes]) -> None:
    """Stage, mark and publish the documents and the receipt (steps 2–3 above)."""
    job_id = receipt["job_id"]
    txdir = transactions_dir(root) / job_id
    if txdir.exists():
        shutil.rmtree(txdir)
    ensure_private_dir(txdir)
    files = []
    receipt_bytes = json.dumps(receipt, sort_keys=True, indent=1).encode("utf-8")
    entries = [
        (documents.relative_path(target), data) for target, data in sorted(new_documents.items())
    ]
    entries.append((f"receipts/{job_id}.json", receipt_bytes))
    for number, (relative, data) in enumerate(entries):
        stage = f"stage-{number}"
        write_private_file(txdir / stage, data)
        files.append(
            {
                "path": relative,
                "stage": stage,
                "before": _current_hash(root, relative),
                "after": documents.content_hash(data),
            }
        )
    write_private_file(txdir / "journal.json", json.dumps({"files": files}).encode("utf-8"))
    _fsync_dir(txdir)
    failpoint("personal.commit.before_marker")
    write_private_file(txdir / MARKER, b"v1\n")
    failpoint("personal.commit.after_marker")
    _roll_forward(root, txdir)


def _allowed(relative: str) -> bool:
    if relative.startswith("receipts/"):
        name = relative[len("receipts/") :]
        return name.endswith(".json") and "/" not in name and not name.startswith(".")
    return any(relative == documents.relative_path(t) for t in documents.GLOBAL_TARGETS) or (
        relative.startswith("projects/")
        and documents.is_project_target("project:" + relative[len("projects/") : -3])
        and relative.endswith(".md")
    )


def _roll_forward(root: Path, txdir: Path) -> None:
    journal = json.loads((txdir / "journal.json").read_text(encoding="utf-8"))
    pending: list[tuple[str, bytes]] = []
    for entry in journal["files"]:
        relative = entry["path"]
        if not _allowed(relative):
            raise errors.TeamloreError(errors.RECOVERY_CONFLICT, "journal names a foreign path")
        staged = (txdir / entry["stage"]).read_bytes()
        if documents.content_hash(staged) != entry["after"]:
            raise errors.TeamloreError(errors.RECOVERY_CONFLICT, "a staged file is damaged")
        current = _current_hash(root, relative)
        if current == entry["after"]:
            continue
        if current != entry["before"]:
            raise errors.TeamloreError(
                errors.RECOVERY_CONFLICT,
                f"{relative} was changed during an interrupted commit; it was left as it is",
            )
        pending.append((relative, staged))
    for relative, data in pending:
        _publish(root, relative, data)
        failpoint("personal.commit.after_file")
    shutil.rmtree(txdir)


def recover_transactions(root: Path) -> int:
    """Discard unmarked staging, roll marked commits forward. Returns how many were finished."""
    base = transactions_dir(root)
    if not base.is_dir():
        return 0
    finished = 0
    for txdir in sorted(base.iterdir()):
        if not txdir.is_dir() or txdir.is_symlink():
            continue
        if (txdir / MARKER).is_file():
            _roll_forward(root, txdir)
            finished += 1
        else:
            shutil.rmtree(txdir)
    return finished


def apply_receipt(conn: sqlite3.Connection, receipt: dict[str, Any], *, now: float) -> None:
    """The DB side of a receipt, inside the caller's write transaction (idempotent)."""
    job_id = receipt["job_id"]
    if conn.execute("SELECT 1 FROM receipts WHERE job_id = ?", (job_id,)).fetchone():
        return
    ids = list(receipt["observation_ids"])
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id, state, job_id FROM observations WHERE id IN ({marks})", ids
    ).fetchall()
    if len(rows) != len(ids) or any(
        r["job_id"] != job_id or r["state"] not in ("claimed", "processed") for r in rows
    ):
        raise errors.TeamloreError(
            errors.RECOVERY_CONFLICT, f"receipt {job_id} does not match the queue"
        )
    stamp = instant(now)
    conn.execute(
        f"UPDATE observations SET state = 'processed', processed_at = ?, issue = NULL"
        f" WHERE id IN ({marks})",
        [stamp, *ids],
    )
    conn.execute(
        "UPDATE jobs SET state = 'done', issue = NULL, updated_at = ? WHERE id = ?",
        (stamp, job_id),
    )
    for doc in receipt["documents"]:
        conn.execute(
            "INSERT INTO document_versions (target, hash) VALUES (?, ?)"
            " ON CONFLICT(target) DO UPDATE SET hash = excluded.hash",
            (doc["target"], doc["after"]),
        )
    # a receipt written before section digests were kept has none: the documents it changed
    # lose theirs, so a later hand edit of them makes the whole document hand-written
    changed = [doc["target"] for doc in receipt["documents"]]
    for target in receipt.get("section_targets", changed):
        conn.execute("DELETE FROM section_versions WHERE target = ?", (target,))
    conn.executemany(
        "INSERT INTO section_versions (target, section_key, digest) VALUES (?, ?, ?)",
        [(s["target"], s["section_key"], s["digest"]) for s in receipt.get("sections", [])],
    )
    for target in receipt["clear_targets"]:
        conn.execute("DELETE FROM associations WHERE target = ?", (target,))
    for link in receipt.get("clear_keys", []):
        conn.execute(
            "DELETE FROM associations WHERE target = ? AND section_key = ?",
            (link["target"], link["section_key"]),
        )
    for link in receipt["remove_keys"]:
        conn.execute(
            "DELETE FROM associations WHERE target = ? AND section_key = ?",
            (link["target"], link["section_key"]),
        )
    for link in receipt["associations"]:
        conn.executemany(
            "INSERT OR IGNORE INTO associations (target, section_key, observation_id)"
            " VALUES (?, ?, ?)",
            [(link["target"], link["section_key"], oid) for oid in link["observation_ids"]],
        )
    forget = list(receipt["forget_observation_ids"])
    if forget:
        conn.execute(
            f"UPDATE observations SET text = NULL WHERE state = 'processed'"
            f" AND id IN ({','.join('?' * len(forget))})",
            forget,
        )
    conn.execute(
        "INSERT INTO receipts (job_id, outcome, recorded_at) VALUES (?, ?, ?)",
        (job_id, receipt["outcome"], stamp),
    )


def recover_receipts(root: Path, conn: sqlite3.Connection, *, now: float) -> list[str]:
    """Apply every receipt file the DB has not recorded yet. Returns the recovered job ids."""
    base = receipts_dir(root)
    if not base.is_dir():
        return []
    known = {r["job_id"] for r in conn.execute("SELECT job_id FROM receipts")}
    recovered: list[str] = []
    for path in sorted(base.glob("*.json")):
        if path.stem in known or path.is_symlink():
            continue
        receipt = json.loads(path.read_text(encoding="utf-8"))
        if receipt.get("format") != RECEIPT_FORMAT or receipt.get("job_id") != path.stem:
            raise errors.TeamloreError(errors.RECOVERY_CONFLICT, f"{path.name} is not a receipt")
        with write_tx(conn):
            apply_receipt(conn, receipt, now=now)
        recovered.append(path.stem)
    return recovered
