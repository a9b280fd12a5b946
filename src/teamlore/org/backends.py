"""Which store backs the org index (docs/org.md "Storage"): the PostgreSQL server a connection
string names, else the embedded SQLite file under the state dir."""

from __future__ import annotations

import sys
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
                "a PostgreSQL org index needs psycopg and psycopg_pool (teamlore's `org` "
                "extra), which this teamlore was installed without",
            ).advising(install_the_org_extra()) from None  # nothing is wrong with the URL yet
        return PostgresStore.open(database, source) if source else PostgresStore.open(database)
    from teamlore.org.sqlite_store import SqliteStore

    return SqliteStore.open(home / "org.sqlite3")


# pyproject's `org` extra, for `pipx inject` (teamlore is installed from its clone, not PyPI)
ORG_EXTRA = "'psycopg[binary]>=3.1' 'psycopg_pool>=3.2'"


def install_the_org_extra() -> str:
    """How to add the `org` extra to this teamlore: pipx's venv (pipx keeps pipx_metadata.json
    in it; its name is the one `pipx inject` takes) gets the packages injected; another
    environment, pip from the clone."""
    venv = Path(sys.prefix)
    if (venv / "pipx_metadata.json").is_file():
        return (
            f"Run `pipx inject {venv.name} {ORG_EXTRA}` (or, in your teamlore clone, "
            "`pipx install --force '.[org]'`), then run the command again."
        )
    return (
        "In your teamlore clone, run `pip install '.[org]'` with the environment that runs "
        "teamlore active (pipx: `pipx install --force '.[org]'`), then run the command again."
    )
