"""Discard and extract again on the review page, in the real headless Chromium over the real
server, state DB and git repository: the page offers what `memory discard --extract-again`
(CLI) and `extractAgain` (MCP) do, through the same `memory.discard` operation, and shows its
refusals with their codes; the claim support a candidate's badge shows is what the entry will
carry once its statements are confirmed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import teamlore_cli
from teamlore.ui.server import UiServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
from recall_world import WINDOW
from test_review import TEXT, Flow, candidate, store, write_approved_entry

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
ENTRY = "release-tag-prefix"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from ui_world import launched_chromium

    with launched_chromium() as launched:
        yield launched


def an_update_whose_target_changed(flow: Flow) -> str:
    """A candidate that updates an approved entry a teammate edited since (TARGET_DRIFT)."""
    target = write_approved_entry(flow.repo, ENTRY, "Release tags need a v prefix.")
    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (updater,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    update = {"draftRef": updater, "action": "update", "targetIds": [ENTRY]}
    flow.adjudicate(staged, [{**update, "mergedFields": {"content": TEXT}}])
    target.write_text(target.read_text() + "edited by a teammate\n")
    return updater


def test_a_blocked_candidate_is_discarded_and_its_turns_put_back_from_its_page(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    """The page named `teamlore memory discard --extract-again` and had no button for it."""
    flow = Flow(tmp_path, home)
    updater = an_update_whose_target_changed(flow)
    assert flow.op("memory.recall", WINDOW)["coverage"]["alreadyExtractedTurns"] == 4
    running = UiServer(flow.repo, home=home).start()
    try:
        page = browser.new_page()
        page.goto(running.login_url(f"/candidate/{updater}"))
        blocked = page.locator("div.blocked").inner_text()
        assert "Discard it and extract it again: Discard and extract again below, or " in blocked
        assert (
            f"teamlore memory discard --candidate {updater[:20]}-c1"
            " --reason 'it cannot be promoted as it is' --extract-again"
        ) in blocked
        # no reason needed: the lesson is right, what it updates moved
        page.locator("button.extract-again").click()
        page.wait_for_load_state()

        assert page.url.endswith("/queue")
        said = page.locator("p.flash.ok").all_inner_texts()
        assert said[0] == f"Discarded {updater[:20]}-c1 (was quarantined)."
        assert said[1].startswith("Turns 1-4 of session ")
        assert said[1].endswith(
            "go back to be extracted: the next `teamlore memory recall` offers them again."
        )
        assert page.locator(f"a[href='/candidate/{updater}']").count() == 0
        page.close()
    finally:
        running.stop()
    assert flow.review()["items"] == []
    again = flow.op("memory.recall", WINDOW)
    assert again["coverage"]["alreadyExtractedTurns"] == 0 and len(again["sources"]) == 1


def test_the_page_shows_the_refusals_of_extract_again_and_keeps_its_csrf_rule(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    """A candidate in a plan whose promote stopped after its approval is locked: the button is
    refused with CANDIDATE_LOCKED, its message and what to do, as the CLI and MCP refuse it.
    Without the page's CSRF token nothing runs. And the support badge says what the entry
    carries once its statement is confirmed, until the person confirms it."""
    flow = Flow(tmp_path, home)
    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (cid,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    flow.adjudicate(staged, [store(cid)])
    running = UiServer(flow.repo, home=home).start()
    try:
        page = browser.new_page()
        page.goto(running.login_url("/queue"))
        row = page.locator("table.queue tbody tr", has=page.locator(f"a[href$='{cid}']"))
        waiting = "human-confirmed once 1 statement is confirmed"
        assert row.locator(".badge.support-human-confirmed").inner_text() == waiting
        page.goto(f"{running.base_url}/candidate/{cid}")
        badge = page.locator("section.summary .badge.support-human-confirmed")
        assert badge.inner_text() == waiting
        page.locator("button.confirm").click()
        page.wait_for_load_state()
        assert badge.inner_text() == "human-confirmed"

        page.goto(running.base_url + "/plan")
        page.locator("#prepare").click()
        page.wait_for_load_state()
        plan_id = page.url.rsplit("/", 1)[1]
        killed = teamlore_cli(
            "memory",
            "promote",
            "--plan",
            plan_id,
            cwd=flow.repo,
            env={"TEAMLORE_HOME": str(home), "TEAMLORE_FAILPOINT": "promotion.after-approve"},
        )
        assert killed.returncode != 0

        page.goto(f"{running.base_url}/candidate/{cid}")
        page.locator("button.extract-again").click()
        page.wait_for_load_state()
        refusal = page.locator("section.refusal")
        assert refusal.locator("code.code").inner_text() == "CANDIDATE_LOCKED"
        assert plan_id in refusal.locator("p.message").inner_text()
        assert "teamlore memory promote --plan ID" in refusal.locator("p.advice").inner_text()

        forged = page.request.post(
            f"{running.base_url}/candidate/{cid}/discard",
            form={"extractAgain": "1", "reason": "forged"},
        )
        assert forged.status == 403
        assert forged.headers["x-teamlore-error"] == "UI_CSRF_INVALID"
        page.close()
    finally:
        running.stop()
    assert flow.item(cid)["status"] == "quarantined"
    assert flow.op("memory.recall", WINDOW)["coverage"]["alreadyExtractedTurns"] == 4
