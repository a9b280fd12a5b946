"""memory_status: what one owner's team memory looks like; it writes only its lint results."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import entry_file
from teamlore.memory.status import MemoryStatus, memory_status
from teamlore.memory.store import lint_cache
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.lint_cache import rules_key
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.state_db import open_state_db

REPO = "a1" * 12
WORKTREE = "b2" * 12
OTHER = "c3" * 12
HEX64 = "d4" * 32


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "worktree"
    root.mkdir()
    init_tree(root)
    return root


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = open_state_db(tmp_path / "home")
    yield connection
    connection.close()


def status(conn: sqlite3.Connection, worktree: Path, worktree_key: str = WORKTREE) -> MemoryStatus:
    return memory_status(
        conn, repository_key=REPO, worktree_key=worktree_key, worktree_root=worktree
    )


def write_entry(worktree: Path, entry_id: str, body: str, **kw: str) -> None:
    path = worktree / f".threadshare/memory/entries/{entry_id}.md"
    path.write_text(entry_file(entry_id, body, **kw, kind="work_fact"), encoding="utf-8")


def add_candidate(
    conn: sqlite3.Connection, candidate_id: str, state: str, worktree_key: str
) -> None:
    conn.execute(
        "INSERT INTO candidates (candidate_id, repository_key, worktree_key, chunk_ref, "
        "content_digest, payload_json, status, updated_at) VALUES (?, ?, ?, 'c', ?, '{}', ?, 1)",
        (candidate_id, REPO, worktree_key, HEX64, state),
    )


def test_a_fresh_tree_has_no_projection_and_zero_counts(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    result = status(conn, worktree)
    assert (result.tree, result.projection, result.memory_root) == (
        "present",
        None,
        ".threadshare/memory",
    )
    assert result.entries.model_dump() == {"approved": 0, "deprecated": 0}
    assert result.candidates.model_dump() == {
        "draft": 0,
        "quarantined": 0,
        "promoted": 0,
        "discarded": 0,
    }
    assert result.lint is not None and result.lint.blocking == 0


def test_status_reports_the_projection_and_entries_by_status(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write_entry(worktree, "kept", "Still true.")
    write_entry(worktree, "retired", "No longer true.", status="deprecated")
    synced = sync_approved_projection(
        conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=worktree
    )
    result = status(conn, worktree)
    assert result.projection is not None
    assert (result.projection.generation, result.projection.coverage) == (1, "complete")
    assert result.projection.source_tree_digest == synced.source_tree_digest
    assert result.projection.analyzer_current
    assert result.projection.counts.entries == 2
    assert result.entries.model_dump() == {"approved": 1, "deprecated": 1}


def test_candidates_tasks_and_promotions_are_counted_per_owner(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    for i, state in enumerate(["draft", "draft", "quarantined", "promoted", "discarded"]):
        add_candidate(conn, f"mine-{i}", state, WORKTREE)
    add_candidate(conn, "theirs", "draft", OTHER)
    conn.execute(
        "INSERT INTO tasks (task_id, kind, repository_key, worktree_key, chunk_ref, "
        "binding_json, created_at) VALUES ('t1', 'extraction', ?, ?, 'c', '{}', 1)",
        (REPO, WORKTREE),
    )
    conn.execute(
        "INSERT INTO promotion_journal (plan_id, repository_key, worktree_key, "
        "plan_canonical_json, plan_digest, candidate_ids_json, assessment_digest, "
        "policy_version, status, updated_at) VALUES ('p1', ?, ?, '{}', ?, '[]', ?, 's@1', "
        "'applying', 1)",
        (REPO, WORKTREE, HEX64, HEX64),
    )
    result = status(conn, worktree)
    assert result.candidates.model_dump() == {
        "draft": 2,
        "quarantined": 1,
        "promoted": 1,
        "discarded": 1,
    }
    assert result.tasks.pending == 1
    assert result.promotions.applying == 1
    assert status(conn, worktree, OTHER).candidates.draft == 1


def test_the_plans_waiting_for_promote_are_listed_newest_first(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    plans = [("old", "generated", 1), ("new", "generated", 3), ("done", "applied", 2)]
    plans += [("voided", "voided", 4)]
    for plan_id, state, at in plans:
        conn.execute(
            "INSERT INTO promotion_journal (plan_id, repository_key, worktree_key, "
            "plan_canonical_json, plan_digest, candidate_ids_json, assessment_digest, "
            "policy_version, status, updated_at) VALUES (?, ?, ?, '{}', ?, '[]', ?, 's@1', ?, ?)",
            (plan_id, REPO, WORKTREE, HEX64, HEX64, state, at),
        )
    assert status(conn, worktree).plans_to_promote == ["new", "old"]
    assert status(conn, worktree, OTHER).plans_to_promote == []


def test_the_lint_summary_counts_blocking_findings_by_rule(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write_entry(
        worktree, "leaky", "Use token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 to push."
    )
    result = status(conn, worktree)
    assert result.lint is not None
    assert result.lint.blocking >= 1
    assert any(rule.startswith("secret.") for rule in result.lint.rules)
    assert result.lint.files >= 1


def test_a_missing_tree_is_reported_not_raised(conn: sqlite3.Connection, tmp_path: Path) -> None:
    result = status(conn, tmp_path)
    assert (result.tree, result.lint) == ("missing", None)


def test_an_unsafe_tree_says_why(conn: sqlite3.Connection, tmp_path: Path) -> None:
    """`Memory tree .threadshare/memory (unsafe)` said nothing of what was unsafe."""
    root = tmp_path / "linked"
    (root / ".threadshare").mkdir(parents=True)
    (root / ".threadshare/memory").symlink_to(tmp_path)
    result = status(conn, root)
    assert (result.tree, result.lint) == ("unsafe", None)
    assert result.tree_problem == (
        ".threadshare/memory: symbolic links are not allowed in the memory tree"
    )


def test_a_projection_from_another_analyzer_is_flagged(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    sync_approved_projection(
        conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=worktree
    )
    conn.execute("UPDATE approved_projection SET analyzer_version = 'teamlore-analyzer@0'")
    projection = status(conn, worktree).projection
    assert projection is not None
    assert (projection.analyzer_current, projection.coverage) == (False, "partial")


def _rows_but_lint_results(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    tables = [
        name
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if name != "lint_results" and not name.startswith("sqlite_")
    ]
    return {name: conn.execute(f"SELECT * FROM {name}").fetchall() for name in tables}


def test_status_writes_only_its_lint_results_and_nothing_when_nothing_changed(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write_entry(worktree, "kept", "Still true.")
    sync_approved_projection(
        conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=worktree
    )
    before = _rows_but_lint_results(conn)
    status(conn, worktree)
    assert _rows_but_lint_results(conn) == before
    assert conn.execute("SELECT count(*) FROM lint_results").fetchone()[0] == 2  # + index.json
    changes = conn.total_changes
    status(conn, worktree)
    assert conn.total_changes == changes


def test_the_lint_summary_follows_edits_and_deletions_of_kept_files(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write_entry(worktree, "kept", "Still true.")
    write_entry(worktree, "leaky", "Deploy with token ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2 + ".")
    first = status(conn, worktree).lint
    assert first is not None and first.blocking == 1 and first.files == 3

    again = status(conn, worktree).lint  # from the kept results: the same summary
    assert again == first

    write_entry(worktree, "leaky", "Deploy with the token from the vault.")
    edited = status(conn, worktree).lint
    assert edited is not None and edited.blocking == 0

    write_entry(worktree, "leaky2", "Deploy with token ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2 + ".")
    (worktree / ".threadshare/memory/entries/kept.md").unlink()
    later = status(conn, worktree).lint
    assert later is not None and (later.blocking, later.files) == (1, 3)
    paths = {p for (p,) in conn.execute("SELECT path FROM lint_results")}
    assert paths == {
        ".threadshare/memory/index.json",
        ".threadshare/memory/entries/leaky.md",
        ".threadshare/memory/entries/leaky2.md",
    }


def test_kept_lint_results_are_not_trusted_under_other_rules(
    conn: sqlite3.Connection, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a row whose digest was made under other rules (another teamlore, another home folder) is
    # linted again: here a kept "no findings" for a file that holds a secret
    write_entry(worktree, "leaky", "Deploy with token ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2 + ".")
    assert status(conn, worktree).lint.blocking == 1  # type: ignore[union-attr]
    conn.execute("UPDATE lint_results SET findings = '[]'")
    assert status(conn, worktree).lint.blocking == 0  # type: ignore[union-attr]
    conn.execute("UPDATE lint_results SET findings = '[[1]]'")  # not what teamlore writes
    assert status(conn, worktree).lint.blocking == 1  # type: ignore[union-attr]
    conn.execute("UPDATE lint_results SET findings = '[]'")
    rules_key.cache_clear()
    monkeypatch.setattr(lint_cache, "__version__", "99.0")
    try:
        assert status(conn, worktree).lint.blocking == 1  # type: ignore[union-attr]
    finally:
        rules_key.cache_clear()


def test_the_superseded_check_sees_kept_entries(conn: sqlite3.Connection, worktree: Path) -> None:
    text = entry_file("old", "Was true.", status="deprecated", kind="work_fact")
    (worktree / ".threadshare/memory/entries/old.md").write_text(
        text.replace("superseded_by: null", "superseded_by: new"), encoding="utf-8"
    )
    missing = {"entry.superseded-target-missing": 1}
    assert status(conn, worktree).lint.rules == missing  # type: ignore[union-attr]
    assert status(conn, worktree).lint.rules == missing  # type: ignore[union-attr]
    write_entry(worktree, "new", "Is true.")
    assert status(conn, worktree).lint.rules == {}  # type: ignore[union-attr]
    assert status(conn, worktree).lint.rules == {}  # type: ignore[union-attr]
    assert conn.execute(
        "SELECT entry_id, superseded_by FROM lint_results WHERE path LIKE '%old.md'"
    ).fetchone()[:] == ("old", "new")


def test_a_file_name_that_is_not_utf8_is_counted_and_kept_escaped(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    entries = os.fsencode(worktree / ".threadshare/memory/entries")
    with open(os.path.join(entries, b"caf\xe9.md"), "wb") as handle:
        handle.write(entry_file("cafe", "Latin-1 name.", kind="work_fact").encode())
    for _ in range(2):  # linted, then from the kept results
        lint = status(conn, worktree).lint
        assert lint is not None and lint.rules["tree.name-not-utf8"] == 1
    kept = {p for (p,) in conn.execute("SELECT path FROM lint_results")}
    assert ".threadshare/memory/entries/caf\\xe9.md" in kept


def test_status_tells_how_far_the_lint_of_each_folder_is(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    for name in ("a", "b", "c"):
        write_entry(worktree, name, f"Entry {name}.")
    heard: list[tuple[int, int, str]] = []
    memory_status(
        conn,
        repository_key=REPO,
        worktree_key=WORKTREE,
        worktree_root=worktree,
        progress=lambda done, total, what: heard.append((done, total, what)),
    )
    entries = [(done, total) for done, total, what in heard if what.endswith("/entries")]
    # the folder also holds `init`'s empty .gitkeep
    assert entries == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
