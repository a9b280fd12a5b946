"""memory.list / memory.show browse the reviewed memory the same way search sees it; repo.show
renders a cited commit or the history of a path, read-only and bounded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from teamlore.core import errors
from teamlore.ops.registry import OpContext, run_operation


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("browse") / "demo"
    return run_operation("demo", OpContext(cwd=root.parent), {"directory": str(root)})


def op(demo: dict[str, Any], name: str, payload: dict[str, Any]) -> dict[str, Any]:
    ctx = OpContext(cwd=Path(demo["repository"]), home=Path(demo["stateDir"]))
    return run_operation(name, ctx, payload)


def test_list_shows_every_promoted_entry_and_show_reads_one(demo: dict[str, Any]) -> None:
    listing = op(demo, "memory.list", {})
    promoted = next(s for s in demo["steps"] if s["step"] == "promote")["files"]
    entries = [d["path"] for d in listing["documents"] if d["type"] == "entry"]
    assert sorted(entries) == sorted(promoted)
    assert listing["counts"]["entry"] == 2 and listing["coverage"] == "complete"
    assert [d["type"] for d in listing["documents"]][-2:] == ["entry", "entry"]  # entries last
    first = next(d for d in listing["documents"] if d["type"] == "entry")
    shown = op(demo, "memory.show", {"kind": "entry", "id": first["id"]})
    on_disk = (Path(demo["repository"]) / first["path"]).read_text(encoding="utf-8")
    assert shown["body"].strip() in on_disk and shown["frontmatter"]["id"] == first["id"]
    for kind, count in listing["counts"].items():
        only = op(demo, "memory.list", {"kind": kind})["documents"]
        assert len(only) == count and {d["type"] for d in only} == {kind}


def test_a_listed_doctrine_reads_as_words_not_markdown(demo: dict[str, Any]) -> None:
    """The demo's doctrine opens `### Core principles` then a list item: its summary names the
    heading, then what it says, without the `###` and `-` (the Memory page shows it)."""
    listing = op(demo, "memory.list", {"kind": "doctrine"})
    (doctrine,) = listing["documents"]
    assert doctrine["summary"].startswith("Core principles: Make release inputs deterministic")
    assert "#" not in doctrine["summary"] and " - " not in doctrine["summary"]
    entries = op(demo, "memory.list", {"kind": "entry"})["documents"]
    # an entry's claim, which starts with words, is listed as it was
    assert entries[0]["summary"].startswith(("Invoice export", "Release"))
    # and memory search's snippet of it, on the page and in the CLI alike
    found = op(demo, "memory.search", {"query": "core principles"})["results"]
    (hit,) = [r for r in found if r["type"] == "doctrine"]
    assert hit["snippet"].startswith("Core principles: Make release inputs"), hit["snippet"]
    assert "#" not in hit["snippet"] and "Agent rules: Check" in hit["snippet"]


def test_show_refuses_what_is_not_there(demo: dict[str, Any]) -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        op(demo, "memory.show", {"kind": "entry", "id": "no-such-entry"})
    assert refused.value.code == "MEMORY_DOCUMENT_NOT_FOUND"
    with pytest.raises(errors.TeamloreError) as invalid:
        op(demo, "memory.show", {"kind": "bogus", "id": "x"})
    assert invalid.value.code == "INVALID_ARGUMENT"


def test_repo_show_renders_a_commit_by_full_or_short_hash(demo: dict[str, Any]) -> None:
    commit = next(s for s in demo["steps"] if s["step"] == "build")["commits"]["migration"]
    full = op(demo, "repo.show", {"commit": commit})
    assert full["commit"] == commit and "+LOCK_TIMEOUT = '30s'" in full["text"]
    assert not full["patchOmitted"]
    assert op(demo, "repo.show", {"commit": commit[:8]})["text"] == full["text"]
    history = op(demo, "repo.show", {"path": "migrations/env.py"})
    assert history["text"].count("\ncommit ") + history["text"].startswith("commit ") == 2


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"commit": "0" * 40}, "COMMIT_NOT_FOUND"),
        ({"commit": "HEAD"}, "INVALID_ARGUMENT"),
        ({"commit": "--output=/tmp/x"}, "INVALID_ARGUMENT"),
        ({"path": "../outside"}, "INVALID_ARGUMENT"),
        ({"path": "/etc/passwd"}, "INVALID_ARGUMENT"),
        ({}, "INVALID_ARGUMENT"),
        ({"commit": "abcdef1", "path": "x"}, "INVALID_ARGUMENT"),
    ],
)
def test_repo_show_refusals(demo: dict[str, Any], payload: dict[str, Any], code: str) -> None:
    with pytest.raises(errors.TeamloreError) as refused:
        op(demo, "repo.show", payload)
    assert refused.value.code == code
