"""Embedding vectors of the approved projection, next to its FTS rows (docs/hybrid-search.md).

`sync_approved_vectors` brings the owner's vectors up to date with its projection: every
approved document (entry, scene, doctrine, Skill) gets one vector in the embedder's space, keyed
by (kind, id) and bound to the file's content digest, so a rebuilt projection keeps the vectors of
unchanged files and only new or edited documents are embedded. A vector of another space (the
model changed) is replaced, never compared. Embedding runs outside any transaction (an endpoint
may be slow); the write transaction then stores only vectors whose document is still projected
with the same digest.

`rank_approved` is a brute-force cosine scan in numpy: the owner's vectors are read as one
float16 matrix and multiplied by the query vector. At 10k documents this is a few milliseconds
(bench/bench_embeddings.py), well below what an index would save.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import orjson
from numpy.typing import NDArray

from teamlore.core import db
from teamlore.memory.store.projection import document_text
from teamlore.models.embeddings import Embedder, Vectors

VECTOR_DTYPE = np.dtype("<f2")  # little-endian float16: 512 bytes for 256 dimensions
EMBED_BATCH = 256  # documents per embed call (bounds memory; progress is reported per batch)

Progress = Callable[[int, int], None]  # (documents embedded so far, documents to embed)


@dataclass(frozen=True, slots=True)
class VectorSync:
    space: str
    embedded: int  # documents embedded by this sync
    total: int  # approved documents of the owner with a vector in `space` afterwards


def to_blob(vector: NDArray[np.floating]) -> bytes:
    return np.asarray(vector, dtype=VECTOR_DTYPE).tobytes()


def from_blobs(blobs: Sequence[bytes]) -> Vectors:
    """Stored vectors (one space, so one length) → a float32 matrix, one row per blob."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    flat = np.frombuffer(b"".join(blobs), dtype=VECTOR_DTYPE)
    return flat.reshape(len(blobs), -1).astype(np.float32)


def embed_in_batches(
    embedder: Embedder, texts: Sequence[str], progress: Progress | None = None
) -> list[bytes]:
    blobs: list[bytes] = []
    for start in range(0, len(texts), EMBED_BATCH):
        vectors = embedder.embed(texts[start : start + EMBED_BATCH])
        blobs.extend(to_blob(row) for row in vectors)
        if progress is not None:
            progress(len(blobs), len(texts))
    return blobs


_MISSING = (
    "SELECT e.kind, e.entry_id, e.content_digest, e.title, e.entry_type, e.frontmatter_json, "
    "e.body_text FROM approved_entries AS e LEFT JOIN approved_vectors AS v "
    "ON v.repository_key = e.repository_key AND v.worktree_key = e.worktree_key "
    "AND v.kind = e.kind AND v.entry_id = e.entry_id AND v.content_digest = e.content_digest "
    "AND v.space = ? "
    "WHERE e.repository_key = ? AND e.worktree_key = ? AND v.entry_id IS NULL "
    "ORDER BY e.kind, e.entry_id"
)


def sync_approved_vectors(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    embedder: Embedder,
    progress: Progress | None = None,
) -> VectorSync:
    """Embed the owner's projected documents that have no vector in the embedder's space.

    Raises what the embedder raises (nothing is written then)."""
    owner = (repository_key, worktree_key)
    space = embedder.space.key
    missing = conn.execute(_MISSING, (space, *owner)).fetchall()
    texts = [document_text(row[1], row[3], row[4], orjson.loads(row[5]), row[6]) for row in missing]
    blobs = embed_in_batches(embedder, texts, progress)
    with db.write_tx(conn):
        conn.executemany(
            "INSERT INTO approved_vectors (repository_key, worktree_key, kind, entry_id, "
            "content_digest, space, vector) SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS ("
            "SELECT 1 FROM approved_entries WHERE repository_key = ? AND worktree_key = ? "
            "AND kind = ? AND entry_id = ? AND content_digest = ?) "
            "ON CONFLICT (repository_key, worktree_key, kind, entry_id) DO UPDATE SET "
            "content_digest = excluded.content_digest, space = excluded.space, "
            "vector = excluded.vector",
            (
                (*owner, row[0], row[1], row[2], space, blob, *owner, row[0], row[1], row[2])
                for row, blob in zip(missing, blobs, strict=True)
            ),
        )
        conn.execute(
            "DELETE FROM approved_vectors AS v WHERE repository_key = ? AND worktree_key = ? "
            "AND NOT EXISTS (SELECT 1 FROM approved_entries AS e WHERE "
            "e.repository_key = v.repository_key AND e.worktree_key = v.worktree_key "
            "AND e.kind = v.kind AND e.entry_id = v.entry_id)",
            owner,
        )
        total = conn.execute(
            "SELECT count(*) FROM approved_vectors WHERE repository_key = ? "
            "AND worktree_key = ? AND space = ?",
            (*owner, space),
        ).fetchone()[0]
    return VectorSync(space=space, embedded=len(missing), total=int(total))


def rank_approved(
    conn: sqlite3.Connection,
    *,
    repository_key: str,
    worktree_key: str,
    space: str,
    query: NDArray[np.float32],
    limit: int,
    min_similarity: float,
    entries_only: bool = False,
    include_deprecated: bool = True,
) -> list[tuple[int, float]]:
    """(approved_entries.id, cosine) of the owner's documents most similar to the unit-length
    `query`, best first (ties by id), at most `limit`, none below `min_similarity`."""
    filters = ""
    if entries_only:
        filters += " AND e.kind = 'entry'"
    if not include_deprecated:
        filters += " AND e.status = 'approved'"
    rows = conn.execute(
        "SELECT e.id, v.vector FROM approved_entries AS e JOIN approved_vectors AS v "
        "ON v.repository_key = e.repository_key AND v.worktree_key = e.worktree_key "
        "AND v.kind = e.kind AND v.entry_id = e.entry_id AND v.content_digest = e.content_digest "
        f"WHERE e.repository_key = ? AND e.worktree_key = ? AND v.space = ?{filters}",
        (repository_key, worktree_key, space),
    ).fetchall()
    ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    return top_similar(ids, from_blobs([row[1] for row in rows]), query, limit, min_similarity)


def top_similar(
    ids: NDArray[np.int64],
    matrix: Vectors,
    query: NDArray[np.float32],
    limit: int,
    min_similarity: float,
) -> list[tuple[int, float]]:
    """The `limit` rows of `matrix` most similar to `query` (ties by id), above the floor."""
    if len(ids) == 0 or matrix.shape[1] != query.shape[0]:
        return []  # nothing stored, or stored by a model with another length: never compared
    scores = matrix @ query
    keep = np.flatnonzero(scores >= min_similarity)
    if keep.size > limit:
        keep = keep[np.argpartition(-scores[keep], limit - 1)[:limit]]
    order = sorted(keep.tolist(), key=lambda i: (-float(scores[i]), int(ids[i])))
    return [(int(ids[i]), float(scores[i])) for i in order]
