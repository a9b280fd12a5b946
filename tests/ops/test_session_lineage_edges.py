"""`sessions list` and `sessions show`'s lineage (ops/sessions/lineage.py) at its edges: what a
listing of many sessions costs in queries, and a transcript line before a promptless turn that
the standard json cannot read."""

from __future__ import annotations

from pathlib import Path

from support import Cli, fixture_sources, shared_fixtures
from teamlore.ops.sessions.lineage import with_derived_titles
from teamlore.repo import tables
from teamlore.sessions.index_db import open_index
from teamlore.sessions.queries import list_sessions

MOREDIP = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"  # claude/moredip-0ccf1a04.jsonl


def test_derived_titles_read_the_listing_in_batches_not_a_query_a_session(
    tmp_path: Path,
) -> None:
    """A listing of 10,000 sessions ran two queries a session (its row, its prompts): 20,000."""
    cli = Cli(tmp_path / "state")
    cli.json("sync", *fixture_sources())
    conn = open_index(tmp_path / "state")
    try:
        sessions = list_sessions(conn, limit=1000, repositories=tables.session_facts(conn))
        untitled = [s for s in sessions if not s["title"]]
        assert len(untitled) >= 20
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        with_derived_titles(conn, sessions)
        conn.set_trace_callback(None)
    finally:
        conn.close()
    assert all(s["derivedTitle"] for s in untitled)
    # one batch of rows, one of first prompts, one read of each parent's subagent calls, and
    # the later prompts of a session whose first names nothing (an injected text, a `/command`)
    parents = {s["parentSessionKey"] for s in sessions if s["parentSessionKey"]}
    assert len(statements) <= 2 + len(parents) + len(sessions) // 4, statements


def test_a_line_nested_deeper_than_json_reads_before_a_promptless_turn(tmp_path: Path) -> None:
    """The index's reader (orjson) passes such a line over as bad JSON; `startedBy` read it
    with the standard json, whose RecursionError made `sessions show` fail INTERNAL."""
    source = shared_fixtures("sessions", "claude", "moredip-0ccf1a04.jsonl")
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    plugin = next(n for n, line in enumerate(lines) if "<command-name>/plugin<" in line)
    deep = '{"type":"user","message":{"content":' + "[" * 100_000 + "]" * 100_000 + "}}\n"
    folder = tmp_path / "claude"
    folder.mkdir()
    (folder / "moredip.jsonl").write_text(
        "".join([*lines[:plugin], deep, *lines[plugin:]]), encoding="utf-8"
    )
    cli = Cli(tmp_path / "state")
    cli.json("sync", "--source", f"claude={folder}")
    shown = cli.json("sessions", "show", MOREDIP)
    started = {t["ordinal"]: t.get("startedBy") for t in shown["turns"]}
    assert started[2] == ["/plugin", "/publish-session"]
