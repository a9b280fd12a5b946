"""A plan that no longer matches what it would send now (RUNNER_PLAN_MISMATCH, docs/runner.md
"Plans and approval"): the refusal names what changed; a plan whose task, coverage or bytes to
send changed is swept from `runner-plans/` with its lock (never one another approval holds),
one whose runner profile alone changed (the approving shell's) is kept. Real CLI, real SQLite,
fake runner executables."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from runner_world import World, make_world, rewrite_first_message

from teamlore.contracts.digests import plan_digest
from teamlore.core.canonical import digest


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home)


def _planned_by_an_older_teamlore(world: World, digest_: str, dropped: str) -> str:
    """The plan as a teamlore whose runner command line lacked `dropped` would have written it
    (the codex profile gained `--json`): its profile document, profile id and digest follow."""
    data = json.loads(world.plan_path(digest_).read_text())
    data["profile"]["argv"].remove(dropped)
    plan = data["plan"]
    name, _, _ = plan["runnerProfile"].rpartition(":")
    plan["runnerProfile"] = f"{name}:{digest(data['profile'])}"
    plan["planDigest"] = plan_digest(plan)
    world.plan_path(plan["planDigest"]).write_text(json.dumps(data))
    return str(plan["planDigest"])


def test_a_plan_made_with_another_command_line_names_what_changed(world: World) -> None:
    world.fake.install("codex")
    world.reverify("codex")
    current = world.plan("codex")["plans"][0]["planDigest"]
    old = _planned_by_an_older_teamlore(world, current, "--json")

    code, out = world.approve(old)

    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH", out
    message = out["error"]["message"]
    assert (
        "the runner's profile changed since the plan: the runner's command line: --json added"
        in (message)
    ), message
    assert "model, endpoint, limits or version" not in message
    assert out["error"]["details"]["changed"] == ["runnerProfile"]
    assert world.plan_path(old).exists()  # a profile alone may be another shell's


def test_a_plan_in_another_versions_format_says_so_and_is_kept(world: World) -> None:
    """Its task, coverage, bytes and profile are this teamlore's: it was refused as 'the bytes
    to send changed', which they had not."""
    world.reverify()
    current = world.plan()["plans"][0]["planDigest"]
    data = json.loads(world.plan_path(current).read_text())
    plan = data["plan"]
    assert plan["format"] == "threadshare-memory-runner-execution-plan@v1"
    plan["format"] = "threadshare-memory-runner-execution-plan@v2"  # as another version made it
    plan["planDigest"] = old = plan_digest(plan)
    world.plan_path(old).write_text(json.dumps(data))

    code, out = world.approve(old)

    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_OUTDATED", out
    assert out["error"]["message"] == (
        f"plan {old[:12]}… was made by another teamlore version (its format is "
        "threadshare-memory-runner-execution-plan@v2, this version makes "
        "threadshare-memory-runner-execution-plan@v1 of it; what it sends is unchanged); make "
        "a new plan with `teamlore memory extract --runner …` and approve that"
    )
    assert out["error"]["details"]["changed"] == ["format"]
    assert world.plan_path(old).exists()
    assert world.approve(current)[0] == 0  # this version's plan of the same bytes runs


def test_a_plan_whose_bytes_to_send_changed_is_swept_with_its_lock(world: World) -> None:
    world.reverify()
    old = world.plan()["plans"][0]["planDigest"]
    folder = world.plan_path(old).parent
    rewrite_first_message(world.sessions[0])
    world.resync()

    code, first = world.approve(old)
    assert code == 1 and first["error"]["code"] == "RUNNER_PLAN_MISMATCH", first
    assert not world.plan_path(old).exists()
    assert not (folder / f"{old}.lock").exists()
    # approved again, it still says why it cannot run (not "no such plan")
    code, again = world.approve(old)
    assert code == 1 and again["error"]["code"] == "RUNNER_PLAN_MISMATCH", again
    assert again["error"]["message"] == first["error"]["message"]
    # a new plan of the same sessions runs
    assert world.approve(world.plan()["plans"][0]["planDigest"])[0] == 0


def test_a_void_plan_another_approval_holds_is_left_alone(world: World) -> None:
    world.reverify()
    old = world.plan()["plans"][0]["planDigest"]
    rewrite_first_message(world.sessions[0])
    world.resync()
    lock = os.open(world.plan_path(old).parent / f"{old}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, out = world.approve(old)
        assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_BUSY", out
        assert world.plan_path(old).exists()
    finally:
        os.close(lock)


def test_a_plan_whose_limits_alone_changed_is_kept(world: World) -> None:
    """The limits come from the approving shell's environment (TEAMLORE_RUNNER_TIMEOUT_S): the
    same plan approved where they match again still runs."""
    world.reverify()
    plan = world.plan()["plans"][0]["planDigest"]
    world.env = {"TEAMLORE_RUNNER_TIMEOUT_S": "300"}
    world.reverify()

    code, out = world.approve(plan)
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH", out
    assert "timeout 600 s → 300 s" in out["error"]["message"]
    assert world.plan_path(plan).exists()

    world.env = {}
    world.reverify()  # the record follows the limits too
    assert world.approve(plan)[0] == 0


def test_a_plan_made_where_a_passed_variable_was_set_is_kept_where_it_is_not(
    world: World,
) -> None:
    """Which allow-listed variables are set (HTTPS_PROXY, …) is the approving shell's: a shell
    without the proxy is refused, and the shell the plan was made in runs it."""
    world.env = {"HTTPS_PROXY": "http://proxy.invalid:3128"}
    world.reverify()
    plan = world.plan()["plans"][0]["planDigest"]
    world.env = {}
    world.reverify()

    code, out = world.approve(plan)
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH", out
    assert out["error"]["details"]["changed"] == ["runnerProfile"]
    assert world.plan_path(plan).exists()

    world.env = {"HTTPS_PROXY": "http://proxy.invalid:3128"}
    world.reverify()
    assert world.approve(plan)[0] == 0
