"""Runner plans: the request models shared by the runner operations, what a plan discloses
(coverage, disclosure summary), writing RunnerExecutionPlan@v1 files and an
AuthorizationManifest@v1, and the two preview operations (`memory.extract_preview`,
`memory.consolidate_preview`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.shapes.strict import WIRE
from teamlore.ops.memory.recall import MAX_LIMIT, QUERY_HELP, Query, RecallRequest
from teamlore.ops.registry import OpContext, operation
from teamlore.ops.runner.waiting import memory_owner, plan_owner

RunnerField = Literal["claude", "codex", "openai"]
PREVIEW_FORMAT = "threadshare-memory-extraction-preview@v1"
RUN_FORMAT = "teamlore-runner-run@1"
REVERIFY_FORMAT = "teamlore-runner-conformance@1"

_REJECTED_STAGE_CODES = frozenset(
    {
        "EVIDENCE_NOT_IN_TASK",
        "STATEMENT_UNCITED",
        "STAGE_REQUEST_INVALID",
        "BINDING_MISMATCH",
        "CONSOLIDATION_INVALID",
    }
)


class _Wire(BaseModel):
    model_config = WIRE


class RunnerOptions(_Wire):
    runner: RunnerField = Field(description="claude, codex or openai.")
    runner_model: str | None = Field(
        None, min_length=1, max_length=200, description="Model the runner asks for."
    )
    runner_endpoint: str | None = Field(
        None,
        min_length=1,
        max_length=2048,
        description="Model endpoint (API root); default: the runner's own.",
    )


class ExtractPreviewRequest(RunnerOptions):
    since: str | None = Field(None, description="Window start, canonical UTC.")
    until: str | None = Field(None, description="Window end, exclusive, canonical UTC.")
    query: Query = Field("", description=QUERY_HELP)
    providers: list[str] = Field(default_factory=list, description="claude, codex, pi")
    session_keys: list[str] = Field(default_factory=list, description="Only these sessions.")
    tool_capability_keys: list[str] = Field(
        default_factory=list, description="Only turns that used one of these tools."
    )
    skill_capability_keys: list[str] = Field(
        default_factory=list, description="Only turns that invoked one of these Skills."
    )
    result_evidence: list[str] = Field(
        default_factory=list, description="provider-completed, abandoned, unknown"
    )
    capability_terminal_states: list[str] = Field(
        default_factory=list, description="With tool or Skill keys: how the invocation ended."
    )
    request: dict[str, Any] | None = Field(
        None, description="A whole MemoryExtractionRequest@v1 document instead of the parameters."
    )
    limit: int = Field(MAX_LIMIT, ge=1, le=MAX_LIMIT, description="Tasks to plan (1..8).")

    def recall_request(self) -> RecallRequest:
        return RecallRequest.model_validate(
            {
                "since": self.since,
                "until": self.until,
                "query": self.query,
                "providers": self.providers,
                "sessionKeys": self.session_keys,
                "toolCapabilityKeys": self.tool_capability_keys,
                "skillCapabilityKeys": self.skill_capability_keys,
                "resultEvidence": self.result_evidence,
                "capabilityTerminalStates": self.capability_terminal_states,
                "request": self.request,
                "limit": self.limit,
            }
        )


class ExtractRunRequest(_Wire):
    approve_plan: str | None = Field(None, description="Digest of the plan to approve and run.")
    approve_manifest: str | None = Field(
        None, description="Digest of the manifest whose plans to approve and run."
    )
    runner: RunnerField | None = Field(None, description="Must match the plan's runner if given.")


class ReverifyRequest(RunnerOptions):
    pass


class ConsolidatePreviewRequest(RunnerOptions):
    if_due: bool = Field(
        False, description="Plan nothing unless at least 20 approved entries are new or changed."
    )
    full: bool = Field(False, description="Carry every approved entry, not only the new ones.")


# -- shared helpers -----------------------------------------------------------------------------


def _choice(options: RunnerOptions) -> Any:
    from teamlore.runner.profiles import RunnerChoice

    return RunnerChoice(options.runner, options.runner_model, options.runner_endpoint)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _extraction_coverage(task: dict[str, Any], stdin: bytes) -> list[dict[str, Any]]:
    from teamlore.core.canonical import canonical_json
    from teamlore.runner.plans import coverage_item

    chunk = task["chunk"]
    turns = chunk["turnRange"]
    truncated = any(c["completeness"] == "truncated" for c in chunk["coverage"])
    session_key = _session_of(task)
    return [
        coverage_item(
            "transcript",
            f"{session_key}:{turns['start']}-{turns['end']}",
            chunk["transcript"].encode("utf-8"),
            truncated=truncated,
        ),
        coverage_item(
            "prompt",
            str(task["contract"]["prompts"]["promptVersion"]),
            canonical_json(task["contract"]),
        ),
        coverage_item("prompt", "runner-input", stdin),
    ]


def _session_of(task: dict[str, Any]) -> str:
    """An opaque, stable id of the chunk's turns (meaningless outside this machine)."""
    from teamlore.core.canonical import digest

    return digest(task["binding"]["turnRevisions"])[:16]


def _adjudication_coverage(task: dict[str, Any], stdin: bytes) -> list[dict[str, Any]]:
    from teamlore.core.canonical import canonical_json
    from teamlore.runner.plans import coverage_item

    items = [coverage_item("draft", d["candidateId"], canonical_json(d)) for d in task["drafts"]]
    for pool_item in task["pool"]:
        kind = "approved-entry" if pool_item.get("sourceKind") == "approved" else "candidate-pool"
        items.append(
            coverage_item(
                kind,
                str(pool_item.get("id")),
                canonical_json(pool_item),
                revision=pool_item.get("revision")
                if isinstance(pool_item.get("revision"), int)
                else None,
            )
        )
    items.append(coverage_item("prompt", "runner-input", stdin))
    return items


def _consolidation_coverage(task: dict[str, Any], stdin: bytes) -> list[dict[str, Any]]:
    from teamlore.core.canonical import canonical_json
    from teamlore.runner.plans import coverage_item

    items = [
        coverage_item("approved-entry", str(e.get("entryId")), canonical_json(e))
        for e in task["entries"]
    ]
    items += [coverage_item("scene", str(s.get("name")), canonical_json(s)) for s in task["scenes"]]
    if task.get("doctrine") is not None:
        items.append(coverage_item("doctrine", "doctrine", canonical_json(task["doctrine"])))
    items.append(coverage_item("prompt", "runner-input", stdin))
    return items


_COVERAGE = {
    "extraction": _extraction_coverage,
    "adjudication": _adjudication_coverage,
    "consolidation": _consolidation_coverage,
}


def _adjudication_groups(conn: Any, waiting: list[str]) -> list[list[str]]:
    """The extraction tasks whose drafts await adjudication, in runs of at most 64 drafts: one
    adjudication task (and plan) per run, never one per chunk (docs/runner.md "Two approvals")."""
    from teamlore.contracts.adjudication import MAX_DRAFTS_PER_ADJUDICATION
    from teamlore.memory.extraction.drafts import load_drafts

    groups: list[list[str]] = []
    drafts_in_last = 0
    for task_id in waiting:
        count = len(load_drafts(conn, task_id))
        if not groups or drafts_in_last + count > MAX_DRAFTS_PER_ADJUDICATION:
            groups.append([])
            drafts_in_last = 0
        groups[-1].append(task_id)
        drafts_in_last += count
    return groups


def _plan_for(
    kind: str, task: dict[str, Any], runner: Any, *, supersedes: str | None = None
) -> tuple[Any, bytes]:
    """The plan of `task`; what it sends is the task with its secrets masked (`masked_task`), so
    no plan's bytes hold a secret."""
    from teamlore.ops.memory.masking import masked_task
    from teamlore.runner.plans import build_plan
    from teamlore.runner.prompt import runner_input

    sent = masked_task(task)
    stdin = runner_input(kind, sent)  # type: ignore[arg-type]
    coverage = _COVERAGE[kind](sent, stdin)
    plan = build_plan(
        task_kind=kind,
        task_id=task["taskId"],
        stdin=stdin,
        coverage=coverage,
        runner=runner,
        supersedes=supersedes,
    )
    return plan, stdin


def _new_plan_for(
    ctx: OpContext, kind: str, task: dict[str, Any], runner: Any
) -> tuple[Any, bytes]:
    """The plan for `task`; when the same bytes were planned before and their delivery became
    indeterminate, a new plan that supersedes it (another digest, so it needs its own
    approval: docs/runner.md "Limits and failures")."""
    from teamlore.runner.plans import is_indeterminate

    plan, stdin = _plan_for(kind, task, runner)
    while is_indeterminate(ctx.home, plan.plan_digest):
        plan, stdin = _plan_for(kind, task, runner, supersedes=plan.plan_digest)
    return plan, stdin


def extraction_session_key(conn: Any, task_id: str) -> str | None:
    """The session key (as `sessions list`, `show` and `exclude` take it) of an extraction
    task's chunk: what a person names to see or keep out the session a plan sends."""
    row = conn.execute(
        "SELECT c.session_key FROM tasks t JOIN chunks c ON c.chunk_ref = t.chunk_ref "
        "WHERE t.task_id = ?",
        (task_id,),
    ).fetchone()
    return None if row is None else str(row[0])


def _disclosure(
    kind: str,
    task: dict[str, Any],
    stdin: bytes,
    session_key: str | None = None,
    masked_by_recall: int = 0,
) -> dict[str, Any]:
    """What a plan discloses of the task it sends, and how many secrets were masked in it:
    those recall masked in its transcript (`masked_by_recall`) and those the plan masked in
    the rest, each sent as its redacted preview (`…[40 chars]`). A preview the task held
    already (a transcript quoting `memory lint` output) is no secret masked."""
    from teamlore.core.secrets.mask import masks_in  # planning only: not at an MCP server's start
    from teamlore.runner.prompt import runner_input

    disclosed = _disclosed_task(kind, task, stdin, session_key)
    unmasked = runner_input(kind, task)  # type: ignore[arg-type]
    by_plan = masks_in(stdin.decode("utf-8")) - masks_in(unmasked.decode("utf-8"))
    disclosed["secretsMasked"] = masked_by_recall + by_plan
    return disclosed


def _disclosed_task(
    kind: str, task: dict[str, Any], stdin: bytes, session_key: str | None
) -> dict[str, Any]:
    if kind == "extraction":
        turns = task["chunk"]["turnRange"]
        return {
            "sessions": 1,
            "sessionKey": session_key,
            "turns": len(task["chunk"]["turnEvidence"]),  # those sent: the range may skip some
            "turnRange": turns,
            "transcriptBytes": len(task["chunk"]["transcript"].encode("utf-8")),
            "evidenceItems": len(task["evidenceCatalog"]),
            "bytes": len(stdin),
        }
    if kind == "consolidation":
        return {
            "entries": len(task["entries"]),
            "scenes": len(task["scenes"]),
            "doctrine": task.get("doctrine") is not None,
            "bytes": len(stdin),
        }
    return {
        "drafts": len(task["drafts"]),
        "poolItems": len(task["pool"]),
        "bytes": len(stdin),
    }


def _write_plan(
    ctx: OpContext,
    owner: Any,
    runner: Any,
    kind: str,
    task: dict[str, Any],
    source: dict[str, Any],
    masked_by_recall: int = 0,
) -> dict[str, Any]:
    from teamlore.runner.plans import PlanFile, write_plan

    plan, stdin = _new_plan_for(ctx, kind, task, runner)
    disclosure = _disclosure(kind, task, stdin, source.get("sessionKey"), masked_by_recall)
    write_plan(
        ctx.home,
        PlanFile(
            plan, owner, runner.choice.to_json(), runner.describe(), source, disclosure, _now()
        ),
    )
    return _plan_summary(plan, disclosure)


def _plan_summary(plan: Any, disclosure: dict[str, Any]) -> dict[str, Any]:
    return {
        "planDigest": plan.plan_digest,
        "taskKind": plan.task_kind,
        "taskId": plan.task_id,
        "runnerProfile": plan.runner_profile,
        "provider": plan.provider,
        "model": plan.model,
        "endpoint": plan.endpoint,
        "bytesToSend": plan.bytes_to_send,
        "runnerInputDigest": plan.runner_input_digest,
        "providerRetention": plan.provider_retention,
        # a re-send of bytes whose delivery became indeterminate: the provider may hold them
        "supersedesPlanDigest": plan.supersedes_plan_digest,
        "disclosure": disclosure,
    }


def _manifest(ctx: OpContext, owner: Any, summaries: list[dict[str, Any]]) -> dict[str, Any] | None:
    from teamlore.runner.plans import MAX_PLANS_PER_MANIFEST, build_manifest, write_manifest

    if len(summaries) < 2:
        return None
    listed = summaries[:MAX_PLANS_PER_MANIFEST]  # the caller plans no more than that
    manifest = build_manifest(listed)
    write_manifest(ctx.home, manifest, owner)
    return {
        "manifestDigest": manifest.manifest_digest,
        "plans": len(listed),
        "totalBytes": manifest.total_bytes,
    }


def _preview_result(
    runner: Any,
    plans: list[dict[str, Any]],
    manifest: dict[str, Any] | None,
    note: str,
    *,
    command: str = "extract",
    fmt: str = PREVIEW_FORMAT,
) -> dict[str, Any]:
    approve = None
    if manifest is not None:
        approve = f"teamlore memory {command} --approve-manifest {manifest['manifestDigest']}"
    elif plans:
        approve = f"teamlore memory {command} --approve-plan {plans[0]['planDigest']}"
    return {
        "action": f"{command}-preview",
        "format": fmt,
        "runner": {
            **runner.choice.to_json(),
            "provider": runner.provider,
            "model": runner.model,
            "endpoint": runner.endpoint,
            "binary": runner.binary.to_json(),
        },
        "plans": plans,
        "manifest": manifest,
        "totalBytes": sum(p["bytesToSend"] for p in plans),
        "sent": False,
        "approve": approve,
        "note": note,
    }


# -- plan ---------------------------------------------------------------------------------------


@operation(
    "memory.extract_preview",
    input_model=ExtractPreviewRequest,
    side_effect="state-write",
    capability="team",
    mcp_tool="threadshare_memory_extract_preview",
    stability="legacy-debt",  # the batch path; agents use recall (docs/runner.md)
    approval_policy="history-read",
    idempotent=True,
    response="threadshare-memory-extraction-preview@v1",
    description="Plan an unattended batch extraction (runner claude, codex or openai) over this "
    "repository's past sessions: writes pending RunnerExecutionPlan@v1 files (0600) and returns "
    "their digests with what each would disclose (bytes, turns, provider, endpoint). Never "
    "sends or runs anything and never returns transcript text; the user approves with "
    "`teamlore memory extract --approve-plan DIGEST` on the command line.",
)
def memory_extract_preview(ctx: OpContext, request: ExtractPreviewRequest) -> dict[str, Any]:
    """Plan a batch extraction: pending plans and the digest to approve; nothing is sent."""
    from teamlore.memory.extraction.adjudication_tasks import live_adjudication_task
    from teamlore.memory.extraction.drafts import awaiting_adjudication
    from teamlore.memory.extraction.recall import recall
    from teamlore.memory.extraction.selection import with_full_session_keys
    from teamlore.ops.memory.masking import masked_by_recall
    from teamlore.ops.owner import open_owner
    from teamlore.runner.conformance import conformance_summary
    from teamlore.runner.plans import MAX_PLANS_PER_MANIFEST
    from teamlore.runner.profiles import resolve_runner

    normalized = request.recall_request().normalized()
    runner = resolve_runner(_choice(request), home=ctx.home)
    with open_owner(ctx, sessions=True) as stores:
        normalized = with_full_session_keys(stores.index, normalized)
        stores.sync_projection()
        owner = plan_owner(stores.identity)
        # adjudications first (docs/runner.md): their task binds the pool as it is now, which
        # the drafts these extractions stage would change (a manifest runs its plans in this
        # order); one manifest lists at most 8 plans, so the extractions take what is left
        waiting = awaiting_adjudication(stores.state, memory_owner(stores.identity))
        groups = _adjudication_groups(stores.state, waiting)
        planned_groups = groups[:MAX_PLANS_PER_MANIFEST]
        plans: list[dict[str, Any]] = []
        for group in planned_groups:
            task = live_adjudication_task(
                stores.state, memory_owner(stores.identity), group, reissue=True
            )
            if task is not None:
                grouped = {"kind": "adjudication", "extractionTaskIds": group}
                plans.append(_write_plan(ctx, owner, runner, "adjudication", task, grouped))
        room = min(request.limit, MAX_PLANS_PER_MANIFEST - len(plans))
        recalled: dict[str, Any] = {"sources": [], "note": ""}
        if room > 0:
            recalled = recall(
                stores.index,
                stores.state,
                stores.identity,
                normalized,
                home=ctx.home,
                limit=room,
            )
        for task in recalled["sources"]:
            session_key = extraction_session_key(stores.state, task["taskId"])
            source = {
                "kind": "extraction",
                "request": normalized,
                "taskId": task["taskId"],
                "sessionKey": session_key,
            }
            masked = (
                0
                if session_key is None
                else masked_by_recall(stores.index, stores.identity, task, session_key, ctx.home)
            )
            plans.append(_write_plan(ctx, owner, runner, "extraction", task, source, masked))
        manifest = _manifest(ctx, owner, plans)
        conformance = conformance_summary(stores.state, runner)
    notes = [str(recalled["note"])]
    deferred = sum(len(group) for group in groups[MAX_PLANS_PER_MANIFEST:])
    if deferred:
        notes.append(f"{deferred} more draft batches await adjudication; plan again after these.")
    if room <= 0:
        notes.append("No extraction planned: the adjudications fill this manifest.")
    if not plans:
        notes.append("Nothing to plan.")
    note = " ".join(n for n in notes if n)
    result = _preview_result(runner, plans, manifest, note)
    result["deferredAdjudications"] = deferred
    result["runnerConformance"] = conformance  # unverified: the approval would refuse
    return result


@contextmanager
def _stores_for(ctx: OpContext, kind: str | None) -> Iterator[Any]:
    """What a plan's task is derived from: the registered worktree with its session index
    (extraction, adjudication), or the worktree and state DB alone (consolidation reads the
    approved tree, like `memory synthesize`)."""
    from teamlore.ops.owner import open_owner

    sessions = kind != "consolidation"
    with open_owner(ctx, sessions=sessions) as owner:
        if sessions:
            owner.sync_projection()
        yield owner


@operation(
    "memory.consolidate_preview",
    input_model=ConsolidatePreviewRequest,
    side_effect="state-write",
    capability="team",
    mcp_tool="threadshare_memory_consolidate_preview",
    stability="legacy-debt",
    approval_policy="history-read",
    idempotent=True,
    response="threadshare-memory-consolidation-preview@v1",
    description="Plan an unattended L2/L3 consolidation (runner claude, codex or openai): "
    "runs synthesize and writes a pending RunnerExecutionPlan@v1 (0600) for its task; returns "
    "the digest and what it would disclose (entries, scenes, bytes, provider, endpoint). Never "
    "sends or runs anything; the user approves with `teamlore memory consolidate "
    "--approve-plan DIGEST`.",
)
def memory_consolidate_preview(
    ctx: OpContext, request: ConsolidatePreviewRequest
) -> dict[str, Any]:
    """Plan a batch consolidation: a pending plan and the digest to approve; nothing is sent."""
    from teamlore.memory.consolidation.synthesize import synthesize
    from teamlore.runner.conformance import conformance_summary
    from teamlore.runner.profiles import resolve_runner

    if request.if_due and request.full:
        raise errors.TeamloreError(errors.USAGE, "ifDue and full cannot be combined")
    runner = resolve_runner(_choice(request), home=ctx.home)
    with _stores_for(ctx, "consolidation") as stores:
        result = synthesize(stores.state, stores.identity, full=request.full, if_due=request.if_due)
        plans: list[dict[str, Any]] = []
        task = result.get("task")
        if isinstance(task, dict):
            source = {"kind": "consolidation", "full": request.full}
            owner = plan_owner(stores.identity)
            plans.append(_write_plan(ctx, owner, runner, "consolidation", task, source))
        conformance = conformance_summary(stores.state, runner)
    note = str(result.get("note") or "")
    result = _preview_result(
        runner,
        plans,
        None,
        note if plans else f"{note}. Nothing to plan.",
        command="consolidate",
        fmt="threadshare-memory-consolidation-preview@v1",
    )
    result["runnerConformance"] = conformance  # unverified: the approval would refuse
    return result
