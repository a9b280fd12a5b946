from __future__ import annotations

from pathlib import Path

import pytest

from agent_clis import AgentClis, CliUnavailable, install_agent_clis
from pi_cli import PiCli, install_pi_cli


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private teamlore state dir, also exported as TEAMLORE_HOME for subprocesses."""
    state = tmp_path / "state"
    monkeypatch.setenv("TEAMLORE_HOME", str(state))
    return state


@pytest.fixture(scope="session")
def agent_clis() -> AgentClis:
    """The pinned real `claude` and `codex` CLIs (installed from npm once, cached; see
    tests/agent_clis.py). Skips with the reason when npm or its registry cannot be reached."""
    try:
        return install_agent_clis()
    except CliUnavailable as exc:
        pytest.skip(f"real agent CLIs unavailable: {exc}")


@pytest.fixture(scope="session")
def pi_cli() -> PiCli:
    """The pinned real Pi CLI and the Node it needs (installed from npm once, cached; see
    tests/pi_cli.py). Skips with the reason when npm or its registry cannot be reached."""
    try:
        return install_pi_cli()
    except CliUnavailable as exc:
        pytest.skip(f"real Pi CLI unavailable: {exc}")
