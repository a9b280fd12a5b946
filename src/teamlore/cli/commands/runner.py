"""`teamlore memory extract` and `memory reverify-runner`: the batch runner (docs/runner.md)."""

from __future__ import annotations

from typing import Any

from teamlore.cli.app import memory_app
from teamlore.cli.commands.memory import (
    CapabilityTerminalStatesOption,
    ExtractionRequestOption,
    ProvidersOption,
    QueryOption,
    ResultEvidenceOption,
    SessionKeysOption,
    SkillCapabilityKeysOption,
    ToolCapabilityKeysOption,
    _instant,
    read_request,
    selection_filters,
)
from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    RepositoryOption,
    counted,
    cwd_of,
    fail,
    print_json,
    run,
    say,
    say_wrapped,
    stderr,
    stdout,
    styled,
    wrapped_lines,
)
from teamlore.cli.params import Option
from teamlore.core import errors

# as `memory recall`'s, but an approval takes no window (it runs what was planned)
SinceOption = Option(
    None,
    "--since",
    help="Window start (ISO date/time, UTC); to plan, required, as --until is, unless --request.",
    metavar="DATE",
)
UntilOption = Option(
    None,
    "--until",
    help="Window end, exclusive; to plan, required unless --request.",
    metavar="DATE",
)
RunnerOption = Option(
    None,
    "--runner",
    help="claude, codex or openai (needed to plan; checked when approving).",
    metavar="claude|codex|openai",
)
RunnerModelOption = Option(None, "--runner-model", help="Model the runner asks for.")
RunnerEndpointOption = Option(
    None, "--runner-endpoint", help="Model endpoint (API root); default: the runner's own."
)


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def _disclosed(kind: str, disclosure: dict[str, Any]) -> str:
    if kind == "extraction":
        what = f"{counted(disclosure['turns'], 'turn')}, {disclosure['evidenceItems']} evidence"
        key = disclosure.get("sessionKey")  # the short key `sessions show` / `exclude` take
        return f"session {key[:12]}\n{what}" if key else what
    if kind == "consolidation":
        entries = counted(disclosure["entries"], "entry", "entries")
        return f"{entries}, {counted(disclosure['scenes'], 'scene')}"
    return (
        f"{counted(disclosure['drafts'], 'draft')}, {counted(disclosure['poolItems'], 'pool item')}"
    )


def _render_preview(result: dict[str, Any]) -> None:
    runner = result["runner"]
    binary = runner["binary"]
    stdout.print(
        f"Runner {runner['name']} ({binary['version']}) → {runner['provider']} "
        f"model {runner['model']} at {runner['endpoint']}"
    )
    plans = result["plans"]
    if not plans:  # the note alone is the answer: a sentence (the operation's may not be one)
        note = result["note"]
        stdout.print(note[:1].upper() + note[1:])
        return
    from rich.table import Table  # rich only renders text: `--format json` never imports it

    table = Table("plan", "kind", "what", "bytes to send", title="Would send")
    for plan in plans:
        disclosure = plan["disclosure"]
        what = _disclosed(plan["taskKind"], disclosure)
        table.add_row(
            plan["planDigest"][:12] + "…", plan["taskKind"], what, _kib(plan["bytesToSend"])
        )
    stdout.print(table)
    say_wrapped(
        f"Nothing was sent. {counted(len(plans), 'pending plan')}, {_kib(result['totalBytes'])} in "
        f"total; provider retention: {plans[0]['providerRetention']}."
    )
    masked = sum(int(plan["disclosure"].get("secretsMasked") or 0) for plan in plans)
    if masked:  # a credential in a transcript or a draft: sent as its redacted preview only
        say_wrapped(
            f"{counted(masked, 'secret')} masked: each is sent as its redacted preview "
            "(…[40 chars]), never as itself."
        )
    for plan in plans:
        _say_resend(plan)
    if result.get("note"):  # chunks deferred to the next plan, adjudications that wait
        stdout.print(result["note"])
    if result.get("manifest"):
        say("Manifest digest: ", styled(result["manifest"]["manifestDigest"], "bold"))
    conformance = result.get("runnerConformance") or {}
    if conformance.get("verified") is False:  # the approval would refuse: say so before it
        say(styled("warn", "yellow"), f" {conformance['problem']} before you approve")
    say("To approve: ", styled(result["approve"], "bold"))
    if len(plans) > 1:  # an approval names a whole digest, which the table has no room for
        stdout.print("Or approve one plan with `--approve-plan DIGEST`, one of:")
        for plan in plans:
            stdout.print(f"  {plan['planDigest']}", soft_wrap=True)


def _say_resend(plan: dict[str, Any]) -> None:
    """A plan that sends again the bytes of a plan whose delivery became indeterminate."""
    old = plan.get("supersedesPlanDigest")
    if old:
        stdout.print(
            f"Plan {plan['planDigest'][:12]}… sends again what plan {old[:12]}… was sending when "
            "teamlore stopped: the provider may already hold these bytes. It supersedes "
            f"{old}.",
            soft_wrap=False,  # wrapped at words, the whole digest on a line of its own
        )


def _say_adjudication(plan: dict[str, Any]) -> None:
    """What an adjudication plan written by a run discloses, and how to approve it."""
    say(
        f"The adjudication sends {_kib(plan['bytesToSend'])} ("
        f"{_disclosed('adjudication', plan['disclosure'])}) to {plan['provider']};"
        " approve it with: ",
        styled(f"teamlore memory extract --approve-plan {plan['planDigest']}", "bold"),
    )
    _say_resend(plan)


def _not_reported(missing: int, runs: int) -> str:
    return "not reported" if missing == runs else f"not reported for {missing} of {runs} runs"


def _spent(usage: dict[str, Any]) -> str:
    """`Spent in 3 runs: 41,200 input + 2,310 output tokens; cost $0.1832` — as the runner's
    client reported it (codex and the openai runner report no cost)."""
    runs, missing = usage["runs"], usage["tokensNotReported"]
    if missing == runs:
        tokens = "tokens not reported"
    else:
        tokens = (
            f"{usage['inputTokens'] or 0:,} input + {usage['outputTokens'] or 0:,} output tokens"
        )
        if missing:
            tokens += f" ({_not_reported(missing, runs)})"
    cost = usage["costUsd"]
    if cost is None:
        priced = "cost not reported by the runner"
    else:
        priced = f"cost ${cost:.4f}" if cost == 0 or cost >= 0.0001 else "cost < $0.0001"
        source = usage.get("costSource")
        if source in _WHOSE_COST:
            priced += f" ({_WHOSE_COST[source]})"
        if usage["costNotReported"]:
            priced += f" ({_not_reported(usage['costNotReported'], runs)})"
    return f"Spent in {counted(runs, 'run')}: {tokens}; {priced}."


# whose figure a cost is, where it is not the runner client's own estimate (claude's)
_WHOSE_COST = {
    "provider": "the provider's figure",
    "mixed": "part the provider's figure, part the runner client's estimate",
}


def _render_run(result: dict[str, Any], *, adjudication: bool = True) -> None:
    usage = result.get("usage")
    if (result.get("error") or {}).get("sameForAll"):
        # one reason stopped every plan: the error line says it once (JSON lists each)
        if usage and usage["tokensNotReported"] < usage["runs"]:
            stdout.print(_spent(usage))
        return
    from rich.table import Table
    from rich.text import Text

    table = Table("plan", "kind", "status", "result", title="Runner results")
    for item in result["results"]:
        if item.get("status") == "failed":
            error = item["error"]
            outcome = f"{error['code']}: {error['message']}"
        elif item.get("status") == "already-run":
            outcome = f"ran at {item.get('finishedAt')}; not sent again"
        elif item.get("status") == "running-elsewhere":
            outcome = "another teamlore process is running it and reports it"
        elif item.get("status") == "interrupted":
            outcome = (
                "stopped while being sent; may have reached the provider, never sent again"
                if item.get("maybeSent")
                else "stopped before it was sent; approve it again"
            )
        elif item.get("status") == "not-started":
            outcome = "not started; still pending"
        elif item.get("taskKind") == "extraction":
            outcome = f"{counted(item['candidates'], 'draft')} staged"
            if item.get("adjudicationPlan"):
                outcome += f"; adjudication plan {item['adjudicationPlan']['planDigest'][:12]}…"
        elif item.get("taskKind") == "consolidation":
            outcome = "no change proposed" if item.get("noOp") else "1 consolidation candidate"
        else:
            outcome = f"{counted(item['quarantined'], 'candidate')} quarantined for review"
        table.add_row(
            item["planDigest"][:12] + "…",
            item.get("taskKind", "?"),
            item.get("status", "?"),
            Text(literal(outcome)),
        )
    stdout.print(table)
    if usage:
        stdout.print(_spent(usage))
    if not adjudication:
        return
    plans = [i["adjudicationPlan"] for i in result["results"] if i.get("adjudicationPlan")]
    if result.get("adjudicationPlan"):  # the one a manifest's extractions share
        plans.append(result["adjudicationPlan"])
    for plan in plans:
        _say_adjudication(plan)
    if result.get("next") and len(plans) != 1:
        say_wrapped(result["next"], len("next: "), lead="next: ")


def _exit_if_failed(result: dict[str, Any], fmt: OutputFormat) -> None:
    """A manifest whose plans partly failed: the table was printed; exit 1 with the code."""
    error = result.get("error")
    if not error:
        return
    if fmt is not OutputFormat.json:
        say(styled("error", "bold red"), f" {error['code']}: {error['message']}", console=stderr)
        if error.get("next"):
            say(styled("  next", "bold"), f": {error['next']}", console=stderr)
    raise SystemExit(1)


def _say_interrupted(payload: dict[str, Any], partial: dict[str, Any] | None) -> None:
    """What Ctrl-C left behind, and what to run next (docs/runner.md "Limits and failures"):
    for a manifest, after the table of what each plan came to."""
    manifest = payload.get("approveManifest")
    rows = (partial or {}).get("results") or []
    maybe_sent = any(r.get("maybeSent") for r in rows) or partial is None
    said = (
        "a plan that was being sent may have reached the provider, so it is never sent again "
        "(plan again to send its turns anew)."
        if maybe_sent
        else "the plan it stopped had not been sent; it can be approved again."
    )
    if manifest and (partial is None or partial.get("next")):
        said += (
            " The plans that had not started are still pending: `teamlore memory extract "
            f"--approve-manifest {manifest}` runs them."
        )
    elif not manifest:
        said += " A plan stopped before it was sent can be approved again."
    drafts = (partial or {}).get("drafts") or 0
    if drafts:
        said += (
            f" {counted(drafts, 'draft')} staged before the stop "
            f"{'waits' if drafts == 1 else 'wait'} for adjudication: `teamlore memory status` "
            "says what to run."
        )
    lines = wrapped_lines("interrupted: ", said)
    say(styled("interrupted", "bold red"), lines[0][len("interrupted") :], console=stderr)
    for line in lines[1:]:
        say(line, console=stderr)


def _render_interrupted(result: dict[str, Any]) -> None:
    """The table of an interrupted manifest: each plan's outcome, as `_render_run` shows one
    that finished, and the plan it stopped and those it never started."""
    _render_run(result, adjudication=False)


def _run_approved(payload: dict[str, Any], fmt: OutputFormat, repository: str | None) -> None:
    """Run an approved plan or manifest (`memory.run_plan`); exit 1 if part of it failed."""
    try:
        result = run(
            "memory.run_plan",
            payload,
            fmt,
            _render_run,
            progress_label="runner",
            cwd=cwd_of(repository),
        )
    except SystemExit as stop:
        if stop.code == 130:
            # `run` turned Ctrl-C into exit 130 while handling it: a manifest's carries what
            # its plans came to (ops/runner/run.py ManifestInterrupted)
            partial = getattr(stop.__context__, "partial", None)
            if fmt is OutputFormat.json and partial is not None:
                print_json(partial)
            elif fmt is not OutputFormat.json:
                if partial is not None:
                    _render_interrupted(partial)
                _say_interrupted(payload, partial)
        raise
    _exit_if_failed(result, fmt)


def _refuse_empty_digest(*given: tuple[str, str | None], fmt: OutputFormat) -> None:
    """An approval flag given an empty digest (`--approve-plan "$(jq …)"` whose jq printed
    nothing) is a mistake to name, not a request to make a plan."""
    for flag, value in given:
        if value is not None and not value.strip():
            fail(
                errors.TeamloreError(
                    errors.USAGE,
                    f"{flag} was given an empty digest (did the command that printed it, "
                    "a jq filter say, print nothing?); it takes the 64-character digest a plan "
                    "printed",
                ),
                fmt,
            )


@memory_app.command("extract", short_help="Plan, then run approved extraction by a batch runner.")
def extract(
    runner: str | None = RunnerOption,
    runner_model: str | None = RunnerModelOption,
    runner_endpoint: str | None = RunnerEndpointOption,
    since: str | None = SinceOption,
    until: str | None = UntilOption,
    query: str = QueryOption,
    providers: list[str] = ProvidersOption,
    session_keys: list[str] = SessionKeysOption,
    tool_capability_keys: list[str] = ToolCapabilityKeysOption,
    skill_capability_keys: list[str] = SkillCapabilityKeysOption,
    result_evidence: list[str] = ResultEvidenceOption,
    capability_terminal_states: list[str] = CapabilityTerminalStatesOption,
    request: str | None = ExtractionRequestOption,
    limit: int = Option(8, "--limit", "-n", help="Tasks to plan (1..8)."),
    approve_plan: str | None = Option(
        None, "--approve-plan", help="Approve and run the pending plan with this digest."
    ),
    approve_manifest: str | None = Option(
        None, "--approve-manifest", help="Approve and run every plan of this manifest."
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Unattended extraction: plan what a runner would be sent (nothing is sent), then approve
    a plan by its digest to run it, stage its drafts and plan their adjudication."""
    filters = selection_filters(
        providers,
        session_keys,
        tool_capability_keys,
        skill_capability_keys,
        result_evidence,
        capability_terminal_states,
    )
    filters_given = any([since, until, query, *filters.values()])
    selection_given = filters_given or (request is not None)
    _refuse_empty_digest(
        ("--approve-plan", approve_plan), ("--approve-manifest", approve_manifest), fmt=fmt
    )
    if approve_plan or approve_manifest:
        if approve_plan and approve_manifest:
            fail(
                errors.TeamloreError(
                    errors.USAGE, "--approve-plan and --approve-manifest cannot be combined"
                ),
                fmt,
            )
        if selection_given or runner_model or runner_endpoint:
            fail(
                errors.TeamloreError(
                    errors.USAGE,
                    "an approval runs exactly what was planned: it takes no selection, "
                    "--runner-model or --runner-endpoint",
                ),
                fmt,
            )
        payload = {
            "approvePlan": approve_plan,
            "approveManifest": approve_manifest,
            "runner": runner,
        }
        _run_approved(payload, fmt, repository)
        return
    if runner is None:
        fail(errors.TeamloreError(errors.USAGE, "--runner is required to make a plan"), fmt)
    if (request is None) and not (since and until):
        fail(
            errors.TeamloreError(
                errors.USAGE, "a plan needs a window (--since and --until) or --request"
            ),
            fmt,
        )
    plan_payload: dict[str, Any] = {
        "runner": runner,
        "runnerModel": runner_model,
        "runnerEndpoint": runner_endpoint,
        "limit": limit,
    }
    if request is not None:
        if filters_given:
            fail(
                errors.TeamloreError(
                    errors.USAGE, "--request cannot be combined with the filter options"
                ),
                fmt,
            )
        plan_payload["request"] = read_request(request, fmt)
    else:
        plan_payload.update(
            {
                "since": _instant(since, fmt),
                "until": _instant(until, fmt),
                "query": query or None,
                **filters,
            }
        )
    run(
        "memory.extract_preview",
        {k: v for k, v in plan_payload.items() if v not in (None, [])},
        fmt,
        _render_preview,
        cwd=cwd_of(repository),
    )


def _render_reverify(result: dict[str, Any]) -> None:
    binary = result["binary"]
    say_wrapped(
        f"{result['runner']} {binary['version']} passed {result['testVersion']} "
        f"({counted(result['candidates'], 'candidate')}, only the given evidence cited, no "
        "canary, no side effects). Approvals may run it until its binary, version, model, "
        "endpoint or limits change."
    )
    if result.get("usage"):  # what the probe's run spent, as for an approval
        stdout.print(_spent(result["usage"]))


@memory_app.command(
    "reverify-runner", short_help="Check a batch runner with the conformance probe."
)
def reverify_runner(
    runner: str = Option(
        ..., "--runner", help="claude, codex or openai.", metavar="claude|codex|openai"
    ),
    runner_model: str | None = RunnerModelOption,
    runner_endpoint: str | None = RunnerEndpointOption,
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Run the conformance probe (a fixed synthetic task, no user data) through a runner and
    record the verdict for this binary and version."""
    payload = {"runner": runner, "runnerModel": runner_model, "runnerEndpoint": runner_endpoint}
    run(
        "memory.reverify_runner",
        {k: v for k, v in payload.items() if v is not None},
        fmt,
        _render_reverify,
        progress_label="probe",
        cwd=cwd_of(repository),
    )


@memory_app.command(
    "consolidate", short_help="Plan, then run approved consolidation by a batch runner."
)
def consolidate(
    runner: str | None = RunnerOption,
    runner_model: str | None = RunnerModelOption,
    runner_endpoint: str | None = RunnerEndpointOption,
    if_due: bool = Option(
        False, "--if-due", help="Plan nothing unless 20 approved entries are new or changed."
    ),
    full: bool = Option(False, "--full", help="Carry every approved entry."),
    approve_plan: str | None = Option(
        None, "--approve-plan", help="Approve and run the pending plan with this digest."
    ),
    repository: str | None = RepositoryOption,
    fmt: OutputFormat = FormatOption,
) -> None:
    """Unattended L2/L3 consolidation: plan what a runner would be sent for `synthesize`
    (nothing is sent), then approve the plan by its digest to run it and stage the patch."""
    _refuse_empty_digest(("--approve-plan", approve_plan), fmt=fmt)
    if approve_plan:
        if runner_model or runner_endpoint or if_due or full:
            fail(
                errors.TeamloreError(
                    errors.USAGE,
                    "an approval runs exactly what was planned: it takes no --if-due, --full, "
                    "--runner-model or --runner-endpoint",
                ),
                fmt,
            )
        _run_approved({"approvePlan": approve_plan, "runner": runner}, fmt, repository)
        return
    if runner is None:
        fail(errors.TeamloreError(errors.USAGE, "--runner is required to make a plan"), fmt)
    if if_due and full:
        fail(errors.TeamloreError(errors.USAGE, "--if-due and --full cannot be combined"), fmt)
    payload = {
        "runner": runner,
        "runnerModel": runner_model,
        "runnerEndpoint": runner_endpoint,
        "ifDue": if_due,
        "full": full,
    }
    run(
        "memory.consolidate_preview",
        {k: v for k, v in payload.items() if v is not None},
        fmt,
        _render_preview,
        cwd=cwd_of(repository),
    )
