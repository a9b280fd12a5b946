"""A promotion applied, as `memory promote` and `memory status` (which finishes a promotion a
kill interrupted) both show it: each file and what happened to it, the candidates promoted and
the step after (`git status`, then commit). One rendering, so the two never say it apart."""

from __future__ import annotations

from typing import Any

from teamlore.cli.output import (
    say,
    say_file,
    say_ignored_by_git,
    say_wrapped,
    styled,
    wrapped_lines,
)

_OUTCOME_WORDS = {
    "written": "written",
    "deleted": "deleted",
    "already-present": "already had the approved bytes",
    "already-applied": "applied earlier",
}


def render_promoted(result: dict[str, Any], *, ignored: bool = True) -> None:
    """Under the line naming the plan: each file and what happened to it, the candidates
    promoted, and the step after (`git status`, commit). `memory status` renders a plan it
    finished with this too; `ignored=False` where the caller lists what git ignores itself."""
    for f in result["files"]:
        say_file(f["targetPath"], f": {_OUTCOME_WORDS[f['outcome']]}")
    if result["candidates"]:
        from teamlore.ops.memory.review import short_candidate_id

        names = ", ".join(short_candidate_id(c["candidateId"]) for c in result["candidates"])
        say_wrapped(f"Promoted candidates: {names}")
    projection = result.get("projection") or {}
    if projection.get("error"):
        error = projection["error"]
        lead = "projection not refreshed"
        first, *rest = wrapped_lines(
            f"{lead} ",
            f"{error['code']}: {error['message']} (run `teamlore memory status` or promote again)",
        )
        say(styled(lead, "yellow"), first[len(lead) :])
        for line in rest:
            say(line)
    say_wrapped(result["git"])
    if ignored:
        say_ignored_by_git(result["ignoredByGit"])
