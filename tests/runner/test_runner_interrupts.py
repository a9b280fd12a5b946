"""An approval stopped while its runner had the bytes (docs/runner.md "Limits and failures"):
Ctrl-C says what it left and what to run next, and records the plan as never to be sent again
at once; a SIGKILLed teamlore's scratch folder, which may hold a copy of the caller's login, is
removed by the next run. Real processes, real signals, fake runner executables."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from runner_world import World, make_world


def _approve_in_background(world: World, flag: str, digest: str) -> subprocess.Popen[str]:
    env = {**os.environ, **world.fake.env(), **world.env, "COLUMNS": "80"}
    return subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.main", "memory", "extract", flag, digest],
        cwd=world.repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal delivers it, also when this suite runs as a background job (a
        # shell starts one with SIGINT ignored, and Python then never raises KeyboardInterrupt)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _running(world: World, digest: str) -> int:
    """Wait until the plan's runner has its task; its process group."""
    record = world.home / "runner-plans" / f"{digest}.run.json"
    deadline = time.monotonic() + 60
    while not (record.exists() and "pgid" in json.loads(record.read_text())) or not (
        world.fake.sent()
    ):
        assert time.monotonic() < deadline, "the runner never received its task"
        time.sleep(0.05)
    return int(json.loads(record.read_text())["pgid"])


def _record(world: World, digest: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(
        (world.home / "runner-plans" / f"{digest}.run.json").read_text()
    )
    return loaded


def test_ctrl_c_says_what_it_left_and_how_to_run_the_rest(tmp_path: Path, home: Path) -> None:
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    manifest = preview["manifest"]["manifestDigest"]
    first = preview["plans"][0]["planDigest"]
    world.fake.mode("hang")
    approval = _approve_in_background(world, "--approve-manifest", manifest)
    _running(world, first)

    approval.send_signal(signal.SIGINT)  # what Ctrl-C sends teamlore (the runner has a session
    _, err = approval.communicate(timeout=60)  # of its own)

    said = " ".join(err.split())
    assert approval.returncode == 130, err
    assert "interrupted" in said and "never sent again" in said, err
    assert f"teamlore memory extract --approve-manifest {manifest}` runs them" in said
    assert _record(world, first)["state"] == "indeterminate"  # now, not at the next approval
    world.fake.mode("good")
    code, out = world.approve(manifest, "--approve-manifest")
    statuses = {r["planDigest"]: r["status"] for r in out["results"]}
    assert code == 1 and statuses[first] == "failed", out
    assert sorted(statuses.values()) == ["done", "failed"]


def test_a_sigkilled_runs_scratch_folder_and_its_login_copy_go_with_the_next_run(
    tmp_path: Path, home: Path
) -> None:
    """A `claude login` (no API key) is copied into the run's scratch folder; teamlore killed
    with SIGKILL cannot remove it, so the next runner start does."""
    world = make_world(tmp_path, home)
    scratch_root = tmp_path / "tmp"
    scratch_root.mkdir()
    login = tmp_path / "claude-config"
    login.mkdir()
    (login / ".credentials.json").write_text('{"claudeAiOauth": {"accessToken": "sk-x"}}')
    world.env = {"TMPDIR": str(scratch_root), "CLAUDE_CONFIG_DIR": str(login)}
    world.reverify()
    plan = world.plan()["plans"][0]["planDigest"]
    world.fake.mode("hang")
    victim = _approve_in_background(world, "--approve-plan", plan)
    pgid = _running(world, plan)
    (left,) = [p for p in scratch_root.iterdir() if p.name.startswith("teamlore-runner-")]
    assert (left / "home" / ".claude" / ".credentials.json").exists()

    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=30)
    deadline = time.monotonic() + 30
    while _group_alive(pgid):
        assert time.monotonic() < deadline, "the runner outlived teamlore"
        time.sleep(0.05)
    assert (left / "home" / ".claude" / ".credentials.json").exists()

    world.fake.mode("good")
    code, out = world.approve(plan)
    assert code == 1 and out["error"]["code"] == "RUNNER_PLAN_INDETERMINATE"
    assert not left.exists()
    assert [p.name for p in scratch_root.iterdir() if p.name.startswith("teamlore-runner-")] == []


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie leader still counts; look at its state
        return Path(f"/proc/{pgid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def test_ctrl_c_before_the_runner_starts_leaves_the_plan_to_approve_again(
    tmp_path: Path, home: Path
) -> None:
    """Nothing has left before the runner starts: the text view promises that "a plan stopped
    before it was sent can be approved again", and the plan is not `indeterminate`."""
    world = make_world(tmp_path, home)
    world.reverify()
    digest = world.plan()["plans"][0]["planDigest"]
    flag = tmp_path / "authorized.flag"
    world.env = {"TEAMLORE_PAUSEPOINT": f"runner.authorized={flag}"}
    sent = len(world.fake.sent())
    approval = _approve_in_background(world, "--approve-plan", digest)
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert time.monotonic() < deadline and approval.poll() is None, "never reached the point"
        time.sleep(0.02)

    approval.send_signal(signal.SIGINT)
    _, err = approval.communicate(timeout=60)

    assert approval.returncode == 130, err
    assert "can be approved again" in " ".join(err.split())
    assert len(world.fake.sent()) == sent
    assert _record(world, digest)["state"] == "failed"
    world.env = {}
    code, out = world.approve(digest)
    assert code == 0 and out["results"][0]["candidates"] == 1, out
    assert len(world.fake.sent()) == sent + 1


def test_ctrl_c_after_the_runner_answered_says_the_plan_may_have_reached_the_provider(
    tmp_path: Path, home: Path
) -> None:
    """Ctrl-C after the runner returned and before its answer was staged: the provider had the
    bytes, but the record is still `running` (no longer `notSentYet`), and the manifest's
    summary said "stopped before it was sent; approve it again"."""
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    preview = world.plan()
    manifest = preview["manifest"]["manifestDigest"]
    digest = preview["plans"][0]["planDigest"]
    flag = tmp_path / "answered.flag"
    world.env = {"TEAMLORE_PAUSEPOINT": f"runner.answered={flag}"}
    sent = len(world.fake.sent())
    approval = _approve_in_background(world, "--approve-manifest", manifest)
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert time.monotonic() < deadline and approval.poll() is None, "never reached the point"
        time.sleep(0.02)

    approval.send_signal(signal.SIGINT)
    out, err = approval.communicate(timeout=60)

    assert approval.returncode == 130, err
    assert len(world.fake.sent()) == sent + 1  # the runner had its task
    record = _record(world, digest)
    assert record["state"] == "running" and "notSentYet" not in record, record
    said = " ".join((out + err).split())
    assert "may have reached the provider" in said, out + err
    assert "can be approved again" not in said, out + err
    assert "interrupted" in out and "not-started" in out, out
