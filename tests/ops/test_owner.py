"""The owner of an operation: one rule for every operation (glossary: owner).

Inside a git worktree the owner is that worktree; outside any, the one registered worktree below
the directory. Operations that read sessions also need the owner registered.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import make_repo, sync

import teamlore.ops.memory.store  # noqa: F401
from teamlore.core import errors
from teamlore.ops.owner import open_owner, resolve_owner
from teamlore.ops.registry import REGISTRY, OpContext


def refused(call: object) -> str:
    with pytest.raises(errors.TeamloreError) as caught:
        call()  # type: ignore[operator]
    return caught.value.code


def test_inside_a_git_worktree_the_owner_is_that_worktree(tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "shop")
    (repo / "src").mkdir()
    identity = resolve_owner(OpContext(cwd=repo / "src", home=home))
    assert identity.worktree_root == repo.resolve()
    with open_owner(OpContext(cwd=repo, home=home)) as owner:  # registered or not
        assert owner.worktree_key == identity.worktree_key
        assert tuple(owner.state.execute("SELECT 1").fetchone()) == (1,)
        with pytest.raises(RuntimeError, match="sessions=True"):
            owner.index  # noqa: B018 - the index is opened only for operations that need it


def test_reading_sessions_needs_a_registered_worktree(tmp_path: Path, home: Path) -> None:
    front, back = make_repo(tmp_path / "front"), make_repo(tmp_path / "back")
    (tmp_path / "codex").mkdir()
    sync(home, tmp_path / "codex", front)
    with open_owner(OpContext(cwd=front, home=home), sessions=True) as owner:
        assert owner.worktree_root == front.resolve()
        assert tuple(owner.index.execute("SELECT count(*) FROM repositories").fetchone()) == (1,)
    code = refused(lambda: open_owner(OpContext(cwd=back, home=home), sessions=True).__enter__())
    assert code == "REPOSITORY_NOT_REGISTERED"


def test_outside_git_the_owner_is_the_one_registered_worktree_below(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "project"
    front, back = make_repo(project / "front"), make_repo(project / "back")
    (tmp_path / "codex").mkdir()
    sync(home, tmp_path / "codex", front)
    at_project = OpContext(cwd=project, home=home)
    for registered in (True, False):  # the same rule for every operation
        assert resolve_owner_of(at_project, registered) == front.resolve()
    sync(home, tmp_path / "codex", back)
    for registered in (True, False):
        code = refused(lambda r=registered: resolve_owner_of(at_project, r))  # type: ignore[misc]
        assert code == "OWNER_AMBIGUOUS"


def resolve_owner_of(ctx: OpContext, registered: bool) -> Path:
    from teamlore.sessions.index_db import open_index

    index = open_index(ctx.home) if registered else None
    try:
        return resolve_owner(ctx, registered=registered, index=index).worktree_root
    finally:
        if index is not None:
            index.close()


def test_with_no_worktree_anywhere_the_refusal_keeps_its_code_and_creates_nothing(
    tmp_path: Path, home: Path
) -> None:
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    ctx = OpContext(cwd=nowhere, home=home)
    assert refused(lambda: resolve_owner(ctx)) == "NOT_A_GIT_REPOSITORY"
    with pytest.raises(errors.TeamloreError, match="folder `nowhere` is not inside a git"):
        resolve_owner(ctx)  # the folder is named (its name only: no absolute path)
    assert not home.exists()  # a refusal leaves no state dir behind
    # the operations that read sessions say the same (they said OWNER_NOT_FOUND)
    assert refused(lambda: open_owner(ctx, sessions=True).__enter__()) == "NOT_A_GIT_REPOSITORY"


def test_memory_operations_use_the_rule_from_a_folder_holding_one_worktree(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "project"
    front = make_repo(project / "front")
    (tmp_path / "codex").mkdir()
    sync(home, tmp_path / "codex", front)
    REGISTRY.get("memory.init").run(OpContext(cwd=front, home=home), {})
    status = REGISTRY.get("memory.status").run(OpContext(cwd=project, home=home), {})
    inside = REGISTRY.get("memory.status").run(OpContext(cwd=front, home=home), {})
    assert status == inside
