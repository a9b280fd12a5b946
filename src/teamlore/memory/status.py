"""Team-memory status of one owner: projection, entries, workflow counts and a lint summary.

It never syncs the projection (the operation does that first), and its one write to the state
database is derived: the lint results `LintCache` keeps. The entry counts come from the approved
projection (what search and recall see); the lint summary comes from the files on disk
(`lint_tree`, linting again only new and edited files), so a status run shows both what is
indexed and what the tree holds.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import orjson
from pydantic import BaseModel

from teamlore.core import db, errors
from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.core.remedies import CANNOT_BE_PROMOTED, discard_command
from teamlore.core.shapes.strict import WIRE
from teamlore.core.timeutil import format_instant
from teamlore.memory.assembled import with_assembled_conflicts
from teamlore.memory.consolidation.source import status_of
from teamlore.memory.deprecations import RULE, checked_after_deprecation, findings_key
from teamlore.memory.extraction.tasks import Owner
from teamlore.memory.line_ends import without_checkout_crlf
from teamlore.memory.promotion.stored_plan import PlanState, plan_states
from teamlore.memory.store.layout import MEMORY_ROOT
from teamlore.memory.store.lint import Finding, LintProgress, LintReport, lint_tree
from teamlore.memory.store.lint_cache import LintCache
from teamlore.memory.store.projection import Coverage, Diagnostic, ProjectionCounts, stored_counts
from teamlore.repo.ignored import ignored_by_git


class _Counts(BaseModel):
    model_config = WIRE


class EntryCounts(_Counts):
    approved: int = 0
    deprecated: int = 0


class CandidateCounts(_Counts):
    draft: int = 0
    quarantined: int = 0
    promoted: int = 0
    discarded: int = 0


class TaskCounts(_Counts):
    pending: int = 0
    claimed: int = 0
    submitted: int = 0
    stale: int = 0


class ChunkCounts(_Counts):
    pending: int = 0
    drafted: int = 0
    extracted: int = 0
    stale: int = 0


class PromotionCounts(_Counts):
    generated: int = 0
    approved: int = 0
    applying: int = 0
    applied: int = 0
    voided: int = 0


class ConsolidationRuns(_Counts):
    pending_review: int = 0
    no_op: int = 0
    applied: int = 0
    stale: int = 0


class ConsolidationStatus(_Counts):
    """L2/L3 consolidation: the baseline (last successful run), the run awaiting review, the
    approved entries new or changed since the baseline and whether synthesis is due."""

    baseline_run_id: str | None
    baseline_status: str | None  # no_op | applied
    pending_run_id: str | None
    # entries the tree's consolidated.json says the committed scenes and doctrine cover
    committed_entries: int | None = None
    new_since_baseline: int
    # entries the baseline rested on that are no longer approved (deprecated or removed)
    left_since_baseline: int = 0
    due_at: int
    due: bool
    runs: ConsolidationRuns


class ProjectionStatus(BaseModel):
    model_config = WIRE

    generation: int
    coverage: Coverage
    source_tree_digest: str
    analyzer_version: str
    analyzer_current: bool  # False: the next sync rebuilds the projection
    synced_at: str  # canonical UTC instant
    counts: ProjectionCounts
    diagnostics: list[Diagnostic]


class LintSummary(BaseModel):
    model_config = WIRE

    policy_version: str
    files: int
    blocking: int
    warnings: int
    rules: dict[str, int]  # finding rule -> how many


class IgnoredRule(BaseModel):
    """A rule git ignores memory files by (`repo/ignored.py`): the team never gets them."""

    model_config = WIRE

    rule: str  # `.gitignore:1 .threadshare/`: the rules file, its line and the pattern
    paths: list[str]


class VoidedPlan(BaseModel):
    """A plan prepared and not promoted that can no longer be: a candidate it binds changed
    since (a later merge consumed it), or a target file did (a `git pull` brought a teammate's
    version of it). The journal voids it at the next promote."""

    model_config = WIRE

    plan_id: str
    void_code: str
    why: str
    # what makes it again: a consolidation is synthesized again, entries and Skills reviewed
    next: str


TreeState = Literal["present", "missing", "unsafe"]


class MemoryStatus(BaseModel):
    model_config = WIRE

    repository_key: str
    worktree_key: str
    memory_root: str
    tree: TreeState
    tree_problem: str | None = None  # why an unsafe tree is unsafe (UNSAFE_PATH's message)
    projection: ProjectionStatus | None  # None: never synced
    entries: EntryCounts
    candidates: CandidateCounts
    tasks: TaskCounts
    chunks: ChunkCounts
    promotions: PromotionCounts
    plans_to_promote: list[str]  # generated plans' ids, newest first: `memory promote --plan`
    plans_voided: list[VoidedPlan]  # prepared, not promoted, and void now: prepare again
    consolidation: ConsolidationStatus
    lint: LintSummary | None  # None when the tree is missing or unsafe
    ignored_by_git: list[IgnoredRule]  # memory files git leaves out of every commit


_COUNTED_TABLES = {
    "candidates": "status",
    "tasks": "status",
    "chunks": "status",
    "promotion_journal": "status",
}


def _count_by_status(
    conn: sqlite3.Connection, table: str, repository_key: str, worktree_key: str
) -> dict[str, int]:
    column = _COUNTED_TABLES[table]
    rows = conn.execute(
        f"SELECT {column}, count(*) FROM {table} "
        "WHERE repository_key = ? AND worktree_key = ? GROUP BY 1",
        (repository_key, worktree_key),
    )
    return {str(status): int(n) for status, n in rows}


def _plans(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str, worktree_root: Path
) -> tuple[list[str], list[VoidedPlan]]:
    """The plans prepared and not promoted: those promote can apply, and those void since."""
    states = plan_states(conn, Owner(repository_key, worktree_key), worktree_root)
    voided = [
        VoidedPlan(
            plan_id=p.plan_id,
            void_code=p.void_code or "",
            why=p.void_message or "",
            next=_made_again(p),
        )
        for p in states
        if p.status == "voided" and p.journal_status == "generated"
    ]
    return [p.plan_id for p in states if p.status == "generated"], voided


def _made_again(plan: PlanState) -> str:
    """What to do about a plan that can no longer be promoted, by the kind of what it holds."""
    if "consolidation-patch" in plan.kinds:
        # its run awaits review until the candidate goes, and synthesize waits for that
        patch = next((c for c in plan.candidate_ids if c.startswith("patch-")), "…")
        discard = discard_command(patch, CANNOT_BE_PROMOTED)
        synthesize = "teamlore memory synthesize"
        return f"discard the consolidation (`{discard}`), then synthesize again (`{synthesize}`)"
    if "skill" in plan.kinds:
        return "review again and prepare a new plan (`teamlore memory confirm --kind skill`)"
    return "review again and prepare a new plan (`teamlore memory confirm`)"


def _projection_status(
    conn: sqlite3.Connection, repository_key: str, worktree_key: str
) -> ProjectionStatus | None:
    row = conn.execute(
        "SELECT generation, coverage, source_tree_digest, analyzer_version, synced_at, "
        "diagnostics_json FROM approved_projection WHERE repository_key = ? AND worktree_key = ?",
        (repository_key, worktree_key),
    ).fetchone()
    if row is None:
        return None
    current = row[3] == ANALYZER_VERSION
    return ProjectionStatus(
        generation=row[0],
        coverage=row[1] if current else "partial",
        source_tree_digest=row[2],
        analyzer_version=row[3],
        analyzer_current=current,
        synced_at=format_instant(datetime.fromtimestamp(row[4] / 1000, UTC)),
        counts=stored_counts(conn, repository_key, worktree_key),
        diagnostics=[Diagnostic.from_json(d) for d in orjson.loads(row[5])],
    )


def _lint_summary(
    worktree_root: Path, cache: LintCache, progress: LintProgress | None
) -> tuple[TreeState, str | None, LintSummary | None, list[str]]:
    """The tree's state, why it is unsafe (if it is), its lint summary and the files linted."""
    try:
        report = lint_tree(worktree_root, memo=cache, progress=progress)
    except errors.TeamloreError as exc:
        if exc.code == errors.MEMORY_NOT_INITIALIZED.code:
            return "missing", None, None, []
        if exc.code == errors.UNSAFE_PATH.code:
            return "unsafe", exc.message, None, []
        raise
    cache.save(report.files)
    report = with_assembled_conflicts(
        _with_deprecations(without_checkout_crlf(report, worktree_root), worktree_root, cache),
        worktree_root,
    )
    return (
        "present",
        None,
        LintSummary(
            policy_version=report.policy_version,
            files=len(report.files),
            blocking=len(report.blocking),
            warnings=len(report.warnings),
            rules=dict(sorted(Counter(f.rule for f in report.findings).items())),
        ),
        report.files,
    )


def _with_deprecations(report: LintReport, worktree_root: Path, cache: LintCache) -> LintReport:
    """`report` with `entry.deprecated-body-changed`: kept in `memory_state_meta` under what
    decides it (deprecations.findings_key), so an unchanged tree runs no git for it (its
    `git log` reads the whole history)."""
    if not report.superseded:
        return report
    digests = {
        path: row[0]
        for path, _ in report.superseded
        if (row := cache.changed.get(path) or cache.kept.get(path)) is not None
    }
    key = findings_key(worktree_root, report.superseded, digests)
    name = f"deprecation-findings/{cache.owner[0]}/{cache.owner[1]}"
    stored = cache.conn.execute("SELECT value FROM memory_state_meta WHERE key = ?", (name,))
    kept = _kept_findings(stored.fetchone(), key)
    if kept is not None:
        return report.with_findings(kept)
    findings = checked_after_deprecation(worktree_root, report.superseded)
    if findings is None:  # git could not answer: nothing to keep, nothing to say
        return report
    if key is not None and not db.is_read_only(cache.conn):
        value = {"key": key, "findings": [[f.file, f.line, f.message] for f in findings]}

        def keep(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO memory_state_meta(key, value) VALUES (?, ?)",
                (name, orjson.dumps(value).decode()),
            )

        db.write_derived(cache.conn, keep)
    return report.with_findings(findings)


def _kept_findings(row: tuple[str] | None, key: str | None) -> list[Finding] | None:
    try:
        kept = orjson.loads(row[0]) if row is not None and key is not None else None
        if not isinstance(kept, dict) or kept.get("key") != key:
            return None
        return [
            Finding(rule=RULE, severity="warn", file=file, line=line, message=message)
            for file, line, message in kept["findings"]
        ]
    except (ValueError, TypeError, KeyError):  # a value no teamlore wrote: check again
        return None


def memory_status(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    worktree_root: Path,
    progress: LintProgress | None = None,
) -> MemoryStatus:
    owner = (repository_key, worktree_key)
    projection = _projection_status(conn, *owner)
    entries = EntryCounts()
    for status, n in conn.execute(
        "SELECT status, count(*) FROM approved_entries "
        "WHERE repository_key = ? AND worktree_key = ? AND kind = 'entry' GROUP BY status",
        owner,
    ):
        setattr(entries, status, n)
    tree, problem, lint, files = _lint_summary(worktree_root, LintCache(conn, *owner), progress)
    ignored = [IgnoredRule.model_validate(rule) for rule in ignored_by_git(worktree_root, files)]
    plans_to_promote, plans_voided = _plans(conn, *owner, worktree_root)
    return MemoryStatus(
        repository_key=repository_key,
        worktree_key=worktree_key,
        memory_root=MEMORY_ROOT,
        tree=tree,
        tree_problem=problem,
        projection=projection,
        entries=entries,
        candidates=CandidateCounts(**_count_by_status(conn, "candidates", *owner)),
        tasks=TaskCounts(**_count_by_status(conn, "tasks", *owner)),
        chunks=ChunkCounts(**_count_by_status(conn, "chunks", *owner)),
        promotions=PromotionCounts(**_count_by_status(conn, "promotion_journal", *owner)),
        plans_to_promote=plans_to_promote,
        plans_voided=plans_voided,
        consolidation=ConsolidationStatus.model_validate(
            status_of(conn, Owner(*owner), worktree_root)
        ),
        lint=lint,
        ignored_by_git=ignored,
    )
