"""What a person running the batch runner unattended is told next (docs/runner.md): `memory
status` names the adjudication plan its waiting drafts need (or that none exists yet); a manifest
approved twice at once has one approval run it and print the one adjudication plan, the other
refused. Real CLI, real SQLite, fake runner executables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from runner_world import WINDOW, World, make_world
from test_runner_e2e import answer

from support import refusal_lines, teamlore_cli


def _text(world: World, *args: str) -> tuple[int, str, str]:
    proc = teamlore_cli(
        *args, cwd=world.repo, env={**world.fake.env(), **world.env, "COLUMNS": "80"}
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_memory_status_names_the_adjudication_plan_the_drafts_wait_for(
    tmp_path: Path, home: Path
) -> None:
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    manifest = world.plan()["manifest"]["manifestDigest"]
    code, ran = world.approve(manifest, "--approve-manifest")
    assert code == 0, ran
    shared = ran["adjudicationPlan"]["planDigest"]

    code, status = world.cli("memory", "status")

    assert code == 0, status
    assert status["candidates"]["draft"] == 2
    assert status["adjudication"] == {
        "drafts": 2,
        "plans": [shared],
        "unplannedDrafts": 0,
        "stagedDraftIds": [],
        "next": f"teamlore memory extract --approve-plan {shared}",
    }
    code, out, err = _text(world, "memory", "status")
    assert code == 0, err
    assert "Adjudication 2 drafts await adjudication; approve its plan:" in out
    assert f"  teamlore memory extract --approve-plan {shared}\n" in out
    assert max(len(line) for line in out.splitlines() if shared not in line) <= 80

    world.run_approved(shared)
    code, status = world.cli("memory", "status")
    assert status["adjudication"] is None  # nothing waits once it ran


def test_memory_status_says_how_to_move_on_drafts_an_agent_staged(
    tmp_path: Path, home: Path
) -> None:
    """Drafts an agent staged (`memory stage`) and never adjudicated have no runner plan, and
    need none: status says to stage the same draft batch again (what ADJUDICATION_STALE says),
    or to discard them, not to plan them with the batch runner."""
    from teamlore.ops.runner.waiting import stage_again

    world = make_world(tmp_path, home)
    code, recalled = world.op("memory.recall", WINDOW)
    assert code == 0, recalled
    task = recalled["sources"][0]
    code, staged = world.op("memory.stage", json.loads(answer(task)))
    assert code == 0 and staged["status"] == "adjudication-required", staged

    code, status = world.cli("memory", "status")

    assert code == 0, status
    assert status["adjudication"]["plans"] == []
    assert status["adjudication"]["unplannedDrafts"] == 1
    assert len(status["adjudication"]["stagedDraftIds"]) == 1
    assert status["adjudication"]["next"] == stage_again(status["adjudication"]["stagedDraftIds"])
    code, out, err = _text(world, "memory", "status")
    assert code == 0, err
    assert "staged by `memory stage`: stage the same draft batch again" in " ".join(out.split())
    assert "  teamlore memory stage --request FILE\n" in out
    assert "--runner" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_manifest_approved_twice_at_once_is_run_and_reported_by_the_first_alone(
    tmp_path: Path, home: Path
) -> None:
    """Two overlapping cron jobs approve one manifest: the second refuses at once
    (RUNNER_PLAN_BUSY) instead of printing an adjudication plan of its own that misses the
    drafts the first one staged; the first's plan covers every draft."""
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    manifest = world.plan()["manifest"]["manifestDigest"]
    world.fake.mode("slow")
    before = len(world.fake.sent())  # the probe's
    first = subprocess.Popen(
        [sys.executable, "-m", "teamlore.cli.main", "memory", "extract",
         "--approve-manifest", manifest, "--format", "json"],
        cwd=world.repo, env={**os.environ, **world.fake.env()}, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while len(world.fake.sent()) < before + 1:
        assert time.monotonic() < deadline, "the runner never received its task"
        time.sleep(0.05)

    code, second = world.approve(manifest, "--approve-manifest")
    text_code, _, said = _text(world, "memory", "extract", "--approve-manifest", manifest)

    world.fake.release()
    out, _ = first.communicate(timeout=120)
    assert code == 1 and second["error"]["code"] == "RUNNER_PLAN_BUSY", second
    assert "adjudicationPlan" not in second
    assert text_code == 1
    assert refusal_lines(said) == [
        f"error RUNNER_PLAN_BUSY: manifest {manifest[:12]}… is being approved by another "
        "teamlore process",
        "  next: Let that approval finish: it prints the adjudication plan the manifest's "
        "drafts share (`teamlore memory status` names it too).",
    ]
    ran = json.loads(out)
    assert first.returncode == 0 and ran["failed"] == 0, out
    assert ran["adjudicationPlan"]["disclosure"]["drafts"] == 2
    assert len(world.fake.sent()) == before + 2  # each extraction sent once


def _opened_while_waiting(fifos: list[Path], stop: threading.Event, opened: list[Path]) -> None:
    """Note each FIFO a reader opens (a writer's non-blocking open succeeds only then) and
    feed it garbage so the reader goes on."""
    left = list(fifos)
    while left and not stop.is_set():
        for fifo in list(left):
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: nobody reads it
                continue
            opened.append(fifo)
            left.remove(fifo)
            os.write(fd, b"not json")
            os.close(fd)
        time.sleep(0.005)


def test_memory_status_reads_no_plan_whose_run_record_says_it_ran(
    tmp_path: Path, home: Path
) -> None:
    """Plans are kept after they ran (docs/runner.md "Plans that ran"), so `memory status`
    decides by the small run record alone and never opens the body of a plan that ran: every
    done plan's body here is a FIFO that a read would block on."""
    world = make_world(tmp_path, home, sessions=2)
    world.reverify()
    manifest = world.plan()["manifest"]["manifestDigest"]
    code, ran = world.approve(manifest, "--approve-manifest")
    assert code == 0, ran
    shared = ran["adjudicationPlan"]["planDigest"]
    done = [row["planDigest"] for row in ran["results"]]
    assert len(done) == 2
    for digest in done:
        world.plan_path(digest).unlink()
        os.mkfifo(world.plan_path(digest), 0o600)
    opened: list[Path] = []
    stop = threading.Event()
    watcher = threading.Thread(
        target=_opened_while_waiting, args=([world.plan_path(d) for d in done], stop, opened)
    )
    watcher.start()
    try:
        code, status = world.op("memory.status", {})
    finally:
        stop.set()
        watcher.join()

    assert code == 0, status
    assert opened == []
    assert status["adjudication"]["plans"] == [shared]
