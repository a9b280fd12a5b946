"""RUNNER_PLAN_OUTDATED's reason for every combination of what differs between a plan and the
one this teamlore makes of the same inputs (docs/runner.md, approving a plan, step 4).

The reason is asked of `outdated_why` directly: through the CLI a plan whose fields all equal
this version's plan differs at most in its digest only when another version computes the
digest otherwise, and this version refuses such a file before (`RUNNER_PLAN_INVALID`, its plan
does not verify), so the empty case cannot be made here. The format case through the CLI is
tests/runner/test_runner_plan_voids.py's."""

from __future__ import annotations

import pytest

from teamlore.ops.runner.run import outdated_why

OURS = "threadshare-memory-runner-execution-plan@v1"
THEIRS = "threadshare-memory-runner-execution-plan@v2"


@pytest.mark.parametrize(
    ("changed", "why"),
    [
        ([], "this version computes its digest differently"),
        (["runnerId"], "this version fills in runnerId differently"),
        (["model", "runnerId"], "this version fills in model and runnerId differently"),
        (
            ["endpoint", "model", "runnerId"],
            "this version fills in endpoint, model and runnerId differently",
        ),
        (["format"], f"its format is {THEIRS}, this version makes {OURS} of it"),
        (["format", "model"], f"its format is {THEIRS}, this version makes {OURS} of it"),
    ],
)
def test_the_reason_reads_whole_for_whatever_differed(changed: list[str], why: str) -> None:
    said = outdated_why(changed, THEIRS, OURS)
    assert said == why
    assert "  " not in said and not said.endswith(" ")
