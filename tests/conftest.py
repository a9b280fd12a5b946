from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from agent_clis import AgentClis, CliUnavailable, install_agent_clis
from pi_cli import PiCli, install_pi_cli
from teamlore.models.cache import MODEL_CACHE_ENV

# Property tests judge what the code returns, never how long an example took: hypothesis's
# default 200 ms deadline and its too-slow health check fail on a loaded machine.
settings.register_profile("teamlore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("teamlore")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A run over folders (`python -m pytest`, `pytest tests/memory`) spreads its tests over
    one worker more than the cores it may use (pytest-xdist): a worker waits on its tests'
    `teamlore` processes, servers and sleeps for about a sixth of the run, and the extra worker
    keeps the cores busy meanwhile (2 cores: 494 s with 2 workers, 460 s with 3, the same run).
    A run of single files or tests stays in one process (starting workers costs seconds).
    `-n N` always wins; with xdist absent or turned off (`-p no:xdist`) everything runs in this
    process. Set here, not in addopts, where `-n` would be an unknown option under
    `-p no:xdist`."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.option.numprocesses is None and any(_is_folder(arg) for arg in config.args):
        config.option.numprocesses = len(os.sched_getaffinity(0)) + 1
        if config.option.dist == "no":  # a module's tests share its fixtures (a PostgreSQL
            config.option.dist = "loadfile"  # cluster, a synced world): one worker per module


def _is_folder(arg: str) -> bool:
    return Path(arg.split("::", 1)[0]).is_dir()


def _run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This run's temporary folder, the same for every xdist worker."""
    run_root = tmp_path_factory.getbasetemp()
    if run_root.name.startswith("popen-gw"):  # an xdist worker's folder inside the run's
        run_root = run_root.parent
    return run_root


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One folder of what is derived from the bundled models (~80 MB, seconds of CPU to
    derive; docs/hybrid-search.md, "Derived once") for every test state dir of this run, shared
    by the xdist workers: `TEAMLORE_MODEL_CACHE` for this process and its subprocesses. Tests
    of where the derived copy goes without it unset the variable."""
    cache = _run_root(tmp_path_factory) / "shared-model-cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(MODEL_CACHE_ENV, str(cache))
        yield cache


@pytest.fixture(scope="session", autouse=True)
def compiled_once_per_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The suite starts thousands of Python subprocesses (`teamlore`, MCP servers, hooks). With
    PYTHONDONTWRITEBYTECODE set (some root shells set it) and no bytecode beside the sources (a
    fresh clone), each compiled every module it imports again: ~0.4 s of CPU, a third of a
    command's start. The subprocesses keep their bytecode in one folder of this run instead
    (PYTHONPYCACHEPREFIX, shared by the xdist workers), never beside the sources."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE")
        patch.setenv("PYTHONPYCACHEPREFIX", str(_run_root(tmp_path_factory) / "bytecode"))
        yield


@pytest.fixture(scope="session", autouse=True)
def no_real_user_sessions(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The clients' session folders a sync reads by default point at folders that do not
    exist, for this process and its subprocesses: a developer's own Claude Code, Codex or Pi
    sessions never reach a test's index (a sync of them would be slow, and would load what a
    test says it never loads). Tests of the default folders set or unset these variables."""
    nowhere = tmp_path_factory.getbasetemp() / "no-user-sessions"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLAUDE_CONFIG_DIR", str(nowhere / "claude"))
        patch.setenv("CODEX_HOME", str(nowhere / "codex"))
        patch.setenv("PI_CODING_AGENT_DIR", str(nowhere / "pi"))
        yield


@pytest.fixture(scope="session", autouse=True)
def patient_hooks() -> Iterator[None]:
    """A hook is judged by what it prints, not by the 0.9 s it may take on an idle machine: on
    a loaded one, a hook past its budget prints nothing. The budget's own tests set theirs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEAMLORE_HOOK_BUDGET", "60")
        yield


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
