"""Tokenizer subsets: a few texts tokenized by only the merges they can use get exactly the full
tokenizer's ids."""

from __future__ import annotations

import functools
import marshal
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from teamlore.models import tokenizer_subsets
from teamlore.models.embeddings import BundledEmbedder, bundled_files
from teamlore.models.tokenizer_subsets import TokenizerSubsets

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
WEIGHTS, TOKENIZER_FILE = bundled_files()
FULL = Tokenizer.from_file(str(TOKENIZER_FILE))


@pytest.fixture(scope="module")
def subsets(tmp_path_factory: pytest.TempPathFactory) -> TokenizerSubsets:
    derived = TokenizerSubsets.load_or_derive(
        TOKENIZER_FILE, tmp_path_factory.mktemp("state") / "models"
    )
    assert derived is not None
    return derived


def ids(tokenizer: Tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False).ids


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def fixture_texts() -> list[str]:
    """Every string of the real session fixtures (prompts, answers, tool output, paths, CJK),
    cut to the ~1 KiB a turn's embedded text holds."""
    texts = set()
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            texts.update(s[:1024] for s in strings(record) if s.strip())
    return sorted(texts)


def test_every_real_session_text_gets_the_full_tokenizers_ids(subsets: TokenizerSubsets) -> None:
    texts = fixture_texts()
    assert len(texts) > 300
    for text in texts:
        assert subsets.encode([text]) == [ids(FULL, text)], text[:200]


def test_several_texts_at_once_are_each_tokenized_as_the_full_tokenizer_does(
    subsets: TokenizerSubsets,
) -> None:
    texts = fixture_texts()[:12]
    assert subsets.encode(texts) == [ids(FULL, t) for t in texts]


TRICKY = [
    "",
    " ",
    "  two  spaces  ",
    "a<s>b</s>c<unk>d",
    "<s>",
    "</s></s><s>",
    "x <s> y",
    "迁移数据库之前先备份 schema 变更",
    "😀🙈 emoji and \x00 nul \t tab\r\n\nnewlines",
    "ǅ ﬁ Å Å — unnormalized unicode",
    "rebase_onto(main) && git push --force-with-lease",
    "\u2581already\u2581marked",
]


@pytest.mark.parametrize("text", TRICKY)
def test_special_tokens_spaces_and_unusual_characters(subsets: TokenizerSubsets, text: str) -> None:
    assert subsets.encode([text]) == [ids(FULL, text)]


PARTS = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8"), max_size=8),
    st.sampled_from([" ", "<s>", "</s>", "<unk>", "\u2581", "\n", "ing", "the", "_", "迁移"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(PARTS, max_size=30).map("".join))
def test_random_text_gets_the_full_tokenizers_ids(text: str) -> None:
    subsets = TokenizerSubsets(derived_from_bundled())
    assert subsets.encode([text]) == [ids(FULL, text)]


@pytest.mark.parametrize("fuse", [True, False])
def test_characters_outside_the_vocabulary_without_byte_fallback_are_unknown_tokens(
    fuse: bool,
) -> None:
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["model"].update(byte_fallback=False, fuse_unk=fuse)
    source = orjson.dumps(config)
    derived = tokenizer_subsets.derive(source)
    assert derived is not None
    full = Tokenizer.from_str(source.decode())
    for text in ["😀🙈 two unknown", "a😀b", "😀", "x 😀😀 <s>😀</s> y", "迁移😀数据库"]:
        assert TokenizerSubsets(derived).encode([text]) == [ids(full, text)], text


_derived: dict[str, Any] = {}


def derived_from_bundled() -> dict[str, Any]:
    if not _derived:
        data = tokenizer_subsets.derive(TOKENIZER_FILE.read_bytes())
        assert data is not None
        _derived.update(data)
    return _derived


# -- the cache in the state dir -------------------------------------------------------------


def test_derived_once_then_read_from_the_private_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "models"
    TokenizerSubsets.load_or_derive(TOKENIZER_FILE, cache)
    (stored,) = cache.iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700

    def no_derive(source: bytes) -> None:
        raise AssertionError("derived again although the cache was current")

    monkeypatch.setattr(tokenizer_subsets, "derive", no_derive)
    again = TokenizerSubsets.load_or_derive(TOKENIZER_FILE, cache)
    assert again is not None
    assert again.encode(["cache hit"]) == [ids(FULL, "cache hit")]


def test_a_damaged_cache_is_derived_again(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    TokenizerSubsets.load_or_derive(TOKENIZER_FILE, cache)
    (stored,) = cache.iterdir()
    stored.write_bytes(stored.read_bytes()[:1000])
    again = TokenizerSubsets.load_or_derive(TOKENIZER_FILE, cache)
    assert again is not None and again.encode(["x y"]) == [ids(FULL, "x y")]
    assert len(stored.read_bytes()) > 1000


def test_another_tokenizer_file_has_its_own_cache_entry(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    TokenizerSubsets.load_or_derive(TOKENIZER_FILE, cache)
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["model"]["merges"] = config["model"]["merges"][:-1]  # one merge fewer
    other = tmp_path / "other.json"
    other.write_bytes(orjson.dumps(config))
    TokenizerSubsets.load_or_derive(other, cache)
    assert len(list(cache.iterdir())) == 2


def test_deriving_removes_copies_no_process_can_use_again(tmp_path: Path) -> None:
    # an upgrade leaves the copy of the old format or of the old tokenizer file behind
    cache = tmp_path / "models"
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    gone = tmp_path / "gone.json"
    gone.write_bytes(orjson.dumps(config))
    TokenizerSubsets.load_or_derive(gone, cache)
    (of_gone,) = cache.iterdir()
    gone.unlink()
    older_format = cache / "tokenizer-subsets-0123456789abcdef.marshal"
    older_format.write_bytes(marshal.dumps({"stamp": [1, "0" * 64, [3, 11]]}))
    older_format.chmod(0o600)
    unreadable = cache / "tokenizer-subsets-fedcba9876543210.marshal"
    unreadable.write_bytes(b"not marshal")
    unreadable.chmod(0o600)

    TokenizerSubsets.load_or_derive(TOKENIZER_FILE, cache)
    (kept,) = cache.iterdir()
    assert kept != of_gone

    config["model"]["merges"] = config["model"]["merges"][:-1]
    other = tmp_path / "other.json"
    other.write_bytes(orjson.dumps(config))
    TokenizerSubsets.load_or_derive(other, cache)
    assert kept in set(cache.iterdir()) and len(list(cache.iterdir())) == 2  # still in use


def test_a_tokenizer_file_rewritten_in_place_is_derived_again(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    text = "the cat sat on the mat"
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    other = tmp_path / "other.json"
    other.write_bytes(orjson.dumps(config))
    first = TokenizerSubsets.load_or_derive(other, cache)
    assert first is not None and first.encode([text]) == [ids(FULL, text)]
    merges = config["model"]["merges"]
    config["model"]["merges"] = [m for m in merges if m.replace(" ", "") != "\u2581the"]
    other.write_bytes(orjson.dumps(config))  # a reinstall: same path, other content

    again = TokenizerSubsets.load_or_derive(other, cache)

    assert again is not None
    changed = Tokenizer.from_file(str(other))
    assert again.encode([text]) == [ids(changed, text)] != [ids(FULL, text)]


def test_without_a_state_dir_nothing_is_written(tmp_path: Path) -> None:
    missing_home = tmp_path / "no-such-home"
    subsets = TokenizerSubsets.load_or_derive(TOKENIZER_FILE, missing_home / "models")
    assert subsets is not None and not missing_home.exists()


def test_a_tokenizer_of_another_shape_is_not_derived(tmp_path: Path) -> None:
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["pre_tokenizer"] = {"type": "Whitespace"}
    assert tokenizer_subsets.derive(orjson.dumps(config)) is None
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["model"]["ignore_merges"] = True  # a piece in the vocabulary skips its merges
    assert tokenizer_subsets.derive(orjson.dumps(config)) is None
    assert tokenizer_subsets.derive(b"{}") is None
    assert tokenizer_subsets.derive(b"not json") is None


@pytest.mark.parametrize(
    "setting",
    [
        {
            "truncation": {
                "direction": "Right",
                "max_length": 4,
                "strategy": "LongestFirst",
                "stride": 0,
            }
        },
        {
            "padding": {
                "strategy": {"Fixed": 64},
                "direction": "Right",
                "pad_to_multiple_of": None,
                "pad_id": 0,
                "pad_type_id": 0,
                "pad_token": "<unk>",
            }
        },
    ],
    ids=["truncation", "padding"],
)
def test_a_tokenizer_that_truncates_or_pads_is_not_derived(setting: dict[str, Any]) -> None:
    # the full tokenizer applies them to every text it encodes: its ids differ from the merges'
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config.update(setting)
    source = orjson.dumps(config)
    text = "a query of more than four tokens"
    assert ids(Tokenizer.from_str(source.decode()), text) != ids(FULL, text)
    assert tokenizer_subsets.derive(source) is None


# -- through the embedder ---------------------------------------------------------------------


def test_the_embedder_gives_the_same_vectors_with_and_without_subsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache dir lets a few short texts use a subset tokenizer; without one (or for long or
    many texts) the full tokenizer runs: the vectors are byte-identical."""
    monkeypatch.setattr("teamlore.models.embeddings._loaded", {})  # no full tokenizer loaded yet
    version = "test"
    with_subsets = BundledEmbedder(WEIGHTS, TOKENIZER_FILE, version, tmp_path / "models")
    full_only = BundledEmbedder(WEIGHTS, TOKENIZER_FILE, version, None)
    texts = fixture_texts()
    batches = ([texts[0]], texts[1:4], TRICKY, texts[:40])
    from_subsets = [with_subsets.embed(batch).tobytes() for batch in batches]
    assert any((tmp_path / "models").iterdir())
    assert from_subsets == [full_only.embed(batch).tobytes() for batch in batches]


def test_once_the_full_tokenizer_is_loaded_a_few_texts_use_it_and_derive_no_subsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold sync's last batch holds a few turns: the full tokenizer its earlier batches loaded
    tokenizes them, with the same ids, instead of deriving the subsets (~0.7 s of CPU)."""
    monkeypatch.setattr("teamlore.models.embeddings._loaded", {})
    monkeypatch.setattr(tokenizer_subsets, "_derived", {})
    embedder = BundledEmbedder(WEIGHTS, TOKENIZER_FILE, "test", tmp_path / "models")
    texts = fixture_texts()
    embedder.embed(texts[:64])

    tail = embedder.embed(texts[64:66])

    assert (
        tail.tobytes()
        == BundledEmbedder(WEIGHTS, TOKENIZER_FILE, "test", None).embed(texts[64:66]).tobytes()
    )
    assert embedder.embed_few(texts[66:68]) is not None
    assert not (tmp_path / "models").exists()


def test_a_shape_the_subsets_cannot_reproduce_falls_back_to_the_full_tokenizer(
    tmp_path: Path,
) -> None:
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["pre_tokenizer"] = {"type": "Whitespace"}
    other = tmp_path / "whitespace.json"
    other.write_bytes(orjson.dumps(config))
    text = "split on whitespace first"
    assert ids(Tokenizer.from_file(str(other)), text) != ids(FULL, text)  # the shape matters

    vector = BundledEmbedder(WEIGHTS, other, "test", tmp_path / "models").embed([text])

    same_file_full = BundledEmbedder(WEIGHTS, other, "test", None).embed([text])
    assert vector.tobytes() == same_file_full.tobytes()
    assert not (tmp_path / "models").exists()


# -- many texts a word at a time (a sync's batches) -------------------------------------------


@functools.cache
def _checked_word_ids() -> tokenizer_subsets.WordIds:
    words = tokenizer_subsets.WordIds.of(FULL)  # ~25 ms: it reads every token of the vocabulary
    assert words is not None
    return words


def word_ids() -> tokenizer_subsets.WordIds:
    """The bundled tokenizer's word table, emptied: each word is tokenized afresh, none is
    read from an earlier test's or example's."""
    words = _checked_word_ids()
    words.clear()
    return words


def test_word_by_word_every_real_session_text_gets_the_full_tokenizers_ids() -> None:
    words = word_ids()
    for text in fixture_texts():
        assert words.encode(text) == ids(FULL, text), text[:200]


@pytest.mark.parametrize("text", [t for t in TRICKY if not any(s in t for s in ("<s>", "</s>"))])
def test_word_by_word_spaces_and_unusual_characters(text: str) -> None:
    assert word_ids().encode(text) == ids(FULL, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(PARTS, max_size=30).map("".join))
def test_word_by_word_random_text_gets_the_full_tokenizers_ids_or_none_for_a_special_token(
    text: str,
) -> None:
    encoded = word_ids().encode(text)
    if any(special in text for special in ("<s>", "</s>", "<unk>")):
        assert encoded is None  # the tokenizer matches those first: the caller encodes it whole
    else:
        assert encoded == ids(FULL, text)


def test_a_vocabulary_with_a_token_that_joins_two_words_is_not_read_word_by_word() -> None:
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["model"]["vocab"]["s\u2581the"] = len(config["model"]["vocab"])
    config["model"]["merges"].insert(0, "s \u2581the")  # first, so it fires
    full = Tokenizer.from_str(orjson.dumps(config).decode())
    assert full.token_to_id("s\u2581the") in ids(full, "cats the")  # across a word start
    assert tokenizer_subsets.WordIds.of(full) is None


def test_a_tokenizer_of_another_shape_is_not_read_word_by_word() -> None:
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["pre_tokenizer"] = {"type": "Whitespace"}
    assert tokenizer_subsets.WordIds.of(Tokenizer.from_str(orjson.dumps(config).decode())) is None
    config = orjson.loads(TOKENIZER_FILE.read_bytes())
    config["normalizer"] = None
    assert tokenizer_subsets.WordIds.of(Tokenizer.from_str(orjson.dumps(config).decode())) is None


def test_the_embedder_gives_a_batch_the_same_vectors_word_by_word_as_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = fixture_texts()[:200] + TRICKY * 3
    by_words = BundledEmbedder(WEIGHTS, TOKENIZER_FILE, "test", None).embed(texts)
    monkeypatch.setattr(tokenizer_subsets.WordIds, "of", classmethod(lambda *_: None))
    monkeypatch.setattr("teamlore.models.embeddings._loaded", {})
    whole = BundledEmbedder(WEIGHTS, TOKENIZER_FILE, "test", None).embed(texts)
    assert by_words.tobytes() == whole.tobytes()
