from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private teamlore state dir, also exported as TEAMLORE_HOME for subprocesses."""
    state = tmp_path / "state"
    monkeypatch.setenv("TEAMLORE_HOME", str(state))
    return state
