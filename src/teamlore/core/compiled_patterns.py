"""Compiling the analyzer's Unicode patterns once per state dir, not once per process
(docs/architecture.md, "A short CLI process").

`re` compiles a character class by walking every BMP code point of its ranges in a Python loop;
the analyzer's CJK class holds ~40,000 of them and its token pattern holds it three times, so a
process that analyzes one non-ASCII text (a Chinese query, a snippet with an accent) paid
~50 million instructions to compile it. The compiled program (`re._compiler`'s code list) is a
few hundred integers: it is derived once, kept in the state dir's model cache (marshal, stamped
with the pattern and the exact Python and `_sre` versions) and handed to `_sre.compile` by later
processes. Anything unexpected — another Python, a damaged copy, a missing private API — falls
back to `re.compile` silently; tests compare the two on real session text and random text
(tests/core/test_compiled_patterns.py).
"""

from __future__ import annotations

import contextlib
import importlib
import marshal
import re
import sys
import zlib
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.locations import state_dir_path
from teamlore.core.paths import ensure_private_dir, read_private_file, write_private_file

FORMAT = 1
CACHE_DIR = "models"  # the state dir's model cache, beside the tokenizer subsets
# what `_sre.compile` takes after the pattern text: flags, code, groups, groupindex, indexgroup
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


def compile_once(pattern: str) -> re.Pattern[str]:
    """`re.compile(pattern)`, from the program stored in the state dir when there is one."""
    try:
        sre = importlib.import_module("_sre")
        stamp = f"{FORMAT}|{sys.version}|{sre.MAGIC}|{pattern}"
        cached = state_dir_path() / CACHE_DIR / f"pattern-{zlib.crc32(stamp.encode()):08x}.marshal"
        program = _load(cached, stamp) or _derive(pattern, cached, stamp)
        compiled: re.Pattern[str] = sre.compile(pattern, *program)
        return compiled
    except Exception:  # any failure of the private API: the public one
        return re.compile(pattern)


def _load(cached: Path, stamp: str) -> Program | None:
    with contextlib.suppress(OSError, ValueError, EOFError, TypeError):
        data = marshal.loads(read_private_file(cached))
        if isinstance(data, tuple) and len(data) == 2 and data[0] == stamp:
            program: Program = data[1]
            return program
    return None


def _derive(pattern: str, cached: Path, stamp: str) -> Program:
    """The program `re.compile` would build (as `re._compiler.compile` does), stored when the
    state dir exists (it is never created here)."""
    parser: Any = importlib.import_module("re._parser")
    compiler: Any = importlib.import_module("re._compiler")
    parsed = parser.parse(pattern, 0)
    groupindex: dict[str, int] = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    program: Program = (
        int(parsed.state.flags),
        [int(word) for word in compiler._code(parsed, 0)],  # opcodes are int subclasses
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )
    if cached.parent.parent.is_dir():
        # a read-only or unsafe state dir: this process derived it, the next one will too
        with contextlib.suppress(OSError, errors.TeamloreError):
            ensure_private_dir(cached.parent)
            write_private_file(cached, marshal.dumps((stamp, program)))
    return program
