"""A command-exit typed fact is about one run of its command, and names and shows that run.

A turn often runs one command several times (`npm run build` failing, then passing, then passing
again, as in the rave-era Codex fixture). Its evidence id is the turn's; the fact's `tool` says
which call of the turn it is about, and review's excerpt is a passage of that call: the failing
run under "exited with code 1", the run that passed after it under "exited with code 0".
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from recall_world import WINDOW, CodexSession, git, make_repo, sync
from test_review import ORIGIN, candidate, store

from support import in_process
from teamlore.memory.extraction.typed_facts import COMMAND_EXIT, _command_facts
from teamlore.ops.registry import OpContext, load_operations

BUILD = "npm.cmd run build"
# the failing run prints most of the words a fact says: it is the passage a statement about any
# run of the build matches best
FAILED = (
    "> next build\nFailed to compile.\n"
    "npm.cmd run build exited with code 1: exit code 1, build failed"
)


def _world(tmp_path: Path, home: Path, *, broken_twice: bool = False) -> Path:
    repo = make_repo(tmp_path / "rave")
    git(repo, "remote", "add", "origin", ORIGIN)
    session = CodexSession("b7", repo)
    session.user("Fix the production build")
    session.shell(BUILD, FAILED, exit_code=1)  # tool #1
    session.shell("git status --short", " M app/page.tsx")  # tool #2
    session.shell(BUILD, "> next build\nCompiled successfully")  # tool #3
    if broken_twice:  # broken again, fixed again: a second pair of facts alike in every word
        session.shell(BUILD, FAILED, exit_code=1)  # tool #4
        session.shell(BUILD, "> next build\nCompiled successfully again")  # tool #5
    else:
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


def _drafted(
    repo: Path, home: Path, *, with_tool: bool = True
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The command facts recall offers, and a draft batch of a candidate made of them."""
    recalled = _op(repo, home, "memory.recall", WINDOW)
    task = recalled["sources"][0]
    (offer,) = [o for o in recalled["typedFacts"] if o["taskId"] == task["taskId"]]
    facts = [f for f in offer["facts"] if f["renderer"] == COMMAND_EXIT]
    draft = candidate(
        "The build failed, then passed.", [(f["text"], f["evidenceIds"]) for f in facts]
    )
    for statement, fact in zip(draft["statements"], facts, strict=True):
        if with_tool:
            statement["tool"] = fact["tool"]  # as the guidance says: copied with the text
    batch = {
        "format": "threadshare-memory-candidate-draft-batch@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "candidates": [draft],
    }
    return facts, batch


def _reviewed(
    repo: Path, home: Path, *, with_tool: bool = True
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The command facts recall offers, and the review of a candidate made of them."""
    facts, batch = _drafted(repo, home, with_tool=with_tool)
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


def test_facts_alike_in_every_word_each_show_the_run_recall_offered_them_from(
    tmp_path: Path, home: Path
) -> None:
    """A turn that broke the build twice and fixed it twice offers two "exited with code 1" and
    two "exited with code 0" facts, the same words and evidence id, each naming its own run.
    Review worked the run out from the words again, so both passes showed the first fix (and
    both failures the first failure); it now shows the run the statement names."""
    repo = _world(tmp_path, home, broken_twice=True)
    _op(repo, home, "memory.init", {})
    facts, statements = _reviewed(repo, home)
    assert [(f["params"]["exitCode"], f["tool"]) for f in facts] == [(1, 1), (0, 3), (1, 4), (0, 5)]
    assert len({f["text"] for f in facts}) == 2

    shown = [(s["evidence"][0]["passage"]["tool"], s["typedFact"]) for s in statements]

    assert shown == [(f["tool"], COMMAND_EXIT) for f in facts]


def test_a_command_fact_staged_without_its_run_shows_the_run_its_words_name(
    tmp_path: Path, home: Path
) -> None:
    """A statement staged before recall recorded the run (or by an agent that left `tool`
    out) is shown as before: the run the fact's words name."""
    repo = _world(tmp_path, home, broken_twice=True)
    _op(repo, home, "memory.init", {})
    _, statements = _reviewed(repo, home, with_tool=False)

    shown = [s["evidence"][0]["passage"]["tool"] for s in statements]

    assert shown == [1, 3, 1, 3]


def _offered(tmp_path: Path, exits: list[int]) -> list[dict[str, Any]]:
    """The command facts offered for one turn that ran the build with these exit codes."""
    tools = [
        SimpleNamespace(seq=seq, command=BUILD, exit_code=code, family="shell")
        for seq, code in enumerate(exits)
    ]
    turn = SimpleNamespace(index=0, tools=tools)
    return _command_facts([turn], {0: "ev-turn-0"}, tmp_path)


def test_facts_alike_in_every_word_each_have_their_own_id_and_pair(tmp_path: Path) -> None:
    """Two pairs of one turn alike in every word had the same factIds: each failure's
    `pairedWith` named both passes. The second pair's ids now include its run; the first pair's
    ids are the ones a turn that broke the build once is offered, as before."""
    once = _offered(tmp_path, [1, 0])
    twice = _offered(tmp_path, [1, 0, 1, 0])
    assert [f["tool"] for f in twice] == [1, 2, 3, 4]
    assert len({f["factId"] for f in twice}) == 4
    assert [f["factId"] for f in twice[:2]] == [f["factId"] for f in once]
    by_id = {f["factId"]: f for f in twice}
    for fact in twice:
        partner = by_id[fact["pairedWith"]]
        assert partner["pairedWith"] == fact["factId"]
        assert {fact["tool"], partner["tool"]} in ({1, 2}, {3, 4})


def test_a_tool_number_past_what_a_contract_holds_is_refused_as_an_invalid_request(
    tmp_path: Path, home: Path
) -> None:
    """A statement's `tool` of 2**60 passed the draft's schema and then failed staging as an
    INTERNAL error (the contract's canonical form holds integers within +-2**53 only)."""
    repo = _world(tmp_path, home)
    _op(repo, home, "memory.init", {})
    _, batch = _drafted(repo, home)
    batch["candidates"][0]["statements"][0]["tool"] = 2**60

    staged = in_process(
        "memory", "stage", "--request", "-", "-f", "json", cwd=repo, input=json.dumps(batch)
    )

    assert staged.returncode == 1, staged
    assert json.loads(staged.stderr or staged.stdout)["error"]["code"] == "STAGE_REQUEST_INVALID"
    assert _op(repo, home, "memory.review", {"limit": 50})["items"] == []
