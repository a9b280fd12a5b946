"""`secret.regenerate` (CLI-only: `teamlore sync --regenerate-secret`): a new origin secret and a
best-effort migration of everything keyed by the old one (docs/sessions.md, "A new origin secret").

Every key teamlore made is HMAC(secret, domain || value) of a value it still knows: the index
holds each session's provider and provider id and each registered worktree's root and git
common dir. Each old key is re-derived from its value under the old secret (a key that does not
re-derive is left alone and reported) and mapped to the same value's key under the new one.

Nothing is changed in place: the new secret, `config.toml`, every state database and the
`personal/` folder (project documents renamed `projects/<new key>.md`, their bytes untouched)
are staged beside the old ones, then switched in one committed step (core/keys.py). A failure
or a crash before the switch leaves the old secret and all state exactly as they were.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from teamlore.core import errors, keys
from teamlore.core.config import CONFIG_FILE
from teamlore.core.db import sqlite_uri
from teamlore.core.failpoints import failpoint
from teamlore.core.lock import file_lock
from teamlore.core.paths import (
    ensure_private_dir,
    read_private_file,
    resolve_home,
    write_private_file,
)
from teamlore.core.shapes.strict import STRICT
from teamlore.ops.registry import OpContext, operation
from teamlore.ops.sessions.index import SYNC_LOCK

_KEY = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
_PROJECT_DOCUMENT = re.compile(r"^([0-9a-f]{64})\.md$")


class RegenerateRequest(BaseModel):
    model_config = STRICT


@dataclass
class _Migration:
    mapping: dict[str, str] = field(default_factory=dict)
    migrated: dict[str, int] = field(default_factory=dict)
    not_migrated: list[dict[str, Any]] = field(default_factory=list)

    def rekey(self, text: str) -> str:
        return _KEY.sub(lambda m: self.mapping.get(m[0], m[0]), text)

    def skip(self, what: str, count: int, why: str) -> None:
        if count:
            self.not_migrated.append({"what": what, "count": count, "why": why})


@operation("secret.regenerate", input_model=RegenerateRequest, side_effect="state-write")
def regenerate_secret(ctx: OpContext, request: RegenerateRequest) -> dict[str, Any]:
    """Replace the origin secret and re-key config, index, team-memory state and personal
    memory under the new one; on any failure nothing changes."""
    home = resolve_home(ctx.home)
    with (
        file_lock(home / SYNC_LOCK, wait_seconds=0, what="a sync"),
        _writer_lock(home),
    ):
        keys.origin_secret(home)  # the old secret must be sound: never re-key from a damaged one
        before = _fingerprint(home)
        staging = keys.stage_new_secret(home)
        try:
            migration = _stage_everything(home, staging)
            failpoint("secret.staged")
            if _fingerprint(home) != before:
                raise errors.TeamloreError(
                    errors.LOCK_BUSY,
                    "another teamlore process (or an editor) changed the state while the new"
                    " secret was being prepared; nothing was changed, run it again",
                )
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        keys.switch_to_staged(home, ["secret", *sorted(migration.migrated)])
    return {
        "regenerated": True,
        "keysMapped": len(migration.mapping),
        "migrated": [{"what": k, "changed": v} for k, v in sorted(migration.migrated.items())],
        "notMigrated": migration.not_migrated,
    }


def _fingerprint(home: Path) -> dict[str, tuple[int, int]]:
    """Size and change time of every file a regeneration re-keys (databases with their WAL):
    a write that lands while the copies are made must not be lost by the switch."""
    files = [home / CONFIG_FILE, home / "secret", *home.glob("*.sqlite3*")]
    if (home / "personal").is_dir():
        files += [p for p in (home / "personal").rglob("*") if not p.name.endswith(".lock")]
    out: dict[str, tuple[int, int]] = {}
    for path in files:
        if path.name.endswith("-shm"):  # SQLite's shared memory changes on every read
            continue
        with contextlib.suppress(FileNotFoundError):
            stat = path.lstat()
            empty_wal = path.name.endswith("-wal") and stat.st_size == 0  # a reader made it
            if not path.is_dir() and not empty_wal:
                out[str(path.relative_to(home))] = (stat.st_size, stat.st_mtime_ns)
    return out


def _writer_lock(home: Path) -> AbstractContextManager[None]:
    if not (home / "personal").is_dir():
        return nullcontext()
    from teamlore.personal.writer import writer_lock_path

    lock = writer_lock_path(home / "personal")
    return file_lock(lock, wait_seconds=0, what="the personal Writer")


def _stage_everything(home: Path, staging: Path) -> _Migration:
    migration = _Migration()
    _map_index_keys(home, staging, migration)
    _map_config_keys(home, staging, migration)
    if (home / CONFIG_FILE).is_file():
        text = read_private_file(home / CONFIG_FILE).decode("utf-8")
        new_text = migration.rekey(text)
        write_private_file(staging / CONFIG_FILE, new_text.encode("utf-8"))
        migration.migrated[CONFIG_FILE] = sum(
            m[0] in migration.mapping for m in _KEY.finditer(text)
        )
    for database in sorted(home.glob("*.sqlite3")):
        migration.migrated[database.name] = _stage_database(
            database, staging / database.name, migration.rekey
        )
    if (home / "personal").is_dir():
        migration.migrated["personal"] = _stage_personal(
            home / "personal", staging / "personal", migration
        )
    plans = home / "runner-plans"
    migration.skip(
        "runner plans",
        len(list(plans.glob("*.json"))) if plans.is_dir() else 0,
        "a plan binds the old keys; make it again with `teamlore memory extract`",
    )
    return migration


def _map_index_keys(home: Path, staging: Path, migration: _Migration) -> None:
    index = home / "index.sqlite3"
    if not index.is_file():
        return
    conn = sqlite3.connect(sqlite_uri(index, "mode=ro"), uri=True)
    try:
        sessions = conn.execute(
            "SELECT session_key, provider, provider_session_id FROM sessions"
        ).fetchall()
        repositories = conn.execute(
            "SELECT repository_key, worktree_key, git_common_dir, worktree_root FROM repositories"
        ).fetchall()
    finally:
        conn.close()
    unmatched = 0
    for old, provider, provider_id in sessions:
        value = f"{provider}:{provider_id}"
        unmatched += not _map(migration, "session", value, old, home, staging)
    migration.skip("sessions", unmatched, "the key was not made from the session it names")
    unmatched = 0
    for repository, worktree, common_dir, root in repositories:
        unmatched += not _map(migration, "repository", common_dir, repository, home, staging)
        unmatched += not _map(migration, "worktree", root, worktree, home, staging)
    migration.skip("repository keys", unmatched, "the key was not made from the folder it names")


def _map_config_keys(home: Path, staging: Path, migration: _Migration) -> None:
    """Registered worktrees the index does not know (a rebuilt or deleted index)."""
    from teamlore.core.config import load_config

    unmatched = 0
    for repo in load_config(home).repositories:
        if repo.worktree_key not in migration.mapping:
            root = str(Path(repo.path).resolve())
            unmatched += not _map(migration, "worktree", root, repo.worktree_key, home, staging)
        unmatched += repo.repository_key not in migration.mapping
    migration.skip(
        "registered repositories",
        unmatched,
        "not in the index; run `teamlore sync --repository PATH` for it",
    )


def _map(migration: _Migration, domain: str, value: str, old: str, home: Path, new: Path) -> bool:
    if keys.keyed_id(domain, value, home) != old:
        return False
    migration.mapping[old] = keys.keyed_id(domain, value, new)
    return True


def _stage_database(source: Path, staged: Path, rekey: Callable[[str], str]) -> int:
    """A consistent copy of `source` with every key in every ordinary table's text re-keyed;
    the number of rows changed."""
    reader = sqlite3.connect(sqlite_uri(source, "mode=ro"), uri=True)
    writer = sqlite3.connect(staged)
    try:
        reader.backup(writer)
        writer.execute("PRAGMA journal_mode=DELETE")  # one self-contained file to switch in
        changed = _rekey_tables(writer, rekey)
        writer.commit()
    finally:
        reader.close()
        writer.close()
    staged.chmod(0o600)
    return changed


def _rekey_tables(conn: sqlite3.Connection, rekey: Callable[[str], str]) -> int:
    conn.create_function(
        "teamlore_rekey", 1, lambda v: rekey(v) if isinstance(v, str) else v, deterministic=True
    )
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    for name, _ in triggers:  # append-only guards would refuse the rewrite of their own rows
        conn.execute(f'DROP TRIGGER "{name}"')
    changed = 0
    for table in _ordinary_tables(conn):
        columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
        sets = ", ".join(f'"{c}" = teamlore_rekey("{c}")' for c in columns)
        differs = " OR ".join(f'"{c}" IS NOT teamlore_rekey("{c}")' for c in columns)
        changed += conn.execute(f'UPDATE "{table}" SET {sets} WHERE {differs}').rowcount
    for _, sql in triggers:
        conn.execute(sql)
    return changed


def _ordinary_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [name for name, sql in rows if str(sql).upper().startswith("CREATE VIRTUAL")]
    return [
        name
        for name, _ in rows
        if not name.startswith("sqlite_")
        and name not in virtual
        and not any(name.startswith(v + "_") for v in virtual)
    ]


def _stage_personal(source: Path, staged: Path, migration: _Migration) -> int:
    """A copy of `personal/`: databases re-keyed, project documents under their new key (their
    bytes, hashed by the Writer's CAS, untouched); the number of things changed."""
    ensure_private_dir(staged)
    changed = 0
    unmatched = 0
    for path in sorted(source.rglob("*")):
        target = staged / path.relative_to(source)
        if path.is_dir() and not path.is_symlink():
            ensure_private_dir(target)
            continue
        if path.name.endswith(_SQLITE_SIDE_FILES):
            continue
        if path.suffix == ".sqlite3":
            changed += _stage_database(path, target, migration.rekey)
            continue
        document = _PROJECT_DOCUMENT.match(path.name) if path.parent.name == "projects" else None
        if document and document[1] in migration.mapping:
            target = target.with_name(migration.mapping[document[1]] + ".md")
            changed += 1
        elif document:
            unmatched += 1
        shutil.copy2(path, target, follow_symlinks=False)
    migration.skip(
        "personal project documents",
        unmatched,
        "their repository is no longer registered; they stay under the old key",
    )
    return changed
