"""`teamlore demo`: the whole spine on bundled sample data, in a throwaway folder.

It builds a small git repository (acme-billing) with real commits, writes one Codex rollout and
one Claude Code transcript about work on it (shaped like the real files, one of them partly in
Chinese), indexes them into a private state dir inside the demo folder, registers the
repository, links sessions to commits, initializes the team memory tree and runs a few searches.
Nothing outside the demo folder is read or written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from teamlore.core import errors, refusals
from teamlore.core.paths import display_path
from teamlore.memory.promotion.queue import prepare_request_from_review
from teamlore.ops.demo.consolidation import demo_consolidation
from teamlore.ops.demo.skill import demo_skill
from teamlore.ops.demo.world import (
    _git,
    build_repository,
    write_claude_session,
    write_codex_session,
)
from teamlore.ops.registry import OpContext, operation, run_operation

# The demo's scripted agent: what an agent reading the two sample sessions would propose. A real
# run uses the agent you talk to (or a batch runner); here the answers are fixed so the demo needs
# no model. Statements cite the task's own evidence ids; the typed fact is teamlore's.
SCRIPTED_CLAIMS = {
    "invoice": (
        "Invoice export must sort rows by id: unordered exports made test_export flaky in the "
        "release job.",
        "release",
    ),
    "迁移": (
        "staging 上的数据库迁移要把锁等待超时设为 30 秒（LOCK_TIMEOUT='30s'），"
        "否则 alembic upgrade head 会因锁等待超时而失败。",
        "数据库迁移",
    ),
}

INVOICE_CAUSE = (
    "test_export failed because export_invoices returned rows in database order, which "
    "differs between runs."
)


def scripted_drafts(source: dict[str, Any], facts: list[dict[str, Any]]) -> dict[str, Any]:
    transcript = source["chunk"]["transcript"]
    text, scene = SCRIPTED_CLAIMS["invoice" if "invoice" in transcript else "迁移"]
    turns = [t["evidenceId"] for t in source["chunk"]["turnEvidence"]]
    fact = next((f for f in facts if f["renderer"] == "commit-changed-path@1"), None)
    claim = {
        "statementId": "claim",
        "text": text,
        "evidenceIds": turns[:2] + (fact["evidenceIds"] if fact else []),
    }
    statements = [claim]
    if "invoice" in transcript:  # a second generated claim, resting on the turn that found it
        statements.append({"statementId": "cause", "text": INVOICE_CAUSE, "evidenceIds": turns[:1]})
    if fact is not None:
        statements.append(
            {"statementId": "fact", "text": fact["text"], "evidenceIds": fact["evidenceIds"]}
        )
    return {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": source["taskId"],
        "binding": source["binding"],
        "candidates": [
            {
                "content": text,
                "type": "work_method",
                "priority": 70,
                "confidence": "high",
                "scene": scene,
                "statements": statements,
            }
        ],
    }


def scripted_decisions(adjudication_task: dict[str, Any]) -> dict[str, Any]:
    """Store every draft that has no near neighbour; skip one that repeats a neighbour."""
    recall_sets = {r["draftRef"]: r["ordered"] for r in adjudication_task["recallSets"]}
    decisions = []
    for draft in adjudication_task["drafts"]:
        ordered = recall_sets.get(draft["candidateId"], [])
        approved = [hit["id"] for hit in ordered if hit["sourceKind"] == "approved"]
        action = "skip" if approved else "store"
        decisions.append(
            {
                "draftRef": draft["candidateId"],
                "action": action,
                "targetIds": approved[:1],
                "mergedFields": None,
            }
        )
    return {
        "format": "threadshare-memory-adjudication-result@v1",
        "taskId": adjudication_task["taskId"],
        "binding": adjudication_task["binding"],
        "adjudications": decisions,
    }


class DemoRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    directory: str = Field(description="Empty or missing folder to build the demo in.")
    review_in_browser: bool = Field(
        False,
        alias="reviewInBrowser",
        description="Stop after review: the candidates wait in quarantine for `teamlore ui`.",
    )


def _empty_folder(root: Path) -> Path:
    """`root`, made if missing; refused unless it is (or becomes) an empty folder."""
    if root.is_dir() and any(root.iterdir()):
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"{display_path(root)} is not empty; give the demo an empty folder",
        )
    try:
        root.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file, or a link to one
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"{display_path(root)} is not a folder; give the demo an empty folder",
        ) from None
    except PermissionError:
        raise  # PERMISSION_DENIED, as anywhere
    except OSError as exc:
        if refusals.storage_error(exc) is not None:
            raise  # DISK_FULL or STATE_READ_ONLY, as anywhere
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"cannot make the folder {display_path(root)}: {exc.strerror or exc}",
        ) from None
    return root


def _own_sources(root: Path) -> None:
    """The demo's state dir reads the demo's sessions only: its config.toml's `[sources]` names
    the demo's Codex and Claude Code folders and no Pi folder, so a plain `teamlore sync` there
    (the next step after the demo's `export TEAMLORE_HOME=…`) never indexes the person's own
    ~/.codex, ~/.claude or ~/.pi sessions into it."""
    from teamlore.core.config import load_config, save_config

    state = root / "state"
    sources = {
        "codex": [str(root / "codex" / "sessions")],
        "claude": [str(root / "claude" / "projects")],
        "pi": [],
    }
    save_config(load_config(state)._replace(sources=sources), state)


@operation("demo", input_model=DemoRequest, side_effect="state-write")
def demo(ctx: OpContext, request: DemoRequest) -> dict[str, Any]:
    """Build sample sessions and a repository, index them and search them."""
    root = _empty_folder(Path(request.directory).expanduser().absolute())
    repo, commits = build_repository(root)
    write_codex_session(root, repo, commits["export"])
    write_claude_session(root, repo, commits["migration"])
    inner = OpContext(cwd=repo, home=root / "state", progress=ctx.progress)
    steps: list[dict[str, Any]] = []

    def step(name: str, summary: str, **detail: Any) -> None:
        steps.append({"step": name, "summary": summary, **detail})

    step(
        "build",
        f"git repository acme-billing with {len(commits)} commits; one Codex and one "
        "Claude Code session about it",
        commits=commits,
    )
    _own_sources(root)
    synced = run_operation("sync", inner, {"repository": str(repo)})
    step(
        "sync",
        f"indexed {synced['sessions']} sessions, {synced['turns']} turns; "
        f"{synced['delivery']['deliveryEdges']} delivery edges to commits",
        result=synced,
    )
    searches = {
        q: run_operation("sessions.search", inner, {"query": q, "limit": 3})["hits"]
        for q in ("flaky invoice export", "数据库迁移", "lock_timeout")
    }
    step(
        "sessions-search",
        "searched past turns in English, Chinese and by identifier",
        searches=searches,
    )
    run_operation("memory.init", inner, {})
    step("memory-init", "created .threadshare/memory in the repository")
    recalled = run_operation(
        "memory.recall",
        inner,
        {"since": "2026-11-01T00:00:00.000Z", "until": "2026-12-01T00:00:00.000Z"},
    )
    facts = {f["taskId"]: f["facts"] for f in recalled.get("typedFacts", [])}
    step(
        "recall",
        f"{len(recalled['sources'])} extraction tasks, "
        f"{sum(len(f) for f in facts.values())} typed facts rendered from commits",
        result=recalled,
    )
    staged = []
    for source in recalled["sources"]:
        drafts = run_operation(
            "memory.stage", inner, scripted_drafts(source, facts.get(source["taskId"], []))
        )
        staged.append(
            run_operation("memory.stage", inner, scripted_decisions(drafts["adjudicationTask"]))
        )
    step(
        "stage",
        f"the demo's scripted agent proposed {len(staged)} candidates (fixed answers, "
        "no model) and adjudicated them against team memory; they wait in quarantine",
        results=staged,
    )
    review = run_operation("memory.review", inner, {"kind": "entry"})
    step(
        "review",
        f"{review['count']} candidates to review, each statement with its evidence",
        result=review,
    )
    if request.review_in_browser:
        return _result(root, repo, steps)
    prepared = run_operation("memory.prepare", inner, prepare_request_from_review(review["items"]))
    step(
        "confirm-prepare",
        "the demo confirms every statement in your place (you would read "
        "each one), then prepares an exact promotion plan",
        result=prepared,
    )
    promoted = run_operation(
        "memory.promote",
        inner,
        {"planId": prepared["planId"], "planDigest": prepared["planDigest"]},
    )
    written = [f["targetPath"] for f in promoted["files"]]
    step(
        "promote",
        f"wrote {len(written)} reviewed entries (nothing staged or committed)",
        result=promoted,
        files={p: (repo / p).read_text(encoding="utf-8") for p in written},
    )
    found = {
        q: run_operation("memory.search", inner, {"query": q, "limit": 3})
        for q in ("invoice export", "迁移")
    }
    step("memory-search", "the next agent finds them", searches=found)
    demo_skill(inner, root, repo, step)
    demo_consolidation(inner, repo, step)
    status = _git(repo, "status", "--porcelain")
    step("git-status", "the repository only has new working-tree files", porcelain=status)
    return _result(root, repo, steps)


def _result(root: Path, repo: Path, steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "directory": str(root),
        "stateDir": str(root / "state"),
        "repository": str(repo),
        "steps": steps,
    }
