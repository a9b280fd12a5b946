"""Which store backs the org index (docs/org.md "Storage"): the PostgreSQL server a connection
string names, else the embedded SQLite file under the state dir."""

from __future__ import annotations

from pathlib import Path

from teamlore.core import errors
from teamlore.org.store import OrgStore


def open_store(database: str | None, home: Path, source: str | None = None) -> OrgStore:
    """The PostgreSQL store `database` names, else the embedded one under `home`; `source`:
    where `database` came from, as a refusal names it (default: `--database`)."""
    if database:
        try:
            from teamlore.org.postgres_store import PostgresStore
        except ImportError:
            raise errors.TeamloreError(
                errors.ORG_DATABASE_UNAVAILABLE,
                "a PostgreSQL org index needs psycopg: pip install 'teamlore[org]'",
            ).advising(  # nothing is wrong with the URL or its server yet
                "Install the org extra (`pip install 'teamlore[org]'`), then run the command again."
            ) from None
        return PostgresStore.open(database, source) if source else PostgresStore.open(database)
    from teamlore.org.sqlite_store import SqliteStore

    return SqliteStore.open(home / "org.sqlite3")
