"""The command line: the console entry (`entry.py`), the lean commands, the typer app."""

from __future__ import annotations

import codecs
import os
import sys


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


def any_character_gets_out() -> None:
    r"""Let stdout and stderr print every character whatever their encoding: a terminal or pipe
    that is not UTF-8 (a legacy locale, `PYTHONIOENCODING=latin-1`) gets what it cannot encode
    as a backslash escape (`\u8fc1`), as control characters are shown (`cli/literal.py`),
    instead of a UnicodeEncodeError half-way through the output. JSON goes out as `\u` escapes
    there (`literal.json_text`)."""
    for stream in (sys.stdout, sys.stderr):
        if not writes_utf8(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def reader_went_away() -> int:
    """The exit code of a command whose reader stopped reading (`teamlore sessions search x |
    head -1`): 0, quietly, in every view and on every path (the lean commands, typer's, the
    watch client), as when the output fitted the pipe before the reader left. Stdout is pointed
    at /dev/null first, so the flush at exit raises no second error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
