"""Fixtures of the personal-memory operation tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from personal_ops_world import ModelServer


@pytest.fixture()
def model() -> Iterator[ModelServer]:
    """A real HTTP model server on 127.0.0.1 replaying the Writer's scripted answers."""
    with ModelServer() as server:
        yield server
