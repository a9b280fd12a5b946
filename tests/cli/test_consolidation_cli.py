"""What a person sees of a consolidation in the terminal: synthesize, review --kind
consolidation (each operation as current vs proposed), confirm --kind consolidation, status."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import orjson
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory" / "consolidation"))
from consolidation_world import SCENE, World, update_scene_and_create_doctrine

from support import teamlore_in_pty


@pytest.fixture()
def world(tmp_path: Path, home: Path) -> World:
    return World(tmp_path, home)


def test_review_confirm_and_status_read_as_a_person_expects(world: World) -> None:
    code, synthesized = world.cli_json("memory", "synthesize", "--full")
    assert code == 0
    patch = orjson.dumps(update_scene_and_create_doctrine(synthesized["task"])).decode()
    assert world.cli("memory", "stage", "--request", "-", input=patch).returncode == 0

    review = world.cli("memory", "review", "--kind", "consolidation")
    assert review.returncode == 0, review.stderr
    text = review.stdout
    assert "UPDATE scene team-memory-design; CREATE doctrine doctrine" in text
    assert "    Target: .threadshare/memory/scenes/team-memory-design.md" in text
    assert "    --- current" in text and "    +++ proposed" in text
    assert "    (file does not exist)" in text  # the doctrine is new
    assert "needs your confirmation" in text

    status = world.cli("memory", "status").stdout
    assert "awaiting review" in status

    code, confirmed = teamlore_in_pty(
        "memory", "confirm", "--kind", "consolidation", answers=["y"] * 4, cwd=world.root
    )
    assert code == 0, confirmed
    assert "Plan " in confirmed and "doctrine.md (new)" in confirmed
    plan_id = confirmed.split(" generated (", 1)[0].rsplit("Plan ", 1)[1]
    promoted = world.cli("memory", "promote", "--plan", plan_id)
    assert promoted.returncode == 0, promoted.stderr
    assert "\nheat: 2\n" in world.read(SCENE).decode()
    status = world.cli("memory", "status").stdout
    # the run's id as review shows ids (its 64 hex cut to 12): the line stays readable
    assert re.search(
        r"^Consolidation baseline run-consolidate-[0-9a-f]{12}, 0 approved entries new\s+since ",
        status,
        re.MULTILINE,
    ), status
    nothing = world.cli("memory", "synthesize").stdout
    assert "No consolidation task: no approved entries are new or changed" in nothing


def test_confirm_refuses_a_drifted_consolidation_with_its_code(world: World) -> None:
    _, synthesized = world.cli_json("memory", "synthesize", "--full")
    patch = orjson.dumps(update_scene_and_create_doctrine(synthesized["task"])).decode()
    world.cli("memory", "stage", "--request", "-", input=patch)
    world.write(SCENE, world.read(SCENE) + b"\n- edited by hand")
    done = world.cli("memory", "confirm", "--kind", "consolidation", "--yes")
    assert done.returncode == 1 and "CONSOLIDATION_DRIFT" in done.stderr
    review = world.cli("memory", "review", "--kind", "consolidation").stdout
    assert "drift" in review and "scene team-memory-design changed since synthesize" in review
    # the discard it names is the candidate's, as review shows it (it said `--candidate ID`),
    # and runs as printed without a terminal (with the --reason that needs)
    printed = re.findall(r"`(teamlore memory discard [^`]*)`", done.stderr)
    assert printed and "--candidate ID" not in done.stderr
    # review prints the same command to copy, and the step after it in words (it printed
    # `…--reason "…", then synthesize again` as the command: the shell took the rest for args)
    lines = review.splitlines()
    at = lines.index("  discard it, then synthesize again:")
    shown: list[str] = []
    for line in lines[at + 1 :]:
        shown.append(line.strip().removesuffix("\\").strip())
        if not line.endswith("\\"):
            break
    assert shlex.split(" ".join(shown)) == shlex.split(printed[0]), lines[at:]
    discarded = world.cli(*shlex.split(printed[0])[1:], input="")
    assert discarded.returncode == 0, discarded.stderr
    assert discarded.stdout.startswith("Discarded patch-consolidate-")
