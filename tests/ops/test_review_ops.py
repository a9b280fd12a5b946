"""review/prepare/discard through the registry and the real `teamlore` executable."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "promotion"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_review import TEXT, Flow, candidate, request_for, store, write_approved_entry

from support import teamlore_cli
from teamlore.core.errors import TeamloreError
from teamlore.ops.registry import OpContext, load_operations


@pytest.fixture()
def flow(tmp_path: Path, home: Path) -> Flow:
    return Flow(tmp_path, home)


def test_registered_with_their_capabilities() -> None:
    registry = load_operations()
    shapes = {
        name: (op.capability, op.mcp_tool, op.side_effect)
        for name, op in registry.operations.items()
        if name in ("memory.review", "memory.prepare", "memory.discard")
    }
    assert shapes == {
        "memory.review": ("team", "threadshare_memory_review", "read"),
        "memory.prepare": ("team", "threadshare_memory_prepare", "state-write"),
        "memory.discard": ("team", "threadshare_memory_discard", "state-write"),
    }
    # read-only, but it shows candidate text and transcript excerpts: not for team-read clients
    assert registry.get("memory.review") not in registry.for_capability("team-read")
    assert registry.get("memory.review") in registry.for_capability("team")


def cli(flow: Flow, *args: str, stdin: str | None = None) -> tuple[int, dict[str, Any]]:
    done = teamlore_cli(
        "memory",
        *args,
        "--format",
        "json",
        cwd=flow.repo,
        env={"TEAMLORE_HOME": str(flow.home)},
        input=stdin,
    )
    return done.returncode, json.loads(done.stdout)


def test_the_cli_gives_the_operation_results_and_errors(flow: Flow) -> None:
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    code, review = cli(flow, "review")
    assert code == 0 and review == flow.op("memory.review", {})
    code, prepared = cli(
        flow, "prepare", "--request", "-", stdin=json.dumps(request_for(review["items"][0]))
    )
    assert code == 0 and prepared["status"] == "generated"
    assert prepared["files"][0]["preview"] == review["items"][0]["files"][0]["preview"]
    code, refused = cli(flow, "discard", "--candidate", cid, "--revision", "1")
    assert code == 1 and refused["error"]["code"] == "CANDIDATE_STALE"
    code, discarded = cli(flow, "discard", "--candidate", cid, "--reason", "wrong")
    assert code == 0 and discarded["voidedPlanIds"] == [prepared["planId"]]
    code, empty = cli(flow, "review")
    assert empty["items"] == [] and empty["next"] is None


def test_review_text_output_shows_the_statement_and_diff(flow: Flow) -> None:
    flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    done = teamlore_cli("memory", "review", cwd=flow.repo, env={"TEAMLORE_HOME": str(flow.home)})
    assert done.returncode == 0
    assert "needs your confirmation" in done.stdout and "+++ b/.threadshare" in done.stdout


def test_the_text_view_says_the_claim_support_is_what_the_entry_carries_once_confirmed(
    flow: Flow,
) -> None:
    """`claim support human-confirmed` read as done while both statements below still waited:
    it is what the entry will carry once they are confirmed. Confirmed, it says it plainly."""
    other = "Run the release tests before pushing any tag."
    (cid,) = flow.quarantine(
        [candidate(TEXT, [(TEXT, [flow.turn_ev(1)]), (other, [flow.turn_ev(1)])])]
    )
    env = {"TEAMLORE_HOME": str(flow.home), "COLUMNS": "200"}
    shown = teamlore_cli("memory", "review", cwd=flow.repo, env=env).stdout
    assert (
        "  entry: provenance unknown, claim support human-confirmed once 2 statements are "
        "confirmed, limitations source-local-only"
    ) in shown
    assert flow.item(cid)["claimSupport"] == "human-confirmed"  # JSON: the value, as before

    flow.op("memory.prepare", request_for(flow.item(cid)))  # recorded as human-confirmed
    shown = teamlore_cli("memory", "review", cwd=flow.repo, env=env).stdout
    assert "claim support human-confirmed, limitations " in shown
    assert "once" not in shown


def confirm(flow: Flow, payload: dict[str, Any], answer: Any = None) -> dict[str, Any]:
    ctx = OpContext(cwd=flow.repo, home=flow.home, confirm=answer)
    return load_operations().get("memory.confirm").run(ctx, payload)


def test_confirm_is_cli_only_and_asks_about_each_candidate(flow: Flow) -> None:
    op = load_operations().get("memory.confirm")
    assert (op.capability, op.mcp_tool, op.side_effect) == (None, None, "state-write")
    other = "Run the release tests before pushing any tag to origin."
    evidence = [flow.turn_ev(1)]
    keep, drop = flow.quarantine(
        [candidate(TEXT, [(TEXT, evidence)]), candidate(other, [(other, evidence)])]
    )
    asked: list[str] = []

    def person(item: dict[str, Any]) -> bool:
        asked.append(item["candidateId"])
        return item["candidateId"] == keep

    assert confirm(flow, {}, lambda item: False) == {
        "status": "nothing-confirmed",
        "planId": None,
        "leftOut": [],
    }
    plan = confirm(flow, {}, person)
    assert sorted(asked) == sorted([keep, drop]) and plan["status"] == "generated"
    assert [c["candidateId"] for c in plan["confirmed"]] == [keep]  # the declined one is left


def test_confirm_refuses_before_asking_anything(flow: Flow) -> None:
    flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])

    def never(item: dict[str, Any]) -> bool:
        raise AssertionError("asked although the request is refused")

    with pytest.raises(TeamloreError) as unknown:
        confirm(flow, {"candidateIds": ["nope"]}, never)
    assert unknown.value.code == "CANDIDATE_NOT_FOUND"
    with pytest.raises(TeamloreError) as bad_kind:
        confirm(flow, {"kind": "scene"}, never)
    assert bad_kind.value.code == "INVALID_ARGUMENT"


TASK = "extract-d028d5124c49f73b674ff843c3656427040519731d3c391d03ab419467224bb3"
PATCH = "patch-consolidate-8cb8c2530568880f7aa30d3a0bbae5dfb6a720b502a86e6ecec1c4703cdcb4e7"


def test_a_candidate_is_shown_short_and_named_by_any_unique_abbreviation() -> None:
    from teamlore.ops.memory.review import resolve_candidate_id, short_candidate_id

    known = [f"{TASK}-c1", f"{TASK}-c2", f"{TASK}-c10", PATCH]
    assert short_candidate_id(f"{TASK}-c1") == "extract-d028d5124c49-c1"
    assert short_candidate_id(PATCH) == "patch-consolidate-8cb8c2530568"
    for full in known:  # what the text views show names the candidate it shows
        assert resolve_candidate_id(known, short_candidate_id(full)) == full
        assert resolve_candidate_id(known, full) == full
    assert resolve_candidate_id(known, "extract-D028D512-c1") == f"{TASK}-c1"  # not c10
    assert resolve_candidate_id(known, "patch-consolidate-8cb8c253") == PATCH  # a prefix
    # what names nothing comes back as typed, for the operation's own CANDIDATE_NOT_FOUND
    assert resolve_candidate_id(known, "extract-d028-c1") == "extract-d028-c1"  # < 8 hex
    assert resolve_candidate_id(known, "extract-ffffffff-c1") == "extract-ffffffff-c1"
    with pytest.raises(TeamloreError) as refused:
        resolve_candidate_id(known, "extract-d028d5124c49")  # c1, c2 and c10
    assert refused.value.code == "INVALID_ARGUMENT"
    assert "extract-d028d5124c49 names 3 candidates (extract-d028d5124c49-c1, " in str(
        refused.value
    )


def test_a_merged_candidate_is_named_with_what_it_said_and_where_its_statements_went() -> None:
    """Merging another chunk's candidate discards it when the merge is staged: review names it,
    shows its content (the merged entry keeps only the agent's new wording) and the statements
    it brought, as it names the approved entries a merge rewrites or deprecates."""
    from teamlore.ops.memory.review import shown_to_a_person, what_it_replaces

    merged = {"sourceKind": "candidate", "id": f"{TASK}-c2", "revision": 2, "contentDigest": "0"}
    approved = {"sourceKind": "approved", "id": "tag-prefix", "path": "entries/tag-prefix.md"}
    item = {
        "content": "Release tags carry a v prefix.",
        "statements": [],
        "supersedes": [approved, merged],
        "mergedFrom": [{**merged, "content": "Push v1.2 tags only.", "statementIds": ["m2.s1"]}],
        "files": [{"entryId": "tag-prefix", "role": "update", "targetPath": "x", "diff": ""}],
        "blocked": False,
    }
    assert what_it_replaces(item) == [
        {
            "says": "merges approved entry tag-prefix: its file is rewritten (the diff shows "
            "what it loses)",
            "content": None,
        },
        {
            "says": "merges candidate extract-d028d5124c49-c2: discarded when this one was "
            "staged; its statements are here as m2.s1",
            "content": "Push v1.2 tags only.",
        },
    ]
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    item["mergedFrom"][0]["content"] = f"Push tags with {token}."
    blocked = shown_to_a_person({**item, "blocked": True, "files": []})
    (_, candidate) = what_it_replaces(blocked)
    assert candidate["content"] == "Push tags with ghp_…[40 chars]."
    assert what_it_replaces(blocked)[0]["says"] == "merges approved entry tag-prefix"


SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_confirm_leaves_a_blocked_candidate_out_names_it_and_plans_the_others(flow: Flow) -> None:
    """One candidate holding a token refused every other candidate of the queue
    (`LINT_BLOCKED`), while the page's Plan left it out and prepared the rest."""
    leaky = f"Push release tags with the token {SECRET}."
    keep, blocked = flow.quarantine(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(leaky, [(leaky, [flow.turn_ev(1)])]),
        ]
    )
    asked: list[str] = []

    def person(item: dict[str, Any]) -> bool:
        asked.append(item["candidateId"])
        return True

    plan = confirm(flow, {}, person)
    assert asked == [keep]  # nobody is asked about what cannot be promoted
    assert plan["status"] == "generated" and plan["plan"]["candidateIds"] == [keep]
    (left_out,) = plan["leftOut"]
    assert left_out == {
        "candidateId": blocked,
        "code": "LINT_BLOCKED",
        "why": "blocked by lint (secret.github-token)",
        "next": f"teamlore memory discard --candidate {blocked[:20]}-c2 --reason 'blocked by lint'",
        # a plain discard drops its lesson: what keeps it
        "extractAgain": f"teamlore memory discard --candidate {blocked[:20]}-c2"
        " --reason 'blocked by lint' --extract-again",
    }
    # naming it is asking for it: refused, as `memory prepare` refuses a request naming it
    with pytest.raises(TeamloreError) as named:
        confirm(flow, {"candidateIds": [blocked]}, person)
    assert named.value.code == "LINT_BLOCKED" and "leave it out of --candidate" in str(named.value)
    blocked_item = flow.item(blocked)
    prepared = flow.refused("memory.prepare", request_for(blocked_item))
    assert prepared.code == "LINT_BLOCKED"


def test_confirm_refuses_a_candidate_whose_target_drifted_with_that_drift(flow: Flow) -> None:
    """A chosen candidate whose approved target changed was refused as `LINT_BLOCKED` ("blocked
    by lint: ID (TARGET_DRIFT)"), and a queue holding it and a lint-blocked one named the drift
    as a lint rule."""
    target = write_approved_entry(flow.repo, "release-tag-prefix", "Release tags need a v prefix.")
    leaky = f"Push release tags with the token {SECRET}."
    staged = flow.stage(
        [
            candidate(TEXT, [(TEXT, [flow.turn_ev(1)])]),
            candidate(leaky, [(leaky, [flow.turn_ev(1)])]),
        ]
    )
    updater, blocked = [d["candidateId"] for d in staged["adjudicationTask"]["drafts"]]
    update = {
        "draftRef": updater,
        "action": "update",
        "targetIds": ["release-tag-prefix"],
        "mergedFields": {"content": TEXT},
    }
    flow.adjudicate(staged, [update, store(blocked)])
    target.write_text(target.read_text() + "edited\n")  # the target moved after adjudication

    from teamlore.ops.memory.review import short_candidate_id

    with pytest.raises(TeamloreError) as named:
        confirm(flow, {"candidateIds": [updater]})
    assert named.value.code == "TARGET_DRIFT"
    assert named.value.message == (
        f"{updater}: entry release-tag-prefix was edited since the candidate was adjudicated;"
        f" discard it (`teamlore memory discard --candidate {short_candidate_id(updater)}"
        " --reason 'it cannot be promoted as it is' --extract-again`) or leave it out of"
        " --candidate"
    )

    with pytest.raises(TeamloreError) as every:
        confirm(flow, {})
    by_code = {o["code"]: o for o in every.value.details["leftOut"]}
    assert by_code["LINT_BLOCKED"]["candidateId"] == blocked
    assert by_code["TARGET_DRIFT"]["candidateId"] == updater
    # what `memory confirm` prints after `Left out ID: `, then `; discard it: …`
    assert by_code["TARGET_DRIFT"]["why"] == (
        "entry release-tag-prefix was edited since the candidate was adjudicated"
    )
    message = every.value.message
    assert "TARGET_DRIFT" not in message and "()" not in message
    assert message.startswith(f"{updater}: entry release-tag-prefix was edited since")
    assert message.endswith(f"; also left out: {blocked} (blocked by lint: secret.github-token)")


# a consolidation candidate whose approved entries moved since synthesize (review's row shape)
DRIFTED_CONSOLIDATION = {
    "candidateId": "patch-consolidate-2",
    "blocked": True,
    "lintFindings": [],
    "drift": {
        "code": "CONSOLIDATION_DRIFT",
        "message": "the approved entry files changed since synthesize; synthesize again",
    },
}


def test_a_refusal_names_a_drifted_consolidation_by_its_drift_never_as_empty_lint() -> None:
    """Left out after a lint-blocked candidate, a drifted consolidation was named `ID ()`."""
    from teamlore.ops.memory.review import _confirmable

    finding = {"rule": "secret.github-token", "severity": "block", "file": "", "line": 1}
    leaky = {
        "candidateId": "extract-1-c1",
        "blocked": True,
        "lintFindings": [{**finding, "message": "GitHub token: `ghp_…[40 chars]`"}],
    }
    drifted = DRIFTED_CONSOLIDATION
    with pytest.raises(TeamloreError) as refused:
        _confirmable([leaky, drifted], [])
    assert refused.value.code == "LINT_BLOCKED"
    assert refused.value.message == (
        "blocked by lint: extract-1-c1 (secret.github-token); discard it"
        " (`teamlore memory discard --candidate extract-1-c1 --reason 'blocked by lint'`);"
        " also left out: patch-consolidate-2"
        " (the approved entry files changed since synthesize)"
    )
    assert [c["candidateId"] for c in refused.value.details["candidates"]] == ["extract-1-c1"]


def test_a_drifted_consolidation_refused_alone_says_to_synthesize_again() -> None:
    """The refusal of a drifted consolidation kept only `discard it`; a new synthesize is the
    rest of the way out, and the message is the only advice a person reads."""
    from teamlore.ops.memory.review import _confirmable

    drifted = DRIFTED_CONSOLIDATION
    with pytest.raises(TeamloreError) as refused:
        _confirmable([drifted], [])
    assert refused.value.code == "CONSOLIDATION_DRIFT"
    # the candidate's own id (it said `--candidate ID`), with the --reason a discard without a
    # terminal needs: the command runs as printed
    discard = (
        "teamlore memory discard --candidate patch-consolidate-2"
        " --reason 'team memory changed since it was synthesized'"
    )
    assert refused.value.message == (
        "patch-consolidate-2: the approved entry files changed since synthesize; discard it"
        f" (`{discard}`), then synthesize again"
    )
    assert refused.value.to_json()["next"] == (
        f"Discard it with `{discard}`, then `teamlore memory synthesize`."
    )


def test_a_drifted_consolidation_left_out_says_to_synthesize_again_once() -> None:
    """`memory confirm` printed `Left out ID: … changed since synthesize; synthesize again;
    discard it: teamlore memory discard --candidate ID, then synthesize again`."""
    from teamlore.ops.memory.review import left_out_of_a_plan

    drifted = DRIFTED_CONSOLIDATION
    out = left_out_of_a_plan(drifted)
    assert out == {
        "candidateId": "patch-consolidate-2",
        "code": "CONSOLIDATION_DRIFT",
        "why": "the approved entry files changed since synthesize",
        "next": "teamlore memory discard --candidate patch-consolidate-2 --reason "
        "'team memory changed since it was synthesized', then synthesize again",
    }
    # the line `memory confirm` prints for it (and the page's Plan says the same words)
    assert f"{out['why']}; discard it: {out['next']}".count("synthesize again") == 1


def test_status_says_a_plan_is_void_once_a_merge_consumed_its_candidate(
    tmp_path: Path, home: Path
) -> None:
    """`memory status` listed the plan as prepared (and the page offered Promote) until
    promote refused it with PROMOTION_CANDIDATE_DRIFT."""
    from consumed_world import (
        merge_into_a_later_candidate,
        prepare_plan,
        quarantined_release_candidate,
    )

    from teamlore.ops.memory.promote import current_plan_states

    flow, consumed = quarantined_release_candidate(tmp_path, home)
    plan_id = prepare_plan(flow, consumed)
    assert flow.op("memory.status", {})["plansToPromote"] == [plan_id]
    merger = merge_into_a_later_candidate(flow, consumed)

    status = flow.op("memory.status", {})
    assert status["plansToPromote"] == []
    (voided,) = status["plansVoided"]
    assert voided["planId"] == plan_id and voided["voidCode"] == "PROMOTION_CANDIDATE_DRIFT"
    assert voided["why"] == (
        f"candidate {consumed} was quarantined at revision 2 when the plan was made and is now "
        f"discarded at revision 3: {merger} merged it when it was staged"
    )
    now = current_plan_states(OpContext(cwd=flow.repo, home=home))[plan_id]
    assert now == {
        "status": "voided",
        "voidCode": "PROMOTION_CANDIDATE_DRIFT",
        "voidPath": None,
        "voidMessage": voided["why"],
    }
    refused = flow.refused("memory.promote", {"planId": plan_id})
    assert (refused.code, refused.message.split("; plan voided")[0]) == (
        "PROMOTION_CANDIDATE_DRIFT",
        voided["why"],
    )
    assert flow.op("memory.status", {})["plansVoided"] == []  # the journal says it now


def test_a_queue_line_says_what_a_candidate_does_to_approved_memory() -> None:
    from teamlore.ops.memory.review import what_it_changes

    approved = [
        {"sourceKind": "approved", "id": f"entry-{n}", "path": f"entries/entry-{n}.md"}
        for n in (1, 2)
    ]
    merged = {"sourceKind": "candidate", "id": f"{TASK}-c2"}
    assert what_it_changes({"supersedes": []}) is None  # a new entry
    assert what_it_changes({"supersedes": [merged], "mergedFrom": [merged]}) is None
    assert what_it_changes({"supersedes": approved[:1], "mergedFrom": []}) == "updates 1 entry"
    assert what_it_changes({"supersedes": approved, "mergedFrom": approved}) == "merges 2 entries"
