"""The L0 index database (`index.sqlite3`): derived from the session files, rebuildable. Its
schema, the MATCH expressions of its FTS table, and the one statement that ranks inside that
table (`ranked_turns`).

Absolute paths, provider session ids and raw transcripts live here, in the private state dir;
nothing in this database is ever written into a repository.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

from teamlore.core import db
from teamlore.core.analyzer import ANALYZER_VERSION
from teamlore.core.paths import resolve_home

INDEX_DB_NAME = "index.sqlite3"

SESSIONS_SCHEMA = """
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  session_key TEXT NOT NULL UNIQUE,
  provider TEXT NOT NULL,
  provider_session_id TEXT NOT NULL,
  parent_session_key TEXT,
  agent_id TEXT,
  cwd TEXT,
  git_branch TEXT,
  model TEXT,
  client_version TEXT,
  title TEXT,
  started_at TEXT,
  ended_at TEXT,
  worktree_key TEXT,
  turn_count INTEGER NOT NULL DEFAULT 0,
  available INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX sessions_worktree ON sessions(worktree_key, started_at);
CREATE INDEX sessions_started ON sessions(started_at);

CREATE TABLE source_files (
  id INTEGER PRIMARY KEY,
  provider TEXT NOT NULL,
  path TEXT NOT NULL UNIQUE,
  dev INTEGER,
  inode INTEGER,
  size INTEGER,
  mtime_ns INTEGER,
  head_sha256 TEXT,
  resume_offset INTEGER NOT NULL DEFAULT 0,
  resume_line INTEGER NOT NULL DEFAULT 0,
  parser_state BLOB,
  session_id INTEGER REFERENCES sessions(id) ON DELETE SET NULL,
  status TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'unavailable', 'failed')),
  diagnostics INTEGER NOT NULL DEFAULT 0,
  last_synced_at TEXT
);

CREATE TABLE turns (
  id INTEGER PRIMARY KEY,
  session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  user_text TEXT NOT NULL,
  assistant_text TEXT NOT NULL DEFAULT '',
  started_at TEXT,
  ended_at TEXT,
  sealed INTEGER NOT NULL DEFAULT 0,
  revision TEXT,
  first_line INTEGER,
  last_line INTEGER,
  UNIQUE (session_id, ordinal)
);
CREATE INDEX turns_started ON turns(started_at);

CREATE TABLE tool_uses (
  id INTEGER PRIMARY KEY,
  turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  name TEXT NOT NULL,
  family TEXT NOT NULL,
  input TEXT,
  command TEXT,
  result_head TEXT,
  result_tail TEXT,
  result_bytes INTEGER,
  result_sha256 TEXT,
  result_truncated INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('ok', 'error', 'unknown', 'pending')),
  started_at TEXT,
  ended_at TEXT,
  UNIQUE (turn_id, seq)
);
CREATE INDEX tool_uses_call ON tool_uses(turn_id, call_id);

CREATE TABLE file_touches (
  id INTEGER PRIMARY KEY,
  turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  tool_use_id INTEGER REFERENCES tool_uses(id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('write', 'read'))
);
CREATE INDEX file_touches_turn ON file_touches(turn_id);
CREATE INDEX file_touches_path ON file_touches(path);

CREATE TABLE observed_commits (
  id INTEGER PRIMARY KEY,
  turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  tool_use_id INTEGER REFERENCES tool_uses(id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  is_full INTEGER NOT NULL,
  from_commit_command INTEGER NOT NULL DEFAULT 0,
  UNIQUE (tool_use_id, hash)
);
CREATE INDEX observed_commits_hash ON observed_commits(hash);

CREATE TABLE diagnostics (
  id INTEGER PRIMARY KEY,
  source_file_id INTEGER REFERENCES source_files(id) ON DELETE CASCADE,
  code TEXT NOT NULL,
  line INTEGER,
  message TEXT NOT NULL,
  at TEXT NOT NULL
);

-- analyzed turn text (teamlore.core.analyzer); rowid = turns.id
CREATE VIRTUAL TABLE turns_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 0');
"""

REPOSITORY_SCHEMA = """
CREATE TABLE repositories (
  id INTEGER PRIMARY KEY,
  repository_key TEXT NOT NULL,
  worktree_key TEXT NOT NULL UNIQUE,
  worktree_root TEXT NOT NULL,
  git_common_dir TEXT NOT NULL,
  ref_digest TEXT,
  scanned_at TEXT,
  registered_at TEXT NOT NULL
);
CREATE INDEX repositories_repo ON repositories(repository_key);

CREATE TABLE commits (
  repository_key TEXT NOT NULL,
  hash TEXT NOT NULL,
  parents TEXT NOT NULL DEFAULT '',
  author_time TEXT,
  committer_time TEXT,
  subject TEXT,
  PRIMARY KEY (repository_key, hash)
);
CREATE INDEX commits_time ON commits(repository_key, committer_time);

CREATE TABLE commit_files (
  repository_key TEXT NOT NULL,
  hash TEXT NOT NULL,
  path TEXT NOT NULL,
  change TEXT NOT NULL,
  PRIMARY KEY (repository_key, hash, path)
);
CREATE INDEX commit_files_path ON commit_files(repository_key, path);

CREATE TABLE delivery_edges (
  id INTEGER PRIMARY KEY,
  repository_key TEXT NOT NULL,
  session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id INTEGER REFERENCES turns(id) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  strength TEXT NOT NULL CHECK (strength IN ('direct', 'observed', 'candidate', 'contextual')),
  reasons TEXT NOT NULL,
  limitations TEXT NOT NULL,
  revision TEXT NOT NULL,
  UNIQUE (session_id, turn_id, hash)
);
CREATE INDEX delivery_edges_turn ON delivery_edges(turn_id);
CREATE INDEX delivery_edges_hash ON delivery_edges(repository_key, hash);
"""

# Turn search filters by provider and worktree inside MATCH (a `scope` column of tokens), so a
# filtered search ranks only the turns it can return; BM25 weighs the body alone.
SCOPED_FTS = """
CREATE VIRTUAL TABLE turns_fts_scoped USING fts5(
  body, scope, tokenize = 'unicode61 remove_diacritics 0'
);
INSERT INTO turns_fts_scoped(rowid, body, scope)
  SELECT f.rowid, f.body,
         'provider' || s.provider || coalesce(' worktree' || substr(s.worktree_key, 1, 16), '')
  FROM turns_fts f JOIN turns t ON t.id = f.rowid JOIN sessions s ON s.id = t.session_id;
DROP TABLE turns_fts;
ALTER TABLE turns_fts_scoped RENAME TO turns_fts;
INSERT INTO turns_fts(turns_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
"""

# `sessions show` prints speech and tool calls in the order they happened
TOOL_ORDER = "ALTER TABLE tool_uses ADD COLUMN assistant_offset INTEGER;"

# turns as the provider meant them (docs/sessions.md): aborted and rolled-back turns, and the
# messages a client wrote in the assistant's place. Codex and Claude Code files are read again by
# the next sync (their saved parser state is dropped), so an upgraded index holds the markings.
TURN_MARKINGS = """
ALTER TABLE turns ADD COLUMN aborted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN rolled_back INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN notices TEXT;
UPDATE source_files SET parser_state = NULL, mtime_ns = NULL
  WHERE provider IN ('codex', 'claude') AND status != 'unavailable';
"""

# sessions from anywhere (docs/sessions.md, mapping sessions to worktrees): the repository the
# provider recorded at session start. Codex files are read again by the next sync to fill them.
SESSION_GIT = """
ALTER TABLE sessions ADD COLUMN git_remote TEXT;
ALTER TABLE sessions ADD COLUMN git_commit TEXT;
UPDATE source_files SET parser_state = NULL, mtime_ns = NULL
  WHERE provider = 'codex' AND status != 'unavailable';
"""

# hybrid session search: quantized turn vectors (sessions/turn_vectors.py)
TURN_VECTORS = """
CREATE TABLE vector_spaces (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  dimensions INTEGER NOT NULL
);

CREATE TABLE turn_vector_blocks (
  id INTEGER PRIMARY KEY,
  space_id INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
  size INTEGER NOT NULL,
  turn_ids BLOB NOT NULL,
  bits BLOB NOT NULL
);
CREATE INDEX turn_vector_blocks_space ON turn_vector_blocks(space_id);

CREATE TABLE turn_vectors (
  turn_id INTEGER PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
  space_id INTEGER NOT NULL REFERENCES vector_spaces(id) ON DELETE CASCADE,
  revision TEXT,
  block_id INTEGER,
  slot INTEGER,
  vector BLOB
);
"""

# a turn's passages (sessions/passages.py): where each starts in its turns_fts body, written and
# deleted with that row (no foreign key, like turns_fts: a REPLACE checked against one would
# open a statement journal, at which FTS5 flushes its pending terms). An index that already
# holds turns gets them from its own rows at the next sync (reanalyze.py), once; until then a
# search finds those of the turns it reads (`passage_starts`).
TURN_PASSAGES = """
CREATE TABLE turn_passages (
  turn_id INTEGER PRIMARY KEY,
  starts BLOB NOT NULL
);
INSERT INTO meta(key, value) SELECT 'passages', 'pending' WHERE EXISTS (SELECT 1 FROM turns);
"""

# the session of each slot beside its turn id (sessions/turn_vectors.py): a search filtered by
# provider or worktree drops the other sessions' candidates before reading their int8 rows.
# Blocks written before it hold NULL; the next sync rewrites them (`turn_vectors._compact`), and
# until then a search asks the turns table for their candidates' sessions.
TURN_VECTOR_SESSIONS = "ALTER TABLE turn_vector_blocks ADD COLUMN session_ids BLOB;"

# the parsers learnt records they passed over (docs/sessions.md): Claude Code's `cost-state`
# seals a `claude -p` run's last turn; Codex 0.171's MCP tool calls are indexed as
# `mcp__SERVER__TOOL` and its `tool_search` items are left out. The next sync reads both
# providers' files again, once, so an index made by an older version holds what this one would
# have indexed (without it a finished `claude -p` turn stayed open, and so out of extraction,
# until `sync --rebuild`).
PARSERS_READ_AGAIN = """
UPDATE source_files SET parser_state = NULL, mtime_ns = NULL
  WHERE provider IN ('codex', 'claude') AND status != 'unavailable';
"""

# Claude Code's `system/api_error` records (a model call failed and is retried) became notices of
# the turn they interrupted: Claude Code files are read again by the next sync, once, so the
# retries of sessions indexed before are searchable too.
CLAUDE_RETRIES_READ_AGAIN = """
UPDATE source_files SET parser_state = NULL, mtime_ns = NULL
  WHERE provider = 'claude' AND status != 'unavailable';
"""

# a Claude Code 2.1.112+ tool result written before the call it answers is paired with that call
# (it was an `unknown` tool beside a `pending` call): Claude Code files are read again by the
# next sync, once, so sessions indexed before show each such call once, with its result.
CLAUDE_EARLY_RESULTS_READ_AGAIN = """
-- schema 12: a text of its own, so that MIGRATIONS.index tells it from schema 11
UPDATE source_files SET parser_state = NULL, mtime_ns = NULL
  WHERE provider = 'claude' AND status != 'unavailable';
"""

MIGRATIONS: list[str] = [
    SESSIONS_SCHEMA,
    REPOSITORY_SCHEMA,
    SCOPED_FTS,
    TOOL_ORDER,
    TURN_MARKINGS,
    SESSION_GIT,
    TURN_VECTORS,
    TURN_PASSAGES,
    TURN_VECTOR_SESSIONS,
    PARSERS_READ_AGAIN,
    CLAUDE_RETRIES_READ_AGAIN,
    CLAUDE_EARLY_RESULTS_READ_AGAIN,
]


def fts_scope(provider: str, worktree_key: str | None) -> str:
    """The `scope` tokens of a turn in turns_fts (see `scope_match`)."""
    return f"provider{provider}" + (f" worktree{worktree_key[:16]}" if worktree_key else "")


def scope_match(*, provider: str | None = None, worktree_key: str | None = None) -> str:
    """MATCH terms restricting turns_fts to a provider and/or worktree ('' when neither)."""
    terms = []
    if provider:
        terms.append(f'scope : "provider{provider.replace(chr(34), "")}"')
    if worktree_key:
        terms.append(f'scope : "worktree{worktree_key[:16]}"')
    return " AND ".join(terms)


def body_match(match: str) -> str:
    """An analyzer MATCH expression applied to the turn text only (not the scope tokens).

    When no token of it can meet a scope token (`fts_scope`: `provider…`, `worktree…`), that is
    the expression itself, parenthesized (a caller may AND a scope to it): the same turns match
    and BM25 is the same (the scope column weighs 0 and holds none of its terms), but FTS5 no
    longer reads each match's positions to check its column, ~12 % of a search's ranking
    statement at 250k turns (docs/sessions.md, "Search speed")."""
    if _may_meet_scope(match):
        return f"body : ({match})"
    return f"({match})"


# every scope token starts with one of these (`fts_scope`)
_SCOPE_STEMS = ("provider", "worktree")
# an analyzer expression: quoted tokens (a prefix ends in `*`), parentheses and operators
_QUOTED_TOKEN = re.compile(r'"((?:[^"]|"")*)"(\s*\*)?')
_OPERATORS = re.compile(r"\s*(?:\bAND\b|\bOR\b|\bNOT\b|[()+])\s*")


def _may_meet_scope(match: str) -> bool:
    """Whether a token of `match` may equal or prefix a scope token; True for anything that is
    not an analyzer expression (quoted tokens and operators), to be safe."""
    if _OPERATORS.sub("", _QUOTED_TOKEN.sub("", match)).strip():
        return True
    for token, star in _QUOTED_TOKEN.findall(match):
        folded = token.casefold()
        if any(stem in folded for stem in _SCOPE_STEMS):
            return True
        if star and any(stem.startswith(folded.strip()) for stem in _SCOPE_STEMS):
            return True
    return False


# -- ranking inside the FTS table (docs/sessions.md, "Search speed") ------------------------------

# With filters, this many times `limit` best matches are ranked before filtering; when that is
# not enough to fill `limit`, the query runs again over every match (never a silent prefix).
FILTER_OVERFETCH = 20
# BM25 over every match of a very common word is what makes a search slow (the cost grows with
# the number of matches). Beyond this many matching turns only the newest are ranked, and the
# result says so.
RANK_WINDOW = 10_000


def ranked_turns(
    conn: sqlite3.Connection,
    match: str,
    clauses: list[str],
    filter_params: list[Any],
    limit: int,
    *,
    with_body: bool = False,
    window: int | None = None,
) -> tuple[list[sqlite3.Row], bool]:
    """Rank inside the FTS table first and join turn rows only for the best hits: fetching
    and joining every match of a common word is what makes naive ranking slow. `with_body`
    adds each hit's analyzed text (to count the query terms it holds); `window`: how many of
    the newest matches are ranked (RANK_WINDOW when None).

    One pass over the matches, newest first, yields each one's BM25 (at most RANK_WINDOW + 1
    of them): that pass both finds the rank window and scores it, so the MATCH (which for an
    identifier or a phrase reads long position lists) is evaluated once, not once for the window
    and again for the ranking; the best are picked in the same statement and only they are
    joined."""
    wanted = limit if not clauses else limit * FILTER_OVERFETCH
    window = RANK_WINDOW if window is None else window
    # the best `wanted` of the window, picked in SQL (not 10,000 rows through Python)
    best = conn.execute(
        "WITH newest AS MATERIALIZED (SELECT rowid AS id, bm25(turns_fts, 1.0, 0.0) AS rank"
        " FROM turns_fts WHERE turns_fts MATCH ? ORDER BY rowid DESC LIMIT ?),"
        " recent AS (SELECT id, rank FROM newest ORDER BY id DESC LIMIT ?)"
        " SELECT id, rank, (SELECT count(*) FROM newest) AS found FROM recent"
        " ORDER BY rank, id LIMIT ?",
        (match, window + 1, window, wanted),
    ).fetchall()
    found = int(best[0][2]) if best else 0
    ranked_all = found <= window
    candidates = (
        "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)",
        json.dumps([[row[0], row[1]] for row in best]),
    )
    rows = _turn_rows(conn, candidates, clauses, filter_params, limit, with_body)
    if clauses and len(rows) < limit and (len(best) < min(found, window) or not ranked_all):
        # the filter may keep turns outside the best candidates, or older than the window:
        # rank every match rather than return a short list
        every_match = (
            "SELECT rowid, bm25(turns_fts, 1.0, 0.0) FROM turns_fts WHERE turns_fts MATCH ?",
            match,
        )
        rows = _turn_rows(conn, every_match, clauses, filter_params, limit, with_body)
        ranked_all = True
    return rows, ranked_all


def _turn_rows(
    conn: sqlite3.Connection,
    candidates: tuple[str, str],
    clauses: list[str],
    filter_params: list[Any],
    limit: int,
    with_body: bool,
) -> list[sqlite3.Row]:
    """The turn rows of the `(id, bm25)` candidates (a SELECT and its one parameter) that pass
    the filters, best first."""
    select, param = candidates
    body = (
        ", (SELECT body FROM turns_fts WHERE rowid = t.id) AS body,"
        f" {passage_starts(conn, 't.id')} AS starts"
        if with_body
        else ""
    )
    where = " AND ".join(["1 = 1", *clauses])
    return conn.execute(
        f"WITH ranked(id, rank) AS ({select})"
        " SELECT t.id, t.ordinal, t.user_text, t.assistant_text, t.notices, s.session_key,"
        f" s.provider, ranked.rank AS rank{body} FROM ranked JOIN turns t ON t.id = ranked.id"
        f" JOIN sessions s ON s.id = t.session_id WHERE {where}"
        " ORDER BY ranked.rank, t.id LIMIT ?",
        (param, *filter_params, limit),
    ).fetchall()


# the `meta` key of what the last sync could not read (how many, the first ones), for `status`
LAST_SYNC_UNREADABLE = "last_sync_unreadable"

PASSAGES_PENDING = "SELECT 1 FROM meta WHERE key = 'passages'"
# the SQL function a search of such an index registers (queries.find_pending_passages)
FOUND_PASSAGES = "found_passages"


def passage_starts(conn: sqlite3.Connection, turn_id: str) -> str:
    """SQL for where the passages of the turn whose id is the SQL expression `turn_id` start.
    An index written before passages existed has none until the next sync stores them
    (reanalyze.py); until then they are found from the turn's own rows for the turns a search
    reads (FOUND_PASSAGES), so it ranks passages and cuts snippets as it will after that sync
    (the snippet is the passage that matched, not the prompt)."""
    stored = f"(SELECT starts FROM turn_passages WHERE turn_id = {turn_id})"
    if conn.execute(PASSAGES_PENDING).fetchone() is None:
        return stored
    return f"coalesce({stored}, {FOUND_PASSAGES}({turn_id}))"


def index_db_path(home: Path | None = None) -> Path:
    return resolve_home(home) / INDEX_DB_NAME


# A new index holds large rows (tool payloads up to 64 KiB, FTS segments): 32 KiB pages make a
# cold sync write fewer overflow pages (Codex rollouts store about twice Claude's tool output per
# MiB: a cold sync of them spends ~9 % less CPU than with 8 KiB pages). An existing database
# keeps its page size.
INDEX_PAGE_SIZE = 32768


def open_index(home: Path | None = None) -> sqlite3.Connection:
    # an older teamlore builds it anew from the session files: no copy before an upgrade
    path = index_db_path(home)
    conn = db.connect(path, MIGRATIONS, new_page_size=INDEX_PAGE_SIZE, remade=True)
    with db.write_tx(conn):
        # `index_id`: which index this file holds, written once (`teamlore watch` tells a new
        # index from the one it synced by it: the new file may get the old one's inode)
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('analyzer_version', ?),"
            " ('index_id', lower(hex(randomblob(16)))) ON CONFLICT(key) DO NOTHING",
            (ANALYZER_VERSION,),
        )
    return conn


def index_id(path: Path) -> str | None:
    """The `index_id` the index at `path` holds, read without writing a byte; None when there
    is no index there or it cannot be read (being made, damaged)."""
    import contextlib

    conn = db.open_read_only(path) if path.exists() else None
    if conn is None:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'index_id'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.close()
    return str(row[0]) if row else None


# a file written this recently is one a session may still be appending to (docs/sessions.md,
# "Searching what was just said"), the most recent of them first; the others wait for a sync
RECENT_FILE_NS = 7 * 86_400 * 1_000_000_000
RECENT_FILES = 1000


def stale_files(conn: sqlite3.Connection, *, now_ns: int) -> list[tuple[str, Path, int]]:
    """Indexed session files among the `RECENT_FILES` last written in the last week that
    changed since their last sync: (provider, path, bytes to read). One `stat` per such file;
    files the index never saw are not looked for (that is a sync's discovery). Files an
    upgrade left to be read again (no saved mtime: `PARSERS_READ_AGAIN`) come first, whole."""
    import os

    stale: list[tuple[str, Path, int]] = []
    rows = conn.execute(
        "SELECT provider, path, dev, inode, size, mtime_ns FROM source_files"
        " WHERE status = 'ok' AND (mtime_ns >= ? OR mtime_ns IS NULL)"
        " ORDER BY mtime_ns IS NULL DESC, mtime_ns DESC LIMIT ?",
        (now_ns - RECENT_FILE_NS, RECENT_FILES),
    )
    for provider, path, dev, inode, size, mtime_ns in rows:
        try:
            st = os.stat(path)
        except OSError:
            continue  # gone: a sync marks it unavailable
        if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) != (dev, inode, size, mtime_ns):
            grown = st.st_ino == inode and st.st_size >= size and mtime_ns is not None
            stale.append((provider, Path(path), st.st_size - size if grown else st.st_size))
    return stale


UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def provider_session_uuids(conn: sqlite3.Connection) -> frozenset[str]:
    """Every provider session id (its UUID parts, lowercase; a subagent's id holds its parent's)
    this machine has indexed: text bound for a repository must never carry one."""
    return frozenset(
        part.lower()
        for (value,) in conn.execute("SELECT DISTINCT provider_session_id FROM sessions")
        for part in UUID.findall(value or "")
    )
