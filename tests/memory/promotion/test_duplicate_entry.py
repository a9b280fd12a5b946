"""A teammate's entry that says the same, arriving after adjudication, blocks a new candidate.

ana promotes the lesson bo's quarantined candidate holds; bo pulls it (real git repositories,
the git binary). Adjudication never compared bo's candidate with ana's entry, so review shows
it blocked (`DUPLICATE_ENTRY`, naming ana's entry) and prepare refuses it, instead of writing a
second file with a hash-suffixed name and the same body.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from recall_world import git
from test_discard_extract_again import pull, teammate_clone
from test_review import TEXT, Flow, candidate, request_for

from support import teamlore_cli
from teamlore.core import errors
from teamlore.ops.memory.review import left_out_of_a_plan


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def _promoted_by(teammate: Path, rel: str, content: str) -> None:
    (teammate / rel).write_text(content)
    git(teammate, "add", rel)
    git(teammate, "commit", "-q", "-m", "promote team memory")


def test_an_identical_entry_pulled_after_adjudication_blocks_the_candidate(flow: Flow) -> None:
    ana = teammate_clone(flow, "ana")
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (file,) = flow.item(cid)["files"]
    first_plan = flow.op("memory.prepare", request_for(flow.item(cid)))
    # ana promoted the same lesson: the same file name, the same bytes
    _promoted_by(ana, file["targetPath"], file["preview"])
    pull(flow, "ana")
    assert flow.refused("memory.promote", {"planId": first_plan["planId"]}).code.startswith(
        "PROMOTION_"
    )

    item = flow.item(cid)
    assert item["blocked"] and item["files"] == []
    (finding,) = item["lintFindings"]
    assert finding["rule"] == errors.DUPLICATE_ENTRY.code
    assert finding["message"].startswith(
        f"approved entry {file['entryId']} says the same and was not adjudicated against;"
    )
    assert left_out_of_a_plan(item) == {
        "candidateId": cid,
        "code": "DUPLICATE_ENTRY",
        "why": f"approved entry {file['entryId']} says the same and was not adjudicated against",
        "next": f"teamlore memory discard --candidate {cid[:20]}-c1"
        " --reason 'it cannot be promoted as it is'",
    }
    refused = flow.refused("memory.prepare", request_for(item))
    assert refused.code == errors.DUPLICATE_ENTRY.code
    assert sorted(p.name for p in (flow.repo / ".threadshare/memory/entries").glob("*.md")) == [
        Path(file["targetPath"]).name
    ]


def test_a_near_duplicate_under_another_name_blocks_it_too(flow: Flow) -> None:
    ana = teammate_clone(flow, "ana")
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (file,) = flow.item(cid)["files"]
    reworded = "Release tags need a v prefix: always run the release tests before pushing a tag!"
    rel = ".threadshare/memory/entries/tag-rules.md"
    _promoted_by(ana, rel, file["preview"].replace(f"id: {file['entryId']}", "id: tag-rules"))
    _promoted_by(ana, rel, (ana / rel).read_text().replace(TEXT, reworded))
    pull(flow, "ana")

    (finding,) = flow.item(cid)["lintFindings"]
    assert finding["rule"] == "DUPLICATE_ENTRY"
    assert finding["message"].startswith("approved entry tag-rules says nearly the same")

    done = teamlore_cli(
        "memory", "review", cwd=flow.repo, env={"TEAMLORE_HOME": str(flow.home), "COLUMNS": "80"}
    )
    assert done.returncode == 0, done.stderr
    assert "approved entry tag-rules says nearly the same" in " ".join(done.stdout.split())
    assert all(len(line) <= 80 for line in done.stdout.splitlines())


def test_an_entry_saying_something_else_does_not(flow: Flow) -> None:
    ana = teammate_clone(flow, "ana")
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (file,) = flow.item(cid)["files"]
    other = "Sort invoice rows by id before exporting; unordered exports made tests flaky."
    rel = ".threadshare/memory/entries/export-order.md"
    renamed = file["preview"].replace(f"id: {file['entryId']}", "id: export-order")
    _promoted_by(ana, rel, renamed.replace(TEXT, other))
    pull(flow, "ana")
    assert not flow.item(cid)["blocked"]
