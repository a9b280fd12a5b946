"""Walk U1 #6: at 400 px wide every page overflowed sideways (scrollWidth 512–633): the
header's Sessions link and `?` button went off-screen and the queue's last columns were cut
off. In a real headless Chromium 400 px wide, every page of a whole review — queue, candidates,
plan, the prepared plan, the promoted plan, memory (browse, search, a document), sessions (list,
search, a session), git show and a path's history — fits the window: the page never scrolls
sideways (a wide table scrolls inside its own box), and the header and every queue cell are on
screen."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from ui_world import ARTIFACTS, World, build_world, launched_chromium

from teamlore.ui.server import UiServer

pytestmark = pytest.mark.e2e

playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
WIDTH = 400


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("ui-narrow"))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[UiServer]:
    running = world.server()
    yield running
    running.stop()


@pytest.fixture()
def page(server: UiServer) -> Iterator[Any]:
    with launched_chromium() as browser:
        context = browser.new_context(viewport={"width": WIDTH, "height": 800})
        opened = context.new_page()
        opened.goto(server.login_url("/queue"))
        yield opened


# what must stay on screen wherever it is on the page
ON_SCREEN = "header.top a, header.top button, table.queue td, form button, h1"


def fits(page: Any, name: str) -> str:
    """The page's path when it overflows the window sideways (or shows something off-screen),
    else ""; a screenshot of it either way."""
    folder = ARTIFACTS / "ui"
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"narrow-{name}.png"))
    width = page.evaluate("document.documentElement.scrollWidth")
    off = page.evaluate(
        """(selector) => Array.from(document.querySelectorAll(selector))
            .filter(e => e.getClientRects().length)
            .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
            .map(e => `${e.tagName}.${e.className} ${e.textContent.trim().slice(0, 30)}`)""",
        ON_SCREEN,
    )
    return f"{page.url}: scrollWidth {width}, off screen {off}" if width > WIDTH or off else ""


def test_every_page_fits_a_400_px_window(page: Any, server: UiServer) -> None:
    base = server.base_url
    expect = playwright_api.expect
    overflowing: list[str] = []

    def visit(path: str, name: str) -> None:
        page.goto(base + path)
        overflowing.append(fits(page, name))

    visit("/queue", "queue")
    expect(page.locator("header.top nav a", has_text="Sessions")).to_be_in_viewport()
    candidates = list(dict.fromkeys(re.findall(r'href="(/candidate/[^"#?]+)"', page.content())))
    assert len(candidates) == 3
    for number, link in enumerate(candidates):
        visit(link, f"candidate-{number}")
    history = page.locator("a.ev-link", has_text="history")
    if history.count():
        history.first.click()
        overflowing.append(fits(page, "path-history"))
    visit("/evidence/path?path=migrations/env.py", "path-history-direct")

    # prepare and promote the Skill candidate: the plan, the prepared plan, the promoted plan
    page.goto(base + "/queue")
    page.locator("table.queue tr:has(.kind.skill) a").first.click()
    expect(page.locator("section.kind-skill h1")).to_have_text("export-preview-escaping")
    page.locator("article#s-s1").get_by_role("button", name="Confirm").click()
    expect(page.locator(".flash.ok")).to_contain_text("ready for the plan")
    visit("/plan", "plan")
    page.locator("#prepare").click()
    expect(page.locator("#promote")).to_be_visible()
    overflowing.append(fits(page, "plan-detail"))
    page.locator("#promote").click()
    expect(page.locator(".outcome")).to_contain_text("written")
    overflowing.append(fits(page, "promoted"))

    visit("/memory", "memory")
    visit("/memory?q=export+preview", "memory-search")
    visit("/memory/skill/export-preview-escaping", "memory-document")
    visit("/sessions", "sessions")
    visit("/sessions?q=alembic", "sessions-search")
    page.locator("ol.results a").first.click()
    expect(page.locator("table.tools").first).to_be_visible()
    overflowing.append(fits(page, "session"))
    page.locator("table.tools a").last.click()
    expect(page.locator("pre.diff")).to_contain_text("LOCK_TIMEOUT")
    overflowing.append(fits(page, "git-show"))
    assert [o for o in overflowing if o] == []
