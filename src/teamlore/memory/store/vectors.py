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
row ids, kinds and scales, so a search reads one row and scans it with one matrix product per
ranking (bench/bench_embeddings.py); a long-lived process decodes that row once while its random
token stays the same (`PACKS`). When the pack is missing or of another generation, the rows are
read instead: same vectors, same ranking.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import orjson
from numpy.typing import NDArray

from teamlore.core import db
from teamlore.memory.store.projection_rows import document_text, headline
from teamlore.models.embeddings import Embedder, Vectors, quantize_rows
from teamlore.models.glosses import has_chinese

EMBED_BATCH = 256  # documents per embed call (bounds memory; progress is reported per batch)
_SCALE = np.dtype("<f4")
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


def to_blobs(vectors: NDArray[np.floating]) -> list[bytes]:
    scales, values = quantize_rows(vectors)
    return [
        scale.astype(_SCALE).tobytes() + row.tobytes()
        for scale, row in zip(scales, values, strict=True)
    ]


def split_blobs(blobs: Sequence[bytes]) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
    """Stored vectors of one space (so one length) → their scales and int8 rows."""
    if not blobs:
        return np.zeros(0, dtype=np.float32), np.zeros((0, 0), dtype=np.int8)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), -1)
    scales = raw[:, :4].copy().view(_SCALE).reshape(-1).astype(np.float32)
    return scales, np.ascontiguousarray(raw[:, 4:]).view(np.int8)


def from_blobs(blobs: Sequence[bytes]) -> Vectors:
    """Stored vectors → a float32 matrix, one row per blob."""
    scales, values = split_blobs(blobs)
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
    texts = [document_text(row[1], row[3], row[4], orjson.loads(row[5]), row[6]) for row in missing]
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
            _write_pack(conn, owner, space, generation)
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
    conn: sqlite3.Connection, owner: tuple[str, str], space: str, generation: int
) -> None:
    rows = conn.execute(_CURRENT, (*owner, space)).fetchall()
    scales, values = split_blobs([row[3] for row in rows])
    headline_scales, headline_values = _headline_matrix(rows, values.shape[1])
    flags = _flags(rows)
    ids = np.fromiter((row[0] for row in rows), dtype="<i8", count=len(rows))
    conn.execute(
        "INSERT INTO approved_vector_packs (repository_key, worktree_key, space, generation, "
        "dimensions, ids, flags, scales, vectors, headline_scales, headline_vectors, token) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, random()) "
        "ON CONFLICT (repository_key, worktree_key) DO UPDATE SET space = excluded.space, "
        "generation = excluded.generation, dimensions = excluded.dimensions, ids = excluded.ids, "
        "flags = excluded.flags, scales = excluded.scales, vectors = excluded.vectors, "
        "headline_scales = excluded.headline_scales, headline_vectors = excluded.headline_vectors, "
        "token = excluded.token",
        (
            *owner,
            space,
            generation,
            int(values.shape[1]) if len(rows) else 0,
            ids.tobytes(),
            flags.tobytes(),
            scales.astype(_SCALE).tobytes(),
            values.tobytes(),
            headline_scales.astype(_SCALE).tobytes(),
            headline_values.tobytes(),
        ),
    )


def _headline_matrix(
    rows: Sequence[Any], dimensions: int
) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
    """The headline vectors of (id, kind, status, vector, headline_vector) rows, one per row: a
    document without a headline gets scale 0 (never ranked by headline)."""
    scales = np.zeros(len(rows), dtype=np.float32)
    values = np.zeros((len(rows), dimensions), dtype=np.int8)
    headlined = [i for i, row in enumerate(rows) if row[4] is not None]
    found_scales, found_values = split_blobs([rows[i][4] for i in headlined])
    if headlined and found_values.shape[1] == dimensions:
        scales[headlined], values[headlined] = found_scales, found_values
    return scales, values


# --------------------------------------------------------------------------------------------
# ranking


@dataclass(frozen=True, slots=True)
class ApprovedVectors:
    """The owner's vectors in one space for the current projection (`load_approved`)."""

    ids: NDArray[np.int64]  # approved_entries.id, ascending
    flags: NDArray[np.uint8]
    scales: NDArray[np.float32]
    values: NDArray[np.int8]
    headline_scales: NDArray[np.float32]  # 0 where a document has no headline vector
    headline_values: NDArray[np.int8]

    @property
    def count(self) -> int:
        return len(self.ids)

    def holding_chinese(self, ids: Sequence[int]) -> set[int]:
        """Those of `ids` (all of them stored here) whose title or body holds Chinese."""
        if not ids:
            return set()
        flags = self.flags[np.searchsorted(self.ids, np.asarray(ids, dtype=np.int64))]
        return set(np.asarray(ids)[(flags & _CHINESE) > 0].tolist())

    def kept(
        self, *, entries_only: bool = False, include_deprecated: bool = True
    ) -> NDArray[np.bool_]:
        """Which rows a search looks at: entries only or every kind, deprecated ones or not."""
        keep = np.ones(self.count, dtype=bool)
        if entries_only:
            keep &= (self.flags & _ENTRY) > 0
        if not include_deprecated:
            keep &= (self.flags & _DEPRECATED) == 0
        return keep

    def rank(
        self,
        query: NDArray[np.float32],
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
        scales, values = (
            (self.headline_scales, self.headline_values)
            if by_headline
            else (self.scales, self.values)
        )
        if self.count == 0 or values.shape[1] != query.shape[0]:
            return []  # nothing stored, or stored by a model with another length: never compared
        keep = self.kept(entries_only=entries_only, include_deprecated=include_deprecated)
        if by_headline:
            keep &= scales > 0
        scores = cosines(values, scales, query)
        return best(self.ids[keep], scores[keep], limit, min_similarity)


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
        "SELECT dimensions, ids, flags, scales, vectors, headline_scales, headline_vectors "
        "FROM approved_vector_packs WHERE repository_key = ? AND worktree_key = ? AND space = ? "
        "AND generation = ? AND token = ?",
        (*owner, space, stamp[0], stamp[1]),
    ).fetchone()
    if pack is None:  # rewritten between the two queries: the next search decodes the new one
        return _from_rows(conn, owner, space)
    return PACKS.put(key, _decoded(pack))


# which pack is stored now, without reading its matrices: its generation and token, the
# projection's generation (a pack of an older one is not used) and the state DB's random id
_PACK_STAMP = (
    "SELECT p.generation, p.token, coalesce(a.generation, 0) AS projected, "
    "(SELECT value FROM memory_state_meta WHERE key = 'memory_state_uuid') AS state "
    "FROM approved_vector_packs AS p LEFT JOIN approved_projection AS a "
    "ON a.repository_key = p.repository_key AND a.worktree_key = p.worktree_key "
    "WHERE p.repository_key = ? AND p.worktree_key = ? AND p.space = ?"
)


def _decoded(pack: Any) -> ApprovedVectors:
    ids = np.frombuffer(pack[1], dtype="<i8").astype(np.int64)
    shape = (len(ids), max(pack[0], 1))
    arrays = (
        ids,
        np.frombuffer(pack[2], dtype=np.uint8),
        np.frombuffer(pack[3], dtype=_SCALE).astype(np.float32),
        np.frombuffer(pack[4], dtype=np.int8).reshape(shape),
        np.frombuffer(pack[5], dtype=_SCALE).astype(np.float32),
        np.frombuffer(pack[6], dtype=np.int8).reshape(shape),
    )
    for array in arrays:
        array.flags.writeable = False  # shared by every search of the process
    return ApprovedVectors(*arrays)


def _from_rows(conn: sqlite3.Connection, owner: tuple[str, str], space: str) -> ApprovedVectors:
    rows = conn.execute(_CURRENT, (*owner, space)).fetchall()
    scales, values = split_blobs([row[3] for row in rows])
    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    headlines = _headline_matrix(rows, values.shape[1])
    return ApprovedVectors(ids, _flags(rows), scales, values, *headlines)


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


def _flags(rows: Sequence[Any]) -> NDArray[np.uint8]:
    """Pack flags of `_CURRENT`'s (id, kind, status, …, title, body) rows."""
    return np.fromiter(
        (
            (_ENTRY if row[1] == "entry" else 0)
            | (_DEPRECATED if row[2] == "deprecated" else 0)
            | (_CHINESE if has_chinese(f"{row[5] or ''}\n{row[6] or ''}") else 0)
            for row in rows
        ),
        dtype=np.uint8,
        count=len(rows),
    )


# rows of int8 vectors widened to float32 at a time: a block stays in the CPU's cache, where
# widening the whole matrix at once wrote and read it again through memory (10,000 rows of
# 768 dimensions: ~15 ms a product against ~5 ms in blocks, bench/bench_embeddings.py)
PRODUCT_BLOCK = 512


def widened_blocks(values: NDArray[np.int8]) -> Iterator[tuple[int, NDArray[np.float32]]]:
    """(first row, those rows as float32) for each block of PRODUCT_BLOCK rows of `values`,
    widened into one buffer: a new 1.5 MB array per block cost as much as the product again
    (freshly mapped memory; 10,000 × 768: ~2.6 ms a scan against ~1.4 ms)."""
    buffer = np.empty((min(PRODUCT_BLOCK, len(values)), values.shape[1]), dtype=np.float32)
    for first in range(0, len(values), PRODUCT_BLOCK):
        block = values[first : first + PRODUCT_BLOCK]
        rows = buffer[: len(block)]
        np.copyto(rows, block, casting="unsafe")
        yield first, rows


def cosines(
    values: NDArray[np.int8], scales: NDArray[np.float32], query: NDArray[np.float32]
) -> NDArray[np.float32]:
    """The cosine of each stored row (int8 `values` with their `scales`) with the unit-length
    `query`: numpy's `values @ query` (int8 widened to float32), a block of rows at a time."""
    query = query.astype(np.float32, copy=False)
    out = np.empty(len(values), dtype=np.float32)
    for start, rows in widened_blocks(values):
        out[start : start + len(rows)] = rows @ query
    return out * (scales / np.float32(127))


def best(
    ids: NDArray[np.int64], scores: NDArray[np.floating], limit: int, min_similarity: float
) -> list[tuple[int, float]]:
    """The `limit` highest scores at or above the floor, best first, ties by id."""
    keep = np.flatnonzero(scores >= min_similarity)
    if keep.size > limit:
        keep = keep[np.argpartition(-scores[keep], limit - 1)[:limit]]
    pairs = zip(scores[keep].tolist(), ids[keep].tolist(), strict=True)
    return [(row_id, score) for score, row_id in sorted(pairs, key=lambda p: (-p[0], p[1]))]
