"""`teamlore memory search` by words and by meaning, as a user runs it: the bundled model by
default, `--lexical`, embeddings off, and a configured OpenAI-compatible embeddings endpoint."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from models.scripted_server import Scripted, ScriptedServer, embeddings_responder
from support import entry_file, in_process, initialized_repository

ENTRIES = {
    "deploy-migrations": "Run the database migrations before deploying a release to production.",
    "office-coffee": "The office coffee machine needs descaling every month.",
    "button-styles": "Use the shared button styles from the design system, not inline colors.",
}
PARAPHRASE = "apply schema changes prior to shipping"


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = initialized_repository(tmp_path, home)
    for entry_id, body in ENTRIES.items():
        (root / f".threadshare/memory/entries/{entry_id}.md").write_text(entry_file(entry_id, body))
    return root


def search(repo: Path, *args: str) -> dict:
    proc = in_process("memory", "search", *args, "--format", "json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_default_search_uses_the_bundled_model_and_finds_a_paraphrase(repo: Path) -> None:
    found = search(repo, PARAPHRASE)
    assert found["paths"] == ["lexical", "vector"]
    assert found["vector"]["space"].startswith("bundled:use-m3-wordllama-768@")  # memory's pair
    assert found["results"][0]["id"] == "deploy-migrations"
    assert found["results"][0]["matchedBy"] == ["vector"]

    text = in_process("memory", "search", PARAPHRASE, cwd=repo).stdout
    assert "words + meaning (bundled:use-m3-wordllama-768" in text
    assert "deploy-migrations  entry, score " in text and "by meaning\n" in text


def test_a_chinese_query_finds_an_english_entry_by_meaning(repo: Path) -> None:
    """The bundled model reads the query's Chinese words as their CC-CEDICT glosses; the glosses
    never join the words (docs/hybrid-search.md, "Words are never outvoted")."""
    found = search(repo, "发布之前先运行数据库迁移")  # run the database migration before release
    assert found["paths"] == ["lexical", "vector"]
    assert found["results"][0]["id"] == "deploy-migrations"
    assert found["results"][0]["matchedBy"] == ["vector"]


def test_a_chinese_query_finds_no_english_entry_by_words(repo: Path) -> None:
    """Words alone search the query's own words: a translation must never outvote a literal
    match, so English entries are left to the vector path."""
    # how often is the coffee machine cleaned?
    found = search(repo, "--lexical", "咖啡机多久清洗一次？")
    assert found["results"] == []


def test_lexical_flag_runs_words_alone_and_says_so(repo: Path) -> None:
    found = search(repo, "--lexical", PARAPHRASE)
    assert found["paths"] == ["lexical"]
    assert found["vector"] == {
        "ran": False,
        "space": None,
        "documents": 0,
        "reason": "lexical search only was asked for",
        "code": None,
    }
    assert "deploy-migrations" not in [r["id"] for r in found["results"]]
    text = in_process("memory", "search", "--lexical", "coffee", cwd=repo).stdout
    assert "words only (lexical search only was asked for)" in text
    assert "office-coffee  entry, score " in text and "by words\n" in text


def test_embeddings_off_in_config_means_words_only(repo: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embeddings]\nbackend = "off"\n')
    found = search(repo, "coffee")
    assert found["paths"] == ["lexical"]
    assert found["vector"]["reason"] == '[embeddings] backend = "off" in config.toml'


def test_an_unreachable_endpoint_falls_back_to_words_with_its_code(
    repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBED_KEY", "sk-embed")
    with ScriptedServer() as server:
        server.respond_with(lambda _request: Scripted.error(401, "invalid_api_key"))
        (home / "config.toml").write_text(
            '[embeddings]\nbackend = "endpoint"\nprofile = "embed"\n\n'
            f'[models.embed]\nbase_url = "{server.base_url}"\nmodel = "m"\n'
            'api_key_env = "EMBED_KEY"\nmax_retries = 0\n'
        )
        found = search(repo, "coffee")
    assert found["paths"] == ["lexical"]
    assert found["vector"]["code"] == "MODEL_AUTH_FAILED"
    assert [r["id"] for r in found["results"]] == ["office-coffee"]
    assert "sk-embed" not in json.dumps(found)


def vowels(text: str) -> list[float]:
    """A scripted embedding model: vowel counts (so 'coffee' is near the coffee entry)."""
    lower = text.lower()
    return [float(lower.count(c)) + 0.1 for c in "aeiou"] + [float(lower.count("f"))]


def test_a_configured_endpoint_embeds_memory_and_queries(
    repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBED_KEY", "sk-embed")
    with ScriptedServer() as server:
        server.respond_with(embeddings_responder(vowels, model="vowels"))
        (home / "config.toml").write_text(
            '[embeddings]\nbackend = "endpoint"\nprofile = "embed"\n\n'
            f'[models.embed]\nbase_url = "{server.base_url}"\nmodel = "vowels"\n'
            'api_key_env = "EMBED_KEY"\n'
        )
        first = search(repo, "coffee")
        second = search(repo, "coffee")
        inputs = [r.json()["input"] for r in server.requests]
    assert first["paths"] == ["lexical", "vector"]
    assert first["vector"]["space"] == "endpoint:vowels"
    assert first["results"][0]["id"] == "office-coffee"
    assert first["results"][0]["matchedBy"] == ["lexical", "vector"]
    assert second["results"] == first["results"]
    # three documents, then their three headlines, embedded once; then one query per search
    assert [len(batch) for batch in inputs] == [3, 3, 1, 1]
    assert all(r.headers["authorization"] == "Bearer sk-embed" for r in server.requests)


def test_a_long_id_has_its_details_under_it_at_80_columns(repo: Path) -> None:
    """A 60-character entry id and its details made a 97-character line; the details go under
    the id. The path stays whole (it is copied) and the snippet, the entry's own words, is the
    terminal's to wrap (docs/cli-output.md)."""
    long_id = "run-the-database-migrations-before-deploying-a-release-to-pr"
    body = "Run the database migrations before deploying a release to production, " * 3
    path = f".threadshare/memory/entries/{long_id}.md"
    (repo / path).write_text(entry_file(long_id, body))
    text = in_process(
        "memory", "search", "--lexical", "migrations", cwd=repo, env={"COLUMNS": "80"}
    ).stdout
    lines = text.splitlines()
    at = lines.index(long_id)
    assert re.fullmatch(r"  entry, score [0-9.]+, by words", lines[at + 1]), lines
    assert lines[at + 2] == f"  {path}"
    assert "deploy-migrations  entry, score " in text  # a short id keeps its details beside it
    theirs = {f"  {path}", *(line for line in lines if line.startswith("  Run the database"))}
    assert all(len(line) <= 80 for line in lines if line not in theirs), lines
