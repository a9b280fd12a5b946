"""`teamlore doctor` and a SessionStart hook that prints nothing: nothing to brief, or a brief
that was not ready within the hook's time budget (`TEAMLORE_HOOK_BUDGET`), which the hook hides
by printing nothing too. Doctor runs such a hook once more with a generous budget and tells the
two apart. The brief is held at a pausepoint (core/failpoints.py) so that the hook's own run
misses its budget for certain and doctor's second run gets it."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from support import git, teamlore_cli
from teamlore.integrations import doctor as doctor_checks

HOLD_SECONDS = 0.5  # far past the hook's own budget of 0.05 s


def _release_each_run_after_a_while(flag: Path, done: threading.Event) -> None:
    """Hold each run of the hook that reaches the pausepoint well past its own budget: the
    hook's own run (0.05 s) has given up and printed nothing by then (or never got there),
    while doctor's second run (10 s) still waits for its brief."""
    while not done.wait(0.01):
        if flag.exists() and not done.wait(HOLD_SECONDS):
            flag.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "budget_in", ["environment", "command", "command, quoted", "command's own statement"]
)
def test_a_brief_not_ready_within_the_hooks_budget_is_a_warning_not_nothing_to_brief(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budget_in: str
) -> None:
    """The budget may be in doctor's environment or written in the hook's command, which beats
    the environment: doctor's second run got the short budget again there, and said "nothing
    to brief here"."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    flag = tmp_path / "paused"
    env = {
        "HOME": str(tmp_path / "home"),
        "TEAMLORE_HOME": str(tmp_path / "state"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
    }
    assert teamlore_cli("memory", "init", cwd=repo, env=env).returncode == 0
    (repo / ".threadshare" / "memory" / "entries" / "decision.md").write_text("an entry\n")
    assert teamlore_cli("install", "--client", "claude", "--force", env=env).returncode == 0
    settings = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    slow = {**env, "TEAMLORE_PAUSEPOINT": f"session-brief={flag}"}
    if budget_in == "environment":
        slow["TEAMLORE_HOOK_BUDGET"] = "0.05"
    else:  # before the hook, quoted, or as a statement of its own (a rewrite ate the `;` once)
        written = {
            "command": "TEAMLORE_HOOK_BUDGET=0.05",
            "command, quoted": 'TEAMLORE_HOOK_BUDGET="0.05"',
            "command's own statement": "export TEAMLORE_HOOK_BUDGET=0.05;",
        }[budget_in]
        command = f"{written} {command}"
        monkeypatch.delenv("TEAMLORE_HOOK_BUDGET", raising=False)
    for name, value in slow.items():  # the environment doctor, and so the hook, runs in
        monkeypatch.setenv(name, value)
    done = threading.Event()
    releaser = threading.Thread(target=_release_each_run_after_a_while, args=(flag, done))
    releaser.start()
    try:
        hook = doctor_checks.hook_check("claude", command, repo)
    finally:
        done.set()
        releaser.join()

    assert hook.status == "warn", hook
    assert "not ready within the hook's budget (0.05 s)" in hook.message
    assert hook.fix is not None and "TEAMLORE_HOOK_BUDGET" in hook.fix
