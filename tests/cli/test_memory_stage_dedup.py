"""`teamlore memory stage` recalls approved entries that say what a new draft says in other words
(`recall-hybrid-rrf@2`, docs/hybrid-search.md), on the real fixture memory tree: an agent
drafts a second wording of a real entry, and the adjudication task it gets back holds that
entry for its dedup decision — which words-only recall (`recall-rrf@1`) cannot do."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from support import draft_batch, release_repository, shared_fixtures, teamlore_cli
from teamlore.core.analyzer import analyze, parse_query
from teamlore.ops.memory.review import short_candidate_id

REAL_ENTRY = "threadshare-team-memory-extraction-uses-a-two-stage-pipeline"
# The lesson of REAL_ENTRY as another session might put it: not one search term in common.
SECOND_WORDING = (
    "Summarizing happens in phases: a sandboxed agent proposes notes, we look up similar "
    "existing notes on this machine with keyword scoring, and a second LLM call decides whether "
    "to fold them together or drop them, before anything is held for review."
)
WINDOW = ("--since", "2026-03-01T00:00:00.000Z", "--until", "2026-03-08T00:00:00.000Z")


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    """The release repository (one indexed session) with the real fixture memory tree."""
    root = release_repository(tmp_path, home)
    tree = shared_fixtures("threadshare-memory")
    memory = root / ".threadshare" / "memory"
    for folder in ("entries", "scenes"):
        for path in (tree / folder).glob("*.md"):
            shutil.copy(path, memory / folder / path.name)
    return root


def memory_cli(repo: Path, *args: str, request: dict | None = None) -> str:
    proc = teamlore_cli(
        "memory",
        *args,
        cwd=repo,
        input=None if request is None else json.dumps(request),
        env={"COLUMNS": "80"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def cli_json(repo: Path, *args: str, request: dict | None = None) -> dict:
    return json.loads(memory_cli(repo, *args, "--format", "json", request=request))


def second_wording_batch(repo: Path) -> dict:
    task = cli_json(repo, "recall", *WINDOW)["sources"][0]
    return draft_batch(task, SECOND_WORDING)


def recalled(staged: dict) -> list[str]:
    return [hit["id"] for hit in staged["adjudicationTask"]["recallSets"][0]["ordered"]]


def test_the_second_wording_shares_no_search_term_with_the_real_entry(repo: Path) -> None:
    entry = (repo / ".threadshare/memory/entries" / f"{REAL_ENTRY}.md").read_text()
    assert parse_query(SECOND_WORDING).coverage(analyze(f"{REAL_ENTRY} {entry}")) == 0
    found = cli_json(repo, "search", "--lexical", SECOND_WORDING)
    assert REAL_ENTRY not in [r["id"] for r in found["results"]]


def test_staging_recalls_the_real_entry_a_draft_rewords(repo: Path) -> None:
    staged = cli_json(repo, "stage", "--request", "-", request=second_wording_batch(repo))
    assert staged["adjudicationTask"]["binding"]["recallAlgorithmVersion"] == "recall-hybrid-rrf@2"
    # first in the recall set the adjudication sees (memory's paired model; the multilingual
    # model alone recalled it fifth: docs/hybrid-search.md, "Memory's model")
    assert recalled(staged)[0] == REAL_ENTRY, recalled(staged)
    pool = {p["id"]: p for p in staged["adjudicationTask"]["pool"]}
    assert pool[REAL_ENTRY]["sourceKind"] == "approved"


def test_a_person_sees_the_real_entry_and_the_agent_skips_the_duplicate(repo: Path) -> None:
    """At 80 columns: ids short, as review shows them (they printed 100 characters), and each
    recalled memory's summary whole on its own line (cut at 80 characters, 2 of them
    could leave as `… 2 more characters (use --format json)`)."""
    batch = second_wording_batch(repo)
    staged = cli_json(repo, "stage", "--request", "-", request=batch)
    task_id = staged["taskId"]
    summary = {p["id"]: p["summary"] for p in staged["adjudicationTask"]["pool"]}[REAL_ENTRY]
    lines = memory_cli(repo, "stage", "--request", "-", request=batch).splitlines()
    assert lines[0] == f"adjudication-required: task {short_candidate_id(task_id)}"
    assert re.fullmatch(r"  draft extract-[0-9a-f]{12}-c1 \(draft, provenance unknown\)", lines[1])
    assert lines[2] == "    closest known memory (recall-hybrid-rrf@2):"
    shown = [line for line in lines if re.match(r"      [0-9]\. ", line)]
    assert len(shown) == 5
    at = lines.index(f"      1. approved {REAL_ENTRY}")
    assert lines[at + 1] == f"         {summary}"  # the document's words: the terminal wraps them
    assert all(len(line) <= 80 for line in lines if not line.startswith("         ")), lines

    # staging the same batch again answers with the same adjudication task
    task = cli_json(repo, "stage", "--request", "-", request=batch)["adjudicationTask"]
    draft = task["drafts"][0]["candidateId"]
    skip = {
        "format": "threadshare-memory-adjudication-result@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "adjudications": [
            {"draftRef": draft, "action": "skip", "targetIds": [REAL_ENTRY], "mergedFields": None}
        ],
    }
    done = memory_cli(repo, "stage", "--request", "-", request=skip).splitlines()
    assert re.fullmatch(r"staged: task adjudicate-agent-[0-9a-f]{12}", done[0])
    assert done[1:3] == [  # wrapped at words under the candidate
        f"  {short_candidate_id(draft)}: skip",
        f"    {REAL_ENTRY} -> discarded",
    ]
    assert cli_json(repo, "review")["count"] == 0  # the duplicate never reaches a reviewer


def test_with_embeddings_off_words_only_recall_misses_it(repo: Path, home: Path) -> None:
    (home / "config.toml").write_text('[embeddings]\nbackend = "off"\n')
    staged = cli_json(repo, "stage", "--request", "-", request=second_wording_batch(repo))
    assert staged["adjudicationTask"]["binding"]["recallAlgorithmVersion"] == "recall-rrf@1"
    assert REAL_ENTRY not in recalled(staged)
