"""The approved projection: the memory tree of one worktree → rows + FTS, declared coverage.

Every bad input gives a located diagnostic and `partial` coverage (or a drift that keeps the last
good projection); none crashes the sync or leaves a silently wrong index.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support import SHARED_FIXTURES
from teamlore.core import errors
from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.core.canonical import digest, sha256_hex
from teamlore.memory.store import projection, tree_reader
from teamlore.memory.store.frontmatter import MAX_DOCUMENT_BYTES
from teamlore.memory.store.layout import init_tree
from teamlore.memory.store.projection import (
    ProjectionResult,
    sync_approved_projection,
)
from teamlore.memory.store.search import search_memory
from teamlore.memory.store.state_db import open_state_db

REPO = "a1" * 12
WORKTREE = "b2" * 12
OTHER_WORKTREE = "c3" * 12
FIXTURES = SHARED_FIXTURES


def entry_text(
    entry_id: str,
    body: str = "A fact worth keeping.",
    *,
    status: str = "approved",
    superseded_by: str | None = None,
    extra_line: str = "",
) -> str:
    superseded = "null" if superseded_by is None else superseded_by
    return (
        "---\n"
        f"id: {entry_id}\n"
        "type: work_fact\n"
        f"status: {status}\n"
        "priority: 50\n"
        "confidence: high\n"
        "provenance_strength: direct\n"
        "claim_support: human-confirmed\n"
        'limitations: ["source-local-only"]\n'
        "scope: repo\n"
        "scene: null\n"
        "occurred: []\n"
        'evidence: {"commits":[],"paths":[]}\n'
        f"superseded_by: {superseded}\n"
        f"{extra_line}"
        "---\n"
        f"{body}\n"
    )


SCENE = (
    "-----META-START-----\n"
    "created: 2026-08-21\n"
    "updated: 2026-08-21\n"
    'summary: "Release verification"\n'
    "heat: 1\n"
    "-----META-END-----\n"
    "## Releases\n- Run the smoke suite before tagging."
)
SKILL = (
    "---\n"
    'name: "release-checks"\n'
    'description: "Check a release before publishing it."\n'
    "---\n"
    "## Procedure\n\n1. Build the wheel and install it in a clean venv.\n"
)


def write(worktree: Path, relative: str, data: str | bytes) -> Path:
    path = worktree / ".threadshare/memory" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


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


def sync(
    conn: sqlite3.Connection,
    worktree: Path,
    *,
    worktree_key: str = WORKTREE,
    after_read: Callable[[str], None] | None = None,
) -> ProjectionResult:
    return sync_approved_projection(
        conn,
        repository_key=REPO,
        worktree_key=worktree_key,
        worktree_root=worktree,
        after_read=after_read,
    )


def projected(conn: sqlite3.Connection, worktree_key: str = WORKTREE) -> dict[str, str]:
    rows = conn.execute(
        "SELECT kind, entry_id, body_text FROM approved_entries "
        "WHERE repository_key = ? AND worktree_key = ? ORDER BY kind, entry_id",
        (REPO, worktree_key),
    )
    return {f"{kind}:{entry_id}": body for kind, entry_id, body in rows}


def found(conn: sqlite3.Connection, query: str, worktree_key: str = WORKTREE) -> list[str]:
    result = search_memory(
        conn, repository_key=REPO, worktree_key=worktree_key, query=query, limit=20
    )
    return [hit.id for hit in result.results]


# -- the contract on a clean tree -------------------------------------------------------------


def test_a_fresh_tree_projects_as_generation_one_complete_and_empty(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    result = sync(conn, worktree)
    assert (result.outcome, result.generation, result.coverage) == ("rebuilt", 1, "complete")
    assert result.counts.entries == 0
    assert result.diagnostics == []
    assert result.analyzer_version == ANALYZER_VERSION


def test_every_kind_of_memory_file_is_projected(conn: sqlite3.Connection, worktree: Path) -> None:
    write(worktree, "entries/auth-cookie.md", entry_text("auth-cookie", "Keep the session cookie."))
    write(worktree, "entries/old-way.md", entry_text("old-way", status="deprecated"))
    write(worktree, "scenes/releases.md", SCENE)
    write(worktree, "doctrine.md", "# Doctrine\n\n- Verify before you claim.\n")
    write(worktree, "skills/release-checks/SKILL.md", SKILL)
    result = sync(conn, worktree)
    assert result.coverage == "complete", result.diagnostics
    counts = result.counts
    assert (counts.entries, counts.deprecated, counts.scenes, counts.doctrine, counts.skills) == (
        2,
        1,
        1,
        1,
        1,
    )
    assert set(projected(conn)) == {
        "doctrine:doctrine",
        "entry:auth-cookie",
        "entry:old-way",
        "scene:releases",
        "skill:release-checks",
    }
    row = conn.execute(
        "SELECT path, entry_type, status, revision, content_digest FROM approved_entries "
        "WHERE entry_id = 'auth-cookie'"
    ).fetchone()
    data = (worktree / ".threadshare/memory/entries/auth-cookie.md").read_bytes()
    assert tuple(row) == (
        "entries/auth-cookie.md",
        "work_fact",
        "approved",
        int(sha256_hex(data)[:13], 16) + 1,
        sha256_hex(data),
    )


def test_the_source_tree_digest_is_canonical_over_relative_paths_and_content(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path
) -> None:
    files = {"entries/a.md": entry_text("a"), "scenes/releases.md": SCENE}
    for relative, text in files.items():
        write(worktree, relative, text)
    elsewhere = tmp_path / "another-clone"
    elsewhere.mkdir()
    init_tree(elsewhere)
    for relative, text in reversed(files.items()):
        write(elsewhere, relative, text)
    expected = digest(sorted([path, sha256_hex(text.encode())] for path, text in files.items()))
    first = sync(conn, worktree)
    second = sync(conn, elsewhere, worktree_key=OTHER_WORKTREE)
    assert first.source_tree_digest == second.source_tree_digest == expected


def test_an_unchanged_tree_short_circuits_without_writing(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/a.md", entry_text("a"))
    first = sync(conn, worktree)
    changes = conn.total_changes
    again = sync(conn, worktree)
    assert again.outcome == "unchanged"
    assert (again.generation, again.coverage, again.source_tree_digest) == (
        first.generation,
        "complete",
        first.source_tree_digest,
    )
    assert again.counts == first.counts
    assert conn.total_changes == changes


def test_a_changed_tree_replaces_the_owner_rows_and_advances_the_generation(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/a.md", entry_text("a", "The staging cluster is called aurora."))
    write(worktree, "entries/b.md", entry_text("b", "Deploys need a green canary."))
    assert sync(conn, worktree).generation == 1
    write(worktree, "entries/a.md", entry_text("a", "The staging cluster is called borealis."))
    (worktree / ".threadshare/memory/entries/b.md").unlink()
    result = sync(conn, worktree)
    assert (result.outcome, result.generation, result.counts.entries) == ("rebuilt", 2, 1)
    assert found(conn, "borealis") == ["a"]
    assert found(conn, "aurora") == []
    assert found(conn, "canary") == []
    fts_rows = conn.execute("SELECT count(*) FROM approved_fts").fetchone()[0]
    assert fts_rows == 1  # the old documents left the FTS index too


def test_each_worktree_has_its_own_projection(conn: sqlite3.Connection, tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for root, body in ((first, "Use the blue queue."), (second, "Use the green queue.")):
        root.mkdir()
        init_tree(root)
        write(root, "entries/queue.md", entry_text("queue", body))
    sync(conn, first)
    sync(conn, second, worktree_key=OTHER_WORKTREE)
    write(second, "entries/queue.md", entry_text("queue", "Use the red queue."))
    assert sync(conn, second, worktree_key=OTHER_WORKTREE).generation == 2
    assert found(conn, "blue") == ["queue"]
    assert found(conn, "blue", OTHER_WORKTREE) == []
    assert found(conn, "red", OTHER_WORKTREE) == ["queue"]
    assert sync(conn, first).outcome == "unchanged"


def test_a_changed_analyzer_version_forces_a_rebuild(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/a.md", entry_text("a", "Shorter prompts failed less."))
    sync(conn, worktree)
    # what an older analyzer left: unstemmed tokens, another version
    conn.execute("UPDATE approved_fts SET searchable_text = 'shorter prompts failed less'")
    conn.execute("UPDATE approved_projection SET analyzer_version = 'teamlore-analyzer@1'")
    assert found(conn, "prompt") == []
    result = sync(conn, worktree)
    assert (result.outcome, result.generation, result.analyzer_version) == (
        "rebuilt",
        2,
        ANALYZER_VERSION,
    )
    assert found(conn, "prompt") == found(conn, "failing") == ["a"]


# -- bad input --------------------------------------------------------------------------------


def only_diagnostic(result: ProjectionResult) -> tuple[str, str, int | None, str | None]:
    assert result.coverage == "partial"
    assert len(result.diagnostics) == 1, result.diagnostics
    d = result.diagnostics[0]
    return d.code, d.file, d.line, d.field


def test_invalid_frontmatter_is_a_located_diagnostic_and_the_rest_is_projected(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/good.md", entry_text("good"))
    broken = entry_text("broken").replace("priority: 50", "priority: high")
    write(worktree, "entries/broken.md", broken)
    result = sync(conn, worktree)
    assert only_diagnostic(result) == (
        "format.invalid-field",
        ".threadshare/memory/entries/broken.md",
        5,
        "priority",
    )
    assert result.generation == 1
    assert set(projected(conn)) == {"entry:good"}


def test_an_unknown_field_names_its_line(conn: sqlite3.Connection, worktree: Path) -> None:
    write(worktree, "entries/a.md", entry_text("a", extra_line="owner: alice\n"))
    assert only_diagnostic(sync(conn, worktree)) == (
        "format.unknown-field",
        ".threadshare/memory/entries/a.md",
        15,
        "owner",
    )


def test_a_file_whose_name_is_not_its_id_is_not_projected(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/renamed.md", entry_text("original-name"))
    assert only_diagnostic(sync(conn, worktree)) == (
        "slug.id-mismatch",
        ".threadshare/memory/entries/renamed.md",
        2,
        "id",
    )
    assert projected(conn) == {}


def test_two_files_claiming_one_id_keep_the_file_that_owns_the_name(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/shared.md", entry_text("shared", "The real one."))
    write(worktree, "entries/copy.md", entry_text("shared", "An impostor."))
    result = sync(conn, worktree)
    assert only_diagnostic(result) == (
        "duplicate-id",
        ".threadshare/memory/entries/copy.md",
        2,
        "id",
    )
    assert ".threadshare/memory/entries/shared.md" in result.diagnostics[0].why
    assert projected(conn) == {"entry:shared": "The real one.\n"}


def test_an_oversized_file_is_never_read(conn: sqlite3.Connection, worktree: Path) -> None:
    write(worktree, "entries/huge.md", entry_text("huge", "x" * (5 * 1024 * 1024)))
    write(worktree, "entries/fine.md", entry_text("fine"))
    result = sync(conn, worktree)
    code, file, _line, _field = only_diagnostic(result)
    assert (code, file) == ("file-too-large", ".threadshare/memory/entries/huge.md")
    size = (worktree / ".threadshare/memory/entries/huge.md").stat().st_size
    # the format's limit and its words: one limit for the reader, the loader and lint
    assert result.diagnostics[0].why == f"file is {size} bytes (at most {MAX_DOCUMENT_BYTES})"
    assert set(projected(conn)) == {"entry:fine"}


def test_a_file_over_the_format_limit_is_never_read_either(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/long.md", entry_text("long", "y" * (100 * 1024)))
    code, file, _line, _field = only_diagnostic(sync(conn, worktree))
    assert (code, file) == ("file-too-large", ".threadshare/memory/entries/long.md")


def test_a_symlinked_entries_folder_is_not_followed(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(entry_text("secret", "Outside the repository."))
    entries = worktree / ".threadshare/memory/entries"
    shutil.rmtree(entries)
    entries.symlink_to(outside, target_is_directory=True)
    result = sync(conn, worktree)
    assert only_diagnostic(result) == ("symlink", ".threadshare/memory/entries", None, None)
    assert projected(conn) == {}


def test_a_symlinked_entry_file_is_not_followed(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path
) -> None:
    target = tmp_path / "elsewhere.md"
    target.write_text(entry_text("linked", "Outside the repository."))
    (worktree / ".threadshare/memory/entries/linked.md").symlink_to(target)
    write(worktree, "entries/real.md", entry_text("real"))
    result = sync(conn, worktree)
    assert only_diagnostic(result) == (
        "symlink",
        ".threadshare/memory/entries/linked.md",
        None,
        None,
    )
    assert set(projected(conn)) == {"entry:real"}
    # repointing the link changes nothing it could index, but a new link target is still refused
    target.write_text(entry_text("linked", "Changed outside."))
    assert sync(conn, worktree).outcome == "unchanged"


def test_a_file_whose_name_is_not_utf8_is_skipped_with_its_name_escaped(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    # a name in another encoding (Latin-1 from an old archive): git and Linux hold its bytes,
    # but no document path can be made of it; search goes on, the diagnostic shows it escaped
    entries = os.fsencode(worktree / ".threadshare/memory/entries")
    with open(os.path.join(entries, b"caf\xe9.md"), "wb") as handle:
        handle.write(entry_text("cafe", "Latin-1 name.").encode())
    write(worktree, "entries/real.md", entry_text("real"))
    result = sync(conn, worktree)
    assert only_diagnostic(result) == (
        "name-not-utf8",
        ".threadshare/memory/entries/caf\\xe9.md",
        None,
        None,
    )
    assert result.coverage == "partial"
    assert set(projected(conn)) == {"entry:real"}
    assert sync(conn, worktree).outcome == "unchanged"


def test_a_symlinked_memory_root_is_refused(conn: sqlite3.Connection, tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    init_tree(real)
    fake = tmp_path / "fake"
    (fake / ".threadshare").mkdir(parents=True)
    (fake / ".threadshare/memory").symlink_to(real / ".threadshare/memory")
    with pytest.raises(errors.TeamloreError) as caught:
        sync(conn, fake)
    assert caught.value.code == "UNSAFE_PATH"


def test_a_worktree_without_memory_is_not_initialized(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        sync(conn, tmp_path)
    assert caught.value.code == "MEMORY_NOT_INITIALIZED"


def test_a_fifo_named_as_a_document_is_reported_and_a_stray_file_left_alone(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    os.mkfifo(worktree / ".threadshare/memory/entries/pipe.md")
    write(worktree, "entries/notes.txt", "not a memory file")  # lint warns; no reader reads it
    write(worktree, "entries/.gitkeep", "")
    result = sync(conn, worktree)
    assert result.coverage == "partial"
    assert sorted((d.code, d.file) for d in result.diagnostics) == [
        ("not-a-file", ".threadshare/memory/entries/pipe.md"),
    ]


def test_crlf_and_bom_files_are_read_as_lf_text(conn: sqlite3.Connection, worktree: Path) -> None:
    write(
        worktree, "entries/crlf.md", entry_text("crlf", "Windows line ends.").replace("\n", "\r\n")
    )
    write(
        worktree, "entries/bom.md", b"\xef\xbb\xbf" + entry_text("bom", "Byte order mark.").encode()
    )
    result = sync(conn, worktree)
    assert result.coverage == "complete", result.diagnostics
    assert projected(conn) == {
        "entry:bom": "Byte order mark.\n",
        "entry:crlf": "Windows line ends.\n",
    }
    assert found(conn, "windows") == ["crlf"]


def revisions(conn: sqlite3.Connection, worktree_key: str = WORKTREE) -> dict[str, tuple[int, str]]:
    """Each projected document's (revision, content digest)."""
    rows = conn.execute(
        "SELECT kind, entry_id, revision, content_digest FROM approved_entries "
        "WHERE repository_key = ? AND worktree_key = ?",
        (REPO, worktree_key),
    )
    return {f"{kind}:{entry_id}": (revision, digest) for kind, entry_id, revision, digest in rows}


def test_an_lf_files_digest_and_revision_are_what_they_always_were(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/auth-cookie.md", entry_text("auth-cookie", "Keep the session cookie."))
    sync(conn, worktree)
    # computed by the projection before digests read CRLF as LF (the sha256 of the bytes):
    # consolidated.json files and bound revisions made then stay valid
    assert revisions(conn)["entry:auth-cookie"] == (
        3685020437734950,
        "d1781ae2e66259453ae6b341640835c9b2693f37d3f1ecbb161194c526351c52",
    )


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def test_a_crlf_checkout_has_the_digests_and_revisions_of_its_lf_clone(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path
) -> None:
    files = {
        "entries/auth-cookie.md": entry_text("auth-cookie", "Keep the session cookie."),
        "scenes/releases.md": SCENE,
        "doctrine.md": "# Doctrine\n\n- Verify before you claim.\n",
    }
    windows = tmp_path / "windows-clone"
    windows.mkdir()
    init_tree(windows)
    for relative, text in files.items():
        write(worktree, relative, text)
        write(windows, relative, crlf(text))
    lf, checkout = sync(conn, worktree), sync(conn, windows, worktree_key=OTHER_WORKTREE)
    assert checkout.coverage == "complete", checkout.diagnostics
    assert revisions(conn, OTHER_WORKTREE) == revisions(conn) and len(revisions(conn)) == 3
    assert checkout.source_tree_digest == lf.source_tree_digest

    edited = crlf(entry_text("auth-cookie", "Keep the session cookie httpOnly."))
    write(windows, "entries/auth-cookie.md", edited)
    sync(conn, windows, worktree_key=OTHER_WORKTREE)
    assert (
        revisions(conn, OTHER_WORKTREE)["entry:auth-cookie"] != revisions(conn)["entry:auth-cookie"]
    )


def test_invalid_utf8_is_a_located_diagnostic(conn: sqlite3.Connection, worktree: Path) -> None:
    data = entry_text("latin", "caf\u00e9").encode("utf-8").replace("é".encode(), b"\xe9")
    write(worktree, "entries/latin.md", data)
    assert only_diagnostic(sync(conn, worktree)) == (
        "format.invalid-utf8",
        ".threadshare/memory/entries/latin.md",
        16,
        None,
    )


def test_an_unchanged_partial_tree_still_reports_its_diagnostics(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    write(worktree, "entries/renamed.md", entry_text("original-name"))
    first = sync(conn, worktree)
    again = sync(conn, worktree)
    assert again.outcome == "unchanged"
    assert (again.coverage, again.diagnostics) == ("partial", first.diagnostics)
    # fixing the file completes the projection
    (worktree / ".threadshare/memory/entries/renamed.md").rename(
        worktree / ".threadshare/memory/entries/original-name.md"
    )
    fixed = sync(conn, worktree)
    assert (fixed.outcome, fixed.generation, fixed.coverage) == ("rebuilt", 2, "complete")


# -- files that change while they are read ----------------------------------------------------


def edit_while_reading(path: Path, times: int) -> Callable[[str], None]:
    """After the projection has read `path`, append to the real file (before the re-stat)."""
    remaining = [times]

    def hook(repo_relative: str) -> None:
        if remaining[0] > 0 and path.as_posix().endswith(repo_relative):
            remaining[0] -= 1
            with path.open("a", encoding="utf-8") as handle:
                handle.write("Edited while it was being read.\n")

    return hook


def test_a_file_edited_once_during_the_read_is_rescanned(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    path = write(worktree, "entries/busy.md", entry_text("busy", "First words."))
    result = sync(conn, worktree, after_read=edit_while_reading(path, times=1))
    assert (result.outcome, result.generation, result.coverage) == ("rebuilt", 1, "complete")
    assert "Edited while it was being read." in projected(conn)["entry:busy"]


def test_a_file_that_keeps_changing_keeps_the_last_good_projection(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    path = write(worktree, "entries/busy.md", entry_text("busy", "Stable words."))
    assert sync(conn, worktree).generation == 1
    path.write_text(entry_text("busy", "Newer words."))
    result = sync(conn, worktree, after_read=edit_while_reading(path, times=2))
    assert (result.outcome, result.generation, result.coverage) == ("drifted", 1, "partial")
    assert [(d.code, d.file) for d in result.diagnostics] == [
        ("source-drift", ".threadshare/memory/entries/busy.md")
    ]
    assert found(conn, "stable") == ["busy"]  # the old rows stay, declared partial
    search = search_memory(conn, repository_key=REPO, worktree_key=WORKTREE, query="stable")
    assert (search.generation, search.coverage) == (1, "partial")
    settled = sync(conn, worktree)
    assert (settled.outcome, settled.generation, settled.coverage) == ("rebuilt", 2, "complete")
    assert found(conn, "newer") == ["busy"]


def test_a_drift_on_the_first_sync_leaves_generation_zero(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    path = write(worktree, "entries/busy.md", entry_text("busy"))
    result = sync(conn, worktree, after_read=edit_while_reading(path, times=2))
    assert (result.outcome, result.generation, result.coverage) == ("drifted", 0, "partial")
    assert projected(conn) == {}
    assert sync(conn, worktree).generation == 1


def test_a_file_added_during_the_read_is_drift(conn: sqlite3.Connection, worktree: Path) -> None:
    write(worktree, "entries/a.md", entry_text("a"))
    added: list[Path] = []

    def add_a_file(_path: str) -> None:
        if len(added) < 2:
            added.append(
                write(worktree, f"entries/new-{len(added)}.md", entry_text(f"new-{len(added)}"))
            )

    result = sync(conn, worktree, after_read=add_a_file)
    assert result.outcome == "drifted"
    assert {d.file for d in result.diagnostics} == {".threadshare/memory/entries"}


def test_a_concurrent_sync_that_finished_first_is_not_overwritten(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path
) -> None:
    write(worktree, "entries/a.md", entry_text("a"))
    other = open_state_db(tmp_path / "home")
    done: list[ProjectionResult] = []

    def other_process_syncs(_path: str) -> None:
        if not done:
            worker = threading.Thread(target=lambda: done.append(sync(other, worktree)))
            worker.start()
            worker.join()

    result = sync(conn, worktree, after_read=other_process_syncs)
    assert done[0].generation == 1
    assert (result.outcome, result.generation) == ("unchanged", 1)
    other.close()


def test_a_crash_inside_the_replacement_keeps_the_previous_generation(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path
) -> None:
    write(worktree, "entries/a.md", entry_text("a", "Before the crash."))
    sync(conn, worktree)
    write(worktree, "entries/a.md", entry_text("a", "After the crash."))
    script = (
        "import sys; from pathlib import Path\n"
        "from teamlore.memory.store.state_db import open_state_db\n"
        "from teamlore.memory.store.projection import sync_approved_projection\n"
        "conn = open_state_db(Path(sys.argv[1]))\n"
        "sync_approved_projection(conn, repository_key=sys.argv[2], worktree_key=sys.argv[3],"
        " worktree_root=Path(sys.argv[4]))\n"
    )
    env = {**os.environ, "TEAMLORE_FAILPOINT": "memory.projection.rows-replaced"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "home"), REPO, WORKTREE, str(worktree)],
        env=env,
        check=False,
    )
    assert proc.returncode == -9
    search = search_memory(conn, repository_key=REPO, worktree_key=WORKTREE, query="crash")
    assert search.generation == 1
    assert projected(conn) == {"entry:a": "Before the crash.\n"}
    assert sync(conn, worktree).generation == 2


# -- the reference tree -----------------------------------------------------------------------


def test_the_reference_tree_projects_completely(conn: sqlite3.Connection, tmp_path: Path) -> None:
    source = FIXTURES / "threadshare-memory"
    if not source.is_dir():
        pytest.skip("../shared/fixtures is not present in this checkout")
    root = tmp_path / "reference"
    (root / ".threadshare").mkdir(parents=True)
    memory = root / ".threadshare/memory"
    memory.mkdir()
    for path in sorted(source.rglob("*")):
        target = memory / path.relative_to(source)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    entry_files = list((source / "entries").glob("*.md"))
    scene_files = list((source / "scenes").glob("*.md"))
    result = sync(conn, root)
    assert (result.coverage, result.diagnostics) == ("complete", [])
    assert (result.counts.entries, result.counts.scenes) == (len(entry_files), len(scene_files))
    assert "threadshare-memory-promotion-should-be-based-on-a-promotionp" in found(
        conn, "PromotionPlan blob hashes"
    )


# -- the unchanged-tree fast path -------------------------------------------------------------
# A sync records what a consistent scan saw (listings, each file's device/inode/size/mtime/ctime);
# the next sync trusts that record, without opening a file, only if every recorded file was
# already RACY_WINDOW_NS older than the recording scan. `settled_clock` puts the scans' clock
# 10 s after the files were written, as on a real machine where the tree was edited a while ago.


@pytest.fixture
def settled_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_reader, "_now_ns", lambda: time.time_ns() + 10 * 10**9)


class Reads(list[str]):
    """The files a sync opened and read (the module's after_read seam)."""

    def __call__(self, path: str) -> None:
        self.append(path)


def a_settled_tree(conn: sqlite3.Connection, worktree: Path) -> ProjectionResult:
    write(worktree, "entries/auth-cookie.md", entry_text("auth-cookie", "Keep the cookie."))
    write(worktree, "entries/deploys.md", entry_text("deploys", "Deploy from main only."))
    write(worktree, "scenes/releases.md", SCENE)
    write(worktree, "doctrine.md", "# Doctrine\n\n- Verify before you claim.\n")
    write(worktree, "skills/release-checks/SKILL.md", SKILL)
    first = sync(conn, worktree)
    assert (first.outcome, first.coverage) == ("rebuilt", "complete")
    return first


def test_an_unchanged_settled_tree_is_answered_without_reading_a_file(
    conn: sqlite3.Connection, worktree: Path, settled_clock: None
) -> None:
    first = a_settled_tree(conn, worktree)
    changes = conn.total_changes
    reads = Reads()
    again = sync(conn, worktree, after_read=reads)
    assert reads == []
    assert again == first._replace(outcome="unchanged")
    assert conn.total_changes == changes


def test_the_fast_path_keeps_partial_coverage_and_its_diagnostics(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path, settled_clock: None
) -> None:
    write(worktree, "entries/good.md", entry_text("good"))
    write(worktree, "entries/broken.md", "no front matter at all\n")
    target = tmp_path / "elsewhere.md"
    target.write_text(entry_text("linked"))
    (worktree / ".threadshare/memory/entries/linked.md").symlink_to(target)
    first = sync(conn, worktree)
    assert first.coverage == "partial" and len(first.diagnostics) == 2
    reads = Reads()
    again = sync(conn, worktree, after_read=reads)
    assert reads == []
    assert again == first._replace(outcome="unchanged")


def test_a_same_size_edit_that_keeps_the_mtime_is_seen(
    conn: sqlite3.Connection, worktree: Path, settled_clock: None
) -> None:
    a_settled_tree(conn, worktree)
    path = worktree / ".threadshare/memory/entries/deploys.md"
    before = path.stat()
    path.write_text(entry_text("deploys", "Deploy from next only."))  # same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `cp -p` or a careful editor
    assert path.stat().st_size == before.st_size
    reads = Reads()
    result = sync(conn, worktree, after_read=reads)
    assert result.outcome == "rebuilt"
    assert len(reads) == 5
    assert "Deploy from next only." in projected(conn)["entry:deploys"]


def test_a_file_touched_within_the_racy_window_is_read_again(
    conn: sqlite3.Connection, worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scan_clock = time.time_ns() + 10 * 10**9
    monkeypatch.setattr(tree_reader, "_now_ns", lambda: scan_clock)
    write(worktree, "entries/deploys.md", entry_text("deploys", "Deploy from main only."))
    path = write(worktree, "scenes/releases.md", SCENE)
    # touched less than RACY_WINDOW_NS before the scan that records it: a same-size write in the
    # same timestamp tick could leave the very same identity, so the record is never trusted
    racy = scan_clock - projection.RACY_WINDOW_NS // 2
    os.utime(path, ns=(racy, racy))
    assert sync(conn, worktree).outcome == "rebuilt"
    changes = conn.total_changes
    reads = Reads()
    assert sync(conn, worktree, after_read=reads).outcome == "unchanged"
    assert sorted(reads) == [
        ".threadshare/memory/entries/deploys.md",
        ".threadshare/memory/scenes/releases.md",
    ]
    assert conn.total_changes == changes  # still racy: a new record would not help
    # once the clock has moved on, the full read renews the record once, then nothing is read
    scan_clock += projection.RACY_WINDOW_NS
    assert sync(conn, worktree).outcome == "unchanged"
    assert conn.total_changes > changes
    reads = Reads()
    assert sync(conn, worktree, after_read=reads).outcome == "unchanged"
    assert reads == []


def test_files_just_written_are_read_on_every_sync_until_they_settle(
    conn: sqlite3.Connection, worktree: Path
) -> None:
    a_settled_tree(conn, worktree)  # the real clock: the files are milliseconds old
    changes = conn.total_changes
    reads = Reads()
    assert sync(conn, worktree, after_read=reads).outcome == "unchanged"
    assert len(reads) == 5
    assert conn.total_changes == changes  # a racy record is not worth writing


def rename_scene(memory: Path) -> None:
    (memory / "scenes/releases.md").rename(memory / "scenes/shipping.md")


def add_entry(memory: Path) -> None:
    (memory / "entries/new.md").write_text(entry_text("new"))


def remove_entry(memory: Path) -> None:
    (memory / "entries/deploys.md").unlink()


def swap_in_a_symlink(memory: Path) -> None:
    path = memory / "entries/deploys.md"
    copy = memory.parent.parent.parent / "deploys-copy.md"
    copy.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(copy)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (add_entry, {"entry:new"}),
        (remove_entry, set()),
        (rename_scene, {"scene:shipping"}),
        (swap_in_a_symlink, set()),
    ],
)
def test_a_changed_listing_is_read_again(
    conn: sqlite3.Connection,
    worktree: Path,
    settled_clock: None,
    change: Callable[[Path], None],
    expected: set[str],
) -> None:
    first = a_settled_tree(conn, worktree)
    change(worktree / ".threadshare/memory")
    reads = Reads()
    result = sync(conn, worktree, after_read=reads)
    assert result.outcome == "rebuilt"
    assert result.generation == first.generation + 1
    assert reads
    kept = {"doctrine:doctrine", "entry:auth-cookie", "skill:release-checks"}
    assert set(projected(conn)) - kept == expected | (
        {"entry:deploys"} if change in (add_entry, rename_scene) else set()
    ) | ({"scene:releases"} if change is not rename_scene else set())
    if change is swap_in_a_symlink:
        assert result.coverage == "partial"
        assert [d.code for d in result.diagnostics] == ["symlink"]


def test_a_memory_root_swapped_for_a_symlink_is_still_refused(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path, settled_clock: None
) -> None:
    a_settled_tree(conn, worktree)
    memory = worktree / ".threadshare/memory"
    moved = tmp_path / "moved-memory"
    memory.rename(moved)
    memory.symlink_to(moved, target_is_directory=True)
    with pytest.raises(errors.TeamloreError) as caught:
        sync(conn, worktree)
    assert caught.value.code == "UNSAFE_PATH"


@pytest.mark.parametrize(
    "stale",
    [
        "UPDATE approved_projection SET analyzer_version = 'analyzer@0'",
        "UPDATE approved_projection SET projector_version = 'teamlore-approved-projection@0'",
        "UPDATE approved_projection SET coverage = 'partial'",  # what a drifted sync leaves
        "UPDATE approved_source_stats SET source_tree_digest = '" + "e5" * 32 + "'",
        "DELETE FROM approved_source_stats",
    ],
)
def test_a_stale_projection_or_record_forces_a_full_read(
    conn: sqlite3.Connection, worktree: Path, settled_clock: None, stale: str
) -> None:
    first = a_settled_tree(conn, worktree)
    conn.execute(stale)
    reads = Reads()
    result = sync(conn, worktree, after_read=reads)
    assert len(reads) == 5
    if "approved_source_stats" in stale:
        assert (result.outcome, result.generation) == ("unchanged", first.generation)
        reads = Reads()
        assert sync(conn, worktree, after_read=reads).outcome == "unchanged"
        assert reads == []  # the full read recorded the tree again
    else:
        assert (result.outcome, result.generation) == ("rebuilt", first.generation + 1)


def test_a_crlf_checkout_projected_with_its_bytes_digests_is_read_again(
    conn: sqlite3.Connection, worktree: Path, settled_clock: None
) -> None:
    text = entry_text("auth-cookie", "Keep the cookie.")
    write(worktree, "entries/auth-cookie.md", crlf(text))
    sync(conn, worktree)
    old = sha256_hex(crlf(text).encode())  # what projector @2 recorded: the bytes' sha256
    conn.execute(
        "UPDATE approved_entries SET content_digest = ?, revision = ?",
        (old, int(old[:13], 16) + 1),
    )
    conn.execute(
        "UPDATE approved_projection SET projector_version = 'teamlore-approved-projection@2'"
    )
    assert sync(conn, worktree).outcome == "rebuilt"  # not the unchanged-tree fast path
    assert revisions(conn)["entry:auth-cookie"][1] == sha256_hex(text.encode())


def test_the_recorded_identities_stay_in_the_private_state_db(
    conn: sqlite3.Connection, tmp_path: Path, worktree: Path, settled_clock: None
) -> None:
    a_settled_tree(conn, worktree)
    assert conn.execute("SELECT count(*) FROM approved_source_stats").fetchone()[0] == 1
    for path in (tmp_path / "home").iterdir():
        if path.name.startswith("memory-state.sqlite3"):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
