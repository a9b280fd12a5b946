"""What the state holds, the page shows (reviewer walk, in a real headless Chromium):

1. a statement confirmed when a plan was prepared (`memory confirm` answered y in a terminal)
   showed CONFIRMED with an Undo button that did nothing but flash "Every statement is decided:
   ready for the plan."; no operation takes a stored confirmation back, so the page offers no
   Undo there, says how to take it back (discard the candidate), and an Undo posted by a page
   shown earlier says nothing was undone;
2. a plan prepared in a terminal (or on the page before it restarted) was invisible on the Plan
   page, and preparing a new one voided it silently: the page lists every plan waiting to be
   promoted with the files promoting it writes, promotes it, warns before preparing a plan that
   voids it and says which plan it voided;
3. the right column was an inner scroll box (sticky, max-height) whose end — the Discard form,
   the end of a long diff — was hidden at 1280×720 with no scrollbar shown: nothing the person
   acts on is clipped by a box any more, at 1280×720, 1280×900 and 390 px wide.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from ui_world import ARTIFACTS, World, build_world, launched_chromium

from teamlore.ops.registry import OpContext, load_operations, run_operation
from teamlore.ui.server import UiServer

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")


@pytest.fixture()
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("ui-stored"))


@pytest.fixture()
def browser() -> Iterator[Any]:
    with launched_chromium() as launched:
        yield launched


def open_page(
    browser: Any, server: UiServer, path: str, width: int = 1280, height: int = 800
) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height})
    opened = context.new_page()
    opened.goto(server.login_url(path))
    return opened


def confirm_in_a_terminal(world: World) -> str:
    """What `teamlore memory confirm --kind skill` runs when the person answers y."""
    ctx = OpContext(cwd=world.repo, home=world.home, confirm=lambda item: True)
    result = load_operations().get("memory.confirm").run(ctx, {"kind": "skill"})
    assert result["planId"]
    return str(result["planId"])


def plans_to_promote(world: World) -> list[str]:
    return list(run_operation("memory.status", world.ctx(), {})["plansToPromote"])


def skill_candidate(world: World) -> str:
    items = run_operation("memory.review", world.ctx(), {"kind": "skill"})["items"]
    assert len(items) == 1
    return str(items[0]["candidateId"])


def test_undo_is_not_offered_for_a_confirmation_a_plan_stored(world: World, browser: Any) -> None:
    plan_id = confirm_in_a_terminal(world)
    candidate = skill_candidate(world)
    server = world.server()  # `teamlore ui` started after the terminal's confirmation
    try:
        page = open_page(browser, server, f"/candidate/{candidate}")
        expect = playwright_api.expect
        s1 = page.locator("article#s-s1")
        expect(s1.locator(".decision")).to_have_text(re.compile("confirmed", re.I))
        assert s1.locator("button.undo").count() == 0, "no Undo that would do nothing"
        note = s1.locator(".stored-confirmation")
        expect(note).to_be_visible()
        expect(note).to_contain_text("cannot be undone here")
        expect(note).to_contain_text("discard the candidate")

        # the `u` key with the statement selected: nothing to press, nothing claimed
        s1.click()
        page.keyboard.press("u")
        page.wait_for_load_state()
        expect(page.locator(".flash")).to_have_count(0)

        # an Undo posted by a page shown before (it still had the button): refused, truthfully
        page.evaluate(
            """() => { const b = document.createElement('button');
                b.type = 'submit'; b.name = 'verdict'; b.value = 'undo'; b.id = 'old-undo';
                document.querySelector('article#s-s1 form.decide').appendChild(b); }"""
        )
        page.locator("#old-undo").click()
        expect(page.locator(".flash.error")).to_contain_text("Nothing was undone")
        expect(page.locator("body")).not_to_contain_text("Every statement is decided")
        assert plans_to_promote(world) == [plan_id]  # the page changed nothing

        # the page's own Confirm, once a plan stored it: no Undo either
        page.goto(server.base_url + "/queue")
        entry = page.locator("table.queue tr:has(.kind.entry) a").first
        entry.click()
        entry_url = page.url.split("#")[0]
        for article in page.locator("article.statement:has(form.decide)").all():
            article.get_by_role("button", name="Confirm").click()
        page.goto(server.base_url + "/plan")
        page.locator("#prepare").click()
        expect(page.locator("#promote")).to_be_visible()
        page.goto(entry_url)
        confirmed = page.locator("article.statement:has(form.decide)")
        assert confirmed.count() >= 1
        assert page.locator("article.statement button.undo").count() == 0
        expect(confirmed.first.locator(".stored-confirmation")).to_be_visible()
    finally:
        server.stop()


def test_a_plan_prepared_in_a_terminal_is_listed_promoted_and_voided_with_a_warning(
    world: World, browser: Any
) -> None:
    expect = playwright_api.expect
    terminal_plan = confirm_in_a_terminal(world)
    server = world.server()
    try:
        page = open_page(browser, server, "/plan")
        pending = page.locator("section.plan-pending")
        expect(pending).to_contain_text(terminal_plan)
        expect(pending).to_contain_text("promoting it writes 1 file(s)")
        expect(pending).to_contain_text("export-preview-escaping")
        warning = page.locator("p.voids-plan")
        expect(warning).to_contain_text(f"voids plan {terminal_plan}")

        page.locator("#prepare").click()  # the person prepares anyway: told what it voided
        expect(page.locator(".flash")).to_contain_text(f"Plan {terminal_plan} was voided")
        page_plan = page.url.rsplit("/", 1)[1]
        assert plans_to_promote(world) == [page_plan]
    finally:
        server.stop()

    restarted = world.server()  # the page's own plan, after `teamlore ui` restarted
    try:
        page = open_page(browser, restarted, "/plan")
        pending = page.locator("section.plan-pending")
        expect(pending).to_contain_text(page_plan)
        expect(pending).not_to_contain_text(terminal_plan)
        pending.locator(f'a[href="/plan/{page_plan}"]').first.click()
        page.locator("#promote").click()
        expect(page.locator(".outcome")).to_contain_text("written")
        assert plans_to_promote(world) == []
        assert (world.repo / ".threadshare/memory/skills/export-preview-escaping").exists()
    finally:
        restarted.stop()


# what the person acts on or reads to decide, in the right column
ACTED_ON = "section.right form.discard button, section.right pre.diff span:last-child"

CLIPPED = """(selector) => {
  const hidden = [];
  for (const el of document.querySelectorAll(selector)) {
    for (let box = el.parentElement; box; box = box.parentElement) {
      const y = getComputedStyle(box).overflowY;
      if (y !== 'visible' && box.scrollHeight > box.clientHeight + 1) {
        hidden.push(`${el.tagName} in ${box.tagName}.${box.className} ` +
                    `${box.scrollHeight}>${box.clientHeight}`);
        break;
      }
      if (box === document.body) break;
    }
  }
  return hidden;
}"""


@pytest.mark.parametrize("width,height", [(1280, 720), (1280, 900), (390, 800)])
def test_the_right_column_hides_nothing_in_a_box(
    world: World, browser: Any, width: int, height: int
) -> None:
    server = world.server()
    try:
        page = open_page(browser, server, "/queue", width, height)
        links = list(dict.fromkeys(re.findall(r'href="(/candidate/[^"#?]+)"', page.content())))
        assert len(links) == 3
        clipped: list[str] = []
        folder = ARTIFACTS / "ui"
        folder.mkdir(parents=True, exist_ok=True)
        for number, link in enumerate(links):
            page.goto(server.base_url + link)
            page.screenshot(path=str(folder / f"right-{width}x{height}-{number}.png"))
            clipped += [f"{link}: {c}" for c in page.evaluate(CLIPPED, ACTED_ON)]
            discard = page.locator("section.right form.discard button.danger")
            discard.scroll_into_view_if_needed()
            playwright_api.expect(discard).to_be_in_viewport()
        assert clipped == []
    finally:
        server.stop()
