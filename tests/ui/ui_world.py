"""The review page's test world: the demo's repository and sessions (built by the demo operation
itself, stopped before confirmation), plus a Codex session whose text is hostile HTML."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from support import REPO_ROOT
from teamlore.ops.demo.world import _CodexWriter
from teamlore.ops.registry import OpContext, run_operation
from teamlore.ui.server import UiServer

HOSTILE_ID = "019a8d2e-5b1c-7e40-9a6f-3c2d1e0f9a99"
HOSTILE_TEXT = (
    "Why does the preview show </textarea><script>window.__pwned = 1</script>"
    '<img src=x onerror="window.__pwned = 2"> in the export?'
)
HOSTILE_CLAIM = (
    "Export previews show user text such as </textarea><script>window.__pwned = 3</script> "
    "escaped, never as markup."
)
SKILL_BODY = (
    "## Procedure\n\n1. Reproduce with the exported preview.\n"
    "2. Escape every user text before it reaches the page.\n"
)
ARTIFACTS = Path(os.environ.get("TEAMLORE_TEST_ARTIFACTS", REPO_ROOT / ".pytest-artifacts"))
_DECISION_FORM = re.compile(
    r'name="statement" value="([^"]+)">\s*<input type="hidden" name="revision" value="(\d+)">'
    r'\s*<input type="hidden" name="statementTextDigest" value="([0-9a-f]+)">'
    r'\s*<input type="hidden" name="citationsDigest" value="([0-9a-f]+)">'
)


def decision_forms(page: str, csrf: str, verdict: str = "confirm") -> list[dict[str, str]]:
    """What a person's click posts for each statement of a candidate page, in page order."""
    return [
        {
            "csrf": csrf,
            "statement": statement,
            "verdict": verdict,
            "revision": revision,
            "statementTextDigest": text_digest,
            "citationsDigest": citations,
        }
        for statement, revision, text_digest, citations in _DECISION_FORM.findall(page)
    ]


@dataclass(frozen=True)
class World:
    root: Path
    repo: Path
    home: Path

    def ctx(self) -> OpContext:
        return OpContext(cwd=self.repo, home=self.home)

    def review(self) -> dict[str, object]:
        return run_operation("memory.review", self.ctx(), {"kind": "entry"})

    def server(self) -> UiServer:
        return UiServer(self.repo, home=self.home).start()


def build_world(root: Path) -> World:
    result = run_operation(
        "demo", OpContext(cwd=root), {"directory": str(root / "demo"), "reviewInBrowser": True}
    )
    world = World(root / "demo", Path(result["repository"]), Path(result["stateDir"]))
    _add_hostile_session(world)
    _stage_skill(world)
    return world


def _add_hostile_session(world: World) -> None:
    folder = world.root / "codex" / "sessions" / "2026" / "11" / "26"
    folder.mkdir(parents=True)
    writer = _CodexWriter(str(world.repo), HOSTILE_ID)
    writer.meta("2026-11-26T09:00:00.000Z")
    writer.user("2026-11-26T09:00:01.000Z", HOSTILE_TEXT)
    writer.shell("2026-11-26T09:00:30.000Z", "call_1", "cat </textarea>", "<script>x</script>", 3)
    writer.say("2026-11-26T09:01:00.000Z", "It is </textarea> text, shown as text.")
    writer.done("2026-11-26T09:01:01.000Z")
    writer.user("2026-11-26T09:02:00.000Z", "Escape it in the preview and run the tests.")
    writer.shell("2026-11-26T09:03:00.000Z", "call_2", "pytest -q", "13 passed in 1.2s", 0)
    writer.say("2026-11-26T09:03:30.000Z", "The preview escapes user text now; 13 tests pass.")
    writer.done("2026-11-26T09:03:31.000Z")
    writer.user("2026-11-26T09:05:00.000Z", "Write down how we do it next time.")
    writer.say("2026-11-26T09:05:30.000Z", "Reproduce with the preview, escape, run the tests.")
    writer.done("2026-11-26T09:05:31.000Z")
    path = folder / f"rollout-2026-11-26T09-00-00-{HOSTILE_ID}.jsonl"
    path.write_bytes(b"".join(writer.lines))
    run_operation(
        "sync",
        world.ctx(),
        {
            "sources": [
                f"codex={world.root / 'codex' / 'sessions'}",
                f"claude={world.root / 'claude' / 'projects'}",
            ],
            "repository": str(world.repo),
        },
    )


def chromium_executable() -> str:
    """The system Chromium (Debian package); skip when it cannot be had."""
    found = os.environ.get("TEAMLORE_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    if not found:
        pytest.skip("no chromium executable (apt-get install chromium; .ci/run installs it)")
    return found


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """The system Chromium, headless through Playwright (skipped without either), closed after."""
    playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
    with playwright_api.sync_playwright() as driver:
        browser = driver.chromium.launch(
            executable_path=chromium_executable(), args=["--no-sandbox"]
        )
        try:
            yield browser
        finally:
            browser.close()


def _stage_skill(world: World) -> None:
    """A Skill candidate from the hostile session: a second candidate kind in the queue."""
    recalled = run_operation(
        "memory.recall",
        world.ctx(),
        {"since": "2026-11-26T00:00:00.000Z", "until": "2026-11-27T00:00:00.000Z"},
    )
    task = recalled["sources"][0]
    evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    run_operation(
        "memory.stage",
        world.ctx(),
        {
            "format": "threadshare-memory-skill-candidate@v1",
            "taskId": task["taskId"],
            "binding": task["binding"],
            "memoryContextDigest": recalled["memoryContext"]["bindingDigest"],
            "skill": {
                "name": "export-preview-escaping",
                "description": "Show user text in export previews escaped, never as markup.",
                "body": SKILL_BODY,
                "action": "create",
                "expectedContentDigest": None,
            },
            "statements": [{"statementId": "s1", "text": HOSTILE_CLAIM, "evidenceIds": [evidence]}],
        },
    )
