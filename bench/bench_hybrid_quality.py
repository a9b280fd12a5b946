"""Team-memory retrieval on hard queries: R@1, R@5 and MRR of lexical, vector and hybrid search,
per query kind, in one run (and `meaning`: the vector path's two rankings, whole text and
headline, fused without words — so what words add to hybrid shows).

    .venv/bin/python bench/bench_hybrid_quality.py [--tree DIR] [--queries FILE]
        [--show-misses] [--explain] [--allow-overlap] [--check-only]

The memory tree (`../shared/fixtures/threadshare-memory` by default: 17 real entries, 6 of them
in Chinese, and one scene) is copied into a throwaway worktree and projected into a throwaway
state database exactly as `teamlore memory search` sees it. `hybrid_queries.json` holds the
queries, each with the one document that answers it, in five kinds: paraphrase, situational
("I'm about to do X, what must I check?"), near-miss (the query shares words with a similar
entry, the `distractor`, and none with the answer), cross-lingual (Chinese query → English
entry, English query → Chinese entry) and an easy keyword set. A query is found at k when its
answer is among the first k results.

`hybrid_queries_heldout.json` (`--queries bench/hybrid_queries_heldout.json`) is a held-out set
of the same kinds, written independently: retrieval is tuned on `hybrid_queries.json` only, and
the held-out set is run once, to report whether a gain generalizes (bench/README.md).
`--check-only` validates a query file — every answer and distractor is a document of the tree,
every kind is known, no query is asked twice, every near-miss has a distractor it shares a term
with, every keyword query's terms all occur in its answer, and the no-shared-term rule below —
without embedding anything or running any search.

Before anything is measured, every query that is not of kind `keyword` is checked against its
answer with the project's analyzer: the query's search terms (`parse_query`: stopwords dropped,
identifiers split, words stemmed, Chinese as bigrams) must not occur in the answer's indexed
text (id, title, type, scene and body, as analyzed into the FTS table). A violation is printed
with the shared terms and the run refuses to go on (exit 1) unless `--allow-overlap` is given.
Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the `teamlore` entry point does

import orjson

from teamlore.core.analyzer import parse_query
from teamlore.memory.store.layout import MEMORY_ROOT
from teamlore.memory.store.projection import sync_approved_projection
from teamlore.memory.store.search import search_memory
from teamlore.memory.store.state_db import open_state_db
from teamlore.memory.store.vectors import sync_approved_vectors
from teamlore.models.embeddings import Embedder, bundled_embedder
from teamlore.models.multilingual import PairedEmbedder, multilingual_embedder

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_TREE = BENCH_DIR.parent.parent / "shared" / "fixtures" / "threadshare-memory"
# every query file is measured together and split into halves by a hash of the query (`half`)
TUNING_QUERIES = BENCH_DIR / "hybrid_queries.json"  # round 1's tuning set
HELDOUT_QUERIES = BENCH_DIR / "hybrid_queries_heldout.json"  # round 1's held-out set, spent
ROUND2_QUERIES = BENCH_DIR / "memory_queries_round2.json"  # Chinese terms and identifiers
DEFAULT_QUERIES = (TUNING_QUERIES, HELDOUT_QUERIES, ROUND2_QUERIES)
KINDS = (
    "paraphrase",
    "situational",
    "near-miss",
    "cross-lingual",
    "keyword",
    "short-chinese",
    "chinese-question",
    "identifier",
)
# kinds that are meant to share words with their answer: every term of a word kind occurs in
# it; a spaceless Chinese question shares some of its words
WORD_KINDS = frozenset({"keyword", "short-chinese", "identifier"})
UNCHECKED_KINDS = WORD_KINDS | {"chinese-question"}
HALVES = ("tuning", "held-out")
DEPTH = 10
REPO = "a1" * 12
WORKTREE = "b2" * 12

Ranker = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class HardQuery:
    kind: str
    query: str
    answer: str
    distractor: str | None = None


@dataclass(frozen=True, slots=True)
class Overlap:
    query: HardQuery
    shared: tuple[str, ...]  # the query's search terms found in the answer's indexed text


@dataclass(slots=True)
class Scores:
    found_at_1: int = 0
    found_at_5: int = 0
    reciprocal_ranks: float = 0.0
    count: int = 0

    def add(self, ranked: Sequence[str], answer: str) -> None:
        self.count += 1
        if answer in ranked:
            position = ranked.index(answer) + 1
            self.found_at_1 += position == 1
            self.found_at_5 += position <= 5
            self.reciprocal_ranks += 1.0 / position

    def figures(self) -> tuple[float, float, float]:
        n = max(self.count, 1)
        return self.found_at_1 / n, self.found_at_5 / n, self.reciprocal_ranks / n


def load_queries(paths: Sequence[Path]) -> list[HardQuery]:
    queries: list[HardQuery] = []
    for path in paths:
        data = orjson.loads(path.read_bytes())
        queries += [HardQuery(**item) for item in data["queries"]]
        unknown = sorted({q.kind for q in queries} - set(KINDS))
        if unknown:
            raise SystemExit(f"{path.name}: unknown query kinds {unknown}")
    return queries


def half(query: str) -> str:
    """The fixed half a query belongs to: tune on `tuning`, report `held-out` beside it."""
    return HALVES[hashlib.sha256(query.encode()).digest()[0] % 2]


def project_tree(tree: Path, home: Path) -> sqlite3.Connection:
    """Copy `tree` as a worktree's memory tree and project it into a state DB under `home`."""
    worktree = home / "worktree"
    shutil.copytree(tree, worktree / MEMORY_ROOT)
    conn = open_state_db(home)
    sync_approved_projection(
        conn, repository_key=REPO, worktree_key=WORKTREE, worktree_root=worktree
    )
    return conn


def indexed_texts(conn: sqlite3.Connection) -> dict[str, str]:
    """Document id → its analyzed text, exactly as the FTS table holds it."""
    rows = conn.execute(
        "SELECT e.entry_id, approved_fts.searchable_text FROM approved_fts "
        "JOIN approved_entries AS e ON e.id = approved_fts.rowid "
        "WHERE e.repository_key = ? AND e.worktree_key = ?",
        (REPO, WORKTREE),
    )
    return {str(entry_id): str(text) for entry_id, text in rows}


def shared_terms(query: str, analyzed: str) -> tuple[str, ...]:
    """The query's search terms that occur in an analyzed text (what lexical search matches)."""
    padded = f" {analyzed} "
    return tuple(
        term.whole or " ".join(term.parts)
        for term in parse_query(query).terms
        if term.found_in(padded)
    )


def structure_problems(queries: Iterable[HardQuery], texts: dict[str, str]) -> list[str]:
    """What makes a query unusable apart from shared terms: a query asked twice, an answer or
    distractor that is not a document of the tree, a near-miss without a distractor it shares a
    search term with, a keyword query whose answer lacks one of its terms."""
    problems: list[str] = []
    seen: set[str] = set()
    for q in queries:
        if q.query in seen:
            problems.append(f"asked twice: {q.query}")
        seen.add(q.query)
        if q.answer not in texts:
            problems.append(f"answer {q.answer!r} is not a document of the tree: {q.query}")
        elif q.kind in WORD_KINDS and len(shared_terms(q.query, texts[q.answer])) < len(
            parse_query(q.query).terms
        ):
            problems.append(f"keyword query with a term its answer lacks: {q.query}")
        if q.distractor is not None and q.distractor not in texts:
            problems.append(f"distractor {q.distractor!r} is not a document of the tree: {q.query}")
        elif q.distractor is not None and q.distractor == q.answer:
            problems.append(f"distractor is the answer: {q.query}")
        elif q.kind == "near-miss" and q.distractor is None:
            problems.append(f"near-miss without a distractor: {q.query}")
        elif q.distractor is not None and not shared_terms(q.query, texts[q.distractor]):
            problems.append(f"shares no search term with its distractor: {q.query}")
    return problems


def overlaps(queries: Iterable[HardQuery], texts: dict[str, str]) -> list[Overlap]:
    """Every checked query that shares a search term with its answer."""
    found: list[Overlap] = []
    for q in queries:
        if q.kind in UNCHECKED_KINDS:
            continue
        if q.answer not in texts:
            raise SystemExit(f"answer {q.answer!r} is not a document of the tree")
        shared = shared_terms(q.query, texts[q.answer])
        if shared:
            found.append(Overlap(q, shared))
    return found


def memory_ranker(conn: sqlite3.Connection, mode: str, embedder: Embedder | None) -> Ranker:
    """`teamlore memory search` in one mode: lexical, vector or hybrid (the CLI's default)."""

    def rank(query: str) -> list[str]:
        if mode == "lexical" and not parse_query(query).terms:
            return []
        result = search_memory(
            conn,
            repository_key=REPO,
            worktree_key=WORKTREE,
            query=query,
            limit=DEPTH,
            embedder=embedder,
            mode=mode,  # type: ignore[arg-type]
        )
        return [hit.id for hit in result.results]

    return rank


def embed_tree(conn: sqlite3.Connection, model: str = "paired") -> Embedder:
    """Memory's model (`paired`: the multilingual and the static one side by side, what
    `memory search` runs), the multilingual one alone (`multilingual`) or the static one alone
    (`static`, what sessions use), with every projected document embedded."""
    embedder = model_named(model)
    sync_approved_vectors(conn, repository_key=REPO, worktree_key=WORKTREE, embedder=embedder)
    return embedder


MODELS = ("paired", "multilingual", "static")


def model_named(model: str) -> Embedder:
    """One of MODELS (the static one when the multilingual package is missing)."""
    static = bundled_embedder()
    multilingual = multilingual_embedder() if model != "static" else None
    if multilingual is None:
        return static
    return PairedEmbedder(multilingual, static) if model == "paired" else multilingual


@dataclass(slots=True)
class Evaluation:
    scores: dict[tuple[str, str], Scores]  # (method, kind) → figures
    misses: dict[str, list[tuple[HardQuery, list[str]]]]  # method → queries not in its top 5
    seconds: dict[str, float]  # method → time spent on all queries


HARD_KINDS = frozenset({"paraphrase", "situational", "near-miss", "cross-lingual"})


def evaluate(queries: Sequence[HardQuery], rankers: dict[str, Ranker]) -> Evaluation:
    """Scores per (method, "<half> <kind>"): each query counts in its half and in "both"."""
    out = Evaluation({}, {name: [] for name in rankers}, {})
    for name, rank in rankers.items():
        started = time.perf_counter()
        for q in queries:
            ranked = rank(q.query)[:DEPTH]
            easy = "all easy" if q.kind not in HARD_KINDS else "all hard"
            for kind in (q.kind, easy, "all"):
                for part in (half(q.query), "both"):
                    key = (name, f"{part} {kind}")
                    out.scores.setdefault(key, Scores()).add(ranked, q.answer)
            if q.answer not in ranked[:5]:
                out.misses[name].append((q, ranked[:5]))
        out.seconds[name] = time.perf_counter() - started
    return out


def print_table(scores: dict[tuple[str, str], Scores], methods: Sequence[str], part: str) -> None:
    head = f"{part + ' half':<18}{'n':>4}  " + "  ".join(
        f"{m + ' R@1/R@5/MRR':<24}" for m in methods
    )
    print(head)
    print("-" * len(head))
    for kind in (*KINDS, "all easy", "all hard", "all"):
        first = scores.get((methods[0], f"{part} {kind}"))
        if first is None:
            continue
        cells = []
        for method in methods:
            r1, r5, mrr = scores[(method, f"{part} {kind}")].figures()
            cells.append(f"{r1:.2f} / {r5:.2f} / {mrr:.2f}".ljust(24))
        print(f"{kind:<18}{first.count:>4}  " + "  ".join(cells))


# issue 25's targets for memory search (hybrid) on the held-out half: (kind, figure, at least)
TARGETS = (
    ("all easy", "R@5", 0.97),
    ("all easy", "MRR", 0.90),
    ("all hard", "R@5", 0.85),
    ("all hard", "MRR", 0.65),
    ("paraphrase", "R@5", 0.75),
    ("situational", "R@5", 0.75),
    ("cross-lingual", "R@5", 0.90),
    ("near-miss", "R@5", 0.90),
)
FIGURES = ("R@1", "R@5", "MRR")


def print_targets(scores: dict[tuple[str, str], Scores], method: str = "hybrid") -> None:
    """One line per target: the held-out figure of `method`, the tuning one beside it."""
    print(f"\ntargets ({method}, held-out half; tuning half in brackets)")
    for kind, figure, least in TARGETS:
        held = scores[(method, f"held-out {kind}")].figures()[FIGURES.index(figure)]
        tuned = scores[(method, f"tuning {kind}")].figures()[FIGURES.index(figure)]
        verdict = "met" if held >= least else "NOT met"
        print(f"  target {kind} {figure} >= {least:.2f}: {held:.2f} ({tuned:.2f})  {verdict}")


def explain(conn: sqlite3.Connection, embedder: Embedder, queries: Sequence[HardQuery]) -> None:
    """For every hard query of the tuning half that hybrid search does not rank first: where the
    answer (and what came first, and the near-miss's distractor) stands in the words' ranking
    (with the share of the query's terms held) and by each model's cosine of each field —
    `wu`/`hu`: the multilingual model's whole text/headline, `ws`/`hs` the static model's (a
    single model: `w`/`h`). Never for the held-out half (bench/README.md)."""
    from teamlore.memory.store.meaning import model_cosines
    from teamlore.memory.store.vectors import load_approved
    from teamlore.models.multilingual import model_parts
    from teamlore.models.vector_math import QueryRows

    stored = load_approved(conn, (REPO, WORKTREE), embedder.space.key)
    names = dict(conn.execute("SELECT id, entry_id FROM approved_entries"))
    hybrid = memory_ranker(conn, "hybrid", embedder)
    models = model_parts(embedder)
    tags = ("u", "s") if len(models) == 2 else ("",)
    print("\nwhy: hard tuning queries not ranked first (rank in each ranking)")
    for q in queries:
        if q.kind not in HARD_KINDS or half(q.query) != "tuning":
            continue
        ranked = hybrid(q.query)
        if ranked[:1] == [q.answer]:
            continue
        rows = [model.embed_query(q.query)[0].tolist() for model in models]
        parts = QueryRows.of(rows, stored.whole.dimensions)
        ranks: dict[str, list[str]] = {}
        for field, vectors in (("w", stored.whole), ("h", stored.headline)):
            for tag, cos in zip(tags, model_cosines(vectors, parts), strict=True):
                order = sorted(range(len(cos)), key=lambda i: -cos[i])  # stable
                ranks[field + tag] = [names[int(stored.ids[i])] for i in order]
        words = lexical_shares(conn, q.query)
        position = ranked.index(q.answer) + 1 if q.answer in ranked else "-"
        print(f"  [{q.kind}] hybrid rank {position}: {q.query}")
        shown = {"answer": q.answer, "first": ranked[0] if ranked else None}
        if q.distractor:
            shown["distractor"] = q.distractor
        for label, doc in shown.items():
            if doc is None:
                continue
            cells = " ".join(f"{name} {order.index(doc) + 1:>2}" for name, order in ranks.items())
            held = words.get(doc)
            lexical = "-" if held is None else f"{held[0]:>2} ({held[1]:.2f})"
            print(f"      {label:<10} words {lexical:<9} {cells}  {doc[:44]}")


def lexical_shares(conn: sqlite3.Connection, query: str) -> dict[str, tuple[int, float]]:
    """Document id → (its rank by words, the share of the query's terms it holds)."""
    from teamlore.memory.store.search import _lexical
    from teamlore.models.glosses import segmented

    parsed = segmented(parse_query(query))
    if not parsed.terms:
        return {}
    terms = len(parsed.terms)
    ranked = _lexical(conn, (REPO, WORKTREE), parsed, False, None)
    names = dict(conn.execute("SELECT id, entry_id FROM approved_entries"))
    return {
        names[row.id]: (rank, held / terms) for rank, (held, _, row) in enumerate(ranked, start=1)
    }


def check_only(paths: Sequence[Path], queries: Sequence[HardQuery], texts: dict[str, str]) -> int:
    """Print what is wrong with a query file (nothing is embedded or searched); 0 when valid."""
    problems = structure_problems(queries, texts)
    found = [] if problems else overlaps(queries, texts)
    counts = ", ".join(f"{kind} {sum(q.kind == kind for q in queries)}" for kind in KINDS)
    names = ", ".join(path.name for path in paths)
    print(f"{names}: {len(queries)} queries ({counts}) over {len(texts)} documents")
    for problem in problems:
        print(f"  {problem}")
    for o in found:
        print(f"  SHARES {', '.join(o.shared)!s:<28} {o.query.kind}: {o.query.query}")
    if problems or found:
        print(f"invalid: {len(problems) + len(found)} problems")
        return 1
    print("valid: no retrieval was run")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=DEFAULT_TREE)
    parser.add_argument(
        "--queries", type=Path, nargs="+", default=list(DEFAULT_QUERIES), help="query files"
    )
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="where each hard tuning query's answer stands in every ranking, when not first",
    )
    parser.add_argument("--model", choices=MODELS, default="paired", help="memory's model")
    parser.add_argument(
        "--half",
        choices=(*HALVES, "both"),
        default="both",
        help="measure one half only (tune with --half tuning: the held-out figures stay unseen)",
    )
    parser.add_argument(
        "--allow-overlap", action="store_true", help="measure even when a query shares terms"
    )
    parser.add_argument(
        "--check-only",
        action="store_true",
        help="validate the query file against the tree and exit; runs no retrieval",
    )
    args = parser.parse_args(argv)
    queries = load_queries(args.queries)
    with (
        tempfile.TemporaryDirectory(prefix="teamlore-hybrid-") as tmp,
        closing(project_tree(args.tree, Path(tmp))) as conn,
    ):
        texts = indexed_texts(conn)
        if args.check_only:
            return check_only(args.queries, queries, texts)
        problems = structure_problems(queries, texts)
        for problem in problems:
            print(f"  {problem}")
        if problems:
            print("refusing to measure: fix these queries (see --check-only)")
            return 1
        found = overlaps(queries, texts)
        checked = sum(q.kind not in UNCHECKED_KINDS for q in queries)
        print(
            f"tree: {len(texts)} documents; queries: {len(queries)} "
            f"({checked} checked for shared terms with their answer: {len(found)} violations)"
        )
        for o in found:
            print(f"  SHARES {', '.join(o.shared)!s:<28} {o.query.kind}: {o.query.query}")
        if found and not args.allow_overlap:
            print("refusing to measure: reword these queries (or pass --allow-overlap)")
            return 1
        embedder = embed_tree(conn, args.model)
        rankers: dict[str, Ranker] = {
            mode: memory_ranker(conn, mode, embedder)
            for mode in ("lexical", "vector", "hybrid", "meaning")
        }
        measured = [q for q in queries if args.half in ("both", half(q.query))]
        result = evaluate(measured, rankers)
        for part in (*HALVES, "both") if args.half == "both" else (args.half,):
            print()
            print_table(result.scores, list(rankers), part)
        if args.half == "both":
            print_targets(result.scores)
        if args.explain:
            explain(conn, embedder, queries)
        print(f"vector space: {embedder.space.key}")
        for name, spent in result.seconds.items():
            print(f"{name}: {spent * 1000 / max(len(measured), 1):.2f} ms per query")
        if args.show_misses:
            for name, missed in result.misses.items():
                print(f"\n{name}: not in the top 5")
                for q, top in missed:
                    if half(q.query) != "tuning":
                        continue  # never read the held-out half's misses (bench/README.md)
                    print(f"  [{q.kind}] {q.query}\n      want {q.answer}\n      got  {top[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
