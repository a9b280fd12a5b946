"""Embedding vectors of the approved projection, next to its FTS rows (docs/hybrid-search.md).

`sync_approved_vectors` brings the owner's vectors up to date with its projection: every
approved document (entry, scene, doctrine, Skill) gets one vector in the embedder's space, and
one of its headline alone (`projection.headline`: its title, else its body's first sentence;
memory search's headline ranking, docs/hybrid-search.md "Fusion"; a document whose headline the
model cannot read stands for itself there, by its whole-text vector), keyed by (kind, id) and
bound to the file's content digest, so a rebuilt projection keeps the vectors of unchanged files
and only new or edited documents are embedded. A vector of another space (the
model changed) is replaced, never compared. Embedding runs outside any transaction (an endpoint
may be slow); the write transaction then stores only vectors whose document is still projected
with the same digest.

A vector is stored quantized: a float32 scale, then one int8 per dimension (`value / scale *
127`, rounded) — 772 bytes for memory's 768 dimensions (docs/hybrid-search.md, "Memory's
model"); cosine similarities move by about 0.002. Besides one row per document, the sync keeps
one *pack* per owner: the current projection generation's vectors as one int8 matrix with their
row ids, kinds and scales (a paired model's in one block of columns per model, `part_widths`),
so a search reads one row and scans it with one matrix product per ranking and model
(bench/bench_embeddings.py); a long-lived process decodes that row once while its random
token stays the same (`PACKS`). When the pack is missing or of another generation, the rows are
read instead: same vectors, same ranking.
"""

from __future__ import annotations

import bisect
import heapq
import json
import sqlite3
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from teamlore.core import db
from teamlore.core.shapes.records import Record
from teamlore.memory.store.projection_rows import document_text, headline
from teamlore.models.embeddings import Embedder, Vectors, quantize_rows
from teamlore.models.glosses import has_chinese
from teamlore.models.vector_math import (
    Int8Rows,
    QueryRows,
    pack_float32s,
    pack_int64s,
    picked,
    unpack_float32s,
    unpack_int64s,
)

EMBED_BATCH = 256  # documents per embed call (bounds memory; progress is reported per batch)
# pack flags; `_CHINESE`: the document's title or body holds Chinese, what decides whether a
# model reads it (`Embedder.reads`), so a search need not read its text to ask
_ENTRY, _DEPRECATED, _CHINESE = 1, 2, 4

Progress = Callable[[int, int], None]  # (documents embedded so far, documents to embed)


class VectorSync(NamedTuple):
    space: str
    embedded: int  # documents embedded by this sync
    total: int  # approved documents of the owner with a vector in `space` afterwards


# --------------------------------------------------------------------------------------------
# the stored form


def to_blobs(vectors: Vectors) -> list[bytes]:
    """Float rows → the stored form: per row a little-endian float32 scale, then the int8s."""
    scales, values = quantize_rows(vectors)
    return [
        scale.astype("<f4").tobytes() + row.tobytes()
        for scale, row in zip(scales, values, strict=True)
    ]


def from_blobs(blobs: Sequence[bytes]) -> Vectors:
    """Stored vectors of one space (so one length) → a float32 matrix, one row per blob."""
    import numpy as np

    rows = Int8Rows.from_blobs(blobs)
    values = np.frombuffer(rows.values, dtype=np.int8).reshape(rows.count, rows.dimensions)
    scales = np.asarray(rows.scales, dtype=np.float32)
    return values.astype(np.float32) * (scales / np.float32(127))[:, None]


def embed_in_batches(
    embedder: Embedder, texts: Sequence[str], progress: Progress | None = None
) -> list[bytes]:
    blobs: list[bytes] = []
    for start in range(0, len(texts), EMBED_BATCH):
        blobs.extend(to_blobs(embedder.embed(texts[start : start + EMBED_BATCH])))
        if progress is not None:
            progress(len(blobs), len(texts))
    return blobs


# --------------------------------------------------------------------------------------------
# sync


_MISSING = (
    "SELECT e.kind, e.entry_id, e.content_digest, e.title, e.entry_type, e.frontmatter_json, "
    "e.body_text FROM approved_entries AS e LEFT JOIN approved_vectors AS v "
    "ON v.repository_key = e.repository_key AND v.worktree_key = e.worktree_key "
    "AND v.kind = e.kind AND v.entry_id = e.entry_id AND v.content_digest = e.content_digest "
    "AND v.space = ? "
    "WHERE e.repository_key = ? AND e.worktree_key = ? AND v.entry_id IS NULL "
    "ORDER BY e.kind, e.entry_id"
)

_CURRENT = (
    "SELECT e.id, e.kind, e.status, v.vector, v.headline_vector, e.title, e.body_text "
    "FROM approved_entries AS e "
    "JOIN approved_vectors AS v ON v.repository_key = e.repository_key "
    "AND v.worktree_key = e.worktree_key AND v.kind = e.kind AND v.entry_id = e.entry_id "
    "AND v.content_digest = e.content_digest "
    "WHERE e.repository_key = ? AND e.worktree_key = ? AND v.space = ? ORDER BY e.id"
)


def sync_approved_vectors(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    embedder: Embedder,
    progress: Progress | None = None,
) -> VectorSync:
    """Embed the owner's projected documents that have no vector in the embedder's space, and
    refresh the owner's pack. Raises what the embedder raises (nothing is written then)."""
    owner = (repository_key, worktree_key)
    space = embedder.space.key
    current = _pack_is_current(conn, owner, space)
    if current is not None:
        return VectorSync(space=space, embedded=0, total=current)
    missing = conn.execute(_MISSING, (space, *owner)).fetchall()
    texts = [document_text(row[1], row[3], row[4], json.loads(row[5]), row[6]) for row in missing]
    blobs = embed_in_batches(embedder, texts, progress)
    headline_blobs = _headline_blobs(embedder, missing, blobs)
    generation = _generation(conn, owner)
    with db.write_tx(conn):
        conn.executemany(
            "INSERT INTO approved_vectors (repository_key, worktree_key, kind, entry_id, "
            "content_digest, space, vector, headline_vector) SELECT ?, ?, ?, ?, ?, ?, ?, ? "
            "WHERE EXISTS ("
            "SELECT 1 FROM approved_entries WHERE repository_key = ? AND worktree_key = ? "
            "AND kind = ? AND entry_id = ? AND content_digest = ?) "
            "ON CONFLICT (repository_key, worktree_key, kind, entry_id) DO UPDATE SET "
            "content_digest = excluded.content_digest, space = excluded.space, "
            "vector = excluded.vector, headline_vector = excluded.headline_vector",
            (
                (*owner, *row[:3], space, blob, line, *owner, *row[:3])
                for row, blob, line in zip(missing, blobs, headline_blobs, strict=True)
            ),
        )
        removed = conn.execute(
            "DELETE FROM approved_vectors AS v WHERE repository_key = ? AND worktree_key = ? "
            "AND NOT EXISTS (SELECT 1 FROM approved_entries AS e WHERE "
            "e.repository_key = v.repository_key AND e.worktree_key = v.worktree_key "
            "AND e.kind = v.kind AND e.entry_id = v.entry_id)",
            owner,
        ).rowcount
        pack = conn.execute(
            "SELECT space, generation FROM approved_vector_packs "
            "WHERE repository_key = ? AND worktree_key = ?",
            owner,
        ).fetchone()
        if missing or removed or pack is None or tuple(pack) != (space, generation):
            from teamlore.models.multilingual import part_widths

            _write_pack(conn, owner, space, generation, part_widths(embedder))
        total = conn.execute(
            "SELECT count(*) FROM approved_vectors WHERE repository_key = ? "
            "AND worktree_key = ? AND space = ?",
            (*owner, space),
        ).fetchone()[0]
    return VectorSync(space=space, embedded=len(missing), total=int(total))


def _headline_blobs(embedder: Embedder, rows: Sequence[Any], blobs: list[bytes]) -> list[bytes]:
    """The headline vector of each (kind, entry_id, digest, title, …, body) row: its headline
    embedded alone; a document without a headline the model can read (none, or one in a
    language it has no word vectors for) stands for itself, by its whole-text vector `blobs`,
    so it is never ranked lower for lacking one."""
    headlines = [headline(row[3], row[6]) for row in rows]
    own = [i for i, text in enumerate(headlines) if text and embedder.reads(text)]
    out = list(blobs)
    for i, blob in zip(own, embed_in_batches(embedder, [headlines[i] for i in own]), strict=True):
        out[i] = blob
    return out


def _pack_is_current(conn: sqlite3.Connection, owner: tuple[str, str], space: str) -> int | None:
    """The pack's row count when it holds a vector of `space` for every document of the current
    generation (then there is nothing to embed or remove: the cheap path of every search)."""
    row = conn.execute(
        "SELECT length(p.ids) / 8 FROM approved_vector_packs AS p JOIN approved_projection AS a "
        "ON a.repository_key = p.repository_key AND a.worktree_key = p.worktree_key "
        "WHERE p.repository_key = ? AND p.worktree_key = ? AND p.space = ? "
        "AND p.generation = a.generation AND length(p.ids) / 8 = a.entry_count",
        (*owner, space),
    ).fetchone()
    return None if row is None else int(row[0])


def _generation(conn: sqlite3.Connection, owner: tuple[str, str]) -> int:
    row = conn.execute(
        "SELECT generation FROM approved_projection WHERE repository_key = ? AND worktree_key = ?",
        owner,
    ).fetchone()
    return 0 if row is None else int(row[0])


def _write_pack(
    conn: sqlite3.Connection,
    owner: tuple[str, str],
    space: str,
    generation: int,
    widths: tuple[int, ...],
) -> None:
    """The owner's pack, its matrices in column blocks of `widths` (`Int8Rows.from_blobs`)."""
    rows = conn.execute(_CURRENT, (*owner, space)).fetchall()
    whole = Int8Rows.from_blobs([row[3] for row in rows], widths=widths)
    headline = Int8Rows.from_blobs([row[4] for row in rows], whole.dimensions, widths)
    conn.execute(
        "INSERT INTO approved_vector_packs (repository_key, worktree_key, space, generation, "
        "dimensions, blocks, ids, flags, scales, vectors, headline_scales, headline_vectors, "
        "token) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, random()) "
        "ON CONFLICT (repository_key, worktree_key) DO UPDATE SET space = excluded.space, "
        "generation = excluded.generation, dimensions = excluded.dimensions, "
        "blocks = excluded.blocks, ids = excluded.ids, "
        "flags = excluded.flags, scales = excluded.scales, vectors = excluded.vectors, "
        "headline_scales = excluded.headline_scales, headline_vectors = excluded.headline_vectors, "
        "token = excluded.token",
        (
            *owner,
            space,
            generation,
            whole.dimensions,
            ",".join(map(str, whole.blocks)),
            pack_int64s([row[0] for row in rows]),
            _flags(rows),
            pack_float32s(whole.scales),
            whole.values,
            pack_float32s(headline.scales),
            headline.values,
        ),
    )


# --------------------------------------------------------------------------------------------
# ranking


class ApprovedVectors(Record, frozen=True):
    """The owner's vectors in one space for the current projection (`load_approved`)."""

    ids: array[int]  # approved_entries.id, ascending
    flags: bytes  # one per document: _ENTRY | _DEPRECATED | _CHINESE
    whole: Int8Rows
    headline: Int8Rows  # scale 0 where a document has no headline vector

    @property
    def count(self) -> int:
        return len(self.ids)

    def holding_chinese(self, ids: Sequence[int]) -> set[int]:
        """Those of `ids` (all of them stored here) whose title or body holds Chinese."""
        return {i for i in ids if self.flags[bisect.bisect_left(self.ids, i)] & _CHINESE}

    def kept(
        self, *, entries_only: bool = False, include_deprecated: bool = True
    ) -> list[int] | None:
        """The rows a search looks at (entries only or every kind, deprecated ones or not), in
        order; None when it looks at every row."""
        left_out = bytes(
            bool(entries_only and not flag & _ENTRY)
            or bool(not include_deprecated and flag & _DEPRECATED)
            for flag in range(256)
        )
        marks = self.flags.translate(left_out)
        if 1 not in marks:
            return None
        return [row for row, mark in enumerate(marks) if not mark]

    def rank(
        self,
        query: Sequence[float],
        *,
        limit: int,
        min_similarity: float,
        entries_only: bool = False,
        include_deprecated: bool = True,
        by_headline: bool = False,
    ) -> list[tuple[int, float]]:
        """(approved_entries.id, cosine) of the documents most similar to the unit-length
        `query`, best first (ties by id), at most `limit`, none below `min_similarity`. With
        `by_headline`, each document's headline vector stands for it (documents without one
        are left out)."""
        rows = self.headline if by_headline else self.whole
        if self.count == 0 or rows.dimensions != len(query):
            return []  # nothing stored, or stored by a model with another length: never compared
        keep = self.kept(entries_only=entries_only, include_deprecated=include_deprecated)
        if by_headline:
            keep = [row for row in keep or range(self.count) if rows.scales[row] > 0]
        (scores,) = rows.cosines(QueryRows.of([query], rows.dimensions))
        if keep is None:
            return best(self.ids, scores, limit, min_similarity)
        return best(picked(self.ids, keep), picked(scores, keep), limit, min_similarity)


def load_approved(conn: sqlite3.Connection, owner: tuple[str, str], space: str) -> ApprovedVectors:
    """The owner's vectors in `space` for the current projection: the pack when it is current
    (decoded once per process while it stays so, `PACKS`), else the rows (the same vectors)."""
    stamp = conn.execute(_PACK_STAMP, (*owner, space)).fetchone()
    if stamp is None or stamp[0] != stamp[2]:
        return _from_rows(conn, owner, space)
    key: PackKey = (stamp[3], owner, space, stamp[0], stamp[1])
    cached = PACKS.get(key)
    if cached is not None:
        return cached
    pack = conn.execute(
        "SELECT dimensions, ids, flags, scales, vectors, headline_scales, blocks, "
        "headline_vectors "
        "FROM approved_vector_packs WHERE repository_key = ? AND worktree_key = ? AND space = ? "
        "AND generation = ? AND token = ?",
        (*owner, space, stamp[0], stamp[1]),
    ).fetchone()
    decoded = None if pack is None else _decoded(pack)
    if decoded is None:  # rewritten between the two queries (the next search decodes the new
        return _from_rows(conn, owner, space)  # one), or blocks that do not fit its rows
    return PACKS.put(key, decoded)


# which pack is stored now, without reading its matrices: its generation and token, the
# projection's generation (a pack of an older one is not used) and the state DB's random id
_PACK_STAMP = (
    "SELECT p.generation, p.token, coalesce(a.generation, 0) AS projected, "
    "(SELECT value FROM memory_state_meta WHERE key = 'memory_state_uuid') AS state "
    "FROM approved_vector_packs AS p LEFT JOIN approved_projection AS a "
    "ON a.repository_key = p.repository_key AND a.worktree_key = p.worktree_key "
    "WHERE p.repository_key = ? AND p.worktree_key = ? AND p.space = ?"
)


def _decoded(pack: Any) -> ApprovedVectors | None:
    dimensions = int(pack[0])
    try:
        blocks = tuple(int(width) for width in str(pack[6]).split(",") if width)
    except ValueError:
        return None
    if blocks and (sum(blocks) != dimensions or min(blocks) < 1):
        return None
    return ApprovedVectors(
        unpack_int64s(pack[1]),
        bytes(pack[2]),
        Int8Rows(bytes(pack[4]), unpack_float32s(pack[3]), dimensions, blocks),
        Int8Rows(bytes(pack[7]), unpack_float32s(pack[5]), dimensions, blocks),
    )


def _from_rows(conn: sqlite3.Connection, owner: tuple[str, str], space: str) -> ApprovedVectors:
    rows = conn.execute(_CURRENT, (*owner, space)).fetchall()
    whole = Int8Rows.from_blobs([row[3] for row in rows])
    headline = Int8Rows.from_blobs([row[4] for row in rows], whole.dimensions)
    return ApprovedVectors(array("q", [row[0] for row in rows]), _flags(rows), whole, headline)


PackKey = tuple[object, tuple[str, str], str, int, int]  # (state DB id, owner, space, gen, token)


class PackCache:
    """The last decoded packs of this process, keyed by (state DB id, owner, space, generation,
    token). A key names one write of one pack (each write draws a new random token), so an entry
    is never stale: `load_approved` asks the stored pack's key first, and a pack rewritten by
    any connection or process has another. Bounded to `size` packs (least recently used out);
    safe across threads (the MCP server)."""

    def __init__(self, size: int = 2) -> None:
        self._size = size
        self._packs: OrderedDict[PackKey, ApprovedVectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: PackKey) -> ApprovedVectors | None:
        with self._lock:
            found = self._packs.get(key)
            if found is not None:
                self._packs.move_to_end(key)
            return found

    def put(self, key: PackKey, vectors: ApprovedVectors) -> ApprovedVectors:
        with self._lock:
            self._packs[key] = vectors
            self._packs.move_to_end(key)
            while len(self._packs) > self._size:
                self._packs.popitem(last=False)
        return vectors

    def clear(self) -> None:
        with self._lock:
            self._packs.clear()


PACKS = PackCache()


def _flags(rows: Sequence[Any]) -> bytes:
    """Pack flags of `_CURRENT`'s (id, kind, status, …, title, body) rows."""
    return bytes(
        (_ENTRY if row[1] == "entry" else 0)
        | (_DEPRECATED if row[2] == "deprecated" else 0)
        | (_CHINESE if has_chinese(f"{row[5] or ''}\n{row[6] or ''}") else 0)
        for row in rows
    )


def best(
    ids: Sequence[int], scores: Sequence[float], limit: int, min_similarity: float
) -> list[tuple[int, float]]:
    """The `limit` highest scores at or above the floor, best first, ties by id."""
    pairs = [(float(score), int(i)) for i, score in zip(ids, scores, strict=True)]
    found = heapq.nsmallest(
        limit, (p for p in pairs if p[0] >= min_similarity), key=lambda p: (-p[0], p[1])
    )
    return [(row_id, score) for score, row_id in found]
