"""An update git merged into a deprecated entry is named (docs/memory.md, "Merge conflicts").

One teammate promotes a merge that deprecates an entry (only its `status` and `superseded_by`
lines change); another updates the same entry's text. `git pull` combines both without a
conflict, so the update would sit in an entry nothing reads. `memory lint` and `memory status`
name it (`entry.deprecated-body-changed`, a warning) with what to do. Two clones of one bare
origin, the real git binary and the real `teamlore` CLI.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from test_consolidation_shared_baseline import ENTRIES, Team, cli, commit_and_push

from support import git
from teamlore.memory.store import documents

RULE = "entry.deprecated-body-changed"
OLD = "threadshare-memory-extraction-that-sends-raw-insights-transc"
NEW = "threadshare-team-memory-extraction-uses-a-two-stage-pipeline"
OLD_PATH = f"{ENTRIES}/{OLD}.md"
UPDATE = "Redact tool payloads before a transcript leaves the machine, not after."


@pytest.fixture()
def team(tmp_path: Path) -> Team:
    return Team(tmp_path)


def lint(world: Any) -> tuple[int, list[dict[str, Any]]]:
    done = cli(world, "memory", "lint", "--format", "json")
    return done.returncode, orjson.loads(done.stdout)["findings"]


def findings_of(world: Any) -> list[dict[str, Any]]:
    return [f for f in lint(world)[1] if f["rule"] == RULE]


def deprecate(world: Any) -> None:
    """What promoting a merge does to the other entry: status and superseded_by, text kept."""
    entry = documents.load_entry(world.read(OLD_PATH), OLD_PATH)
    deprecated = entry.model_copy(update={"status": "deprecated", "superseded_by": NEW})
    world.write(OLD_PATH, documents.dump_entry(deprecated))


def update_text(world: Any) -> None:
    entry = documents.load_entry(world.read(OLD_PATH), OLD_PATH)
    world.write(OLD_PATH, documents.dump_entry(entry.model_copy(update={"body": UPDATE + "\n"})))


def test_an_update_git_merged_into_a_deprecated_entry_is_named_with_the_way_out(
    team: Team,
) -> None:
    ana, bo = team.ana, team.bo
    update_text(bo)
    commit_and_push(bo, "memory: sharpen the raw-transcript entry")
    deprecate(ana)
    git(ana.root, "add", "-A")
    git(ana.root, "commit", "-q", "-m", "memory: merge into the two-stage entry")
    assert findings_of(ana) == []  # a deprecation alone is what a merge promotes

    git(ana.root, "pull", "-q", "--no-rebase", "origin", "main")  # merged without a conflict
    merged = documents.load_entry(ana.read(OLD_PATH), OLD_PATH)
    assert (merged.status, merged.superseded_by, merged.body) == ("deprecated", NEW, UPDATE + "\n")
    assert UPDATE not in ana.read(f"{ENTRIES}/{NEW}.md").decode()

    code, findings = lint(ana)
    (finding,) = [f for f in findings if f["rule"] == RULE]
    assert code == 0 and finding["severity"] == "warn" and finding["file"] == OLD_PATH
    assert merged.body.startswith(ana.read(OLD_PATH).decode().splitlines()[finding["line"] - 1])
    deprecating = git(ana.root, "log", "-1", "--format=%H", "HEAD^1")
    restore = f"git checkout {deprecating[:12]} -- {OLD_PATH}"
    assert f"`{NEW}`, which replaces it, did not get the change" in finding["message"]
    assert restore in finding["message"]
    status = orjson.loads(cli(ana, "memory", "status", "--format", "json").stdout)
    assert status["lint"]["rules"].get(RULE) == 1 and status["lint"]["blocking"] == 0
    text = cli(ana, "memory", "lint").stdout
    assert re.search(rf"{re.escape(OLD_PATH)}:\d+ warn {RULE} its text changed after commit", text)

    git(ana.root, *restore.split()[1:])  # the next step the finding names
    assert findings_of(ana) == []
    assert documents.load_entry(ana.read(OLD_PATH), OLD_PATH).status == "deprecated"


def test_a_deprecation_not_yet_committed_or_outside_git_history_is_not_judged(
    team: Team,
) -> None:
    ana = team.ana
    deprecate(ana)
    update_text(ana)  # working tree only: no commit made it deprecated yet
    assert findings_of(ana) == []
    commit_and_push(ana, "memory: deprecate with new words")  # deprecated as it is: fine
    assert findings_of(ana) == []

    entry = documents.load_entry(ana.read(OLD_PATH), OLD_PATH)
    approved = entry.model_copy(update={"status": "approved", "superseded_by": None})
    ana.write(OLD_PATH, documents.dump_entry(approved))
    commit_and_push(ana, "memory: the entry holds after all")
    deprecate(ana)
    update_text(ana)  # deprecated again, with other words, not committed: not judged either
    ana.write(OLD_PATH, ana.read(OLD_PATH).replace(b"Redact", b"Strip"))
    assert findings_of(ana) == []
