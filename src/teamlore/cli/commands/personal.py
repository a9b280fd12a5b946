"""`teamlore personal …`: config, status, show, import, flush, retry (thin adapters over the
`personal.*` operations). `show` prints exactly what an agent reading the memory gets when piped
(what a Claude Code `SessionStart` hook runs) and describes it to a person at a terminal.
`import` and `flush` exit 1 unless everything queued was processed."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from teamlore.cli.app import personal_app
from teamlore.cli.literal import literal
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    counted,
    hanging,
    run,
    say_wrapped,
    stdout,
    wrapped_lines,
)
from teamlore.cli.params import Argument, Option
from teamlore.core.paths import display_path


def _plain(text: str) -> None:
    """Memory text goes out as written: no markup, no highlighting, no wrapping; only terminal
    control characters are made visible (`literal`)."""
    sys.stdout.write(literal(text) + "\n")
    sys.stdout.flush()


def _said(lead: str, text: str, indent: int | None = None, *, to: TextIO | None = None) -> None:
    """A sentence to the person (not memory text): `lead` then `text`, wrapped at words to the
    terminal's width under `indent` spaces (the lead's width unless given), so it reads at 80
    columns; an id or path too long for the rest of a line goes whole onto the next, and a
    `command` in backticks stays whole on one line, to be copied (`wrapped_lines`). Made
    visible as `_plain` makes it; on stdout unless `to` names another stream."""
    stream = to or sys.stdout
    lines = wrapped_lines(lead, literal(text), len(lead) if indent is None else indent)
    stream.write("".join(f"{line}\n" for line in lines))
    stream.flush()


# -- config -----------------------------------------------------------------------------------


def _render_config(result: dict[str, Any]) -> None:
    changes = result["changes"]
    for key, label in (("allowedProvenance", "allowed provenance"), ("allowedScopes", "scopes")):
        if key in changes:
            edit = changes[key]
            moves = [f"+ {v}" for v in edit["added"]] + [f"- {v}" for v in edit["removed"]]
            _plain(f"changed {label}: {', '.join(moves)}")
    if "modelProfile" in changes:
        edit = changes["modelProfile"]
        _plain(f"changed model profile: {edit['from'] or '(none)'} -> {edit['to'] or '(none)'}")
    if result["changed"]:
        stdout.print("Saved.")
    elif result["requested"]:
        stdout.print("Nothing changed: the settings already say that.")
    for warning in result["warnings"]:
        _said("warning: ", warning, 2, to=sys.stderr)
    _plain(f"config              {result['configPath']}")
    _plain(f"personal memory     {result['personalDir']}")
    _plain(f"allowed provenance  {', '.join(result['allowedProvenance']) or '(none)'}")
    _plain(f"allowed scopes      {', '.join(result['allowedScopes']) or '(none)'}")
    _plain(f"model profile       {result['modelProfile'] or '(none: the Writer does not run)'}")
    for project in result["projects"]:
        _plain(f"project             {project['contextId']}  {display_path(project['path'])}")


@personal_app.command("config", short_help="Show or change personal-memory settings.")
def personal_config(
    allow: list[str] = Option(
        [],
        "--allow",
        help="Allow a provenance class (repeatable; added to the list): user_explicit, "
        "agent_observation (memory_init), document_import (personal import).",
    ),
    deny: list[str] = Option(
        [], "--deny", help="Take a provenance class off the allowed list (repeatable)."
    ),
    scope: list[str] = Option(
        [],
        "--scope",
        help="Allow a scope (repeatable; added to the list): global, project:<id>, project:*.",
    ),
    remove_scope: list[str] = Option(
        [], "--remove-scope", help="Take a scope off the allowed list (repeatable)."
    ),
    model_profile: str | None = Option(
        None, "--model-profile", help="The [models.<name>] profile the Writer uses ('' clears)."
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Show or change personal-memory settings: who may write, what may be read, which model.

    Each change is said (`+ agent_observation`); a profile the Writer cannot use yet (no
    [models.<name>] table, no model, no key) is kept with a warning."""
    run(
        "personal.config",
        {
            "allowProvenance": allow or None,
            "denyProvenance": deny or None,
            "allowScopes": scope or None,
            "removeScopes": remove_scope or None,
            "modelProfile": model_profile,
        },
        fmt,
        _render_config,
    )


# -- status -----------------------------------------------------------------------------------


def _render_status(result: dict[str, Any]) -> None:
    if "import" in result or "submission" in result:
        outcome = result.get("import", result.get("submission"))
        if outcome is None:
            _plain("No such submission in that client's namespace.")
            return
        _said("", _outcome_line(outcome), 2)
        return
    _plain(f"personal memory  {result['personalDir']}{'' if result['exists'] else ' (absent)'}")
    settings = result["settings"]
    _said("provenance       ", ", ".join(settings["allowedProvenance"]))
    _said("scopes           ", ", ".join(settings["allowedScopes"]))
    _plain(f"model profile    {settings['modelProfile'] or '(none: the Writer does not run)'}")
    counts = ", ".join(f"{n} {state}" for state, n in sorted(result["observations"].items()))
    _plain(f"observations     {counts or 'none'}")
    for job in result["jobs"]:
        retry = f", retry at {job['retryAt']}" if job["retryAt"] else ""
        lease = f", {_lease_words(job['leaseEnds'])}" if job.get("leaseEnds") else ""
        state = "not held" if _lease_ended(job.get("leaseEnds")) else job["state"]
        _said(
            f"job {job['id']}  ",
            f"{state} ({job['scope']}, {job['provenance']}, "
            f"attempts {job['attempts']}, issue {job['issue'] or '-'}{retry}{lease})",
            4,
        )
    if any(job["state"] == "dead" for job in result["jobs"]):
        _plain("Requeue a dead job with `teamlore personal retry JOB`.")


def _lease_ended(until: str | None) -> bool:
    """A running job's lease in the past: its Writer is gone (killed) or late, not running."""
    if not until:
        return False
    return datetime.fromisoformat(until.replace("Z", "+00:00")) <= datetime.now(UTC)


def _lease_words(until: str) -> str:
    if _lease_ended(until):
        return f"lease ended at {until}; the next flush takes it over"
    return f"lease ends {until}"


def _outcome_line(outcome: dict[str, Any]) -> str:
    issue = f", issue {outcome['issue']}" if outcome["issue"] else ""
    job_state = outcome["jobState"]
    if outcome.get("leaseEnds"):  # its own job runs (or ran in a process that was killed)
        job_state = f"{job_state}; its {_lease_words(outcome['leaseEnds'])}"
    job = f", job {outcome['jobId']} ({job_state})" if outcome["jobId"] else ""
    if outcome["retainedIn"]:
        kept = f"; retained in {', '.join(outcome['retainedIn'])}"
    else:
        kept = "; nothing retained" if outcome["state"] == "processed" else ""
    return f"{outcome['state']}{issue}{kept}{job}{_waiting(outcome.get('waitsFor'))}"


def _waiting(held: dict[str, Any] | None) -> str:
    """Why a pending part is not processed yet: the job of its context that holds it back."""
    if held is None:
        return ""
    if held["jobState"] == "running" and _lease_ended(held["until"]):
        return f" (waits for job {held['jobId']}, whose {_lease_words(held['until'])})"
    if held["jobState"] == "running":
        return f" (waits for job {held['jobId']}, running; its lease ends {held['until']})"
    issue = f" after {held['issue']}" if held["issue"] else ""
    return f" (waits for job {held['jobId']}, retried{issue} at {held['until']})"


@personal_app.command("status", short_help="Show the Writer queue and settings (never bodies).")
def personal_status(
    client_id: str | None = Option(None, "--client-id", help="The MCP client's id."),
    import_id: str | None = Option(None, "--import-id", help="A memory_init importId."),
    submission_id: str | None = Option(
        None, "--submission-id", help="A relayed turn's submissionId: show its outcome."
    ),
    conversation_id: str | None = Option(
        None, "--conversation-id", help="The conversationId sent with that turn, if any."
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Show the Writer queue and settings (never bodies), or one submission's outcome."""
    run(
        "personal.queue_status",
        {
            "clientId": client_id,
            "importId": import_id,
            "submissionId": submission_id,
            "conversationId": conversation_id,
        },
        fmt,
        _render_status,
    )


# -- show -------------------------------------------------------------------------------------


def _note(text: str, *, wrap: bool = False) -> None:
    """A note for the person on stderr, written as plainly as `_plain`; with `wrap`, wrapped
    at words to the terminal's width in cells (`hanging`, which reads the width from the
    console: only then is rich loaded; a file name or rule is never split): the note on a
    masked secret, a long sentence a person reads. The others are short and name a folder,
    kept on its line."""
    lines = hanging("note: ", literal(text), 2) if wrap else [f"note: {literal(text)}"]
    sys.stderr.write("".join(f"{line}\n" for line in lines))
    sys.stderr.flush()


def _render_show(result: dict[str, Any]) -> None:
    if "note" in result:  # an unregistered workspace: global only, when that is allowed
        _note(
            result["note"]
            if "readDisabled" in result
            else f"{result['note']}; showing the global context only"
        )
    for doc in result["documents"]:
        for masked in doc["masked"]:
            _note(
                f"{masked['file']}:{masked['line']} holds a secret ({masked['rule']}); agents"
                " read it masked, and it stays in the file until you remove it",
                wrap=True,
            )
    if sys.stdout.isatty():
        _describe_for_a_person(result)
    else:
        _plain(result["text"])


def _describe_for_a_person(result: dict[str, Any]) -> None:
    """At a terminal a person reads the memory: say what agents get, without the words
    addressed to agents (docs/personal.md, "CLI"). Piped, as the SessionStart hook runs it,
    `show` prints the agents' text exactly."""
    if "readDisabled" in result:  # no context may be read: nothing is shown, nothing is empty
        say_wrapped(
            f"No personal memory is shown: {result['readDisabled']}; "
            "`teamlore personal config --scope S` allows one."
        )
        return
    contexts = ", ".join(result["contexts"]) or "none"
    stored = [doc for doc in result["documents"] if not doc["empty"]]
    if not stored:
        say_wrapped(
            f"No personal memory is stored for context(s) {contexts}. Agents reading it are "
            "told there is none and not to guess facts about you."
        )
        return
    say_wrapped(
        f"Agents reading personal memory for context(s) {contexts} get "
        f"{counted(len(stored), 'document')}, marked as your data, not instructions "
        "(`--format json` or a pipe shows their exact text):"
    )
    for doc in stored:
        stdout.print(f"\n── {doc['target']} ──")
        if doc["frontMatter"]:
            _plain("(front matter not shown: the file's own metadata, which agents do not get)")
        _plain(doc["content"].rstrip())


@personal_app.command("show", short_help="Show the personal memory agents receive.")
def personal_show(
    workspace: str | None = Option(
        None,
        "--workspace",
        help="Also show this registered worktree's project notes.",
        metavar="PATH",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Show the personal memory agents receive (reads files only): exactly their text when
    piped, as a session-start hook runs it; described for a person at a terminal."""
    run("personal.show", {"workspace": workspace}, fmt, _render_show)


# -- import -----------------------------------------------------------------------------------


def _render_import(result: dict[str, Any]) -> None:
    """The sentences wrap at the terminal's width (the import id, 67 columns, goes whole onto a
    line of its own at 80), a part's line under a hanging indent; a command to copy
    (`teamlore personal retry JOB`) stays whole on one line."""
    imp = result["import"]
    _said(
        "file: ",
        f"{imp['fileName']} ({imp['bytes']} bytes, {counted(imp['parts'], 'part')}); "
        f"label: {imp['label']}; declared author: {imp['declaredAuthor']}; "
        f"context: {imp['contextId']}",
    )
    if imp.get("frontMatter"):
        _said("front matter: ", "left out (the file's own metadata; not sent to the model)")
    if imp["duplicate"]:
        _said("duplicate: ", f"this exact content was already imported as {imp['importId']}")
    else:
        _said(
            "accepted: ",
            f"{counted(imp['parts'], 'part')} queued as {imp['importId']}; "
            "accepted means durably queued, not remembered",
        )
    flush = result["flush"] or {}
    _say_recovered(flush.get("runs", []))
    for run_ in flush.get("runs", []):
        if run_["code"]:
            why = f": {run_['message']}" if run_.get("message") else ""
            _said("writer: ", f"job {run_['jobId']} {run_['outcome']} ({run_['code']}){why}")
    if "error" in flush:
        _said("writer: ", f"not run ({flush['error']['code']}: {flush['error']['message']})")
        if flush["error"].get("next"):
            _said("  next: ", flush["error"]["next"])
    for part in result["parts"]:
        _said(f"part {part['part']}: ", _outcome_line(part), 2)
    head, _, rest = _import_verdict(result).partition(": ")
    _said(f"{head}: ", rest)


def _import_verdict(result: dict[str, Any]) -> str:
    if result["complete"]:
        if result["retainedIn"]:
            return f"complete: retained in {', '.join(result['retainedIn'])}"
        return "complete: the Writer kept nothing from this file"
    if not result["waited"]:
        return "queued: `teamlore personal flush` runs it, or an init or relay MCP server's Writer"
    waiting = [p for p in result["parts"] if p["state"] != "processed"]
    held = [p.get("waitsFor") for p in waiting if p.get("waitsFor")]
    leased = {(h["jobId"], h["until"]) for h in held if h["jobState"] == "running"}
    # a part's own job still running: a Writer holds its lease, or held it and was killed
    leased |= {(p["jobId"], p["leaseEnds"]) for p in waiting if p.get("leaseEnds")}
    running = sorted(leased)
    holding = [p["jobId"] or (p.get("waitsFor") or {}).get("jobId") for p in waiting]
    # a running job cannot be retried (NOTHING_TO_RETRY): its lease ends first
    jobs = sorted({str(job) for job in holding if job} - {job for job, _ in running})
    if jobs:
        hint = f"; `teamlore personal retry {jobs[0]}` then import again"
    elif running:
        job, until = running[0]
        if _lease_ended(until):
            hint = f"; job {job}'s {_lease_words(until)}: `teamlore personal flush`"
        else:
            hint = f"; job {job} is running until {until}: import again after that"
    else:
        hint = ""
    return f"incomplete: not every part was processed{hint}"


@personal_app.command("import", short_help="Import a Markdown notes file into personal memory.")
def personal_import(
    file: str = Argument(..., metavar="FILE.md", help="A Markdown file (at most 256 KiB)."),
    author: str = Option(
        "unknown",
        "--author",
        help="Who wrote it (a label only): user, agent, third_party, mixed, unknown.",
        metavar="user|agent|third_party|mixed|unknown",
    ),
    label: str | None = Option(None, "--label", help="Source label (default: file name)."),
    workspace: str | None = Option(
        None,
        "--workspace",
        help="Import into this registered worktree's project context.",
        metavar="PATH",
    ),
    no_wait: bool = Option(False, "--no-wait", help="Only queue; do not run the Writer."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Import a Markdown notes file into personal memory; exit 1 unless every part is processed."""
    result = run(
        "personal.import",
        {
            "path": file,
            "author": author,
            "label": label,
            "workspace": workspace,
            "wait": not no_wait,
        },
        fmt,
        _render_import,
    )
    if not no_wait and not result["complete"]:
        raise SystemExit(1)


# -- flush / retry ------------------------------------------------------------------------------


# what each Writer run did, in a person's words (`idle`, the run that found nothing due, is not
# a job: the last line says it)
_RUN_OUTCOMES = {
    "committed": "written into personal memory",
    "ignored": "read; nothing to keep",
    "quarantined": "set aside",
    "failed": "failed",
}


def _say_recovered(runs: list[dict[str, Any]]) -> None:
    """The commits a crash interrupted (files written, not yet recorded) that a run completed
    from their receipts, without another model call."""
    for job_id in sorted({job for run_ in runs for job in run_.get("recovered", [])}):
        _said("recovered: ", f"job {job_id}'s interrupted commit was completed", 2)


def _render_flush(result: dict[str, Any]) -> None:
    """Each line wraps at words under a hanging indent; `teamlore personal retry JOB` stays
    whole on one line."""
    _say_recovered(result["runs"])
    for run_ in result["runs"]:
        if run_["outcome"] == "idle":
            continue
        code = f" ({run_['code']})" if run_["code"] else ""
        why = f": {run_['message']}" if run_.get("message") else ""
        _said(f"job {run_['jobId']}: ", f"{_RUN_OUTCOMES[run_['outcome']]}{code}{why}", 2)
    if not result["complete"]:
        for job in result.get("waiting", []):  # each, with what brings it back
            _said("waiting: ", _waiting_for(job), 2)
        _plain("incomplete: see `teamlore personal status`")
    elif any(run_["outcome"] != "idle" or run_.get("recovered") for run_ in result["runs"]):
        _plain("complete: nothing else is due")
    else:
        _plain("complete: nothing was due")


def _waiting_for(job: dict[str, Any]) -> str:
    """What an incomplete flush waits for in `job`, and what brings it back."""
    if _lease_ended(job.get("leaseEnds")):  # its Writer is gone: a flush takes it over
        return f"job {job['id']}'s {_lease_words(job['leaseEnds'])}"
    if job["state"] == "running":  # `retry` refuses it (NOTHING_TO_RETRY): its lease
        return f"job {job['id']} is running until {job['leaseEnds']}: flush again after that"
    issue = f" ({job['issue']})" if job["issue"] else ""
    when = "dead" if job["state"] == "dead" else f"retried at {job['retryAt']}"
    return f"job {job['id']} {when}{issue}; `teamlore personal retry {job['id']}`"


@personal_app.command("flush", short_help="Run the Writer until nothing is due.")
def personal_flush(fmt: OutputFormat = FormatOption) -> None:
    """Run the Writer until nothing is due; exit 1 if anything is left or failed."""
    result = run("personal.flush", {}, fmt, _render_flush)
    if not result["complete"]:
        raise SystemExit(1)


@personal_app.command("retry", short_help="Requeue a dead or backing-off Writer job.")
def personal_retry(
    job: str = Argument(..., help="A job id from `teamlore personal status`."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Requeue a dead or backing-off Writer job (its attempts start again)."""
    run(
        "personal.retry",
        {"jobId": job},
        fmt,
        lambda r: _said(
            "requeued ",
            f"{counted(r['requeued'], 'observation')} of job {r['jobId']}; "
            "run `teamlore personal flush`",
            2,
        ),
    )
