"""L0 operations: sync, sessions list/show/search, status.

These are local views of private history (they show raw transcripts and local paths), so they
are CLI-only: no MCP capability exposes them.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from teamlore.core import db, errors
from teamlore.core.analyzer import ANALYZER_VERSION, forget_words, searchable_query
from teamlore.core.fusion import EMBEDDINGS_OFF, LEXICAL_ASKED
from teamlore.core.lock import file_lock
from teamlore.core.paths import display_path, resolve_home
from teamlore.core.remedies import SESSIONS_WINDOW_NEXT
from teamlore.core.timeutil import parse_instant
from teamlore.ops.plain_request import PlainRequest, param, refuse_long_query, utf8_text
from teamlore.ops.registry import OpContext, ProgressCallback, operation
from teamlore.ops.sessions import LIST_PAGE_SESSIONS, SHOW_PAGE_TURNS
from teamlore.sessions.index_db import LAST_SYNC_UNREADABLE
from teamlore.sessions.index_health import (
    index_errors,
    open_index_for_read,
    open_index_for_sync,
    stops_at,
)
from teamlore.sessions.providers import PROVIDERS, Source, default_roots, get_adapter

if TYPE_CHECKING:
    from teamlore.models.embeddings import Embedder
    from teamlore.sessions.turn_vectors import MadeVector

SYNC_LOCK = "sync.lock"

# these requests are hand-checked (ops/plain_request.py): a short CLI process that runs them
# never imports pydantic (docs/architecture.md, "A short CLI process")


def known_provider(name: str) -> str:
    """The one check of a provider name, for every request that takes one."""
    if name not in PROVIDERS:
        raise ValueError(f"unknown provider {name!r} (one of: {', '.join(sorted(PROVIDERS))})")
    return name


def _known_providers(names: list[str]) -> list[str]:
    return [known_provider(name) for name in names]


class SyncRequest(PlainRequest):
    """`sync`'s request."""

    cli_words = True  # a CLI-only command (ops/plain_request.py)

    sources: list[str] = param(default_factory=list, description="PROVIDER=PATH; replaces defaults")
    providers: list[str] = param(
        default_factory=list, description="only these providers", convert=_known_providers
    )
    repository: str | None = param(None, description="register this git worktree")
    rebuild: bool = param(False)
    discard_history: bool = param(
        False,
        alias="discardHistory",
        description="with rebuild: confirm dropping history that only the damaged index holds",
    )
    wait_seconds: float = param(60.0, ge=0, le=3600)


def _absolute(raw: str | Path) -> Path:
    return Path(os.path.abspath(Path(raw).expanduser()))


def resolve_sources(request: SyncRequest, home: Path | None) -> list[Source]:
    chosen = request.providers or list(PROVIDERS)
    if request.sources:
        sources = []
        for spec in request.sources:
            provider, sep, raw = spec.partition("=")
            if not sep or not raw or provider not in PROVIDERS:
                raise errors.TeamloreError(
                    errors.INVALID_ARGUMENT,
                    f"--source {spec!r}: expected PROVIDER=PATH with PROVIDER one of "
                    f"{', '.join(sorted(PROVIDERS))}",
                )
            source = _source(provider, raw, f"--source {spec}", errors.INVALID_ARGUMENT)
            _named_source_is_there(source, spec)
            if provider in chosen:
                sources.append(source)
        return sources
    from teamlore.core.config import load_config

    config = load_config(home)
    sources = []
    for provider in chosen:
        # a provider config.toml names reads those folders only (`pi = []`: none)
        named = config.sources.get(provider)
        roots = named if named is not None else [str(r) for r in default_roots(provider)]
        given = f"config.toml [sources] {provider}"
        sources.extend(_source(provider, r, f"{given}: {r}", errors.CONFIG_INVALID) for r in roots)
    return sources


def linked_session_files() -> frozenset[str]:
    """The real paths of the session files a plain sync reads through a symlink (discovery
    follows a link to a `*.jsonl` file, never one to a folder): `teamlore watch` watches them,
    since a write to such a file lands outside the session folders and makes no event there."""
    from teamlore.sessions.model import Unreadable

    linked: set[str] = set()
    for source in resolve_sources(SyncRequest(), None):
        try:
            found = list(get_adapter(source.provider).discover(source.root))
        except OSError:
            continue  # the sync reports it
        linked.update(
            os.path.realpath(path)
            for path in found
            if not isinstance(path, Unreadable) and os.path.islink(path)
        )
    return frozenset(linked)


def files_behind(home: Path, limit: int) -> tuple[int, int, bool]:
    """How many session files a plain sync would read now, of the first `limit` its discovery
    finds newest first: (not in the index, held at another size or time, whether that was
    every file). The sync's own walk, newest folders first and no further than `limit` (past
    it, what a user most likely just wrote is still counted: a file made in a folder moves the
    folder's time, one appended to does not), and one stat per file, whatever the files'
    dates (a restored backup, a folder moved in, a sync cut short); a file moved or renamed is
    held when the sync follows it (`moved_files`), and one held as failed is behind when it
    was modified after it failed (every sync tries it again). What it cannot read, and a
    failed file as it was, are `status`'s to report."""
    from itertools import islice

    from teamlore.sessions.indexer import SyncStats, discover_files
    from teamlore.sessions.takeover import failed_at, load_file_rows, moved_files, stat_files

    sources = resolve_sources(SyncRequest(), home)
    adapters = {s.provider: get_adapter(s.provider) for s in sources}
    newest = discover_files(sources, adapters, SyncStats(), newest_first=True)
    with index_errors(_read_index(home)) as conn:
        known = load_file_rows(conn)
        found = list(islice(newest, limit + 1))  # one more: whether that was every file
        taken = found[:limit]
        identities = stat_files(taken)
        held_at = {new: old for old, new in moved_files(conn, taken, identities, known)}
        failed = failed_at(conn)
    new = changed = 0
    for path, st in identities.items():
        row = known.get(held_at.get(path, path))
        if isinstance(st, OSError):
            continue
        if row is None or row.status == "unavailable":
            new += 1
        elif row.status == "failed" and row.id in failed:
            changed += st.st_mtime_ns > failed[row.id]
        elif not row.holds(st):
            changed += 1
    return new, changed, len(found) <= limit


def _source(provider: str, raw: str, given: str, refusal: errors.ErrorCode) -> Source:
    """A source root; refused (naming where it was `given`) when no folder or file could ever
    have that path: a name too long for the file system, a NUL byte."""
    root = _absolute(raw)
    try:
        os.stat(root)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        pass  # a source that is not there (the sync says so), or refused where it is read
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise errors.TeamloreError(refusal, f"{given}: {why}") from None
    return Source(provider, root)


def _named_source_is_there(source: Source, spec: str) -> None:
    """A source the user named (`--source PROVIDER=PATH`) is a folder or a `.jsonl` file, or
    the sync is refused before anything is indexed: a typo read as "no new sessions". A client's
    default folder (or one config.toml names) that is not there is only said (docs/sessions.md,
    "Where sessions come from"); one that cannot be looked at is a diagnostic of the sync."""
    seen = source.looked_at()
    if isinstance(seen, OSError):
        return  # `source-unreadable`, reported by the sync with the other sources indexed
    if seen is not None and (
        stat.S_ISDIR(seen.st_mode)
        or (stat.S_ISREG(seen.st_mode) and source.root.name.endswith(".jsonl"))
    ):
        return
    what = "no folder or file is there" if seen is None else "not a folder or a .jsonl file"
    raise errors.TeamloreError(
        errors.SOURCE_NOT_FOUND,
        f"--source {spec.partition('=')[0]}={display_path(source.root)}: {what}",
    )


def _register_repository(conn: sqlite3.Connection, raw: str, home: Path | None) -> dict[str, Any]:
    from teamlore.core.config import RepositoryConfig, load_config, save_config
    from teamlore.repo.binding import register_repository

    identity = register_repository(conn, Path(raw).expanduser(), home=home)
    config = load_config(home)
    if not any(r.worktree_key == identity.worktree_key for r in config.repositories):
        config.repositories.append(
            RepositoryConfig(
                path=str(identity.worktree_root),
                repository_key=identity.repository_key,
                worktree_key=identity.worktree_key,
            )
        )
        save_config(config, home)
    return {
        "repositoryKey": identity.repository_key,
        "worktreeKey": identity.worktree_key,
        "name": Path(identity.worktree_root).name,
    }


def _restore_registered(conn: sqlite3.Connection, home: Path | None) -> list[str]:
    """Register again the worktrees config.toml lists that the index does not hold (a rebuilt
    index starts empty; config.toml is where registrations last): the names of those restored.
    One whose folder is gone or now holds another worktree stays in config.toml only, as
    `repo forget` can still drop it."""
    from teamlore.core.config import load_config
    from teamlore.repo.binding import list_repositories, register_repository, resolve_repository

    held = {r.worktree_key for r in list_repositories(conn)}
    missing = [r for r in load_config(home).repositories if r.worktree_key not in held]
    restored: list[str] = []
    for entry in missing:
        path = Path(entry.path)
        if not path.is_dir():
            continue
        try:
            found = resolve_repository(path, home=home)
        except errors.TeamloreError:
            continue
        if (found.worktree_key, found.repository_key) == (entry.worktree_key, entry.repository_key):
            restored.append(register_repository(conn, path, home=home).worktree_root.name)
    return restored


def _update_delivery(conn: sqlite3.Connection, home: Path | None) -> dict[str, Any]:
    """Map sessions to worktrees, scan commits, rebuild delivery edges. A registered worktree
    that is gone or unreadable is reported by path and skipped; the rest of the sync goes on."""
    from teamlore.repo.binding import WorktreeProblem, list_repositories, worktree_problem
    from teamlore.repo.worktrees import map_sessions, path_aliases

    aliases = path_aliases(home)
    repos = list_repositories(conn)
    if repos:  # the commit scan and the delivery edges load only with a repository to serve
        from teamlore.repo.commits import scan_commits
        from teamlore.repo.delivery import build_delivery_edges
    skipped: dict[str, tuple[Path, str]] = {}
    commits_added = 0
    for identity in repos:
        problem: WorktreeProblem | None = worktree_problem(identity, home)
        if problem is None:
            try:
                commits_added += scan_commits(conn, identity).commits_inserted
            except errors.TeamloreError:
                problem = "unreadable"
        if problem is not None:
            skipped[identity.worktree_key] = (identity.worktree_root, problem)
    mapping = map_sessions(conn, aliases=aliases, skip=skipped)
    edges: dict[str, int] = {}
    present = {r.repository_key for r in repos if r.worktree_key not in skipped}
    for repository_key in sorted(present):
        for strength, count in build_delivery_edges(conn, repository_key).edges.items():
            edges[strength] = edges.get(strength, 0) + count
    return {
        "repositories": len(repos),
        "repositoriesSkipped": [
            {"path": display_path(root), "name": root.name, "reason": reason}
            for root, reason in skipped.values()
        ],
        "sessionsMapped": mapping.mapped,
        "sessionsUnmapped": mapping.unmapped,
        "mappedBy": mapping.by,
        "commitsAdded": commits_added,
        "deliveryEdges": sum(edges.values()),
        "edgesByStrength": edges,
    }


@operation("sync", input_model=SyncRequest, side_effect="state-write")
def sync(ctx: OpContext, request: SyncRequest) -> dict[str, Any]:
    """Index new and changed session files, register a repository, link sessions to commits."""
    # the indexer and repository tables load in the commands that use them: a search
    # process never needs them (docs/cli.md, lean commands)
    from teamlore.sessions.indexer import Indexer

    home = resolve_home(ctx.home)
    sources = resolve_sources(request, home)
    with file_lock(home / SYNC_LOCK, wait_seconds=request.wait_seconds, what="a sync"):
        kept: list[Path] = []
        conn = open_index_for_sync(
            home, rebuild=request.rebuild, discard_history=request.discard_history, kept=kept
        )
        with index_errors(conn), stops_at(conn) as step:
            restored = _restore_registered(conn, home)
            registered = (
                _register_repository(conn, request.repository, home) if request.repository else None
            )
            adapters = {s.provider: get_adapter(s.provider) for s in sources}
            indexer = Indexer(
                conn, adapters, home=home, progress=ctx.progress, embed_space=_bundled_space(home)
            )
            stats = indexer.sync(sources, rebuild=request.rebuild)
            forget_words()  # their memory goes to the embedding (docs/sessions.md)
            step[0] = "link"
            delivery = _update_delivery(conn, home)
            step[0] = "embed"
            vectors = _embed_turns(conn, home, ctx.progress, indexer.search_rows.vectors)
            totals = conn.execute(
                "SELECT (SELECT count(*) FROM sessions) AS s, (SELECT count(*) FROM turns) AS t"
            ).fetchone()
    return {
        "files": {
            "seen": stats.files_seen,
            "changed": stats.files_changed,
            "failed": stats.files_failed,
            "unavailable": stats.files_unavailable,
        },
        "sessions": stats.sessions,
        "turns": stats.turns,
        "bytesRead": stats.bytes_read,
        "reanalyzedTurns": stats.turns_reanalyzed,
        "totals": {"sessions": totals["s"], "turns": totals["t"]},
        "sources": [s.to_json() for s in sources],
        "repository": registered,
        "restoredRepositories": restored,
        "damagedIndexKept": kept[0].name if kept else None,
        "delivery": delivery,
        "vectors": vectors,
        "diagnostics": [d.to_json() for d in stats.diagnostics],
        "diagnosticCount": stats.diagnostic_count,
    }


def _last_sync_unreadable(meta: dict[str, str]) -> dict[str, Any]:
    """What the last sync could not read (a folder or file it may not open): no index row
    says so, so the sync keeps how many and the first ones."""
    import json  # a read command reads JSON with the standard json (orjson loads dataclasses)

    kept = meta.get(LAST_SYNC_UNREADABLE)
    return json.loads(kept) if kept else {"count": 0, "recent": []}


def _bundled_space(home: Path) -> str | None:
    """The bundled model's space when turns get vectors from it: the analysis helper of a bulk
    sync then embeds them beside the indexing (sessions/analysis_helper.py)."""
    from teamlore.models.embeddings import BundledEmbedder, configured_embedder

    try:
        embedder = configured_embedder(home)
    except errors.TeamloreError:
        return None  # `_embed_turns` says why
    return embedder.space.key if isinstance(embedder, BundledEmbedder) else None


def _embed_turns(
    conn: sqlite3.Connection,
    home: Path,
    progress: ProgressCallback | None,
    made: Mapping[int, MadeVector] | None = None,
) -> dict[str, Any]:
    """Give new and changed turns a vector for hybrid search (docs/hybrid-search.md). Off in
    config: nothing happens. A model that cannot be loaded or called never fails the sync: the
    turns stay lexical-only and the next sync tries again."""
    from teamlore.models.embeddings import configured_embedder
    from teamlore.sessions.turn_vectors import embed_pending_turns

    try:
        embedder = configured_embedder(home)
        if embedder is None:
            return {"status": "off"}
        stats = embed_pending_turns(
            conn,
            embedder,
            progress=None if progress is None else (lambda n, of: progress(n, of, "embeddings")),
            made=made,
        )
    except errors.TeamloreError as exc:
        return {"status": "unavailable", "code": exc.code, "message": exc.message}
    return {"status": "done", **stats.to_json()}


def index_file(home: Path | None = None) -> Path:
    """The session index's file (`teamlore watch` checks it is still the one it synced)."""
    from teamlore.sessions.index_db import index_db_path

    return index_db_path(home)


def index_id(index: Path) -> str | None:
    """Which index the file `index` (`index_file()`) holds: the id written when it was made;
    None when none can be read. `teamlore watch` syncs again when it changes, whatever the
    file's inode."""
    from teamlore.sessions import index_db

    return index_db.index_id(index)


def _read_index(home: Path | None) -> sqlite3.Connection:
    return open_index_for_read(home)


def _worktree_filter(
    ctx: OpContext, conn: sqlite3.Connection, repository: str | None
) -> str | None:
    """The worktree key `--repository` names. A worktree `sync --repository` never registered
    has no sessions mapped to it: REPOSITORY_NOT_REGISTERED, where it read as "no matching
    turns" or "no sessions match these filters"."""
    if repository is None:
        return None
    from teamlore.core.paths import escaped_path
    from teamlore.repo.binding import refuse_path_not_utf8, resolve_repository
    from teamlore.repo.tables import list_worktrees

    path = Path(repository).expanduser()
    identity = resolve_repository(path if path.is_absolute() else ctx.cwd / path, home=ctx.home)
    if identity.worktree_key not in {row.worktree_key for row in list_worktrees(conn)}:
        refuse_path_not_utf8(identity)  # which `sync --repository` refuses to register
        raise errors.TeamloreError(
            errors.REPOSITORY_NOT_REGISTERED,
            f"{escaped_path(identity.worktree_root.name)} is not registered, so no session is"
            " linked to it",
        )
    return identity.worktree_key


def _instant(value: str) -> str | None:
    return parse_instant(value) if value else None


class Window(PlainRequest):
    """A time window over turns: from `since` (inclusive) to `until` (exclusive)."""

    cli_words = True  # the requests of CLI-only commands (ops/plain_request.py)

    since: str | None = param(
        None, description="ISO-8601 date or instant (inclusive)", convert=_instant
    )
    until: str | None = param(
        None, description="ISO-8601 date or instant (exclusive)", convert=_instant
    )

    def check(self) -> None:
        # a usage error (exit 2), as recall's reversed window is: it read as "no matches"
        if self.since and self.until and self.since >= self.until:
            raise errors.TeamloreError(
                errors.WINDOW_INVALID,
                f"since {self.since} is not before until {self.until}:"
                " the window is empty or reversed",
            ).advising(SESSIONS_WINDOW_NEXT)  # not recall's canonical UTC and 366 days


class SessionsListRequest(Window):
    """`sessions.list`'s request."""

    provider: str | None = param(None, convert=known_provider)
    repository: str | None = param(None)
    limit: int = param(
        LIST_PAGE_SESSIONS, ge=1, le=100_000, description="at most this many, newest first"
    )
    unmapped: bool = param(False, description="only sessions no registered worktree owns")

    def check(self) -> None:
        super().check()
        if self.unmapped and self.repository is not None:
            raise errors.TeamloreError(  # named by its field, as the tool check is (below)
                errors.INVALID_ARGUMENT,
                "repository: unmapped sessions belong to no repository: give --unmapped or"
                " --repository, not both",
            )


@operation("sessions.list", input_model=SessionsListRequest, side_effect="read")
def sessions_list(ctx: OpContext, request: SessionsListRequest) -> dict[str, Any]:
    """List indexed sessions, newest first."""
    from teamlore.ops.sessions.lineage import with_derived_titles
    from teamlore.repo import tables
    from teamlore.sessions.queries import count_sessions, list_sessions, unmapped_folders

    with index_errors(_read_index(ctx.home)) as conn:
        filters: dict[str, Any] = {
            "provider": request.provider,
            "worktree_key": _worktree_filter(ctx, conn, request.repository),
            "since": request.since,
            "until": request.until,
            "unmapped": request.unmapped,
        }
        sessions = list_sessions(
            conn, limit=request.limit, repositories=tables.session_facts(conn), **filters
        )
        with_derived_titles(conn, sessions)
        full_page = len(sessions) == request.limit
        more = count_sessions(conn, **filters) - len(sessions) if full_page else 0
        if not request.unmapped:
            return {"sessions": sessions, "more": more}
        # what to map: each folder once (`sync` points here when sessions could not be mapped)
        del filters["worktree_key"], filters["unmapped"]
        folders, total = unmapped_folders(conn, limit=request.limit, **filters)
        return {
            "sessions": sessions,
            "more": more,
            "folders": folders,
            "moreFolders": total - len(folders),
        }


class SessionsShowRequest(PlainRequest):
    """`sessions.show`'s request."""

    cli_words = True  # a CLI-only command (ops/plain_request.py)

    session_key: str = param(min_length=1)
    turn: int | None = param(
        None, ge=1, le=db.MAX_INTEGER, description="only this turn (the page fields are unused)"
    )
    start: int = param(1, ge=1, le=db.MAX_INTEGER, description="first turn ordinal of the page")
    limit: int = param(SHOW_PAGE_TURNS, ge=1, le=10_000, description="turns per page")
    tool: int | None = param(
        None,
        ge=1,
        le=db.MAX_INTEGER,
        description="only this tool call of the turn (its #number); needs turn",
    )

    def check(self) -> None:
        # named by its field, which the CLI says as the flag typed (`--tool: …`); a ValueError
        # here would read `request: tool: …`
        if self.tool is not None and self.turn is None:
            raise errors.TeamloreError(
                errors.INVALID_ARGUMENT,
                "tool: a tool call is numbered within its turn: give the turn too"
                " (--turn N --tool M)",
            )


@operation("sessions.show", input_model=SessionsShowRequest, side_effect="read")
def sessions_show(ctx: OpContext, request: SessionsShowRequest) -> dict[str, Any]:
    """Show one session's normalized turns, tool uses, exit codes, paths and commits."""
    from teamlore.memory.extraction.exclusions import is_excluded
    from teamlore.ops.sessions.lineage import annotate_show, mask_shown
    from teamlore.repo import tables
    from teamlore.sessions.queries import show_session

    with index_errors(_read_index(ctx.home)) as conn:
        shown = show_session(
            conn,
            request.session_key,
            turn=request.turn,
            start=request.start,
            limit=request.limit,
            repositories=tables.session_facts(conn),
        )
        annotate_show(conn, shown)
    session = shown["session"]
    session["excludedFromExtraction"] = is_excluded(ctx.home, str(session["sessionKey"]))
    shown = shown if request.tool is None else _one_tool(shown, request.tool)
    mask_shown(shown)  # what is shown only: the index keeps the text as typed
    return shown


def _one_tool(shown: dict[str, Any], number: int) -> dict[str, Any]:
    """The shown turn with only its tool call #`number` (docs/sessions.md, "Reading a
    session")."""
    turn = shown["turns"][0]
    tools = [t for t in turn["tools"] if t["seq"] == number]
    if not tools:
        raise errors.TeamloreError(
            errors.TOOL_NOT_FOUND,
            f"turn {turn['ordinal']} has {len(turn['tools'])} tool"
            f" call{'' if len(turn['tools']) == 1 else 's'}; there is no #{number}",
        )
    return {**shown, "turns": [{**turn, "tools": tools}]}


MAX_QUERY_CHARS = 4096


class SessionsSearchRequest(Window):
    """`sessions.search`'s request."""

    # no lower bound: an empty query is QUERY_EMPTY, as a blank one is (docs/search.md)
    query: str = param(max_length=MAX_QUERY_CHARS, convert=utf8_text)
    provider: str | None = param(None, convert=known_provider)
    repository: str | None = param(None)
    limit: int = param(20, ge=1, le=500)
    lexical: bool = param(False, description="words only: leave the vector path out")
    sync_first: bool = param(
        True, description="first index the grown files of recent sessions (bounded, no wait)"
    )

    def check(self) -> None:
        super().check()
        # refused before the search-time refresh writes the index: a refusal changes nothing
        searchable_query(self.query)

    @classmethod
    def said_first(cls, payload: Mapping[str, Any]) -> None:
        refuse_long_query(payload, MAX_QUERY_CHARS)


@operation("sessions.search", input_model=SessionsSearchRequest, side_effect="read")
def sessions_search(ctx: OpContext, request: SessionsSearchRequest) -> dict[str, Any]:
    """Search past turns: BM25 (English, code identifiers, Chinese) fused with vector
    similarity of their meaning (docs/hybrid-search.md); `lexical` for words only."""
    from teamlore.sessions.index_db import RANK_WINDOW
    from teamlore.sessions.queries import search_turns, vector_skipped

    refreshed = _index_stale_files(ctx.home) if request.sync_first else None
    with index_errors(_read_index(ctx.home)) as conn:
        worktree = _worktree_filter(ctx, conn, request.repository)
        embedder, skipped = (
            (None, vector_skipped(LEXICAL_ASKED)) if request.lexical else _search_embedder(ctx.home)
        )
        found = search_turns(
            conn,
            request.query,
            provider=request.provider,
            worktree_key=worktree,
            since=request.since,
            until=request.until,
            limit=request.limit,
            embedder=embedder,
            model_cache=None if embedder is None else _model_cache(ctx.home),
        )
        return {
            "query": request.query,
            "hits": found.hits,
            "ranking": {"rankedAll": found.ranked_all, "window": RANK_WINDOW},
            "paths": found.paths,
            "vector": skipped or found.vector,
            "refreshed": refreshed,
        }


# what a search indexes itself before it runs (docs/sessions.md, "Searching what was just
# said"); more is left to `teamlore sync`
REFRESH_MAX_FILES = 20
REFRESH_MAX_BYTES = 8 << 20


def _index_stale_files(home: Path | None) -> dict[str, Any]:
    """Index the grown session files the index already knows, bounded, so a turn appended a
    moment ago is found without a sync process first. Never waits: with a sync running, a
    read-only state dir or too much to read, the search runs on the index as it is and says
    why."""
    import time

    from teamlore.sessions.index_db import stale_files

    home = resolve_home(home)
    with index_errors(_read_index(home)) as conn:
        stale = stale_files(conn, now_ns=time.time_ns())
    done = {"files": 0, "turns": 0, "skipped": None}
    if not stale:
        return done
    if len(stale) > REFRESH_MAX_FILES or sum(n for *_, n in stale) > REFRESH_MAX_BYTES:
        return {**done, "skipped": f"{len(stale)} changed files: more than a search indexes"}
    from teamlore.sessions.indexer import Indexer

    try:
        with file_lock(home / SYNC_LOCK, wait_seconds=0, what="a sync"):
            conn = open_index_for_sync(home, rebuild=False)
            with index_errors(conn):
                sources = [Source(provider, path) for provider, path, _ in stale]
                adapters = {s.provider: get_adapter(s.provider) for s in sources}
                stats = Indexer(conn, adapters, home=home, analysis="off").sync(
                    sources, refresh=True
                )
    except errors.TeamloreError as exc:
        if exc.code not in (errors.LOCK_BUSY.code, errors.STATE_READ_ONLY.code):
            raise
        return {**done, "skipped": exc.message}
    return {**done, "files": stats.files_changed, "turns": stats.turns}


def _model_cache(home: Path | None) -> Path:
    """Where what is derived from the bundled models is kept (`embeddings.model_cache_dir`)."""
    from teamlore.models.cache import model_cache_dir

    return model_cache_dir(resolve_home(home))


def _search_embedder(home: Path | None) -> tuple[Embedder | None, dict[str, Any] | None]:
    """The configured embedder, or None and why the vector path will not run."""
    from teamlore.models.embeddings import configured_embedder
    from teamlore.sessions.queries import vector_skipped

    try:
        embedder = configured_embedder(home)
    except errors.TeamloreError as exc:
        return None, vector_skipped(exc.message, exc.code)
    if embedder is None:
        return None, vector_skipped(EMBEDDINGS_OFF)
    return embedder, None


class StatusRequest(PlainRequest):
    """`status`'s request."""

    integrity: bool = param(False, alias="check", description="also run PRAGMA integrity_check")


@operation("status", input_model=StatusRequest, side_effect="read")
def status(ctx: OpContext, request: StatusRequest) -> dict[str, Any]:
    """Index health: sources, counts, last sync, diagnostics, schema version."""
    from teamlore.repo import tables

    home = resolve_home(ctx.home)
    with index_errors(_read_index(home)) as conn:

        def one(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        by_provider = {
            r["provider"]: {"sessions": r["n"], "turns": r["t"]}
            for r in conn.execute(
                "SELECT provider, count(*) AS n, sum(turn_count) AS t FROM sessions"
                " GROUP BY provider"
            )
        }
        files = {
            r["status"]: r["n"]
            for r in conn.execute("SELECT status, count(*) AS n FROM source_files GROUP BY status")
        }
        meta = {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM meta")}
        # the ten newest, listed as a sync reports them: in the order found (a file's lines
        # in order), the file as `display_path` shows it (`~/…`)
        recent = [
            {
                "code": r["code"],
                "file": display_path(r["path"]) if r["path"] else None,
                "line": r["line"],
                "message": r["message"],
            }
            for r in conn.execute(
                "SELECT * FROM (SELECT d.id, d.code, d.line, d.message, f.path"
                " FROM diagnostics d LEFT JOIN source_files f ON f.id = d.source_file_id"
                " ORDER BY d.id DESC LIMIT 10) ORDER BY id"
            )
        ]
        sources = [s.to_json() for s in resolve_sources(SyncRequest(), home)]
        result: dict[str, Any] = {
            "stateDir": display_path(home),
            "schemaVersion": db.schema_version(conn),
            "analyzerVersion": meta.get("analyzer_version", ANALYZER_VERSION),
            "lastSyncAt": meta.get("last_sync_at"),
            "sources": sources,
            "files": {
                "ok": files.get("ok", 0),
                "unavailable": files.get("unavailable", 0),
                "failed": files.get("failed", 0),
            },
            "sessions": one("SELECT count(*) FROM sessions"),
            # of them, a Task/Agent call's or a compaction's transcript (`sessions show`'s ↳)
            "subagentSessions": one(
                "SELECT count(*) FROM sessions"
                " WHERE parent_session_key IS NOT NULL AND agent_id IS NOT NULL"
            ),
            "turns": one("SELECT count(*) FROM turns"),
            "sealedTurns": one("SELECT count(*) FROM turns WHERE sealed = 1"),
            "toolUses": one("SELECT count(*) FROM tool_uses"),
            "providers": by_provider,
            **tables.table_counts(conn),
            "diagnostics": {"count": one("SELECT count(*) FROM diagnostics"), "recent": recent},
            "lastSyncUnreadable": _last_sync_unreadable(meta),
        }
        if request.integrity:
            problems = db.integrity_check(conn)
            if problems:
                raise errors.TeamloreError(
                    errors.DB_CORRUPT,
                    f"index.sqlite3 failed its integrity check ({problems[0]});"
                    " run `teamlore sync --rebuild`",
                    problems=problems[:10],
                )
            result["integrity"] = "ok"
        return result
