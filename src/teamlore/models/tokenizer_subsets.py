"""Tokenizing a few short texts without loading the whole BPE tokenizer (docs/hybrid-search.md,
"Embedding a query in a fresh process").

Loading the bundled model's tokenizer (32,000 tokens, 61,249 merges) costs 40-80 ms of CPU, and
importing `tokenizers` ~5 ms more, most of what embedding a query or one new turn costs a CLI
process. A BPE merge can only fire inside a text whose normalized form contains the string the
merge makes, so for a handful of texts the merges that string-match them — in their original
order, with their original token ids — yield exactly the ids the full tokenizer gives. They are
applied here in plain Python, as the `tokenizers` BPE model applies them (lowest rank first,
leftmost first among equals; characters outside the vocabulary as byte tokens, else as one
fused unknown token):

    subsets = TokenizerSubsets.load_or_derive(tokenizer_file, cache_dir)   # None: not this shape
    subsets.encode(["a query"])    # [[ids of "a query"]], a few ms for a 1 KiB turn

The merges are grouped by the first three characters of the string they make (two for a
two-character result) and stored once per state dir (`models/`, marshal, stamped with the source
file's path, size, modification time and inode — hashing its 1.8 MB cost each process ~5 ms —
and the Python version); a text loads the groups of its own character trigrams and bigrams only.
The shape this relies on is checked when deriving — a BPE model whose normalizer only prepends
"▁" to each piece and turns spaces into "▁", no pre-tokenizer, truncation or padding, no subword
prefix/suffix, dropout or `ignore_merges`, special tokens matched before normalization, and no
merge involving a byte-fallback token — and any other tokenizer file is simply not derived (the
caller loads the full tokenizer). Tests compare the ids with the full tokenizer's over real turn
texts and random text (tests/models/test_tokenizer_subsets.py).
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import json
import marshal
import re
import sys
import zlib
from array import array
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file

FORMAT = 5  # 2: no tokenizer skeleton, the unknown token and byte fallback; 3: packed groups;
# 4: named by crc32 (a copy named by sha256 is then of an older format, and removed); 5: the
# groups found by a stored hash table (`_packed`)
SPACE = "\u2581"  # "▁", SentencePiece's word boundary
_NORMALIZER = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ],
}
_BYTE_TOKEN = re.compile(r"<0x[0-9A-F]{2}>")
# a group of merges: (left id, right id) → (rank, made id)
Merges = dict[tuple[int, int], tuple[int, int]]


_derived: dict[str, dict[str, Any] | None] = {}  # by the tokenizer file's identity


class TokenizerSubsets:
    """The merges of one tokenizer file, grouped so a text loads only those it can use."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._fixed: dict[str, int] = data["fixed"]  # special and byte-fallback tokens
        self._chars: dict[str, int] = data["chars"]  # one-character tokens
        # the marshalled `Merges` of every group, one after the other, in the order of their
        # keys: a dict of 8,400 small bytes took ~3 ms to unmarshal; a dict of the keys built
        # on loading cost a query process ~10 million instructions, the table `_group` reads
        # its few keys from nothing
        self._keys: str = data["keys"]
        self._slots: array[int] = array("I", data["slots"])
        self._ends = array("I", data["ends"])
        self._merges: bytes = data["merges"]
        self._special = re.compile(f"({data['special']})") if data["special"] else None
        self._unknown: int | None = data["unknown"]  # the unknown token's id
        self._fuse_unknown: bool = data["fuse_unknown"]
        self._byte_fallback: bool = data["byte_fallback"]

    # -- deriving and caching -------------------------------------------------------------

    @classmethod
    def load_or_derive(cls, tokenizer_file: Path, cache_dir: Path) -> TokenizerSubsets | None:
        """The subsets of `tokenizer_file`, from `cache_dir` when a copy made from this very
        file (path, size, modification time and inode, as `git status` tells a changed file)
        by this Python is there, else derived and stored there (when the folder can be
        written). None when the file has a shape the subsets do not reproduce."""
        info = tokenizer_file.stat()
        identity = f"{tokenizer_file.resolve()}|{info.st_size}|{info.st_mtime_ns}|{info.st_ino}"
        # the file's name only spreads copies apart; the stamp inside says whose it is (crc32:
        # zlib is loaded already, hashlib's OpenSSL costs a query process ~5 ms)
        cached = cache_dir / f"tokenizer-subsets-{zlib.crc32(identity.encode()):08x}.marshal"
        stamp = [FORMAT, identity, list(sys.version_info[:2])]
        try:
            data = marshal.loads(read_private_file(cached))
            if isinstance(data, dict) and data.get("stamp") == stamp:
                return cls(data)
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            pass  # missing or damaged: derive again
        if identity not in _derived:  # another state dir of this process may have derived it
            _derived[identity] = derive(tokenizer_file.read_bytes())
        derived = _derived[identity]
        if derived is None:
            return None
        derived["stamp"] = stamp
        if cache_dir.parent.is_dir():  # never creates the state dir itself
            # a read-only or unsafe state dir: this process derived it, the next one will too
            with contextlib.suppress(OSError, errors.TeamloreError):
                write_private_file(
                    ensure_private_dir(cache_dir) / cached.name, marshal.dumps(derived)
                )
                _remove_stale_copies(cache_dir, keep=cached.name)
        return cls(derived)

    # -- tokenizing some texts ------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, as the full tokenizer gives them (no special tokens added)."""
        split = [self._split(text) for text in texts]
        merges = self._merges_in("\x00".join(p for parts in split for p in parts[::2]))
        out = []
        for parts in split:
            ids: list[int] = []
            for index, part in enumerate(parts):
                if index % 2:  # a special token, matched before normalization
                    ids.append(self._fixed[part])
                elif part:
                    ids.extend(_merge(self._symbols(part), merges))
            out.append(ids)
        return out

    def _split(self, text: str) -> list[str]:
        """Normalized pieces at even positions, the special tokens between them at odd ones."""
        parts = self._special.split(text) if self._special else [text]
        for index in range(0, len(parts), 2):
            if parts[index]:
                parts[index] = SPACE + parts[index].replace(" ", SPACE)
        return parts

    def _merges_in(self, made_in: str) -> Merges:
        """(left id, right id) → (rank, made id) of the merges whose result starts with a
        character trigram or bigram of `made_in`: every merge that can fire there (a merge
        fires only where the text holds what it makes; the others are never looked up)."""
        keys = {made_in[i : i + 3] for i in range(len(made_in) - 1)}
        keys.update(made_in[i : i + 2] for i in range(len(made_in) - 1))
        merges: Merges = {}
        ends, blob = self._ends, self._merges
        for key in keys:
            n = self._group(key)
            if n is not None:
                merges.update(marshal.loads(blob[ends[n - 1] if n else 0 : ends[n]]))
        return merges

    def _group(self, key: str) -> int | None:
        """The number of the group of merges whose results start with `key`, if any."""
        slots, mask = self._slots, len(self._slots) - 1
        padded = key.ljust(KEY_CHARS, "\x00")
        slot = _key_hash(key) & mask
        while n := slots[slot]:
            if self._keys[(n - 1) * KEY_CHARS : n * KEY_CHARS] == padded:
                return n - 1
            slot = (slot + 1) & mask
        return None

    def _symbols(self, piece: str) -> list[int]:
        """The piece's characters as token ids before any merge: a character outside the
        vocabulary as its UTF-8 byte tokens, else as the unknown token (consecutive unknown
        characters fused into one), in the order the tokenizer adds them."""
        symbols: list[int] = []
        pending_unknown = False
        for char in piece:
            token = self._chars.get(char)
            if token is not None:
                if pending_unknown:
                    symbols.append(self._unknown)  # type: ignore[arg-type]
                    pending_unknown = False
                symbols.append(token)
                continue
            if self._byte_fallback:
                tokens = [self._fixed.get(f"<0x{byte:02X}>") for byte in char.encode()]
                if None not in tokens:
                    symbols.extend(tokens)  # type: ignore[arg-type]
                    continue
            if self._unknown is not None:
                if pending_unknown and not self._fuse_unknown:
                    symbols.append(self._unknown)
                pending_unknown = True
        if pending_unknown:
            symbols.append(self._unknown)  # type: ignore[arg-type]
        return symbols


def _merge(symbols: list[int], merges: Merges) -> list[int]:
    """Apply `merges` to a piece's symbols: always the pair of lowest rank, the leftmost of
    equal ones (a queue of candidate pairs; an entry whose pair has changed since is skipped)."""
    count = len(symbols)
    after = list(range(1, count + 1))  # the next live symbol (count: none)
    before = list(range(-1, count - 1))
    alive = [True] * count
    queue = [
        (merges[pair][0], at, merges[pair][1])
        for at, pair in enumerate(itertools.pairwise(symbols))
        if pair in merges
    ]
    heapq.heapify(queue)
    while queue:
        rank, at, made = heapq.heappop(queue)
        right = after[at]
        if not alive[at] or right >= count:
            continue
        if merges.get((symbols[at], symbols[right])) != (rank, made):
            continue  # stale: a symbol of this pair took part in another merge since
        symbols[at] = made
        alive[right] = False
        after[at] = after[right]
        if after[at] < count:
            before[after[at]] = at
        for left in (before[at], at):  # the pairs the merged symbol now forms
            if left >= 0 and after[left] < count:
                merge = merges.get((symbols[left], symbols[after[left]]))
                if merge is not None:
                    heapq.heappush(queue, (merge[0], left, merge[1]))
    return [symbol for symbol, live in zip(symbols, alive, strict=True) if live]


def derive(source: bytes) -> dict[str, Any] | None:
    """The grouped merges of a tokenizer file (see the module docstring), or None when its
    shape is not one the subsets reproduce exactly."""
    import orjson  # deriving reads a whole tokenizer file; a query reads the derived subsets

    try:
        config = orjson.loads(source)
        model = config["model"]
        vocab: dict[str, int] = model["vocab"]
        added = config.get("added_tokens") or []
        if not _reproducible(config, model, added):
            return None
        pairs = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
        if len({(left, right) for left, right in pairs}) != len(pairs):
            return None  # a pair merged twice: the tokenizer keeps the later rank
        groups: defaultdict[str, Merges] = defaultdict(dict)
        for rank, (left, right) in enumerate(pairs):
            if _BYTE_TOKEN.fullmatch(left) or _BYTE_TOKEN.fullmatch(right):
                return None  # a merge of byte tokens makes no substring of the text
            made = left + right
            ids = (vocab[left], vocab[right], vocab[made])
            groups[made[:KEY_CHARS]][ids[0], ids[1]] = (rank, ids[2])
        if any("\x00" in key for key in groups):
            return None  # the keys are stored NUL-separated
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    specials = sorted((t["content"] for t in added), key=len, reverse=True)
    fixed = {t["content"]: int(t["id"]) for t in added}
    fixed.update((token, i) for token, i in vocab.items() if _BYTE_TOKEN.fullmatch(token))
    if model.get("unk_token") in vocab:
        fixed[model["unk_token"]] = vocab[model["unk_token"]]
    return {
        "unknown": fixed.get(model.get("unk_token") or ""),
        "fuse_unknown": bool(model.get("fuse_unk")),
        "byte_fallback": bool(model.get("byte_fallback")),
        "fixed": fixed,
        "chars": {token: i for token, i in vocab.items() if len(token) == 1},
        **_packed({key: marshal.dumps(merges) for key, merges in groups.items()}),
        # leftmost-longest, as the tokenizer matches its added tokens
        "special": "|".join(re.escape(s) for s in specials),
    }


KEY_CHARS = 3  # a group's key: the first three characters of what its merges make, or two


def _packed(groups: dict[str, bytes]) -> dict[str, Any]:
    """The groups as `TokenizerSubsets` reads them: their keys one after the other, each padded
    to `KEY_CHARS` with NUL (`derive` refuses a key holding NUL); a hash table of their numbers
    + 1 (0: an empty slot), at least twice as many slots as keys, probed from `_key_hash` on;
    the end offset of each group, and their bytes one after the other."""
    keys = sorted(groups)
    slots = array("I", bytes(4 * (1 << (2 * len(keys)).bit_length())))
    mask = len(slots) - 1
    for n, key in enumerate(keys):
        slot = _key_hash(key) & mask
        while slots[slot]:
            slot = (slot + 1) & mask
        slots[slot] = n + 1
    ends = array("I", itertools.accumulate(len(groups[key]) for key in keys))
    return {
        "keys": "".join(key.ljust(KEY_CHARS, "\x00") for key in keys),
        "slots": slots.tobytes(),
        "ends": ends.tobytes(),
        "merges": b"".join(groups[key] for key in keys),
    }


def _key_hash(key: str) -> int:
    # the same in every process (`hash` of a str is not); a text's lone surrogates hash too
    return zlib.crc32(key.encode("utf-8", "surrogatepass"))


def _reproducible(config: dict[str, Any], model: dict[str, Any], added: list[Any]) -> bool:
    return (
        model.get("type") == "BPE"
        and model.get("dropout") is None
        and not model.get("ignore_merges")
        and not model.get("continuing_subword_prefix")
        and not model.get("end_of_word_suffix")
        and config.get("pre_tokenizer") is None
        and config.get("truncation") is None  # applied to every text the full one encodes
        and config.get("padding") is None
        and config.get("normalizer") == _NORMALIZER
        and all(
            t.get("special")
            and not t.get("normalized")
            and not (t.get("single_word") or t.get("lstrip") or t.get("rstrip"))
            and model["vocab"].get(t["content"]) == t["id"]
            for t in added
        )
    )


def _remove_stale_copies(cache_dir: Path, keep: str) -> None:
    """Deleted from `cache_dir`: copies no process can use again, made in an older format or
    from a tokenizer file that is gone or has changed since (an upgrade leaves one behind; each
    is a few MB). Copies of other tokenizer files that are still there stay."""
    for path in cache_dir.glob("tokenizer-subsets-*.marshal"):
        if path.name != keep and not _still_usable(path):
            with contextlib.suppress(OSError):
                path.unlink()


def _still_usable(path: Path) -> bool:
    try:
        stamp = marshal.loads(read_private_file(path))["stamp"]
        source, size, mtime_ns, inode = stamp[1].rsplit("|", 3)
        info = Path(source).stat()
    except (OSError, ValueError, EOFError, LookupError, TypeError, errors.TeamloreError):
        return False
    now = (str(info.st_size), str(info.st_mtime_ns), str(info.st_ino))
    return bool(stamp[0] == FORMAT and (size, mtime_ns, inode) == now)


# a word of a normalized text: its run of "▁" and the characters up to the next "▁"
_WORD = re.compile(f"{SPACE}*[^{SPACE}]*")
MAX_WORDS = 1 << 15  # cached words; emptied past this (a bound on their memory)


class WordIds(dict[str, list[int]]):
    """Token ids of many texts a word at a time, each distinct word tokenized once by the full
    tokenizer's BPE model (docs/hybrid-search.md, "Embedding turns in a sync").

    In a tokenizer of the shape `derive` accepts whose vocabulary holds "▁" only at a token's
    start or in tokens of "▁" alone, no merge can make a token out of a character and a "▁"
    after it: BPE never merges across the start of a word, so a text's ids are its words' ids
    one after the other, whatever order the merges fire in. Encoding whole texts cost ~0.4 µs
    per character (the normalizer tracks every character's offsets); words repeat."""

    def __init__(self, model: Any, specials: list[str]) -> None:
        super().__init__()
        self._model = model
        self._specials = specials

    @classmethod
    def of(cls, tokenizer: Any) -> WordIds | None:
        """For a loaded `tokenizers.Tokenizer`, or None when its shape does not allow it (the
        caller encodes whole texts). Read from the tokenizer's own objects: parsing its 1.8 MB
        file again held ~9 MiB at the sync's peak."""
        model = tokenizer.model
        added = [
            {
                "content": t.content,
                "id": i,
                "special": t.special,
                "normalized": t.normalized,
                "single_word": t.single_word,
                "lstrip": t.lstrip,
                "rstrip": t.rstrip,
            }
            for i, t in tokenizer.get_added_tokens_decoder().items()
        ]
        normalizer = tokenizer.normalizer
        config = {
            "normalizer": json.loads(normalizer.__getstate__()) if normalizer else None,
            "pre_tokenizer": None if tokenizer.pre_tokenizer is None else "some",
            "truncation": tokenizer.truncation,
            "padding": tokenizer.padding,
        }
        shape = {
            "type": type(model).__name__,
            "dropout": getattr(model, "dropout", "unknown"),
            "ignore_merges": getattr(model, "ignore_merges", False),
            "continuing_subword_prefix": getattr(model, "continuing_subword_prefix", "unknown"),
            "end_of_word_suffix": getattr(model, "end_of_word_suffix", "unknown"),
            "vocab": {t["content"]: model.token_to_id(t["content"]) for t in added},
        }
        if not _reproducible(config, shape, added):
            return None
        size = tokenizer.get_vocab_size(with_added_tokens=False)
        if any(SPACE in (model.id_to_token(i) or "").lstrip(SPACE) for i in range(size)):
            return None
        return cls(model, [t["content"] for t in added])

    def __missing__(self, word: str) -> list[int]:
        if len(self) >= MAX_WORDS:
            self.clear()
        self[word] = ids = [token.id for token in self._model.tokenize(word)]
        return ids

    def encode(self, text: str) -> list[int] | None:
        """The ids the full tokenizer gives `text` (no special tokens added), or None for a
        text holding a special token's string (the tokenizer matches those first)."""
        if any(special in text for special in self._specials):
            return None
        if not text:
            return []
        words = _WORD.findall(SPACE + text.replace(" ", SPACE))
        return list(itertools.chain.from_iterable(map(self.__getitem__, filter(None, words))))
