"""The delivery trace: which turn links to which commit, how strongly, and with what limits.

One story runs through these tests. A session works in `src/` of the main worktree on
2025-03-01 from 09:00 to 09:30 UTC (commit window: each turn's start to 11:30):

- turn 1 (09:00) writes `app.py` (relative to its cwd) and runs `git commit`: commit `c1`
  (09:05) changes `src/app.py`, and the full hash appears in the commit output;
- turn 2 (09:10) writes `src/util.py` (absolute path) and `README.md`, and mentions c1's
  short hash in a `git log` result; `c2` (10:00, after the session) changes `src/util.py`;
  README.md was changed by four commits before the session;
- turn 3 (09:20) writes `src/new_module.py`; `c3` (10:30) changes `src/other.py` (same
  directory), `c4` (11:00) changes `docs/guide.md` (nothing in common), `c5` (12:00, after the
  window) changes `src/new_module.py`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from teamlore.core import errors
from teamlore.repo.binding import register_repository
from teamlore.repo.commits import scan_commits
from teamlore.repo.delivery import (
    CONTEXTUAL_PER_PATH,
    DeliveryEdge,
    build_delivery_edges,
    edge_revision,
    list_edges,
)
from teamlore.repo.worktrees import map_sessions

DAY = "2025-03-01T"


@dataclass
class Story:
    repository_key: str
    session: int
    turns: dict[int, int]  # ordinal -> turn id
    commits: dict[str, str]  # name -> hash


@pytest.fixture
def story(repo, conn: sqlite3.Connection, home: Path, rows) -> Story:
    commits = {
        "c0": repo.commit(
            "base",
            {"src/app.py": "0", "docs/guide.md": "0", "README.md": "0"},
            at=DAY + "08:00:00Z",
        )
    }
    for i in (1, 2, 3):
        commits[f"readme{i}"] = repo.commit(
            f"readme {i}", {"README.md": str(i)}, at=f"{DAY}08:{i}0:00Z"
        )
    commits["c1"] = repo.commit("app", {"src/app.py": "1"}, at=DAY + "09:05:00Z")
    commits["c2"] = repo.commit("util", {"src/util.py": "1"}, at=DAY + "10:00:00Z")
    commits["c3"] = repo.commit("other", {"src/other.py": "1"}, at=DAY + "10:30:00Z")
    commits["c4"] = repo.commit("guide", {"docs/guide.md": "1"}, at=DAY + "11:00:00Z")
    commits["c5"] = repo.commit("late", {"src/new_module.py": "1"}, at=DAY + "12:00:00Z")
    identity = register_repository(conn, repo.root, home)
    scan_commits(conn, identity)

    session = rows.session(
        str(repo.root / "src"), started_at=DAY + "09:00:00Z", ended_at=DAY + "09:30:00Z"
    )
    turns = {
        1: rows.turn(session, 1, started_at=DAY + "09:00:00.250Z", ended_at=DAY + "09:10:00Z"),
        2: rows.turn(session, 2, started_at=DAY + "09:10:00Z", ended_at=DAY + "09:20:00Z"),
        3: rows.turn(session, 3, started_at=DAY + "09:20:00Z", ended_at=DAY + "09:30:00Z"),
    }
    rows.write(turns[1], "app.py")
    rows.observed(turns[1], commits["c1"], from_commit_command=True)
    rows.write(turns[2], str(repo.root / "src" / "util.py"))
    rows.write(turns[2], "../README.md")
    rows.observed(turns[2], commits["c1"][:9], from_commit_command=False)
    rows.write(turns[3], str(repo.root / "src" / "new_module.py"))
    rows.read(turns[3], str(repo.root / "docs" / "guide.md"))
    map_sessions(conn)
    return Story(identity.repository_key, session, turns, commits)


def _edges(conn: sqlite3.Connection, story: Story) -> dict[tuple[int, str], DeliveryEdge]:
    names = {hash_: name for name, hash_ in story.commits.items()}
    return {
        (e.turn_ordinal, names.get(e.hash, e.hash)): e
        for e in list_edges(conn, story.repository_key)
    }


def test_full_hash_in_commit_output_is_direct(conn: sqlite3.Connection, story: Story) -> None:
    build_delivery_edges(conn, story.repository_key)
    edge = _edges(conn, story)[(1, "c1")]
    assert edge.strength == "direct"
    assert "full-hash-in-commit-output" in edge.reasons
    # the same turn also wrote src/app.py: kept as a reason, its weaker limits are not
    assert "path-overlap-in-window:src/app.py" in edge.reasons
    assert edge.limitations == ["not-exclusive-line-attribution"]


def test_unique_short_hash_in_a_tool_result_is_observed(
    conn: sqlite3.Connection, story: Story
) -> None:
    build_delivery_edges(conn, story.repository_key)
    edge = _edges(conn, story)[(2, "c1")]
    assert edge.strength == "observed"
    assert edge.reasons == ["short-hash-in-tool-output"]
    assert edge.limitations == ["not-authorship", "not-causality"]


def test_exact_path_overlap_inside_the_window_is_observed(
    conn: sqlite3.Connection, story: Story
) -> None:
    build_delivery_edges(conn, story.repository_key)
    edge = _edges(conn, story)[(2, "c2")]  # committed after the session, within 2 h
    assert edge.strength == "observed"
    assert edge.reasons == ["path-overlap-in-window:src/util.py"]
    assert edge.limitations == [
        "not-authorship",
        "not-causality",
        "not-exclusive-line-attribution",
    ]


def test_directory_overlap_inside_the_window_is_a_candidate(
    conn: sqlite3.Connection, story: Story
) -> None:
    build_delivery_edges(conn, story.repository_key)
    edge = _edges(conn, story)[(3, "c3")]
    assert edge.strength == "candidate"
    assert edge.reasons == ["directory-overlap-in-window:src/"]
    assert "directory-level-only" in edge.limitations
    assert {"not-authorship", "not-causality", "candidate-not-default"} <= set(edge.limitations)


def test_time_window_alone_with_writes_is_a_candidate(
    conn: sqlite3.Connection, story: Story
) -> None:
    build_delivery_edges(conn, story.repository_key)
    edge = _edges(conn, story)[(3, "c4")]  # turn 3 only read docs/guide.md
    assert edge.strength == "candidate"
    assert edge.reasons == ["time-window-with-writes"]
    assert "time-window-only" in edge.limitations


def test_the_same_file_changed_outside_the_window_is_contextual(
    conn: sqlite3.Connection, story: Story
) -> None:
    build_delivery_edges(conn, story.repository_key)
    edges = _edges(conn, story)
    late = edges[(3, "c5")]
    assert late.strength == "contextual"
    assert late.reasons == ["path-overlap-outside-window:src/new_module.py"]
    assert {"outside-window", "path-only-context", "not-authorship", "not-causality"} == set(
        late.limitations
    )
    assert edges[(2, "readme3")].strength == "contextual"  # before the turn started


def test_contextual_links_keep_the_nearest_commits_and_count_the_rest(
    conn: sqlite3.Connection, story: Story
) -> None:
    result = build_delivery_edges(conn, story.repository_key)
    edges = _edges(conn, story)
    readme = [name for (ordinal, name) in edges if ordinal == 2 and name.startswith("readme")]
    assert sorted(readme) == ["readme1", "readme2", "readme3"]
    assert CONTEXTUAL_PER_PATH == 3 and (2, "c0") not in edges
    assert result.contextual_omitted >= 1


def test_commits_before_a_turn_starts_are_only_contextual(
    conn: sqlite3.Connection, story: Story
) -> None:
    build_delivery_edges(conn, story.repository_key)
    edges = _edges(conn, story)
    # c1 (09:05) changed src/app.py, a sibling of turn 3's file, before turn 3 (09:20) began:
    # a directory match outside the window is no link at all
    assert (3, "c1") not in edges
    assert edges[(3, "c2")].strength == "candidate"  # 10:00, inside turn 3's window
    assert edges[(2, "readme3")].strength == "contextual"


def test_ambiguous_short_hashes_never_become_direct_or_observed(
    conn: sqlite3.Connection, story: Story, rows
) -> None:
    # two stored commits that share a 7-hex prefix (a real collision needs ~16k commits)
    twins = ["abcdef1" + "0" * 33, "abcdef1" + "f" * 33]
    for twin in twins:
        conn.execute(
            "INSERT INTO commits (repository_key, hash, parents, author_time, committer_time,"
            " subject) VALUES (?, ?, '', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z', 't')",
            (story.repository_key, twin),
        )
    rows.observed(story.turns[1], "abcdef1", from_commit_command=True)

    result = build_delivery_edges(conn, story.repository_key)

    edges = _edges(conn, story)
    assert result.ambiguous_short_hashes == 1
    for twin in twins:
        edge = edges[(1, twin)]
        assert edge.strength == "candidate"
        assert "ambiguous-short-hash" in edge.limitations
        assert edge.reasons == ["ambiguous-short-hash:abcdef1"]


def test_full_hashes_not_in_the_repository_are_counted_not_linked(
    conn: sqlite3.Connection, story: Story, rows
) -> None:
    rows.observed(story.turns[1], "1" * 40, from_commit_command=True)
    result = build_delivery_edges(conn, story.repository_key)
    assert result.unmatched_hashes == 1
    assert all(e.hash != "1" * 40 for e in list_edges(conn, story.repository_key))


def test_written_paths_outside_the_worktree_are_counted(
    conn: sqlite3.Connection, story: Story, rows, tmp_path: Path
) -> None:
    rows.write(story.turns[3], str(tmp_path / "notes.txt"))
    rows.write(story.turns[3], "C:\\work\\src\\app.py")
    result = build_delivery_edges(conn, story.repository_key)
    assert result.paths_outside_worktree == 2


def test_a_turn_without_timestamps_uses_the_session_start_and_says_so(
    repo, conn: sqlite3.Connection, story: Story, rows
) -> None:
    turn = rows.turn(story.session, 4, started_at=None, ended_at=None)
    rows.write(turn, str(repo.root / "src" / "util.py"))
    build_delivery_edges(conn, story.repository_key)
    edge = _edges(conn, story)[(4, "c2")]
    assert edge.strength == "observed"
    assert "incomplete-timestamps" in edge.limitations


def test_sessions_of_other_worktrees_of_the_repository_are_traced(
    repo, conn: sqlite3.Connection, home: Path, story: Story, rows, tmp_path: Path
) -> None:
    feature = repo.worktree_add(tmp_path / "feature", "feature")
    register_repository(conn, feature.root, home)
    commit = feature.commit("feature work", {"feature.txt": "f"}, at=DAY + "13:00:00Z")
    scan_commits(conn, register_repository(conn, feature.root, home))
    session = rows.session(str(feature.root), started_at=DAY + "12:50:00Z")
    turn = rows.turn(session, 1, started_at=DAY + "12:50:00Z", ended_at=DAY + "13:01:00Z")
    rows.observed(turn, commit, from_commit_command=True)
    rows.write(turn, "feature.txt")
    unmapped = rows.session(str(tmp_path))
    rows.observed(rows.turn(unmapped, 1), commit, from_commit_command=True)
    map_sessions(conn)

    build_delivery_edges(conn, story.repository_key)

    edges = list_edges(conn, story.repository_key, session_id=session)
    assert [(e.hash, e.strength) for e in edges] == [(commit, "direct")]
    assert list_edges(conn, story.repository_key, session_id=unmapped) == []


def test_rebuild_is_idempotent(conn: sqlite3.Connection, story: Story) -> None:
    first = build_delivery_edges(conn, story.repository_key)
    rows_before = conn.execute("SELECT * FROM delivery_edges ORDER BY id").fetchall()
    second = build_delivery_edges(conn, story.repository_key)
    rows_after = conn.execute("SELECT * FROM delivery_edges ORDER BY id").fetchall()
    assert first.inserted == len(rows_before) > 0
    assert (second.inserted, second.updated, second.deleted) == (0, 0, 0)
    assert second.unchanged == len(rows_before)
    assert [tuple(r) for r in rows_before] == [tuple(r) for r in rows_after]
    assert first.edges == second.edges


def test_revision_is_the_digest_of_the_edge_content(conn: sqlite3.Connection, story: Story) -> None:
    build_delivery_edges(conn, story.repository_key)
    for edge in list_edges(conn, story.repository_key):
        assert edge.revision == edge_revision(
            edge.repository_key,
            edge.session_key,
            edge.turn_ordinal,
            edge.hash,
            edge.strength,
            edge.reasons,
            edge.limitations,
        )
    revisions = {e.revision for e in list_edges(conn, story.repository_key)}
    assert len(revisions) == len(list_edges(conn, story.repository_key))


def test_new_evidence_updates_only_the_affected_edge(
    conn: sqlite3.Connection, story: Story, rows
) -> None:
    build_delivery_edges(conn, story.repository_key)
    before = _edges(conn, story)[(2, "c2")]
    rows.observed(story.turns[2], story.commits["c2"], from_commit_command=True)

    result = build_delivery_edges(conn, story.repository_key)

    after = _edges(conn, story)[(2, "c2")]
    assert (result.inserted, result.updated, result.deleted) == (0, 1, 0)
    assert after.strength == "direct" and after.revision != before.revision


def test_an_unmapped_session_loses_its_edges(conn: sqlite3.Connection, story: Story) -> None:
    build_delivery_edges(conn, story.repository_key)
    conn.execute("UPDATE sessions SET cwd = '/nowhere' WHERE id = ?", (story.session,))
    map_sessions(conn)
    result = build_delivery_edges(conn, story.repository_key)
    assert result.deleted > 0 and result.sessions == 0
    assert list_edges(conn, story.repository_key) == []


def test_an_unregistered_repository_is_refused(conn: sqlite3.Connection) -> None:
    with pytest.raises(errors.TeamloreError) as caught:
        build_delivery_edges(conn, "0" * 24)
    assert caught.value.code == errors.REPOSITORY_NOT_REGISTERED.code


def test_a_written_symlink_counts_at_its_own_repository_path(
    repo, conn: sqlite3.Connection, home: Path, story: Story, rows, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("x")
    (repo.root / "src" / "link.py").symlink_to(outside)
    link_commit = repo.commit("link", at=DAY + "10:15:00Z")
    scan_commits(conn, register_repository(conn, repo.root, home))
    rows.write(story.turns[3], str(repo.root / "src" / "link.py"))

    result = build_delivery_edges(conn, story.repository_key)

    edge = list_edges(conn, story.repository_key, turn_id=story.turns[3])
    assert [e.strength for e in edge if e.hash == link_commit] == ["observed"]
    assert result.paths_outside_worktree == 0


def test_sessions_show_lists_a_turns_edges_with_strength_reasons_and_limitations(
    conn: sqlite3.Connection, story: Story, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from teamlore.cli import output
    from teamlore.cli.commands import sessions as session_commands
    from teamlore.cli.literal_console import LiteralConsole
    from teamlore.repo.tables import session_facts
    from teamlore.sessions.queries import show_session

    build_delivery_edges(conn, story.repository_key)
    key = "abcdef0123456789"  # a key of the form sync writes (hex), so show can find it
    conn.execute("UPDATE sessions SET session_key = ? WHERE id = ?", (key, story.session))
    shown = show_session(conn, key, turn=1, repositories=session_facts(conn))
    [turn] = shown["turns"]
    edges = {e["hash"]: e for e in turn["deliveryEdges"]}
    direct = edges[story.commits["c1"]]
    assert direct["strength"] == "direct" and "full-hash-in-commit-output" in direct["reasons"]
    assert direct["limitations"] == ["not-exclusive-line-attribution"]
    assert turn["deliveryEdges"][0]["strength"] == "direct"  # strongest first
    buffer = io.StringIO()
    monkeypatch.setattr(output, "stdout", LiteralConsole(file=buffer))
    session_commands._render_show(shown)
    text = buffer.getvalue()
    assert f"delivered {story.commits['c1'][:12]} direct reasons: " in text
    assert "limitations: not-exclusive-line-attribution" in text
