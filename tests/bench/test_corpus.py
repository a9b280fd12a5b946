"""The benchmark corpus is only worth its figures if the real adapters read it like real files:
zero diagnostics, every turn sealed, and the shapes that matter (exit codes, commits, file
touches, images, Chinese) arriving in the index."""

from __future__ import annotations

import hashlib
import sqlite3
import sys
from pathlib import Path

import pytest

from teamlore.sessions.index_db import open_index
from teamlore.sessions.indexer import Indexer, Source, SyncStats
from teamlore.sessions.providers import get_adapter
from teamlore.sessions.queries import search_turns

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import corpus

Synced = tuple[corpus.CorpusStats, sqlite3.Connection, SyncStats, Path]


def _sync(root: Path, conn: sqlite3.Connection, state: Path) -> SyncStats:
    roots = corpus.source_roots(root)
    adapters = {provider: get_adapter(provider) for provider in roots}
    sources = [Source(provider, path) for provider, path in roots.items()]
    return Indexer(conn, adapters, home=state).sync(sources)


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.jsonl")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Synced:
    base = tmp_path_factory.mktemp("corpus")
    stats = corpus.generate(base / "home", seed=7, turns=8, turns_per_session=(4, 4))
    conn = open_index(base / "state")
    sync = _sync(base / "home", conn, base / "state")
    return stats, conn, sync, base


def test_generated_files_index_with_zero_diagnostics(synced: Synced) -> None:
    stats, conn, sync, _ = synced
    assert sync.diagnostic_count == 0, sync.diagnostics
    assert (sync.files_seen, sync.sessions, sync.turns) == (
        stats.files,
        stats.sessions,
        stats.turns,
    )
    assert conn.execute("SELECT count(*) FROM turns WHERE sealed = 0").fetchone()[0] == 0


def test_files_are_laid_out_like_real_homes(synced: Synced) -> None:
    stats, *_ = synced
    names = [p.relative_to(stats.root).as_posix() for p in stats.paths]
    assert any(n.startswith("codex/sessions/2026/") and "/rollout-2026-" in n for n in names)
    assert any(n.startswith("claude/projects/-home-dev") for n in names)


@pytest.mark.parametrize("provider", ["codex", "claude"])
def test_each_provider_carries_exit_codes_commits_touches_and_images(
    synced: Synced, provider: str
) -> None:
    _, conn, _, _ = synced

    def count(sql: str) -> int:
        return int(
            conn.execute(f"SELECT count(*) FROM {sql} AND s.provider = ?", (provider,)).fetchone()[
                0
            ]
        )

    tools = "tool_uses u JOIN turns t ON t.id = u.turn_id JOIN sessions s ON s.id = t.session_id"
    assert count(f"{tools} WHERE u.exit_code = 1 AND u.status = 'error'") >= 1
    assert (
        count(
            f"{tools} JOIN observed_commits c ON c.tool_use_id = u.id"
            " WHERE c.from_commit_command = 1 AND length(c.hash) = 7"
        )
        >= 1
    )
    assert (
        count(
            "file_touches f JOIN turns t ON t.id = f.turn_id JOIN sessions s"
            " ON s.id = t.session_id WHERE f.kind = 'write'"
        )
        >= 1
    )
    assert (
        count(
            "turns t JOIN sessions s ON s.id = t.session_id"
            " WHERE t.user_text LIKE '%[image: image/png, %bytes]%'"
        )
        == 1
    )
    for query in ("增", "同步", corpus.FEATURE_PHRASE):
        assert search_turns(conn, query, provider=provider).hits, query


@pytest.mark.parametrize("provider", ["codex", "claude"])
def test_an_appended_turn_becomes_searchable(synced: Synced, provider: str) -> None:
    stats, conn, _, base = synced
    path = next(p for p in stats.paths if p.relative_to(stats.root).parts[0] == provider)
    token = f"appendtoken{provider}"
    corpus.append_turn(path, token, at_ms=corpus.BASE_EPOCH_MS + 10**9)
    sync = _sync(stats.root, conn, base / "state")
    assert sync.diagnostic_count == 0, sync.diagnostics
    assert (sync.files_changed, sync.turns) == (1, 1)
    hits = search_turns(conn, token).hits
    assert [h["provider"] for h in hits] == [provider]


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    first = corpus.generate(tmp_path / "a", seed=3, turns=2, profile="lean")
    again = corpus.generate(tmp_path / "b", seed=3, turns=2, profile="lean")
    other = corpus.generate(tmp_path / "c", seed=4, turns=2, profile="lean")
    assert first.bytes == again.bytes
    assert _tree_digest(tmp_path / "a") == _tree_digest(tmp_path / "b")
    assert _tree_digest(tmp_path / "a") != _tree_digest(tmp_path / "c")
    assert other.turns == 2
