"""A command-exit typed fact is about one run of its command, and names and shows that run.

A turn often runs one command several times (`npm run build` failing, then passing, then passing
again, as in the rave-era Codex fixture). Its evidence id is the turn's; the fact's `tool` says
which call of the turn it is about, and review's excerpt is a passage of that call: the failing
run under "exited with code 1", the run that passed after it under "exited with code 0".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recall_world import WINDOW, CodexSession, git, make_repo, sync
from test_review import ORIGIN, candidate, store

from teamlore.memory.extraction.typed_facts import COMMAND_EXIT
from teamlore.ops.registry import OpContext, load_operations

BUILD = "npm.cmd run build"
# the failing run prints most of the words a fact says: it is the passage a statement about any
# run of the build matches best
FAILED = (
    "> next build\nFailed to compile.\n"
    "npm.cmd run build exited with code 1: exit code 1, build failed"
)


def _world(tmp_path: Path, home: Path) -> Path:
    repo = make_repo(tmp_path / "rave")
    git(repo, "remote", "add", "origin", ORIGIN)
    session = CodexSession("b7", repo)
    session.user("Fix the production build")
    session.shell(BUILD, FAILED, exit_code=1)  # tool #1
    session.shell("git status --short", " M app/page.tsx")  # tool #2
    session.shell(BUILD, "> next build\nCompiled successfully")  # tool #3
    session.shell(BUILD, "> next build\nCompiled successfully in 4.1s")  # tool #4
    session.answer("The build passes.")
    session.turn("deploy it next week", "Noted.")
    session.turn("thanks", "You're welcome.")
    codex = tmp_path / "codex"
    session.write(codex)
    sync(home, codex, repo)
    return repo


def _op(repo: Path, home: Path, name: str, payload: dict[str, Any]) -> dict[str, Any]:
    return load_operations().get(name).run(OpContext(cwd=repo, home=home), payload)


def _reviewed(repo: Path, home: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The command facts recall offers, and the review of a candidate made of them."""
    recalled = _op(repo, home, "memory.recall", WINDOW)
    task = recalled["sources"][0]
    (offer,) = [o for o in recalled["typedFacts"] if o["taskId"] == task["taskId"]]
    facts = [f for f in offer["facts"] if f["renderer"] == COMMAND_EXIT]
    drafts = [
        candidate("The build failed, then passed.", [(f["text"], f["evidenceIds"]) for f in facts])
    ]
    batch = {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "candidates": drafts,
    }
    adjudication = _op(repo, home, "memory.stage", batch)["adjudicationTask"]
    decisions = [store(d["candidateId"]) for d in adjudication["drafts"]]
    _op(
        repo,
        home,
        "memory.stage",
        {
            "format": "threadshare-memory-adjudication-result@v1",
            "taskId": adjudication["taskId"],
            "binding": adjudication["binding"],
            "adjudications": decisions,
        },
    )
    (item,) = _op(repo, home, "memory.review", {"limit": 50})["items"]
    return facts, item["statements"]


def test_each_command_fact_names_and_shows_its_own_run(tmp_path: Path, home: Path) -> None:
    repo = _world(tmp_path, home)
    _op(repo, home, "memory.init", {})
    facts, statements = _reviewed(repo, home)
    # the failing run and the run that passed after it (not the later pass, not the first call)
    assert [(f["params"]["exitCode"], f["tool"]) for f in facts] == [(1, 1), (0, 3)]
    shown = {s["text"]: s for s in statements}
    for fact in facts:
        statement = shown[fact["text"]]
        assert statement["typedFact"] == COMMAND_EXIT
        (evidence,) = statement["evidence"]
        assert evidence["passage"]["tool"] == fact["tool"], fact["text"]
        assert f"· tool #{fact['tool']} @" in evidence["display"]
        assert evidence["open"].endswith(f"--tool {fact['tool']}")
        code = fact["params"]["exitCode"]
        assert evidence["excerpt"].startswith(f"#{fact['tool']} shell_command {BUILD} (")
        assert f"exit {code})" in evidence["excerpt"].splitlines()[0]
