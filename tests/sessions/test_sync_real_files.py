"""Every real session file in ../shared/fixtures indexes cleanly through the real adapters."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import shared_fixtures
from teamlore.ops.registry import OpContext, run_operation

PROVIDERS = ("codex", "claude", "pi")


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    root = shared_fixtures("sessions")
    home = tmp_path_factory.mktemp("state")
    ctx = OpContext(cwd=Path.cwd(), home=home)
    result = run_operation("sync", ctx, {"sources": [f"{p}={root / p}" for p in PROVIDERS]})
    return result, home


def test_every_fixture_file_indexes_without_failures(synced: tuple[dict, Path]) -> None:
    result, _ = synced
    root = shared_fixtures("sessions")
    on_disk = sum(1 for p in PROVIDERS for _ in (root / p).rglob("*.jsonl"))
    assert result["files"] == {"seen": on_disk, "changed": on_disk, "failed": 0, "unavailable": 0}
    codes = {d["code"] for d in result["diagnostics"]}
    # the only bad lines are the two `//` comment lines a source repo added to one file
    assert codes <= {"bad-json", "unknown-record"}
    assert sum(d["code"] == "bad-json" for d in result["diagnostics"]) == 2
    assert "adapter-error" not in codes and "bad-record" not in codes


def test_every_provider_yields_sessions_and_turns(synced: tuple[dict, Path]) -> None:
    _, home = synced
    ctx = OpContext(cwd=Path.cwd(), home=home)
    status = run_operation("status", ctx, {"check": True})
    assert status["integrity"] == "ok"
    for provider in PROVIDERS:
        assert status["providers"][provider]["sessions"] >= 2
        assert status["providers"][provider]["turns"] >= 2


def test_a_second_sync_reads_nothing(synced: tuple[dict, Path]) -> None:
    _, home = synced
    root = shared_fixtures("sessions")
    ctx = OpContext(cwd=Path.cwd(), home=home)
    again = run_operation("sync", ctx, {"sources": [f"{p}={root / p}" for p in PROVIDERS]})
    assert (again["files"]["changed"], again["bytesRead"]) == (0, 0)
