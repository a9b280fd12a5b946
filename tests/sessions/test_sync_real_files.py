"""Every real session file in ../shared/fixtures indexes cleanly through the real adapters."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
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


def test_no_session_ends_before_it_starts(synced: tuple[dict, Path]) -> None:
    """A branched Pi session's header is stamped when the branch was made, after the messages
    it copied: `sessions show` printed `2025-12-09T00:53:29.825Z → 2025-12-09T00:21:42.119Z`."""
    _, home = synced
    ctx = OpContext(cwd=Path.cwd(), home=home)
    listed = run_operation("sessions.list", ctx, {"limit": 100})["sessions"]
    assert len(listed) > 20
    backwards = [s for s in listed if s["endedAt"] and s["startedAt"] > s["endedAt"]]
    assert backwards == []
    branched = next(s for s in listed if s["startedAt"] == "2025-12-08T22:41:05.306Z")
    assert branched["provider"] == "pi"


def test_a_file_name_that_is_not_utf8_is_a_diagnostic_and_later_folders_are_indexed(
    tmp_path: Path,
) -> None:
    """Issue 27: one session file named with bytes that are not UTF-8 made every sync fail
    with INTERNAL (UnicodeEncodeError) and the folders after it were never indexed."""
    real = b"".join(
        orjson.dumps(record) + b"\n"
        for record in (
            {"type": "user", "sessionId": "s-1", "cwd": "/w", "message": {"content": "hello"}},
            {"type": "assistant", "sessionId": "s-1", "message": {"content": "hi"}},
        )
    )
    projects = tmp_path / "projects"
    for folder in ("a-proj", "z-proj"):
        (projects / folder).mkdir(parents=True)
    bad_file = os.fsencode(projects / "a-proj") + b"/bad\xff\xfe.jsonl"
    bad_folder = os.fsencode(projects) + b"/b-\xe9t\xe9"
    os.mkdir(bad_folder)
    for name in (bad_file, bad_folder + b"/s.jsonl"):
        with open(name, "wb") as handle:
            handle.write(real)
    (projects / "z-proj" / "good.jsonl").write_bytes(real)
    ctx = OpContext(cwd=Path.cwd(), home=tmp_path / "state")

    result = run_operation("sync", ctx, {"sources": [f"claude={projects}"]})

    assert result["files"]["changed"] == 1 and result["files"]["failed"] == 2
    named = sorted(
        (d["file"], d["message"])
        for d in result["diagnostics"]
        if d["code"] == "file-name-undecodable"
    )
    assert [(name.rsplit("/", 2)[-2:], why.split(";")[0]) for name, why in named] == [
        (["a-proj", "bad\\xff\\xfe.jsonl"], "the file name is not valid UTF-8"),
        (["b-\\xe9t\\xe9", "s.jsonl"], "a folder in its path is not valid UTF-8"),
    ]
    assert orjson.dumps(result)  # the report itself can be printed and stored
    assert result["totals"]["sessions"] == 1
