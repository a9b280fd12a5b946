"""`doctor`'s checks of the local state: config.toml, the session index, the registered
repositories, personal memory and the state dir's permissions (the client checks are in
`install`, beside the operations whose work they check)."""

from __future__ import annotations

import os
import shlex
import stat
from datetime import datetime
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.paths import display_path
from teamlore.integrations import doctor as doctor_checks
from teamlore.ops.registry import REGISTRY, OpContext

MAX_FILES_SCANNED = 20_000


def state_dir_check(home: Path) -> doctor_checks.Check:
    if not home.exists():
        return doctor_checks.Check(
            "state.permissions",
            "warn",
            f"no state dir yet at {display_path(home)}",
            "teamlore sync",
        )
    loose = _readable_by_others(home)
    if loose:
        return doctor_checks.Check(
            "state.permissions",
            "fail",
            f"{display_path(home)}: readable by others: {', '.join(sorted(loose)[:5])}"
            + (f" and {len(loose) - 5} more" if len(loose) > 5 else ""),
            f"chmod -R go-rwx {shlex.quote(str(home))}",
        )
    private = f"{display_path(home)} is private (0700/0600)"
    return doctor_checks.Check("state.permissions", "ok", private)


def _readable_by_others(home: Path) -> list[str]:
    """What in the state dir others may read, the dir itself and everything under it (a
    `personal/profile.md` made 0644 by hand; symlinks not followed), as paths from it."""
    loose = [home.name] if home.stat().st_mode & 0o077 else []
    scanned = 0
    for folder, names, files in os.walk(home):
        for name in [*names, *files]:
            scanned += 1
            if scanned > MAX_FILES_SCANNED:
                return loose
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode  # one stat: what it is and who may read it
            except OSError:
                continue  # gone since the folder was listed
            if not stat.S_ISLNK(mode) and mode & 0o077:
                loose.append(os.path.relpath(path, home))
    return loose


def _unreadable_sessions(status: dict[str, Any]) -> str | None:
    """What `status` says cannot be read: a session folder now, or files at the last sync."""
    folders = [s for s in status["sources"] if s["unreadable"]]
    if folders:
        return f"{folders[0]['path']} cannot be read ({folders[0]['unreadable']})"
    unreadable = status["lastSyncUnreadable"]
    if not unreadable["count"]:
        return None
    first = unreadable["recent"][0]
    return (
        f"the last sync could not read {unreadable['count']} files or folders"
        f" (first: {first['file']}: {first['message']})"
    )


def index_check(ctx: OpContext, home: Path) -> doctor_checks.Check:
    from teamlore.ops.sessions.index import SyncRequest, resolve_sources
    from teamlore.sessions.index_db import INDEX_DB_NAME

    if not (home / INDEX_DB_NAME).exists():
        return doctor_checks.Check("index", "warn", "sessions were never indexed", "teamlore sync")
    status = REGISTRY.get("status").run(OpContext(cwd=ctx.cwd, home=home), {})
    last = status.get("lastSyncAt")
    if not last:
        return doctor_checks.Check("index", "warn", "sessions were never indexed", "teamlore sync")
    if problem := _unreadable_sessions(status):
        fix = "fix the owner or mode of what `teamlore status` names, then `teamlore sync`"
        return doctor_checks.Check("index", "warn", problem, fix)
    since = datetime.fromisoformat(str(last).replace("Z", "+00:00")).timestamp()
    behind = scanned = 0
    for source in resolve_sources(SyncRequest(), home):
        if not isinstance(source.looked_at(), os.stat_result):
            continue  # not there, or the sync could not read it (above)
        files = [source.root] if source.root.is_file() else source.root.rglob("*.jsonl")
        for path in files:
            scanned += 1
            if scanned > MAX_FILES_SCANNED:
                break
            if path.is_file() and path.stat().st_mtime > since:
                behind += 1
    if behind:
        return doctor_checks.Check(
            "index",
            "warn",
            f"last sync {last}; {behind} session files changed since",
            "teamlore sync",
        )
    return doctor_checks.Check("index", "ok", f"last sync {last}; no session file behind")


def config_check(home: Path) -> doctor_checks.Check:
    """config.toml as every command reads it: each table by its owner's schema ([personal] has
    its own check), and the tables no command reads (a typo leaves a setting unused)."""
    from teamlore.core.config import config_path, load_config, load_table, unknown_tables
    from teamlore.models.profiles import ModelProfileConfig
    from teamlore.repo.path_settings import PathSettings

    path = config_path(home, readonly=True)
    if not path.is_file() and not path.is_symlink():
        return doctor_checks.Check("config", "ok", "no config.toml: every setting is the default")
    try:
        config = load_config(home, readonly=True)
        load_table("paths", PathSettings, home, readonly=True)
        for name in config.models:
            load_table(f"models.{name}", ModelProfileConfig, home, readonly=True)
    except errors.TeamloreError as err:
        return doctor_checks.Check("config", "fail", err.message, "fix config.toml at that line")
    strays = unknown_tables(config)
    if strays:
        return doctor_checks.Check(
            "config",
            "warn",
            f"{display_path(path)}: no command reads {', '.join(strays)}",
            "rename the table to the one meant, or remove it",
        )
    return doctor_checks.Check("config", "ok", f"{display_path(path)}: every table is valid")


def repositories_check(home: Path) -> doctor_checks.Check:
    from teamlore.personal.reader import registered_projects

    try:
        projects = registered_projects(home)
    except errors.TeamloreError as err:
        return doctor_checks.Check("repositories", "fail", err.message, "fix config.toml")
    gone = [path for path in projects if not Path(path).is_dir()]
    if gone:
        return doctor_checks.Check(
            "repositories",
            "warn",
            f"{len(gone)} registered repositories no longer exist: {', '.join(gone[:3])}",
            "teamlore repo forget PATH, or restore the folders",
        )
    return doctor_checks.Check("repositories", "ok", f"{len(projects)} registered, all present")


def personal_check(home: Path) -> doctor_checks.Check:
    from teamlore.models.profiles import profile_problem
    from teamlore.personal.config import load_personal_settings_readonly

    try:
        settings = load_personal_settings_readonly(home)
        profile = settings.model_profile
        problem = profile_problem(profile, home) if profile else None
    except errors.TeamloreError as err:
        return doctor_checks.Check("personal", "fail", err.message, "fix [personal] in config.toml")
    if problem is not None:
        return doctor_checks.Check(  # queued input waits safely: a warning, not a failure
            "personal",
            "warn",
            f"{problem} (the Writer does not run until then)",
            f"complete [models.{profile}] in config.toml (docs/agents.md), or remove model_profile",
        )
    broken = _broken_personal_documents(home)
    if broken:
        return doctor_checks.Check(
            "personal",
            "fail",
            _broken_files_message(broken),
            f"edit {'each file as its' if len(broken) > 1 else 'the file as the'} message says;"
            " the Writer retries the job after its backoff (or `teamlore personal retry JOB`)",
        )
    return doctor_checks.Check(
        "personal",
        "ok",
        f"allowed provenance {', '.join(settings.allowed_provenance)}; "
        f"scopes {', '.join(settings.allowed_scopes)}",
    )


def _broken_files_message(broken: list[tuple[str, str]]) -> str:
    """One broken file as `CODE: message`; several as one sentence each, their codes said once
    (the text view wraps a check's message into one paragraph)."""
    if len(broken) == 1:
        code, message = broken[0]
        return f"{code}: {message}"
    codes = ", ".join(dict.fromkeys(code for code, _ in broken))
    sentences = " ".join(_sentence(message) for _, message in broken)
    return f"{len(broken)} personal files need fixing ({codes}): {sentences}"


def _sentence(message: str) -> str:
    return message if message.endswith((".", "!", "?")) else f"{message}."


def _broken_personal_documents(home: Path) -> list[tuple[str, str]]:
    """Why each personal document that breaks the section format (file:line), holds a secret or
    more than a document may, does (its first problem): the Writer refuses to edit such a file
    until it is fixed."""
    from teamlore.personal import documents

    root = documents.personal_root(home)
    projects = root / "projects"
    names = sorted(p.stem for p in projects.glob("*.md")) if projects.is_dir() else []
    targets = [*documents.GLOBAL_TARGETS, *(f"project:{n}" for n in names)]
    found = (_personal_document_problem(root, target) for target in targets)
    return [problem for problem in found if problem is not None]


def _personal_document_problem(root: Path, target: str) -> tuple[str, str] | None:
    """The code and message of the first problem of one personal file, None when it has none."""
    from teamlore.personal import documents

    try:
        data = documents.read_document_bytes(root, target)
        documents.parse_document(target, data)
    except errors.TeamloreError as err:
        return err.code, err.message
    secret = _secret_sentence(target, data) if data is not None else None
    if secret is not None:
        return errors.SENSITIVE_CONTENT_REJECTED.code, secret
    if data is not None and len(data) > documents.DOCUMENT_HARD_LIMIT:
        return errors.PERSONAL_DOCUMENT_TOO_LARGE.code, (
            f"{documents.relative_path(target)} holds {len(data):,} bytes, over the"
            f" {documents.DOCUMENT_HARD_LIMIT:,} a document may hold; the Writer does not edit"
            " it, and every agent reads it all"
        )
    return None


def _secret_sentence(target: str, data: bytes) -> str | None:
    """Where a personal file holds a secret and what agents get of it: one in the front matter
    they never receive, one in the body they read masked (the first of each); None when clean."""
    from teamlore.personal import documents
    from teamlore.personal.safety import first_secret

    text = documents.document_text(data, on_error="replace")
    front_matter = documents.front_matter_of(text)
    above = front_matter.count("\n")
    in_front = first_secret(front_matter) if front_matter else None
    in_body = first_secret(text[len(front_matter) :])
    name = documents.relative_path(target)
    said: list[str] = []
    if in_front is not None:
        said.append(
            f"{name}:{in_front[0]} holds a secret ({in_front[1]}) in its front matter, which"
            " agents do not receive"
        )
    if in_body is not None:
        line, rule = above + in_body[0], in_body[1]
        said.append(
            f"{name}:{line} holds one ({rule}) they read masked"
            if said
            else f"{name}:{line} holds a secret ({rule}); agents read it masked"
        )
    if not said:
        return None
    them = "them" if len(said) > 1 else "it"
    return "; ".join(said) + f"; the Writer does not update the file until you remove {them}"
