"""`teamlore install`, `uninstall`, `doctor` and `hook session-start` (docs/agents.md)."""

from __future__ import annotations

from typing import Any

from teamlore.cli.app import App, app
from teamlore.cli.output import (
    FormatOption,
    OutputFormat,
    hanging,
    run,
    say,
    say_ignored_by_git,
    say_wrapped,
    stdout,
    styled,
)
from teamlore.cli.params import Option
from teamlore.core.paths import display_path

hook_app = App(help="Entry points the agent clients call (installed by `install`).")
app.add_typer(hook_app, name="hook")

ClientOption = Option(
    ...,
    "--client",
    help="claude, codex, pi or all (all: claude and codex; pi only when named).",
    metavar="CLIENT",
)
ScopeOption = Option(
    "user",
    "--scope",
    help="user: your own client config; project: files in this repository, safe to commit.",
    metavar="user|project",
)


# what a dry run's rows say: the file is not created yet, it would be
_WOULD = {
    "created": "would create",
    "updated": "would update",
    "restored": "would restore",
    "removed": "would remove",
    "kept (changed since install)": "would keep (changed since install)",
    "removed (backup lost)": "would remove (backup lost)",
    "kept (backup lost)": "would keep (backup lost)",
    "block removed (backup lost)": "would remove the block (backup lost)",
}
_BACKUP_LOST = (
    "the copy install kept of the file it replaced is missing (an older teamlore may have"
    " deleted it on a second `install --force`): that file cannot be put back"
)
_BLOCK_REMOVED = (
    "the copy install kept of this file is missing: teamlore took its team memory block out"
    " and kept the rest as it is (`teamlore memory assemble` writes the block again)"
)


def _render_files(title: str, done: dict[str, Any], *, dry_run: bool) -> None:
    where = f" in {display_path(done['root'])}" if done.get("root") else ""
    say(styled(done["client"], "bold"), f" ({done['scope']} scope{where}): {title}")
    width = 13 if dry_run else 10
    for item in done["files"]:
        action = _WOULD.get(item["action"], item["action"]) if dry_run else item["action"]
        say(f"  {action:<{width}} {display_path(item['path'])}")
        if item.get("linkTarget") and item["action"] != "unchanged":
            made = "would be made" if dry_run else "was made"
            target = display_path(item["linkTarget"])
            link = f"a symbolic link: the change {made} in {target}; the link stays"
            for line in hanging("  ", link, 4):
                say(line)
        for kept in item.get("kept", []):  # an entry another state dir's install wrote over
            keep = "would keep" if dry_run else "kept"
            why = (
                f"teamlore was installed for another state dir ({kept['stateDir']}) since"
                if kept["stateDir"] is not None
                else "teamlore's project-scope entry was installed over it since"
            )
            said = f"{keep} {kept['key']}: changed since install, {why}"
            if kept["key"].startswith("hooks."):  # teamlore's hook, its command edited since
                event = kept["key"].removeprefix("hooks.")
                said = (
                    f"{keep} the {event} hook: its command was changed since install; remove it"
                    " by hand if you no longer want it"
                )
            for line in hanging("  ", said, 4):
                say(line)
        if item["action"].endswith("(backup lost)"):
            lost = _BLOCK_REMOVED if item["action"].startswith("block") else _BACKUP_LOST
            for line in hanging("  ", lost, 4):
                say(line)
        if item.get("diff"):
            stdout.print(_diff_from_home(item["diff"].rstrip(), item["path"]))


def _diff_from_home(diff: str, path: str) -> str:
    """A diff of the file at `path` whose `---` / `+++` lines name it from `~`, as the row
    above it does."""
    lines = diff.split("\n")
    for i, line in enumerate(lines[:2]):
        for mark in ("---", "+++"):
            if line == f"{mark} {path}":
                lines[i] = f"{mark} {display_path(path)}"
    return "\n".join(lines)


def _say_note(note: str) -> None:
    """A note, wrapped at the terminal's width under its first word."""
    first, *rest = hanging("note ", note, 5)
    say(styled("note", "yellow"), first[len("note") :])
    for line in rest:
        say(line)


def _render_install(result: dict[str, Any]) -> None:
    for done in result["installed"]:
        title = "installed"
        if result["dryRun"]:
            unchanged = all(item["action"] == "unchanged" for item in done["files"])
            title = "nothing to change (dry run)" if unchanged else "would change (dry run)"
            title += ", nothing written"
        _render_files(title, done, dry_run=result["dryRun"])
        assemble = done.get("assemble") or {}
        assembled = assemble.get("result") or {}
        if (assemble.get("ran") or assemble.get("wouldRun")) and assembled["targetLinksTo"]:
            say_wrapped(
                f"{assembled['target']} links to {assembled['targetLinksTo']}: its team memory"
                f" block comes from `teamlore memory assemble -p {assembled['linkedProvider']}`",
                4,
                lead="  ",
            )
        elif assemble.get("ran"):
            say("  assembled the team memory block for this client")
        elif assemble.get("refused"):
            would = "would not be" if result["dryRun"] else "not"
            say(styled(f"  team memory {would} assembled: ", "yellow"), assemble["reason"])
        say_ignored_by_git(done.get("ignoredByGit", []))
    for note in result.get("notes", []):
        _say_note(note)
    if not result["dryRun"]:
        say("Check it with: teamlore doctor")


def _render_uninstall(result: dict[str, Any]) -> None:
    title = "would change (dry run), nothing written" if result["dryRun"] else "uninstalled"
    for done in result["uninstalled"]:
        _render_files(title, done, dry_run=result["dryRun"])
    for note in result.get("notes", []):
        _say_note(note)


@app.command(short_help="Connect Claude Code and/or Codex: MCP, hooks, memory.")
def install(
    client: str = ClientOption,
    scope: str = ScopeOption,
    team: bool = Option(
        False, "--team", help="Team tier with write tools (extraction loop) instead of team-read."
    ),
    personal: bool = Option(
        False, "--personal", help="Also let the agent import what it knows (memory_init)."
    ),
    dry_run: bool = Option(False, "--dry-run", help="Show the diffs, write nothing."),
    force: bool = Option(
        False,
        "--force",
        help="Write a client's config even when the client is not on PATH; replace a "
        "same-named entry teamlore did not write; turn Codex hooks on when your config turned "
        "them off.",
    ),
    sync_on_stop: bool = Option(
        False, "--sync-on-stop", help="Also index each session's file when it stops (Stop hook)."
    ),
    org_url: str | None = Option(
        None,
        "--org-url",
        help="Also add a remote `teamlore org serve` endpoint (https://…/mcp) as teamlore_org.",
    ),
    org_token_variable: str = Option(
        "TEAMLORE_ORG_TOKEN",
        "--org-token-env",
        help="Environment variable the client reads the org token from (never written to a file).",
    ),
    assemble: bool = Option(
        False,
        "--assemble",
        help="User scope: also write the team memory block into this repository's "
        "CLAUDE.md / AGENTS.md (project scope always does).",
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Connect Claude Code and/or Codex: MCP servers, SessionStart hook, assembled memory.

    `--client pi` (opt-in, never part of `all`) writes one Pi extension instead: it adds the
    same memory brief to every prompt and queues each prompt you type for personal memory."""
    run(
        "install",
        {
            "client": client,
            "scope": scope,
            "team": team,
            "personal": personal,
            "dryRun": dry_run,
            "force": force,
            "syncOnStop": sync_on_stop,
            "orgUrl": org_url,
            "orgTokenVariable": org_token_variable,
            "assemble": assemble,
        },
        fmt,
        _render_install,
    )


@app.command(short_help="Remove exactly what `teamlore install` added.")
def uninstall(
    client: str = Option(
        ...,
        "--client",
        help="claude, codex, pi or all (all: every client teamlore is installed in).",
        metavar="CLIENT",
    ),
    scope: str = ScopeOption,
    dry_run: bool = Option(False, "--dry-run", help="Show the diffs, write nothing."),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Remove exactly what `teamlore install` added (byte for byte when untouched since)."""
    run("uninstall", {"client": client, "scope": scope, "dryRun": dry_run}, fmt, _render_uninstall)


@hook_app.command("session-start", short_help="Print the bounded SessionStart brief.")
def hook_session_start(
    client: str = Option(
        "claude", "--client", help="claude, codex or pi.", metavar="claude|codex|pi"
    ),
) -> None:
    """Print the bounded SessionStart brief (personal memory, team doctrine and scenes).

    Never fails and never blocks: on any error or after its time budget it prints nothing."""
    from teamlore.cli.hook_runner import exit_now, run_from_argv

    exit_now(run_from_argv(["--client", client]))


@hook_app.command(
    "session-end", short_help="Index the session that just stopped, in the background."
)
def hook_session_end(
    client: str = Option("claude", "--client", help="claude or codex.", metavar="claude|codex"),
) -> None:
    """Index the transcript of the session that just stopped, in the background.

    Reads the hook payload's transcript_path and starts `teamlore sync --source` for that one
    file, detached; returns at once and never fails (installed by `install --sync-on-stop`)."""
    from teamlore.cli.hook_runner import exit_now, session_end_from_argv

    exit_now(session_end_from_argv(["--client", client]))


@hook_app.command("user-turn", short_help="Queue the prompt the user typed for personal memory.")
def hook_user_turn(
    client: str = Option(
        "pi", "--client", help="pi (the host whose extension calls it).", metavar="pi"
    ),
) -> None:
    """Queue the prompt the user typed (JSON on stdin) for personal memory.

    The Pi extension that `install --client pi` writes runs it for every typed prompt. Prints the
    outcome as JSON ({accepted, state, contextId} or {accepted: false, code, notice}); a secret
    or personal data is refused (SENSITIVE_CONTENT_REJECTED) and never stored. Always exits 0."""
    from teamlore.cli.hook_runner import exit_now, user_turn_from_argv

    exit_now(user_turn_from_argv(["--client", client]))


_MARKS = {"ok": ("ok  ", "green"), "warn": ("warn", "yellow"), "fail": ("fail", "red")}
_NAME_WIDTH = 18
_MESSAGE_INDENT = len("fail ") + _NAME_WIDTH + 1


def _render_doctor(result: dict[str, Any]) -> None:
    for check in result["checks"]:
        mark, style = _MARKS[check["status"]]
        lead = f"{mark} {check['check']:<{_NAME_WIDTH}} "
        first, *rest = hanging(lead, check["message"], _MESSAGE_INDENT)
        say(styled(mark, style), first[len(mark) :])
        for line in rest:
            say(line)
        if check.get("fix"):
            fix = hanging(f"{'':<{_MESSAGE_INDENT}}fix: ", check["fix"], _MESSAGE_INDENT + 5)
            for line in fix:
                say(line)
    counts = result["counts"]
    say(f"{counts['ok']} ok, {counts['warn']} warn, {counts['fail']} fail")


@app.command(short_help="Check CLIs, installed entries, servers, hooks and index.")
def doctor(
    client: str = Option(
        "all", "--client", help="claude, codex, pi or all (pi only when installed)."
    ),
    fmt: OutputFormat = FormatOption,
) -> None:
    """Check CLIs, installed entries, servers, hooks, index and state; each with its fix.

    Exits 1 when a check fails."""
    result = run("doctor", {"client": client}, fmt, _render_doctor)
    if result["counts"]["fail"]:
        raise SystemExit(1)
