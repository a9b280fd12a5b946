"""The browser's advice on a refusal (ui/advice.py): a command it names runs as printed."""

from __future__ import annotations

import re

from teamlore.core import errors
from teamlore.ui.advice import ADVICE


def test_each_discard_it_names_gives_its_reason_so_it_runs_without_a_terminal() -> None:
    """`memory discard` without a terminal refuses a discard without `--reason` (it cannot be
    undone); the advice to discard and extract again named none."""
    named = {
        code: re.findall(r"`(teamlore memory discard [^`]*)`", advice)
        for code, advice in ADVICE.items()
    }
    discards = [command for commands in named.values() for command in commands]
    assert discards, "no advice names a discard"
    assert all(" --reason " in command for command in discards), discards
    assert named[errors.TARGET_DRIFT.code] == [
        "teamlore memory discard --candidate ID --reason 'it cannot be promoted as it is'"
        " --extract-again"
    ]
