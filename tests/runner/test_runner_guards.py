"""What a walk of the batch runner found, over the `openai` runner and a scripted model on
127.0.0.1 (real HTTP, real SQLite, real git): every text an answer can stage passes the secret
scan; a candidate the lint blocks never shows its secret in the review text; the runner takes
its model profile's `timeout_s`; an unverified runner profile is said before approval, with what
changed and the command that verifies it, and once for a whole manifest (docs/runner.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from runner_world import World, make_world
from test_runner_e2e import _task_in, answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "consolidation"))
from consolidation_world import World as ConsolidationWorld
from consolidation_world import operation, patch_for, scene_text
from recall_world import WINDOW
from scripted_server import RecordedRequest, Scripted, ScriptedServer

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
PREVIEW = "ghp_…[40 chars]"


def _profile(home: Path, base_url: str, *lines: str) -> Path:
    """A `[models.runner]` table in the state dir's config.toml (what the openai runner uses)."""
    config = home / "config.toml"
    home.mkdir(mode=0o700, exist_ok=True)
    before = config.read_text() if config.exists() else ""
    table = "\n".join(
        ["", "[models.runner]", f'base_url = "{base_url}"', 'model = "scripted-model"', *lines]
    )
    config.write_text(before + table + "\n")
    return config


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- item 2: a consolidation answer holding a secret --------------------------------------------


@pytest.mark.parametrize("field", ["newContent", "rationale"])
def test_a_consolidation_answer_holding_a_secret_is_refused_and_nothing_is_staged(
    tmp_path: Path, home: Path, field: str
) -> None:
    tree = ConsolidationWorld(tmp_path, home)

    def reply(request: RecordedRequest) -> Scripted:
        task = _task_in(request.json())
        if not task["format"].endswith("consolidation-task@v1"):
            return Scripted.chat(answer(task))  # the conformance probe
        patch = json.loads(answer(task))
        patch["operations"][0][field] += f"\nPush with {SECRET} when the CI asks.\n"
        return Scripted.chat(json.dumps(patch))

    with ScriptedServer() as server:
        server.respond_with(reply)
        _profile(home, server.base_url)
        # the probe and the plan are steps on the way, run in this process; the approval,
        # what is checked, is the command
        tree.op("memory.reverify_runner", {"runner": "openai"})
        (plan,) = tree.op("memory.consolidate_preview", {"runner": "openai"})["plans"]
        before = tree.state()
        done = tree.cli("memory", "consolidate", "--approve-plan", plan["planDigest"])
        text = tree.cli(
            "memory", "consolidate", "--approve-plan", plan["planDigest"], "--format", "json"
        )

    assert done.returncode == 1, done.stdout
    error = json.loads(text.stdout)["error"]
    assert error["code"] == "RUNNER_OUTPUT_SECRET"
    assert error["details"]["field"] == f"operations[0].{field}"
    assert error["details"]["rule"] == "secret.github-token"
    printed = _one_line(done.stderr)
    assert "error RUNNER_OUTPUT_SECRET: the runner's answer holds a secret.github-token" in printed
    assert f"in operations[0].{field}; nothing was staged" in printed
    assert "ghp_" not in done.stdout + done.stderr + text.stdout
    # nothing staged, nothing of the secret stored
    assert tree.state() == before
    assert tree.op("memory.review", {"kind": "consolidation"})["count"] == 0
    for name in ("memory-state.sqlite3", "memory-state.sqlite3-wal"):
        stored = home / name
        assert not stored.exists() or SECRET.encode() not in stored.read_bytes()


def test_review_text_shows_a_blocked_candidates_secret_by_its_preview(
    tmp_path: Path, home: Path
) -> None:
    """A consolidation an agent staged (the MCP path, which the lint blocks rather than refuses):
    `memory review` at 80 columns names the finding and shows the secret by its preview in the
    scene text and in the diff, as the `blocked` line does; JSON keeps the text."""
    tree = ConsolidationWorld(tmp_path, home)
    task = tree.synthesize(full=True)["task"]
    ids = [e["entryId"] for e in task["entries"]]
    body = f"## Pushing\n- Push release tags with {SECRET}.\n"
    scene = scene_text("How releases are pushed", body)
    tree.stage(
        patch_for(task, [operation("op-scene", "create", "scene", "pushing", scene, ids[:2])])
    )

    done = tree.cli("memory", "review", "--kind", "consolidation", env={"COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    printed = done.stdout
    assert SECRET not in printed and SECRET[:12] not in printed
    assert "blocked secret.github-token" in printed
    assert printed.count(PREVIEW) >= 3  # the statement, the diff and the blocked line
    assert f"Push release tags with {PREVIEW}." in printed
    assert f"+- Push release tags with {PREVIEW}." in printed
    review = tree.op("memory.review", {"kind": "consolidation"})
    assert SECRET in json.dumps(review)  # the JSON view is not redacted


# -- item 5: the profile's timeout_s ------------------------------------------------------------


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return make_world(tmp_path, home, sessions=2)


def _slow(seconds: float, tasks: int | None = None) -> Any:
    """Answers each task `seconds` late (only the first `tasks` tasks, when given); the
    conformance probe at once."""
    slowed = 0

    def reply(request: RecordedRequest) -> Scripted:
        nonlocal slowed
        task = _task_in(request.json())
        delay = 0.0
        if not task["taskId"].startswith("conformance") and (tasks is None or slowed < tasks):
            delay, slowed = seconds, slowed + 1
        return Scripted.chat(answer(task), delay=delay)

    return reply


def test_the_openai_runner_takes_its_profiles_timeout_and_names_it(world: World) -> None:
    with ScriptedServer() as server:
        server.respond_with(_slow(4.0))
        _profile(world.home, server.base_url, "timeout_s = 0.5")
        world.reverify("openai")
        plan = world.plan("openai")["plans"][0]
        code, out = world.approve(plan["planDigest"])
    # the model answers in 4 s: well within the 600 s default, not within the profile's 0.5 s
    assert code == 1 and out["error"]["code"] == "RUNNER_TIMEOUT", out
    assert "0.5 s limit (timeout_s of [models.runner])" in out["error"]["message"]
    assert out["error"]["details"]["timeoutSetting"] == "timeout_s of [models.runner]"
    assert world.candidates() == []


def test_the_runner_timeout_variable_wins_over_the_profile(world: World) -> None:
    with ScriptedServer() as server:
        # the first task's answer takes 1 s: over the profile's 0.5 s, within the variable's 30 s
        server.respond_with(_slow(1.0, tasks=1))
        _profile(world.home, server.base_url, "timeout_s = 0.5")
        world.env = {"TEAMLORE_RUNNER_TIMEOUT_S": "30"}
        world.reverify("openai")
        plan = world.plan("openai")["plans"][0]
        code, out = world.approve(plan["planDigest"])
        assert code == 0, out
        server.respond_with(_slow(1.0, tasks=1))
        world.env = {"TEAMLORE_RUNNER_TIMEOUT_S": "0.5"}
        world.reverify("openai")
        plan = world.plan("openai")["plans"][0]
        rc, _, stderr = world.text("memory", "extract", "--approve-plan", plan["planDigest"])
    assert rc == 1
    printed = _one_line(stderr)
    assert "error RUNNER_TIMEOUT:" in printed
    assert "0.5 s limit (TEAMLORE_RUNNER_TIMEOUT_S)" in printed
    assert "timeout_s" not in printed  # the advice names what governs, not the profile


# -- item 6: an unverified runner profile ---------------------------------------------------------


def test_an_unverified_runner_is_said_before_approval_and_once_for_a_manifest(
    world: World,
) -> None:
    with ScriptedServer() as server:
        server.respond_with(_slow(0.0))
        _profile(world.home, server.base_url)
        rc, preview_text, _ = world.text(
            "memory",
            "extract",
            "--runner",
            "openai",
            "--since",
            WINDOW["since"],
            "--until",
            WINDOW["until"],
        )
        preview = world.plan("openai")
        assert preview["runnerConformance"]["verified"] is False
        assert preview["runnerConformance"]["reverify"] == (
            "teamlore memory reverify-runner --runner openai"
        )
        assert rc == 0
        warned = _one_line(preview_text)
        assert (
            "warn the openai runner was never verified for model scripted-model at "
            f"{server.base_url}; run `teamlore memory reverify-runner --runner openai` before "
            "you approve" in warned
        )
        manifest = preview["manifest"]["manifestDigest"]
        plans = len(preview["plans"])
        assert plans >= 2
        rc, stdout, stderr = world.text("memory", "extract", "--approve-manifest", manifest)
        code, out = world.approve(manifest, "--approve-manifest")
        assert server.requests == []  # nothing was sent
    assert rc == 1 and code == 1
    assert "Runner results" not in stdout and stdout.count("never verified") == 0
    lines = stderr.strip().splitlines()
    assert len([line for line in lines if "never verified" in line]) == 1
    printed = _one_line(stderr)
    assert f"(the same for all {plans} plans)" in printed
    assert "next: Run the `reverify-runner` command the message names" in printed
    # JSON stays complete: each plan with its refusal
    assert len(out["results"]) == plans
    assert {r["error"]["code"] for r in out["results"]} == {"RUNNER_NOT_CONFORMANT"}
    assert out["error"]["code"] == "RUNNER_NOT_CONFORMANT" and out["error"]["sameForAll"]
    assert world.authorizations() == []


def test_a_changed_profile_says_what_changed_not_the_version(world: World) -> None:
    with ScriptedServer() as server:
        server.respond_with(_slow(0.0))
        config = _profile(world.home, server.base_url)
        world.reverify("openai")
        verified = world.plan("openai")
        assert verified["runnerConformance"]["verified"] is True
        # the same server under another name: a new endpoint, the same model and version
        other = server.base_url.replace("127.0.0.1", "localhost")
        config.write_text(config.read_text().replace(server.base_url, other))
        plan = world.plan("openai")
        assert plan["runnerConformance"]["changed"] == [f"endpoint {server.base_url} → {other}"]
        code, out = world.approve(plan["plans"][0]["planDigest"])
        assert code == 1 and out["error"]["code"] == "RUNNER_NOT_CONFORMANT"
        message = out["error"]["message"]
        assert "never verified" not in message and "version" not in message
        assert f"not for this profile (endpoint {server.base_url} → {other})" in message
        # back to the verified endpoint, with another limit: the limit is what changed
        config.write_text(config.read_text().replace(other, server.base_url))
        world.env = {"TEAMLORE_RUNNER_TIMEOUT_S": "3"}
        plan = world.plan("openai")
        code, out = world.approve(plan["plans"][0]["planDigest"])
        assert code == 1 and out["error"]["code"] == "RUNNER_NOT_CONFORMANT"
        assert "changed since it was verified (timeout 600 s → 3 s)" in out["error"]["message"]
        assert "version" not in out["error"]["message"]
        # an endpoint given on the command line is part of the command that verifies it
        world.env = {}
        code, out = world.cli(
            "memory",
            "extract",
            "--runner",
            "openai",
            "--runner-endpoint",
            other,
            "--since",
            WINDOW["since"],
            "--until",
            WINDOW["until"],
        )
        assert out["runnerConformance"]["reverify"] == (
            f"teamlore memory reverify-runner --runner openai --runner-endpoint {other}"
        )


def test_a_pass_recorded_before_profiles_were_kept_says_so_and_a_stale_plan_names_the_profile(
    world: World,
) -> None:
    """An upgrade: the openai runner's pass was recorded by a teamlore that kept no profile, and
    this one reads the profile's `timeout_s` too. The refusal said 'its binary or profile; now
    0.1.0' (nothing the user changed), and the plan made before 'the bytes to send changed'."""
    import sqlite3

    with ScriptedServer() as server:
        server.respond_with(_slow(0.0))
        config = _profile(world.home, server.base_url)
        world.reverify("openai")
        before = world.plan("openai")["plans"][0]["planDigest"]
        with sqlite3.connect(world.home / "memory-state.sqlite3") as db:
            db.execute("UPDATE runner_conformance SET verified_profile = NULL")
        config.write_text(config.read_text() + "timeout_s = 90\n")
        code, out = world.approve(before)
        assert code == 1 and out["error"]["code"] == "RUNNER_NOT_CONFORMANT"
        assert "recorded by an older teamlore" in out["error"]["message"]
        world.reverify("openai")
        code, out = world.approve(before)
        assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_MISMATCH"
        assert "the runner's profile changed" in out["error"]["message"]
        assert out["error"]["details"]["changed"] == ["runnerProfile"]


def test_an_unusable_runner_endpoint_is_refused_as_the_option_given(world: World) -> None:
    """It was checked only after the profile read it as OPENAI_BASE_URL: the refusal named a
    variable the person never set and sent them to config.toml."""
    endpoint = ["--runner", "openai", "--runner-endpoint", "ftp://llm.example/v1"]
    window = ["--since", WINDOW["since"], "--until", WINDOW["until"]]
    for command in (
        ["memory", "extract", *endpoint, *window],
        ["memory", "reverify-runner", *endpoint],
    ):
        code, out = world.cli(*command)
        assert code == 2 and out["error"] == {
            "code": "INVALID_ARGUMENT",
            "message": "--runner-endpoint: base_url must be an http:// or https:// URL",
            "problem": "--runner-endpoint: base_url must be an http:// or https:// URL",
            "next": "Correct the value the message names (`--help` shows what it accepts).",
        }, command
