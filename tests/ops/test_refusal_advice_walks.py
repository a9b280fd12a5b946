"""Refusals met on walks through real use, whose advice pointed the wrong way: each now names
the step that works (a misnamed scene file's rename, `discard --extract-again` where a plain
discard loses a lesson that can be extracted again). Real repositories, real SQLite, the real
operations."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import WINDOW
from test_review import TEXT, Flow, candidate, store

from support import in_process, teamlore_cli
from teamlore.core.errors import TeamloreError

SCENE = (
    "-----META-START-----\ncreated: 2026-08-21\nupdated: 2026-08-21\n"
    'summary: "Database migrations"\nheat: 1\n-----META-END-----\n'
    "## Database migrations\n- Run them before the deploy.\n"
)


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def test_a_misnamed_scene_file_is_named_with_its_rename_not_a_line_or_a_sync(flow: Flow) -> None:
    """`scenes/db_migrations.md` (an old-style name) made staging decisions refuse with "read
    only in part … teamlore sync": the file is readable, it is invalid, and a sync changes
    nothing. `memory lint` put it on line 7 (a heading) as "field name", a field the file does
    not have: the name comes from the file name."""
    scenes = flow.repo / ".threadshare" / "memory" / "scenes"
    scenes.mkdir(parents=True, exist_ok=True)
    (scenes / "db_migrations.md").write_text(SCENE)
    rename = (
        "`git mv .threadshare/memory/scenes/db_migrations.md "
        ".threadshare/memory/scenes/db-migrations.md`"
    )

    (finding,) = [
        f for f in flow.op("memory.lint", {})["findings"] if f["rule"] == "slug.scene-name"
    ]
    assert finding["line"] == 0  # the file, not a line of it
    assert "field" not in finding["message"] and "'db_migrations'" in finding["message"]
    assert f"rename the file ({rename})" in finding["message"]

    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (draft,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    with pytest.raises(TeamloreError) as refused:
        flow.adjudicate(staged, [store(draft)])
    error = refused.value.to_json()
    assert error["code"] == "APPROVED_PROJECTION_PARTIAL"
    assert ".threadshare/memory/scenes/db_migrations.md (slug.scene-name:" in error["message"]
    assert rename in error["message"]
    assert "sync" not in error["next"] and "unreadable" not in error["next"]
    assert error["next"].startswith("Fix .threadshare/memory/scenes/db_migrations.md as")
    assert error["details"]["files"] == [".threadshare/memory/scenes/db_migrations.md"]

    # doing what it says is enough: staging reads the memory again
    (scenes / "db_migrations.md").rename(scenes / "db-migrations.md")
    assert flow.adjudicate(staged, [store(draft)])["status"] == "staged"


def test_a_non_canonical_entry_warns_on_the_line_that_differs_with_the_line_to_write(
    flow: Flow,
) -> None:
    """A hand-merged `occurred: ["2026-04-26", "2026-05-11"]` warned "valid, but not in
    canonical form (a rewrite would change it)" on no line, with nothing to do about it."""
    from test_review import write_approved_entry

    entry = write_approved_entry(flow.repo, "release-tag-prefix", "Release tags need a v prefix.")
    spaced = 'occurred: ["2026-04-26", "2026-05-11"]'
    entry.write_text(entry.read_text().replace('occurred: ["2026-02-01"]', spaced))
    line = entry.read_text().split("\n").index(spaced) + 1

    (finding,) = [
        f for f in flow.op("memory.lint", {})["findings"] if f["rule"] == "format.non-canonical"
    ]
    assert (finding["severity"], finding["line"]) == ("warn", line)
    canonical = 'occurred: ["2026-04-26","2026-05-11"]'
    assert f"the writer writes this line as `{canonical}`: edit it so" in finding["message"]

    entry.write_text(entry.read_text().replace(spaced, canonical))  # as it says
    assert not [f for f in flow.op("memory.lint", {})["findings"] if f["rule"].startswith("format")]


def _staged_under_an_older_rule(flow: Flow) -> str:
    """A candidate whose scene the current rule refuses and no renaming mends
    (`release/notes`): staged before an upgrade, or by a teammate's older teamlore (stage
    refuses such a draft today)."""
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    with flow.state() as conn:
        conn.execute(
            "UPDATE candidates SET payload_json = json_set(payload_json, '$.scene', ?) "
            "WHERE candidate_id = ?",
            ("release/notes", cid),
        )
        conn.commit()
    return cid


def test_a_candidate_blocked_by_a_newer_rule_is_offered_extract_again(flow: Flow) -> None:
    """`memory review` and `memory confirm` said only "discard it", which drops the lesson with
    its turns; `discard --extract-again` (in `discard --help` alone) keeps it."""
    from teamlore.ops.memory.review import short_candidate_id

    cid = _staged_under_an_older_rule(flow)
    short = short_candidate_id(cid)
    discard = f"teamlore memory discard --candidate {short} --reason 'blocked by lint'"
    again = f"{discard} --extract-again"
    item = flow.item(cid)
    assert item["blocked"] and [f["rule"] for f in item["lintFindings"]] == ["slug.scene-name"]

    with pytest.raises(TeamloreError) as named:
        flow.op("memory.confirm", {"candidateIds": [short]})
    error = named.value.to_json()
    assert error["code"] == "LINT_BLOCKED"
    assert (
        f"discard it (`{discard}`), or keep its lesson: with"
        " `--extract-again` it is extracted again" in error["message"]
    )
    assert "Add `--extract-again` to that discard to keep its lesson" in error["next"]
    (left_out,) = error["details"]["leftOut"]
    assert left_out["next"] == discard
    assert left_out["extractAgain"] == again

    # the advice works: its turns go back and recall offers them again
    flow.op("memory.discard", {"candidateId": cid, "extractAgain": True, "reason": "old rule"})
    assert flow.op("memory.recall", {**WINDOW})["sources"]


def test_a_candidate_staged_with_a_scene_name_of_0_1_0_is_written_under_its_new_name(
    flow: Flow,
) -> None:
    """0.1.0 staged `Chess_UI`; this version names scenes `chess-ui`. The candidate was blocked
    (`slug.scene-name`) with only a discard left: its entry is written under the name the
    upgrade's renaming gives it, which the person sees in the entry under review."""
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    with flow.state() as conn:
        conn.execute(
            "UPDATE candidates SET payload_json = json_set(payload_json, '$.scene', ?) "
            "WHERE candidate_id = ?",
            ("Chess_UI", cid),
        )
        conn.commit()
    item = flow.item(cid)
    assert not item["blocked"], item["lintFindings"]
    (written,) = item["files"]
    assert "+scene: chess-ui\n" in written["diff"]  # what the person reviews


def test_the_review_text_names_extract_again_for_a_candidate_blocked_by_lint(flow: Flow) -> None:
    cid = _staged_under_an_older_rule(flow)
    done = teamlore_cli(
        "memory", "review", cwd=flow.repo, env={"TEAMLORE_HOME": str(flow.home), "COLUMNS": "80"}
    )
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())
    assert "blocked slug.scene-name" in shown
    from teamlore.ops.memory.review import short_candidate_id

    # whole at 80 columns: broken before a flag, with the shell's ` \`
    again = (
        f"teamlore memory discard --candidate {short_candidate_id(cid)} \\ "
        "--reason 'blocked by lint' --extract-again"
    )
    assert f"or keep its lesson, extract it again: {again}" in shown
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


def test_a_plan_voided_by_a_target_its_candidate_updates_says_to_extract_it_again(
    flow: Flow,
) -> None:
    """`PROMOTION_TARGET_DRIFT … review and prepare again`: reviewing again led only to
    `memory confirm` refusing the candidate (`TARGET_DRIFT`: discard it with --extract-again).
    Promote now says that step at once, and it works."""
    from test_review import write_approved_entry

    from teamlore.ops.memory.review import short_candidate_id

    target = write_approved_entry(flow.repo, "release-tag-prefix", "Release tags need a v prefix.")
    staged = flow.stage([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    (updater,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    update = {
        "draftRef": updater,
        "action": "update",
        "targetIds": ["release-tag-prefix"],
        "mergedFields": {"content": TEXT},
    }
    flow.adjudicate(staged, [update])
    plan = flow.op("memory.confirm", {})
    assert plan["status"] == "generated", plan
    target.write_text(target.read_text() + "edited by a teammate\n")  # a `git pull`, say

    with pytest.raises(TeamloreError) as voided:
        flow.op("memory.promote", {"planId": plan["planId"]})
    error = voided.value.to_json()
    again = (
        f"teamlore memory discard --candidate {short_candidate_id(updater)} "
        "--reason 'it cannot be promoted as it is' --extract-again"
    )
    assert error["code"] == "PROMOTION_TARGET_DRIFT"
    assert "review and prepare again" not in error["message"]
    assert "was edited since the candidate was adjudicated" in error["message"]
    assert error["message"].endswith(f"discard it and extract it again (`{again}`)")
    assert error["next"] == f"Discard it with `{again}`, then recall."
    assert error["details"]["candidateIds"] == [updater]

    # what it says works, run as printed without a terminal (it refused `needs a reason`):
    # the turns go back and recall offers them again
    done = in_process(
        *shlex.split(again)[1:], cwd=flow.repo, env={"TEAMLORE_HOME": str(flow.home)}, input=""
    )
    assert done.returncode == 0, done.stderr
    assert flow.op("memory.recall", {**WINDOW})["sources"]


def test_status_sends_drafts_an_agent_staged_back_to_stage_not_to_the_runner(flow: Flow) -> None:
    """After `ADJUDICATION_STALE`, `memory status` told an agent-path user to plan the
    adjudication with the batch runner (`memory extract --runner …`); the refusal itself says
    to stage the same draft batch again, which is what moves them on (or a discard)."""
    from test_review import write_approved_entry

    from teamlore.ops.memory.review import short_candidate_id

    drafts = [candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])]
    staged = flow.stage(drafts)
    (draft,) = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    # a teammate's entry saying nearly the same arrives: the task's recall no longer holds
    write_approved_entry(flow.repo, "release-tags-need-a-v", TEXT)
    with pytest.raises(TeamloreError) as stale:
        flow.adjudicate(staged, [store(draft)])
    assert stale.value.code == "ADJUDICATION_STALE"
    assert "stage the same draft batch again" in stale.value.message

    waiting = flow.op("memory.status", {})["adjudication"]
    assert "--runner" not in waiting["next"], waiting["next"]
    assert waiting["next"].startswith("stage the same draft batch again (`teamlore memory stage")
    # the draft it names, with the --reason a discard without a terminal needs (it said
    # `--candidate ID`, and no reason)
    discard = (
        f"teamlore memory discard --candidate {short_candidate_id(draft)}"
        " --reason 'not adjudicated'"
    )
    assert waiting["next"].endswith(f"or discard it (`{discard}`)")
    assert waiting["unplannedDrafts"] == 1 and waiting["stagedDraftIds"] == [draft]
    done = teamlore_cli(
        "memory", "status", cwd=flow.repo, env={"TEAMLORE_HOME": str(flow.home), "COLUMNS": "80"}
    )
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())
    assert "memory extract --runner" not in shown
    assert (
        "Adjudication 1 draft awaits adjudication, staged by `memory stage`: stage the same "
        "draft batch again (it answers with the adjudication task to decide), or discard it: "
        "teamlore memory stage --request FILE "
        f"teamlore memory discard --candidate {short_candidate_id(draft)} \\ "
        "--reason 'not adjudicated'"
    ) in shown
    assert max(len(line) for line in done.stdout.splitlines()) <= 80

    # what it says works: the same batch staged again answers with a task that decides
    again = flow.stage(drafts)
    (redrafted,) = [d["candidateId"] for d in again["adjudicationTask"]["drafts"]]
    assert flow.adjudicate(again, [store(redrafted)])["status"] == "staged"
    assert flow.op("memory.status", {})["adjudication"] is None
