"""`memory.run_plan`: approve by digest, re-derive each plan from the current inputs, check the
runner's conformance record, log the authorization, run the runner,
validate and stage its answer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import orjson
from pydantic.alias_generators import to_camel

from teamlore.core import errors
from teamlore.core.failpoints import failpoint
from teamlore.ops.registry import OpContext, operation
from teamlore.ops.runner.plans import (
    _REJECTED_STAGE_CODES,
    RUN_FORMAT,
    ExtractRunRequest,
    _adjudication_groups,
    _now,
    _plan_for,
    _stores_for,
    _write_plan,
    extraction_session_key,
)
from teamlore.ops.runner.waiting import adjudicated_task_ids, memory_owner, plan_owner
from teamlore.runner.usage import NOT_REPORTED, saying_spend, total_usage

# -- approve and run ----------------------------------------------------------------------------


# what each part of a plan that no longer matches says changed (RUNNER_PLAN_MISMATCH); a
# changed runner profile says which of its parts changed (`profile_changes`)
_CHANGED = {
    "task_id": "its task was replaced",
    "input_coverage_digest": "what its task covers changed",
    "runner_profile": "the runner's profile changed",
    "runner_input_digest": "the bytes to send changed",
}


def _mismatch(
    plan: Any, rebuilt: Any | None, why: str = "", profile_changed: list[str] | None = None
) -> errors.TeamloreError:
    changed: list[str] = []
    if rebuilt is not None:
        names = [n for n in _CHANGED if getattr(plan, n) != getattr(rebuilt, n)]
        if not names:
            return _outdated(plan, rebuilt)
        changed = [to_camel(n) for n in names]
        why = _CHANGED[names[0]]
        if names[0] == "runner_profile" and profile_changed:
            why = f"{why} since the plan: {'; '.join(profile_changed)}"
    return errors.TeamloreError(
        errors.RUNNER_PLAN_MISMATCH,
        f"plan {plan.plan_digest[:12]}… no longer matches its inputs ({why}); make a new plan "
        "with `teamlore memory extract --runner …` and approve that",
        planDigest=plan.plan_digest,
        changed=changed,
    )


def _outdated(plan: Any, rebuilt: Any) -> errors.TeamloreError:
    """RUNNER_PLAN_OUTDATED: a plan whose task, coverage, bytes and runner profile are what this
    teamlore would plan now, and yet is not its plan (another `format`, a field this version
    fills in otherwise): another teamlore version made it."""
    mine, theirs = rebuilt.to_wire(), plan.to_wire()
    changed = sorted(
        key
        for key in mine.keys() | theirs.keys()
        if key != "planDigest" and mine.get(key) != theirs.get(key)
    )
    why = outdated_why(changed, theirs.get("format"), mine.get("format"))
    return errors.TeamloreError(
        errors.RUNNER_PLAN_OUTDATED,
        f"plan {plan.plan_digest[:12]}… was made by another teamlore version ({why}; what it "
        "sends is unchanged); make a new plan with `teamlore memory extract --runner …` and "
        "approve that",
        planDigest=plan.plan_digest,
        changed=changed,
    )


def outdated_why(changed: list[str], their_format: Any, my_format: Any) -> str:
    """What differs between a plan and the one this version makes of the same inputs, for
    RUNNER_PLAN_OUTDATED: the format, else the fields (`changed`, wire names), else only the
    digest (another version computes it otherwise)."""
    if "format" in changed:
        return f"its format is {their_format}, this version makes {my_format} of it"
    if not changed:
        return "this version computes its digest differently"
    fields = changed[0] if len(changed) == 1 else f"{', '.join(changed[:-1])} and {changed[-1]}"
    return f"this version fills in {fields} differently"


# why an extraction plan's task is no longer there to send (recall's stale reasons)
_GONE = {
    "session-excluded": "its session was excluded from extraction since",
    "turns-already-extracted": "another plan already staged drafts from its turns",
    "turn-revision-changed": "a turn it sends was rewritten",
    "chunk-changed": "the turns it sends changed",
}
_GONE_BY_DEFAULT = "its task is gone or was replaced"


def _rederive(stores: Any, ctx: OpContext, plan_file: Any) -> tuple[dict[str, Any] | None, str]:
    """The task the plan would send now, else None and why it is no longer there to send
    (already submitted, stale, or an input bound to it changed — the related-input CAS of
    recall: a change to another session leaves it alone)."""
    from teamlore.memory.extraction.adjudication_tasks import live_adjudication_task
    from teamlore.memory.extraction.recall import load_task_source

    source = plan_file.source
    if source.get("kind") == "extraction":
        task_id = plan_file.plan.task_id
        row = stores.state.execute(
            "SELECT status FROM tasks WHERE task_id = ?", (task_id,)
        ).fetchone()
        if row is None or row[0] not in ("pending", "claimed"):
            return None, _GONE_BY_DEFAULT
        window = source.get("request", {}).get("window", {})
        rederived = load_task_source(
            stores.index,
            stores.state,
            stores.identity,
            task_id,
            home=ctx.home,
            time_window={"start": window.get("after"), "end": window.get("before")},
        )
        why = rederived.stale_reasons[0] if rederived.stale_reasons else ""
        return rederived.task, _GONE.get(why, _GONE_BY_DEFAULT)
    if source.get("kind") == "adjudication":
        task = live_adjudication_task(
            stores.state, memory_owner(stores.identity), adjudicated_task_ids(source)
        )
        return task, _GONE_BY_DEFAULT
    if source.get("kind") == "consolidation":
        from teamlore.memory.consolidation.synthesize import synthesize

        result = synthesize(stores.state, stores.identity, full=bool(source.get("full")))
        task = result.get("task")
        if isinstance(task, dict) and task.get("taskId") == plan_file.plan.task_id:
            return task, _GONE_BY_DEFAULT
        return None, _GONE_BY_DEFAULT
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


# what an answer echoes of its task (parse_answer checked it is the task's own): not model text
_ECHOED_KEYS = frozenset({"format", "taskId", "binding"})


def _answer_texts(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of an answer with where it sits (`operations[0].newContent`)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if where or key not in _ECHOED_KEYS:
                yield from _answer_texts(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for number, item in enumerate(value):
            yield from _answer_texts(item, f"{where}[{number}]")


def _secret_free(document: dict[str, Any]) -> None:
    """RUNNER_OUTPUT_SECRET when any text of the answer — a draft, a statement, a merged field,
    a consolidation patch's newContent or rationale, a scene name, an id — holds what the lint
    blocks (a credential, a provider session id, a home path): the scan `memory lint` runs."""
    from teamlore.core.secrets import scan_content

    for where, text in _answer_texts(document, ""):
        blocking = [hit for hit in scan_content(text) if hit.severity == "block"]
        if blocking:
            raise errors.TeamloreError(
                errors.RUNNER_OUTPUT_SECRET,
                f"the runner's answer holds a {blocking[0].rule} finding in {where}; "
                "nothing was staged",
                rule=blocking[0].rule,
                field=where,
            )


def _stage(stores: Any, ctx: OpContext, kind: str, document: dict[str, Any]) -> dict[str, Any]:
    from teamlore.core.lock import file_lock
    from teamlore.core.paths import resolve_home
    from teamlore.memory.extraction.adjudication import submit_adjudication
    from teamlore.memory.extraction.staging import RecallTaskSources, stage_draft_batch
    from teamlore.ops.memory.stage import SYNC_LOCK_WAIT_SECONDS
    from teamlore.ops.memory.vectors import adjudication_vectors, recall_embedder
    from teamlore.ops.sessions.index import SYNC_LOCK

    owner = memory_owner(stores.identity)
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
        adjudication_vectors(ctx, stores, document)  # the rerun ranks as the task did
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
    *,
    adjudicate: bool = True,
) -> dict[str, Any]:
    """What a finished plan reports (and, after an extraction approved alone, the adjudication
    plan; a manifest's extractions share one, written after the last of them)."""
    from teamlore.memory.extraction.adjudication_tasks import live_adjudication_task

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
        if adjudicate and not outcome.get("noOp"):
            task = live_adjudication_task(
                stores.state,
                memory_owner(stores.identity),
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


def _run_one(
    ctx: OpContext,
    plan_digest: str,
    *,
    via: str,
    manifest_digest: str | None,
    runner_name: str | None,
    adjudicate: bool = True,
) -> dict[str, Any]:
    from teamlore.memory.extraction.adjudication import require_complete_approved_projection
    from teamlore.runner import plans as plan_store
    from teamlore.runner.conformance import (
        missing_credentials,
        profile_changes,
        require_conformant,
    )
    from teamlore.runner.process import kill_leftover
    from teamlore.runner.profiles import RUNNER_NAMES, RunnerChoice, resolve_runner
    from teamlore.runner.prompt import parse_answer

    home = ctx.home
    peek = plan_store.plan_kind(home, plan_digest)
    with _stores_for(ctx, peek) as stores:
        owner = plan_owner(stores.identity)
        try:
            plan_file = plan_store.load_plan(home, plan_digest, owner)
        except errors.TeamloreError as err:
            void = plan_store.void_refusal(home, plan_digest, owner)
            if err.error is not errors.RUNNER_PLAN_NOT_FOUND or void is None:
                raise
            # an earlier approval found it void and swept it: say why again
            raise errors.TeamloreError(
                errors.RUNNER_PLAN_MISMATCH, str(void.get("message")), **void.get("details", {})
            ) from None
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
                    finishedAt=record.get("finishedAt"),
                )
            if record.get("state") == "running" and isinstance(record.get("pgid"), int):
                kill_leftover(record["pgid"])  # a teamlore killed mid-run left its runner
            if record.get("state") == "indeterminate":
                raise _indeterminate(plan_digest)
            kind = plan_file.plan.task_kind
            raw = plan_file.runner
            if raw.get("name") not in RUNNER_NAMES:
                raise errors.TeamloreError(errors.RUNNER_PLAN_INVALID, "the plan names no runner")
            choice = RunnerChoice(raw["name"], raw.get("model"), raw.get("endpoint"))
            runner = resolve_runner(choice, home=home)
            lacking = missing_credentials(plan_file.profile, runner, plan_digest)
            if lacking is not None:
                raise lacking  # not a changed runner: a key to set, the plan kept for it
            require_conformant(stores.state, runner)
            recorded = _recorded_outcome(stores.state, plan_file.plan.task_id)
            if recorded is not None and record.get("state") == "running":
                # the run staged its answer and teamlore died before it could say so
                summary = _finish(ctx, stores, runner, plan_file, recorded, adjudicate=adjudicate)
                plan_store.write_run_record(
                    home, plan_digest, {"state": "done", "finishedAt": _now(), "recovered": True}
                )
                return {**summary, "recovered": True}
            if record.get("state") == "running" and not record.get(plan_store.NOT_SENT_YET):
                # teamlore died while the bytes were out: the provider may have them
                plan_store.write_run_record(
                    home,
                    plan_digest,
                    {"state": "indeterminate", "startedAt": record.get("startedAt")},
                )
                raise _indeterminate(plan_digest)
            task, gone = _rederive(stores, ctx, plan_file)
            if task is None:
                raise _swept(home, plan_file, _mismatch(plan_file.plan, None, gone))
            rebuilt, stdin = _plan_for(
                kind, task, runner, supersedes=plan_file.plan.supersedes_plan_digest
            )
            if rebuilt.plan_digest != plan_digest:
                now = runner.describe()
                changes = profile_changes(plan_file.profile, now)
                refusal = _mismatch(plan_file.plan, rebuilt, profile_changed=changes)
                if not _task_changed(plan_file.plan, rebuilt):
                    raise refusal  # the approving shell's runner: the plan may run elsewhere
                raise _swept(home, plan_file, refusal)
            if kind == "adjudication":  # refused before anything is sent, not after
                require_complete_approved_projection(stores.state, memory_owner(stores.identity))
            _log_authorization(stores.state, rebuilt, via, manifest_digest)
            started = {"state": "running", "startedAt": _now(), "via": via}
            # nothing has left until the runner starts: a teamlore stopped before then (Ctrl-C,
            # a kill) leaves a plan that is approved again as it is, never `indeterminate`
            plan_store.write_run_record(
                home, plan_digest, {**started, plan_store.NOT_SENT_YET: True}
            )
            sending = [False]

            def on_start(pgid: int | None) -> None:
                sending[0] = True
                out = started if pgid is None else {**started, "pgid": pgid}
                plan_store.write_run_record(home, plan_digest, out)

            output = None
            try:
                try:
                    failpoint("runner.authorized")
                    output = runner.run(stdin, on_start)
                except KeyboardInterrupt:
                    # once the runner started, the bytes may be out: the provider may have them
                    # (a kill -9 leaves the same for the next approval to find)
                    stopped = (
                        {"state": "indeterminate", "startedAt": started["startedAt"]}
                        if sending[0]
                        else {"state": "failed", "finishedAt": _now(), "code": "INTERRUPTED"}
                    )
                    plan_store.write_run_record(home, plan_digest, stopped)
                    raise
                failpoint("runner.answered")  # the provider had the bytes; nothing staged yet
                document = parse_answer(kind, output.text, task)
                _secret_free(document)
                outcome = _stage(stores, ctx, kind, document)
                failpoint("runner.staged")
            except errors.TeamloreError as err:
                # a run that failed may still have cost: what its client reported goes along
                spent = (output.usage if output is not None else NOT_REPORTED).to_json()
                err.details.setdefault("usage", spent)
                plan_store.write_run_record(
                    home,
                    plan_digest,
                    {
                        "state": "failed",
                        "finishedAt": _now(),
                        "code": err.code,
                        "usage": err.details["usage"],
                    },
                )
                if err.error is errors.RUNNER_OUTPUT_SECRET and kind == "extraction":
                    raise _naming_session(err, stores.state, plan_file.plan.task_id) from None
                raise
            summary = _finish(ctx, stores, runner, plan_file, outcome, adjudicate=adjudicate)
            summary["usage"] = output.usage.to_json()
            plan_store.write_run_record(
                home,
                plan_digest,
                {"state": "done", "finishedAt": _now(), "via": via, "usage": summary["usage"]},
            )
            return summary


# what the memory state and the sessions decide, never the approving shell's environment
_FROM_THE_TASK = ("task_id", "input_coverage_digest", "runner_input_digest")


def _task_changed(plan: Any, rebuilt: Any) -> bool:
    """Whether the plan differs from what would be sent now in its task, what the task covers
    or the bytes to send: those no other shell brings back, so the plan is void for good. The
    runner's profile alone is the approving shell's (the binary PATH or TEAMLORE_CLAUDE_BIN
    finds, the allow-listed variables set, the limits, the endpoint): where it is as it was,
    the plan matches again."""
    return any(getattr(plan, name) != getattr(rebuilt, name) for name in _FROM_THE_TASK)


def _swept(home: Any, plan_file: Any, refusal: errors.TeamloreError) -> errors.TeamloreError:
    """`refusal`, once the plan it voids for good is swept from runner-plans/ with its lock
    (its approval holds that lock: no other process is running it)."""
    from teamlore.runner import plans as plan_store

    plan_store.sweep_void_plan(
        home,
        plan_file.digest,
        plan_file.owner,
        {"message": refusal.message, "details": refusal.details},
    )
    return refusal


def _naming_session(err: errors.TeamloreError, conn: Any, task_id: str) -> errors.TeamloreError:
    """RUNNER_OUTPUT_SECRET of an extraction, naming the session whose turns the plan sent by
    the key `sessions show` and `sessions exclude` take (never a provider id or a path)."""
    key = extraction_session_key(conn, task_id)
    if key is None:
        return err
    return errors.TeamloreError(
        err.error,
        f"{err.message}; the plan sent turns of session {key[:12]}: "
        f"`teamlore sessions exclude {key[:12]}` keeps it out of extraction",
        **err.details,
        sessionKeys=[key],
    )


def _indeterminate(plan_digest: str) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.RUNNER_PLAN_INDETERMINATE,
        f"plan {plan_digest[:12]}… was being sent when teamlore stopped, so the provider may "
        "have received it; it is never sent again: make a new plan with `teamlore memory "
        "extract --runner …` (or `consolidate --runner …`) and approve that",
        planDigest=plan_digest,
    )


def _failed(plan_digest: str, task_kind: str, err: errors.TeamloreError) -> dict[str, Any]:
    failed: dict[str, Any] = {"planDigest": plan_digest, "taskKind": task_kind, "status": "failed"}
    if "usage" in err.details:  # its runner ran: what it spent counts in the totals
        failed["usage"] = err.details.pop("usage")
    return {**failed, "error": err.to_json()}


def _not_run_here(listed: Any, err: errors.TeamloreError) -> dict[str, Any] | None:
    """A manifest's plan that this approval leaves alone without it failing: one that ran
    before (a manifest approved again after an interruption runs the rest) or one another
    teamlore process is running now (which reports it)."""
    status = {
        errors.RUNNER_PLAN_ALREADY_RUN.code: "already-run",
        errors.RUNNER_PLAN_BUSY.code: "running-elsewhere",
    }.get(err.code)
    if status is None:
        return None
    return {
        "planDigest": listed.plan_digest,
        "taskKind": listed.task_kind,
        "status": status,
        "finishedAt": err.details.get("finishedAt"),
    }


@operation(
    "memory.run_plan",
    input_model=ExtractRunRequest,
    side_effect="state-write",
    stability="legacy-debt",
    approval_policy="history-read",
)
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
        try:
            result = _run_one(
                ctx, digest_, via="digest", manifest_digest=None, runner_name=request.runner
            )
        except errors.TeamloreError as err:  # its spend in the text view too, not only JSON
            raise saying_spend(err) from None
        progress(1, 1, digest_[:12])
        return _run_result([result], manifest=None)
    manifest_digest = plan_store.check_digest_argument(str(request.approve_manifest))
    with open_owner(ctx, sessions=True) as stores:
        manifest = plan_store.load_manifest(ctx.home, manifest_digest, plan_owner(stores.identity))
    with plan_store.manifest_lock(ctx.home, manifest_digest):
        return _run_manifest(ctx, request, manifest, manifest_digest, progress)


def _run_manifest(
    ctx: OpContext,
    request: ExtractRunRequest,
    manifest: Any,
    manifest_digest: str,
    progress: Callable[[int, int, str], None],
) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    total = len(manifest.plans)
    # adjudications first: the drafts the extractions stage would change the pool their task
    # binds, voiding them (a manifest written before they were listed first runs the same way)
    ordered = sorted(manifest.plans, key=lambda listed: listed.task_kind != "adjudication")
    for number, listed in enumerate(ordered):
        progress(number, total, listed.plan_digest[:12])
        try:
            results.append(
                _run_one(
                    ctx,
                    listed.plan_digest,
                    via="manifest",
                    manifest_digest=manifest_digest,
                    runner_name=request.runner,
                    adjudicate=False,
                )
            )
        except KeyboardInterrupt as stop:
            partial = _interrupted(ctx.home, results, ordered[number:], manifest_digest)
            raise ManifestInterrupted(partial) from stop
        except errors.TeamloreError as err:
            # each plan of a manifest takes effect, or fails, on its own
            results.append(
                _not_run_here(listed, err) or _failed(listed.plan_digest, listed.task_kind, err)
            )
    if all(r["status"] == "already-run" for r in results):
        raise errors.TeamloreError(
            errors.RUNNER_PLAN_ALREADY_RUN,
            f"every plan of manifest {manifest_digest[:12]}… already ran",
            manifestDigest=manifest_digest,
        )
    shared = _shared_adjudication_plan(ctx, results)
    progress(total, total, "done")
    return _run_result(results, manifest=manifest_digest, adjudication=shared)


class ManifestInterrupted(KeyboardInterrupt):
    """Ctrl-C during a manifest: `partial` is the run result of what finished before it, the
    plan it stopped (`interrupted`: `maybeSent` when its runner had started) and those that
    never started (`not-started`), for the command to show (docs/runner.md)."""

    def __init__(self, partial: dict[str, Any]) -> None:
        super().__init__()
        self.partial = partial


def _interrupted(
    home: Any, results: list[dict[str, Any]], left: list[Any], manifest_digest: str
) -> dict[str, Any]:
    from teamlore.runner import plans as plan_store

    rows = list(results)
    for position, listed in enumerate(left):
        row: dict[str, Any] = {"planDigest": listed.plan_digest, "taskKind": listed.task_kind}
        if position == 0:
            record = plan_store.read_run_record(home, listed.plan_digest) or {}
            state = record.get("state")
            # `running` and no longer NOT_SENT_YET: stopped after the runner started (its answer
            # in, not staged yet), the provider had the bytes as for `indeterminate`
            sent = state == "running" and not record.get(plan_store.NOT_SENT_YET)
            row.update(status="interrupted", maybeSent=state == "indeterminate" or sent)
        else:
            row["status"] = "not-started"
        rows.append(row)
    partial = _run_result(rows, manifest=manifest_digest)
    partial["interrupted"] = True
    partial["drafts"] = sum(
        int(r.get("candidates") or 0)
        for r in results
        if r.get("taskKind") == "extraction" and r.get("status") == "done"
    )
    if any(r["status"] == "not-started" or r.get("maybeSent") is False for r in rows):
        # what never left: approving the manifest again runs it
        partial["next"] = f"teamlore memory extract --approve-manifest {manifest_digest}"
    return partial


def _shared_adjudication_plan(
    ctx: OpContext, results: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """One adjudication plan over the drafts of every extraction the manifest ran (at most
    8 x 8 = 64 drafts): adjudicating chunk by chunk would let each decision make its siblings'
    tasks stale (docs/runner.md "Two approvals"). Drafts of earlier runs still waiting (an
    adjudication of the manifest that failed) join it when all of them fit in one."""
    from teamlore.memory.extraction.adjudication_tasks import live_adjudication_task
    from teamlore.memory.extraction.drafts import awaiting_adjudication
    from teamlore.runner import plans as plan_store
    from teamlore.runner.profiles import RunnerChoice, resolve_runner

    drafted = [
        r
        for r in results
        if r.get("taskKind") == "extraction" and r.get("status") == "done" and not r.get("noOp")
    ]
    if not drafted:
        return None
    ids = [str(r["taskId"]) for r in drafted]
    with _stores_for(ctx, "adjudication") as stores:
        owner = plan_owner(stores.identity)
        first = plan_store.load_plan(ctx.home, drafted[0]["planDigest"], owner)
        raw = first.runner
        runner = resolve_runner(
            RunnerChoice(raw["name"], raw.get("model"), raw.get("endpoint")), home=ctx.home
        )
        waiting = awaiting_adjudication(stores.state, memory_owner(stores.identity))
        earlier = [task_id for task_id in waiting if task_id not in ids]
        if earlier and len(_adjudication_groups(stores.state, earlier + ids)) == 1:
            ids = earlier + ids
        task = live_adjudication_task(
            stores.state, memory_owner(stores.identity), ids, reissue=True
        )
        if task is None:
            return None
        source = {"kind": "adjudication", "extractionTaskIds": ids}
        return _write_plan(ctx, owner, runner, "adjudication", task, source)


def _run_result(
    results: list[dict[str, Any]],
    *,
    manifest: str | None,
    adjudication: dict[str, Any] | None = None,
) -> dict[str, Any]:
    adjudication_plans = [
        r["adjudicationPlan"] for r in results if isinstance(r.get("adjudicationPlan"), dict)
    ]
    if adjudication is not None:
        adjudication_plans.append(adjudication)
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
    # what the runners of this approval spent (plans that ran before or elsewhere are not in it)
    spent = total_usage([r["usage"] for r in results if "usage" in r])
    out: dict[str, Any] = {
        "action": "run-plan",
        "format": RUN_FORMAT,
        "manifestDigest": manifest,
        "results": results,
        "failed": len(failed),
        "adjudicationPlan": adjudication,
        "next": next_step,
        "usage": spent,
    }
    if failed:
        # exit 1 with the first failure's code, like every refusal; the results say the rest
        out["error"] = {
            "code": failed[0]["error"]["code"],
            "message": f"{len(failed)} of {len(results)} plans failed",
        }
        if len(results) > 1 and _same_failure(results):
            # a runner-level refusal (not verified, no binary, no profile) stops every plan
            # alike: said once, with what to do, rather than once per plan
            first = failed[0]["error"]
            out["error"] = {
                "code": first["code"],
                "message": f"{first['message']} (the same for all {len(results)} plans)",
                "next": first.get("next"),
                "sameForAll": True,
            }
    return out


def _same_failure(results: list[dict[str, Any]]) -> bool:
    """Every plan failed, each with the same code and message."""
    return all(r.get("status") == "failed" for r in results) and (
        len({(r["error"]["code"], r["error"]["message"]) for r in results}) == 1
    )
