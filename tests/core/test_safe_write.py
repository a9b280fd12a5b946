"""The no-follow atomic writer: exact bytes, atomic replacement, CAS, and no symlink crossed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from teamlore.core import errors, safe_write


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    path = tmp_path / "worktree"
    path.mkdir()
    return path


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    return path


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(safe_write.TEMP_PREFIX))


def test_a_write_creates_missing_directories_and_holds_exactly_the_bytes(root: Path) -> None:
    safe_write.write_file(root, ".threadshare/memory/entries/a.md", b"hello\n")

    target = root / ".threadshare/memory/entries/a.md"
    assert target.read_bytes() == b"hello\n"
    assert leftovers(target.parent) == []


def test_a_replacement_is_a_new_inode_and_keeps_the_permission_bits(root: Path) -> None:
    target = root / "a.md"
    target.write_bytes(b"old\n")
    target.chmod(0o600)
    before = target.stat().st_ino

    safe_write.write_file(root, "a.md", b"new\n")

    assert target.read_bytes() == b"new\n"
    assert target.stat().st_ino != before  # renamed into place, never rewritten in place
    assert target.stat().st_mode & 0o777 == 0o600


def test_read_returns_none_for_an_absent_file_or_directory(root: Path) -> None:
    assert safe_write.read_file(root, "missing/dir/a.md") is None
    (root / "here").mkdir()
    assert safe_write.read_file(root, "here/a.md") is None


@pytest.mark.parametrize(
    "path",
    [
        "../escape.md",
        "a/../../escape.md",
        "/etc/passwd",
        "a//b.md",
        "./a.md",
        "a/./b.md",
        "a/",
        "",
        "a\\b.md",
        "a\x00b.md",
    ],
)
def test_paths_that_escape_or_are_not_normalized_are_refused(root: Path, path: str) -> None:
    for call in (
        lambda: safe_write.write_file(root, path, b"x"),
        lambda: safe_write.read_file(root, path),
        lambda: safe_write.delete_file(root, path),
    ):
        with pytest.raises(errors.TeamloreError) as refused:
            call()
        assert refused.value.code == "UNSAFE_PATH"
    assert list(root.iterdir()) == []
    assert not (root.parent / "escape.md").exists()


@pytest.mark.parametrize("linked", [".threadshare", ".threadshare/memory", "memory-less"])
def test_a_symlinked_directory_on_the_way_is_refused_and_nothing_lands_behind_it(
    root: Path, outside: Path, linked: str
) -> None:
    link = root / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside, target_is_directory=True)
    relative = f"{linked}/entries/a.md"

    with pytest.raises(errors.TeamloreError) as refused:
        safe_write.write_file(root, relative, b"x")
    assert refused.value.code == "UNSAFE_PATH"
    assert "symbolic link" in refused.value.message
    with pytest.raises(errors.TeamloreError):
        safe_write.read_file(root, relative)
    assert list(outside.iterdir()) == []


def test_a_symlinked_target_file_is_never_followed_replaced_or_deleted(
    root: Path, outside: Path
) -> None:
    secret = outside / "victim.md"
    secret.write_bytes(b"keep me\n")
    (root / "a.md").symlink_to(secret)

    for call in (
        lambda: safe_write.read_file(root, "a.md"),
        lambda: safe_write.write_file(root, "a.md", b"x"),
        lambda: safe_write.delete_file(root, "a.md"),
    ):
        with pytest.raises(errors.TeamloreError) as refused:
            call()
        assert refused.value.code == "UNSAFE_PATH"
    assert (root / "a.md").is_symlink()
    assert secret.read_bytes() == b"keep me\n"
    assert leftovers(root) == []


def test_a_target_that_is_not_a_regular_file_is_refused(root: Path) -> None:
    os.mkfifo(root / "pipe.md")
    with pytest.raises(errors.TeamloreError) as refused:
        safe_write.read_file(root, "pipe.md")
    assert refused.value.code == "UNSAFE_PATH"


def test_a_file_over_the_read_cap_is_replaced_or_deleted_when_nothing_needs_reading_it(
    root: Path,
) -> None:
    """The cap guards what is read; a write or delete without an expectation reads nothing, and
    a caller whose files may be large lifts it (`max_bytes=None`)."""
    big = b"x" * (safe_write.MAX_READ_BYTES + 1)
    (root / "big.json").write_bytes(big)
    safe_write.write_file(root, "big.json", b"small\n")
    assert (root / "big.json").read_bytes() == b"small\n"

    (root / "big.json").write_bytes(big)
    with pytest.raises(errors.TeamloreError) as refused:
        safe_write.write_file(root, "big.json", b"new", expect=lambda now: now == big)
    assert refused.value.code == "UNSAFE_PATH" and "larger than" in refused.value.message
    safe_write.write_file(
        root, "big.json", big + b"y", expect=lambda now: now == big, max_bytes=None
    )
    assert (root / "big.json").stat().st_size == len(big) + 1

    assert safe_write.delete_file(root, "big.json") is True
    assert not (root / "big.json").exists()
    assert leftovers(root) == []


def test_a_false_expectation_leaves_the_target_untouched(root: Path) -> None:
    (root / "a.md").write_bytes(b"theirs\n")

    with pytest.raises(safe_write.ExpectationFailed) as failed:
        safe_write.write_file(root, "a.md", b"ours\n", expect=lambda now: now == b"old\n")

    assert failed.value.current == b"theirs\n"
    assert (root / "a.md").read_bytes() == b"theirs\n"
    assert leftovers(root) == []


def test_a_file_created_concurrently_is_not_overwritten_by_a_create(root: Path) -> None:
    def someone_creates_it_first(now: bytes | None) -> bool:
        assert now is None
        (root / "a.md").write_bytes(b"concurrent\n")  # lands between the check and the link
        return True

    with pytest.raises(safe_write.ExpectationFailed):
        safe_write.write_file(root, "a.md", b"ours\n", expect=someone_creates_it_first)

    assert (root / "a.md").read_bytes() == b"concurrent\n"
    assert leftovers(root) == []


def test_a_symlink_swapped_in_after_the_check_is_refused_not_replaced(
    root: Path, outside: Path
) -> None:
    (root / "a.md").write_bytes(b"old\n")
    victim = outside / "victim.md"
    victim.write_bytes(b"keep me\n")

    def swap_in_a_symlink(now: bytes | None) -> bool:
        (root / "a.md").unlink()
        (root / "a.md").symlink_to(victim)
        return True

    with pytest.raises(errors.TeamloreError) as refused:
        safe_write.write_file(root, "a.md", b"new\n", expect=swap_in_a_symlink)

    assert refused.value.code == "UNSAFE_PATH"
    assert (root / "a.md").is_symlink()
    assert victim.read_bytes() == b"keep me\n"


def test_delete_unlinks_a_file_checks_the_expectation_and_reports_absence(root: Path) -> None:
    (root / "a.md").write_bytes(b"old\n")

    with pytest.raises(safe_write.ExpectationFailed):
        safe_write.delete_file(root, "a.md", expect=lambda now: now == b"other\n")
    assert (root / "a.md").exists()

    assert safe_write.delete_file(root, "a.md", expect=lambda now: now == b"old\n") is True
    assert not (root / "a.md").exists()
    assert safe_write.delete_file(root, "a.md") is False
