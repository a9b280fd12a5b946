"""A Skill has one `contentDigest` in every checkout of a commit: in a `core.autocrlf=true`
checkout (Windows: SKILL.md has CRLF in the worktree, git holds it with LF) it is the digest of
the text with CRLF read as LF, the sha256 of the LF checkout's bytes. So an update drafted
against one checkout is promoted in the other, and a digest recorded in a CRLF checkout before
teamlore read it so still names the file there. Real git, real state."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_skill_flow import existing_skill, op, promote_skill, recall, skill_candidate

from support import git, release_repository
from teamlore.core.canonical import sha256_hex

SKILL_MD = ".threadshare/memory/skills/shop-release/SKILL.md"


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    """The release repository with the Skill shop-release committed with LF line ends."""
    root = release_repository(tmp_path, home)
    existing_skill(root)
    git(root, "add", "--", SKILL_MD)
    git(root, "commit", "-q", "-m", "skill: shop-release")
    return root


def check_out_with_crlf(repo: Path) -> bytes:
    """SKILL.md checked out again with `core.autocrlf=true`: its bytes, now with CRLF."""
    git(repo, "config", "core.autocrlf", "true")
    (repo / SKILL_MD).unlink()
    git(repo, "checkout", "--", SKILL_MD)
    data = (repo / SKILL_MD).read_bytes()
    assert b"\r\n" in data
    return data


def test_an_update_drafted_in_the_lf_checkout_is_promoted_in_the_crlf_one(
    repo: Path, home: Path
) -> None:
    lf_digest = sha256_hex((repo / SKILL_MD).read_bytes())
    recalled = recall(repo, home)
    assert recalled["skillContext"]["skills"][0]["contentDigest"] == lf_digest
    op(repo, home, "memory.stage", skill_candidate(recalled, action="update", expected=lf_digest))

    check_out_with_crlf(repo)
    assert recall(repo, home)["skillContext"]["skills"][0]["contentDigest"] == lf_digest
    assert promote_skill(repo, home)["status"] == "applied"
    assert b"Run `pytest tests/test_release.py`" in (repo / SKILL_MD).read_bytes()


def test_a_digest_recorded_in_a_crlf_checkout_before_still_names_the_file_there(
    repo: Path, home: Path
) -> None:
    recalled = recall(repo, home)
    crlf_digest = sha256_hex(check_out_with_crlf(repo))  # what recall showed there before
    candidate = skill_candidate(recalled, action="update", expected=crlf_digest)
    op(repo, home, "memory.stage", candidate)
    assert promote_skill(repo, home)["status"] == "applied"
