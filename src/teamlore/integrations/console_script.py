"""The interpreter a console script (`<venv>/bin/teamlore`) starts: pip writes its path into the
script's first line, so a virtualenv moved elsewhere leaves scripts that name a Python no longer
there (the shell then says "not found", exit 127, of the script that is there)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

SHELL_WRAPPER = "#!/bin/sh"  # pip's form for an interpreter path too long for a `#!` line
HEAD_BYTES = 1024


def script_interpreter(script: Path) -> str | None:
    """The absolute interpreter path `script`'s first lines name: `#!/path/python`, or pip's
    `#!/bin/sh` + `'''exec' "/path/python" "$0" "$@"` form. None: it names none this can read
    (not a script, `#!/usr/bin/env python3`, a relocatable one that finds its Python itself)."""
    try:
        with open(script, "rb") as handle:
            head = handle.read(HEAD_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    if head[0].strip() == SHELL_WRAPPER and len(head) > 1 and head[1].startswith("'''exec' "):
        words = _words(head[1].removeprefix("'''exec' "))
        named = words[0] if words else ""
    else:
        words = _words(head[0][2:])
        named = words[0] if words else ""
    if not os.path.isabs(named) or os.path.basename(named) == "env":
        return None
    return named


def _words(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return []


def gone_interpreter(script: Path) -> str | None:
    """The interpreter `script` names when it is gone (the virtualenv moved); None otherwise."""
    named = script_interpreter(script)
    if named is None or os.access(named, os.X_OK):
        return None
    return named


def runs_with(script: Path, python: str) -> bool:
    """Whether `script` starts a Python of `python`'s own bin folder (its virtualenv), which
    exists; a script whose first line this cannot read is taken at its word."""
    named = script_interpreter(script)
    if named is None:
        return True
    if not os.access(named, os.X_OK):
        return False
    try:
        return os.path.samefile(Path(named).parent, Path(python).parent)
    except OSError:
        return False
