"""Only the person's own browser may use the review page: a request without the one-time
token's session, naming a foreign Host, sent from a foreign Origin, or posting a form without
its CSRF token is refused with a stable code, and nothing changes (against the real server)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest
from ui_world import World, build_world

from support import git
from teamlore.ui.review_pages import routes as review_routes
from teamlore.ui.security import CSP
from teamlore.ui.server import UiServer


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("ui-security"))


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[UiServer]:
    running = world.server()
    yield running
    running.stop()


def logged_in(server: UiServer) -> httpx.Client:
    client = httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=30)
    assert client.get(server.login_url("/queue")).status_code == 200
    return client


def csrf_of(client: httpx.Client, path: str = "/queue") -> str:
    found = re.search(r'name="csrf-token" content="([0-9a-f]+)"', client.get(path).text)
    assert found, "every page carries the session's CSRF token"
    return found.group(1)


def snapshot(world: World, client: httpx.Client) -> dict[str, Any]:
    """Everything a refused request could have changed."""
    review = world.review()
    return {
        "items": [(i["candidateId"], i["revision"], i["status"]) for i in review["items"]],
        "confirmations": [s["confirmation"] for i in review["items"] for s in i["statements"]],
        "tree": git(world.repo, "status", "--porcelain", "--untracked-files=all"),
        "plan": client.get("/plan").text.count('class="plan-list"'),
        "decisions": client.get("/queue").text.count("0 ✓ · 0 ✗"),
    }


def first_candidate(world: World) -> dict[str, Any]:
    items = world.review()["items"]
    return next(i for i in items if "Invoice" in i["content"])


def decide_form(item: dict[str, Any], csrf: str | None) -> dict[str, str]:
    statement = item["statements"][0]
    form = {
        "statement": statement["statementId"],
        "verdict": "confirm",
        "revision": str(item["revision"]),
        "statementTextDigest": statement["statementTextDigest"],
        "citationsDigest": statement["citationsDigest"],
    }
    return form if csrf is None else {**form, "csrf": csrf}


def test_the_login_link_works_once_and_leaves_a_strict_cookie(server: UiServer) -> None:
    url = server.login_url("/queue")
    first = httpx.get(url, follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/queue"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "token" not in cookie
    again = httpx.get(url, follow_redirects=False)
    assert again.status_code == 401 and again.headers["x-teamlore-error"] == "UI_TOKEN_REQUIRED"
    wrong = httpx.get(f"{server.base_url}/queue?token=guess", follow_redirects=False)
    assert wrong.status_code == 401


def test_the_used_login_link_opened_again_in_the_logged_in_browser_goes_to_the_page(
    server: UiServer,
) -> None:
    """Walk U1 #10: opening the printed link again in the browser it logged in answered 401
    UI_TOKEN_REQUIRED, and only a restart gave a new link. With that browser's session it now
    redirects to the page; the spent link is still refused without a valid session."""
    url = server.login_url("/plan")
    with httpx.Client(base_url=server.base_url, follow_redirects=False, timeout=30) as browser:
        assert browser.get(url).status_code == 303
        again = browser.get(url)
        assert again.status_code == 303 and again.headers["location"] == "/plan"
        assert "set-cookie" not in again.headers  # no new session: the link stays spent
        assert browser.get(url, follow_redirects=True).status_code == 200
        posted = browser.post(url, data={"x": "1"})
        assert posted.status_code == 401  # a POST carrying it is still refused
    refused = httpx.get(url, follow_redirects=False)
    assert refused.status_code == 401 and refused.headers["x-teamlore-error"] == "UI_TOKEN_REQUIRED"
    forged = httpx.get(url, cookies={"teamlore_ui": "forged"}, follow_redirects=False)
    assert forged.status_code == 401


def test_the_login_redirect_stays_on_this_server(server: UiServer) -> None:
    token_url = server.login_url("/")
    token = token_url.rsplit("token=", 1)[1]
    sneaky = httpx.get(f"{server.base_url}//evil.example/x?token={token}", follow_redirects=False)
    assert sneaky.status_code == 303 and sneaky.headers["location"] == "/evil.example/x"


@pytest.mark.parametrize(
    ("sent", "location"),
    [
        ("/%5Cevil.example", "/%5Cevil.example"),
        ("/%5C%5Cevil.example/x", "/%5C%5Cevil.example/x"),
        ("/%2F%2Fevil.example", "/evil.example"),
        ("/%09/evil.example", "/%09/evil.example"),
        ("/%0A%0D//evil.example", "/%0A%0D//evil.example"),
        ("/https:%2F%2Fevil.example", "/https://evil.example"),
        ("/%E2%80%AE/evil", "/%E2%80%AE/evil"),
    ],
)
def test_a_login_redirect_a_browser_could_read_as_another_site_stays_here(
    server: UiServer, sent: str, location: str
) -> None:
    """Issue 27: `/%5Cevil.example` was redirected to `Location: /\\evil.example`, which
    browsers open as `//evil.example`. Every byte that could make a scheme, a host or a separator
    is percent-encoded, and the answer is always a path on this server."""
    token = server.login_url("/").rsplit("token=", 1)[1]
    answer = httpx.get(f"{server.base_url}{sent}?token={token}", follow_redirects=False)
    assert answer.status_code == 303
    got = answer.headers["location"]
    assert got == location
    assert got.startswith("/") and not got.startswith("//")
    assert not any(c == "\\" or ord(c) < 0x21 or ord(c) > 0x7E for c in got)


def test_a_refused_request_carrying_the_login_token_does_not_spend_it(server: UiServer) -> None:
    """Issue 27: any request carrying the one-time token burnt it, even a refused POST, and the
    person's own login link stopped working. Only a successful login spends it."""
    url = server.login_url("/queue")
    posted = httpx.post(url, data={"x": "1"}, follow_redirects=False)
    assert posted.status_code == 401 and posted.headers["x-teamlore-error"] == "UI_TOKEN_REQUIRED"
    head = httpx.head(url, follow_redirects=False)
    assert head.status_code == 401
    foreign = httpx.get(url, headers={"Host": "evil.example"}, follow_redirects=False)
    assert foreign.status_code == 403
    cross = httpx.get(url, headers={"Origin": "http://evil.example"}, follow_redirects=False)
    assert cross.status_code == 403
    login = httpx.get(url, follow_redirects=False)
    assert login.status_code == 303 and login.headers["location"] == "/queue"
    assert httpx.get(url, follow_redirects=False).status_code == 401  # then it is spent


@pytest.mark.parametrize("path", ["/queue", "/plan", "/memory", "/sessions", "/static/ui.css"])
def test_without_the_session_nothing_is_shown(server: UiServer, path: str) -> None:
    answer = httpx.get(server.base_url + path)
    assert answer.status_code == 401
    assert answer.headers["x-teamlore-error"] == "UI_TOKEN_REQUIRED"
    assert "Invoice" not in answer.text


def test_without_the_session_a_post_changes_nothing(world: World, server: UiServer) -> None:
    client = logged_in(server)
    before = snapshot(world, client)
    item = first_candidate(world)
    csrf = csrf_of(client)
    anonymous = httpx.Client(base_url=server.base_url)
    refused = anonymous.post(
        f"/candidate/{item['candidateId']}/discard", data={"reason": "x", "csrf": csrf}
    )
    assert refused.status_code == 401
    assert snapshot(world, client) == before


def test_a_foreign_host_is_refused_even_with_a_session(world: World, server: UiServer) -> None:
    client = logged_in(server)
    before = snapshot(world, client)
    item = first_candidate(world)
    for host in (
        f"evil.example:{server.guard.port}",
        "127.0.0.1",
        f"127.0.0.1:{server.guard.port + 1}",
    ):
        page = client.get("/queue", headers={"host": host})
        assert page.status_code == 403 and page.headers["x-teamlore-error"] == "UI_HOST_REFUSED"
        posted = client.post(
            f"/candidate/{item['candidateId']}/decide",
            data=decide_form(item, csrf_of(client)),
            headers={"host": host},
        )
        assert posted.status_code == 403
    assert snapshot(world, client) == before


def test_a_foreign_origin_is_refused(world: World, server: UiServer) -> None:
    client = logged_in(server)
    before = snapshot(world, client)
    item = first_candidate(world)
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{server.guard.port + 1}"):
        posted = client.post(
            f"/candidate/{item['candidateId']}/decide",
            data=decide_form(item, csrf_of(client)),
            headers={"origin": origin},
        )
        assert posted.status_code == 403
        assert posted.headers["x-teamlore-error"] == "UI_ORIGIN_REFUSED"
    assert snapshot(world, client) == before
    same_origin = client.post(
        f"/candidate/{item['candidateId']}/decide",
        data=decide_form(item, csrf_of(client)),
        headers={"origin": server.base_url},
    )
    assert same_origin.status_code == 200 and "confirmed" in same_origin.text
    client.post(
        f"/candidate/{item['candidateId']}/decide",
        data={**decide_form(item, csrf_of(client)), "verdict": "undo"},
    )
    assert snapshot(world, client) == before


def post_routes() -> list[str]:
    return [r.path for r in review_routes() if "POST" in (r.methods or set())]


def test_every_state_changing_form_needs_its_csrf_token(world: World, server: UiServer) -> None:
    client = logged_in(server)
    item = first_candidate(world)
    before = snapshot(world, client)
    paths = [
        p.replace("{candidate_id:str}", item["candidateId"]).replace(
            "{plan_id:str}", "4b4c2351-ce91-4e04-a183-c8bd4cd706b5"
        )
        for p in post_routes()
    ]
    assert len(paths) == 4
    for path in paths:
        for csrf in (None, "", "0" * 64):
            form = {**decide_form(item, csrf), "reason": "not needed"}
            refused = client.post(path, data=form)
            assert refused.status_code == 403, path
            assert refused.headers["x-teamlore-error"] == "UI_CSRF_INVALID"
    assert snapshot(world, client) == before


def test_the_csrf_token_of_one_session_does_not_work_in_another(
    world: World, server: UiServer
) -> None:
    one, other = logged_in(server), logged_in(server)
    item = first_candidate(world)
    refused = other.post(
        f"/candidate/{item['candidateId']}/discard",
        data={"reason": "mine", "revision": str(item["revision"]), "csrf": csrf_of(one)},
    )
    assert refused.status_code == 403
    assert first_candidate(world)["revision"] == item["revision"]


@pytest.mark.parametrize("path", ["/queue", "/plan", "/memory", "/sessions"])
def test_every_answer_carries_a_strict_content_security_policy(server: UiServer, path: str) -> None:
    client = logged_in(server)
    answer = client.get(path)
    assert answer.status_code == 200
    assert answer.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in answer.text  # scripts only from /static, never inline
    refused = httpx.get(server.base_url + path)
    assert refused.headers["content-security-policy"] == CSP


def test_it_listens_on_loopback_only(server: UiServer) -> None:
    assert server.sock.getsockname()[0] == "127.0.0.1"


def test_hostile_transcript_text_is_escaped_in_the_html(server: UiServer, world: World) -> None:
    client = logged_in(server)
    found = client.get("/sessions", params={"q": "preview textarea"})
    link = re.search(r'href="(/sessions/[0-9a-f]+)\?turn=', found.text)
    assert link, found.text
    page = client.get(link.group(1)).text
    assert "<script>window.__pwned" not in page and "</textarea><script>" not in page
    assert "&lt;/textarea&gt;&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert 'onerror="window' not in page


def test_a_path_outside_the_repository_is_refused(server: UiServer) -> None:
    client = logged_in(server)
    for bad in ("../etc/passwd", "/etc/passwd", "a/../../b"):
        answer = client.get("/evidence/path", params={"path": bad})
        assert answer.status_code == 409 and "INVALID_ARGUMENT" in answer.text
