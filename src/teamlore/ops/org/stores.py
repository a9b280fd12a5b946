"""Which org store an operation uses, opened once per process (docs/org.md "Storage").

`ctx.org_database` (the CLI's `--database`, `org serve`'s launch), else `TEAMLORE_ORG_DATABASE`,
names a PostgreSQL server; nothing names the embedded index under the state dir. A store stays
open for the process (a pool of connections for `org serve`), and is closed at exit.
"""

from __future__ import annotations

import atexit
import os
import threading

from teamlore.core import errors
from teamlore.core.paths import resolve_home
from teamlore.ops.registry import OpContext
from teamlore.org.backends import open_store
from teamlore.org.store import OrgStore

DATABASE_VARIABLE = "TEAMLORE_ORG_DATABASE"

_OPEN: dict[tuple[str, str, str], OrgStore] = {}
_LOCK = threading.Lock()


def database_of(ctx: OpContext) -> str | None:
    """The connection string to use, or None for the embedded index. `--database ""` is
    refused (INVALID_ARGUMENT, exit 2), never read as "not given": an empty value is almost
    always a script's unset variable, and the index it meant is not the one that would be used.
    An empty TEAMLORE_ORG_DATABASE is unset, as any empty variable is."""
    if ctx.org_database is not None and not ctx.org_database.strip():
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            "--database: the URL is empty (an unset variable?); give a postgresql:// URL, or "
            f"leave --database out to use {DATABASE_VARIABLE} or the embedded index",
        )
    return ctx.org_database or os.environ.get(DATABASE_VARIABLE) or None


def _source_of(ctx: OpContext) -> str:
    """Where the connection string came from, which a refusal tells the person to check."""
    return "`--database`" if ctx.org_database else DATABASE_VARIABLE


def org_store(ctx: OpContext) -> OrgStore:
    database = database_of(ctx)
    home = resolve_home(ctx.home)
    source = _source_of(ctx)
    key = (database or "", str(home), source)
    with _LOCK:
        store = _OPEN.get(key)
        if store is None:
            store = _OPEN[key] = open_store(database, home, source)
        return store


def close_stores() -> None:
    with _LOCK:
        for store in _OPEN.values():
            store.close()
        _OPEN.clear()


atexit.register(close_stores)
