"""An operation's first calls run one at a time (`Operation.run`): operations import their modules
on first use, and two threads importing a package whose modules import each other (as
`teamlore.memory.consolidation` does) get a partly initialised module or a _DeadlockError. Every
adapter runs calls through the registry: the stdio server, `org serve`'s HTTP requests, the CLI."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from teamlore.ops.registry import OpContext, Operation


class Empty(BaseModel):
    pass


def write_cyclic_package(root: Path, name: str) -> None:
    """A package shaped like `teamlore.memory.consolidation`: its `__init__` re-exports from its
    submodules, and a submodule imports the package back; a little work between the imports
    gives a second thread time to arrive."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text(
        f"import time\nfrom {name}.kind import KIND\ntime.sleep(0.05)\n"
        f"from {name}.drift import revalidate\n"
    )
    (package / "kind.py").write_text("KIND = 'kind'\n")
    (package / "drift.py").write_text(
        f"import time\nfrom {name} import kind\ntime.sleep(0.05)\n\n"
        "def revalidate() -> str:\n    return kind.KIND\n"
    )


def importing_operation(name: str, module: str, attribute: str) -> Operation:
    def handler(ctx: OpContext, request: Empty) -> dict[str, Any]:
        return {"value": getattr(importlib.import_module(module), attribute)}

    return Operation(name, 1, name, Empty, handler, "read")


@pytest.fixture()
def importable(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith("first_calls_cyclic_")]:
            del sys.modules[name]


def test_first_calls_of_operations_importing_one_cyclic_package_all_get_their_answers(
    importable: Path,
) -> None:
    outcomes: list[str] = []
    for round_ in range(8):  # each round a package no thread has imported yet
        package = f"first_calls_cyclic_{round_}"
        write_cyclic_package(importable, package)
        operations = [
            importing_operation(f"{package}.status", package, "KIND"),
            importing_operation(f"{package}.drift", f"{package}.drift", "revalidate"),
            importing_operation(f"{package}.kind", f"{package}.kind", "KIND"),
        ]
        start = threading.Barrier(len(operations))

        def call(op: Operation, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                op.run(OpContext(cwd=importable), {})
                outcomes.append("ok")
            except Exception as exc:  # what a server would answer as INTERNAL
                outcomes.append(f"{type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=call, args=(op,)) for op in operations]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)

    assert outcomes == ["ok"] * 8 * 3
