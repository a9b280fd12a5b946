"""The batch runner's operations (docs/runner.md): plan, approve by digest, run, stage.

- `memory.extract_preview` (CLI `memory extract --runner R …` without an approval; MCP
  `threadshare_memory_extract_preview`): selects like `memory.recall`, records the tasks and
  writes one pending RunnerExecutionPlan@v1 per task (plus plans for drafts of earlier runs that
  still await adjudication) and an AuthorizationManifest@v1 when there are several. Sends
  nothing; returns digests and a disclosure summary, never transcript text.
- `memory.run_plan` (CLI only: `memory extract|consolidate --approve-plan|--approve-manifest D`):
  re-derives each approved plan from the current inputs and refuses on any byte change
  (RUNNER_PLAN_MISMATCH), checks the runner's conformance record, logs the authorization, runs
  the runner, validates and stages its answer. An extraction plan's drafts get an adjudication
  plan of their own, which needs its own approval (docs/runner.md "Plans and approval":
  extraction and adjudication are separate deliveries); an adjudication plan's answer
  quarantines the kept candidates for the normal review.
- `memory.reverify_runner` (CLI only): the conformance probe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Literal

import orjson
from pydantic import BaseModel, Field
from pydantic.alias_generators import to_camel

from teamlore.core import errors
from teamlore.core.failpoints import failpoint
from teamlore.core.strict import WIRE
from teamlore.ops.memory.recall import MAX_LIMIT, RecallRequest
from teamlore.ops.registry import OpContext, operation

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
    query: str = Field("", max_length=8192, description="Only turns matching all these terms.")
    providers: list[str] = Field(default_factory=list, description="claude, codex, pi")
    session_keys: list[str] = Field(default_factory=list, description="Only these sessions.")
    tool_capability_keys: list[str] = Field(
        default_factory=list, description="Only turns that used one of these tools."
    )
    result_evidence: list[str] = Field(
        default_factory=list, description="provider-completed, abandoned, unknown"
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
                "resultEvidence": self.result_evidence,
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


def _plan_owner(identity: Any) -> Any:
    from teamlore.runner.plans import Owner

    return Owner(identity.repository_key, identity.worktree_key)


def _memory_owner(identity: Any) -> Any:
    from teamlore.memory.extraction.tasks import Owner

    return Owner(identity.repository_key, identity.worktree_key)


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


def _plan_for(kind: str, task: dict[str, Any], runner: Any) -> tuple[Any, bytes]:
    from teamlore.runner.plans import build_plan
    from teamlore.runner.prompt import runner_input

    stdin = runner_input(kind, task)  # type: ignore[arg-type]
    coverage = _COVERAGE[kind](task, stdin)
    plan = build_plan(
        task_kind=kind, task_id=task["taskId"], stdin=stdin, coverage=coverage, runner=runner
    )
    return plan, stdin


def _disclosure(kind: str, task: dict[str, Any], stdin: bytes) -> dict[str, Any]:
    if kind == "extraction":
        turns = task["chunk"]["turnRange"]
        return {
            "sessions": 1,
            "turns": turns["end"] - turns["start"] + 1,
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
) -> dict[str, Any]:
    from teamlore.runner.plans import PlanFile, write_plan

    plan, stdin = _plan_for(kind, task, runner)
    disclosure = _disclosure(kind, task, stdin)
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
    description="Plan an unattended batch extraction (runner claude, codex or openai) over this "
    "repository's past sessions: writes pending RunnerExecutionPlan@v1 files (0600) and returns "
    "their digests with what each would disclose (bytes, turns, provider, endpoint). Never "
    "sends or runs anything and never returns transcript text; the user approves with "
    "`teamlore memory extract --approve-plan DIGEST` on the command line.",
)
def memory_extract_preview(ctx: OpContext, request: ExtractPreviewRequest) -> dict[str, Any]:
    """Plan a batch extraction: pending plans and the digest to approve; nothing is sent."""
    from teamlore.memory.extraction.recall import recall
    from teamlore.memory.extraction.staging import awaiting_adjudication, live_adjudication_task
    from teamlore.ops.owner import open_owner
    from teamlore.runner.plans import MAX_PLANS_PER_MANIFEST
    from teamlore.runner.profiles import resolve_runner

    normalized = request.recall_request().normalized()
    runner = resolve_runner(_choice(request), home=ctx.home)
    with open_owner(ctx, sessions=True) as stores:
        stores.sync_projection()
        owner = _plan_owner(stores.identity)
        recalled = recall(
            stores.index,
            stores.state,
            stores.identity,
            normalized,
            home=ctx.home,
            limit=request.limit,
        )
        plans = [
            _write_plan(
                ctx,
                owner,
                runner,
                "extraction",
                task,
                {"kind": "extraction", "request": normalized, "taskId": task["taskId"]},
            )
            for task in recalled["sources"]
        ]
        # one manifest lists at most 8 plans: adjudications beyond that wait for the next plan
        waiting = awaiting_adjudication(stores.state, _memory_owner(stores.identity))
        room = max(0, MAX_PLANS_PER_MANIFEST - len(plans))
        for extraction_task_id in waiting[:room]:
            task = live_adjudication_task(
                stores.state, _memory_owner(stores.identity), extraction_task_id, reissue=True
            )
            if task is not None:
                source = {"kind": "adjudication", "extractionTaskId": extraction_task_id}
                plans.append(_write_plan(ctx, owner, runner, "adjudication", task, source))
        manifest = _manifest(ctx, owner, plans)
    note = recalled["note"]
    deferred = max(0, len(waiting) - room)
    if deferred:
        note = f"{note} {deferred} more draft batches await adjudication; plan again after these."
    if not plans:
        note = f"{note} Nothing to plan."
    result = _preview_result(runner, plans, manifest, note)
    result["deferredAdjudications"] = deferred
    return result


# -- approve and run ----------------------------------------------------------------------------


def _mismatch(plan: Any, rebuilt: Any | None, why: str) -> errors.TeamloreError:
    changed: list[str] = []
    if rebuilt is not None:
        for name in ("runner_input_digest", "input_coverage_digest", "runner_profile", "task_id"):
            if getattr(plan, name) != getattr(rebuilt, name):
                changed.append(to_camel(name))
    return errors.TeamloreError(
        errors.RUNNER_PLAN_MISMATCH,
        f"plan {plan.plan_digest[:12]}… no longer matches its inputs ({why}); make a new plan "
        "with `teamlore memory extract --runner …` and approve that",
        planDigest=plan.plan_digest,
        changed=changed,
    )


def _rederive(stores: Any, ctx: OpContext, plan_file: Any) -> dict[str, Any] | None:
    """The task the plan would send now; None when it is no longer there to send (already
    submitted, stale, or an input bound to it changed — the related-input CAS of recall: a
    change to another session leaves it alone)."""
    from teamlore.memory.extraction.recall import load_task_source
    from teamlore.memory.extraction.staging import live_adjudication_task

    source = plan_file.source
    if source.get("kind") == "extraction":
        task_id = plan_file.plan.task_id
        row = stores.state.execute(
            "SELECT status FROM tasks WHERE task_id = ?", (task_id,)
        ).fetchone()
        if row is None or row[0] not in ("pending", "claimed"):
            return None
        window = source.get("request", {}).get("window", {})
        rederived = load_task_source(
            stores.index,
            stores.state,
            stores.identity,
            task_id,
            home=ctx.home,
            time_window={"start": window.get("after"), "end": window.get("before")},
        )
        return rederived.task
    if source.get("kind") == "adjudication":
        return live_adjudication_task(
            stores.state, _memory_owner(stores.identity), str(source.get("extractionTaskId"))
        )
    if source.get("kind") == "consolidation":
        from teamlore.memory.consolidation.synthesize import synthesize

        result = synthesize(stores.state, stores.identity, full=bool(source.get("full")))
        task = result.get("task")
        if isinstance(task, dict) and task.get("taskId") == plan_file.plan.task_id:
            return task
        return None
    raise errors.TeamloreError(errors.RUNNER_PLAN_INVALID, "the plan names no known source")


def _log_authorization(conn: Any, plan: Any, via: str, manifest_digest: str | None) -> None:
    from teamlore.core import db
    from teamlore.memory.extraction.tasks import now_ms

    with db.write_tx(conn):
        conn.execute(
            "INSERT INTO authorization_log(plan_digest, task_id, runner_input_digest, "
            "input_coverage_digest, provider, model, endpoint, bytes, decided_at, via, "
            "manifest_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                plan.plan_digest,
                plan.task_id,
                plan.runner_input_digest,
                plan.input_coverage_digest,
                plan.provider,
                plan.model,
                plan.endpoint,
                plan.bytes_to_send,
                now_ms(),
                via,
                manifest_digest,
            ),
        )
        conn.execute(
            "UPDATE tasks SET authorization_plan_digest = ? WHERE task_id = ?",
            (plan.plan_digest, plan.task_id),
        )


def _secret_free(kind: str, document: dict[str, Any]) -> None:
    from teamlore.core.secrets import scan_content

    texts: list[str] = []
    if kind == "extraction":
        for candidate in document.get("candidates") or []:
            if isinstance(candidate, dict):
                texts.append(str(candidate.get("content", "")))
                texts.extend(
                    str(s.get("text", ""))
                    for s in candidate.get("statements") or []
                    if isinstance(s, dict)
                )
    else:
        for decision in document.get("adjudications") or []:
            if isinstance(decision, dict) and isinstance(decision.get("mergedFields"), dict):
                texts.append(str(decision["mergedFields"].get("content", "")))
    for text in texts:
        blocking = [hit for hit in scan_content(text) if hit.severity == "block"]
        if blocking:
            raise errors.TeamloreError(
                errors.RUNNER_OUTPUT_SECRET,
                f"the runner's answer contains a {blocking[0].rule} finding; nothing was staged",
                rule=blocking[0].rule,
            )


def _stage(stores: Any, ctx: OpContext, kind: str, document: dict[str, Any]) -> dict[str, Any]:
    from teamlore.core.lock import file_lock
    from teamlore.core.paths import resolve_home
    from teamlore.memory.extraction.adjudication import submit_adjudication
    from teamlore.memory.extraction.staging import RecallTaskSources, stage_draft_batch
    from teamlore.ops.memory.stage import SYNC_LOCK_WAIT_SECONDS
    from teamlore.ops.memory.vectors import recall_embedder
    from teamlore.ops.sessions.index import SYNC_LOCK

    owner = _memory_owner(stores.identity)
    try:
        if kind == "extraction":
            embedder = recall_embedder(ctx, stores)
            lock = resolve_home(ctx.home) / SYNC_LOCK
            with file_lock(lock, wait_seconds=SYNC_LOCK_WAIT_SECONDS, what="a sync"):
                return stage_draft_batch(
                    stores.state,
                    document,
                    owner=owner,
                    sources=RecallTaskSources(
                        stores.index, stores.state, stores.identity, home=ctx.home
                    ),
                    embedder=embedder,
                )
        if kind == "consolidation":
            from teamlore.memory.consolidation.staging import stage_patch

            return stage_patch(stores.state, document, identity=stores.identity)
        return submit_adjudication(stores.state, document, owner=owner)
    except errors.TeamloreError as err:
        if err.code in _REJECTED_STAGE_CODES:
            code = (
                errors.RUNNER_OUTPUT_REJECTED
                if err.code in ("EVIDENCE_NOT_IN_TASK", "STATEMENT_UNCITED")
                else errors.RUNNER_OUTPUT_INVALID
            )
            raise errors.TeamloreError(
                code, f"the runner's answer was refused: {err.message}", cause=err.code
            ) from None
        raise


def _recorded_outcome(conn: Any, task_id: str) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT t.status, s.outcome_json FROM tasks t LEFT JOIN submissions s "
        "ON s.task_id = t.task_id WHERE t.task_id = ?",
        (task_id,),
    ).fetchone()
    if row is None or row[0] != "submitted" or row[1] is None:
        return None
    outcome: dict[str, Any] = orjson.loads(row[1])
    return outcome


def _finish(
    ctx: OpContext,
    stores: Any,
    runner: Any,
    plan_file: Any,
    outcome: dict[str, Any],
) -> dict[str, Any]:
    """What a finished plan reports (and, after an extraction, the adjudication plan)."""
    from teamlore.memory.extraction.staging import live_adjudication_task

    kind = plan_file.plan.task_kind
    summary: dict[str, Any] = {
        "planDigest": plan_file.digest,
        "taskKind": kind,
        "taskId": plan_file.plan.task_id,
        "status": "done",
    }
    if kind == "extraction":
        summary["candidates"] = len(outcome.get("candidates") or [])
        summary["noOp"] = bool(outcome.get("noOp"))
        adjudication = None
        if not outcome.get("noOp"):
            task = live_adjudication_task(
                stores.state,
                _memory_owner(stores.identity),
                plan_file.plan.task_id,
                reissue=True,
            )
            if task is not None:
                source = {"kind": "adjudication", "extractionTaskId": plan_file.plan.task_id}
                adjudication = _write_plan(
                    ctx, plan_file.owner, runner, "adjudication", task, source
                )
        summary["adjudicationPlan"] = adjudication
    elif kind == "consolidation":
        summary["noOp"] = bool(outcome.get("noOp"))
        summary["candidateId"] = outcome.get("candidateId")
        summary["quarantined"] = 0 if outcome.get("noOp") else 1
    else:
        decisions = [c for c in outcome.get("candidates") or [] if isinstance(c, dict)]
        summary["decisions"] = [
            {k: c.get(k) for k in ("candidateId", "action", "candidateStatus")} for c in decisions
        ]
        summary["quarantined"] = sum(
            1 for c in decisions if c.get("candidateStatus") == "quarantined"
        )
    return summary


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


def _run_one(
    ctx: OpContext,
    plan_digest: str,
    *,
    via: str,
    manifest_digest: str | None,
    runner_name: str | None,
) -> dict[str, Any]:
    from teamlore.runner import plans as plan_store
    from teamlore.runner.conformance import require_conformant
    from teamlore.runner.process import kill_leftover
    from teamlore.runner.profiles import RUNNER_NAMES, RunnerChoice, resolve_runner
    from teamlore.runner.prompt import parse_answer

    home = ctx.home
    peek = plan_store.plan_kind(home, plan_digest)
    with _stores_for(ctx, peek) as stores:
        plan_file = plan_store.load_plan(home, plan_digest, _plan_owner(stores.identity))
        if runner_name is not None and runner_name != plan_file.runner.get("name"):
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT,
                f"plan {plan_digest[:12]}… is for runner {plan_file.runner.get('name')}, "
                f"not {runner_name}",
            )
        with plan_store.plan_lock(home, plan_digest):
            record = plan_store.read_run_record(home, plan_digest) or {}
            if record.get("state") == "done":
                raise errors.TeamloreError(
                    errors.RUNNER_PLAN_ALREADY_RUN,
                    f"plan {plan_digest[:12]}… already ran at {record.get('finishedAt')}",
                    planDigest=plan_digest,
                )
            if record.get("state") == "running" and isinstance(record.get("pgid"), int):
                kill_leftover(record["pgid"])  # a teamlore killed mid-run left its runner
            kind = plan_file.plan.task_kind
            raw = plan_file.runner
            if raw.get("name") not in RUNNER_NAMES:
                raise errors.TeamloreError(errors.RUNNER_PLAN_INVALID, "the plan names no runner")
            choice = RunnerChoice(raw["name"], raw.get("model"), raw.get("endpoint"))
            runner = resolve_runner(choice, home=home)
            require_conformant(stores.state, runner)
            recorded = _recorded_outcome(stores.state, plan_file.plan.task_id)
            if recorded is not None and record.get("state") == "running":
                # the run staged its answer and teamlore died before it could say so
                summary = _finish(ctx, stores, runner, plan_file, recorded)
                plan_store.write_run_record(
                    home, plan_digest, {"state": "done", "finishedAt": _now(), "recovered": True}
                )
                return {**summary, "recovered": True}
            task = _rederive(stores, ctx, plan_file)
            if task is None:
                raise _mismatch(plan_file.plan, None, "its task is gone or was replaced")
            rebuilt, stdin = _plan_for(kind, task, runner)
            if rebuilt.plan_digest != plan_digest:
                raise _mismatch(plan_file.plan, rebuilt, "the bytes to send changed")
            _log_authorization(stores.state, rebuilt, via, manifest_digest)
            started = {"state": "running", "startedAt": _now(), "via": via}
            plan_store.write_run_record(home, plan_digest, started)

            def on_start(pgid: int) -> None:
                plan_store.write_run_record(home, plan_digest, {**started, "pgid": pgid})

            try:
                output = runner.run(stdin, on_start)
                document = parse_answer(kind, output.text, task)
                _secret_free(kind, document)
                outcome = _stage(stores, ctx, kind, document)
                failpoint("runner.staged")
            except errors.TeamloreError as err:
                plan_store.write_run_record(
                    home,
                    plan_digest,
                    {"state": "failed", "finishedAt": _now(), "code": err.code},
                )
                raise
            summary = _finish(ctx, stores, runner, plan_file, outcome)
            plan_store.write_run_record(
                home, plan_digest, {"state": "done", "finishedAt": _now(), "via": via}
            )
            return summary


def _failed(plan_digest: str, err: errors.TeamloreError) -> dict[str, Any]:
    return {"planDigest": plan_digest, "status": "failed", "error": err.to_json()}


@operation("memory.run_plan", input_model=ExtractRunRequest, side_effect="state-write")
def memory_run_plan(ctx: OpContext, request: ExtractRunRequest) -> dict[str, Any]:
    """Approve a pending plan (or manifest) by digest, run it, stage the runner's answer."""
    from teamlore.ops.owner import open_owner
    from teamlore.runner import plans as plan_store

    if (request.approve_plan is None) == (request.approve_manifest is None):
        raise errors.TeamloreError(
            errors.USAGE, "give exactly one of --approve-plan and --approve-manifest"
        )
    progress: Callable[[int, int, str], None] = ctx.progress or (lambda *_: None)
    if request.approve_plan is not None:
        digest_ = plan_store.check_digest_argument(request.approve_plan)
        progress(0, 1, digest_[:12])
        result = _run_one(
            ctx, digest_, via="digest", manifest_digest=None, runner_name=request.runner
        )
        progress(1, 1, digest_[:12])
        return _run_result([result], manifest=None)
    manifest_digest = plan_store.check_digest_argument(str(request.approve_manifest))
    with open_owner(ctx, sessions=True) as stores:
        manifest = plan_store.load_manifest(ctx.home, manifest_digest, _plan_owner(stores.identity))
    results: list[dict[str, Any]] = []
    total = len(manifest.plans)
    for number, listed in enumerate(manifest.plans):
        progress(number, total, listed.plan_digest[:12])
        try:
            results.append(
                _run_one(
                    ctx,
                    listed.plan_digest,
                    via="manifest",
                    manifest_digest=manifest_digest,
                    runner_name=request.runner,
                )
            )
        except errors.TeamloreError as err:
            # each plan of a manifest takes effect, or fails, on its own
            results.append(_failed(listed.plan_digest, err))
    progress(total, total, "done")
    return _run_result(results, manifest=manifest_digest)


def _run_result(results: list[dict[str, Any]], *, manifest: str | None) -> dict[str, Any]:
    adjudication_plans = [
        r["adjudicationPlan"] for r in results if isinstance(r.get("adjudicationPlan"), dict)
    ]
    next_step = None
    if len(adjudication_plans) == 1:
        next_step = "teamlore memory extract --approve-plan " + adjudication_plans[0]["planDigest"]
    elif adjudication_plans:
        next_step = "teamlore memory extract --runner … (plans the adjudications together)"
    elif any(r.get("taskKind") == "adjudication" and r.get("status") == "done" for r in results):
        next_step = "teamlore memory review"
    elif any(r.get("taskKind") == "consolidation" and r.get("status") == "done" for r in results):
        next_step = "teamlore memory review --kind consolidation"
    failed = [r for r in results if r.get("status") == "failed"]
    out: dict[str, Any] = {
        "action": "run-plan",
        "format": RUN_FORMAT,
        "manifestDigest": manifest,
        "results": results,
        "failed": len(failed),
        "next": next_step,
    }
    if failed:
        # exit 1 with the first failure's code, like every refusal; the results say the rest
        out["error"] = {
            "code": failed[0]["error"]["code"],
            "message": f"{len(failed)} of {len(results)} plans failed",
        }
    return out


@operation(
    "memory.consolidate_preview",
    input_model=ConsolidatePreviewRequest,
    side_effect="state-write",
    capability="team",
    mcp_tool="threadshare_memory_consolidate_preview",
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
            owner = _plan_owner(stores.identity)
            plans.append(_write_plan(ctx, owner, runner, "consolidation", task, source))
    note = str(result.get("note") or "")
    return _preview_result(
        runner,
        plans,
        None,
        note if plans else f"{note}. Nothing to plan.",
        command="consolidate",
        fmt="threadshare-memory-consolidation-preview@v1",
    )


# -- reverify -----------------------------------------------------------------------------------


@operation("memory.reverify_runner", input_model=ReverifyRequest, side_effect="state-write")
def memory_reverify_runner(ctx: OpContext, request: ReverifyRequest) -> dict[str, Any]:
    """Run the runner's conformance probe and record the verdict for this binary and version."""
    from teamlore.memory.store.state_db import open_state_db
    from teamlore.runner.conformance import CONFORMANCE_TEST_VERSION, record_verdict, run_probe
    from teamlore.runner.profiles import resolve_runner

    runner = resolve_runner(_choice(request), home=ctx.home)
    verdict = run_probe(runner)
    state = open_state_db(ctx.home)
    try:
        record_verdict(state, runner, verdict)
    finally:
        state.close()
    result = {
        "action": "reverify-runner",
        "format": REVERIFY_FORMAT,
        "runner": request.runner,
        "binary": runner.binary.to_json(),
        "model": runner.model,
        "endpoint": runner.endpoint,
        "testVersion": CONFORMANCE_TEST_VERSION,
        **verdict.to_json(),
    }
    if not verdict.passed:
        raise errors.TeamloreError(
            errors.RUNNER_CONFORMANCE_FAILED,
            f"{request.runner} failed the conformance probe: {', '.join(verdict.failures)}",
            failures=list(verdict.failures),
        )
    return result
