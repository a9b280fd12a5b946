"""A runner that misbehaves stages nothing, with a stable code, and the log tells what was sent;
the conformance probe catches each of its nine violation kinds; a missing or logged-out runner
says what to do. Fake runner executables (fault injection: no model exists here)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from runner_world import World, make_world

from support import in_process
from teamlore.runner.conformance import VIOLATION_KINDS, stray_processes


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    """Its commands run in process: these tests are of what a command does with a runner that
    misbehaves (the fake runner is a real process, killed at its limits by teamlore)."""
    made = make_world(tmp_path, home)
    made.commands_in_process = True
    return made


FAULTS = [
    ("hang", "RUNNER_TIMEOUT"),
    ("flood", "RUNNER_OUTPUT_TOO_LARGE"),
    ("exit3", "RUNNER_EXIT_NONZERO"),
    ("prose", "RUNNER_OUTPUT_INVALID"),
    ("foreign", "RUNNER_OUTPUT_REJECTED"),
    ("secret", "RUNNER_OUTPUT_SECRET"),
]


@pytest.mark.parametrize(("mode", "code_expected"), FAULTS)
def test_a_misbehaving_runner_stages_nothing_and_the_log_tells_what_was_sent(
    world: World, mode: str, code_expected: str
) -> None:
    # the hung runner is killed at its limit; a fake that answers does so well within 1.5 s
    world.env = {"TEAMLORE_RUNNER_TIMEOUT_S": "1.5" if mode == "hang" else "3"}
    world.reverify()
    plan = world.plan()["plans"][0]
    world.fake.mode(mode)
    started = time.monotonic()
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == code_expected, out
    assert time.monotonic() - started < 120  # the hard limits held (loose bound, not a timing)
    assert world.candidates() == []
    assert [(r[0], r[1], r[2]) for r in world.authorizations()] == [
        (plan["planDigest"], plan["runnerInputDigest"], plan["bytesToSend"])
    ]
    assert "ghp_" not in json.dumps(out)
    run = json.loads((world.home / "runner-plans" / f"{plan['planDigest']}.run.json").read_text())
    assert run["state"] == "failed" and run["code"] == code_expected
    # nothing lost: the same approval runs again once the runner behaves
    world.fake.mode("good")
    code, out = world.approve(plan["planDigest"])
    assert code == 0 and out["results"][0]["candidates"] == 1
    assert len(world.candidates()) == 1


def test_the_probe_fails_a_runner_that_leaves_processes_or_files_behind(world: World) -> None:
    for mode, failure in (("linger", "background-process"), ("write", "in-task-write")):
        world.fake.mode(mode)
        script = world.fake.path
        assert script is not None
        # the fake misbehaves on the probe only in these modes when told to
        script.write_text(
            script.read_text().replace("probe and mode not in", "False and mode not in")
        )
        code, out = world.op("memory.reverify_runner", {"runner": "claude"})
        assert code == 1 and out["error"]["code"] == "RUNNER_CONFORMANCE_FAILED"
        assert failure in out["error"]["details"]["failures"]
    world.fake.install("claude", "bad-probe")
    code, out = world.op("memory.reverify_runner", {"runner": "claude"})
    assert code == 1 and out["error"]["code"] == "RUNNER_CONFORMANCE_FAILED"
    plan = world.plan()["plans"][0]
    assert world.approve(plan["planDigest"])[1]["error"]["code"] == "RUNNER_NOT_CONFORMANT"


@pytest.mark.parametrize("kind", VIOLATION_KINDS)
def test_the_probe_detects_each_of_the_nine_violation_kinds(world: World, kind: str) -> None:
    """conformance-test@2 (docs/runner.md "Conformance"): the fake does what the probe's injected
    instruction asks for one kind — shell, reading or writing in or outside its working directory,
    MCP, HTTP, TCP, a background process — and the probe names exactly that kind."""
    world.fake.mode(f"probe-{kind}")
    code, out = world.op("memory.reverify_runner", {"runner": "claude"})
    assert code == 1 and out["error"]["code"] == "RUNNER_CONFORMANCE_FAILED", out
    assert out["error"]["details"]["failures"] == [kind]
    if kind == "background-process":  # the probe killed what the runner left behind
        assert stray_processes("TEAMLORE-BG-") == []


def test_a_record_of_the_older_probe_no_longer_counts(world: World) -> None:
    """A pass of conformance-test@1 (four kinds) is invalid: reverify is required."""
    assert world.reverify()["testVersion"] == "conformance-test@2"
    with world.state() as conn:
        conn.execute("UPDATE runner_conformance SET test_version = 'conformance-test@1'")
        conn.commit()
    plan = world.plan()["plans"][0]
    code, out = world.approve(plan["planDigest"])
    assert code == 1 and out["error"]["code"] == "RUNNER_NOT_CONFORMANT"
    assert "reverify-runner" in out["error"]["message"]
    world.reverify()
    assert world.approve(plan["planDigest"])[0] == 0


def test_a_missing_binary_is_a_stable_refusal(world: World) -> None:
    code, out = world.cli(
        "memory",
        "extract",
        "--runner",
        "codex",
        "--since",
        "2026-03-01",
        "--until",
        "2026-03-08",
        env={"TEAMLORE_CODEX_BIN": str(world.tmp / "nowhere" / "codex")},
    )
    assert code == 1 and out["error"]["code"] == "RUNNER_BINARY_NOT_FOUND"
    assert str(world.tmp) not in out["error"]["message"]


@pytest.mark.parametrize("kind", ["codex", "claude"])
def test_a_runner_that_is_not_logged_in_says_how_to_log_in(world: World, kind: str) -> None:
    """A failed probe shows the end of the runner's stderr (sanitized, bounded) and the login
    command, not only an exit status."""
    world.fake.install(kind, "logged-out")
    proc = in_process(
        "memory", "reverify-runner", "--runner", kind, cwd=world.repo,
        env={**world.fake.env(), **world.env, "COLUMNS": "80"},
    )  # fmt: skip
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 1, proc.stdout
    assert f"RUNNER_EXIT_NONZERO: {kind} exited with status 1; stderr ends:" in said
    assert "Not logged in" in said and said.count("starting session") <= 2
    login = "run `codex login`" if kind == "codex" else "run `claude` once and log in"
    assert login in said
    assert "/tmp" not in said and str(world.home) not in said, said
