"""Session files written by the current Claude Code and Codex CLIs, offline.

The pinned CLIs of tests/agent_clis.py run against the scripted model and write real transcripts
of what turns can be (docs/sessions.md, "turns as the provider meant them"):

- Claude Code: a prompt answered after a Bash call whose output is UTF-16LE (as a Windows program
  writes it), then the same session resumed while the API fails (Claude Code records its own
  API-error message, `isApiErrorMessage`);
- Codex `exec`: the same Bash call; a turn interrupted with Ctrl-C while a command runs
  (`turn_aborted`);
- Codex `app-server`: three turns, `thread/revert` before the second, a fourth turn (the thread
  goes on in a continuation file whose `history_base` undoes turns 2 and 3).

The e2e test (test_current_cli_sessions.py) writes them fresh and syncs them;
`python tests/sessions/current_clis.py --write` saves them as tests/fixtures/sessions/ with the
temporary folder replaced by `/home/dev` (the CLIs' own session ids are kept: they are what the
files are, and name nobody's sessions).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_clis import (
    AgentClis,
    CodexAppServer,
    Scenario,
    ScriptedModel,
    ToolStep,
    install_agent_clis,
    run_claude,
    run_codex,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
NEUTRAL_HOME = "/home/dev"
# a command whose output is UTF-16LE, as Windows PowerShell 5.1 redirections write it; the text
# is rot13 in the command, so only the decoded output holds "Zugriff verweigert"
UTF16_COMMAND = (
    'python3 -c "import codecs, sys; sys.stdout.buffer.write(codecs.encode('
    "'Mhtevss irejrvtreg: pbasvt.gbzy', 'rot13').encode('utf-16-le'))\""
)


@dataclass(frozen=True)
class Written:
    claude: Path  # a Claude Code projects folder
    codex: Path  # a Codex sessions folder


def write_sessions(clis: AgentClis, base: Path) -> Written:
    """Run the CLIs in `base` (HOME `base/home`, project `base/project`)."""
    home, project = base / "home", base / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "config.toml").write_text("answer = 42\n")
    _claude_sessions(clis, home, project)
    _codex_sessions(clis, home, project)
    return Written(claude=home / ".claude" / "projects", codex=home / ".codex" / "sessions")


def _claude_sessions(clis: AgentClis, home: Path, project: Path) -> None:
    step = ToolStep("Bash", {"command": UTF16_COMMAND, "description": "write the config"})
    with ScriptedModel(Scenario(steps=[step], final_text="The write was refused.")) as model:
        first = run_claude(
            clis,
            "write the config",
            cwd=project,
            home=home,
            model=model,
            allowed_tools=("Bash",),
            persist=True,
        )
    assert not first.is_error and first.data, first.describe()
    with ScriptedModel(Scenario(fail_status=500)) as outage:
        resumed = run_claude(
            clis,
            "try again",
            cwd=project,
            home=home,
            model=outage,
            allowed_tools=(),
            persist=True,
            extra_args=("--resume", str(first.data["session_id"])),
        )
    assert resumed.is_error, resumed.describe()


def _codex_sessions(clis: AgentClis, home: Path, project: Path) -> None:
    step = ToolStep("exec_command", {"cmd": UTF16_COMMAND})
    with ScriptedModel(Scenario(steps=[step], final_text="The write was refused.")) as model:
        done = run_codex(
            clis, "write the config", cwd=project, home=home, model=model, persist=True
        )
    assert done.returncode == 0, done.describe()
    slow = ToolStep("exec_command", {"cmd": "sleep 60"})
    with ScriptedModel(Scenario(steps=[slow], final_text="never reached")) as model:
        run_codex(
            clis,
            "wait for the build",
            cwd=project,
            home=home,
            model=model,
            persist=True,
            interrupt_when=lambda: _command_started(home),
        )
    with (
        ScriptedModel(Scenario(final_text="Answered.")) as model,
        CodexAppServer(clis, cwd=project, home=home, model=model) as server,
    ):
        thread = server.request("thread/start", {"cwd": str(project)})["thread"]["id"]
        server.turn(thread, "first question")
        second = server.turn(thread, "second question")
        server.turn(thread, "third question")
        server.request("thread/revert", {"threadId": thread, "beforeTurnId": second})
        server.turn(thread, "fourth question")


def _command_started(home: Path) -> bool:
    """The `sleep` command is running: the rollout records the call and the process exists.

    The call is written to the rollout before Codex starts the command; Ctrl-C in between
    leaves a call with no output (a different session from the one this test means)."""
    recorded = any(
        "sleep 60" in path.read_text(errors="replace")
        for path in (home / ".codex" / "sessions").rglob("rollout-*.jsonl")
    )
    return recorded and _sleeping_under(home)


def _sleeping_under(home: Path) -> bool:
    """A `sleep 60` process runs with this test's HOME (Codex runs commands in the user's env)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        running = argv[:2] == [b"sleep", b"60"] or b"sleep 60" in argv
        if running and f"HOME={home}".encode() in environ:
            return True
    return False


def save_fixtures(written: Written, base: Path, target: Path = FIXTURES) -> None:
    """Copy the written sessions to `target` with `base` replaced by the neutral home."""
    shutil.rmtree(target, ignore_errors=True)
    for provider, root in (("claude", written.claude), ("codex", written.codex)):
        for path in sorted(root.rglob("*.jsonl")):
            relative = str(path.relative_to(root))
            relative = relative.replace(_encoded(base), _encoded(Path(NEUTRAL_HOME)))
            out = target / provider / relative
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(path.read_text().replace(str(base), NEUTRAL_HOME))


def _encoded(path: Path) -> str:
    """Claude Code's project folder name part for `path` (every non-alphanumeric is `-`)."""
    return "".join(c if c.isalnum() else "-" for c in str(path))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/sessions/current_clis.py --write")
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch).resolve()
        save_fixtures(write_sessions(install_agent_clis(), base), base)
    print(f"wrote {FIXTURES}")
