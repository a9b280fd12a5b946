"""`teamlore doctor` imports the operations it runs, not every one: `REGISTRY.get` loads an
operation's own module and the MCP entries it compares list their launch's tools
(`load_capabilities`). Loading every operation module was ~80 of its ~230 ms of CPU (432 modules,
352 now)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from teamlore.ops.registry import CAPABILITY_MODULES, OPERATION_MODULES

# the operation modules a doctor process needs: its own, the index status, and those defining
# the tools of the MCP entries a default install writes (the team's read tools, the personal ones)
DOCTOR_MODULES = {
    "teamlore.ops.integrations.install",
    "teamlore.ops.integrations.mcp_config",
    "teamlore.ops.sessions.index",
    *(m for c in ("team-read", "init", "read", "relay") for m in CAPABILITY_MODULES[c]),
}

# the console entry, listing the modules the process imported when it exits (`-X importtime`
# did not list every module a doctor process imported)
LISTING = """
import atexit, sys
out = sys.argv[1]
atexit.register(lambda: open(out, "w").write("\\n".join(sys.modules)))
sys.argv = ["teamlore", *sys.argv[2:]]
from teamlore.cli.entry import main
sys.exit(main())
"""


def test_doctor_loads_only_the_operation_modules_it_runs(tmp_path: Path) -> None:
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    bin_dir.mkdir()
    for folder in (".claude", ".codex"):  # both clients used, teamlore installed in neither:
        (home / folder).mkdir(parents=True)  # doctor plans the entries an install would write
    for name, version in (("claude", "2.1.332 (Claude Code)"), ("codex", "codex-cli 0.171.0")):
        stand_in = bin_dir / name
        stand_in.write_text(f"#!/bin/sh\necho '{version}'\n")
        stand_in.chmod(0o755)
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "TEAMLORE_HOME": str(tmp_path / "state"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
    }
    listed = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", LISTING, str(listed), "doctor", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    checks = {c["check"] for c in json.loads(done.stdout)["checks"]}
    assert {"claude.config", "codex.config", "index", "watch"} <= checks, done.stderr[-2000:]
    modules = set(listed.read_text().split())
    assert modules & set(OPERATION_MODULES) <= DOCTOR_MODULES, sorted(
        modules & set(OPERATION_MODULES) - DOCTOR_MODULES
    )
