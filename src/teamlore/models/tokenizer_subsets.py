"""Tokenizing a few short texts without loading the whole BPE tokenizer (docs/hybrid-search.md,
"Embedding a query in a fresh process").

Loading the bundled model's tokenizer (32,000 tokens, 61,249 merges) costs 40-80 ms of CPU, most
of what embedding a query or one new turn costs a CLI process. A BPE merge can only fire inside
a text whose normalized form contains the string the merge makes, so for a handful of texts a
tokenizer holding just those merges — in their original order, with their original token ids,
and every other setting of the original file — yields exactly the ids the full one does:

    subsets = TokenizerSubsets.load_or_derive(tokenizer_file, cache_dir)   # None: not this shape
    tokenizer = subsets.tokenizer_for(["a query"])    # a `tokenizers.Tokenizer`, ~1 ms

The merges are grouped by the first three characters of the string they make (two for a
two-character result) and stored once per state dir (`models/`, marshal, stamped with the source
file's path, size, modification time and inode — hashing its 1.8 MB cost each process ~5 ms —
and the Python version); a text loads the groups of its own character trigrams and
bigrams only. The shape this relies on is checked when deriving — a BPE model whose normalizer
only prepends "▁" to each piece and turns spaces into "▁", no pre-tokenizer, no subword
prefix/suffix or dropout, special tokens matched before normalization, and no merge involving a
byte-fallback token — and any other tokenizer file is simply not derived (the caller loads the
full tokenizer). Tests compare the ids with the full tokenizer's over real turn texts and random
text (tests/models/test_tokenizer_subsets.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from teamlore.core import errors
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file

if TYPE_CHECKING:
    from tokenizers import Tokenizer

FORMAT = 1
SPACE = "\u2581"  # "▁", SentencePiece's word boundary
_NORMALIZER = {
    "type": "Sequence",
    "normalizers": [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
    ],
}
_BYTE_TOKEN = re.compile(r"<0x[0-9A-F]{2}>")
# (made string, rank, left, right, left id, right id, made id)
Merge = tuple[str, int, str, str, int, int, int]


_derived: dict[str, dict[str, Any] | None] = {}  # by the tokenizer file's identity


class TokenizerSubsets:
    """The merges of one tokenizer file, grouped so a text loads only those it can use."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._skeleton: bytes = data["skeleton"]  # the file without vocab and merges
        self._fixed: dict[str, int] = data["fixed"]  # special and byte-fallback tokens
        self._chars: dict[str, int] = data["chars"]  # one-character tokens
        self._groups: dict[str, bytes] = data["groups"]  # key → marshal of its merges
        self._special = re.compile(data["special"]) if data["special"] else None

    # -- deriving and caching -------------------------------------------------------------

    @classmethod
    def load_or_derive(cls, tokenizer_file: Path, cache_dir: Path) -> TokenizerSubsets | None:
        """The subsets of `tokenizer_file`, from `cache_dir` when a copy made from this very
        file (path, size, modification time and inode, as `git status` tells a changed file)
        by this Python is there, else derived and stored there (when the folder can be
        written). None when the file has a shape the subsets do not reproduce."""
        info = tokenizer_file.stat()
        identity = f"{tokenizer_file.resolve()}|{info.st_size}|{info.st_mtime_ns}|{info.st_ino}"
        key = hashlib.sha256(identity.encode()).hexdigest()
        cached = cache_dir / f"tokenizer-subsets-{key[:16]}.marshal"
        stamp = [FORMAT, identity, list(sys.version_info[:2])]
        try:
            data = marshal.loads(read_private_file(cached))
            if isinstance(data, dict) and data.get("stamp") == stamp:
                return cls(data)
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            pass  # missing or damaged: derive again
        if key not in _derived:  # another state dir of this process may have derived it
            _derived[key] = derive(tokenizer_file.read_bytes())
        derived = _derived[key]
        if derived is None:
            return None
        derived["stamp"] = stamp
        if cache_dir.parent.is_dir():  # never creates the state dir itself
            # a read-only or unsafe state dir: this process derived it, the next one will too
            with contextlib.suppress(OSError, errors.TeamloreError):
                write_private_file(
                    ensure_private_dir(cache_dir) / cached.name, marshal.dumps(derived)
                )
        return cls(derived)

    # -- a tokenizer for some texts -------------------------------------------------------

    def tokenizer_for(self, texts: Sequence[str]) -> Tokenizer:
        """A tokenizer that gives each of `texts` the ids the full tokenizer gives it."""
        from tokenizers import Tokenizer

        made_in = "\x00".join(self._pieces(texts))
        keys = {made_in[i : i + 3] for i in range(len(made_in) - 1)}
        keys.update(made_in[i : i + 2] for i in range(len(made_in) - 1))
        vocab = dict(self._fixed)
        chars = self._chars
        vocab.update((c, chars[c]) for c in set(made_in) if c in chars)
        merges: list[tuple[int, str, str]] = []
        groups = self._groups
        for key in keys:
            group = groups.get(key)
            if group is None:
                continue
            for made, rank, left, right, left_id, right_id, made_id in marshal.loads(group):
                if made in made_in:
                    merges.append((rank, left, right))
                    vocab[left], vocab[right], vocab[made] = left_id, right_id, made_id
        merges.sort()
        config = orjson.loads(self._skeleton)
        config["model"]["vocab"] = vocab
        config["model"]["merges"] = [[left, right] for _, left, right in merges]
        return Tokenizer.from_str(orjson.dumps(config).decode())

    def _pieces(self, texts: Sequence[str]) -> list[str]:
        """Each text as the BPE model sees it: split at special tokens, each piece normalized."""
        out = []
        for text in texts:
            for piece in self._special.split(text) if self._special else (text,):
                if piece:
                    out.append(SPACE + piece.replace(" ", SPACE))
        return out


def derive(source: bytes) -> dict[str, Any] | None:
    """The grouped merges of a tokenizer file (see the module docstring), or None when its
    shape is not one the subsets reproduce exactly."""
    try:
        config = orjson.loads(source)
        model = config["model"]
        vocab: dict[str, int] = model["vocab"]
        added = config.get("added_tokens") or []
        if not _reproducible(config, model, added):
            return None
        pairs = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
        groups: defaultdict[str, list[Merge]] = defaultdict(list)
        for rank, (left, right) in enumerate(pairs):
            if _BYTE_TOKEN.fullmatch(left) or _BYTE_TOKEN.fullmatch(right):
                return None  # a merge of byte tokens makes no substring of the text
            made = left + right
            ids = (vocab[left], vocab[right], vocab[made])
            groups[made[:3]].append((made, rank, left, right, *ids))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    specials = sorted((t["content"] for t in added), key=len, reverse=True)
    fixed = {t["content"]: int(t["id"]) for t in added}
    fixed.update((token, i) for token, i in vocab.items() if _BYTE_TOKEN.fullmatch(token))
    if model.get("unk_token") in vocab:
        fixed[model["unk_token"]] = vocab[model["unk_token"]]
    skeleton = {**config, "model": {**model, "vocab": {}, "merges": []}}
    return {
        "skeleton": orjson.dumps(skeleton),
        "fixed": fixed,
        "chars": {token: i for token, i in vocab.items() if len(token) == 1},
        "groups": {key: marshal.dumps(merges) for key, merges in groups.items()},
        # leftmost-longest, as the tokenizer matches its added tokens
        "special": "|".join(re.escape(s) for s in specials),
    }


def _reproducible(config: dict[str, Any], model: dict[str, Any], added: list[Any]) -> bool:
    return (
        model.get("type") == "BPE"
        and model.get("dropout") is None
        and not model.get("continuing_subword_prefix")
        and not model.get("end_of_word_suffix")
        and config.get("pre_tokenizer") is None
        and config.get("normalizer") == _NORMALIZER
        and all(
            t.get("special")
            and not t.get("normalized")
            and not (t.get("single_word") or t.get("lstrip") or t.get("rstrip"))
            and model["vocab"].get(t["content"]) == t["id"]
            for t in added
        )
    )
