"""A candidate's page and a decision on it review that one candidate, not the whole queue.

At team scale (201 candidates, 1,500 entries) every page and every click ran `memory.review`
over every page of every kind: 8–13 s for one candidate, ~20 s per Confirm (the POST, then the
candidate again). The real operations run here against the real server; `UiState.run` (what
every page runs an operation through) is wrapped only to write down which reviews it ran.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx
from ui_world import decision_forms

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
