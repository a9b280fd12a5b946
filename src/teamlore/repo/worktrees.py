"""Session -> worktree mapping (docs/sessions.md, "Which repository a session belongs to").

A session belongs to a registered worktree, decided in this order:

1. **cwd**: the deepest registered root that is the session's real cwd or an ancestor of it
   (sessions started in a subdirectory belong to the worktree; nested worktrees: deepest wins).
   The cwd is normalized with `binding.normalize_posix` (symlinks resolved as far as the path
   exists), so a directory deleted since the session still maps by its path prefix. A cwd that
   is an existing directory on this machine outside every registered worktree stays unmapped:
   it is a local folder nobody registered, not another machine's.
2. **git remote**: the repository the provider recorded at session start (Codex
   `session_meta.git`), compared with every registered worktree's remote URLs by
   `remotes.remote_key`. When several worktrees match, those whose repository holds the
   recorded commit are kept; one left is the owner.
3. **path alias**: the cwd rewritten by the `[paths] aliases` of `config.toml` (a foreign prefix
   → a local prefix, longest first), then by the built-in WSL forms (`C:\\x` → `/mnt/c/x`,
   `\\\\wsl$\\Distro\\x` and `\\\\wsl.localhost\\Distro\\x` → `/x`), mapped by rule 1.
4. Several worktrees matched by remote and none chosen by 2 or 3: the one whose folder name is
   the cwd's last component, if exactly one is.

Windows paths compare case-insensitively with `\\` and `/` alike; POSIX paths compare exactly.
The mapping is recomputed from scratch each time: a session whose worktree was unregistered
loses its `worktree_key`.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from teamlore.core import db
from teamlore.repo import tables
from teamlore.repo.binding import is_windows_path, is_within, normalize_posix
from teamlore.repo.remotes import remote_key, worktree_remote_keys
from teamlore.sessions.index_db import fts_scope

MappedBy = Literal["cwd", "gitRemote", "pathAlias"]
_DRIVE = re.compile(r"^([A-Za-z]):(?:[\\/]|$)")
_WSL_SHARE = re.compile(r"^[\\/]{2}(?:wsl\$|wsl\.localhost)[\\/][^\\/]+(.*)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Worktree:
    """What mapping knows of a registered worktree."""

    worktree_key: str
    repository_key: str
    root: str
    remotes: frozenset[str] = frozenset()


@dataclass(slots=True)
class MappingResult:
    mapped: int = 0
    unmapped: int = 0
    by: dict[str, int] = field(default_factory=lambda: {"cwd": 0, "gitRemote": 0, "pathAlias": 0})


def _comparable(path: str) -> tuple[bool, list[str]]:
    """(is Windows, components) of a path: Windows components lowercased, `\\` as `/`."""
    windows = is_windows_path(path)
    text = path.replace("\\", "/") if windows else path
    parts = [p for p in text.split("/") if p]
    return windows, [p.lower() for p in parts] if windows else parts


def _alias_targets(cwd: str, aliases: Mapping[str, str]) -> Iterator[str]:
    """The cwd rewritten by each alias whose prefix it starts with (longest prefix first)."""
    windows, parts = _comparable(cwd)
    original = [p for p in (cwd.replace("\\", "/") if windows else cwd).split("/") if p]
    ranked = sorted(aliases.items(), key=lambda item: -len(_comparable(item[0])[1]))
    for foreign, local in ranked:
        alias_windows, prefix = _comparable(foreign)
        if alias_windows != windows or not prefix or parts[: len(prefix)] != prefix:
            continue
        rest = original[len(prefix) :]
        yield os.path.join(os.path.expanduser(local), *rest)


def path_aliases(home: Path | None) -> dict[str, str]:
    """The `[paths] aliases` of config.toml (docs/sessions.md, sessions from other machines)."""
    from teamlore.core.config import load_config, load_table

    if not load_config(home).paths:  # the schema (pydantic) loads only with a table to check
        return {}
    from teamlore.repo.path_settings import PathSettings

    return load_table("paths", PathSettings, home).aliases


def worktree_roots(worktree_root: str | os.PathLike[str], home: Path | None) -> tuple[str, ...]:
    """The roots of this worktree as recorded text may spell them, for `sanitize_text`: its
    root, then each foreign prefix the `[paths] aliases` of config.toml map to it or to a folder
    above it (`C:\\Users\\me\\shop` for `{"C:\\Users\\me" = "/home/me"}` and the worktree
    `/home/me/shop`). A path under any of them is a path in this repository."""
    root = os.fspath(worktree_root)
    roots = [root]
    for foreign, local in path_aliases(home).items():
        here = os.path.realpath(os.path.expanduser(local))
        if not is_within(root, here):
            continue
        rest = [p for p in root[len(here.rstrip("/")) :].split("/") if p]
        separator = "\\" if is_windows_path(foreign) else "/"
        roots.append(separator.join([foreign.rstrip("/\\"), *rest]))
    return tuple(roots)


def _wsl_targets(cwd: str) -> Iterator[str]:
    """The built-in forms: a Windows drive path as WSL mounts it, a `\\\\wsl$` share as inside."""
    share = _WSL_SHARE.match(cwd)
    if share:
        yield "/" + share.group(1).replace("\\", "/").strip("/")
        return
    drive = _DRIVE.match(cwd)
    if drive:
        rest = cwd[2:].replace("\\", "/").strip("/")
        yield f"/mnt/{drive.group(1).lower()}" + (f"/{rest}" if rest else "")


def _last_component(cwd: str | None) -> str | None:
    if not cwd:
        return None
    windows, parts = _comparable(cwd)
    if not parts:
        return None
    return parts[-1] if not windows else parts[-1].lower()


class SessionMapper:
    """Decides the owning worktree of one session (see the module docstring for the rules)."""

    def __init__(
        self,
        worktrees: list[Worktree],
        *,
        aliases: Mapping[str, str] | None = None,
        has_commit: Callable[[str, str], bool] = lambda repository_key, commit: False,
    ) -> None:
        self.worktrees = worktrees
        self.aliases = dict(aliases or {})
        self.has_commit = has_commit
        # many sessions share a folder and a remote: each is resolved on disk (realpath, isdir)
        # and parsed once per mapping (a realpath per session was a third of a no-op resync)
        self._local: dict[str, tuple[str | None, bool]] = {}
        self._remote_keys: dict[str, str | None] = {}

    def _local_folder(self, cwd: str) -> tuple[str | None, bool]:
        """`cwd` as a real path on this machine, and whether it is a folder here."""
        known = self._local.get(cwd)
        if known is None:
            local = normalize_posix(cwd)
            known = self._local[cwd] = (local, local is not None and os.path.isdir(local))
        return known

    def _deepest(self, path: str | None) -> Worktree | None:
        if path is None:
            return None
        best: Worktree | None = None
        for worktree in self.worktrees:
            if is_within(path, worktree.root) and (
                best is None or len(worktree.root) > len(best.root)
            ):
                best = worktree
        return best

    def _by_remote(self, remote: str | None, commit: str | None) -> list[Worktree]:
        text = remote or ""
        if text not in self._remote_keys:
            self._remote_keys[text] = remote_key(text)
        key = self._remote_keys[text]
        if key is None:
            return []
        found = [w for w in self.worktrees if key in w.remotes]
        if len(found) > 1 and commit:
            holding = [w for w in found if self.has_commit(w.repository_key, commit)]
            found = holding or found
        return found

    def owner(
        self, cwd: str | None, remote: str | None = None, commit: str | None = None
    ) -> tuple[Worktree | None, MappedBy | None]:
        local, is_folder = self._local_folder(cwd) if cwd else (None, False)
        hit = self._deepest(local)
        if hit is not None:
            return hit, "cwd"
        if is_folder:
            return None, None  # a folder on this machine that no registered worktree contains
        by_remote = self._by_remote(remote, commit)
        if len(by_remote) == 1:
            return by_remote[0], "gitRemote"
        if cwd:
            for target in (*_alias_targets(cwd, self.aliases), *_wsl_targets(cwd)):
                hit = self._deepest(normalize_posix(target))
                if hit is not None:
                    return hit, "pathAlias"
        name = _last_component(cwd)
        named = [w for w in by_remote if name and Path(w.root).name.lower() == name.lower()]
        if len(named) == 1:
            return named[0], "gitRemote"
        return None, None


def registered_worktrees(conn: sqlite3.Connection, *, skip: Iterable[str] = ()) -> list[Worktree]:
    """Every registered worktree with its remote keys (read from git; none for those in `skip`,
    worktree keys of repositories that are gone)."""
    skipped = set(skip)
    return [
        Worktree(
            row.worktree_key,
            row.repository_key,
            row.worktree_root,
            frozenset()
            if row.worktree_key in skipped
            else worktree_remote_keys(Path(row.worktree_root)),
        )
        for row in tables.list_worktrees(conn)
    ]


def map_sessions(
    conn: sqlite3.Connection,
    *,
    aliases: Mapping[str, str] | None = None,
    skip: Iterable[str] = (),
) -> MappingResult:
    """Set `sessions.worktree_key` for every session; say how many were mapped, and how."""
    mapper = SessionMapper(
        registered_worktrees(conn, skip=skip),
        aliases=aliases,
        has_commit=lambda repository_key, commit: tables.has_commit(conn, repository_key, commit),
    )
    rows = conn.execute(
        "SELECT id, cwd, git_remote, git_commit, worktree_key, provider FROM sessions"
    ).fetchall()
    updates: list[tuple[str | None, int]] = []
    scopes: list[tuple[str, int]] = []
    result = MappingResult()
    decided: dict[tuple[str | None, ...], tuple[Worktree | None, MappedBy | None]] = {}
    for row in rows:
        facts = (row["cwd"], row["git_remote"], row["git_commit"])
        if facts not in decided:  # many sessions share a folder: resolve each one once
            decided[facts] = mapper.owner(*facts)
        owner, how = decided[facts]
        key = owner.worktree_key if owner else None
        if how is None:
            result.unmapped += 1
        else:
            result.mapped += 1
            result.by[how] += 1
        if key != row["worktree_key"]:
            updates.append((key, row["id"]))
            scopes.append((fts_scope(row["provider"], key), row["id"]))
    if updates:
        with db.write_tx(conn):
            conn.executemany("UPDATE sessions SET worktree_key = ? WHERE id = ?", updates)
            # turn search filters by worktree inside the FTS index: keep its scope current
            conn.executemany(
                "UPDATE turns_fts SET scope = ?"
                " WHERE rowid IN (SELECT id FROM turns WHERE session_id = ?)",
                scopes,
            )
    return result
