"""The queue and the plan say what the CLI says, in the real headless Chromium over the real
server, state DB and git repository:

- a queue row of a candidate that merges approved entries says so (`merges 2 entries`), as
  the head of the candidate does in `memory review`;
- a candidate the lint blocks is listed apart on the Plan with the rules and the command that
  discards it (the words `memory confirm` leaves it out with), and the others are prepared;
- a candidate whose approved target changed since adjudication is listed as `memory confirm`
  names it (`TARGET_DRIFT` and why), never as blocked by lint;
- a plan prepared on the page whose candidate a later merge consumed is shown voided with
  why, as `memory status` lists it, with no Promote button;
- a blocked candidate's page offers no Confirm (it says why and what to do), and a decision
  posted for it anyway is refused with the code `memory confirm` refuses it with;
- a blocked candidate's page lists with its findings what it holds that does not block (a
  home path it shows as {local-path}), as `memory review` does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.promotion.merge_world import merging_repository
from teamlore.ui.server import UiServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
from consumed_world import merge_into_a_later_candidate, quarantined_release_candidate
from test_review import TEXT, Flow, candidate

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from ui_world import launched_chromium

    with launched_chromium() as launched:
        yield launched


def served(repo: Path, home: Path) -> UiServer:
    return UiServer(repo, home=home).start()


def confirm_every_statement(page: Any, running: UiServer, candidate_id: str) -> None:
    """What a person's clicks on Confirm do, statement after statement."""
    page.goto(f"{running.base_url}/candidate/{candidate_id}")
    while page.locator("button.confirm:not([disabled])").count():
        page.locator("button.confirm:not([disabled])").first.click()
        page.wait_for_load_state()


def test_a_queue_row_says_the_candidate_merges_approved_entries(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    """The queue showed a merge of two teammates' entries like a new entry, until opened."""
    repo, candidate_id = merging_repository(tmp_path, home)
    running = served(repo, home)
    try:
        page = browser.new_page()
        page.goto(running.login_url("/queue"))
        row = page.locator(
            "table.queue tbody tr", has=page.locator(f"a[href='/candidate/{candidate_id}']")
        )
        assert row.locator(".badge.changes").inner_text() == "merges 2 entries"
        page.close()
    finally:
        running.stop()


def test_the_plan_lists_a_blocked_candidate_with_why_and_prepares_the_others(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    flow = Flow(tmp_path, home)
    leaky = f"Push release tags with the token {SECRET}."
    keep, blocked = flow.quarantine(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(leaky, [(leaky, [flow.turn_ev(1)])]),
        ]
    )
    running = served(flow.repo, home)
    try:
        page = browser.new_page()
        page.goto(running.login_url("/queue"))
        confirm_every_statement(page, running, keep)
        page.goto(running.base_url + "/plan")
        out = page.locator("section.plan-out", has_text="blocked by lint").inner_text()
        short = f"{blocked[:20]}-c2"
        assert (
            f"blocked by lint (secret.github-token) — discard it on its page, or "
            f"teamlore memory discard --candidate {short}"
        ) in out
        assert SECRET not in page.content()
        page.locator("#prepare").click()
        page.wait_for_load_state()
        assert page.locator("h1").inner_text().startswith("Promotion plan")
        assert page.locator("#promote").count() == 1
        page.close()
    finally:
        running.stop()


def test_a_candidate_whose_target_changed_is_named_by_its_drift_not_as_lint(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    """The page filed it under "blocked by lint" with a `TARGET_DRIFT` rule, while `memory
    confirm` refuses it with TARGET_DRIFT and why."""
    from test_review import store

    flow = Flow(tmp_path, home)
    target = flow.repo / ".threadshare/memory/entries/release-tag-prefix.md"
    target.write_text(
        "---\nid: release-tag-prefix\ntype: work_method\nstatus: approved\npriority: 50\n"
        "confidence: high\nprovenance_strength: direct\nclaim_support: human-confirmed\n"
        'limitations: ["source-local-only"]\nscope: repo\nscene: null\n'
        'occurred: ["2026-02-01"]\nevidence: {"commits":[],"paths":[]}\nsuperseded_by: null\n'
        "---\nRelease tags need a v prefix.\n"
    )
    leaky = f"Push release tags with the token {SECRET}."
    staged = flow.stage(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(leaky, [(leaky, [flow.turn_ev(1)])]),
        ]
    )
    updater, blocked = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    update = {
        "draftRef": updater,
        "action": "update",
        "targetIds": ["release-tag-prefix"],
        "mergedFields": {"content": TEXT},
    }
    flow.adjudicate(staged, [update, store(blocked)])
    target.write_text(target.read_text() + "edited by a teammate\n")
    drift = "TARGET_DRIFT: entry release-tag-prefix was edited since the candidate was adjudicated"
    running = served(flow.repo, home)
    try:
        page = browser.new_page()
        page.goto(running.login_url("/queue"))
        row = page.locator("table.queue tbody tr", has=page.locator(f"a[href$='{updater}']"))
        assert row.locator(".state").inner_text() == "blocked"
        assert row.locator(".why-blocked").inner_text() == drift
        leaky_row = page.locator("table.queue tbody tr", has=page.locator(f"a[href$='{blocked}']"))
        assert leaky_row.locator(".why-blocked").inner_text() == (
            "blocked by lint (secret.github-token)"
        )

        page.goto(running.base_url + "/plan")
        out = page.locator("section.plan-out").inner_text()
        assert out.startswith("Not in this plan: blocked 2")
        listed = page.locator(f"li:has(a[href$='{updater}'])").inner_text()
        assert (
            f"{drift} — discard it on its page, or teamlore memory discard --candidate "
            f"{updater[:20]}-c1"
        ) in listed
        assert "lint" not in listed

        page.goto(f"{running.base_url}/candidate/{updater}")
        assert page.locator("div.blocked .why-blocked").inner_text() == drift
        page.close()
    finally:
        running.stop()


def test_a_plan_whose_candidate_a_later_merge_consumed_is_shown_voided_with_why(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    """The page listed it `generated, not promoted` and offered Promote, which then refused
    with PROMOTION_CANDIDATE_DRIFT."""
    flow, consumed = quarantined_release_candidate(tmp_path, home)
    running = served(flow.repo, home)
    try:
        page = browser.new_page()
        page.goto(running.login_url("/queue"))
        confirm_every_statement(page, running, consumed)
        page.goto(running.base_url + "/plan")
        page.locator("#prepare").click()
        page.wait_for_load_state()
        plan_id = page.url.rsplit("/", 1)[1]
        merger = merge_into_a_later_candidate(flow, consumed)  # from a terminal, meanwhile

        page.goto(running.base_url + "/plan")
        listed = page.locator(f"li:has(a[href='/plan/{plan_id}'])").inner_text()
        assert "generated, not promoted" not in listed
        assert (
            f"voided (PROMOTION_CANDIDATE_DRIFT): candidate {consumed[:20]}-c1 was quarantined "
            f"at revision 2 when the plan was made and is now discarded at revision 3: "
            f"{merger[:20]}-c1 merged it when it was staged"
        ) in listed
        page.goto(running.base_url + f"/plan/{plan_id}")
        assert page.locator("#promote").count() == 0
        assert "This plan was voided" in page.locator("section.plan-gone").inner_text()
        page.close()
    finally:
        running.stop()


def test_a_blocked_candidate_offers_no_confirm_and_says_why(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    """Its page offered Confirm and Reject like any other, and took the decisions: a person
    confirmed a candidate that cannot be promoted (`memory confirm` refuses it: LINT_BLOCKED)."""
    flow = Flow(tmp_path, home)
    leaky = f"Push release tags with the token {SECRET}."
    (blocked,) = flow.quarantine([candidate(leaky, [(leaky, [flow.turn_ev(1)])])])
    (item,) = flow.review()["items"]
    running = served(flow.repo, home)
    try:
        page = browser.new_page()
        page.goto(running.login_url(f"/candidate/{blocked}"))
        assert page.locator("button[data-verdict]").count() == 0
        said = " ".join(page.locator("p.not-offered").inner_text().split())
        assert said.startswith(
            "Confirm is not offered: this candidate is blocked (blocked by lint "
            "(secret.github-token)), and a blocked candidate cannot be promoted"
        ), said
        assert page.locator("p.not-offered a[href='#discard']").inner_text() == "discard it"
        page.keyboard.press("c")  # the key of Confirm: nothing to press
        page.wait_for_load_state()
        assert page.locator("article#s-s1 .decision").text_content() == "undecided"

        # a decision posted anyway (a page shown before the lint rule, a crafted request)
        (statement,) = item["statements"]
        token = page.locator("meta[name=csrf-token]").get_attribute("content")
        answer = page.request.post(
            f"{running.base_url}/candidate/{blocked}/decide",
            form={
                "csrf": token,
                "statement": "s1",
                "verdict": "confirm",
                "revision": str(item["revision"]),
                "statementTextDigest": statement["statementTextDigest"],
                "citationsDigest": statement["citationsDigest"],
            },
        )
        assert answer.status == 409
        assert '<code class="code">LINT_BLOCKED</code>' in answer.text()
        assert f"{blocked[:20]}-c1: blocked by lint (secret.github-token)" in answer.text()
        page.reload()
        assert page.locator("article#s-s1 .decision").text_content() == "undecided"
        assert SECRET not in page.content() and SECRET not in answer.text()
        page.close()
    finally:
        running.stop()


def test_a_blocked_candidate_lists_the_home_path_it_shows_masked(
    browser: Any, tmp_path: Path, home: Path
) -> None:
    """Its statement showed `{local-path}` where it holds a home path, and the Blocked box
    listed the token alone: the path (which promotion would write as {local-path}, so it does
    not block) was in no finding."""
    flow = Flow(tmp_path, home)
    leaky = f"Push release tags with the token {SECRET} from /home/mei/secret/x first."
    (blocked,) = flow.quarantine([candidate(leaky, [(leaky, [flow.turn_ev(1)])])])
    running = served(flow.repo, home)
    try:
        page = browser.new_page()
        page.goto(running.login_url(f"/candidate/{blocked}"))
        assert page.locator("p.claim").inner_text() == (
            "Push release tags with the token ghp_…[40 chars] from {local-path} first."
        )
        box = page.locator("div.blocked")
        assert box.locator(".why-blocked").inner_text() == "blocked by lint (secret.github-token)"
        listed = [" ".join(t.split()) for t in box.locator("li").all_inner_texts()]
        assert listed == [
            "secret.github-token GitHub token: `ghp_…[40 chars]`",
            "path.home-absolute absolute home path (use a repo-relative path): `/h…[9 chars]`; "
            "does not block: promotion writes it as {local-path} (only a path inside this "
            "repository is kept, made relative)",
        ]
        assert box.locator("ul.not-blocking li").count() == 1
        assert SECRET not in page.content() and "/home/mei" not in page.content()
        page.close()
    finally:
        running.stop()
