"""`install` / `uninstall` of several clients (`--client all`), one client after another.

Every file of every client is checked first (it parses, it is ours to edit, it can be written),
so a refusal there changes nothing. Each client is then its own transaction
(integrations/transaction.py): one that fails mid-way (a write error, a file another program
changed) puts its own files back, but the clients before it stay done. Its refusal then says
which they are and what their files became, instead of "nothing was changed".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from teamlore.core import errors
from teamlore.core.paths import display_path

# what a refusal says when its own client's transaction left every file as it was
_NOTHING_CHANGED = re.compile(r"nothing was changed|no client file was changed")


def run_each(
    clients: list[str], run: Callable[[str], dict[str, Any]], verb: str
) -> list[dict[str, Any]]:
    """`run(client)` for each client in turn; a refusal after the first one is done names what
    was already `verb` (installed, uninstalled)."""
    done: list[dict[str, Any]] = []
    for client in clients:
        try:
            done.append(run(client))
        except errors.TeamloreError as err:
            if not done:
                raise
            raise already_done(err, client, done, verb) from None
    return done


def already_done(
    err: errors.TeamloreError, client: str, done: list[dict[str, Any]], verb: str
) -> errors.TeamloreError:
    """`err`, refused for `client`, saying too what the clients in `done` already had."""
    one = len(done) == 1
    earlier = ", ".join(_described(result) for result in done)
    said = f"{earlier} {'was' if one else 'were'} already {verb}"
    if _NOTHING_CHANGED.search(err.message):
        message = _NOTHING_CHANGED.sub(f"no file of {client} was changed, but {said}", err.message)
    else:
        message = f"{err.message}; {said}"
    changed = [{"client": r["client"], "files": r["files"]} for r in done]
    names = " and ".join(r["client"] for r in done)
    step = err.remedy or errors.next_step(err.error)
    return errors.TeamloreError(err.error, message, **err.details, alreadyChanged=changed).advising(
        f"{step} {names} {'stays' if one else 'stay'} {verb}: the same command, run again,"
        " does the rest."
    )


def _described(result: dict[str, Any]) -> str:
    """`claude (~/.claude.json: restored, ~/.claude/settings.json: edited)`."""
    files = ", ".join(f"{display_path(f['path'])}: {f['action']}" for f in result["files"])
    return f"{result['client']} ({files})" if files else result["client"]
