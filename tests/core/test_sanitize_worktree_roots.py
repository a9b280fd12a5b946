"""`sanitize_text` with the roots of a worktree: its root and the prefixes the user's
`[paths] aliases` map to it (docs/sessions.md). A path under any of them is a path in this
repository, written relative to it; a path under none of them stays a local path."""

from __future__ import annotations

from teamlore.core.secrets import sanitize_text

ROOTS = ("/home/rae/src/shop", "C:\\Users\\YAROSLAV\\RAVE-ERA", "/Users/soph/Work/entire/devenv")


def test_a_path_under_a_windows_alias_is_made_relative_with_slashes() -> None:
    text = "the form posts to C:\\Users\\YAROSLAV\\RAVE-ERA\\src\\app\\api\\register\\route.ts now"
    assert sanitize_text(text, worktree_root=ROOTS) == (
        "the form posts to src/app/api/register/route.ts now"
    )


def test_a_windows_alias_matches_forward_slashes_any_case_and_json_escaping() -> None:
    assert sanitize_text("[a](c:/users/yaroslav/rave-era/lib/tickets.ts)", worktree_root=ROOTS) == (
        "[a](lib/tickets.ts)"
    )
    escaped = '"C:\\\\Users\\\\YAROSLAV\\\\RAVE-ERA\\\\app\\\\page.tsx"'
    assert sanitize_text(escaped, worktree_root=ROOTS) == '"app/page.tsx"'


def test_a_posix_alias_and_the_root_itself_are_made_relative_alike() -> None:
    text = "/Users/soph/Work/entire/devenv/src/app/api/register and /home/rae/src/shop/src/a.ts"
    assert sanitize_text(text, worktree_root=ROOTS) == "src/app/api/register and src/a.ts"
    assert sanitize_text("cd C:\\Users\\YAROSLAV\\RAVE-ERA && npm i", worktree_root=ROOTS) == (
        "cd . && npm i"
    )


def test_a_path_beside_an_alias_or_with_only_the_root_stays_a_local_path() -> None:
    sibling = "C:\\Users\\YAROSLAV\\RAVE-ERA-old\\route.ts"
    assert sanitize_text(sibling, worktree_root=ROOTS) == "{local-path}"
    aliased = "C:\\Users\\YAROSLAV\\RAVE-ERA\\src\\route.ts"
    assert sanitize_text(aliased, worktree_root="/home/rae/src/shop") == "{local-path}"


def test_sanitizing_with_roots_is_idempotent() -> None:
    text = "see C:\\Users\\YAROSLAV\\RAVE-ERA\\src\\x.ts and /Users/soph/Work/entire/devenv"
    once = sanitize_text(text, worktree_root=ROOTS)
    assert sanitize_text(once, worktree_root=ROOTS) == once == "see src/x.ts and ."


def test_a_path_that_climbs_out_of_a_root_is_not_made_relative() -> None:
    """`C:\\repo\\..\\..\\Users\\bob\\secret.txt` became `../../Users/bob/secret.txt`: a path
    outside the repository written as if relative to it."""
    for text in ("C:\\repo\\..\\..\\Users\\bob\\secret.txt", "/home/me/shop/../other/x"):
        shown = sanitize_text(text, worktree_root=("/home/me/shop", "C:\\repo"))
        assert not shown.startswith(("..", "./")), shown
    assert sanitize_text("/home/me/shop/../other/x", worktree_root="/home/me/shop") == (
        "{local-path}"
    )


def test_a_sibling_named_after_a_root_is_not_taken_for_it() -> None:
    """Windows names a copy `repo (1)` or `repo - Copy`: they read as `. (1)\\x`."""
    for sibling in ("C:\\repo (1)\\x", "C:\\repo - Copy\\x", "C:\\repo+b\\x", "C:\\repo@v2\\x"):
        assert sanitize_text(sibling, worktree_root="C:\\repo") == sibling


def test_a_drive_or_a_home_folder_is_never_a_root() -> None:
    """An alias mapping `D:\\` or a home folder to the worktree made every path under it
    relative (`D:\\Users\\bob\\k.txt` -> `Users/bob/k.txt`) and `Build ID: 7` `Build I. 7`."""
    roots = ("/home/me/shop", "D:", "/home/bob")
    assert sanitize_text("PID: 5, Build ID: 7", worktree_root=roots) == "PID: 5, Build ID: 7"
    for text in ("D:\\Users\\bob\\k.txt", "/home/bob/.ssh/id_rsa"):
        assert sanitize_text(text, worktree_root=roots) == "{local-path}"
