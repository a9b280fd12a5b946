"""The `teamlore` console entry point.

`teamlore hook session-start`, `hook session-end` and `hook user-turn` run from here without
importing the full CLI (typer, rich, every command module): agents start them on every session, with
a sub-second budget (`teamlore.cli.hook_runner`). `sync`, `status` and `sessions list|show|search`
run from `teamlore.cli.commands.sessions` without typer when their arguments are in plain form
(`teamlore.cli.params`); otherwise typer parses them with only those commands loaded
(`cli.app.lean`). `mcp` starts the MCP server without typer when its flags are plain
(`teamlore.cli.mcp_command`). While `teamlore watch` runs, the read commands it serves are
answered by it (`teamlore.cli.warm`), falling back to this process on any failure. Everything else
goes to `teamlore.cli.main`.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable

from teamlore.cli import single_blas_thread

# set (to anything) to run every command in its own process even while `teamlore watch` runs
NO_WATCH_ENV = "TEAMLORE_NO_WATCH"
INTERRUPTED_EXIT = 130  # as a command interrupted while it runs (cli/output.py, `run`)


def main() -> None:
    """Run the command; Ctrl-C before it started running exits as Ctrl-C while it runs does."""
    try:
        _dispatch(sys.argv[1:])
    except KeyboardInterrupt:
        sys.exit(INTERRUPTED_EXIT)


def import_orjson_uninterrupted() -> None:
    """Import orjson with SIGINT held pending, then let it in: orjson 3.13's module init,
    interrupted by Ctrl-C, leaves the process to crash (SIGSEGV) later. The import is the only
    window: a Ctrl-C held there is delivered as the import returns, as a KeyboardInterrupt."""
    # `_signal`, loaded by the interpreter at start: `signal` would be one more module to import
    import _signal  # type: ignore[import-not-found]  # no stub: the C half of `signal`

    held = _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
    try:
        import orjson  # noqa: F401
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, held)


def _dispatch(args: list[str]) -> None:
    single_blas_thread()
    if args[:2] == ["hook", "session-start"] and "--help" not in args:
        import_orjson_uninterrupted()
        from teamlore.cli.hook_runner import exit_now, run_from_argv

        exit_now(run_from_argv(args[2:]))
    if args[:2] == ["hook", "session-end"] and "--help" not in args:
        from teamlore.cli.hook_runner import exit_now, session_end_from_argv

        exit_now(session_end_from_argv(args[2:]))
    if args[:2] == ["hook", "user-turn"] and "--help" not in args:
        from teamlore.cli.hook_runner import exit_now, user_turn_from_argv

        exit_now(user_turn_from_argv(args[2:]))
    if args[:1] == ["mcp"]:
        import_orjson_uninterrupted()
        from teamlore.cli.mcp_command import serve_from_argv

        serve_from_argv(args[1:])
    if not os.environ.get(NO_WATCH_ENV):  # a read command `teamlore watch` answers (docs/watch.md)
        from teamlore.cli.warm import answered

        code = answered(args)
        if code is not None:
            sys.exit(code)
    import_orjson_uninterrupted()  # every command below imports it
    # importing the CLI creates only long-lived objects (modules, classes, pydantic schemas):
    # collecting while it runs finds nothing, and moving them to the permanent generation
    # afterwards keeps every later collection, and the one at exit, from walking them again
    gc.disable()
    from teamlore.cli.commands.sessions import lean_command, lean_invocation

    invocation = lean_invocation(args)
    if invocation is not None:  # typer is not even imported (cli/params.py)
        gc.freeze()
        gc.enable()
        _run_lean(invocation)
        return
    from teamlore.cli import app

    app.lean = lean_command(args) is not None
    from teamlore.cli.main import main as full_main

    gc.freeze()
    gc.enable()
    full_main()


def _run_lean(invocation: Callable[[], None]) -> None:
    """Exit as a typer command does: 0 when it returns, its code when it exits, 1 quietly when
    the reader of its output went away."""
    try:
        invocation()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # no second error flushing stdout at exit
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    main()
