"""Text embeddings: one interface, two backends (docs/hybrid-search.md).

    embedder = configured_embedder(home)        # None when embeddings are off in config.toml
    vectors = embedder.embed(["first text", "second text"])   # float32 (2, dim), unit rows
    embedder.space.key                           # "bundled:wordllama-l2_supercat-256@0.4.0.post1"

Backends:
- **bundled** (the default): WordLlama's 256-dimensional static model, whose weights and
  tokenizer ship inside the `wordllama` wheel. A text is tokenized, its token vectors are
  averaged and the mean is scaled to unit length — exactly what `WordLlamaInference.embed(...,
  norm=True)` does — but the files are opened here, from the installed package's own folder, and
  nothing else is imported: WordLlama's own loader looks for the tokenizer under `tokenizer/`
  while the wheel has it under `tokenizers/`, and then downloads it; importing the `wordllama`
  package also reconfigures the root logger. Loading never touches the network.
- **endpoint** (configured): an OpenAI-compatible `POST /v1/embeddings`, named by a model profile
  (`[models.<name>]`, models/profiles.py) in `[embeddings]`:

      [embeddings]
      backend = "endpoint"      # bundled (default) | endpoint | off
      profile = "embeddings"    # the [models.embeddings] profile: base_url, model, api_key_env
      dimensions = 512          # optional: asked of models that can shorten their vectors

Every vector belongs to an `EmbeddingSpace` (backend + model id); callers store `space.key`
with each vector and compare only vectors of one space. A failure to load or to call a backend
is `EMBEDDINGS_UNAVAILABLE` (bundled) or one of the `MODEL_*` codes (endpoint).
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import threading
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, TypeAlias

from teamlore.core import errors
from teamlore.models.cache import model_cache_dir

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from tokenizers import Encoding, Tokenizer

    from teamlore.models.openai_compat import OpenAICompatClient
    from teamlore.models.plain_rows import TableFile
    from teamlore.models.tokenizer_subsets import TokenizerSubsets, WordIds

Backend = Literal["bundled", "endpoint"]
# float32 rows; numpy is imported by what embeds or compares, never by a sync with nothing
# to embed (an import costs ~40 ms of a CLI process)
Vectors: TypeAlias = "NDArray[np.float32]"

BUNDLED_PACKAGE = "wordllama"
BUNDLED_CONFIG = "l2_supercat"
BUNDLED_DIMENSIONS = 256
BUNDLED_WEIGHTS = f"weights/{BUNDLED_CONFIG}_{BUNDLED_DIMENSIONS}.safetensors"
BUNDLED_TOKENIZER = f"tokenizers/{BUNDLED_CONFIG}_tokenizer_config.json"
BUNDLED_TENSOR = "embedding.weight"

# a text's first 16 KiB carry its meaning for a mean of token vectors; the cap bounds the work
MAX_EMBED_CHARS = 16 * 1024
ENDPOINT_BATCH = 64  # inputs per /embeddings request
SMALL_BATCH = 16  # texts tokenized on the calling thread
# texts up to this many characters in all (a query; one turn's embedded text is at most ~1 KiB)
# are tokenized in plain Python by only the merges they can use (models/tokenizer_subsets.py)
SUBSET_CHARS = 4096
SAFETENSORS_DTYPES = {"F16": "<f2", "F32": "<f4"}
# texts tokenized at once: the encodings of 2,048 turns held ~48 MiB, of 256 ~12 MiB, and 256
# held ~6 MiB more than 64 at a cold sync's peak, at no measurable speed (docs/sessions.md)
ENCODE_CHUNK = 64
# `TableRows` reads the rows of ids this many bytes apart or closer in one read (a page)
READ_SPAN_BYTES = 4096


class EmbeddingSpace(NamedTuple):
    """Which model made a vector. Vectors of two spaces are never compared."""

    backend: Backend
    model: str

    @property
    def key(self) -> str:
        return f"{self.backend}:{self.model}"


class Embedder(Protocol):
    """What every backend offers."""

    @property
    def space(self) -> EmbeddingSpace: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order (a zero row for a text with no
        token the model knows). Raises `TeamloreError` when the backend fails."""
        ...

    def embed_query(self, query: str) -> Vectors:
        """A search query's row (shape (1, dim)), comparable with `embed`'s rows of documents.
        A backend may read a query differently from a document (the bundled model reads
        Chinese words as their English glosses)."""
        ...

    def reads(self, text: str) -> bool:
        """Whether the model has word vectors for the language of `text` (the bundled model
        has none for Chinese: its Chinese tokens say little more than "this is Chinese").
        Chinese is the only language a model may not read: true of every text without it, and
        the same for every text with it (memory search keeps that per document)."""
        ...

    @property
    def reads_every_text(self) -> bool:
        """Whether `reads` is true of every text (then a search need not ask it per document)."""
        ...


def normalize_rows(matrix: NDArray[np.floating]) -> Vectors:
    """Scale each row to unit length (zero rows stay zero)."""
    import numpy as np

    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    out = np.zeros_like(rows)
    np.divide(rows, norms, out=out, where=norms > 0)
    return out


# --------------------------------------------------------------------------------------------
# bundled: WordLlama from the installed wheel


def quantize_rows(vectors: NDArray[np.floating]) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
    """How vectors are stored (memory entries and session turns alike): per row its largest
    magnitude as the scale, and the row as int8 in [-127, 127] (`value / scale * 127`,
    rounded); a zero row stays zero."""
    import numpy as np

    rows = np.asarray(vectors, dtype=np.float32)
    scales = np.abs(rows).max(axis=1) if rows.size else np.zeros(len(rows), dtype=np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float32)
    values = np.rint(rows / safe[:, None] * 127).astype(np.int8)
    return scales.astype(np.float32), values


def bundled_files() -> tuple[Path, Path]:
    """The weights and tokenizer files inside the installed `wordllama` package.

    `find_spec` locates the package without importing it (its `__init__` would configure the
    root logger and import its downloader).
    """
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        root = Path(location)
        weights, tokenizer = root / BUNDLED_WEIGHTS, root / BUNDLED_TOKENIZER
        if weights.is_file() and tokenizer.is_file():
            return weights, tokenizer
    raise errors.TeamloreError(
        errors.EMBEDDINGS_UNAVAILABLE,
        f"the bundled embedding model is not installed (package {BUNDLED_PACKAGE!r} with "
        f"{BUNDLED_WEIGHTS} and {BUNDLED_TOKENIZER}); reinstall teamlore or use --lexical",
    )


class BundledEmbedder:
    """WordLlama l2_supercat, 256 dimensions: mean of token vectors, unit length.

    Constructing it only names its space (the model id and the package version, from package
    metadata): the tokenizer and weights load on the first `embed`, so a sync with no turn to
    embed and a search with no vector to compare never pay for them. A model that cannot load
    raises `EMBEDDINGS_UNAVAILABLE` there, which every caller of `embed` already handles.

    The weights are memory-mapped (a query touches the pages of its own tokens' rows, not all
    16 MiB). A few short texts — a query, the turns one sync appended — are tokenized in plain
    Python by only the merges they can use (models/tokenizer_subsets.py), whose grouped merges
    are kept in `cache_dir`; without a `cache_dir`, for more text, or once the process has
    loaded it, the full tokenizer runs. Both give the same ids.
    """

    def __init__(
        self, weights_path: Path, tokenizer_path: Path, version: str, cache_dir: Path | None = None
    ) -> None:
        if not (weights_path.is_file() and tokenizer_path.is_file()):
            raise _unavailable("is not installed")
        self._paths = (weights_path, tokenizer_path)
        self._cache_dir = cache_dir
        self._space = EmbeddingSpace(
            "bundled", f"wordllama-{BUNDLED_CONFIG}-{BUNDLED_DIMENSIONS}@{version}"
        )

    @property
    def space(self) -> EmbeddingSpace:
        return self._space

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        table = _shared(("table", self._paths[0]), lambda: _load_table(self._paths[0]))
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for start in range(0, len(texts), ENCODE_CHUNK):
            cut = [t[:MAX_EMBED_CHARS] for t in texts[start : start + ENCODE_CHUNK]]
            mean_token_rows(table, self._token_ids(cut), out[start : start + len(cut)])
        return normalize_rows(out)

    def embed_few(self, texts: Sequence[str]) -> list[array[float]] | None:
        """`embed`'s rows as float32 arrays, computed without numpy (models/plain_rows.py), for
        a few short texts (a sync that appended a turn or two); None for more or longer texts,
        which `embed` does faster."""
        from teamlore.models.plain_rows import unit_row

        cut = [t[:MAX_EMBED_CHARS] for t in texts]
        if not _few(cut):
            return None
        weights = self._paths[0]
        table: TableFile = _shared(("table file", weights), lambda: _table_file(weights))
        return [unit_row(table, ids) for ids in self._token_ids(cut)]

    def _token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids: a few short texts tokenized in plain Python by only the
        merges they can use (models/tokenizer_subsets.py), more by the full tokenizer."""
        path = self._paths[1]
        full = ("tokenizer", path)
        # once a batch has loaded the full tokenizer (a cold sync's last, small batch), it is
        # cheaper than the subsets, whose first derivation in a state dir costs ~0.7 s of CPU
        if self._cache_dir is not None and _few(texts) and not _is_shared(full):
            subsets: TokenizerSubsets | None = _shared(
                (f"subsets in {self._cache_dir}", path),  # one set per cache dir
                lambda: _load_subsets(path, self._cache_dir),
            )
            if subsets is not None:
                return subsets.encode(texts)
        tokenizer: Tokenizer = _shared(full, lambda: _load_tokenizer(path))
        word_ids = ("word ids", path)
        # once loaded (by a sync's first large batch), the word ids serve small batches too
        if len(texts) > SMALL_BATCH or _is_shared(word_ids):
            words: WordIds | None = _shared(word_ids, lambda: _load_word_ids(tokenizer))
            if words is not None:
                return [_word_encoded(words, tokenizer, text) for text in texts]
        return [encoding.ids for encoding in _encode(tokenizer, texts)]

    def embed_query(self, query: str) -> Vectors:
        """The model has English word vectors only: Chinese words are embedded as their
        English glosses (models/glosses.py), so a Chinese query finds English documents by
        meaning. Documents are embedded as written; Chinese ones are found by words."""
        from teamlore.models.glosses import gloss

        return self.embed([gloss(query)])

    def embed_query_few(self, query: str) -> array[float] | None:
        """`embed_query`'s row computed without numpy (`embed_few`), None for a long query."""
        from teamlore.models.glosses import gloss

        few = self.embed_few([gloss(query)])
        return few[0] if few else None

    def reads(self, text: str) -> bool:
        from teamlore.models.glosses import has_chinese

        return not has_chinese(text)

    @property
    def reads_every_text(self) -> bool:
        return False


def query_row(embedder: Embedder, query: str) -> Sequence[float]:
    """`embedder.embed_query(query)`'s one row as float32 values; the bundled and the
    multilingual model's without importing numpy when the query is short (docs/hybrid-search.md,
    "Embedding a query in a fresh process")."""
    few = getattr(embedder, "embed_query_few", None)  # BundledEmbedder, MultilingualEmbedder
    if few is not None:
        found: Sequence[float] | None = few(query)
        if found is not None:
            return found
    row: list[float] = embedder.embed_query(query)[0].tolist()
    return row


def mean_token_rows(
    table: NDArray[Any] | TableRows, id_lists: list[list[int]], out: Vectors
) -> None:
    """Row i of `out`: the float32 mean of `table`'s rows for the token ids `id_lists[i]`
    (ids clipped to the table; a text without tokens leaves its row as it is).

    Exactly `table[ids].astype(np.float32).mean(axis=0)` per text (the same float32 additions
    in the same order), but each distinct token of the batch is widened from the table's
    float16 once: the widening was most of the work (~70 of ~90 µs for a 1 KiB turn). The
    table stays in its stored precision (16 MiB, not a 32 MiB float32 copy); read by rows, only
    the batch's distinct tokens are read (`TableRows`)."""
    import numpy as np

    total = sum(map(len, id_lists))
    if not total:
        return
    flat = np.fromiter(itertools.chain.from_iterable(id_lists), dtype=np.int64, count=total)
    np.clip(flat, 0, table.shape[0] - 1, out=flat)
    distinct, position = np.unique(flat, return_inverse=True)
    rows = table[distinct].astype(np.float32)
    end = 0
    for row, ids in enumerate(id_lists):
        if ids:
            start, end = end, end + len(ids)
            out[row] = rows[position[start:end]].mean(axis=0)


def _few(texts: Sequence[str]) -> bool:
    """A batch small enough to tokenize and average in plain Python."""
    return len(texts) <= SMALL_BATCH and sum(map(len, texts)) <= SUBSET_CHARS


def _encode(tokenizer: Tokenizer, texts: list[str]) -> list[Encoding]:
    # a few texts (a query) are encoded on this thread: the batch encoder's worker threads
    # keep spinning after their work and slow the matrix product that follows
    if len(texts) <= SMALL_BATCH:
        return [tokenizer.encode(t, add_special_tokens=False) for t in texts]
    # no character offsets (only the ids are used): 2.3x faster than encode_batch
    return tokenizer.encode_batch_fast(texts, add_special_tokens=False)


def _unavailable(why: str) -> errors.TeamloreError:
    return errors.TeamloreError(
        errors.EMBEDDINGS_UNAVAILABLE,
        f"the bundled embedding model {why}; reinstall teamlore or use --lexical",
    )


_loaded: dict[tuple[str, Path], Any] = {}
_loaded_lock = threading.RLock()  # a load may need another (the table needs its file)


def _shared(key: tuple[str, Path], load: Callable[[], Any]) -> Any:
    """One copy per process of what a model file loads into (tables, tokenizers)."""
    with _loaded_lock:
        if key not in _loaded:
            _loaded[key] = load()
        return _loaded[key]


def _is_shared(key: tuple[str, Path]) -> bool:
    """Whether this process has loaded `key` already (`_shared`)."""
    with _loaded_lock:
        return key in _loaded


def _load_tokenizer(path: Path) -> Tokenizer:
    try:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # a damaged install: say so, never crash the sync or search
        raise _unavailable(f"cannot be loaded ({type(exc).__name__})") from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _load_word_ids(tokenizer: Tokenizer) -> WordIds | None:
    from teamlore.models.tokenizer_subsets import WordIds

    return WordIds.of(tokenizer)


def _word_encoded(words: WordIds, tokenizer: Tokenizer, text: str) -> list[int]:
    """`text`'s ids a word at a time (a sync's batches: `WordIds`), the same as the full
    tokenizer's; a text holding a special token's string is encoded whole."""
    ids = words.encode(text)
    return tokenizer.encode(text, add_special_tokens=False).ids if ids is None else ids


def _load_subsets(path: Path, cache_dir: Path | None) -> TokenizerSubsets | None:
    from teamlore.models.tokenizer_subsets import TokenizerSubsets

    if cache_dir is None:
        return None
    try:
        return TokenizerSubsets.load_or_derive(path, cache_dir)
    except OSError:
        return None  # the full tokenizer says what is wrong with the file


def _table_file(path: Path, *, mapped: bool = True) -> TableFile:
    """Where the embedding table sits in a safetensors file, memory-mapped unless `mapped` is
    false (format: an 8-byte little-endian header length, a JSON header naming each tensor's
    dtype, shape and byte range, then the data)."""
    import mmap

    from teamlore.models.plain_rows import STRUCT_CODES, TableFile

    try:
        with open(path, "rb") as handle:
            header_length = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(header_length))
            size = os.fstat(handle.fileno()).st_size
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if mapped else None
        entry = header[BUNDLED_TENSOR]
        itemsize = {"e": 2, "f": 4}[STRUCT_CODES[entry["dtype"]]]
        rows, columns = (int(n) for n in entry["shape"])
        begin, end = (8 + header_length + int(n) for n in entry["data_offsets"])
        if end - begin != rows * columns * itemsize or end > size:
            raise ValueError("tensor bytes do not match its shape")
    except Exception as exc:  # a damaged install: say so, never crash the sync or search
        raise _unavailable(f"cannot be loaded ({type(exc).__name__})") from exc
    return TableFile(mapping, entry["dtype"], rows, columns, begin)


def _load_table(path: Path) -> TableRows | NDArray[Any]:
    """The embedding table, read by rows (`TableRows`); where `os.preadv` is missing, a numpy
    array over the memory-mapped file."""
    import numpy as np

    if hasattr(os, "preadv"):
        found: TableFile = _shared(("table header", path), lambda: _table_file(path, mapped=False))
        dtype = np.dtype(SAFETENSORS_DTYPES[found.dtype])
        try:
            return TableRows(path, found, dtype)
        except OSError as exc:
            raise _unavailable(f"cannot be loaded ({type(exc).__name__})") from exc
    found = _shared(("table file", path), lambda: _table_file(path))
    dtype = np.dtype(SAFETENSORS_DTYPES[found.dtype])
    table = np.frombuffer(
        found.mapped, dtype=dtype, count=found.rows * found.columns, offset=found.begin
    )
    return table.reshape(found.rows, found.columns)


class TableRows:
    """The embedding table of a safetensors file, read by rows (docs/sessions.md, "Memory at
    the peak"): `rows[ids]` reads only the rows of `ids` with `os.preadv`, into a fresh array.
    A memory-mapped table is file pages of the process: a cold sync's many distinct tokens
    touched them all, 16 MiB of its peak RSS; rows read live in the page cache, counted in no
    process's RSS. The same bytes, so the same vectors.

    Ids less than a page apart are read in one span (a read per row cost ~2.3 µs, a span per
    page ~1.4 µs per row). Reading adds ~1.3-1.9 µs per distinct row of a chunk, about 7 % of
    embedding 8,192 real turn texts, most of which is tokenizing (bench/bench_table_rows.py)."""

    def __init__(self, path: Path, found: TableFile, dtype: np.dtype[Any]) -> None:
        self.shape = (found.rows, found.columns)
        self._dtype = dtype
        self._width = dtype.itemsize * found.columns
        self._gap = max(READ_SPAN_BYTES // self._width, 1)  # ids this close share a read
        self._begin = found.begin
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def __getitem__(self, ids: NDArray[np.int64]) -> NDArray[Any]:
        """The rows of `ids` (ascending, as `np.unique` gives them), in their order."""
        import numpy as np

        if not len(ids):
            return np.empty((0, self.shape[1]), dtype=self._dtype)
        starts = np.flatnonzero(np.diff(ids, prepend=ids[0] - self._gap - 1) > self._gap)
        ends = np.append(starts[1:], len(ids))
        first, lengths = ids[starts], ids[ends - 1] - ids[starts] + 1
        offsets = np.cumsum(lengths) - lengths  # where each span starts among the rows read
        spans = self._read_spans(first.tolist(), lengths.tolist(), int(lengths.sum()))
        span_of = np.repeat(np.arange(len(starts)), ends - starts)
        rows: NDArray[Any] = spans[offsets[span_of] + ids - first[span_of]]
        return rows

    def _read_spans(self, first: list[int], lengths: list[int], total: int) -> NDArray[Any]:
        import numpy as np

        width, read = self._width, bytearray(total * self._width)
        view, at = memoryview(read), 0
        for row, count in zip(first, lengths, strict=True):
            size = count * width
            if os.preadv(self._fd, [view[at : at + size]], self._begin + row * width) != size:
                raise _unavailable("cannot be read (the weights file is shorter than its header)")
            at += size
        return np.frombuffer(read, dtype=self._dtype).reshape(total, self.shape[1])


_bundled: dict[Path | None, BundledEmbedder] = {}
_bundled_lock = threading.Lock()


def bundled_embedder(cache_dir: Path | None = None) -> BundledEmbedder:
    """The bundled model (one per process and `cache_dir`, sharing what they load); its files
    load on the first `embed`."""
    with _bundled_lock:
        if cache_dir not in _bundled:
            weights, tokenizer = bundled_files()
            package_dir = weights.parents[len(Path(BUNDLED_WEIGHTS).parts) - 1]
            version = installed_version(BUNDLED_PACKAGE, package_dir)
            _bundled[cache_dir] = BundledEmbedder(weights, tokenizer, version, cache_dir)
        return _bundled[cache_dir]


def installed_version(distribution: str, package_dir: Path) -> str:
    """The installed `distribution`'s version: the `Version:` line of the one METADATA beside
    its package's folder (`<distribution>-<version>.dist-info`, where installers put it), else
    what `importlib.metadata` finds (PackageNotFoundError when it is not installed); importing
    that costs a CLI process ~10 ms and ~40 modules."""
    prefix = distribution.replace("-", "_")
    infos = list(package_dir.parent.glob(f"{prefix}-*.dist-info"))
    for info in infos if len(infos) == 1 else []:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            for line in (info / "METADATA").read_text(encoding="utf-8").splitlines():
                if line.startswith("Version:"):
                    return line.removeprefix("Version:").strip()
                if not line:
                    break  # the headers end at the first blank line
    import importlib.metadata

    return importlib.metadata.version(distribution)


# --------------------------------------------------------------------------------------------
# endpoint: an OpenAI-compatible /v1/embeddings


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible endpoint, `ENDPOINT_BATCH` texts per request."""

    def __init__(self, client: OpenAICompatClient, dimensions: int | None = None) -> None:
        self._client = client
        self._dimensions = dimensions
        model = client.model if dimensions is None else f"{client.model}@{dimensions}d"
        self._space = EmbeddingSpace("endpoint", model)

    @property
    def space(self) -> EmbeddingSpace:
        return self._space

    def embed(self, texts: Sequence[str]) -> Vectors:
        import numpy as np

        rows: list[list[float]] = []
        for start in range(0, len(texts), ENDPOINT_BATCH):
            batch = [t[:MAX_EMBED_CHARS] or " " for t in texts[start : start + ENDPOINT_BATCH]]
            rows.extend(self._client.embed(batch, dimensions=self._dimensions).vectors)
        if not rows:
            return np.zeros((0, self._dimensions or 1), dtype=np.float32)
        if len({len(r) for r in rows}) != 1:
            raise errors.TeamloreError(
                errors.MODEL_BAD_RESPONSE, "the endpoint's embeddings changed length between calls"
            )
        return normalize_rows(np.asarray(rows, dtype=np.float32))

    def embed_query(self, query: str) -> Vectors:
        return self.embed([query])  # a configured model may be multilingual: as written

    def reads(self, text: str) -> bool:
        return True  # a configured model may be multilingual: what it reads is its business

    @property
    def reads_every_text(self) -> bool:
        return True


# --------------------------------------------------------------------------------------------
# choosing from config.toml


def configured_embedder(home: Path | None = None) -> Embedder | None:
    """The embedder `[embeddings]` in config.toml names; None when `backend = "off"`.

    Raises `EMBEDDINGS_UNAVAILABLE` (bundled model missing), `MODEL_NOT_CONFIGURED` or
    `CONFIG_INVALID` (endpoint profile incomplete); callers fall back to lexical search.
    """
    # config.toml's models (pydantic) load here, not with the module: the analysis helper
    # loads the bundled model without them (sessions/analysis_helper.py)
    from teamlore.core.config import load_config
    from teamlore.core.locations import state_dir_path

    settings = load_config(home).embeddings
    if settings.backend == "off":
        return None
    if settings.backend == "bundled":
        return bundled_embedder(cache_dir=model_cache_dir(home or state_dir_path()))
    from teamlore.models.openai_compat import OpenAICompatClient
    from teamlore.models.profiles import load_profile

    profile = load_profile(settings.profile, home=home)
    return EndpointEmbedder(OpenAICompatClient.from_profile(profile), settings.dimensions)
