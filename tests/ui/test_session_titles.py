"""The Sessions pages name a session as `sessions list` does (docs/sessions.md, "Titles,
subagents and turns without a prompt"): its provider's title, else the one derived from its
first prompt, a subagent by the call that started it. The pages listed sessions by key alone and
a subagent's page said nothing of its parent: a person looking for "the one about the Thai
curry poems" opened them one by one. Over the real fixture sessions, against the real server."""

from __future__ import annotations

import html
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from support import Cli, fixture_sources
from teamlore.ops.sessions.titles import SUBAGENT_MARK, listed_title
from teamlore.ui.server import UiServer

MOREDIP = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"  # claude/moredip-0ccf1a04.jsonl: 5 subagents


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    cli = Cli(tmp_path_factory.mktemp("state"))
    cli.json("sync", *fixture_sources())
    return cli


@pytest.fixture(scope="module")
def client(cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    repo = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    server = UiServer(repo, home=Path(cli.env["TEAMLORE_HOME"])).start()
    opened = httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=60)
    assert opened.get(server.login_url("/queue")).status_code == 200
    yield opened
    opened.close()
    server.stop()


def test_the_list_names_each_session_as_sessions_list_does(cli: Cli, client: httpx.Client) -> None:
    listed = cli.json("sessions", "list")["sessions"]
    page = client.get("/sessions", params={"all": "1"}).text
    rows = {
        key: html.unescape(title)
        for key, title in re.findall(
            r'<a href="/sessions/([0-9a-f]+)">.*?<td class="title">(.*?)</td>', page
        )
    }
    assert set(rows) == {s["sessionKey"] for s in listed}
    for s in listed:
        assert rows[s["sessionKey"]] == (listed_title(s) or "")[:120], s
    subagents = [s for s in listed if s["parentSessionKey"]]
    assert subagents and all(rows[s["sessionKey"]].startswith(SUBAGENT_MARK) for s in subagents)
    assert sum(1 for s in listed if s["derivedTitle"] and rows[s["sessionKey"]]) > 5


def test_a_subagent_and_the_call_that_started_it_link_to_each_other(
    cli: Cli, client: httpx.Client
) -> None:
    parent = cli.json("sessions", "show", MOREDIP)["session"]
    children = [
        s for s in cli.json("sessions", "list")["sessions"]
        if s["parentSessionKey"] == parent["sessionKey"]
    ]  # fmt: skip
    assert len(children) == 5
    parent_page = client.get(f"/sessions/{parent['sessionKey']}").text
    for child in children:
        assert f'<a href="/sessions/{child["sessionKey"]}">' in parent_page
        page = html.unescape(client.get(f"/sessions/{child['sessionKey']}").text)
        subagent = child["subagent"]
        assert f"Subagent “{subagent['description']}” of" in page
        assert f'href="/sessions/{parent["sessionKey"]}?turn={subagent["turn"]}' in page
