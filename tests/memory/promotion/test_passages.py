"""The evidence a reviewer sees for a statement is the passage of the cited turn that supports
it (the person's text, the agent's text or a tool call with its output), with where it is and
the command that opens it — in the review operation (CLI, MCP) and on the page. Tried on a real
first turn of 94 tool calls whose pasted 5 KB spec would otherwise be every excerpt."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2 as httpx
import pytest

from support import rave_era_repository, teamlore_cli
from teamlore.memory.promotion.passages import tool_header, windows
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.server import UiServer


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("rave-passages")
    home = root / "state"
    return rave_era_repository(root, home), home


def evidence(world: tuple[Path, Path]) -> dict[str, dict[str, Any]]:
    repo, home = world
    review = run_operation("memory.review", OpContext(cwd=repo, home=home), {"kind": "entry"})
    return {s["statementId"]: s["evidence"][0] for s in review["items"][0]["statements"]}


def test_the_excerpt_is_the_tool_call_that_supports_the_statement(
    world: tuple[Path, Path],
) -> None:
    cited = evidence(world)
    build = cited["build"]
    assert "Type error: Cannot find name 'useEffect'." in build["excerpt"]
    assert build["excerpt"].startswith("#79 shell_command npm.cmd run build (error, exit 1)")
    assert build["passage"]["part"] == "tool" and build["passage"]["tool"] == 79
    assert build["passage"]["turn"] == 1
    assert "apply_patch verification failed" in cited["patch"]["excerpt"]
    assert "full product-quality audit" not in build["excerpt"] + cited["patch"]["excerpt"]


def test_the_pointer_names_session_turn_and_tool_and_the_command_opens_it(
    world: tuple[Path, Path],
) -> None:
    repo, home = world
    build = evidence(world)["build"]
    key = build["passage"]["sessionKey"]
    assert build["display"].startswith(f"session {key[:12]} · turn 1 · tool #79")
    assert build["open"] == f"teamlore sessions show {key[:12]} --turn 1 --tool 79"
    opened = teamlore_cli(*build["open"].split()[1:], cwd=repo, env={"TEAMLORE_HOME": str(home)})
    assert opened.returncode == 0, opened.stderr
    assert "Cannot find name 'useEffect'" in opened.stdout


def test_the_cli_review_shows_the_passage_and_the_command(world: tuple[Path, Path]) -> None:
    repo, home = world
    proc = teamlore_cli(
        "memory", "review", cwd=repo, env={"TEAMLORE_HOME": str(home), "COLUMNS": "80"}
    )
    printed = " ".join(proc.stdout.split())
    assert "Type error: Cannot find name 'useEffect'." in printed
    assert "turn 1 · tool #79" in printed
    assert re.search(r"open it: teamlore sessions show [0-9a-f]{12} --turn 1 --tool 79", printed)


@pytest.fixture(scope="module")
def server(world: tuple[Path, Path]) -> Iterator[UiServer]:
    repo, home = world
    running = UiServer(repo, home=home).start()
    yield running
    running.stop()


def test_the_page_links_to_the_transcript_scrolled_to_the_passage(
    world: tuple[Path, Path], server: UiServer
) -> None:
    repo, home = world
    review = run_operation("memory.review", OpContext(cwd=repo, home=home), {"kind": "entry"})
    candidate = review["items"][0]["candidateId"]
    client = httpx.Client(base_url=server.base_url, follow_redirects=True, timeout=30)
    assert client.get(server.login_url("/queue")).status_code == 200
    page = client.get(f"/candidate/{candidate}").text
    assert "Cannot find name" in page
    links = re.findall(r'href="(/sessions/[^"]+)" class="ev-link">open in the transcript', page)
    assert links, "every cited turn links to its transcript"
    link = links[0].replace("&amp;", "&")
    assert link.endswith("#turn-1-tool-79")
    transcript = client.get(link.split("#")[0]).text
    row = re.search(r'<tr class="error focus" id="turn-1-tool-79">(.*?)</tr>', transcript, re.S)
    assert row is not None, "the cited tool call is the focused row"
    assert "Cannot find name" in row.group(1) and "<details open>" in row.group(1)


def test_a_turn_is_cut_into_windows_of_whole_lines() -> None:
    text = "first paragraph line\nsecond line\n\nnext paragraph\n" + "word " * 200
    parts = windows(text, limit=100)
    assert parts[0] == "first paragraph line\nsecond line"
    assert parts[1].startswith("next paragraph")
    assert all(len(p) <= 100 for p in parts)
    assert " ".join(" ".join(parts).split()) == " ".join(text.split())


def test_a_long_path_is_cut_after_a_separator_and_the_cut_is_marked() -> None:
    """A tool's output line of paths with no space in its second half was cut at the window's
    width on a character: the excerpt a reviewer read ended in `src/compo` and the next began
    `nents/…`, two names that do not exist, with nothing to say a cut was there."""
    folders = "/".join(f"folder{i:02d}" for i in range(40))
    line = f"changed: {folders}/Button.tsx"
    parts = windows(line, limit=100)
    assert len(parts) > 1 and all(len(p) <= 100 for p in parts)
    for first, then in pairwise(parts):
        assert first.endswith("/…") and then.startswith(("…folder", "…Button.tsx"))
    assert "".join(p.removeprefix("…").removesuffix("…") for p in parts) == line
    # a line with spaces is still cut at one, unmarked: nothing is broken there
    assert windows("word " * 40, limit=100)[0].endswith("word")


def test_a_tool_headers_long_path_is_cut_after_a_separator() -> None:
    """A tool call's command longer than its header's 160 characters was cut on the 159th
    character (`…/src/compo…`): the reviewer read a name that does not exist. It is cut after
    the last separator that keeps it short (`…/components/…`), as an excerpt is."""
    folders = "/".join(f"components{i:02d}" for i in range(20))
    command = f"cat src/{folders}/Button.tsx"
    tool = SimpleNamespace(
        seq=3, name="Bash", command=command, input=None, status="ok", exit_code=0
    )
    header = tool_header(tool)
    detail = header.removeprefix("#4 Bash ").removesuffix(" (ok, exit 0)")
    assert detail.endswith("/…") and len(detail) <= 160
    assert f"cat src/{folders}".startswith(detail.removesuffix("…"))
