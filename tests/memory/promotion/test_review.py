"""memory review: statements, resolved evidence, typed facts, exact previews, approvalDigest.

The world here (`Flow`) is reused by the prepare, discard and typed-fact tests: a real git
repository with a public origin, a real Codex session about it (a failing test run, a fix, the
same run passing, a commit whose full hash the session printed), the real indexer, recall and
stage — candidates come out of the same pipeline a user drives.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from recall_world import BASE, WINDOW, CodexSession, commit, git, make_repo, sync

from teamlore.contracts import digests
from teamlore.contracts.adjudication import ADJUDICATION_RESULT_FORMAT
from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.memory.promotion.review import EXCERPT_CHARS, whole_turn_excerpt
from teamlore.memory.store.state_db import open_state_db
from teamlore.ops.registry import OpContext, load_operations

ORIGIN = "https://github.com/acme/shop.git"
PROJECT = "github.com/acme/shop"
DRAFT_FORMAT = "threadshare-memory-candidate-draft-batch@v1"
PREPARE_FORMAT = "threadshare-memory-prepare-request@v1"


def write_approved_entry(repo: Path, entry_id: str, body: str) -> Path:
    """An approved entry written by hand into `repo`'s memory tree (a teammate's, say)."""
    path = repo / ".threadshare/memory/entries" / f"{entry_id}.md"
    path.write_text(
        f"---\nid: {entry_id}\ntype: work_method\nstatus: approved\npriority: 50\n"
        "confidence: high\nprovenance_strength: direct\nclaim_support: human-confirmed\n"
        'limitations: ["source-local-only"]\nscope: repo\nscene: null\n'
        'occurred: ["2026-02-01"]\nevidence: {"commits":[],"paths":[]}\nsuperseded_by: null\n'
        f"---\n{body}\n"
    )
    return path


class Flow:
    """recall → stage → adjudicate → review → prepare through the real operations."""

    def __init__(self, tmp_path: Path, home: Path) -> None:
        self.home = home
        self.repo = make_repo(tmp_path / "shop")
        git(self.repo, "remote", "add", "origin", ORIGIN)
        self.fixed = commit(
            self.repo, "src/release.py", "VERSION = 2\n", BASE + timedelta(seconds=20), "fix"
        )
        self.codex = tmp_path / "codex"
        self.session = CodexSession("a1", self.repo)
        s = self.session
        s.user("The release script fails on tag push; fix it")
        s.shell("pytest -q tests/test_release.py", "1 failed: test_tag_push", exit_code=1)
        s.answer("The tag check is wrong.")
        s.user("go ahead")
        s.patch("src/release.py", "VERSION = 2")
        s.shell("pytest -q tests/test_release.py", "1 passed")
        s.answer("Tests pass now.")
        s.user("commit it")
        s.shell("git commit -am fix && git rev-parse HEAD", f"[main {self.fixed[:7]}] fix\n")
        s.answer(f"Committed {self.fixed}.")
        s.turn("thanks", "You're welcome.")
        s.write(self.codex)
        sync(home, self.codex, self.repo)
        self.op("memory.init", {})
        self._task: dict[str, Any] | None = None
        self.recalled: dict[str, Any] = {}

    def op(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        return load_operations().get(name).run(OpContext(cwd=self.repo, home=self.home), payload)

    def refused(self, name: str, payload: dict[str, Any]) -> errors.TeamloreError:
        with pytest.raises(errors.TeamloreError) as caught:
            self.op(name, payload)
        return caught.value

    @property
    def task(self) -> dict[str, Any]:
        if self._task is None:
            self.recalled = self.op("memory.recall", WINDOW)
            self._task = self.recalled["sources"][0]
        return self._task

    def turn_ev(self, index: int) -> str:
        for item in self.task["chunk"]["turnEvidence"]:
            if item["turnIndex"] == index:
                return str(item["evidenceId"])
        raise KeyError(index)

    def commit_ev(self) -> str:
        return next(e["evidenceId"] for e in self.task["evidenceCatalog"] if e["kind"] == "commit")

    def typed_facts(self) -> list[dict[str, Any]]:
        _ = self.task
        offers = {o["taskId"]: o["facts"] for o in self.recalled["typedFacts"]}
        return list(offers.get(self.task["taskId"], []))

    def stage(self, candidates: list[dict[str, Any]]) -> dict[str, Any]:
        batch = {
            "format": DRAFT_FORMAT,
            "taskId": self.task["taskId"],
            "binding": self.task["binding"],
            "candidates": candidates,
        }
        return self.op("memory.stage", batch)

    def adjudicate(self, staged: dict[str, Any], decisions: list[dict[str, Any]]) -> dict[str, Any]:
        task = staged["adjudicationTask"]
        return self.op(
            "memory.stage",
            {
                "format": ADJUDICATION_RESULT_FORMAT,
                "taskId": task["taskId"],
                "binding": task["binding"],
                "adjudications": decisions,
            },
        )

    def quarantine(self, candidates: list[dict[str, Any]]) -> list[str]:
        staged = self.stage(candidates)
        ids = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
        self.adjudicate(staged, [store(i) for i in ids])
        return ids

    def review(self) -> dict[str, Any]:
        """The whole queue: every test here holds fewer candidates than one page of 50."""
        return self.op("memory.review", {"limit": 50})

    def item(self, candidate_id: str) -> dict[str, Any]:
        return next(i for i in self.review()["items"] if i["candidateId"] == candidate_id)

    def state(self) -> sqlite3.Connection:
        return open_state_db(self.home)


def store(candidate_id: str) -> dict[str, Any]:
    return {"draftRef": candidate_id, "action": "store", "targetIds": [], "mergedFields": None}


def candidate(
    content: str, statements: list[tuple[str, list[str]]], *, scene: str | None = "release"
) -> dict[str, Any]:
    return {
        "content": content,
        "type": "work_method",
        "priority": 70,
        "confidence": "high",
        "scene": scene,
        "statements": [
            {"statementId": f"s{n}", "text": text, "evidenceIds": ids}
            for n, (text, ids) in enumerate(statements, start=1)
        ],
    }


def request_for(*items: dict[str, Any], only: list[str] | None = None) -> dict[str, Any]:
    """The PrepareRequest@v1 a person's confirmation of these review items produces."""
    return {
        "format": PREPARE_FORMAT,
        "candidates": [
            {
                "candidateId": item["candidateId"],
                "expectedRevision": item["revision"],
                "statements": [
                    {
                        "statementId": s["statementId"],
                        "statementTextDigest": s["statementTextDigest"],
                        "citationsDigest": s["citationsDigest"],
                    }
                    for s in item["statements"]
                    if only is None or s["statementId"] in only
                ],
            }
            for item in items
        ],
    }


def dump(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not r[0].startswith(("candidate_fts_", "approved_fts_", "sqlite_"))
    ]
    return {t: sorted(map(tuple, conn.execute(f"SELECT * FROM {t}")), key=repr) for t in tables}


TEXT = "Release tags need a v prefix; run the release tests before pushing a tag."


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def test_review_shows_statements_evidence_and_the_exact_file(flow: Flow) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1), flow.turn_ev(3)])])])
    result = flow.review()
    assert result["format"] == "threadshare-memory-review@v1" and result["count"] == 1
    assert result["owner"]["project"] == PROJECT
    item = result["items"][0]
    assert (item["candidateId"], item["revision"], item["adjudication"]) == (cid, 2, "done")
    (statement,) = item["statements"]
    assert statement["statementTextDigest"] == digests.statement_text_digest(TEXT)
    assert statement["claimSupport"] == "unverified" and statement["typedFact"] is None
    assert statement["confirmation"] == "required" and item["needsConfirmation"] == ["s1"]
    assert statement["provenanceStrength"] == "observed"  # turn 3's delivery; turn 1 has none
    assert "source-local-only" in statement["limitations"]
    shown = {e["evidenceId"]: e for e in statement["evidence"]}
    first = shown[flow.turn_ev(1)]
    # the passage of turn 1 that best supports the statement: the failing release test run
    key = first["passage"]["sessionKey"][:12]
    assert first["kind"] == "turn"
    assert first["display"] == f"session {key} · turn 1 · tool #1 @ 2026-03-02"
    assert "pytest -q tests/test_release.py" in first["excerpt"]
    assert "1 failed: test_tag_push" in first["excerpt"]
    # the commit turn's direct delivery edge becomes public evidence, with the turn dates
    assert item["publicEvidence"] == {
        "repository": PROJECT,
        "commits": [flow.fixed],
        "paths": [],
        "occurred": ["2026-03-02"],
    }
    (file,) = item["files"]
    assert file["targetPath"].startswith(".threadshare/memory/entries/release-tags-need")
    assert file["targetBlobHash"] is None and file["diff"].startswith("--- /dev/null")
    preview = file["preview"]
    assert f'"hash":"{flow.fixed}"' in preview and f'"repo":"{PROJECT}"' in preview
    assert 'occurred: ["2026-03-02"]' in preview and "claim_support: human-confirmed" in preview
    assert file["sanitizedContentDigest"] == digests.sanitized_content_digest(preview.encode())
    assert item["approveAll"]["offered"] is False and item["prepareRequest"] is None
    assert item["approvalDigest"] == digest(
        {k: v for k, v in item.items() if k != "approvalDigest"}
    )


def test_review_is_read_only_and_deterministic(flow: Flow) -> None:
    flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    conn = flow.state()
    before = dump(conn)
    first, second = flow.review(), flow.review()
    assert first == second
    assert dump(conn) == before
    conn.close()


def test_the_approval_digest_moves_with_the_working_tree(flow: Flow) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    before = flow.item(cid)
    taken = flow.repo / before["files"][0]["targetPath"]
    taken.write_bytes(b"someone else's entry\n")
    after = flow.item(cid)
    assert after["files"][0]["targetPath"] != before["files"][0]["targetPath"]  # never replaced
    assert after["approvalDigest"] != before["approvalDigest"]


def test_statements_on_different_evidence_preview_one_entry_keeping_the_content(
    flow: Flow,
) -> None:
    one, two = "Tags need a v prefix.", "The release tests catch a wrong tag prefix."
    lesson = "Tag releases with a v prefix; the release tests check it."
    (cid,) = flow.quarantine(
        [candidate(lesson, [(one, [flow.turn_ev(1)]), (two, [flow.commit_ev()])])]
    )
    item = flow.item(cid)
    [file] = item["files"]
    # the weakest statement: the one on a turn alone, which links no delivery
    assert item["provenanceStrength"] == "unknown"
    preview = file["preview"]
    assert "provenance_strength: unknown" in preview and "source-local-only" in preview
    body = preview.split("---\n", 2)[2]
    assert body.startswith(lesson + "\n\nStatements:\n")
    assert f"- {one} (evidence: turn of 2026-03-02" in body
    assert f"- {two} (evidence: commit {flow.fixed}" in body


def test_drafts_whose_adjudication_failed_are_listed_for_discard(flow: Flow) -> None:
    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (cid,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    for target in ("nope-1", "nope-2"):
        with pytest.raises(errors.TeamloreError):
            flow.adjudicate(
                staged,
                [{"draftRef": cid, "action": "skip", "targetIds": [target], "mergedFields": None}],
            )
    result = flow.review()
    assert result["items"] == []
    assert [f["candidateId"] for f in result["failed"]] == [cid]
    # runnable as printed without a terminal, where `memory discard` needs its --reason
    assert result["failed"][0]["next"] == (
        f"teamlore memory discard --candidate {cid} --reason 'not adjudicated'"
    )


def test_candidates_whose_ids_would_collide_are_shown_the_files_a_prepare_of_all_writes(
    flow: Flow,
) -> None:
    """Two candidates with the same first words were each shown `deploy-needs-….md` (each
    previewed alone), and prepared together one was written under another name."""
    first, second = "Deploy needs DEPLOY_ENV set.", "Deploy needs DEPLOY_ENV set!"
    ids = flow.quarantine(
        [
            candidate(first, [(first, [flow.turn_ev(1)])]),
            candidate(second, [(second, [flow.turn_ev(3)])]),
        ]
    )
    items = flow.review()["items"]
    shown = [file["targetPath"] for item in items for file in item["files"]]
    assert len(set(shown)) == 2 and sorted(i["candidateId"] for i in items) == sorted(ids)
    prepared = flow.op("memory.prepare", request_for(*items))
    assert [file["targetPath"] for file in prepared["files"]] == shown


def test_evidence_gone_from_the_index_is_shown_gone_and_claims_no_provenance(
    flow: Flow,
) -> None:
    """After a transcript was deleted and the index rebuilt, the entry still said
    `provenance_strength: direct` over empty evidence and dates: it claimed a link nobody
    could follow. The statement keeps its stored assessment (a person may still confirm it)."""
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    assert flow.item(cid)["provenanceStrength"] == "unknown"  # a turn: no delivery link
    for transcript in flow.codex.rglob("*.jsonl"):
        transcript.unlink()
    for index in flow.home.glob("index.sqlite3*"):
        index.unlink()
    sync(flow.home, flow.codex, flow.repo)

    item = flow.item(cid)
    (statement,) = item["statements"]
    (evidence,) = statement["evidence"]
    assert evidence["display"] == "unresolved evidence (no longer in the local index)"
    assert statement["provenanceStrength"] == "unknown"
    assert item["provenanceStrength"] == "unknown"
    assert item["publicEvidence"]["occurred"] == []
    (written,) = item["files"]
    assert "\nprovenance_strength: unknown\n" in written["preview"]
    assert "\noccurred: []\n" in written["preview"]
    assert statement["assessmentConsistent"] and statement["confirmation"] == "required"
    plan = flow.op("memory.prepare", request_for(item))
    (planned,) = plan["files"]
    assert "\nprovenance_strength: unknown\n" in planned["preview"]


def test_a_turns_excerpt_without_a_supporting_passage_is_cut_after_a_separator() -> None:
    """With no passage to show, review showed the turn's words cut at 279 characters, inside
    a long path (`…/src/compo…`). It is cut where every excerpt is: at a word, and in a path
    with no space near, after its last separator."""
    folders = "/".join(f"components{i:02d}" for i in range(30))
    turn = SimpleNamespace(user_text="where is it?", assistant_text=f"it is in src/{folders}/")
    shown = whole_turn_excerpt(turn)
    assert shown.endswith("/…") and len(shown) <= EXCERPT_CHARS
    assert f"where is it? — it is in src/{folders}".startswith(shown.removesuffix("…"))
