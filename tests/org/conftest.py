"""Fixtures of the org index's tests: the backend matrix (embedded SQLite, then a real
PostgreSQL server started by `org_support.postgres_cluster`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from org_support import postgres_cluster, postgres_database
from teamlore.ops.org.stores import close_stores

__all__ = ["postgres_cluster", "postgres_database"]

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def database(request: pytest.FixtureRequest, home: Path) -> Iterator[str | None]:
    """None (the embedded index under `home`), then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield None
        close_stores()
        return
    yield request.getfixturevalue("postgres_database")
