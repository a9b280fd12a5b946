"""Read-side queries over the L0 index: list sessions, show one, search turns."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from teamlore.core import db, errors
from teamlore.core.analyzer import (
    ANALYZER_VERSION,
    Query,
    QueryTerm,
    searchable_query,
)
from teamlore.core.fusion import Fused, fuse, words_decide
from teamlore.core.shapes.records import Record, field
from teamlore.models.glosses import gloss_query, gloss_terms, has_chinese, segmented, term_text
from teamlore.sessions.index_db import (
    FOUND_PASSAGES,
    PASSAGES_PENDING,
    UUID,
    body_match,
    ranked_turns,
    scope_match,
)
from teamlore.sessions.passages import (
    FIRST_TIER,
    Held,
    Scored,
    Translation,
    best_turns,
    holding_phrase,
    passage_read_by,
    passage_snippet,
    query_phrase,
    readable_weight,
    tiers,
    translated_share,
    weighed,
)

if TYPE_CHECKING:
    from teamlore.models.embeddings import Embedder
    from teamlore.sessions.turn_vectors import VectorRanking


def _filters(
    *,
    provider: str | None,
    worktree_key: str | None,
    since: str | None,
    until: str | None,
    start: str,
    end: str,
) -> tuple[list[str], list[Any]]:
    """WHERE clauses for the common filters; the time window is half-open [since, until) and
    matches rows whose activity overlaps it (`start`/`end` name the row's time columns)."""
    clauses: list[str] = []
    params: list[Any] = []
    if provider:
        clauses.append("s.provider = ?")
        params.append(provider)
    if worktree_key:
        clauses.append("s.worktree_key = ?")
        params.append(worktree_key)
    if until:
        clauses.append(f"{start} < ?")
        params.append(until)
    if since:
        clauses.append(f"coalesce({end}, {start}) >= ?")
        params.append(since)
    return clauses, params


class RepositoryFacts(Record, frozen=True):
    """What the session views show of the repository tables: folder names of registered
    worktrees and a turn's delivery edges. Their owner (`repo.tables.session_facts`) supplies
    them; this package sits below `repo` and never queries those tables itself."""

    names: Mapping[str, str] = field(default_factory=dict)  # worktree_key → folder name
    turn_edges: Callable[[int], list[dict[str, Any]]] = lambda turn_id: []


NO_REPOSITORIES = RepositoryFacts()


def list_sessions(
    conn: sqlite3.Connection,
    *,
    repositories: RepositoryFacts = NO_REPOSITORIES,
    provider: str | None = None,
    worktree_key: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = None,
    unmapped: bool = False,
) -> list[dict[str, Any]]:
    """Sessions newest first; `unmapped`: only those no registered worktree owns."""
    where, params = _session_filters(provider, worktree_key, since, until, unmapped)
    sql = f"SELECT s.* FROM sessions s WHERE {where} ORDER BY s.started_at DESC, s.id DESC"
    if limit:
        sql += f" LIMIT {int(limit)}"
    return [_session_json(row, repositories) for row in conn.execute(sql, params)]


def count_sessions(
    conn: sqlite3.Connection,
    *,
    provider: str | None = None,
    worktree_key: str | None = None,
    since: str | None = None,
    until: str | None = None,
    unmapped: bool = False,
) -> int:
    """How many sessions `list_sessions` would list without a limit."""
    where, params = _session_filters(provider, worktree_key, since, until, unmapped)
    return int(conn.execute(f"SELECT count(*) FROM sessions s WHERE {where}", params).fetchone()[0])


def unmapped_folders(
    conn: sqlite3.Connection,
    *,
    provider: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int,
) -> tuple[list[dict[str, Any]], int]:
    """The folders the sessions no registered worktree owns were started in, each once with
    how many it holds and the newest start, most sessions first (then newest); and how many
    folders there are in all."""
    where, params = _session_filters(provider, None, since, until, True)
    grouped = (
        "SELECT s.cwd, count(*) AS n, max(s.started_at) AS newest FROM sessions s"
        f" WHERE {where} GROUP BY s.cwd"
    )
    rows = conn.execute(
        f"{grouped} ORDER BY n DESC, newest DESC, s.cwd LIMIT ?", [*params, limit]
    ).fetchall()
    total = conn.execute(f"SELECT count(*) FROM ({grouped})", params).fetchone()[0]
    folders = [{"cwd": r["cwd"], "sessions": r["n"], "newestStartedAt": r["newest"]} for r in rows]
    return folders, int(total)


def _session_filters(
    provider: str | None,
    worktree_key: str | None,
    since: str | None,
    until: str | None,
    unmapped: bool,
) -> tuple[str, list[Any]]:
    clauses, params = _filters(
        provider=provider,
        worktree_key=worktree_key,
        since=since,
        until=until,
        start="s.started_at",
        end="s.ended_at",
    )
    where = ["1 = 1", *clauses, *(["s.worktree_key IS NULL"] if unmapped else [])]
    return " AND ".join(where), params


def _repository_json(row: sqlite3.Row, repositories: RepositoryFacts) -> dict[str, Any] | None:
    if not row["worktree_key"]:
        return None
    name = repositories.names.get(row["worktree_key"], "")
    return {"name": name, "worktreeKey": row["worktree_key"]}


def _session_json(row: sqlite3.Row, repositories: RepositoryFacts) -> dict[str, Any]:
    return {
        "provider": row["provider"],
        "sessionKey": row["session_key"],
        "cwd": row["cwd"],
        "startedAt": row["started_at"],
        "endedAt": row["ended_at"],
        "turns": row["turn_count"],
        "repository": _repository_json(row, repositories),
        "parentSessionKey": row["parent_session_key"],
        "model": row["model"],
        "title": row["title"],
        "gitBranch": row["git_branch"],
        "clientVersion": row["client_version"],
        "available": bool(row["available"]),
    }


MIN_KEY_PREFIX = 8


def resolve_session_key(conn: sqlite3.Connection, key: str) -> str:
    """The full sessionKey of the session `key` names (see `_session_row`)."""
    return str(_session_row(conn, key)["session_key"])


def _session_row(conn: sqlite3.Connection, key: str) -> sqlite3.Row:
    """The session with this key, with this unique key prefix (>= 8 hex characters, as in
    git, so people can type the short form `sessions list` shows), or with this provider
    session id (the UUID in the session's file name)."""
    select = "SELECT s.* FROM sessions s"
    key = key.strip().lower()
    if UUID.fullmatch(key):
        # the provider's own session id (a Claude Code file name, what `claude --resume` takes)
        rows = conn.execute(
            f"{select} WHERE lower(s.provider_session_id) = ? ORDER BY s.agent_id IS NOT NULL"
            " LIMIT 2",
            (key,),
        ).fetchall()
        if rows:
            row = rows[0]
            assert isinstance(row, sqlite3.Row)
            return row
    if len(key) >= MIN_KEY_PREFIX and all(c in "0123456789abcdef" for c in key):
        rows = conn.execute(
            f"{select} WHERE s.session_key >= ? AND s.session_key < ? LIMIT 2",
            (key, key + "g"),
        ).fetchall()
    else:
        rows = []
    if len(rows) > 1:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"{key} matches several sessions; give more characters"
        )
    if not rows:
        raise errors.TeamloreError(errors.SESSION_NOT_FOUND, _not_found(key))
    row = rows[0]
    assert isinstance(row, sqlite3.Row)
    return row


def _not_found(key: str) -> str:
    """SESSION_NOT_FOUND's message: a hex key shorter than a prefix names no session, and says
    how long one must be (the short form `sessions list` shows is 12)."""
    short = len(key) < MIN_KEY_PREFIX and all(c in "0123456789abcdef" for c in key)
    more = f": give at least {MIN_KEY_PREFIX} characters of the key" if short and key else ""
    return f"no indexed session has key {key}{more}"


def show_session(
    conn: sqlite3.Connection,
    key: str,
    *,
    turn: int | None = None,
    start: int = 1,
    limit: int | None = None,
    repositories: RepositoryFacts = NO_REPOSITORIES,
) -> dict[str, Any]:
    """One session and its turns: the one `turn`, else at most `limit` turns from ordinal
    `start` on, with the page they make (`page.next`: the first ordinal after it, None at the
    end; docs/sessions.md, "Showing a session")."""
    row = _session_row(conn, key)
    if turn is not None:
        start, limit = turn, 1
    rows = conn.execute(
        "SELECT * FROM turns WHERE session_id = ? AND ordinal >= ? ORDER BY ordinal LIMIT ?",
        (row["id"], start, -1 if limit is None else limit + 1),
    ).fetchall()
    if turn is not None and (not rows or rows[0]["ordinal"] != turn):
        turns = int(row["turn_count"])
        raise errors.TeamloreError(
            errors.TURN_NOT_FOUND,
            f"session {key} has {turns} turn{'' if turns == 1 else 's'}; there is no turn {turn}",
        )
    shown = rows if limit is None else rows[:limit]
    after = rows[limit]["ordinal"] if limit is not None and len(rows) > limit else None
    result = {
        "session": _session_json(row, repositories),
        "turns": [_turn_json(conn, t, repositories) for t in shown],
    }
    if turn is None:
        result["page"] = {"from": start, "turns": len(shown), "next": after}
    return result


def _turn_json(
    conn: sqlite3.Connection, t: sqlite3.Row, repositories: RepositoryFacts
) -> dict[str, Any]:
    # a turn's file touches by turn (indexed), grouped by tool use: one query per turn, where a
    # query per tool use scanned the whole table each time (150 s for a 100k-turn session)
    touches: dict[int, list[sqlite3.Row]] = {}
    for r in conn.execute(
        "SELECT tool_use_id, path, kind FROM file_touches WHERE turn_id = ? ORDER BY id",
        (t["id"],),
    ):
        touches.setdefault(r["tool_use_id"], []).append(r)
    tools = []
    for u in conn.execute("SELECT * FROM tool_uses WHERE turn_id = ? ORDER BY seq", (t["id"],)):
        used = touches.get(u["id"], [])
        commits = conn.execute(
            "SELECT hash, is_full, from_commit_command FROM observed_commits"
            " WHERE tool_use_id = ? ORDER BY id",
            (u["id"],),
        ).fetchall()
        tools.append(
            {
                "seq": u["seq"] + 1,
                "name": u["name"],
                "family": u["family"],
                "command": u["command"],
                "input": _maybe_json(u["input"]),
                "status": u["status"],
                "exitCode": u["exit_code"],
                "result": {
                    "bytes": u["result_bytes"],
                    "sha256": u["result_sha256"],
                    "truncated": bool(u["result_truncated"]),
                    "head": u["result_head"],
                    "tail": u["result_tail"],
                },
                "assistantOffset": u["assistant_offset"],
                "pathsWritten": [r["path"] for r in used if r["kind"] == "write"],
                "pathsRead": [r["path"] for r in used if r["kind"] == "read"],
                "commits": [
                    {
                        "hash": c["hash"],
                        "full": bool(c["is_full"]),
                        "fromCommitCommand": bool(c["from_commit_command"]),
                    }
                    for c in commits
                ],
            }
        )
    return {
        "ordinal": t["ordinal"],
        "deliveryEdges": repositories.turn_edges(t["id"]),
        "sealed": bool(t["sealed"]),
        "aborted": bool(t["aborted"]),
        "rolledBack": bool(t["rolled_back"]),
        "revision": t["revision"],
        "startedAt": t["started_at"],
        "endedAt": t["ended_at"],
        "user": t["user_text"],
        "assistant": t["assistant_text"],
        "notices": json.loads(t["notices"]) if t["notices"] else [],
        "tools": tools,
    }


def _maybe_json(text: str | None) -> Any:
    """A tool's stored input as its JSON value, else as the text it is: also when it nests
    deeper than the standard json reads (a session's own record may)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


class TurnSearch(Record, frozen=True):
    """A session search's hits and how they were ranked."""

    hits: list[dict[str, Any]]
    # False when more turns matched than RANK_WINDOW: only the newest RANK_WINDOW of them were
    # ranked (declared to the caller, never silent)
    ranked_all: bool
    # which rankings ran (docs/hybrid-search.md, "Session search"), and the vector path's
    # space and coverage, or why it did not run: the shape memory search reports too
    paths: list[str] = field(default_factory=lambda: ["lexical"])
    vector: dict[str, Any] = field(default_factory=lambda: vector_skipped(None))


def vector_skipped(reason: str | None, code: str | None = None) -> dict[str, Any]:
    return {"ran": False, "space": None, "turns": 0, "reason": reason, "code": code}


NOTHING_HELD = Held(0, 0, 0)


def search_turns(
    conn: sqlite3.Connection,
    query: str,
    *,
    provider: str | None = None,
    worktree_key: str | None = None,
    since: str | None = None,
    until: str | None = None,
    limit: int = 20,
    embedder: Embedder | None = None,
    model_cache: Path | None = None,
) -> TurnSearch:
    """Turns matching any term of `query`: those holding more of its terms first, then by BM25
    (docs/search.md). Provider and worktree filter inside the FTS index (its scope column), so
    the rank window and BM25 see only turns the search can return; the time window filters rows.

    With an `embedder`, the turns nearest the query's meaning (turn_vectors) are ranked too and
    the two rankings are fused (docs/hybrid-search.md, "Session search"), with the turns
    holding the Chinese translations of an English query's words (`model_cache`: where the
    reversed dictionary is kept, `models.reverse_glosses`).
    """
    ensure_current_analyzer(conn)
    find_pending_passages(conn)
    parsed = searchable_query(query)
    keep_words = words_decide(parsed, segmented(parsed))
    parsed = segmented(parsed)
    filters = (provider, worktree_key, since, until)
    typed = query_phrase(query)  # a snippet shows it where a turn holds it
    if embedder is None:
        scored, ranked_all = _lexical(conn, parsed, filters, int(limit))
        return _lexical_only(conn, (parsed, typed), scored, ranked_all, int(limit), None)
    depth = tiers(int(limit))[-1]  # the words' candidates of every tier of places shown
    # the meaning's side needs nothing of the words': it runs beside them (docs/sessions.md,
    # "Search speed")
    meaning = db.ReadBeside(conn, lambda beside: _meaning(beside, query, filters, embedder))
    try:
        found = _lexical(conn, parsed, filters, depth)
        # a short Chinese query's words decide (rule 3): its glosses' words get no voice while
        # the words as typed find a turn; when they find none, the glosses are all it has
        words_only = keep_words and has_chinese(query) and bool(found[0])
        translation = (
            [] if words_only else _translated(conn, query, parsed, filters, depth, model_cache)
        )
    finally:
        meaning.join()  # the words' error, if any, is the one raised
    nearest = meaning.result()
    phrase = (typed, holding_phrase(typed, found[0]))
    return _hybrid(
        conn, parsed, found, int(limit), embedder, keep_words, translation, nearest, phrase
    )


def _hit(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    parsed: tuple[Query, QueryTerm | None],
    found: Held,
    score: float,
    matched_by: tuple[str, ...],
) -> dict[str, Any]:
    """`parsed`: the query read and the query as typed as one phrase (`query_phrase`)."""
    return {
        "sessionKey": row["session_key"],
        "turn": row["ordinal"],
        "provider": row["provider"],
        "snippet": passage_snippet(conn, row, parsed[0], found, parsed[1]),
        "score": score,
        "matchedBy": list(matched_by),
    }


def _turn_filters(
    filters: tuple[str | None, str | None, str | None, str | None],
) -> tuple[Callable[[str], str], list[str], list[Any]]:
    """What a turn search filters by: a MATCH expression scoped to the provider and worktree
    inside the index, and the time window's WHERE clauses and parameters."""
    provider, worktree_key, since, until = filters
    scope = scope_match(provider=provider, worktree_key=worktree_key)

    def scoped(expr: str) -> str:
        return body_match(expr) + (f" AND {scope}" if scope else "")

    clauses, params = _filters(
        provider=None,
        worktree_key=None,
        since=since,
        until=until,
        start="t.started_at",
        end="t.ended_at",
    )
    return scoped, clauses, params


def _lexical(
    conn: sqlite3.Connection,
    parsed: Query,
    filters: tuple[str | None, str | None, str | None, str | None],
    limit: int,
) -> tuple[list[Scored], bool]:
    """The best `limit` lexical matches, best first, and whether every match was ranked: the
    same first turns whatever `limit` (`passages.best_turns`)."""
    scoped, clauses, filter_params = _turn_filters(filters)
    return best_turns(conn, parsed, scoped, clauses, filter_params, limit)


# -- hybrid: lexical + vector, fused (docs/hybrid-search.md, "Session search") -----------------

# each path contributes its best FUSION_DEPTH turns to the fusion
FUSION_DEPTH = FIRST_TIER
# turns rescored by cosine after the sign-bit scan; more when filters may drop most of them
VECTOR_CANDIDATES = 400
VECTOR_CANDIDATES_FILTERED = 800
# a turn less similar than this (cosine) is not "near" the query: with the bundled model,
# unrelated texts score below 0.1 and paraphrases 0.25-0.5, so an identifier that one turn
# holds does not drag twenty unrelated turns in behind it
MIN_SIMILARITY = 0.2


class Meaning(NamedTuple):
    """The vector side of a hybrid search (`_meaning`)."""

    counts: tuple[int, int]  # turns with a vector of the space, turns in the index
    ranking: VectorRanking | None  # None: the vector path did not run
    skipped: dict[str, Any] | None  # why it did not (`vector_skipped`)
    translated: bool  # the model read the query's glosses, not the query


def _meaning(
    conn: sqlite3.Connection,
    query: str,
    filters: tuple[str | None, str | None, str | None, str | None],
    embedder: Embedder,
) -> Meaning:
    """The turns nearest `query`'s meaning that pass `filters` (`turn_vectors.rank_turns`)."""
    # numpy and the vector tables only when a vector path runs (CLI start-up stays light)
    from teamlore.models.embeddings import query_row
    from teamlore.sessions.turn_vectors import rank_turns, vector_space_counts

    provider, worktree_key, since, until = filters
    times = {"start": "t.started_at", "end": "t.ended_at"}
    # provider and worktree are the session's: checked before a candidate's int8 row is read
    session_clauses, session_params = _filters(
        provider=provider, worktree_key=worktree_key, since=None, until=None, **times
    )
    clauses, params = _filters(provider=None, worktree_key=None, since=since, until=until, **times)
    space = embedder.space.key
    counts = vector_space_counts(conn, space)
    # a model that cannot read the query reads its glosses (`Embedder.embed_query`): a
    # literal match weighs more than that translation (docs/hybrid-search.md, "Words are never
    # outvoted")
    translated = not embedder.reads(query)
    if not counts[0]:
        why = f"no turn has a vector of {space} yet (`teamlore sync` embeds them)"
        return Meaning(counts, None, vector_skipped(why), translated)
    try:
        query_vector = query_row(embedder, query)
    except errors.TeamloreError as exc:  # an endpoint down: words still answer
        return Meaning(counts, None, vector_skipped(exc.message, exc.code), translated)
    ranking = rank_turns(
        conn,
        query_vector,
        space,
        depth=FUSION_DEPTH,
        candidates=VECTOR_CANDIDATES_FILTERED if clauses or session_clauses else VECTOR_CANDIDATES,
        session_filter=(" AND ".join(session_clauses), session_params),
        row_filter=(" AND ".join(clauses), params),
    )
    return Meaning(counts, ranking, None, translated)


def _hybrid(
    conn: sqlite3.Connection,
    parsed: Query,
    found: tuple[list[Scored], bool],
    limit: int,
    embedder: Embedder,
    keep_words: bool,
    translation: list[Translated],
    meaning: Meaning,
    phrase: tuple[QueryTerm | None, set[int]],
) -> TurnSearch:
    """`found`: the lexical ranking and whether it ranked every match; `keep_words`:
    `core.fusion.words_decide`; `translation`: `_translated`; `meaning`: `_meaning`; `phrase`:
    the query as typed as one phrase (`passages.query_phrase`) and the turns of `found` holding
    it (`passages.holding_phrase`)."""
    scored, ranked_all = found
    ranking = meaning.ranking
    if ranking is None:
        skipped = meaning.skipped or vector_skipped(None)
        return _lexical_only(conn, (parsed, phrase[0]), scored, ranked_all, limit, skipped)
    similar = zip(ranking.turn_ids, ranking.similarities, strict=True)
    near = [turn for turn, similarity in similar if similarity >= MIN_SIMILARITY]
    near_rows = _rows_by_turn_id(conn, near)
    # a turn the model cannot read (its language) gets no vote, not a noise vote
    # (docs/hybrid-search.md, "Words are never outvoted")
    near = [turn for turn in near if turn in near_rows and _reads(embedder, near_rows[turn])]
    lexical = _word_shares(parsed, scored)
    unread = {int(r["id"]) for _h, _s, r in scored if not _reads(embedder, r)}
    translations = [(int(r["id"]), share) for _h, share, _s, r in translation]
    # a turn whose best passage holds every term as typed ranks above every meaning-only turn
    # (docs/hybrid-search.md, "Words are never outvoted", rule 10)
    literal = {int(r["id"]) for found, _s, r in scored if found.best >= len(parsed.terms)}
    # the same first turns whatever the page size: each tier of places is fused from the words'
    # and the translation's candidates of that tier (`passages.best_turns`), below the tiers
    # above it
    by_bm25 = sorted(translation, key=lambda item: (-item[2], item[3]["id"]))
    place = {int(item[3]["id"]): n for n, item in enumerate(by_bm25)}
    fused: list[Fused[int]] = []
    shown_keys: set[int] = set()
    for end in tiers(limit):
        for item in fuse(
            lexical[:end],
            near,
            keep_words=keep_words,
            translated=meaning.translated,
            unread=unread,
            translation=[(key, share) for key, share in translations if place[key] < end],
            literal=literal,
            phrase=phrase[1],
        ):
            if len(fused) < end and item.key not in shown_keys:
                shown_keys.add(item.key)
                fused.append(item)
    fused = fused[:limit]
    # a turn found by a translation alone is asked where it holds the words only when shown
    translated = {int(r["id"]): (where, r) for where, _share, _s, r in translation}
    lexical_rows = {int(r["id"]): (held, r) for held, _s, r in scored}
    readings = [parsed, *([gloss_query(parsed)] if meaning.translated else [])]
    hits = []
    for item in fused:
        shown = parsed
        if item.key in lexical_rows:
            what, row = lexical_rows[item.key]
        elif item.key in translated:
            where, row = translated[item.key]
            what = where()
        elif item.key in near_rows:
            row = near_rows[item.key]
            # found by meaning alone: the passage that says what was asked, as typed or glossed
            what, shown = passage_read_by(conn, item.key, readings) or (NOTHING_HELD, parsed)
        else:
            continue  # the turn went between the two queries
        hits.append(_hit(conn, row, (shown, phrase[0]), what, item.score, item.matched_by))
    with_vector, turns = meaning.counts
    space = embedder.space.key
    vector = {"ran": True, "space": space, "turns": with_vector, "reason": None, "code": None}
    if with_vector < turns:
        vector["reason"] = f"{turns - with_vector} of {turns} turns have no vector yet"
    return TurnSearch(hits, ranked_all, ["lexical", "vector"], vector)


# what a query term that is one Chinese character weighs in a turn's share of the query's terms
# (`_word_shares`; chosen on the tuning half of bench/search_queries.json)
SINGLE_CHARACTER_WEIGHT = 0.5


def _word_shares(parsed: Query, scored: list[Scored]) -> list[tuple[int, float]]:
    """Each lexical match's share of the query's terms (`fuse`'s `lexical`). A term that is one
    Chinese character (改, 新, 跑) counts SINGLE_CHARACTER_WEIGHT where a turn holds it: the index
    holds every character of a text alone, so a turn saying 改寫 ("rewrite") or 更新 ("update")
    holds 改 and 新 as surely as one saying them as words. It is half the evidence, not half the
    question: missing it still costs a whole term (docs/hybrid-search.md, "Chinese queries
    without spaces")."""
    terms = len(parsed.terms)
    weights = [SINGLE_CHARACTER_WEIGHT if _is_one_character(term) else 1.0 for term in parsed.terms]
    if all(weight == 1.0 for weight in weights):
        return [(int(r["id"]), found.weight / terms) for found, _s, r in scored]
    return [
        (int(r["id"]), weighed(parsed, weights, r["body"], r["starts"], found) / terms)
        for found, _s, r in scored
    ]


def _is_one_character(term: QueryTerm) -> bool:
    text = term_text(term)
    return len(text) == 1 and has_chinese(text)


# -- English queries over Chinese turns (docs/hybrid-search.md) ----------------------------------

# a few of the commonest Chinese characters (Simplified and Traditional alike): an index that
# holds none of them holds no Chinese worth translating into
# the newest turns holding a translation that are ranked: a translation is the weakest words
# evidence, and ranking every match of a common word's translations (写入, 日志) cost a search at
# 250k turns ~19 ms CPU at p95 with RANK_WINDOW, ~6 ms with this (bench/bench_turn_vectors.py)
TRANSLATION_WINDOW = 1000
_COMMON_CHINESE = '"的" OR "是" OR "了" OR "不" OR "在" OR "我" OR "有" OR "这" OR "這"'


def _translated(
    conn: sqlite3.Connection,
    query: str,
    parsed: Query,
    filters: tuple[str | None, str | None, str | None, str | None],
    depth: int,
    model_cache: Path | None,
) -> list[Translated]:
    """The turns holding a translation of a word of `query`, best share first
    (`passages.translated_share`), then by BM25: for an English query its words' Chinese
    translations (`models.reverse_glosses`; empty for an index without Chinese, which never
    loads the reversed dictionary), for a Chinese query its words' English glosses
    (`gloss_terms`)."""
    if has_chinese(query):
        return _translation_ranking(conn, parsed, gloss_terms(parsed), filters, depth)
    if not _holds_chinese(conn):
        return []
    from teamlore.models.reverse_glosses import translation_terms

    alternatives = translation_terms(parsed, model_cache)
    return _translation_ranking(conn, parsed, alternatives, filters, depth)


def _translation_ranking(
    conn: sqlite3.Connection,
    parsed: Query,
    alternatives: Translation,
    filters: tuple[str | None, str | None, str | None, str | None],
    depth: int,
) -> list[Translated]:
    words = dict.fromkeys(term.expr() for alts in alternatives for alt in alts for term in alt)
    if not words:
        return []
    scoped, clauses, params = _turn_filters(filters)
    rows, _ranked_all = ranked_turns(
        conn,
        scoped(" OR ".join(words)),
        clauses,
        params,
        depth,
        with_body=True,
        window=TRANSLATION_WINDOW,
    )
    found = [
        (*translated_share(parsed, alternatives, r["body"], r["starts"]), -float(r["rank"]), r)
        for r in rows
    ]
    found.sort(key=lambda item: (-item[1], -item[2], item[3]["id"]))
    return found


# (where the turn holds the terms as typed or translated, its share, BM25 strength, the row)
Translated = tuple[Callable[[], Held], float, float, sqlite3.Row]


def _holds_chinese(conn: sqlite3.Connection) -> bool:
    """Asked once per process until the index changes: ~1.4 ms of every English hybrid search
    at 250k turns (docs/sessions.md, "Search speed")."""
    from teamlore.sessions.turn_vectors import kept_while_unchanged

    def ask() -> bool:
        match = body_match(_COMMON_CHINESE)
        row = conn.execute("SELECT 1 FROM turns_fts WHERE turns_fts MATCH ? LIMIT 1", (match,))
        return row.fetchone() is not None

    return kept_while_unchanged(conn, "holds Chinese", ask)


def _reads(embedder: Embedder, row: sqlite3.Row) -> bool:
    """Whether the model reads what was embedded of this turn (`turn_vectors.turn_text`)."""
    from teamlore.sessions.turn_vectors import turn_text

    return embedder.reads(turn_text(row["user_text"] or "", row["assistant_text"] or ""))


def _lexical_only(
    conn: sqlite3.Connection,
    parsed: tuple[Query, QueryTerm | None],
    scored: list[Scored],
    ranked_all: bool,
    limit: int,
    skipped: dict[str, Any] | None,
) -> TurnSearch:
    """The words' hits; `skipped`: why the vector path did not run (None: none was asked)."""
    hits = [
        _hit(conn, r, parsed, found, readable_weight(found, strength), ("lexical",))
        for found, strength, r in scored[:limit]
    ]
    if skipped is None:
        return TurnSearch(hits, ranked_all)
    return TurnSearch(hits, ranked_all, ["lexical"], skipped)


def _rows_by_turn_id(conn: sqlite3.Connection, ids: list[int]) -> dict[int, sqlite3.Row]:
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT t.id, t.ordinal, t.user_text, t.assistant_text, t.notices, s.session_key,"
        " s.provider"
        " FROM turns t JOIN sessions s ON s.id = t.session_id"
        " WHERE t.id IN (SELECT value FROM json_each(?))",
        ("[" + ",".join(str(i) for i in ids) + "]",),
    )
    return {int(r["id"]): r for r in rows}


def find_pending_passages(conn: sqlite3.Connection) -> None:
    """In an index written before passages existed, until the next sync stores them, let the
    search find those of the turns it reads (`index_db.passage_starts`)."""
    if conn.execute(PASSAGES_PENDING).fetchone() is not None:
        # the turn assembler (and orjson) load only for such an index
        from teamlore.sessions.reanalyze import found_passages

        conn.create_function(FOUND_PASSAGES, 1, partial(found_passages, conn))


def ensure_current_analyzer(conn: sqlite3.Connection) -> None:
    """Refuse to search an index whose text was analyzed by another analyzer version: its
    tokens would not meet the query's. `teamlore sync` re-analyzes it."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'analyzer_version'").fetchone()
    if row is not None and row[0] != ANALYZER_VERSION:
        raise errors.TeamloreError(
            errors.INDEX_OUTDATED,
            f"the session index was built with {row[0]}; run `teamlore sync` to re-analyze it"
            f" for {ANALYZER_VERSION} (your sessions are kept)",
        )
