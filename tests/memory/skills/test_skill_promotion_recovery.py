"""A Skill's promotion a crash interrupted is finished by the next `memory status`, as an entry's
is (docs/memory.md, promotion journal), in a process that loads the Skill kind's hooks itself."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from test_skill_flow import SKILL_PATH, op, recall, skill_candidate

from support import release_repository, teamlore_cli


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


def test_memory_status_in_a_new_process_finishes_a_skill_plan_a_crash_interrupted(
    repo: Path, home: Path
) -> None:
    op(repo, home, "memory.stage", skill_candidate(recall(repo, home)))
    plan_id = op(repo, home, "memory.confirm", {"kind": "skill"})["planId"]
    killed = teamlore_cli(
        "memory",
        "promote",
        "--plan",
        plan_id,
        cwd=repo,
        env={"TEAMLORE_FAILPOINT": "promotion.after-mark"},
    )
    assert killed.returncode == -9, killed.stdout + killed.stderr

    shown = teamlore_cli("memory", "status", "--format", "json", cwd=repo)

    assert shown.returncode == 0, shown.stdout
    (resumed,) = orjson.loads(shown.stdout)["promotionRecovery"]["resumed"]
    assert (resumed["planId"], resumed["status"]) == (plan_id, "applied"), resumed
    assert [f["targetPath"] for f in resumed["files"]] == [SKILL_PATH]
    assert (repo / SKILL_PATH).read_text().startswith('---\nname: "shop-release"\n')
