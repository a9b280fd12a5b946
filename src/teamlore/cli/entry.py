"""The `teamlore` console entry point.

`teamlore hook session-start` and `hook session-end` run from here without importing the full
CLI (typer, rich, every command module): agents start them on every session, with a sub-second
budget (`teamlore.cli.hook_runner`). Everything else goes to `teamlore.cli.main`; `sync`,
`status` and `sessions list|show|search` without the other command modules (`cli.app.lean`).
"""

from __future__ import annotations

import gc
import os
import sys


def main() -> None:
    # hybrid search multiplies one query vector by the memory's vectors (docs/hybrid-search.md):
    # too small a product for BLAS worker threads, whose spinning after the work slows what
    # follows on a busy machine; a user's own setting wins
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    args = sys.argv[1:]
    if args[:2] == ["hook", "session-start"] and "--help" not in args:
        from teamlore.cli.hook_runner import exit_now, run_from_argv

        exit_now(run_from_argv(args[2:]))
    if args[:2] == ["hook", "session-end"] and "--help" not in args:
        from teamlore.cli.hook_runner import exit_now, session_end_from_argv

        exit_now(session_end_from_argv(args[2:]))
    # importing the CLI creates only long-lived objects (modules, classes, pydantic schemas):
    # collecting while it runs finds nothing, and moving them to the permanent generation
    # afterwards keeps every later collection, and the one at exit, from walking them again
    gc.disable()
    from teamlore.cli import app

    app.lean = app.lean_command(args)
    from teamlore.cli.main import main as full_main

    gc.freeze()
    gc.enable()
    full_main()


if __name__ == "__main__":
    main()
