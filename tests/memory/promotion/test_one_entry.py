"""A candidate is one lesson: when its statements cite different turns, promotion still writes
one entry whose body is the candidate's content (the lesson), followed by each statement with
its public evidence — the content is never dropped for a file per statement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support import draft_batch, release_repository, store_all
from teamlore.memory.promotion.queue import prepare_request_from_review
from teamlore.ops.registry import OpContext, run_operation

LESSON = "Check the tag prefix the release script expects before pushing a release tag."
FAILED = "The release tests failed on tag push because the tag check expected another prefix."
FIXED = "Changing the tag check to expect a v prefix made the release tests pass."


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


def op(repo: Path, name: str, payload: dict[str, Any]) -> dict[str, Any]:
    return run_operation(name, OpContext(cwd=repo), payload)


def test_statements_citing_different_turns_keep_the_lesson_in_one_entry(repo: Path) -> None:
    from recall_world import WINDOW

    task = op(repo, "memory.recall", dict(WINDOW))["sources"][0]
    first, second = (t["evidenceId"] for t in task["chunk"]["turnEvidence"][:2])
    batch = draft_batch(task, LESSON)
    batch["candidates"][0]["statements"] = [
        {"statementId": "failed", "text": FAILED, "evidenceIds": [first]},
        {"statementId": "fixed", "text": FIXED, "evidenceIds": [second]},
    ]
    staged = op(repo, "memory.stage", batch)
    op(repo, "memory.stage", store_all(staged["adjudicationTask"]))
    review = op(repo, "memory.review", {"kind": "entry"})
    [item] = review["items"]
    [file] = item["files"]
    prepared = op(repo, "memory.prepare", prepare_request_from_review(review["items"]))
    op(repo, "memory.promote", {"planId": prepared["planId"], "planDigest": prepared["planDigest"]})
    written = (repo / file["targetPath"]).read_text(encoding="utf-8")
    body = written.split("---\n", 2)[2]
    assert body.startswith(LESSON + "\n")
    assert f"- {FAILED} (evidence: turn of " in body
    assert f"- {FIXED} (evidence: turn of " in body
    entries = list((repo / ".threadshare" / "memory" / "entries").glob("*.md"))
    assert [e.name for e in entries] == [Path(file["targetPath"]).name]


def test_the_agent_reads_the_rule_where_it_stages() -> None:
    from teamlore.memory.extraction.prompts.extraction import EXTRACTION_PROMPT
    from teamlore.ops.registry import load_operations

    stage = load_operations().get("memory.stage")
    for text in (stage.description, " ".join(EXTRACTION_PROMPT.split())):
        assert "one entry" in text and "cite different turns" in text
