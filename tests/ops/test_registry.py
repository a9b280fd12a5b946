"""The registry's metadata per operation (stability, side effect, approval policy, response
schema) and the MCP hints the seed gives its tools (docs/seed-conformance.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from teamlore.mcp.server import tools_for
from teamlore.ops.registry import (
    CAPABILITY_MODULES,
    CAPABILITY_TIERS,
    OPERATION_MODULES,
    Registry,
    load_operations,
)

SCHEMA_ID = re.compile(r"^[a-z0-9-]+@v[0-9]+$")


def test_every_operation_says_its_stability_approval_and_response_schema() -> None:
    for op in load_operations().operations.values():
        meta = op.metadata()
        assert meta["stability"] in ("stable", "experimental", "legacy-debt"), op.name
        assert meta["approvalPolicy"] in ("none", "history-read", "canonical-write"), op.name
        assert SCHEMA_ID.match(meta["responseSchema"]), op.name
    registry = load_operations()
    assert registry.get("memory.search").response_schema == "threadshare-memory-search@v1"
    assert registry.get("memory.prepare").approval_policy == "canonical-write"
    assert registry.get("memory.promote").approval_policy == "canonical-write"
    assert registry.get("memory.extract_preview").stability == "legacy-debt"


def test_mcp_hints_are_the_seeds() -> None:
    tools = {t.name: t for tier in CAPABILITY_TIERS for t in tools_for([tier])}
    hints = {
        name: (
            tool.annotations.read_only_hint,
            tool.annotations.destructive_hint,
            tool.annotations.idempotent_hint,
        )
        for name, tool in tools.items()
        if tool.annotations is not None
    }
    assert hints["threadshare_memory_promote"] == (False, True, True)
    assert hints["threadshare_memory_prepare"] == (False, False, False)
    for read_only in ("search", "status", "review"):
        assert hints[f"threadshare_memory_{read_only}"] == (True, False, True)
    for other in ("recall", "synthesize", "stage", "assemble", "extract_preview"):
        assert hints[f"threadshare_memory_{other}"] == (False, False, True), other
    assert hints["memory_read"][0] is True and hints["memory_status"][0] is True
    meta = tools["threadshare_memory_promote"].meta or {}
    assert meta["teamlore/approvalPolicy"] == "canonical-write"
    assert meta["teamlore/responseSchema"] == "threadshare-memory-promote@v1"


def test_the_table_names_the_module_of_every_operation() -> None:
    """A process that runs one operation imports just the module the table names for it
    (`OPERATION_MODULES`), not every operation's (`memory status` imported numpy, the contract
    models and the install code that way: 586 modules)."""
    defined_in: dict[str, list[str]] = {}
    for op in load_operations().operations.values():
        defined_in.setdefault(op.handler.__module__, []).append(op.name)
    table = {module: sorted(names) for module, names in OPERATION_MODULES.items()}
    fix = "OPERATION_MODULES (ops/registry.py) must be " + repr(
        {module: tuple(sorted(names)) for module, names in sorted(defined_in.items())}
    )
    assert table == {module: sorted(names) for module, names in defined_in.items()}, fix


def test_an_operation_is_found_through_its_module_alone() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from teamlore.ops.registry import REGISTRY; "
            "REGISTRY.get('memory.status'); "
            "print(sorted(m for m in sys.modules if m.startswith('teamlore.ops.')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "teamlore.ops.memory.store" in loaded.stdout
    assert "teamlore.ops.integrations.install" not in loaded.stdout
    assert "teamlore.ops.org.index" not in loaded.stdout


@pytest.mark.parametrize("capability", sorted(CAPABILITY_TIERS))
def test_a_capabilitys_modules_define_all_of_its_tools(capability: str) -> None:
    """An MCP server imports only its launch capabilities' modules (`CAPABILITY_MODULES`): in a
    fresh process they register every tool the whole registry gives the capability, and no
    operation module defines one of those tools that the table leaves out."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys; from teamlore.ops.registry import load_capabilities; "
            f"ops = load_capabilities({capability!r}).for_capability({capability!r}); "
            "print(json.dumps([op.mcp_tool for op in ops]))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    whole = load_operations().for_capability(capability)
    defined_in = {op.handler.__module__ for op in whole}
    fix = f"CAPABILITY_MODULES[{capability!r}] (ops/registry.py) must list {sorted(defined_in)}"
    assert sorted(json.loads(loaded.stdout)) == sorted(op.mcp_tool for op in whole), fix
    assert defined_in <= set(CAPABILITY_MODULES[capability]), fix


@pytest.mark.parametrize("capability", sorted(CAPABILITY_TIERS))
def test_a_capabilitys_tools_come_in_one_order_whatever_order_they_were_imported_in(
    capability: str,
) -> None:
    # Codex's `enabled_tools` is written from this list: an install in a fresh process and one
    # in a process that imported the operations otherwise must write the same bytes
    loaded = list(load_operations().operations.values())
    forward, backward = Registry(), Registry()
    for op in loaded:
        forward.add(op)
    for op in reversed(loaded):
        backward.add(op)
    names = [op.name for op in forward.for_capability(capability)]
    assert names == [op.name for op in backward.for_capability(capability)] == sorted(names)


SLOW_MODULE = '''
import threading
from pydantic import BaseModel
from teamlore.ops.registry import operation

REGISTERED, GO = threading.Event(), threading.Event()


class Nothing(BaseModel):
    pass


@operation("test.slow", input_model=Nothing, side_effect="read")
def slow(ctx, request):
    """A handler that calls a helper its module defines below it."""
    return {"helper": helper()}


REGISTERED.set()
GO.wait(30)


def helper():
    return "defined"
'''

RACE = """
import sys, threading, time
from pathlib import Path
from teamlore.ops import registry

registry._MODULE_OF_OPERATION["test.slow"] = "slowops"
threading.Thread(target=registry.REGISTRY.get, args=("test.slow",), daemon=True).start()
while "test.slow" not in registry.REGISTRY.operations:
    time.sleep(0.01)
result = {}
second = threading.Thread(target=lambda: result.update(
    registry.run_operation("test.slow", registry.OpContext(cwd=Path.cwd()), {})))
second.start()
second.join(0.5)  # it must wait for the module: the helper is not defined yet
waited = second.is_alive()
sys.modules["slowops"].GO.set()
second.join(30)
print(waited, result)
"""


def test_a_first_call_on_another_thread_waits_until_its_module_has_loaded(tmp_path: Path) -> None:
    """An operation registers part-way through its module's import: a first call from another
    thread (the review page's thread pool) got it before the helpers its handler calls below it
    were defined, and failed with NameError."""
    (tmp_path / "slowops.py").write_text(SLOW_MODULE)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", RACE], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.stdout.strip() == "True {'helper': 'defined'}", out.stderr[-2000:]
