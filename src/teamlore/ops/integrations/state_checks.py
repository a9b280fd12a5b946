"""`doctor`'s checks of the local state: config.toml, the session index, the registered
repositories, personal memory and the state dir's permissions (the client checks are in
`install`, beside the operations whose work they check)."""

from __future__ import annotations

import os
import shlex
import sqlite3
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamlore.core import errors
from teamlore.core.paths import display_path
from teamlore.integrations import doctor as doctor_checks
from teamlore.models.cache import MODEL_CACHE_DIR
from teamlore.ops.registry import REGISTRY, OpContext

if TYPE_CHECKING:
    from teamlore.repo.binding import RepositoryIdentity

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
        # the model cache holds only what is derived from the bundled models and dictionary
        # (public weights and tables, nothing of the user's): teamlore 0.1.0 made the folder
        # 0755 and wrote its arrays 0644, and this version derives it anew at its first use,
        # so right after an upgrade that is a warning, not a private file out in the open
        cache = sorted(
            p for p in loose if p == MODEL_CACHE_DIR or p.startswith(MODEL_CACHE_DIR + os.sep)
        )
        derived = len(cache) == len(loose)
        loose = sorted(set(loose) - set(cache)) + cache  # what is the user's named first
        return doctor_checks.Check(
            "state.permissions",
            "warn" if derived else "fail",
            f"{display_path(home)}: readable by others: {_first_few(loose, 5)}"
            + (
                f" (the model cache {MODEL_CACHE_DIR}/: public weights derived from the bundled"
                " models, nothing of yours; teamlore 0.1.0 wrote them so)"
                if derived
                else ""
            ),
            f"chmod -R go-rwx {_as_typed(home)}",
        )
    private = f"{display_path(home)} is private (0700/0600)"
    return doctor_checks.Check("state.permissions", "ok", private)


def _as_typed(path: Path) -> str:
    """`path` for a command line a person pastes or shares: the home folder as `~` (outside
    the quotes, where the shell expands it), the rest quoted as it needs."""
    shown = display_path(path)
    if shown.startswith("~/"):
        return "~/" + shlex.quote(shown[2:])
    return shown if shown == "~" else shlex.quote(shown)


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
    count = unreadable["count"]
    what = "file or folder" if count == 1 else "files or folders"
    return (
        f"the last sync could not read {count} {what} (first: {first['file']}: {first['message']})"
    )


def _quick_check(path: Path) -> str | None:
    """The first problem `PRAGMA quick_check` finds in the index, read-only, or None: damage
    in pages `status` does not read (a turn's text, the search index) is found here, not at a
    search weeks later. It reads every page once (an 89 MiB index: 0.1 s warm, 0.35 s cold),
    without the index cross-checks of `status --check`'s integrity_check."""
    from teamlore.core import db

    conn = db.open_read_only(path)
    if conn is None:
        return None  # an interrupted sync's batch to roll back: `status` said what to do
    try:
        found = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        conn.close()
    return None if found == ["ok"] else "; ".join(found)


def index_check(ctx: OpContext, home: Path) -> doctor_checks.Check:
    from teamlore.ops.sessions.index import files_behind
    from teamlore.sessions.index_db import INDEX_DB_NAME

    if not (home / INDEX_DB_NAME).exists():
        return doctor_checks.Check("index", "warn", "sessions were never indexed", "teamlore sync")
    status = REGISTRY.get("status").run(OpContext(cwd=ctx.cwd, home=home), {})
    last = status.get("lastSyncAt")
    if not last:
        return doctor_checks.Check("index", "warn", "sessions were never indexed", "teamlore sync")
    if damage := _quick_check(home / INDEX_DB_NAME):
        return doctor_checks.Check(
            "index", "fail", f"{INDEX_DB_NAME} is damaged ({damage})", "teamlore sync --rebuild"
        )
    if problem := _unreadable_sessions(status):
        fix = "fix the owner or mode of what `teamlore status` names, then `teamlore sync`"
        return doctor_checks.Check("index", "warn", problem, fix)
    new, changed, every_file = files_behind(home, MAX_FILES_SCANNED)
    of_which = (
        "" if every_file else f" of the first {MAX_FILES_SCANNED:,} found (newest folders first)"
    )
    if new or changed:
        why = [f"{new} not in the index"] if new else []
        why += [f"{changed} changed since it read them"] if changed else []
        files = "file" if new + changed == 1 else "files"
        behind = f"{new + changed} session {files}{of_which} behind: {', '.join(why)}"
        return doctor_checks.Check("index", "warn", f"last sync {last}; {behind}", "teamlore sync")
    return doctor_checks.Check("index", "ok", f"last sync {last}; no session file{of_which} behind")


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
    """The repositories `repo list` lists (the index's registered worktrees), each still a
    usable worktree; then config.toml's registrations, which the personal memory knows as its
    projects (`sync --repository` writes both): one the index holds and config.toml does not
    (a config.toml written anew by hand) is no project of the personal memory, and one only
    config.toml names whose folder is gone is never registered again."""
    from teamlore.core.config import load_config
    from teamlore.repo.binding import worktree_problem

    try:
        projects = load_config(home, readonly=True).repositories
    except errors.TeamloreError as err:
        return doctor_checks.Check("repositories", "fail", err.message, "fix config.toml")
    indexed = _indexed_repositories(home)
    unusable = [i for i in indexed if worktree_problem(i, home) is not None]
    if unusable:
        shown = _first_few([display_path(i.worktree_root) for i in unusable], 3)
        return doctor_checks.Check(
            "repositories",
            "warn",
            f"{len(unusable)} of {len(indexed)} registered repositories can no longer be used: "
            + shown,
            "`teamlore repo list` says why; `teamlore repo forget PATH` stops tracking one, or "
            "restore the folder",
        )
    in_config = {p.worktree_key for p in projects}
    unknown = [i for i in indexed if i.worktree_key not in in_config]
    if unknown:
        names = _first_few([display_path(i.worktree_root) for i in unknown], 3)
        return doctor_checks.Check(
            "repositories",
            "warn",
            f"{len(indexed)} registered, all present; config.toml does not name "
            f"{len(unknown)} of them, so the personal memory does not know "
            f"{'it' if len(unknown) == 1 else 'them'} as a project: {names}",
            f"`teamlore sync --repository PATH` for {'it' if len(unknown) == 1 else 'each'}",
        )
    held = {i.worktree_key for i in indexed}
    gone = [p.path for p in projects if p.worktree_key not in held and not Path(p.path).is_dir()]
    if gone:
        return doctor_checks.Check(
            "repositories",
            "warn",
            f"{len(indexed)} registered, all present; config.toml names {len(gone)} more "
            f"whose folders are gone: {_first_few([display_path(Path(p)) for p in gone], 3)}",
            "`teamlore repo forget PATH`, or restore the folders",
        )
    return doctor_checks.Check("repositories", "ok", f"{len(indexed)} registered, all present")


def _indexed_repositories(home: Path) -> list[RepositoryIdentity]:
    """The worktrees the session index registers (`repo list`), read without writing a byte;
    none before the first sync (the index check says what to do when it cannot be read)."""
    from teamlore.core import db
    from teamlore.repo.binding import list_repositories
    from teamlore.sessions.index_db import INDEX_DB_NAME

    path = home / INDEX_DB_NAME
    conn = db.open_read_only(path) if path.is_file() else None
    if conn is None:
        return []
    try:
        return list_repositories(conn)
    finally:
        conn.close()


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


def _first_few(names: list[str], at_most: int) -> str:
    """The first `at_most` of `names`, and how many more there are: `a, b, c and 2 more`."""
    more = f" and {len(names) - at_most} more" if len(names) > at_most else ""
    return ", ".join(names[:at_most]) + more
