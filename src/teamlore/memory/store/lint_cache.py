"""Lint results kept in the state database, so `memory status` re-lints only what changed.

`memory status` shows a lint summary of the whole tree on every call; linting costs about 1 ms a
file (most of it the secret patterns and loading the document), 4 s at 4,000 entries.
`LintCache` remembers each file's `FileLint` in `lint_results`, keyed by owner and path and bound
to a digest of the file's bytes, its kind, this machine's home folder (`path.home-in-name`) and
the code of the lint rules (`rules_key`): a file is linted again when any of them changes, so a
new rule or a new teamlore never reports old findings. `memory lint` does not use it: it is the
check to run in CI.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from functools import cache
from pathlib import Path

import orjson

from teamlore import __version__
from teamlore.core import db
from teamlore.memory.store.lint import (
    LINT_POLICY_VERSION,
    DocumentKind,
    FileLint,
    Finding,
    lint_tree_file,
)

# the modules whose code decides a file's findings; their source is part of every digest
_RULE_MODULES = (
    "teamlore.contracts._base",  # `SCENE_NAME` (`slug.scene-name` of an entry's scene)
    "teamlore.core.text.files",  # git's conflict markers (`format.merge-conflict`)
    "teamlore.core.text.hidden",  # `format.hidden-character`
    "teamlore.core.text.markup",  # `format.html-comment`, `format.raw-html`, …
    "teamlore.core.secrets.heuristics",
    "teamlore.core.secrets.normalize",
    "teamlore.core.secrets.rules",
    "teamlore.core.secrets.sanitize",
    "teamlore.core.secrets.scan",
    "teamlore.core.secrets.shapes",
    "teamlore.memory.store.documents",
    "teamlore.memory.store.frontmatter",
    "teamlore.memory.store.layout",
    "teamlore.memory.store.lint",
    "teamlore.memory.store.slugs",
)


@cache
def rules_key() -> bytes:
    """A digest of what the lint rules are in this process: teamlore's version, the lint
    policy, the source of the rule modules and the home folder."""
    digest = hashlib.sha256(f"{__version__}\0{LINT_POLICY_VERSION}\0{Path.home()}\0".encode())
    for name in _RULE_MODULES:
        __import__(name)
        source = getattr(sys.modules[name], "__file__", None)
        digest.update(name.encode() + b"\0")
        if source:
            digest.update(Path(source).read_bytes())
    return digest.digest()


def file_digest(kind: DocumentKind, data: bytes) -> str:
    return hashlib.sha256(rules_key() + kind.encode() + b"\0" + data).hexdigest()


class LintCache:
    """One owner's kept lint results for one run: the `memo` of `lint_tree`, then `save`."""

    def __init__(self, conn: sqlite3.Connection, repository_key: str, worktree_key: str) -> None:
        self.conn = conn
        self.owner = (repository_key, worktree_key)
        self.kept: dict[str, tuple[str, bytes, str | None, str | None]] = {
            path: (digest, findings, entry_id, superseded_by)
            for path, digest, findings, entry_id, superseded_by in conn.execute(
                "SELECT path, digest, findings, entry_id, superseded_by FROM lint_results "
                "WHERE repository_key = ? AND worktree_key = ?",
                self.owner,
            )
        }
        self.changed: dict[str, tuple[str, bytes, str | None, str | None]] = {}

    def lint(self, path: str, kind: DocumentKind, data: bytes) -> FileLint:
        """The file's kept result when its digest is the kept one, else `lint_tree_file`'s
        (kept by `save`)."""
        digest = file_digest(kind, data)
        kept = self._kept(path, digest)
        if kept is not None:
            return kept
        result = lint_tree_file(data, path=path, kind=kind)
        findings = orjson.dumps([[f.rule, f.severity, f.line, f.message] for f in result.findings])
        self.changed[path] = (digest, findings, result.entry_id, result.superseded_by)
        return result

    def _kept(self, path: str, digest: str) -> FileLint | None:
        row = self.kept.get(path)
        if row is None or row[0] != digest:
            return None
        try:
            findings = [
                Finding(rule=rule, severity=severity, file=path, line=line, message=message)
                for rule, severity, line, message in orjson.loads(row[1])
            ]
        except (ValueError, TypeError):  # a row no teamlore wrote: lint the file again
            return None
        return FileLint(findings=findings, entry_id=row[2], superseded_by=row[3])

    def save(self, files: list[str]) -> None:
        """Store what changed and forget the files the tree no longer holds (`files`: every
        file the run linted). A full disk or a busy database keeps what it had: the next status
        lints those files again."""
        gone = set(self.kept) - set(files)
        if (not self.changed and not gone) or db.is_read_only(self.conn):
            return
        db.write_derived(self.conn, lambda conn: self._write(conn, sorted(gone)))

    def _write(self, conn: sqlite3.Connection, gone: list[str]) -> None:
        conn.executemany(
            "DELETE FROM lint_results WHERE repository_key = ? AND worktree_key = ? AND path = ?",
            [(*self.owner, path) for path in gone],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO lint_results (repository_key, worktree_key, path, digest, "
            "findings, entry_id, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(*self.owner, path, *row) for path, row in sorted(self.changed.items())],
        )
