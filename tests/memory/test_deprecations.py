"""An update git merged into a deprecated entry is named (docs/memory.md, "Merge conflicts").

One teammate promotes a merge that deprecates an entry (only its `status` and `superseded_by`
lines change); another updates the same entry's text. `git pull` combines both without a
conflict, so the update would sit in an entry nothing reads. `memory lint` and `memory status`
name it (`entry.deprecated-body-changed`, a warning) with what to do. Two clones of one bare
origin, the real git binary and the real `teamlore` CLI.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path
from typing import Any

import orjson
import pytest
from test_consolidation_shared_baseline import ENTRIES, Team, cli, commit_and_push

from support import git
from teamlore.memory.deprecations import ACKNOWLEDGED
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


def merge_an_update_into_a_deprecated_entry(team: Team) -> None:
    """Bo's update of the entry's text, pulled into Ana's clone after she deprecated it."""
    update_text(team.bo)
    commit_and_push(team.bo, "memory: sharpen the raw-transcript entry")
    deprecate(team.ana)
    git(team.ana.root, "add", "-A")
    git(team.ana.root, "commit", "-q", "-m", "memory: merge into the two-stage entry")
    git(team.ana.root, "pull", "-q", "--no-rebase", "origin", "main")


def status_rules(world: Any, env: dict[str, str] | None = None) -> dict[str, int]:
    done = world.cli(
        "memory",
        "status",
        "--format",
        "json",
        env={"TEAMLORE_HOME": str(world.home), **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    rules: dict[str, int] = orjson.loads(done.stdout)["lint"]["rules"]
    return rules


def logging_git(folder: Path) -> tuple[dict[str, str], Path]:
    """A PATH whose `git` logs each argv to the returned file, then runs the real git."""
    real, log = shutil.which("git"), folder / "git.log"
    folder.mkdir()
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    log.touch()
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}, log


def history_reads(log: Path) -> list[str]:
    """What the deprecation check ran: `git log` and `git cat-file` (not the other reads)."""
    return [line for line in log.read_text().splitlines() if re.search(r" (log|cat-file) ", line)]


def test_memory_status_runs_no_git_for_an_unchanged_tree_and_sees_a_new_commit(
    team: Team, tmp_path: Path
) -> None:
    ana = team.ana
    env, log = logging_git(tmp_path / "logging-git")
    deprecate(ana)
    commit_and_push(ana, "memory: merge into the two-stage entry")
    assert RULE not in status_rules(ana, env)
    assert history_reads(log)  # the first status asks git's history
    log.write_text("")
    assert RULE not in status_rules(ana, env)
    assert history_reads(log) == []  # the same tree: the kept answer, no git for it

    update_text(team.bo)  # a teammate's update made before the deprecation, merged now
    git(team.bo.root, "add", "-A")
    git(team.bo.root, "commit", "-q", "-m", "memory: sharpen the raw-transcript entry")
    git(team.bo.root, "pull", "-q", "--no-rebase", "origin", "main")
    git(team.bo.root, "push", "-q", "origin", "main")
    git(ana.root, "pull", "-q", "--ff-only", "origin", "main")
    assert status_rules(ana, env).get(RULE) == 1
    log.write_text("")
    assert status_rules(ana, env).get(RULE) == 1
    assert history_reads(log) == []


def test_an_edit_made_on_purpose_is_acknowledged_by_its_commit_message(team: Team) -> None:
    ana = team.ana
    merge_an_update_into_a_deprecated_entry(team)
    assert len(findings_of(ana)) == 1
    (finding,) = findings_of(ana)
    assert "if a merge or a rebase brought it in, `git checkout" in finding["message"]
    assert f"{ACKNOWLEDGED} {OLD_PATH}" in finding["message"]

    ana.write(OLD_PATH, ana.read(OLD_PATH).replace(b"Redact", b"Strip"))  # a body-only commit
    git(ana.root, "commit", "-q", "-am", "memory: reword")  # says nothing: still named
    assert len(findings_of(ana)) == 1 and status_rules(ana).get(RULE) == 1

    ana.write(OLD_PATH, ana.read(OLD_PATH).replace(b"Strip", b"Trim"))  # the line names another
    git(ana.root, "commit", "-q", "-am", f"memory: trim\n\n{ACKNOWLEDGED} entries/other.md")
    assert len(findings_of(ana)) == 1

    ana.write(OLD_PATH, ana.read(OLD_PATH).replace(b"Trim", b"Remove"))
    git(ana.root, "commit", "-q", "-am", f"memory: drop a token\n\n{ACKNOWLEDGED} {OLD_PATH}")
    assert findings_of(ana) == [] and RULE not in status_rules(ana)
    ana.write(OLD_PATH, ana.read(OLD_PATH).replace(b"Remove", b"Delete"))  # a text not meant
    assert len(findings_of(ana)) == 1


def test_the_finding_names_the_changed_line_of_a_file_with_crlf_line_ends(team: Team) -> None:
    ana = team.ana
    merge_an_update_into_a_deprecated_entry(team)
    (lf,) = findings_of(ana)
    ana.write(OLD_PATH, ana.read(OLD_PATH).replace(b"\n", b"\r\n"))
    (crlf,) = findings_of(ana)
    assert crlf["line"] == lf["line"] > 1
    assert ana.read(OLD_PATH).split(b"\r\n")[crlf["line"] - 1].startswith(b"Redact")


def test_an_answer_git_could_not_give_is_not_kept(team: Team, tmp_path: Path) -> None:
    # a `git log` that fails (a timeout on a long history, say) was kept as "no finding" until
    # HEAD or an entry changed
    ana = team.ana
    merge_an_update_into_a_deprecated_entry(team)
    folder = tmp_path / "failing-git"
    folder.mkdir()
    wrapper = folder / "git"
    real = shutil.which("git")
    wrapper.write_text(
        f'#!/bin/sh\ncase " $* " in *" log "*) exit 128;; esac\nexec "{real}" "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    failing = {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    assert RULE not in status_rules(ana, failing)  # nothing said: git could not answer
    assert status_rules(ana).get(RULE) == 1  # and nothing kept: asked again, and named
