"""Turn vectors: the embedding side of session search (docs/hybrid-search.md, "Session search").

Each turn gets one vector of its text (`turn_text`: the head of the user's prompt and the tail
of the assistant's answer), made by the configured embedder (models/embeddings.py) and stored
quantized next to the FTS row:

- `turn_vectors`: one row per embedded turn: the turn revision it was made from, its space, the
  int8 vector (rescoring) and where its sign bits sit (`block_id`, `slot`). The row goes when its
  turn goes (foreign key, cascade).
- `turn_vector_blocks`: the sign bits of up to `BLOCK_TURNS` turns in one BLOB, with their turn
  ids and their sessions' ids (a filter by provider or worktree is a property of the session: a
  filtered search drops the other sessions' candidates before reading their int8 rows). A
  search reads a few hundred KB of bits in a handful of rows (not 250k rows), ranks every
  turn by Hamming distance, then rescores the best `candidates` with their int8 vectors
  (cosine) — a brute-force quantized scan, no ANN index, no server. Python's `sqlite3` here
  cannot load extensions, so sqlite-vec is not an option.

`embed_pending_turns` runs after the indexer (in `teamlore sync`): it embeds turns without a
vector of the current space or whose revision changed, `BATCH_TURNS` per transaction, so a crash
loses at most the batch in flight and the next sync resumes. A change of model (space) drops
every vector of the other space first: spaces are never mixed. Re-embedded and deleted turns
leave dead slots in their old block; a search skips them (the slot must still be the turn's),
and `_compact` rewrites the blocks when dead slots or small blocks pile up.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import json
import os
import sqlite3
import struct
import sys
from array import array
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from teamlore.core import db
from teamlore.core.shapes.records import Record
from teamlore.models.plain_rows import sign_bits
from teamlore.sessions.int8_cosines import int8_cosines

if TYPE_CHECKING:  # numpy loads only when there is something to embed or compare
    import numpy as np
    from numpy.typing import NDArray

    from teamlore.models.embeddings import Embedder, Vectors

T = TypeVar("T")

# a vector the analysis helper made (sessions/analysis_helper.py): the hash of the text it
# embedded, its dimensions, and the row as stored (`stored_rows`)
MadeVector = tuple[int, int, bytes]

# what of a turn is embedded: the situation (the prompt's head) and the outcome (the answer's
# tail, where agents summarize what they did); tool payloads are left to lexical search
USER_CHARS = 512
ASSISTANT_CHARS = 512
BATCH_TURNS = 2048  # turns embedded per transaction
BLOCK_TURNS = 4096  # sign bits of at most this many turns per block row
MAX_SMALL_BLOCKS = 8  # more blocks below BLOCK_TURNS than this → merge them
MAX_DEAD_SHARE = 0.25  # more dead slots than this share of all slots → rewrite every block


def turn_text(user_text: str, assistant_text: str) -> str:
    return f"{user_text[:USER_CHARS]}\n{assistant_text[-ASSISTANT_CHARS:]}".strip()


def quantize(vectors: Vectors) -> tuple[NDArray[np.int8], NDArray[np.uint8]]:
    """Unit float rows → int8 rows (each scaled to its own largest component) and sign bits
    (packed, padded to whole 64-bit words)."""
    import numpy as np

    from teamlore.models.embeddings import quantize_rows

    _, int8 = quantize_rows(vectors)  # the one stored form; the scale cancels in a cosine
    bits = np.packbits(vectors > 0, axis=1)
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return int8, bits


def stored_size(dimensions: int) -> int:
    """Bytes of one stored row (`stored_rows`): the int8 vector, then its sign bits padded to
    whole 64-bit words."""
    return dimensions + -(-dimensions // 64) * 8


def stored_rows(vectors: Vectors) -> bytes:
    """The rows of `quantize(vectors)` as stored, one after the other: each row's int8 vector
    then its sign bits (`stored_size` bytes a row; a zero row, a text with no token the model
    knows, is all zeros). The analysis helper sends these, so the sync stores its vectors
    without loading numpy; a row is quantized alone, so the bytes are the same either way."""
    import numpy as np

    int8, bits = quantize(vectors)
    return np.concatenate([int8.view(np.uint8), bits], axis=1).tobytes()


class EmbedStats(Record):
    """What one embedding run over the index's turns did."""

    space: str
    embedded: int = 0  # turns (re-)embedded by this run
    dropped: int = 0  # vectors of another space dropped (a model change)
    vectors: int = 0  # turns holding a vector of this space afterwards
    turns: int = 0  # turns in the index
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "space": self.space,
            "embeddedTurns": self.embedded,
            "droppedVectors": self.dropped,
            "turnsWithVector": self.vectors,
            "turns": self.turns,
        }


def _space_id(conn: sqlite3.Connection, key: str, dimensions: int) -> int:
    row = conn.execute("SELECT id, dimensions FROM vector_spaces WHERE key = ?", (key,)).fetchone()
    if row is not None and int(row[1]) == dimensions:
        return int(row[0])
    if row is not None:  # same name, other shape: a different space after all
        conn.execute("DELETE FROM vector_spaces WHERE id = ?", (row[0],))
    cur = conn.execute(
        "INSERT INTO vector_spaces(key, dimensions) VALUES (?, ?)", (key, dimensions)
    )
    return int(cur.lastrowid or 0)


def _drop_other_spaces(conn: sqlite3.Connection, key: str) -> int:
    """Forget every vector not of space `key` (blocks and rows go with their space)."""
    dropped = conn.execute(
        "SELECT count(*) FROM turn_vectors WHERE space_id IN"
        " (SELECT id FROM vector_spaces WHERE key != ?)",
        (key,),
    ).fetchone()[0]
    conn.execute("DELETE FROM vector_spaces WHERE key != ?", (key,))
    return int(dropped)


def _pending(conn: sqlite3.Connection, space_id: int) -> list[int]:
    """Turns without a vector of this space made from their current revision."""
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT t.id FROM turns t LEFT JOIN turn_vectors v ON v.turn_id = t.id"
            " WHERE v.turn_id IS NULL OR v.space_id != ? OR v.revision IS NOT t.revision"
            " ORDER BY t.id",
            (space_id,),
        )
    ]


def embed_pending_turns(
    conn: sqlite3.Connection,
    embedder: Embedder,
    *,
    progress: Callable[[int, int], None] | None = None,
    made: Mapping[int, MadeVector] | None = None,
) -> EmbedStats:
    """Give every turn a vector of `embedder`'s space (see the module docstring). `made`: vectors
    the analysis helper already made during the sync (turn id → hash of the text embedded,
    dimensions, the row as stored); a turn whose text is still that one takes it instead of
    embedding again. When they cover every turn, numpy is not even imported."""
    import time

    started = time.perf_counter()
    key = embedder.space.key
    stats = EmbedStats(space=key)
    with db.write_tx(conn):
        stats.dropped = _drop_other_spaces(conn, key)
    known = conn.execute("SELECT id FROM vector_spaces WHERE key = ?", (key,)).fetchone()
    pending = _pending(conn, int(known[0]) if known else -1)
    for start in range(0, len(pending), BATCH_TURNS):
        batch = pending[start : start + BATCH_TURNS]
        stats.embedded += _embed_batch(conn, embedder, batch, made or {})
        if progress is not None:
            progress(min(start + BATCH_TURNS, len(pending)), len(pending))
    _compact(conn, key)
    stats.turns = int(conn.execute("SELECT count(*) FROM turns").fetchone()[0])
    stats.vectors = int(
        conn.execute(
            "SELECT count(*) FROM turn_vectors v JOIN vector_spaces s ON s.id = v.space_id"
            " WHERE s.key = ?",
            (key,),
        ).fetchone()[0]
    )
    with db.write_tx(conn):  # what a search reports without counting 250k rows (`vector_counts`)
        conn.execute(
            "INSERT INTO meta(key, value) VALUES ('turn_vectors', ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (json.dumps({"space": key, "vectors": stats.vectors}, separators=(",", ":")),),
        )
    stats.seconds = time.perf_counter() - started
    return stats


def _embed_batch(
    conn: sqlite3.Connection,
    embedder: Embedder,
    turn_ids: Sequence[int],
    made: Mapping[int, MadeVector],
) -> int:
    """Embed these turns (outside any transaction: an endpoint may be slow), then store the
    vectors of those still holding the revision that was embedded."""
    from teamlore.core.failpoints import failpoint  # signal, time: not on a search's path

    rows = conn.execute(
        # only the parts `turn_text` keeps leave SQLite (characters, like Python slices): a
        # batch holds ~1 KiB per turn, not whole answers and tool output
        "SELECT id, revision, substr(user_text, 1, ?) AS user_text,"
        " substr(assistant_text, -?) AS assistant_text, session_id FROM turns"
        " WHERE id IN (SELECT value FROM json_each(?))",
        (USER_CHARS, ASSISTANT_CHARS, _json_ids(turn_ids)),
    ).fetchall()
    if not rows:
        return 0
    dimensions, stored = _stored(
        embedder, [r["id"] for r in rows], [turn_text(r[2], r[3]) for r in rows], made
    )
    zero = bytes(dimensions)
    known = [row[:dimensions] != zero for row in stored]  # a text with no token the model knows
    with db.write_tx(conn):
        current = dict(
            conn.execute(
                "SELECT id, revision FROM turns WHERE id IN (SELECT value FROM json_each(?))",
                (_json_ids([r["id"] for r in rows]),),
            ).fetchall()
        )
        keep = [i for i, r in enumerate(rows) if r["id"] in current and current[r["id"]] == r[1]]
        space_id = _space_id(conn, embedder.space.key, dimensions)
        slotted = [i for i in keep if known[i]]
        slotted_ids = [int(rows[i]["id"]) for i in slotted]
        session_ids = [int(rows[i]["session_id"]) for i in slotted]
        bits = b"".join(stored[i][dimensions:] for i in slotted)
        block_id = _write_block(conn, space_id, slotted_ids, session_ids, bits)
        slot_of = {i: n for n, i in enumerate(slotted)}
        conn.executemany(
            "INSERT OR REPLACE INTO turn_vectors(turn_id, space_id, revision, block_id, slot,"
            " vector) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    rows[i]["id"],
                    space_id,
                    rows[i]["revision"],
                    block_id if i in slot_of else None,
                    slot_of.get(i),
                    stored[i][:dimensions] if i in slot_of else None,
                )
                for i in keep
            ],
        )
        failpoint("embed.before-commit")
    failpoint("embed.after-batch")
    return len(keep)


def _stored(
    embedder: Embedder, turn_ids: list[int], texts: list[str], made: Mapping[int, MadeVector]
) -> tuple[int, list[bytes]]:
    """The dimensions and the stored rows (`stored_rows`) of `texts`: those the helper made of
    the very same text, the rest embedded here (the bundled model embeds each text alone: the
    same vector either way)."""
    reused: dict[int, MadeVector] = {}
    for i, (turn_id, text) in enumerate(zip(turn_ids, texts, strict=True)):
        found = made.get(turn_id)
        if found is not None and found[0] == hash(text):
            reused[i] = found
    missing = [i for i in range(len(texts)) if i not in reused]
    widths = {(found[1], len(found[2])) for found in reused.values()}
    if missing:
        computed = _embed_stored(embedder, [texts[i] for i in missing])
        widths.add((computed[0], stored_size(computed[0])))
    if len(widths) != 1 or any(size != stored_size(d) for d, size in widths):
        # not this model's rows: embed every text here
        computed, missing = _embed_stored(embedder, texts), list(range(len(texts)))
        widths = {(computed[0], stored_size(computed[0]))}
    dimensions, size = widths.pop()
    out = [b""] * len(texts)
    for i, found in reused.items():
        out[i] = found[2]
    for n, i in enumerate(missing):
        out[i] = computed[1][n * size : (n + 1) * size]
    return dimensions, out


def _embed_stored(embedder: Embedder, texts: list[str]) -> tuple[int, bytes]:
    """The dimensions and stored rows (`stored_rows`) of `texts`, embedded here: a few short
    texts by the bundled model without numpy (models/plain_rows.py; the same bytes)."""
    from teamlore.models.embeddings import BundledEmbedder

    few = embedder.embed_few(texts) if isinstance(embedder, BundledEmbedder) else None
    if few:
        from teamlore.models.plain_rows import quantized_row, sign_bits

        return len(few[0]), b"".join(quantized_row(row) + sign_bits(row) for row in few)
    computed = embedder.embed(texts)
    return int(computed.shape[1]), stored_rows(computed)


def _write_block(
    conn: sqlite3.Connection,
    space_id: int,
    turn_ids: Sequence[int],
    session_ids: Sequence[int],
    bits: bytes,
) -> int | None:
    """A block row: the turn ids and their sessions' ids (little-endian int64 each) and their
    sign bits, row after row."""
    if not turn_ids:
        return None
    cur = conn.execute(
        "INSERT INTO turn_vector_blocks(space_id, size, turn_ids, session_ids, bits)"
        " VALUES (?, ?, ?, ?, ?)",
        (space_id, len(turn_ids), _int64s(turn_ids), _int64s(session_ids), bits),
    )
    return int(cur.lastrowid or 0)


def _int64s(values: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(values)}q", *values)


def _json_ids(ids: Sequence[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


# -- block upkeep -----------------------------------------------------------------------------


def _compact(conn: sqlite3.Connection, key: str) -> None:
    """Merge small blocks, or rewrite all of them when too many slots are dead."""
    with db.write_tx(conn):
        space = conn.execute("SELECT id FROM vector_spaces WHERE key = ?", (key,)).fetchone()
        if space is None:
            return
        space_id = int(space[0])
        _add_session_ids(conn, space_id)
        sizes = conn.execute(
            "SELECT id, size FROM turn_vector_blocks WHERE space_id = ?", (space_id,)
        ).fetchall()
        slots = sum(int(r[1]) for r in sizes)
        live = int(
            conn.execute(
                "SELECT count(*) FROM turn_vectors WHERE space_id = ? AND block_id IS NOT NULL",
                (space_id,),
            ).fetchone()[0]
        )
        small = [int(r[0]) for r in sizes if int(r[1]) < BLOCK_TURNS]
        if slots and (slots - live) / slots > MAX_DEAD_SHARE:
            _rewrite(conn, space_id, [int(r[0]) for r in sizes])
        elif len(small) > MAX_SMALL_BLOCKS:
            _rewrite(conn, space_id, small)


def _add_session_ids(conn: sqlite3.Connection, space_id: int) -> None:
    """Give the blocks written before blocks held their sessions' ids
    (`index_db.TURN_VECTOR_SESSIONS`) their turns' sessions, once (a dead slot's turn is gone:
    0, no session's id)."""
    for block_id, turn_ids in conn.execute(
        "SELECT id, turn_ids FROM turn_vector_blocks WHERE space_id = ? AND session_ids IS NULL",
        (space_id,),
    ).fetchall():
        turns = _unpack_int64s(bytes(turn_ids))
        session_of = _sessions_of_turns(conn, turns)
        conn.execute(
            "UPDATE turn_vector_blocks SET session_ids = ? WHERE id = ?",
            (_int64s([session_of.get(turn_id, 0) for turn_id in turns]), block_id),
        )


def _sessions_of_turns(conn: sqlite3.Connection, turn_ids: Sequence[int]) -> dict[int, int]:
    """turn id → its session's id, for those of `turn_ids` still in the index."""
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT id, session_id FROM turns WHERE id IN (SELECT value FROM json_each(?))",
        (_json_ids(turn_ids),),
    )
    return {int(turn_id): int(session_id) for turn_id, session_id in rows}


def _unpack_int64s(packed: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(packed) // 8}q", packed))


def _rewrite(conn: sqlite3.Connection, space_id: int, block_ids: list[int]) -> None:
    """Repack the live slots of `block_ids` into full blocks (inside the caller's transaction).
    Plain Python, no numpy: a sync that appended a turn merges small blocks every few runs."""
    blocks = {int(b): _load_block(conn, b) for b in block_ids}
    # the live slots as three int64 arrays (24 bytes a slot), not a Python row each: at 250k
    # turns that list was the largest thing a cold sync held
    turns, block_of, slot_of = array("q"), array("q"), array("q")
    cursor = conn.cursor()
    cursor.row_factory = None
    for turn_id, block_id, slot in cursor.execute(
        "SELECT turn_id, block_id, slot FROM turn_vectors WHERE space_id = ? AND block_id IN"
        " (SELECT value FROM json_each(?)) ORDER BY turn_id",
        (space_id, _json_ids(block_ids)),
    ):
        turns.append(turn_id)
        block_of.append(block_id)
        slot_of.append(slot)
    conn.execute(
        "DELETE FROM turn_vector_blocks WHERE id IN (SELECT value FROM json_each(?))",
        (_json_ids(block_ids),),
    )
    for start in range(0, len(turns), BLOCK_TURNS):
        chunk = slice(start, start + BLOCK_TURNS)
        turn_ids = turns[chunk].tolist()
        slots = list(zip(block_of[chunk], slot_of[chunk], strict=True))
        bits = b"".join(_slot_bits(blocks[block], slot) for block, slot in slots)
        session_ids = [_int64_at(blocks[block].session_ids, slot) for block, slot in slots]
        block_id = _write_block(conn, space_id, turn_ids, session_ids, bits)
        conn.executemany(
            "UPDATE turn_vectors SET block_id = ?, slot = ? WHERE turn_id = ?",
            ((block_id, n, turn_id) for n, turn_id in enumerate(turn_ids)),
        )


class _Block(NamedTuple):
    size: int
    bits: bytes  # sign bits, row after row
    session_ids: bytes  # little-endian int64 per slot


def _load_block(conn: sqlite3.Connection, block_id: int) -> _Block:
    row = conn.execute(
        "SELECT size, bits, session_ids FROM turn_vector_blocks WHERE id = ?", (block_id,)
    ).fetchone()
    return _Block(int(row[0]), bytes(row[1]), bytes(row[2]))


def _slot_bits(block: _Block, slot: int) -> bytes:
    width = len(block.bits) // block.size
    return block.bits[slot * width : (slot + 1) * width]


def _int64_at(packed: bytes, slot: int) -> int:
    """The little-endian int64 of `slot` in a block's packed ids."""
    (value,) = struct.unpack_from("<q", packed, 8 * slot)
    return int(value)


# -- search -----------------------------------------------------------------------------------


class VectorRanking(NamedTuple):
    """Turns ranked by their vectors' similarity to the query (a named tuple: a dataclass costs
    a search process's import ~2 million instructions more)."""

    turn_ids: list[int]  # best first
    similarities: list[float]  # cosine, same order


def vector_space_counts(conn: sqlite3.Connection, key: str) -> tuple[int, int]:
    """(turns holding a vector of space `key` when the last sync embedded, turns in the index)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'turn_vectors'").fetchone()
    recorded = json.loads(row[0]) if row else {}
    vectors = int(recorded.get("vectors", 0)) if recorded.get("space") == key else 0
    return vectors, _turn_count(conn)


# answers about the index's whole content, kept in the process while the database files have
# not changed (as `_blocks`), by question: one entry each, replaced as a whole
_kept_answers: dict[str, tuple[tuple[Any, ...], Any]] = {}


def kept_while_unchanged(conn: sqlite3.Connection, question: str, ask: Callable[[], T]) -> T:
    """`ask()`, or what it answered last in this process while the database files (`_file_stamp`)
    have not changed since. Inside a transaction it is asked again: the connection may see its
    own uncommitted rows."""
    stamp = None if conn.in_transaction else _file_stamp(conn)
    kept = _kept_answers.get(question)
    if stamp is not None and kept is not None and kept[0] == stamp:
        answer: T = kept[1]
        return answer
    answer = ask()
    if stamp is not None:
        _kept_answers[question] = (stamp, answer)
    return answer


def _turn_count(conn: sqlite3.Connection) -> int:
    """The index's turn count: counting 250k turns reads a whole index, ~1 ms of every hybrid
    search."""
    return kept_while_unchanged(
        conn, "turns", lambda: int(conn.execute("SELECT count(*) FROM turns").fetchone()[0])
    )


def rank_turns(
    conn: sqlite3.Connection,
    query_vector: Sequence[float],
    key: str,
    *,
    depth: int,
    candidates: int,
    session_filter: tuple[str, list[Any]] = ("", []),
    row_filter: tuple[str, list[Any]] = ("", []),
) -> VectorRanking:
    """The `depth` turns nearest `query_vector` (one unit row, float32 values) in space `key`:
    Hamming distance of sign bits over every turn, then cosine of the int8 vectors of those of
    the best `candidates` (ties of distance: the earlier slot first) whose session passes
    `session_filter`, an SQL condition over `s` (sessions) with its parameters. `row_filter`:
    the same over `t` (turns) and `s`."""
    out = VectorRanking([], [])
    space = conn.execute("SELECT id FROM vector_spaces WHERE key = ?", (key,)).fetchone()
    if space is None or not any(value != 0 for value in query_vector):
        return out
    blocks = _blocks(conn, int(space[0]))
    if not blocks.sizes:
        return out
    nearest = blocks.slots(_nearest(blocks, sign_bits(array("f", query_vector)), candidates))
    wanted = {s.turn_id: (s.block_id, s.slot) for s in _in_sessions(conn, nearest, session_filter)}
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: up to 800 rows read by position, ~10 % less CPU
    rows = cursor.execute(
        "SELECT turn_id, block_id, slot, vector FROM turn_vectors"
        " WHERE turn_id IN (SELECT value FROM json_each(?))",
        (_json_ids(list(wanted)),),
    ).fetchall()
    rows = [r for r in rows if wanted.get(r[0]) == (r[1], r[2])]  # dead slots are skipped
    cosines = int8_cosines([bytes(r[3]) for r in rows], query_vector)
    scored = sorted(zip((-c for c in cosines), (int(r[0]) for r in rows), strict=True))
    scored = _passing(conn, scored, depth, row_filter)
    return VectorRanking(
        [turn_id for _negative, turn_id in scored],
        [round(-negative, 4) for negative, _turn_id in scored],
    )


def _in_sessions(
    conn: sqlite3.Connection, slots: list[Slot], session_filter: tuple[str, list[Any]]
) -> list[Slot]:
    """The `slots` whose session passes `session_filter`, asked of the few sessions they hold,
    not of their turn rows (a block written before blocks held sessions: of its turn rows)."""
    condition, params = session_filter
    if not condition:
        return slots
    unknown = [s.turn_id for s in slots if s.session_id is None]
    session_of = _sessions_of_turns(conn, unknown) if unknown else {}
    sessions = [
        session_of.get(s.turn_id, 0) if s.session_id is None else s.session_id for s in slots
    ]
    passed = {
        int(r[0])
        for r in conn.execute(
            f"SELECT s.id FROM sessions s WHERE s.id IN (SELECT value FROM json_each(?))"
            f" AND {condition}",
            (_json_ids(sorted(set(sessions))), *params),
        )
    }
    return [s for s, session_id in zip(slots, sessions, strict=True) if session_id in passed]


def _passing(
    conn: sqlite3.Connection,
    scored: list[tuple[float, int]],
    depth: int,
    row_filter: tuple[str, list[Any]],
) -> list[tuple[float, int]]:
    """The first `depth` of the ranked `(−cosine, turn id)` whose turn passes `row_filter`, asked
    of the index `2 × depth` at a time from the best down: the same turns as filtering every
    candidate first, but ~60 turn rows read instead of 800 (a filter is a property of the turn,
    not of its rank)."""
    condition, params = row_filter
    if not condition:
        return scored[:depth]
    kept: list[tuple[float, int]] = []
    for start in range(0, len(scored), 2 * depth):
        chunk = scored[start : start + 2 * depth]
        passed = {
            int(r[0])
            for r in conn.execute(
                "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id"
                f" WHERE t.id IN (SELECT value FROM json_each(?)) AND {condition}",
                (_json_ids([turn_id for _negative, turn_id in chunk]), *params),
            )
        }
        kept += [item for item in chunk if item[1] in passed]
        if len(kept) >= depth:
            break
    return kept[:depth]


class Blocks(NamedTuple):
    """A space's sign-bit blocks as stored, in id order: the scan's input (a named tuple: a
    dataclass costs a fresh process's import ~0.5 ms more)."""

    ids: list[int]
    sizes: list[int]
    turn_ids: list[bytes]  # little-endian int64 per slot
    session_ids: list[bytes | None]  # the same; None: written before blocks held them
    bits: list[bytes]  # sign bits, slot after slot

    def slots(self, positions: Sequence[int]) -> list[Slot]:
        """The slots at these scan positions (counted over all blocks), in the same order."""
        starts = list(itertools.accumulate(self.sizes, initial=0))
        out: list[Slot] = []
        for position in positions:
            block = bisect.bisect_right(starts, position) - 1
            slot = position - starts[block]
            turn_id = _int64_at(self.turn_ids[block], slot)
            sessions = self.session_ids[block]
            session_id = None if sessions is None else _int64_at(sessions, slot)
            out.append(Slot(turn_id, self.ids[block], slot, session_id))
        return out


class Slot(NamedTuple):
    """Where a turn's sign bits sit, and its session (None: not kept in that block)."""

    turn_id: int
    block_id: int
    slot: int
    session_id: int | None


# one space's blocks, kept in the process while the database may not have changed: a long-lived
# process (the MCP server, which opens the index per call; a benchmark) reads the ~10 MB of bits
# of 250k turns once, not per search (~8 ms of CPU each); a fresh process reads them once
# anyway. One entry, replaced as a whole (a thread reads a consistent one).
_last_read: list[tuple[tuple[Any, ...], Blocks]] = []


def _blocks(conn: sqlite3.Connection, space_id: int) -> Blocks:
    stamp = _stamp(conn, space_id)
    for read_at, blocks in _last_read[-1:]:
        if stamp is not None and read_at == stamp:
            return blocks
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = cursor.execute(
        "SELECT id, size, turn_ids, session_ids, bits FROM turn_vector_blocks WHERE space_id = ?"
        " ORDER BY id",
        (space_id,),
    ).fetchall()
    blocks = Blocks(
        [int(r[0]) for r in rows],
        [int(r[1]) for r in rows],
        [bytes(r[2]) for r in rows],
        [None if r[3] is None else bytes(r[3]) for r in rows],
        [bytes(r[4]) for r in rows],
    )
    if stamp is not None:
        _last_read[:] = [(stamp, blocks)]
    return blocks


def _stamp(conn: sqlite3.Connection, space_id: int) -> tuple[Any, ...] | None:
    """What moves whenever a space's blocks may have changed, whichever connection or process
    wrote them: the database file and its write-ahead log as files (device, inode, size,
    modification time: every commit writes one of them) and the blocks' largest id, count and
    slots. None for a database without a file (nothing is kept)."""
    files = _file_stamp(conn)
    if files is None:
        return None
    summary = conn.execute(
        "SELECT max(id), count(*), total(size) FROM turn_vector_blocks WHERE space_id = ?",
        (space_id,),
    ).fetchone()
    return (*files, space_id, *summary)


def _file_stamp(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """The database's path and its file and write-ahead log as files (device, inode, size,
    modification time: every commit writes one of them); None without a file."""
    path = db.database_file(conn)
    if not path:
        return None
    files: list[tuple[int, int, int, int] | None] = []
    for name in (path, path + "-wal"):
        try:
            info = os.stat(name)
        except OSError:
            files.append(None)
            continue
        files.append((info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns))
    return (path, *files)


# Up to this many slots, and when nothing has imported numpy yet, the scan runs in plain Python
# (~0.4 µs a slot, ~4 ms at 10k turns) instead of importing numpy (~40-70 ms of a fresh process;
# docs/hybrid-search.md, "Session search"). Both give the same distances and the same choice.
PLAIN_SCAN_SLOTS = 50_000


def _nearest(blocks: Blocks, query_bits: bytes, take: int) -> list[int]:
    """The scan positions of the `take` slots of least Hamming distance to `query_bits`, ties
    by position (the earlier slot first)."""
    if "numpy" not in sys.modules and sum(blocks.sizes) <= PLAIN_SCAN_SLOTS:
        distances = array("H")
        for bits, size in zip(blocks.bits, blocks.sizes, strict=True):
            distances += _plain_distances(bits, size, query_bits)
        if take >= len(distances):
            return list(range(len(distances)))
        return heapq.nsmallest(take, range(len(distances)), key=distances.__getitem__)
    return _numpy_nearest(blocks, query_bits, take)


def _plain_distances(bits: bytes, size: int, query_bits: bytes) -> array[int]:
    """Every slot's Hamming distance to `query_bits`, with big-integer bit tricks over the
    whole block at once: XOR, a popcount per byte (SWAR), bytes into 16-bit fields, and one
    multiplication that sums each row's fields into its last field (a row's sum is at most
    8 x width, so no field carries into the next)."""
    width = len(query_bits)
    ones, twos, fours, bytes_, row_sum = _masks(size, width)
    x = int.from_bytes(bits, "little") ^ int.from_bytes(query_bits * size, "little")
    x -= (x >> 1) & ones
    x = (x & twos) + ((x >> 2) & twos)
    x = (x + (x >> 4)) & fours
    x = (x & bytes_) + ((x >> 8) & bytes_)
    x *= row_sum
    fields = array("H", x.to_bytes(size * width + width, "little"))
    if sys.byteorder == "big":
        fields.byteswap()
    half = width // 2
    return fields[half - 1 : size * half : half]


@functools.lru_cache(maxsize=4)
def _masks(size: int, width: int) -> tuple[int, int, int, int, int]:
    """The constants of `_plain_distances` for `size` rows of `width` bytes."""
    total = size * width
    return (
        int.from_bytes(b"\x55" * total, "little"),
        int.from_bytes(b"\x33" * total, "little"),
        int.from_bytes(b"\x0f" * total, "little"),
        int.from_bytes(b"\xff\x00" * (total // 2), "little"),
        int.from_bytes(b"\x01\x00" * (width // 2), "little"),
    )


def _numpy_nearest(blocks: Blocks, query_bits: bytes, take: int) -> list[int]:
    """`_nearest` with numpy: the least distance `kth` that `take` slots reach, every slot below
    it, then the earliest slots at it."""
    import numpy as np

    distances = _hamming_scan(blocks, np.frombuffer(query_bits, dtype=np.uint8))
    if take >= len(distances):
        return list(range(len(distances)))
    # distances are small integers: the cut from their counts (~0.4 ms at 250k, a partition ~1.3)
    kth = int(np.searchsorted(np.cumsum(np.bincount(distances)), take))
    below = np.flatnonzero(distances < kth)
    tied = np.flatnonzero(distances == kth)[: take - len(below)]
    return np.concatenate([below, tied]).tolist()  # type: ignore[no-any-return]


def _hamming_scan(blocks: Blocks, query_bits: NDArray[np.uint8]) -> NDArray[np.int32]:
    """Every slot's Hamming distance to `query_bits`, block by block (a block's temporaries
    stay in the CPU cache; 250k turns: ~2 ms, not ~9 ms for one pass over all). The XOR is
    with the query repeated once per slot, one flat pass: broadcast over rows of 4 words,
    numpy's inner loop ran 4 elements at a time (250k turns: 3.9 against 1.3 ms, load 8)."""
    import numpy as np

    distances = np.empty(sum(blocks.sizes), dtype=np.int32)
    query_words = query_bits.view(np.uint64)
    repeated = np.tile(query_words, max(blocks.sizes, default=0))
    start = 0
    for size, bits in zip(blocks.sizes, blocks.bits, strict=True):
        end = start + size
        words = np.frombuffer(bits, dtype=np.uint64)
        counts = np.bitwise_count(words ^ repeated[: len(words)]).reshape(size, -1)
        distance = distances[start:end]
        distance[:] = counts[:, 0]
        for word in range(1, counts.shape[1]):  # a few words: column sums beat sum(axis=1)
            distance += counts[:, word]
        start = end
    return distances
