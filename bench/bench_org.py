"""Benchmark: the org index (docs/org.md), embedded SQLite and PostgreSQL side by side.

Builds `--repos` git repositories of `--entries` committed memory entries each (the synthetic
entries of bench_memory_projection.py; 100 x 200 = 20,000 documents by default), then for each
backend prints:

- `org sync` cold (every repository new: git read, lint, parse, analyze, embed, store), the
  same with `--lexical` (no embeddings), a no-op re-sync (every memory tree unchanged), and a
  re-sync after one entry changed in one repository;
- `org search` p50/p95 over `--queries` queries (words, pairs, identifiers, Chinese of 1-2
  characters), words only and hybrid (words + meaning);
- on PostgreSQL, two alternatives measured on the same data: ranking by meaning in SQL over a
  `float4[]` column instead of in the process, and Chinese by `pg_trgm` (`ILIKE` with a trigram
  GIN index) instead of the analyzer's bigrams in a tsvector.

PostgreSQL: `--database URL`, else a throwaway cluster is started (tests/org_support.py; needs
Debian's `postgresql`). A script, not a test:

    .venv/bin/python bench/bench_org.py [--repos 100] [--entries 200] [--queries 200]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `teamlore` entry point does

import argparse
import contextlib
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from bench_memory_projection import Corpus, make_queries, make_tree, percentile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from org_support import Cluster, throwaway_cluster
from teamlore.core.analyzer import parse_query
from teamlore.core.paths import ensure_private_dir
from teamlore.memory.store.search import VectorPath
from teamlore.models.embeddings import bundled_embedder
from teamlore.org.backends import open_store
from teamlore.org.search import VECTORS, decode, search_org
from teamlore.org.store import (
    OrgStore,
    Repository,
    SearchFilter,
    lock_holder,
)
from teamlore.org.sync import sync_org

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
LEXICAL = VectorPath(ran=False, reason="lexical search only was asked for")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=GIT_ENV)


def make_repositories(root: Path, repos: int, entries: int, corpus: Corpus) -> list[Path]:
    clones = []
    for i in range(repos):
        clone = root / f"service-{i:03d}"
        clone.mkdir(parents=True)
        make_tree(clone, entries, corpus)
        git(clone, "init", "-q")
        git(clone, "add", "-A")
        git(clone, "commit", "-qm", "memory")
        clones.append(clone)
    return clones


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def fresh(store: OrgStore, clones: list[Path]) -> None:
    for repo in store.repositories():
        store.remove_repository(repo.name)
    for clone in clones:
        store.add_repository(Repository(clone.name, str(clone), None, "2026-01-01T00:00:00Z"))


def sync_figures(store: OrgStore, clones: list[Path], embedder: object) -> None:
    fresh(store, clones)
    run = lambda e: sync_org(store, e, holder=lock_holder(), wait_seconds=0)  # noqa: E731
    lexical = timed(lambda: run(None))
    fresh(store, clones)
    cold = timed(lambda: run(embedder))
    documents = store.counts()["documents"]
    noop = timed(lambda: run(embedder))
    target = clones[0] / ".threadshare/memory/entries/entry-00000.md"
    target.write_text(target.read_text() + "\nOne more line.\n")
    git(clones[0], "commit", "-qam", "edit")
    one = timed(lambda: run(embedder))
    print(
        f"  sync cold (words + embeddings)  {cold:7.2f} s  {documents / cold:8.0f} docs/s\n"
        f"  sync cold --lexical             {lexical:7.2f} s  {documents / lexical:8.0f} docs/s\n"
        f"  no-op re-sync ({len(clones)} repos)       {noop * 1000:7.1f} ms\n"
        f"  re-sync, one entry changed      {one * 1000:7.1f} ms"
    )


def search_figures(store: OrgStore, queries: list[str], embedder: object) -> dict[str, float]:
    figures = {}
    for label, chosen in (("words", None), ("hybrid", embedder)):
        for query in queries[:5]:  # warm: vectors decoded, the Chinese glosses' dictionary loaded
            search_org(store, query, embedder=chosen, skipped=LEXICAL)  # type: ignore[arg-type]
        times = []
        for query in queries:
            start = time.perf_counter()
            search_org(store, query, embedder=chosen, skipped=LEXICAL)  # type: ignore[arg-type]
            times.append((time.perf_counter() - start) * 1000)
        figures[label] = percentile(times, 0.95)
        print(
            f"  search {label:<7} p50 {percentile(times, 0.5):6.1f} ms  "
            f"p95 {percentile(times, 0.95):6.1f} ms  max {max(times):6.1f} ms"
        )
    return figures


def sql_vector_alternative(
    store: OrgStore, cluster_url: str, embedder: object, queries: list[str]
) -> None:
    """Meaning ranked in SQL over float4[] vs the process's cached int8 matrix."""
    import psycopg

    space = embedder.space.key  # type: ignore[attr-defined]
    decoded = decode(store, space)
    whole = decoded.whole
    values = np.frombuffer(whole.values, dtype=np.int8).reshape(whole.count, -1)
    vectors = (
        values.astype(np.float32) * (np.asarray(whole.scales, dtype=np.float32) / 127)[:, None]
    )
    with psycopg.connect(cluster_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_vectors")
        conn.execute("CREATE TABLE bench_vectors (id bigint PRIMARY KEY, v float4[] NOT NULL)")
        with conn.cursor().copy("COPY bench_vectors (id, v) FROM STDIN") as copy:
            for doc, row in zip(decoded.docs.tolist(), vectors.tolist(), strict=True):
                copy.write_row((doc, row))
        sql_times, process_times = [], []
        for query in queries[:50]:
            q = embedder.embed_query(query)[0]  # type: ignore[attr-defined]
            start = time.perf_counter()
            conn.execute(
                "SELECT id FROM bench_vectors ORDER BY (SELECT sum(a * b) "
                "FROM unnest(v, %s::float4[]) AS t(a, b)) DESC LIMIT 100",
                (q.tolist(),),
            ).fetchall()
            sql_times.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            keep = decoded.keep(SearchFilter())
            decoded.meaning([q.tolist()], keep, lambda docs: [set()])  # one model: the bundled
            process_times.append((time.perf_counter() - start) * 1000)
        conn.execute("DROP TABLE bench_vectors")
    sql_p95, process_p95 = percentile(sql_times, 0.95), percentile(process_times, 0.95)
    print(
        f"  meaning in SQL (float4[], unnest) p95 {sql_p95:7.1f} ms  vs in process (int8 matrix) "
        f"p95 {process_p95:5.2f} ms: {sql_p95 / process_p95:5.0f}x"
    )


def trigram_alternative(cluster_url: str, store: OrgStore, queries: list[str]) -> None:
    """Chinese of 1-2 characters: pg_trgm ILIKE vs the analyzer's bigrams in a tsvector."""
    import psycopg

    chinese = [q for q in queries if not q.isascii()][:40]
    with psycopg.connect(cluster_url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        conn.execute(
            "CREATE INDEX IF NOT EXISTS bench_body_trgm ON org_documents "
            "USING gin (body gin_trgm_ops)"
        )
        trgm, ours, agree = [], [], 0
        for query in chinese:
            start = time.perf_counter()
            found = conn.execute(
                "SELECT count(*) FROM org_documents WHERE body ILIKE %s", (f"%{query}%",)
            ).fetchone()
            trgm.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            hits = store.lexical(parse_query(query), SearchFilter(), 1000)
            ours.append((time.perf_counter() - start) * 1000)
            agree += int(bool(found and found[0]) == bool(hits))
        conn.execute("DROP INDEX bench_body_trgm")
    print(
        f"  Chinese 1-2 chars: pg_trgm ILIKE p95 {percentile(trgm, 0.95):6.1f} ms, "
        f"analyzer bigrams tsvector p95 {percentile(ours, 0.95):6.1f} ms "
        f"({agree}/{len(chinese)} queries agree on found/not found)"
    )


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    with throwaway_cluster(fsync=True) as cluster:
        cluster.admin("CREATE DATABASE bench_org")
        yield Cluster(cluster.port).url("bench_org")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repos", type=int, default=100)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--database", default=None, help="postgresql://… (default: throwaway)")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()}  {args.repos} repositories x {args.entries} entries")
    with tempfile.TemporaryDirectory(prefix="bench-org-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        corpus = Corpus(random.Random(1), dense=False)
        clones = make_repositories(root / "clones", args.repos, args.entries, corpus)
        print(f"corpus: {time.perf_counter() - start:.1f} s to write and commit")
        embedder = bundled_embedder()
        queries = make_queries(args.queries, corpus)
        results = {}
        with postgres(args.database) as url:
            for backend, database in (("sqlite", None), ("postgresql", url)):
                print(f"{backend}:")
                store = open_store(database, ensure_private_dir(root / "home"))
                VECTORS.__init__()  # type: ignore[misc]
                sync_figures(store, clones, embedder)
                results[backend] = search_figures(store, queries, embedder)
                if backend == "postgresql":
                    sql_vector_alternative(store, url, embedder, queries)
                    trigram_alternative(url, store, queries)
                store.close()
        for label in ("words", "hybrid"):
            ratio = results["postgresql"][label] / results["sqlite"][label]
            print(f"search {label} p95: PostgreSQL / SQLite = {ratio:.2f}")


if __name__ == "__main__":
    main()
