"""Dedup recall (`recall-rrf@1`) for 64 drafts against 10,000 approved entries and 1,000 live
candidates. Target: <= 250 ms for the whole batch. Prints figures.

    .venv/bin/python bench/bench_dedup.py [--approved 10000] [--candidates 1000] [--drafts 64]
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from teamlore.core import db
from teamlore.core.analyzer import ANALYZER_VERSION, analyze
from teamlore.core.canonical import canonical_json, digest
from teamlore.memory.extraction import dedup
from teamlore.memory.store.state_db import RECALL_ALGORITHM_VERSION, open_state_db

REPO, WORKTREE = "a" * 64, "b" * 64
STOPWORDS = [
    *("the", "a", "to", "of", "and", "in", "is", "for", "on", "with"),
    *("before", "after", "when", "it", "this", "that", "be", "by", "as"),
]
HANZI = (
    "发布构建部署缓存链接迁移索引重试超时分支合并提交标签签名镜像测试"
    "数据库备份恢复配置密钥证书端口内存性能"
)


class Vocabulary:
    """Zipf-distributed words (s = 1.05): 20 stopwords, then 5,000 pseudo-words, like prose."""

    def __init__(self, rng: random.Random, size: int = 5000) -> None:
        syllables = ["ka", "to", "mi", "re", "su", "no", "pa", "li", "ve", "do", "ra", "ne"]
        words: set[str] = set()
        while len(words) < size:
            words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
        ranked = sorted(words)
        rng.shuffle(ranked)
        self.words = STOPWORDS + ranked
        self.cumulative = list(
            itertools.accumulate(1 / (i + 1) ** 1.05 for i in range(len(self.words)))
        )

    def sentence(self, rng: random.Random, words: int) -> str:
        total = self.cumulative[-1]
        parts = [
            self.words[bisect.bisect(self.cumulative, rng.random() * total)] for _ in range(words)
        ]
        if rng.random() < 0.2:
            parts.append("".join(rng.choice(HANZI) for _ in range(rng.randint(4, 12))))
        return " ".join(parts).capitalize() + "."


def populate(
    conn: sqlite3.Connection, vocab: Vocabulary, approved: int, candidates: int, rng: random.Random
) -> None:
    with db.write_tx(conn):
        for i in range(approved):
            body = " ".join(vocab.sentence(rng, 12) for _ in range(3))
            content_digest = digest(body)
            conn.execute(
                "INSERT INTO approved_entries (id, repository_key, worktree_key, kind, entry_id, "
                "path, revision, content_digest, entry_type, status, title, frontmatter_json, "
                "body_text) VALUES (?, ?, ?, 'entry', ?, ?, ?, ?, 'work_fact', 'approved', ?, "
                "'{}', ?)",
                (
                    i + 1,
                    REPO,
                    WORKTREE,
                    f"entry-{i}",
                    f"entries/entry-{i}.md",
                    int(content_digest[:13], 16) + 1,
                    content_digest,
                    f"entry {i}",
                    body,
                ),
            )
            conn.execute(
                "INSERT INTO approved_fts (rowid, searchable_text) VALUES (?, ?)",
                (i + 1, analyze(body)),
            )
        conn.execute(
            "INSERT INTO approved_projection (repository_key, worktree_key, generation, "
            "source_tree_digest, coverage, build_coverage, analyzer_version, "
            "recall_algorithm_version, projector_version, entry_count, synced_at) "
            "VALUES (?, ?, 1, ?, 'complete', 'complete', ?, ?, 'bench@1', ?, 0)",
            (REPO, WORKTREE, "c" * 64, ANALYZER_VERSION, RECALL_ALGORITHM_VERSION, approved),
        )
        for i in range(candidates):
            payload = {"content": vocab.sentence(rng, 20), "statements": []}
            conn.execute(
                "INSERT INTO candidates (candidate_id, repository_key, worktree_key, chunk_ref, "
                "content_digest, payload_json, status, updated_at) VALUES (?, ?, ?, 'chunk', ?, "
                "?, ?, 0)",
                (
                    f"cand-{i}",
                    REPO,
                    WORKTREE,
                    digest(payload),
                    canonical_json(payload).decode(),
                    "draft" if i % 2 else "quarantined",
                ),
            )
            rowid = conn.execute("SELECT last_insert_rowid()").fetchone()[0]
            conn.execute(
                "INSERT INTO candidate_fts (rowid, searchable_text) VALUES (?, ?)",
                (rowid, analyze(dedup.candidate_searchable_text(payload))),
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--approved", type=int, default=10_000)
    parser.add_argument("--candidates", type=int, default=1_000)
    parser.add_argument("--drafts", type=int, default=64)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(20260302)
    with tempfile.TemporaryDirectory() as tmp:
        conn = open_state_db(Path(tmp))
        started = time.perf_counter()
        vocab = Vocabulary(rng)
        populate(conn, vocab, args.approved, args.candidates, rng)
        built = time.perf_counter() - started
        drafts = [
            dedup.DraftQuery(
                f"d{i}", f"draft-{i}", " ".join(vocab.sentence(rng, 25) for _ in range(2))
            )
            for i in range(args.drafts)
        ]
        timings = []
        result = None
        for _ in range(args.runs):
            t = time.perf_counter()
            with db.write_tx(conn):  # as inside tx 2: one snapshot under the write lock
                result = dedup.recall_rrf(
                    conn, repository_key=REPO, worktree_key=WORKTREE, drafts=drafts
                )
            timings.append((time.perf_counter() - t) * 1000)
        assert result is not None
        median = statistics.median(timings)
        print(
            f"corpus: {args.approved} approved entries, {args.candidates} live candidates "
            f"(built in {built:.1f} s)"
        )
        print(
            f"batch: {args.drafts} drafts, k={result.k}, pool {len(result.pool)} items, "
            f"{sum(len(s.ordered) for s in result.recall_sets)} hits"
        )
        print(
            f"recall-rrf@1 per batch: median {median:.1f} ms, min {min(timings):.1f} ms, "
            f"max {max(timings):.1f} ms over {args.runs} runs "
            f"({median / args.drafts:.2f} ms per draft)"
        )
        print(
            f"target <= 250 ms: {'met' if median <= 250 else 'MISSED'} (ratio {median / 250:.2f})"
        )


if __name__ == "__main__":
    main()
