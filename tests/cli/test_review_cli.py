"""`teamlore memory review` in the text view: a person approves only what is on the screen, so
every byte of a candidate (content, statements, the diff of what promotion writes) is there,
wrapped at the terminal's width and never cut, on a real session nobody here wrote."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from memory.promotion.merge_world import DEPRECATED, REWRITTEN, merging_repository
from support import (
    RAVE_ERA_CONTENT,
    RAVE_ERA_STATEMENTS,
    draft_batch,
    in_process,
    rave_era_repository,
    release_repository,
    store_all,
)
from teamlore.ops.registry import OpContext, run_operation


@pytest.fixture(scope="module")
def rave_era(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("rave")
    home = root / "state"
    return rave_era_repository(root, home), home


def review(world: tuple[Path, Path], *args: str, columns: int = 80) -> str:
    repo, home = world
    env = {"TEAMLORE_HOME": str(home), "COLUMNS": str(columns)}
    proc = in_process("memory", "review", *args, cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def words(text: str) -> str:
    """The printed text as one line of words: wrapping only moves words to the next line."""
    return " ".join(text.split())


def unbroken(text: str) -> str:
    """The printed text without any white space: a word longer than the screen is folded (a
    diff line goes on under its marker and `↳`)."""
    return re.sub(r"\s+", "", re.sub(r"\n *[-+ @]↳", "", text))


@pytest.mark.parametrize("columns", [80, 100])
def test_every_word_of_the_candidate_is_on_screen(
    rave_era: tuple[Path, Path], columns: int
) -> None:
    printed = review(rave_era, columns=columns)
    assert words(RAVE_ERA_CONTENT) in words(printed)
    for statement in RAVE_ERA_STATEMENTS.values():
        assert words(statement) in words(printed)


def test_no_line_is_padded_to_the_width(rave_era: tuple[Path, Path]) -> None:
    """Copied or piped, the review is its words: a wrapped line does not end in the blanks that
    filled it to 80 columns (the indented blocks were padded to the terminal's width)."""
    printed = review(rave_era).splitlines()
    # the diff below is folded at exactly 78 cells, so a piece may end in the file's own space
    before_the_diff = printed[: printed.index("  --- /dev/null")]
    assert len(before_the_diff) > 20
    assert not [line for line in before_the_diff if line.endswith(" ")]


def test_the_approval_digest_is_named_in_words(rave_era: tuple[Path, Path]) -> None:
    """It read `confirm one by one; approvalDigest 70c8…`: the JSON field's name."""
    printed = words(review(rave_era))
    assert "approvalDigest" not in printed
    assert re.search(r"confirm one by one; approval digest [0-9a-f]{64}", printed), printed


def test_every_line_fits_the_terminal(rave_era: tuple[Path, Path]) -> None:
    """The file a candidate writes and its approval digest were printed whole on one line,
    past the screen's edge, where a terminal cuts or breaks them anywhere."""
    from rich.cells import cell_len

    printed = review(rave_era).splitlines()
    assert [line for line in printed if cell_len(line) > 80] == []
    assert any(line.startswith("  .threadshare/memory/entries/") for line in printed)


def test_a_merge_names_the_entries_its_promotion_rewrites_and_deprecates(
    tmp_path: Path, home: Path
) -> None:
    """A candidate merging two approved entries said so nowhere but in a `(deprecate)` after
    a file name: a person approved the rewrite of a teammate's entry without being told."""
    repo, _ = merging_repository(tmp_path, home)
    printed = words(review((repo, home)))
    assert (
        f"merges approved entry {REWRITTEN}: its file is rewritten (the diff shows what it loses)"
        in printed
    )
    assert (
        f"merges approved entry {DEPRECATED}: marked deprecated, superseded by {REWRITTEN}"
        in printed
    )


@pytest.mark.parametrize("columns", [80, 40])
def test_a_long_file_name_goes_on_after_a_mark_as_a_folded_diff_line_does(
    rave_era: tuple[Path, Path], columns: int
) -> None:
    """The file a candidate writes was cut mid-word at the screen's edge with nothing to say
    its rest (`run-npm.md (new)`) was not a line of its own; a folded diff line goes on after
    `↳`."""
    repo, home = rave_era
    proc = in_process(
        "memory", "review", "--format", "json", cwd=repo, env={"TEAMLORE_HOME": str(home)}
    )
    file = json.loads(proc.stdout)["items"][0]["files"][0]
    printed = review(rave_era, columns=columns).splitlines()
    at = printed.index("  --- /dev/null")
    start = max(i for i in range(at) if printed[i].startswith("  .threadshare/"))
    assert all(line.startswith("  ↳") for line in printed[start + 1 : at])
    assert at - start > 1  # the name is longer than the screen
    shown = printed[start][2:] + "".join(line[3:] for line in printed[start + 1 : at])
    assert shown == f"{file['targetPath']} ({file['role']})"


def _diff(world: tuple[Path, Path]) -> str:
    repo, home = world
    env = {"TEAMLORE_HOME": str(home)}
    proc = in_process("memory", "review", "--format", "json", cwd=repo, env=env)
    item: dict[str, Any] = json.loads(proc.stdout)["items"][0]
    return str(item["files"][0]["diff"])


@pytest.mark.parametrize("columns", [80, 100])
def test_every_line_of_the_diff_promotion_writes_is_on_screen(
    rave_era: tuple[Path, Path], columns: int
) -> None:
    printed = unbroken(review(rave_era, columns=columns))
    for line in _diff(rave_era).splitlines():
        assert unbroken(line) in printed


def test_a_long_diff_says_how_many_lines_follow_and_how_to_see_them(
    rave_era: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rich.console import Console

    from teamlore.cli import output
    from teamlore.cli.commands import review as review_cmds

    repo, home = rave_era
    proc = in_process(
        "memory", "review", "--format", "json", cwd=repo, env={"TEAMLORE_HOME": str(home)}
    )
    result = json.loads(proc.stdout)
    lines = result["items"][0]["files"][0]["diff"].splitlines()
    monkeypatch.setattr(review_cmds, "DIFF_LINES", 5)

    def render(full_diff: bool) -> str:
        screen = io.StringIO()
        console = Console(file=screen, width=80, markup=False, highlight=False)
        monkeypatch.setattr(review_cmds, "stdout", console)
        monkeypatch.setattr(output, "stdout", console)
        review_cmds._render_review(result, full_diff=full_diff)
        return screen.getvalue()

    shown = render(full_diff=False)
    assert f"… {len(lines) - 5} more lines of this diff" in words(shown)
    assert "teamlore memory review --full-diff" in words(shown)
    whole = unbroken(render(full_diff=True))
    assert all(unbroken(line) in whole for line in lines)


def test_a_folded_diff_line_goes_on_under_its_marker_and_never_cuts_an_escape() -> None:
    """A long added line went on at the next screen line's start, where its rest could read as
    a line of its own (`+++ b/…`), and an escape was cut in two (`\\x0` / `7`)."""
    from rich.console import Console

    from teamlore.cli.commands.review import _diff_text

    line = "+" + "x" * 25 + "\x07" + " +++ b/forged.md" + "y" * 30
    screen = io.StringIO()
    Console(file=screen, width=40).print(_diff_text([line], 30))
    printed = screen.getvalue().splitlines()
    assert [p[:2] for p in printed] == ["+x", "+↳", "+↳"]
    assert "\\x07" in "".join(p[2:] for p in printed)
    assert re.sub(r"\n\+↳", "", screen.getvalue()).rstrip() == line.replace("\x07", "\\x07")


def test_only_a_newline_ends_a_diff_line() -> None:
    """`str.splitlines` also cut at U+2028 and form feeds: the review showed a line break the
    file does not have."""
    from teamlore.cli.commands.review import diff_lines

    assert diff_lines("+one\u2028two\x0cthree\n+four\n") == ["+one\u2028two\x0cthree", "+four"]


def test_a_merge_says_so_on_its_first_line(tmp_path: Path, home: Path) -> None:
    """The head of a candidate read `Candidate … (revision 2)` for a new entry and for a merge
    of two teammates' entries alike; what it merges came after the whole content."""
    repo, candidate_id = merging_repository(tmp_path, home)
    printed = review((repo, home))
    head = f"Candidate {candidate_id[:20]}-c1 (revision 2) · merges 2 entries"
    assert printed.splitlines()[0] == head


def test_a_raw_html_warning_is_shown_with_the_file_it_is_in(tmp_path: Path, home: Path) -> None:
    """A warning of the file promotion writes was on the page only: `memory review` printed
    the diff of `Deploy <service>` without saying GitHub shows `Deploy `."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import WINDOW

    from support import draft_batch, release_repository, store_all
    from teamlore.ops.registry import OpContext, run_operation

    repo = release_repository(tmp_path, home)
    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, dict(WINDOW))["sources"][0]
    text = "Deploy <service> only after the release tests pass."
    staged = run_operation("memory.stage", ctx, draft_batch(task, text))
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))
    printed = words(review((repo, home), columns=200))
    assert "warn format.raw-html: raw HTML `<service>`: GitHub drops it" in printed


# a statement naming local paths: promotion writes each as `{local-path}` (docs/memory.md)
LOCAL_PATHS = (
    "Run the release script from /home/alice/shop/release.sh, or "
    "C:\\Users\\bob\\shop\\release.ps1 on Windows, and read /Users/carol/.netrc first."
)
LOCAL_PATHS_WRITTEN = (
    "Run the release script from {local-path}, or {local-path} on Windows, and read "
    "{local-path} first."
)
LOCAL_PATHS_NOTICE = "3 local references will be written as {local-path}"


def stage_local_paths(repo: Path, home: Path, text: str = LOCAL_PATHS) -> None:
    from recall_world import WINDOW

    from support import draft_batch, store_all
    from teamlore.ops.registry import OpContext, run_operation

    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, dict(WINDOW))["sources"][0]
    staged = run_operation("memory.stage", ctx, draft_batch(task, text))
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))


def test_review_shows_a_statement_as_promotion_writes_it(tmp_path: Path, home: Path) -> None:
    """The review showed `/home/alice/shop/release.sh` and the entry said `{local-path}`: a
    person confirmed one sentence and another went into git. Now the content and each
    statement are shown as written, with a line saying what was replaced."""
    from support import release_repository

    repo = release_repository(tmp_path, home)
    stage_local_paths(repo, home)
    printed = review((repo, home))  # at 80 columns
    assert "/home/alice" not in printed and "C:\\Users\\bob" not in printed
    assert "/Users/carol" not in printed
    # the content (bold, indent 2) and statement s1 (indent 4), each with its notice
    assert words(printed).count(words(LOCAL_PATHS_WRITTEN)) >= 2
    assert f"\n  {LOCAL_PATHS_NOTICE}\n" in printed
    assert f"\n    {LOCAL_PATHS_NOTICE}\n" in printed
    assert "run-the-release-script-from-local-path-or-on-windows-and" in printed
    document = json.loads(review((repo, home), "--format", "json"))
    item = document["items"][0]
    # JSON keeps the staged text (its digest is what a PrepareRequest@v1 echoes)
    assert item["content"] == LOCAL_PATHS and item["statements"][0]["text"] == LOCAL_PATHS
    assert item["writtenContent"] == LOCAL_PATHS_WRITTEN
    assert item["writtenNotice"] == LOCAL_PATHS_NOTICE
    assert item["statements"][0]["writtenText"] == LOCAL_PATHS_WRITTEN
    assert item["statements"][0]["writtenNotice"] == LOCAL_PATHS_NOTICE


def test_a_statement_without_local_references_has_no_notice(
    rave_era: tuple[Path, Path],
) -> None:
    item = json.loads(review(rave_era, "--format", "json"))["items"][0]
    assert item["writtenContent"] == item["content"] and item["writtenNotice"] is None
    assert all(s["writtenText"] == s["text"] for s in item["statements"])
    assert "will be written as" not in review(rave_era)


TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_blocked_candidate_lists_what_else_it_holds_with_its_findings(
    tmp_path: Path, home: Path
) -> None:
    """A candidate the lint blocks for a token also held a home path: the review showed the
    path masked (`{local-path}`) and listed the token alone, as if nothing else were in it. The
    lint finds the path in the text as staged; promotion would write it as {local-path}, so it
    does not block, and a blocked candidate, having no file to show warnings under, lost its
    warnings (`~/…`) as well. Both are listed now, as not blocking."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import WINDOW

    repo = release_repository(tmp_path, home)
    ctx = OpContext(cwd=repo)
    task = run_operation("memory.recall", ctx, {"since": WINDOW["since"], "until": WINDOW["until"]})
    text = f"Push release tags with {TOKEN} from /home/mei/secret/x; notes in ~/release.txt."
    staged = run_operation("memory.stage", ctx, draft_batch(task["sources"][0], text))
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))
    printed = review((repo, home))
    shown = words(printed)
    assert "blocked secret.github-token: GitHub token: `ghp_…[40 chars]`" in shown
    assert (
        "warn path.home-absolute: absolute home path (use a repo-relative path): `/h…[9 chars]`;"
        " does not block: promotion writes it as {local-path} (only a path inside this"
        " repository is kept, made relative)"
    ) in shown
    assert "warn path.home-relative: home-relative path: `~/…[14 chars]`" in shown
    # the home path blocks nothing: the candidate is left out for the token alone
    assert "discard it: teamlore memory discard --candidate extract-" in shown
    assert TOKEN not in printed and "/home/mei" not in printed
    assert max(len(line) for line in printed.splitlines()) <= 80
    (item,) = json.loads(review((repo, home), "--format", "json"))["items"]
    assert [f["rule"] for f in item["lintFindings"]] == ["secret.github-token"]
    assert [(f["rule"], f["severity"]) for f in item["lintWarnings"]] == [
        ("path.home-absolute", "warn"),
        ("path.home-relative", "warn"),
    ]
