"""Client-side doctor checks: the CLI, the entries install wrote, each server, each hook.

Every check is one line a person reads (`ok` / `warn` / `fail`) with the fix when it is not ok.
Servers are started for real (the official MCP client over stdio) and must list their tools
within the client's startup timeout; hooks are run for real with a sample payload.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from teamlore import __version__
from teamlore.core import errors
from teamlore.core.locations import state_dir_location
from teamlore.core.paths import display_path
from teamlore.core.timeutil import format_instant
from teamlore.integrations import config_files as cf
from teamlore.integrations.console_script import gone_interpreter
from teamlore.integrations.entries import FileEdits
from teamlore.integrations.manifest import (
    FileRecord,
    HookRecord,
    Installation,
    KeyRecord,
    Manifest,
    load_manifest,
    sha256,
    stray_backups,
)
from teamlore.integrations.transaction import Intent, pending

Status = Literal["ok", "warn", "fail"]
SERVER_KEYS = ("mcpServers", "mcp_servers")
CLAUDE_STARTUP_TIMEOUT = 30.0
# what Codex passes an MCP server of its own environment (an allow-list: its rmcp client's
# default variables), beside the entry's `env` and the variables its `env_vars` names; Claude
# Code passes its whole environment
CODEX_SERVER_ENV = (
    *("HOME", "LOGNAME", "PATH", "PWD", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR"),
    *("TZ", "__CF_USER_TEXT_ENCODING"),
)
# the hook's time budget (cli/hook_runner.py, which doctor does not import: the hook's own module)
HOOK_BUDGET_ENV = "TEAMLORE_HOOK_BUDGET"
DEFAULT_HOOK_BUDGET = "0.9"
GENEROUS_HOOK_BUDGET = 10.0  # doctor's second run of a hook that printed nothing
WATCH_CONNECT_SECONDS = 0.5  # the watch client's own connect timeout (cli/warm.py)
# the install flags an installation's options record (`Installation.options`)
TIER_FLAGS = (("team", "--team"), ("personal", "--personal"), ("syncOnStop", "--sync-on-stop"))


@dataclass
class Check:
    name: str
    status: Status
    message: str
    fix: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.name, "status": self.status, "message": self.message}
        if self.fix:
            out["fix"] = self.fix
        return out


def cli_check(client: str, cli_name: str, install_hint: str) -> Check:
    found = shutil.which(cli_name)
    if found is None:
        return Check(f"{client}.cli", "fail", f"`{cli_name}` is not on PATH", install_hint)
    try:
        done = subprocess.run(
            [found, "--version"],
            capture_output=True,
            text=True,
            timeout=20,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check(f"{client}.cli", "fail", f"`{cli_name} --version` failed: {exc}", install_hint)
    version = (done.stdout.strip().splitlines() or ["?"])[-1]
    return Check(f"{client}.cli", "ok", f"{display_path(found)} ({version})")


def _resolves(command: str) -> bool:
    if os.sep in command:
        return os.path.isfile(command) and os.access(command, os.X_OK)
    return shutil.which(command) is not None


def _whole_file_check(record: FileRecord, label: str, where: str, again: str) -> Check:
    """A whole file install owns (the Pi extension): present and as teamlore wrote it."""
    shown = display_path(record.path)
    try:
        data = cf.read_bytes(Path(record.path))
    except Exception as exc:
        return Check(label, "fail", f"{shown}: {exc}", again)
    if data is None:
        return Check(label, "fail", f"{shown} is missing", again)
    if sha256(data) != record.installedSha256:
        return Check(
            label,
            "warn",
            f"{shown} was edited since install (teamlore leaves it alone)",
            f"{again} --force (replaces it with teamlore's version)",
        )
    return Check(label, "ok", f"{shown}{where}")


def _as_found(message: str) -> str:
    """A refusal to read a client file as doctor, which changes nothing anyway, reports it:
    without install's `; nothing was changed`."""
    return message.removesuffix("; nothing was changed")


def unreadable_config_check(client: str, files: list[FileEdits]) -> Check | None:
    """With teamlore not installed for `client`: the first of the files install would edit
    (`files`, its plan) that cannot be read or does not parse, as a failing check. Install
    refuses such a file, so "not installed, run install" would send a person into that
    refusal; the client itself cannot read it either."""
    for edits in files:
        if edits.kind == "file":  # a file install writes whole (Pi's extension)
            continue
        fix = f"fix the file, then teamlore install --client {client}"
        try:
            cf.load(edits.path, edits.kind)
        except errors.TeamloreError as err:
            return Check(f"{client}.config", "fail", _as_found(err.message), fix)
        except OSError as err:  # a folder on its path the user may not enter (`sudo codex`)
            why = err.strerror or type(err).__name__
            said = f"{display_path(edits.path)} cannot be read ({why})"
            return Check(f"{client}.config", "fail", said, fix)
    return None


def install_command(installation: Installation) -> str:
    """The `teamlore install` that makes `installation` again: its scope and the tier flags it
    was installed with, so a fix that follows it keeps them (a `--team` install stays one)."""
    options = installation.options
    words = ["teamlore install", f"--client {installation.client}", f"--scope {installation.scope}"]
    words += [flag for key, flag in TIER_FLAGS if options.get(key)]
    if options.get("orgUrl"):
        words.append(f"--org-url {shlex.quote(str(options['orgUrl']))}")
    return " ".join(words)


def entry_checks(installation: Installation) -> tuple[list[Check], list[dict[str, Any]]]:
    """Each recorded entry still present; returns the checks and the servers found."""
    label = f"{installation.client}.config"
    where = f" ({installation.scope} scope)"
    checks: list[Check] = []
    servers: list[dict[str, Any]] = []
    again = install_command(installation)
    for record in installation.files:
        path = Path(record.path)
        shown = display_path(path)
        if record.kind == "text":
            continue  # a file `memory assemble` wrote: no entries of ours to check
        if record.kind == "file":
            checks.append(_whole_file_check(record, label, where, again))
            continue
        try:  # the client reads a symlinked config (a dotfiles repository): so does doctor
            document = cf.load(path, record.kind)
        except Exception as exc:  # a refusal's message names the file
            why = f"{shown}: {exc}"
            if isinstance(exc, errors.TeamloreError):
                why = _as_found(exc.message)
            checks.append(Check(label, "fail", why, "fix the file, then " + again))
            continue
        for entry in record.entries:
            if isinstance(entry, KeyRecord):
                present, value = cf.get_key(document.doc, tuple(entry.key))
                name = ".".join(entry.key)
                if not present:
                    checks.append(Check(label, "fail", f"{shown}: {name} is missing", again))
                    continue
                if entry.key[0] in SERVER_KEYS and isinstance(value, dict):
                    command = str(value.get("command", ""))
                    if not _resolves(command):  # nothing to start
                        missing = _missing_command(installation, label, name, value, again)
                        checks.append(missing)
                        continue
                    servers.append({"name": entry.key[1], "file": str(path), **value})
                checks.append(Check(label, "ok", f"{name} in {shown}{where}"))
            elif isinstance(entry, HookRecord):
                groups = cf.hook_groups(document.doc, entry.event)
                if any(cf.group_has_command(g, entry.command) for g in groups):
                    checks.append(Check(label, "ok", f"{entry.event} hook in {shown}{where}"))
                else:
                    checks.append(
                        Check(label, "fail", f"{shown}: the {entry.event} hook is missing", again)
                    )
    return checks, servers


def _hooks_setting(document: Any) -> tuple[str, bool | None]:
    """The `[features]` key that decides whether Codex runs hooks, and its value (None: no key
    says). Codex 0.171 reads `hooks`, `codex_hooks` being its older alias, which `hooks`
    overrides when both are set; with neither, hooks are on (a stable feature since)."""
    for key in ("hooks", "codex_hooks"):
        value = cf.get_key(document.doc, ("features", key))[1] if document else None
        if isinstance(value, bool):
            return key, value
    return "codex_hooks", None


def codex_hooks_check(installation: Installation) -> Check | None:
    """Whether Codex runs the hook install recorded: `[features] hooks` or `codex_hooks` in the
    installation's config.toml (a user may have turned hooks off since, or before: then install
    added none)."""
    hooked = any(isinstance(e, HookRecord) for f in installation.files for e in f.entries)
    config = next((f for f in installation.files if f.kind == "toml"), None)
    try:
        document = cf.load(Path(config.path), "toml") if config is not None else None
    except errors.TeamloreError:
        return None  # the entry checks name what is wrong with the file: nothing to read here
    key, value = _hooks_setting(document)
    where = display_path(config.path) if config is not None else "config.toml"
    again = install_command(installation)
    if value is False and hooked:
        return Check(
            "codex.hook",
            "warn",
            f"hooks are off in {where} ({key} = false): Codex does not run the hook",
            f"`{again} --force` turns them on; `{again}` takes the hook out",
        )
    if value is False:
        return Check(
            "codex.hook",
            "ok",
            f"hooks off in {where} as you set them: sessions start without the memory brief",
        )
    if hooked and value is None:
        return Check(
            "codex.hook",
            "ok",
            f"hooks on: {where} sets neither hooks nor codex_hooks, and Codex 0.171 runs hooks"
            " then; it runs the hook once you trusted it (/hooks in codex)",
        )
    if hooked:
        return Check(
            "codex.hook",
            "ok",
            "hooks feature on; Codex runs the hook once you trusted it (/hooks in codex)",
        )
    return None


def _missing_command(
    installation: Installation, label: str, name: str, server: dict[str, Any], again: str
) -> Check:
    """A user-scope command that is gone is broken (a Codex entry is `required = true` there:
    Codex then starts no session at all); a project-scope entry names `teamlore` on PATH, which
    this person may simply not have yet (the entry is `required = false` for Codex, so the
    client starts without it: docs/agents.md)."""
    command = str(server.get("command", ""))
    if installation.scope != "project":
        said = f"{name}: `{command}` does not exist"
        if installation.client == "codex" and server.get("required") is True:
            said += ", and Codex refuses to start any session until it is fixed (required = true)"
        return Check(label, "fail", said, again)
    return Check(
        label,
        "warn",
        f"{name}: `{command}` is not on PATH, so {installation.client} starts this repository's "
        "sessions without teamlore's tools",
        "install teamlore (e.g. `pipx install teamlore`) or put its bin folder on PATH",
    )


def integrations_state(home: Path) -> tuple[Manifest, Intent | None, list[Check]]:
    """The install manifest and an interrupted transaction, as doctor reads them, each on its
    own: a damaged one is a failing check and reads as absent (a damaged manifest: nothing
    installed), while the other is still read (a damaged intent record does not hide what the
    manifest says is installed)."""
    if not home.is_dir():
        return Manifest(), None, []
    damaged: list[Check] = []
    manifest, intent = Manifest(), None
    try:
        manifest = load_manifest(home)
    except errors.TeamloreError as err:
        damaged.append(Check("integrations", "fail", err.message))
    try:
        intent = pending(home)
    except errors.TeamloreError as err:
        damaged.append(Check("integrations", "fail", err.message))
    strays = stray_backups(home, manifest) if intent is None and not damaged else []
    older = [path for path in strays if manifest.older_copy_of(path.name)]
    strays = [path for path in strays if path not in older]
    if older:  # kept by an older teamlore for a second installation in one config (manifest.py)
        it = "them" if len(older) > 1 else "it"
        config = display_path(manifest.older_copy_of(older[0].name) or "")
        copies = f"{len(older)} copies of client configs" if it == "them" else f"a copy of {config}"
        damaged.append(
            Check(
                "integrations.backups",
                "warn",
                f"{copies} an older teamlore kept in {display_path(older[0].parent)} (with"
                f" another installation's entries in {it}, so this teamlore never puts {it}"
                " back)",
                f"the next `teamlore install` or `uninstall` removes {it}",
            )
        )
    if strays:  # left by a kill before the intent record: no client file was changed
        many = len(strays) > 1
        copies = f"{len(strays)} copies of client files" if many else "a copy of a client file"
        where = display_path(strays[0].parent)
        damaged.append(
            Check(
                "integrations.backups",
                "warn",
                f"{copies} an interrupted install left in {where} (it changed no client file)",
                f"the next install or uninstall removes {'them' if many else 'it'}",
            )
        )
    return manifest, intent, damaged


def interrupted_check(
    operation: str, client: str, scope: str, root: str | None, when: str
) -> Check:
    """An install or uninstall that was killed part-way; doctor only reports it (it is a
    read-only command): the next install or uninstall finishes it from its intent record."""
    flags = f"--client {client}" + (" --scope project" if scope == "project" else "")
    where = f"in {display_path(root)}: " if root else ""
    finish = f"teamlore {'uninstall' if operation == 'uninstall' else 'install'} {flags}"
    fix = f"{where}{finish} (finishes it)"
    if operation != "uninstall":  # an install, or the assemble step of one
        fix = f"{where}teamlore uninstall {flags} (takes it back out) or {finish} (finishes it)"
    return Check(
        "integrations.interrupted",
        "fail",
        f"{operation} of {client} ({scope} scope) interrupted at {when}: each file is as "
        "before or as intended",
        fix,
    )


# a server's tool names, the refusal its status tool answers, the version it names
Listed = tuple[list[str], dict[str, Any], str]
# read-only tools that open the state a server serves: an older teamlore's refusal shows there
STATUS_TOOLS = ("threadshare_memory_status", "memory_status")


def _may_write(server: dict[str, Any]) -> bool:
    """Whether the server serves the `team` tier, whose status tool finishes a promotion a crash
    interrupted (docs/memory.md): doctor, which changes nothing, does not call it there."""
    from itertools import pairwise

    args = [str(a) for a in server.get("args") or []]
    return "team" in {value for flag, value in pairwise(args) if flag in ("--capability", "-c")}


def server_environment(client: str, server: dict[str, Any]) -> dict[str, str]:
    """The environment `client` starts the server entry `server` with (`CODEX_SERVER_ENV`)."""
    base: dict[str, str] = dict(os.environ)
    if client == "codex":
        names = [*CODEX_SERVER_ENV, *(str(n) for n in server.get("env_vars") or [])]
        base = {name: os.environ[name] for name in names if name in os.environ}
    return {**base, **{str(k): str(v) for k, v in (server.get("env") or {}).items()}}


def _other_state_dir(client: str, server: dict[str, Any], home: Path, again: str) -> Check | None:
    """A failing check when the server, started as `client` starts it, would serve another
    state dir than `home` (one from `$XDG_STATE_HOME`, which Codex does not pass on)."""
    serves = state_dir_location(server_environment(client, server))
    if os.path.realpath(serves) == os.path.realpath(home):
        return None
    return Check(
        f"{client}.server",
        "fail",
        f"{server['name']} would serve the state dir {display_path(serves)}, not this one"
        f" ({display_path(home)}): {client} does not pass it the environment that names it",
        f"{again} (names the state dir in the entry)",
    )


async def _list_tools(client: str, server: dict[str, Any], cwd: Path) -> Listed:
    """The server's tool names, the error its status tool answers (empty: none), and the
    version its initialize result names."""
    from mcp.client.stdio import stdio_client

    from mcp import ClientSession, StdioServerParameters

    params = StdioServerParameters(
        command=str(server["command"]),
        args=[str(a) for a in server.get("args") or []],
        env=server_environment(client, server),  # as the client starts it
        cwd=str(cwd),
    )
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            version = (await session.initialize()).server_info.version
            tools = [tool.name for tool in (await session.list_tools()).tools]
            status = next((name for name in STATUS_TOOLS if name in tools), None)
            if status is None or _may_write(server):
                return tools, {}, version
            called = await session.call_tool(status, {})
            return tools, _refusal(called.content) if called.is_error else {}, version


def _refusal(content: list[Any]) -> dict[str, Any]:
    """The `error` object a tool's answer holds as JSON text (a teamlore refusal)."""
    for item in content:
        try:
            error = json.loads(getattr(item, "text", "") or "{}").get("error")
        except (ValueError, AttributeError):
            continue
        if isinstance(error, dict):
            return error
    return {}


def server_check(
    client: str,
    server: dict[str, Any],
    cwd: Path,
    home: Path | None = None,
    *,
    again: str | None = None,
) -> Check:
    """The server started as `client` starts it; `again`: the install that mends its entry."""
    import anyio

    again = again or f"teamlore install --client {client}"
    elsewhere = _other_state_dir(client, server, home, again) if home is not None else None
    if elsewhere is not None:
        return elsewhere
    timeout = float(server.get("startup_timeout_sec") or CLAUDE_STARTUP_TIMEOUT)
    name = f"{client}.server"
    started = time.monotonic()
    try:
        tools, refusal, version = anyio.run(_with_timeout, client, server, cwd, timeout)
    except TimeoutError:
        return Check(
            name,
            "fail",
            f"{server['name']} did not list its tools within {timeout:.0f} s",
            f"run `{server['command']} {' '.join(map(str, server.get('args') or []))}` by hand",
        )
    except Exception as exc:
        return Check(
            name,
            "fail",
            f"{server['name']} did not start: {type(exc).__name__}: {exc}",
            "run `teamlore doctor` again after fixing the server command",
        )
    seconds = time.monotonic() - started
    if refusal.get("code") == errors.DB_SCHEMA_TOO_NEW.code:
        # an older teamlore than the one that migrated the state dir: it starts, lists its
        # tools and refuses every call, so the agent works without team memory
        command = " ".join(map(str, [server["command"], *(server.get("args") or [])]))
        return Check(
            name,
            "fail",
            f"{server['name']} starts but refuses every call (DB_SCHEMA_TOO_NEW): `{command}` is"
            " an older teamlore than the one that upgraded the state dir",
            f"{again} (points it at this teamlore)",
        )
    if version != __version__:  # another install, as a client starts it (an older venv's)
        return _another_installation(name, server, str(version), again)
    return Check(
        name,
        "ok",
        f"{server['name']} starts and lists {len(tools)} tools in {seconds:.1f} s "
        f"(limit {timeout:.0f} s)",
    )


async def _with_timeout(client: str, server: dict[str, Any], cwd: Path, timeout: float) -> Listed:
    import anyio

    with anyio.fail_after(timeout):
        return await _list_tools(client, server, cwd)


def hook_check(
    client: str,
    command: str,
    cwd: Path,
    event: str = "SessionStart",
    timeout: float = 10.0,
    *,
    portable: bool = False,
    again: str | None = None,
) -> Check:
    """The hook run for real with a sample payload; `again`: the install that mends it."""
    name = f"{client}.hook"
    again = again or f"teamlore install --client {client}"
    program = _hook_program(command)
    if portable and not _resolves(program):  # a project hook needs teamlore on this PATH
        return Check(
            name,
            "warn",
            f"the {event} hook runs `{program}`, which is not on PATH here",
            "install teamlore (e.g. `pipx install teamlore`) or put its bin folder on PATH",
        )
    gone = gone_interpreter(Path(program)) if os.sep in program else None
    if gone is not None:  # the shell would say the script is "not found": it is there
        return Check(
            name,
            "fail",
            f"the {event} hook runs {display_path(program)}, whose interpreter"
            f" {display_path(gone)} is gone: the virtualenv moved?",
            f"{again} (run by the teamlore you use now: it starts its own Python)",
        )
    payload = json.dumps({"hook_event_name": event, "source": "startup", "cwd": str(cwd)})
    try:
        done = _run_hook(command, payload, cwd, timeout)
    except subprocess.TimeoutExpired:
        return Check(name, "fail", f"the {event} hook ran past {timeout:.0f} s", None)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [""])[-1][:200]
        return Check(
            name,
            "fail",
            f"the {event} hook exited {done.returncode}: {tail}",
            f"{again} (the command may point at a removed install)",
        )
    if event != "SessionStart":
        return Check(name, "ok", f"{event} hook runs")
    if done.stdout.strip():
        return Check(name, "ok", "SessionStart hook prints a brief")
    return _quiet_hook_check(name, command, payload, cwd, timeout)


def _hook_program(command: str) -> str:
    """The program a hook command runs: its first word after `NAME=value` assignments."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return next((w for w in words if "=" not in w.split("/", 1)[0]), "")


def _run_hook(
    command: str, payload: str, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=payload,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
    )


def _another_installation(name: str, server: dict[str, Any], version: str, again: str) -> Check:
    """A server that starts another teamlore than this one: point the client at this one when
    that one is older; when it is newer, this teamlore (the one doctor runs) is the one to
    upgrade."""
    theirs, ours = _release_order(version), _release_order(__version__)
    if theirs is not None and ours is not None and theirs > ours:
        return Check(
            name,
            "warn",
            f"{server['name']} starts teamlore {version}, newer than this teamlore"
            f" ({__version__}): `{server['command']}` is another installation",
            "upgrade this teamlore, or run the newer one's own `teamlore doctor`",
        )
    on_path = os.sep not in str(server["command"])  # a project's entry: `teamlore` on PATH
    return Check(
        name,
        "warn",
        f"{server['name']} starts teamlore {version}, not this teamlore ({__version__}):"
        f" `{server['command']}` is another installation",
        "upgrade the teamlore on PATH, or put this one's bin folder ahead of it"
        if on_path
        else f"{again} (points it at this teamlore)",
    )


# a version as teamlore's releases spell them (PEP 440's public forms: `1.2`, `0.2.0rc1`,
# `0.2.0.dev3`, `0.2.0.post1`, a `+local` part)
_VERSION = re.compile(
    r"v?([0-9]+(?:\.[0-9]+)*)(?:(a|b|rc)([0-9]+))?(?:\.post([0-9]+))?(?:\.dev([0-9]+))?(?:\+[\w.]+)?"
)


def _release_order(version: str) -> tuple[tuple[int, ...], int, int, int, int] | None:
    """`version` as a key in release order (`1.0.dev1` < `1.0a1` < `1.0rc1` < `1.0` =
    `1.0.0` < `1.0.post1`), or None for a version it cannot read."""
    parts = _VERSION.fullmatch(version.strip().lower())
    if parts is None:
        return None
    release = tuple(int(n) for n in parts[1].split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    if parts[2]:
        phase = ("a", "b", "rc").index(parts[2])
    else:
        phase = -1 if parts[5] is not None and parts[4] is None else 3  # a dev release first
    post = int(parts[4]) if parts[4] is not None else -1
    dev = int(parts[5]) if parts[5] is not None else 1 << 62  # `.devN` before the same without
    return release, phase, int(parts[3] or 0), post, dev


# the budget written in a hook's command: quoted (`…="0.5" teamlore hook …`), or up to a space,
# a quote or a `;` (`sh -c "…=0.5 …"`, `export …=0.5; teamlore hook …`)
_BUDGET_IN_COMMAND = re.compile(rf"(?<![\w-]){HOOK_BUDGET_ENV}=(\"[^\"]*\"|'[^']*'|[^\s\"';]*)")


def _hook_budget(command: str) -> str:
    """The `TEAMLORE_HOOK_BUDGET` the hook runs with: set in its command, or inherited (s)."""
    written = _BUDGET_IN_COMMAND.search(command)
    if written:
        return written[1].strip("\"'")
    return os.environ.get(HOOK_BUDGET_ENV, DEFAULT_HOOK_BUDGET)


def _quiet_hook_check(name: str, command: str, payload: str, cwd: Path, timeout: float) -> Check:
    """A SessionStart hook that printed nothing: nothing to brief, or a brief not ready within
    the hook's budget (it then prints nothing too). Run once more with a generous budget."""
    budget = _hook_budget(command)
    generous = {**os.environ, HOOK_BUDGET_ENV: str(GENEROUS_HOOK_BUDGET)}
    # a budget written in the command (`TEAMLORE_HOOK_BUDGET=0.5 teamlore hook …`) beats the
    # environment's: the second run gets the generous one there too
    given = _BUDGET_IN_COMMAND.sub(f"{HOOK_BUDGET_ENV}={GENEROUS_HOOK_BUDGET}", command)
    started = time.monotonic()
    try:
        again = _run_hook(given, payload, cwd, timeout + GENEROUS_HOOK_BUDGET, generous)
    except subprocess.TimeoutExpired:
        return Check(
            name,
            "warn",
            f"the SessionStart hook printed nothing within its budget ({budget} s), and given"
            f" {GENEROUS_HOOK_BUDGET:.0f} s it did not end within"
            f" {timeout + GENEROUS_HOOK_BUDGET:.0f} s",
            "run `teamlore hook session-start` by hand in the project to see where it waits",
        )
    took = time.monotonic() - started
    if not again.stdout.strip():
        return Check(name, "ok", "SessionStart hook runs (nothing to brief here)")
    return Check(
        name,
        "warn",
        f"the SessionStart brief was not ready within the hook's budget ({budget} s), so sessions"
        f" start without it; given {GENEROUS_HOOK_BUDGET:.0f} s it took {took:.1f} s",
        f"a busy machine may be why; or set {HOOK_BUDGET_ENV}=<seconds> in the hook command's"
        " environment (docs/agents.md)",
    )


def watch_check(socket_path: Path) -> Check:
    """Whether a `teamlore watch` listens on `socket_path`, and since when (the socket is made
    when it starts). Only a connect, never a request: a busy server is not waited on."""
    try:
        started = socket_path.stat().st_mtime
    except FileNotFoundError:
        return Check("watch", "ok", "not running (commands run in their own process)")
    since = format_instant(datetime.fromtimestamp(started, UTC))
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(WATCH_CONNECT_SECONDS)
    try:
        probe.connect(str(socket_path))
    except TimeoutError:
        return Check("watch", "ok", f"running since {since} (busy: its backlog is full)")
    except OSError:
        return Check(
            "watch",
            "warn",
            "not running: a stale socket is left (a watch that was killed)",
            "teamlore watch (replaces it), or ignore: commands run in their own process",
        )
    finally:
        probe.close()
    return Check("watch", "ok", f"running since {since}")
