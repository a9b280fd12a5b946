"""`install` / `uninstall`: connect Claude Code, Codex and (opt-in) Pi to teamlore in one command.

CLI-only housekeeping (no MCP tool, `capability=None` in the registry): they edit the user's
own client config files, which an agent must never do through a tool call.

What install writes, per client (docs/agents.md):
- MCP server `teamlore`: team-read tier (`--team`: the team tier with the write tools the
  agent-native extraction loop needs);
- MCP server `teamlore_personal`: personal read tier with the global context (`--personal`:
  also the init tier), client id `claude-code` / `codex-cli`;
- a SessionStart hook running `teamlore hook session-start --client <client>`;
- for Codex, `startup_timeout_sec` on each server and the hooks feature flag; `required = true`
  in user scope only (a committed project entry with `required = true` stops Codex in that
  repository for every teammate without teamlore on PATH);
- then, for project scope or with `--assemble`, when the repository has team memory and
  `memory assemble` exists, the assembled block (recorded, so uninstall takes it back out).

Pi (`--client pi` only; `all` never includes it, because it captures the prompts the user types):
one extension file teamlore owns (integrations/pi.py) that injects the same brief and queues
each typed prompt for the personal-memory Writer.

Every change to a client file is a transaction (integrations/transaction.py): an interrupted
install or uninstall is completed by the next install or uninstall; doctor reports it.

User scope pins this interpreter (and `TEAMLORE_HOME` when set); project scope writes the
portable form that is safe to commit (`teamlore` on PATH, nothing user-specific).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from teamlore.core import errors
from teamlore.core.locations import pinned_state_dir, state_dir_path
from teamlore.core.paths import WATCH_SOCKET_NAME, display_path, resolve_home
from teamlore.core.shapes.strict import STRICT
from teamlore.integrations import claude, codex, installer, leftovers, pi, transaction
from teamlore.integrations import doctor as doctor_checks
from teamlore.integrations.console_script import runs_with
from teamlore.integrations.entries import (
    ORG_SERVER,
    PERSONAL_SERVER,
    TEAM_SERVER,
    FileEdits,
    HookSpec,
    RemoteServerSpec,
    ServerSpec,
)
from teamlore.integrations.manifest import (
    HookRecord,
    Manifest,
    load_manifest,
    manifest_path,
    stray_backups,
)
from teamlore.ops.integrations import state_checks as state
from teamlore.ops.integrations.assemble_preview import assemble_folder, preview_assemble
from teamlore.ops.integrations.each_client import run_each
from teamlore.ops.integrations.mcp_config import McpConfigRequest, _Plan
from teamlore.ops.integrations.session_brief import worktree_root
from teamlore.ops.registry import REGISTRY, OpContext, operation
from teamlore.org.tokens import refuse_credentials_in_url

ClientChoice = Literal["claude", "codex", "pi", "all"]
ScopeChoice = Literal["user", "project"]
CLIENTS: dict[str, Any] = {"claude": claude, "codex": codex, "pi": pi}
ALL_CLIENTS = ("claude", "codex")  # `--client all`; Pi captures typed prompts: only when named
MCP_ONLY_OPTIONS = {
    "team": "--team",
    "personal": "--personal",
    "syncOnStop": "--sync-on-stop",
    "orgUrl": "--org-url",
}
PORTABLE_TEAMLORE = "teamlore"


class InstallRequest(BaseModel):
    model_config = STRICT

    client: ClientChoice = Field(
        description="claude, codex, pi, or all (claude and codex, those found on PATH)"
    )
    scope: ScopeChoice = "user"
    team: bool = Field(False, description="team tier (write tools) instead of team-read")
    personal: bool = Field(False, description="also the personal init tier (memory_init)")
    dryRun: bool = False
    syncOnStop: bool = Field(
        False, description="a Stop hook that indexes the session's file in the background"
    )
    force: bool = Field(
        False,
        description="replace an entry teamlore did not write; skip CLI check; turn Codex hooks"
        " on when the config turned them off",
    )
    orgUrl: str | None = Field(
        None,
        max_length=2048,
        pattern=r"^https?://[^\s]+$",
        description="a remote `teamlore org serve` endpoint (…/mcp) to add as `teamlore_org`",
    )
    orgTokenVariable: str = Field(
        "TEAMLORE_ORG_TOKEN",
        pattern=r"^[A-Z_][A-Z0-9_]{0,63}$",
        description="the environment variable the client reads the org token from",
    )
    assemble: bool = Field(
        False,
        description="user scope: also write the team memory block into this repository's "
        "CLAUDE.md / AGENTS.md (project scope always does)",
    )


class UninstallRequest(BaseModel):
    model_config = STRICT

    client: ClientChoice
    scope: ScopeChoice = "user"
    dryRun: bool = False


def client_binary(client: str) -> str | None:
    name: str = CLIENTS[client].CLI_NAME
    return shutil.which(name)


def _clients(choice: str, *, force: bool, dry_run: bool = False) -> tuple[list[str], list[str]]:
    """(clients to act on, notes). An explicitly named client must be installed (unless
    --force; a dry run, which writes nothing, shows its files with a note); `all` takes the
    ones found and refuses only when none is (a dry run then shows both, with the note)."""
    names = list(ALL_CLIENTS) if choice == "all" else [choice]
    found = [c for c in names if force or client_binary(c)]
    missing = [c for c in names if c not in found]
    if choice != "all" and missing and dry_run:
        cli = CLIENTS[choice].CLI_NAME
        return [choice], [
            f"{choice}: `{cli}` is not on PATH, so the real install refuses; install it first"
            f" (`{INSTALL_HINTS[choice]}`), or pass --force to write its config anyway"
        ]
    if choice != "all" and missing:
        raise errors.TeamloreError(
            errors.CLIENT_NOT_FOUND,
            f"`{CLIENTS[choice].CLI_NAME}` is not on PATH; install it first "
            f"(`{INSTALL_HINTS[choice]}`), or pass --force to write its config anyway",
        ).advising(
            f"Install `{CLIENTS[choice].CLI_NAME}` (`{INSTALL_HINTS[choice]}`) and put it on PATH,"
            " or pass --force."
        )
    if not found and dry_run:  # preview both, as the single-client form does, with the note
        return names, [
            f"{c}: `{CLIENTS[c].CLI_NAME}` is not on PATH, and neither is the other client's,"
            f" so the real install refuses; install one first (`{INSTALL_HINTS[c]}`), or pass"
            " --force to write its config anyway"
            for c in names
        ]
    if not found:
        raise errors.TeamloreError(
            errors.CLIENT_NOT_FOUND, "neither `claude` nor `codex` is on PATH; install one first"
        )
    return found, [f"{c}: `{CLIENTS[c].CLI_NAME}` not on PATH, skipped" for c in missing]


def _project_root(ctx: OpContext, scope: str) -> Path | None:
    if scope != "project":
        return None
    root = worktree_root(ctx.cwd.resolve())
    if root is None:
        raise errors.TeamloreError(
            errors.NOT_A_GIT_REPOSITORY,
            f"{display_path(ctx.cwd)} is not inside a git worktree; --scope project writes to"
            " the repository",
        ).advising(  # install takes no path: the generic "or give the path of one" misleads
            "Run it again inside the repository's worktree (`cd` there), or use --scope user."
        )
    return root


def _server(client: str, name: str, capabilities: list[str], portable: bool) -> ServerSpec:
    personal = any(c in ("init", "read", "relay") for c in capabilities)
    plan = _Plan(
        McpConfigRequest(
            client=client,
            capabilities=capabilities,
            global_context=personal,
            name=name,
            portable=portable,
        )
    )
    launch = plan.launch(client)
    # a committed entry must not stop Codex for a teammate without teamlore (docs/agents.md)
    table = {**plan.codex()["table"], "required": not portable}
    return ServerSpec(name, launch["command"], launch["args"], launch["env"], table)


def _teamlore_launch(portable: bool) -> tuple[list[str], dict[str, str]]:
    """How a hook starts teamlore (argv, environment to add): `teamlore` on PATH (portable),
    else this installation (its console script, or `-m` when the script names another Python),
    with `TEAMLORE_HOME` naming the state dir unless it is the default
    (`pinned_state_dir`: one from `$XDG_STATE_HOME` too, which a client need not pass on)."""
    if portable:
        return [PORTABLE_TEAMLORE], {}
    script = Path(sys.executable).parent / "teamlore"
    # a script of a moved virtualenv names the Python of its old place: start this one instead
    usable = script.is_file() and runs_with(script, sys.executable)
    argv = [str(script)] if usable else [sys.executable, "-m", "teamlore.cli.entry"]
    home = pinned_state_dir(os.environ)
    return argv, ({"TEAMLORE_HOME": home} if home else {})


def _teamlore_command(portable: bool) -> str:
    """`_teamlore_launch` as a shell command line (what a client's hook entry runs)."""
    argv, env = _teamlore_launch(portable)
    assignments = [f"{name}={shlex.quote(value)}" for name, value in env.items()]
    return " ".join([*assignments, *(shlex.quote(part) for part in argv)])


def plan_client(client: str, request: InstallRequest, root: Path | None) -> list[FileEdits]:
    portable = request.scope == "project"
    if client == "pi":
        return pi.plan_files(request.scope, root, *_teamlore_launch(portable))
    personal_tiers = ["read", "init"] if request.personal else ["read"]
    servers = [
        _server(client, TEAM_SERVER, ["team" if request.team else "team-read"], portable),
        _server(client, PERSONAL_SERVER, personal_tiers, portable),
    ]
    command = f"{_teamlore_command(portable)} hook session-start --client {client}"
    hooks = [HookSpec("SessionStart", command)]
    if request.syncOnStop:
        teamlore = _teamlore_command(portable)
        hooks.append(HookSpec("Stop", f"{teamlore} hook session-end --client {client}"))
    files: list[FileEdits] = CLIENTS[client].plan_files(request.scope, root, servers, hooks)
    if request.orgUrl:  # the servers file comes first for both clients
        remote = RemoteServerSpec(ORG_SERVER, request.orgUrl, request.orgTokenVariable)
        files[0].keys.append(CLIENTS[client].remote_key(remote))
    return files


ASSEMBLED = {"claude": ("CLAUDE.md", ".claude/skills"), "codex": ("AGENTS.md", ".agents/skills")}


def _assemble(
    ctx: OpContext, client: str, scope: str, root: Path | None, home: Path
) -> dict[str, Any]:
    """Run `memory assemble` for the client when the repository has team memory, and record
    the files it wrote in the installation, so uninstall takes them back out."""
    where, skipped = assemble_folder(ctx, client, root)
    if where is None:
        return skipped
    instructions, skills = ASSEMBLED[client]
    try:  # the install is done: a refused assemble is reported beside it, not instead of it
        intent = transaction.begin_assemble(
            home,
            client=client,
            scope=scope,
            root=str(root) if root is not None else None,
            top=where,
            watch=[instructions, skills],
        )
    except errors.TeamloreError as err:
        return {"ran": False, "reason": f"{err.code}: {err.message}", "refused": True}
    try:
        result = REGISTRY.get("memory.assemble").run(
            OpContext(cwd=where, home=ctx.home), {"provider": client}
        )
    except errors.TeamloreError as err:
        return {"ran": False, "reason": f"{err.code}: {err.message}", "refused": True}
    finally:
        transaction.finish_assemble(home, intent)
    return {"ran": True, "result": result}


def _install_one(
    home: Path,
    request: InstallRequest,
    root: Path | None,
    edits: list[FileEdits],
    client: str,
    *,
    preview: bool,
    lost: bool = False,
) -> dict[str, Any]:
    options = {
        "team": request.team,
        "personal": request.personal,
        "syncOnStop": request.syncOnStop,
        "orgUrl": request.orgUrl,
    }
    return installer.install(
        home,
        client=client,
        scope=request.scope,
        root=root,
        files=edits,
        options=options,
        force=request.force,
        dry_run=preview,
        check_writable=not request.dryRun,  # a dry run notes it instead (`unwritable_notes`)
        lost=lost,
    )


def _ignored_by_git(root: Path, done: dict[str, Any]) -> list[dict[str, object]]:
    """Of the project files install and its assemble wrote, those git ignores (a `.claude/` or
    `.codex/` rule): the team would never get them (`repo/ignored.py`)."""
    from teamlore.ops.memory.assemble import written_by
    from teamlore.repo.ignored import ignored_by_git

    written = [Path(item["path"]).relative_to(root).as_posix() for item in done["files"]]
    assembled = (done.get("assemble") or {}).get("result")
    return ignored_by_git(root, written + (written_by(assembled) if assembled else []))


def unwritable_notes(previews: list[dict[str, Any]]) -> list[str]:
    """A dry run's note for each file it shows an edit of that the real run could not write."""
    return [
        f"{preview['client']}: the real run would be refused: {row['unwritable']}"
        for preview in previews
        for row in preview["files"]
        if "unwritable" in row
    ]


def _pending_note(home: Path) -> list[str]:
    """A dry run only says what the real run would finish first."""
    intent = transaction.pending(home) if home.is_dir() else None
    if intent is None:
        return []
    return [f"an interrupted {intent.describe()} will be completed first"]


@operation(
    "install",
    input_model=InstallRequest,
    side_effect="state-write",
    description="Register teamlore's MCP servers and SessionStart hook in Claude Code / Codex.",
)
def install(ctx: OpContext, request: InstallRequest) -> dict[str, Any]:
    """Connect Claude Code and/or Codex to teamlore (MCP servers, SessionStart hook), or Pi"""
    _refuse_mcp_options_for_pi(request)
    if request.orgUrl:
        refuse_credentials_in_url(request.orgUrl, request.orgTokenVariable)
    clients, notes = _clients(request.client, force=request.force, dry_run=request.dryRun)
    root = _project_root(ctx, request.scope)
    plans = {client: plan_client(client, request, root) for client in clients}
    home = (
        ctx.home
        if request.dryRun and ctx.home is not None
        else (state_dir_path() if request.dryRun else resolve_home(ctx.home))
    )
    if request.dryRun:
        lost = not manifest_path(home).exists()
        previews = [
            _install_one(home, request, root, plans[c], c, preview=True, lost=lost) for c in plans
        ]
        for preview in previews:  # and what its assemble would write (`assemble_preview`)
            if request.scope == "project" or request.assemble:
                preview["assemble"], rows = preview_assemble(ctx, preview["client"], root, home)
                preview["files"] += rows
        notes += [*_hooks_notes(previews, trust=False), *_pending_note(home)]
        return {"dryRun": True, "installed": previews, "notes": notes + unwritable_notes(previews)}
    with transaction.locked(home):
        completed = transaction.complete(home)
        if completed:
            notes.append(completed)
        # a record of this state dir may be lost only while it holds no manifest (`Adoption`):
        # decided once, before the first client's install writes one
        lost = not manifest_path(home).exists()
        # dry-run every client first: a refusal for the second leaves the first untouched too
        for client in clients:
            _install_one(home, request, root, plans[client], client, preview=True, lost=lost)

        def install_client(client: str) -> dict[str, Any]:
            done = _install_one(
                home, request, root, plans[client], client, preview=False, lost=lost
            )
            if request.scope == "project" or request.assemble:
                done["assemble"] = _assemble(ctx, client, request.scope, root, home)
            if root is not None:
                done["ignoredByGit"] = _ignored_by_git(root, done)
            return done

        installed = run_each(clients, install_client, "installed")
    notes += _hooks_notes(installed, trust=True)
    if "pi" in clients:
        notes.append(PI_NOTE)
    if request.scope == "project":
        notes.append(
            "project files use `teamlore` on PATH: every teammate needs teamlore installed"
        )
    return {"dryRun": False, "installed": installed, "notes": notes}


def _hooks_notes(results: list[dict[str, Any]], *, trust: bool) -> list[str]:
    """Per Codex result: hooks left off as the user set them, or (`trust`: after a real
    install) the trust a new hook needs."""
    notes = []
    for done in (r for r in results if r["client"] == "codex"):
        flags = "--client codex" + (" --scope project" if done["scope"] == "project" else "")
        for where in done.get("keptOff", []):
            notes.append(
                f"codex: hooks stay off as you set them ({where} = false), so teamlore added no"
                " SessionStart hook: Codex sessions start without the memory brief (the MCP"
                f" servers work); `teamlore install {flags} --force` turns hooks on"
            )
        for where in done.get("keptOn", []):
            notes.append(
                f"codex: hooks stay on ({where} = true): an earlier `teamlore install --force`"
                " (or an older teamlore) turned your `false` on; to turn them off, set it to"
                f" false and run `teamlore install {flags}` again (it takes its hook out), or"
                f" `teamlore uninstall {flags}` puts your `false` back"
            )
        if trust and not done.get("keptOff"):
            notes.append(
                "codex: run `codex` once and trust teamlore's SessionStart hook in /hooks "
                "(Codex runs a new hook only after you trusted it)"
            )
    return notes


PI_NOTE = (
    "pi: every prompt you type is now queued for your personal memory (a secret or personal "
    "data is refused, never stored) and the memory brief is added to each prompt; "
    "`teamlore uninstall --client pi` turns both off"
)


def _refuse_mcp_options_for_pi(request: InstallRequest) -> None:
    """Pi gets the extension only: the MCP-server options would be silently ignored."""
    if request.client != "pi":
        return
    given = [flag for name, flag in MCP_ONLY_OPTIONS.items() if getattr(request, name)]
    if given:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"{', '.join(given)}: only for claude and codex (MCP server settings); in Pi "
            "teamlore installs one extension, so leave it out for --client pi",
        )


@operation(
    "uninstall",
    input_model=UninstallRequest,
    side_effect="state-write",
    description="Remove exactly what `teamlore install` added to Claude Code / Codex configs.",
)
def uninstall(ctx: OpContext, request: UninstallRequest) -> dict[str, Any]:
    """Remove exactly what install added (restoring files byte for byte when untouched since)"""
    root = _project_root(ctx, request.scope)
    home = ctx.home if ctx.home is not None else state_dir_path()
    names: list[str] = list(CLIENTS) if request.client == "all" else [request.client]
    if request.dryRun:
        notes = _pending_note(home)
        try:
            previews = _uninstall_all(home, request, root, names, True)
        except errors.TeamloreError as err:
            if not notes or err.code != errors.NOTHING_INSTALLED.code:
                raise
            previews = []  # the interrupted install is all there is: completed, then removed
        return {
            "dryRun": True,
            "uninstalled": previews,
            "notes": notes + unwritable_notes(previews),
        }
    if not (manifest_path(home).is_file() or transaction.pending(home) or stray_backups(home)):
        _uninstall_all(home, request, root, names, True)  # NOTHING_INSTALLED, no trace left
    with transaction.locked(home):
        completed = transaction.complete(home)
        try:
            removed = _uninstall_all(home, request, root, names, False)
        except errors.TeamloreError as err:
            if completed is None or err.code != errors.NOTHING_INSTALLED.code:
                raise
            removed = []
    out: dict[str, Any] = {"dryRun": False, "uninstalled": removed}
    if completed:
        out["notes"] = [completed]
    return out


def _named(client: str) -> str:
    """`all` as a person reads it in a sentence."""
    if client != "all":
        return client
    *first, last = CLIENTS
    return f"{', '.join(first)} or {last}"


def _user_plan(client: str) -> list[FileEdits]:
    """The files a user-scope install of `client` edits (none when it cannot be planned)."""
    try:
        return plan_client(client, InstallRequest(client=client, scope="user"), None)
    except errors.TeamloreError:
        return []


def _left_behind(home: Path, client: str, scope: str, root: Path | None) -> tuple[str, str] | None:
    """teamlore's entries the client's files hold that no record here covers: what, and the fix."""
    try:  # the plan reads config.toml, whose own check names what is wrong with it
        request = InstallRequest(client=client, scope=scope)
        found = leftovers.found_in(plan_client(client, request, root))
        manifest = load_manifest(home) if home.is_dir() else Manifest()
    except errors.TeamloreError:
        return None
    return leftovers.explain(found, home, client, scope, manifest) if found else None


def _uninstall_all(
    home: Path, request: UninstallRequest, root: Path | None, names: list[str], dry_run: bool
) -> list[dict[str, Any]]:
    manifest = load_manifest(home) if home.is_dir() else Manifest()
    root_key = str(root) if root is not None else None
    present = [c for c in names if manifest.find(c, request.scope, root_key)]
    if not present:
        # every client's, each with its own command (not only the first one's)
        found = [(c, _left_behind(home, c, request.scope, root)) for c in names]
        left = [
            f"{c}: {w[0]}: {w[1]}" if len(names) > 1 else f"{w[0]}: {w[1]}" for c, w in found if w
        ]
        raise errors.TeamloreError(
            errors.NOTHING_INSTALLED,
            f"teamlore is not installed for {_named(request.client)} ({request.scope} scope)"
            + "".join(f"; {item}" for item in left),
        )
    from teamlore.memory.assemble import without_block

    def undone(client: str, preview: bool) -> dict[str, Any]:
        return installer.uninstall(
            home,
            client=client,
            scope=request.scope,
            root=root,
            dry_run=preview,
            check_writable=not dry_run,  # a dry run notes it instead (`unwritable_notes`)
            unassemble=without_block,
        )

    # every file of every client parses, is ours to edit and can be written before any is
    # touched (`each_client`)
    previews = [undone(c, True) for c in present]
    if dry_run:
        return previews
    return run_each(present, lambda client: undone(client, False), "uninstalled")


# -- doctor -----------------------------------------------------------------------------------

INSTALL_HINTS = {
    "claude": "npm install -g @anthropic-ai/claude-code",
    "codex": "npm install -g @openai/codex",
    "pi": "npm install -g @earendil-works/pi-coding-agent",
}


class DoctorRequest(BaseModel):
    model_config = STRICT

    client: ClientChoice = "all"


def _client_checks(
    ctx: OpContext, client: str, home: Path, manifest: Manifest, intent: transaction.Intent | None
) -> list[doctor_checks.Check]:
    checks = [doctor_checks.cli_check(client, CLIENTS[client].CLI_NAME, INSTALL_HINTS[client])]
    root = worktree_root(ctx.cwd.resolve())
    # an interrupted install or uninstall of this client is one failing check with its fix;
    # what it left half done is not also reported entry by entry, with another fix
    busy = (intent.scope, intent.root) if intent is not None and intent.client == client else None
    installations = [
        i
        for i in manifest.installations
        if i.client == client
        and (i.scope == "user" or (root and i.root == str(root)))
        and not (busy and i.matches(client, *busy))
    ]
    if not installations and busy is None:
        # a client file install would refuse (it does not parse) is named, not "run install"
        broken = doctor_checks.unreadable_config_check(client, _user_plan(client))
        left = None if broken else _left_behind(home, client, "user", None)
        message, fix = left if left else ("", f"teamlore install --client {client}")
        not_installed = f"teamlore is not installed for {client}" + (f": {message}" if left else "")
        checks.append(broken or doctor_checks.Check(f"{client}.config", "warn", not_installed, fix))
    cwd = root or ctx.cwd
    for installation in installations:
        entries, servers = doctor_checks.entry_checks(installation)
        checks += entries
        hooks = [e for f in installation.files for e in f.entries if isinstance(e, HookRecord)]
        with ThreadPoolExecutor(max_workers=4) as pool:  # servers start in parallel, as in a client
            # a user-scope entry names its state dir: one the client would not reach is wrong
            # (a project's portable entry names none, on purpose)
            pinned = home if installation.scope == "user" else None
            again = doctor_checks.install_command(installation)
            started = [
                pool.submit(doctor_checks.server_check, client, s, cwd, pinned, again=again)
                for s in servers
            ]
            ran = [
                pool.submit(
                    doctor_checks.hook_check,
                    client,
                    h.command,
                    cwd,
                    h.event,
                    portable=installation.scope == "project",
                    again=again,
                )
                for h in hooks
            ]
            checks += [future.result() for future in [*started, *ran]]
        hooks_check = doctor_checks.codex_hooks_check(installation) if client == "codex" else None
        if hooks_check is not None:
            checks.append(hooks_check)
    return checks


def _doctor_clients(manifest: Manifest) -> list[str]:
    """`doctor --client all`: Claude Code and Codex, and Pi when teamlore is installed in it."""
    has_pi = any(i.client == "pi" for i in manifest.installations)
    return [*ALL_CLIENTS, *(["pi"] if has_pi else [])]


def _unused_clients(manifest: Manifest, names: Sequence[str]) -> list[str]:
    """The clients of `doctor --client all` a person does not use: no CLI on PATH and no
    teamlore installation. When another client is used, these are not failures (as `install
    --client all` skips them); when none is, every one fails as before."""
    installed = {i.client for i in manifest.installations}
    unused = [c for c in names if c not in installed and client_binary(c) is None]
    return unused if len(unused) < len(names) else []


def _unused_client_check(client: str) -> doctor_checks.Check:
    cli_name = CLIENTS[client].CLI_NAME
    return doctor_checks.Check(
        f"{client}.cli",
        "ok",
        f"`{cli_name}` is not on PATH and teamlore is not installed for {client}: not checked",
    )


@operation(
    "doctor",
    input_model=DoctorRequest,
    side_effect="read",
    description="Check the agent integrations and the local state, each with its fix.",
)
def doctor(ctx: OpContext, request: DoctorRequest) -> dict[str, Any]:
    """Check CLIs, installed entries, servers, hooks, index freshness and the state dir"""
    # no `load_operations`: `REGISTRY.get` imports the one module an operation needs, and the
    # expected MCP entries list their launch's tools only (`load_capabilities`)
    home = ctx.home if ctx.home is not None else state_dir_path()
    manifest, intent, damaged = doctor_checks.integrations_state(home)
    names = [request.client] if request.client != "all" else _doctor_clients(manifest)
    checks = list(damaged)
    if intent is not None:
        checks.append(
            doctor_checks.interrupted_check(
                intent.operation, intent.client, intent.scope, intent.root, intent.startedAt
            )
        )
    unused = _unused_clients(manifest, names) if request.client == "all" else []
    for client in names:
        if client in unused:
            checks.append(_unused_client_check(client))
        else:
            checks += _client_checks(ctx, client, home, manifest, intent)
    state_checks: dict[str, Callable[[], doctor_checks.Check]] = {
        "config": lambda: state.config_check(home),
        "index": lambda: state.index_check(ctx, home),
        "repositories": lambda: state.repositories_check(home),
        "personal": lambda: state.personal_check(home),
        "state.permissions": lambda: state.state_dir_check(home),
        "watch": lambda: doctor_checks.watch_check(home / WATCH_SOCKET_NAME),
    }
    broken_config = None  # the config check's failure, not repeated by every check after it
    for name, check in state_checks.items():
        try:
            result = check()
        except errors.TeamloreError as err:
            result = doctor_checks.Check(name, "fail", err.message)
        except Exception as exc:
            result = doctor_checks.Check(name, "fail", f"{type(exc).__name__}: {exc}")
        if result.status == "fail" and result.message == broken_config:
            result = doctor_checks.Check(name, "warn", "not checked while config.toml is invalid")
        elif name == "config" and result.status == "fail":
            broken_config = result.message
        checks.append(result)
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("ok", "warn", "fail")}
    return {"checks": [c.to_json() for c in checks], "counts": counts}
