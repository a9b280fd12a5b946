"""A machine-independent snapshot of everything `sync` stores for the real fixture files.

Every stored row (sessions, source files, turns, tool uses, file touches, observed commits,
diagnostics, FTS bodies and the results of a set of searches) is keyed by where it comes from
(fixture file, turn ordinal, tool sequence) and stored as a short sha256 of its values, so the
snapshot holds no transcript text, provider session id or absolute path. Row ids and keyed ids
(HMAC of a per-machine secret) are left out; what they point to is part of the key instead.

    .venv/bin/python tests/sessions/index_snapshot.py --write   # regenerate the golden file

Regenerate only when a change is meant to alter what is stored (say so in the commit).
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Any

import orjson

GOLDEN = Path(__file__).parent / "data" / "fixture_index_golden.json"
PROVIDERS = ("codex", "claude", "pi")
# searches whose ranked results must not change: words, identifiers, paths, CJK, prefixes,
# phrases, tool output and commands, with and without a provider filter
QUERIES: list[tuple[str, str | None]] = [
    ("test", None),
    ("error", None),
    ("fix the failing tests", None),
    ("git commit", None),
    ("parse_line", None),
    ("README", "claude"),
    ("package.json", None),
    ("npm install", "codex"),
    ("function", "pi"),
    ("dashboard", None),
    ("exit code", None),
    ('"no such file"', None),
    ("config*", None),
    ("中文", None),
    ("测试", None),
    ("TypeError", None),
    ("pytest", None),
    ("docker", None),
    ("commit", "codex"),
    ("import", "claude"),
]


def _h(values: Any) -> str:
    return hashlib.sha256(orjson.dumps(values)).hexdigest()[:20]


def sync_fixtures(fixtures: Path, home: Path) -> None:
    from teamlore.ops.registry import OpContext, run_operation

    ctx = OpContext(cwd=Path.cwd(), home=home)
    run_operation("sync", ctx, {"sources": [f"{p}={fixtures / p}" for p in PROVIDERS]})


def snapshot(conn: sqlite3.Connection, fixtures: Path) -> dict[str, dict[str, str]]:
    """Every stored row of an index built from `fixtures`, keyed by origin, as digests."""
    conn.row_factory = sqlite3.Row
    root = str(fixtures.resolve()) + "/"
    file_of_session: dict[int, str] = {}
    out: dict[str, dict[str, str]] = {}

    files: dict[str, str] = {}
    for r in conn.execute("SELECT * FROM source_files ORDER BY id"):
        name = r["path"].removeprefix(root)
        if r["session_id"] is not None:
            file_of_session[r["session_id"]] = name
        files[name] = _h(
            [
                r["provider"],
                r["size"],
                r["resume_offset"],
                r["resume_line"],
                r["status"],
                r["diagnostics"],
                _h(r["parser_state"].decode()) if r["parser_state"] else None,
            ]
        )
    out["source_files"] = files

    key_file: dict[str, str] = {}
    sessions: dict[str, str] = {}
    for r in conn.execute("SELECT * FROM sessions ORDER BY id"):
        key_file[r["session_key"]] = file_of_session.get(r["id"], f"?{r['id']}")
    for r in conn.execute("SELECT * FROM sessions ORDER BY id"):
        sessions[file_of_session.get(r["id"], f"?{r['id']}")] = _h(
            [
                r["provider"],
                r["provider_session_id"],
                key_file.get(r["parent_session_key"], r["parent_session_key"] and "?"),
                r["agent_id"],
                r["cwd"],
                r["git_branch"],
                r["model"],
                r["client_version"],
                r["title"],
                r["started_at"],
                r["ended_at"],
                r["turn_count"],
                r["available"],
            ]
        )
    out["sessions"] = sessions

    turn_name: dict[int, str] = {}
    turns: dict[str, str] = {}
    for r in conn.execute("SELECT * FROM turns ORDER BY id"):
        name = f"{file_of_session.get(r['session_id'], '?')}#{r['ordinal']}"
        turn_name[r["id"]] = name
        turns[name] = _h(
            [
                r["user_text"],
                r["assistant_text"],
                r["started_at"],
                r["ended_at"],
                r["sealed"],
                r["revision"],
                r["first_line"],
                r["last_line"],
            ]
        )
    out["turns"] = turns

    tool_name: dict[int, str] = {}
    tools: dict[str, str] = {}
    for r in conn.execute("SELECT * FROM tool_uses ORDER BY id"):
        name = f"{turn_name[r['turn_id']]}/{r['seq']}"
        tool_name[r["id"]] = name
        tools[name] = _h(
            [v for k, v in zip(r.keys(), r, strict=True) if k not in ("id", "turn_id")]
        )
    out["tool_uses"] = tools

    for table, columns in (
        ("file_touches", "path, kind"),
        ("observed_commits", "hash, is_full, from_commit_command"),
    ):
        grouped: dict[str, list[Any]] = {}
        for r in conn.execute(f"SELECT turn_id, tool_use_id, {columns} FROM {table} ORDER BY id"):
            owner = tool_name.get(r[1]) if r[1] is not None else turn_name[r[0]]
            grouped.setdefault(owner or "?", []).append(list(r)[2:])
        out[table] = {k: _h(v) for k, v in grouped.items()}

    diagnostics: dict[str, list[Any]] = {}
    for r in conn.execute(
        "SELECT f.path, d.code, d.line, d.message FROM diagnostics d"
        " JOIN source_files f ON f.id = d.source_file_id ORDER BY d.id"
    ):
        diagnostics.setdefault(r[0].removeprefix(root), []).append(list(r)[1:])
    out["diagnostics"] = {k: _h(v) for k, v in diagnostics.items()}

    out["fts"] = {
        turn_name.get(r[0], f"?{r[0]}"): _h([r[1], r[2]])
        for r in conn.execute("SELECT rowid, body, scope FROM turns_fts ORDER BY rowid")
    }
    # where each passage of a turn starts in its FTS body (sessions/passages.py), added with
    # the passages (issue 25); every other table is as it was
    out["passages"] = {
        turn_name.get(r[0], f"?{r[0]}"): _h(array("I", r[1]).tolist())
        for r in conn.execute("SELECT turn_id, starts FROM turn_passages ORDER BY turn_id")
    }
    out["searches"] = _searches(conn, turn_name)
    return out


def _searches(conn: sqlite3.Connection, turn_name: dict[int, str]) -> dict[str, str]:
    """Ranked FTS matches of each query (the index, not the search read path above it)."""
    from teamlore.core.analyzer import fts_query
    from teamlore.sessions.index_db import body_match, scope_match

    results: dict[str, str] = {}
    for text, provider in QUERIES:
        for mode in ("all", "any"):
            match = body_match(fts_query(text, mode=mode))
            if provider:
                match += " AND " + scope_match(provider=provider)
            rows = conn.execute(
                "SELECT rowid, round(bm25(turns_fts, 1.0, 0.0), 6) FROM turns_fts"
                " WHERE turns_fts MATCH ? ORDER BY 2, rowid LIMIT 50",
                (match,),
            ).fetchall()
            results[f"{text} [{provider or 'all'}, {mode}]"] = _h(
                [[turn_name.get(r[0], "?"), r[1]] for r in rows]
            )
    return results


def build(fixtures: Path) -> dict[str, dict[str, str]]:
    from teamlore.sessions.index_db import open_index

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "state"
        home.mkdir(mode=0o700)
        sync_fixtures(fixtures, home)
        conn = open_index(home)
        try:
            return snapshot(conn, fixtures)
        finally:
            conn.close()


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).parents[1]))
    from support import SHARED_FIXTURES

    data = build(SHARED_FIXTURES / "sessions")
    if "--write" in argv:
        GOLDEN.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        print(f"wrote {GOLDEN} ({sum(len(v) for v in data.values())} rows)")
    else:
        print({k: len(v) for k, v in data.items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
