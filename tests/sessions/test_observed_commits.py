"""Commit hashes observed in shell tool results (sessions/commits.py)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from teamlore.sessions import commits
from teamlore.sessions.commits import ObservedCommit, observe_commits

SUMMARY = "[main 1a2b3c4] Add the parser\n 1 file changed, 2 insertions(+)\n"
FULL = "0123456789abcdef0123456789abcdef01234567"


def test_a_commit_summary_line_is_observed_from_a_commit_command() -> None:
    assert observe_commits("git commit -m 'x'", SUMMARY) == [ObservedCommit("1a2b3c4", False, True)]


def test_full_hashes_count_after_any_git_command_in_any_case() -> None:
    for command in ("git log -1", "cd repo && GIT.exe show", "(Git rev-parse HEAD)", "gİt log"):
        assert observe_commits(command, FULL + "\n") == [ObservedCommit(FULL, True, False)]


def test_output_of_commands_that_run_no_git_observes_nothing() -> None:
    for command in (None, "", "echo git", "legit stuff", "ls digits", "gitk --all", "git"):
        assert observe_commits(command, SUMMARY + FULL) == []


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="gitGIT\u0130\u0131\u0307 \t\n;&|(.exe-x", max_size=40))
def test_the_git_precheck_agrees_with_the_regex_alone(command: str) -> None:
    assert commits._runs_git(command) == (commits._GIT.search(" " + command) is not None)


# the plain pattern full hashes were found with: 40 lowercase hex digits, no hex digit next to them
PLAIN_FULL = re.compile(r"(?<![0-9a-fA-F])([0-9a-f]{40})(?![0-9a-fA-F])")
hexish = st.lists(
    st.sampled_from([FULL, FULL.upper(), FULL[:39], "7" * 40, "a", "F", "0", " ", "\n", "-", "é"]),
    max_size=6,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(hexish)
def test_full_hashes_are_found_as_the_plain_pattern_finds_them(output: str) -> None:
    expected = list(dict.fromkeys(m.group(1) for m in PLAIN_FULL.finditer(output)))
    assert [c.hash for c in observe_commits("git log", output) if c.is_full] == expected


def test_a_hash_with_a_hex_digit_next_to_it_is_no_full_hash() -> None:
    output = f"{FULL}\nnot {FULL}0 nor A{FULL} nor {FULL.upper()}\n{'1' * 40}\n"
    assert observe_commits("git log", output) == [
        ObservedCommit(FULL, True, False),
        ObservedCommit("1" * 40, True, False),
    ]
