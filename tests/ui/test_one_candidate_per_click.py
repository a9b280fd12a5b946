"""A candidate's page and a decision on it review that one candidate, not the whole queue.

At team scale (201 candidates, 1,500 entries) every page and every click ran `memory.review`
over every page of every kind: 8–13 s for one candidate, ~20 s per Confirm (the POST, then the
candidate again). The real operations run here against the real server; `UiState.run` (what
every page runs an operation through) is wrapped only to write down which reviews it ran.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from ui_world import decision_forms

from teamlore.ops.memory.review import short_candidate_id
from teamlore.ui.server import UiServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
from test_review import TEXT, Flow, candidate

OTHER = "Run the migrations before the fixtures, or the fixtures load into an old schema."


def test_a_candidate_and_its_decision_review_that_candidate_only(
    tmp_path: Path, home: Path
) -> None:
    flow = Flow(tmp_path, home)
    flow.quarantine(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(OTHER, [(OTHER, [flow.turn_ev(1)])]),
        ]
    )
    server = UiServer(flow.repo, home=home).start()
    state = server.app.app.state.ui  # inside the guard
    reviews: list[dict[str, Any]] = []
    run = state.run

    def recorded(name: str, payload: dict[str, Any]) -> dict[str, Any]:
        if name == "memory.review":
            reviews.append(dict(payload))
        return run(name, payload)

    state.run = recorded
    try:
        client = httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=60)
        queue = client.get(server.login_url("/queue")).text
        links = list(dict.fromkeys(re.findall(r'href="(/candidate/[^"#?]+)"', queue)))
        assert len(links) >= 2
        token = re.search(r'name="csrf-token" content="([0-9a-f]+)"', queue)
        assert token
        link = links[1]
        candidate_id = link.rsplit("/", 1)[1]

        reviews.clear()
        shown = client.get(link)
        assert shown.status_code == 200
        assert reviews and {r.get("candidateId") for r in reviews} == {candidate_id}, reviews
        # its place in the queue, from the queue the page showed
        assert f"2 of {len(links)}" in re.sub(r"<[^>]+>|\s+", " ", shown.text)

        reviews.clear()
        form = decision_forms(shown.text, token.group(1))[0]
        decided = client.post(link + "/decide", data=form, follow_redirects=False)
        assert decided.status_code == 303
        assert {r.get("candidateId") for r in reviews} == {candidate_id}, reviews
        again = client.get(decided.headers["location"])
        assert 'class="state confirmed"' in again.text or "confirmed" in again.text
        assert {r.get("candidateId") for r in reviews} == {candidate_id}, reviews
        client.close()
    finally:
        server.stop()


THIRD = "Tag a release only from main, after its checks pass."
FOURTH = "Run the linter before a release, not after."
FIFTH = "Bump the version in one commit of its own before tagging."


def _crumbs(page: str) -> tuple[str, str | None, str | None]:
    """(`n of N`, the previous link's candidate, the next link's candidate) of a candidate page."""
    said = re.search(r"\d+ of \d+", re.sub(r"<[^>]+>|\s+", " ", page))
    before = re.search(r'href="/candidate/([^"]+)" class="nav-prev"', page)
    after = re.search(r'href="/candidate/([^"]+)" class="nav-next"', page)
    assert said
    return said.group(0), before and before.group(1), after and after.group(1)


def test_a_candidate_page_places_it_in_the_queue_as_it_stands_now(
    tmp_path: Path, home: Path
) -> None:
    """After the queue page, a candidate discarded or answered at a terminal left the pages
    placing candidates by the queue as it was: `1 of 3`, a next link to the discarded one (not
    found, and linked again after), or to one whose statement `memory confirm` had stored."""
    from teamlore.ops.memory.confirm import CONFIRMED
    from teamlore.ops.registry import OpContext, load_operations

    flow = Flow(tmp_path, home)
    flow.quarantine(
        [
            candidate(text, [(text, [flow.turn_ev(1)])])
            for text in (TEXT, OTHER, THIRD, FOURTH, FIFTH)
        ]
    )
    server = UiServer(flow.repo, home=home).start()
    state = server.app.app.state.ui
    try:
        client = httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=60)
        queue = client.get(server.login_url("/queue")).text
        ids = [
            link.rsplit("/", 1)[1]
            for link in dict.fromkeys(re.findall(r'href="(/candidate/[^"#?]+)"', queue))
        ]
        assert len(ids) == 5
        token = re.search(r'name="csrf-token" content="([0-9a-f]+)"', queue)
        assert token
        c1, c2, c3, c4, c5 = ids

        # discarded at a terminal: no page places or links it any more
        state.run("memory.discard", {"candidateId": c2, "reason": "a teammate's call"})
        gone = client.get(f"/candidate/{c2}")
        assert gone.status_code == 404 and "CANDIDATE_NOT_FOUND" in gone.text
        assert c2 not in [i["candidateId"] for i in state.shown_queue or []]
        assert _crumbs(client.get(f"/candidate/{c1}").text) == ("1 of 4", None, c3)

        # `memory confirm`: `n` to c1, `y` to c3 (stored, no plan), Ctrl-C at c4
        def ask(item: dict[str, Any]) -> bool:
            if item["candidateId"] == c4:
                raise KeyboardInterrupt
            if item["candidateId"] != c3:
                return False
            item[CONFIRMED] = [s["statementId"] for s in item["statements"]]
            return True

        with pytest.raises(KeyboardInterrupt):
            load_operations().get("memory.confirm").run(
                OpContext(cwd=flow.repo, home=home, confirm=ask), {}
            )
        # c3 waits for a plan, not for a decision: next goes to c4
        assert _crumbs(client.get(f"/candidate/{c1}").text) == ("1 of 4", None, c4)
        assert _crumbs(client.get(f"/candidate/{c4}").text) == ("3 of 4", c3, c5)
        # and its page says where that confirmation came from: a `y`, no plan
        confirmed = client.get(f"/candidate/{c3}").text
        note = re.search(r'class="sub stored-confirmation">(.*?)</p>', confirmed, re.S)
        assert note and "a <code>y</code> to <code>teamlore memory confirm</code>" in note.group(1)
        reviewed = state.run("memory.review", {"candidateId": c3, "limit": 1})["items"][0]
        (statement,) = reviewed["statements"]
        undo = {
            "csrf": token.group(1),
            "statement": statement["statementId"],
            "verdict": "undo",
            "revision": str(reviewed["revision"]),
            "statementTextDigest": statement["statementTextDigest"],
            "citationsDigest": statement["citationsDigest"],
        }
        refused = client.post(f"/candidate/{c3}/decide", data=undo).text
        flash = re.search(r'class="flash error" role="status">(.*?)</p>', refused, re.S)
        assert flash and "Nothing was undone" in flash.group(1)
        said = html.unescape(" ".join(flash.group(1).split()))
        assert "a `y` to `teamlore memory confirm` stores it at once" in said, said
        assert (  # runnable as printed, without a terminal too
            f"`teamlore memory discard --candidate {short_candidate_id(c3)}"
            " --reason 'its confirmation is taken back'`"
        ) in said, said

        # staged since the queue page loaded (one recall task takes one batch: the page is
        # made to have loaded the queue without it): it joins the queue, waiting for a decision
        state.shown_queue = [i for i in state.shown_queue or [] if i["candidateId"] != c5]
        assert _crumbs(client.get(f"/candidate/{c4}").text) == ("3 of 4", c3, c5)
        client.close()
    finally:
        server.stop()
