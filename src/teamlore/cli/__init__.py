"""The command line: the console entry (`entry.py`), the lean commands, the typer app."""

from __future__ import annotations

import codecs
import os
import sys

# the `-X` option that hands the re-started process its streams' encoding (`in_utf8_mode`)
STDIO_OPTION = "teamlore_stdio"


def in_utf8_mode() -> None:
    r"""Run in Python's UTF-8 mode, whatever the locale: start this process again with `-X utf8`
    when the file system encoding is not UTF-8 (a legacy locale such as `en_US.ISO-8859-1`, or
    `LC_ALL=C PYTHONUTF8=0`).

    Linux keeps a file name as bytes; Python turns them into text with its file system encoding
    (argv, the current folder, the environment, every `os` call) and back when it opens one.
    teamlore stores paths as text that means the same in every process (the registered
    worktrees, their keys, config.toml, the folder a session was recorded in, git's answers):
    the bytes read as UTF-8, undecodable bytes as surrogate escapes (`core/paths.escaped_path`).
    Under latin-1 the folder `código` (bytes `c\xc3\xb3digo`) was `cÃ³digo` to the process and
    `código` to git: the registered repository was never found again, and a query typed as
    UTF-8 searched for `æ\x95°…`. The re-started process keeps its streams in the locale's
    encoding (what the terminal shows; what it cannot encode is escaped,
    `any_character_gets_out`), and `PYTHONIOENCODING` when it is set; the programs it starts
    get the environment as it was."""
    if sys.flags.utf8_mode:
        stdio = sys._xoptions.get(STDIO_OPTION)
        if isinstance(stdio, str):  # this process is the re-start: the streams as they were
            encoding, _, read_errors = stdio.partition(":")
            for stream, errors in (
                (sys.stdin, read_errors or "strict"),
                (sys.stdout, "strict"),  # then `any_character_gets_out`
                (sys.stderr, "backslashreplace"),
            ):
                if stream is not None and hasattr(stream, "reconfigure"):
                    stream.reconfigure(encoding=encoding, errors=errors)
        return
    if codecs.lookup(sys.getfilesystemencoding()).name == "utf-8" or not sys.executable:
        return
    command = [sys.executable, "-X", "utf8", *sys.orig_argv[1:]]
    stream = next((s for s in (sys.stdin, sys.stdout, sys.stderr) if s is not None), None)
    # `PYTHONIOENCODING=:replace` names an error handler only: the encoding stays the locale's
    named = os.environ.get("PYTHONIOENCODING", "").partition(":")[0]
    if stream is not None and not named:
        stdin_errors = sys.stdin.errors if sys.stdin is not None else ""
        command[1:1] = ["-X", f"{STDIO_OPTION}={stream.encoding}:{stdin_errors}"]
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    try:
        os.execv(sys.executable, command)
    except OSError:
        return  # no interpreter to start again: run as before, in the locale's encoding


def closed_stdin_as_empty() -> None:
    """A closed standard input (`teamlore memory confirm <&-`) read as an empty one (`<
    /dev/null`): every command that reads stdin or asks whether it is a terminal then answers
    as it does there (a USAGE or INVALID_ARGUMENT refusal, the MCP server's end of input), where
    `sys.stdin` was None (AttributeError); and no file this process opens gets fd 0, where a
    read of stdin, or a program started with it, would find that file."""
    if sys.stdin is not None:
        return
    try:
        os.fstat(0)
    except OSError:
        empty = os.open(os.devnull, os.O_RDONLY)  # the lowest free descriptor: 0
        if empty != 0:
            os.dup2(empty, 0)
            os.close(empty)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115  # stdin, open for the whole process


def typed_text(argument: str) -> str:
    """An argument the person typed as text (a search query), as they typed it: its bytes read
    as UTF-8 (what this process does, `in_utf8_mode`) when they are UTF-8, else in the
    terminal's encoding (stdout's: the locale's, `PYTHONIOENCODING`'s) when that reads them
    (`código` typed on a latin-1 terminal, `c\\xf3digo`); else as it is (its bytes as surrogate
    escapes, which the request refuses by name)."""
    encoding = getattr(sys.stdout, "encoding", None)
    if not encoding or writes_utf8(sys.stdout) or argument.isascii():
        return argument
    try:
        return argument.encode("utf-8").decode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, held as surrogate escapes
        data = argument.encode("utf-8", "surrogateescape")
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return argument


def single_blas_thread() -> None:
    """One BLAS thread unless the user set another count (before numpy is imported): hybrid
    search multiplies one query vector by the memory's vectors (docs/hybrid-search.md), too
    small a product for worker threads, whose spinning after the work cost a `memory search`
    process 1.5x its CPU with two of them on a 2-core machine (bench/bench_cli.py)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def writes_utf8(stream: object) -> bool:
    """Whether a text stream encodes as UTF-8 (one that names no encoding, `io.StringIO`, holds
    any character)."""
    encoding = getattr(stream, "encoding", None)
    return not encoding or codecs.lookup(encoding).name == "utf-8"


# teamlore's own layout symbols, as a terminal that cannot show them gets them: close to the
# one cell they were laid out in, where an escape (`\u2026`) took six. Only symbols teamlore
# draws (a cut, a child row, a check mark): a character a person wrote (`—`, `→`, quotes) is
# escaped as it is, so their text can be read back exactly
STAND_INS = {
    "…": "...",
    "↳": "->",
    "✓": "ok",
    "✔": "ok",
    "✗": "x",
}
STAND_IN_ERRORS = "teamlore-stand-in"


def _stand_in(error: UnicodeError) -> tuple[str, int]:
    """A codec error handler: teamlore's own symbols as their ASCII stand-ins, anything else as
    a backslash escape (`backslashreplace`)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(STAND_INS.get(char) or _escape(char) for char in text), error.end


def _escape(char: str) -> str:
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code <= 0xFF
        else f"\\u{code:04x}"
        if code <= 0xFFFF
        else f"\\U{code:08x}"
    )


def any_character_gets_out() -> None:
    r"""Let stdout and stderr print every character whatever their encoding: a terminal or pipe
    that is not UTF-8 (a legacy locale, `PYTHONIOENCODING=latin-1`) gets what it cannot encode
    as a backslash escape (`\u8fc1`), as control characters are shown (`cli/literal.py`),
    instead of a UnicodeEncodeError half-way through the output — and teamlore's own symbols
    (`…`, `↳`, `✓`) as ASCII stand-ins (`...`, `->`, `ok`), which keep a line near the width it
    was laid out for. JSON goes out as `\u` escapes there (`literal.json_text`)."""
    for stream in (sys.stdout, sys.stderr):
        if not writes_utf8(stream) and hasattr(stream, "reconfigure"):
            _register_stand_ins()
            stream.reconfigure(errors=STAND_IN_ERRORS)


def _register_stand_ins() -> None:
    try:
        codecs.lookup_error(STAND_IN_ERRORS)
    except LookupError:
        codecs.register_error(STAND_IN_ERRORS, _stand_in)


def reader_went_away() -> int:
    """The exit code of a command whose reader stopped reading (`teamlore sessions search x |
    head -1`): 0, quietly, in every view and on every path (the lean commands, typer's, the
    watch client), as when the output fitted the pipe before the reader left. Stdout is pointed
    at /dev/null first, so the flush at exit raises no second error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
