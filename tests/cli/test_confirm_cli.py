"""`teamlore memory confirm` then `promote`: a person's path from quarantine to the tree."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import (
    draft_batch,
    fill_to_the_last_byte,
    git,
    in_process,
    release_repository,
    store_all,
    teamlore_cli,
    teamlore_in_pty,
    tmpfs,
)
from teamlore.ops.memory.review import short_candidate_id
from teamlore.ops.registry import OpContext, load_operations


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


def op(name: str, repo: Path, payload: dict[str, Any]) -> dict[str, Any]:
    return load_operations().get(name).run(OpContext(cwd=repo), payload)


@pytest.fixture()
def quarantined(repo: Path) -> Path:
    return quarantine(repo)


def quarantine(repo: Path) -> Path:
    """One drafted claim of the release session, adjudicated and waiting for review."""
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    staged = op("memory.stage", repo, draft_batch(task["sources"][0]))
    op("memory.stage", repo, store_all(staged["adjudicationTask"]))
    return repo


def test_confirm_needs_a_terminal_or_yes(quarantined: Path) -> None:
    proc = teamlore_cli("memory", "confirm", "--format", "json", cwd=quarantined)
    assert proc.returncode == 2
    assert json.loads(proc.stdout)["error"]["code"] == "USAGE"


def test_confirm_without_a_terminal_names_the_review_page(quarantined: Path) -> None:
    proc = teamlore_cli("memory", "confirm", cwd=quarantined)
    assert proc.returncode == 2
    assert "`teamlore ui`" in proc.stderr, proc.stderr


def test_yes_confirms_only_candidates_made_of_typed_facts(quarantined: Path) -> None:
    proc = in_process("memory", "confirm", "--yes", cwd=quarantined)
    assert proc.returncode == 0, proc.stderr
    assert "no plan recorded" in proc.stdout
    assert "1 statement (s1) needs a person" in " ".join(proc.stderr.split())


def test_a_person_answers_each_statement_on_a_terminal(quarantined: Path) -> None:
    code, printed = teamlore_in_pty("memory", "confirm", answers=["n"], cwd=quarantined)
    assert code == 0, printed
    assert "Is statement s1 true? [y/d/q/N]" in printed
    assert "no plan recorded" in printed and "stays in quarantine" in printed
    code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=quarantined)
    assert code == 0 and "Plan " in printed, printed


def test_a_person_is_asked_only_after_every_line_promotion_writes(repo: Path) -> None:
    """The question came under a diff cut at 60 lines (`… 24 more lines of this diff`): the
    person approved a file whose end they had never seen."""
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    batch = draft_batch(task["sources"][0])
    steps = "\n".join(f"{n}. Check release step {n} before pushing a tag." for n in range(1, 70))
    batch["candidates"][0]["content"] = f"Release checklist:\n{steps}\nLast: push the v tag."
    op("memory.stage", repo, store_all(op("memory.stage", repo, batch)["adjudicationTask"]))
    reviewed = in_process("memory", "review", "--format", "json", cwd=repo)
    (file,) = json.loads(reviewed.stdout)["items"][0]["files"]
    written = file["diff"].removesuffix("\n").split("\n")
    assert len(written) > 80
    code, printed = teamlore_in_pty("memory", "confirm", answers=["n"], cwd=repo)
    assert code == 0, printed
    shown = re.sub(r"\x1b\[[0-9;]*m", "", printed.split("Is statement s1 true?")[0])
    assert "more lines of this diff" not in shown
    folded = re.sub(r"\s+", "", re.sub(r"\n *[-+ @]↳", "", shown))
    assert [line for line in written if re.sub(r"\s+", "", line) not in folded] == []


def test_d_discards_the_candidate(quarantined: Path) -> None:
    code, printed = teamlore_in_pty("memory", "confirm", answers=["d"], cwd=quarantined)
    assert code == 0 and "Discarded extract-" in printed, printed
    proc = in_process("memory", "review", "--format", "json", cwd=quarantined)
    assert json.loads(proc.stdout)["items"] == []


STOP_KEYS = {"Ctrl-C": b"\x03", "Ctrl-D": b"\x04"}


@pytest.mark.parametrize("typer_parsed", [False, True], ids=["plain", "typer-parsed"])
@pytest.mark.parametrize("key", STOP_KEYS, ids=list(STOP_KEYS))
def test_ctrl_c_or_ctrl_d_at_the_question_stops_as_an_interrupted_command(
    quarantined: Path, key: str, typer_parsed: bool
) -> None:
    """Either key at the question used to end in `error INTERNAL: Abort … Report this as a
    teamlore bug` (exit 1): the person stopped answering, nothing is confirmed."""
    args = ("memory", "confirm", *(["--"] if typer_parsed else []))
    code, printed = _stopped_at_the_question(quarantined, args, STOP_KEYS[key])
    assert code == 130, printed
    assert "INTERNAL" not in printed and "Abort" not in printed, printed
    # after the question only what it kept (Ctrl-C's echo and the line end may be flushed
    # away with it): nothing was answered
    assert " ".join(printed.split()).endswith(
        "Is statement s1 true? [y/d/q/N]: Stopped: nothing confirmed or discarded, no plan made."
    ), printed[-200:]
    proc = in_process("memory", "review", "--format", "json", cwd=quarantined)
    assert len(json.loads(proc.stdout)["items"]) == 1  # still waiting for review


def _stopped_at_the_question(cwd: Path, args: tuple[str, ...], key: bytes) -> tuple[int, str]:
    """`teamlore ARGS` on a pseudo-terminal that is its controlling terminal (a person's: the
    terminal turns Ctrl-C into SIGINT, Ctrl-D at the start of a line into end of input), `key`
    pressed at the first question. (exit code, everything it printed)"""
    code, text = teamlore_in_pty(*args, answers=[key], cwd=cwd, controlling=True)
    return code, re.sub(r"\x1b\[[0-9;]*m", "", text).replace("^C", "").replace("^D", "")


def test_a_person_names_a_candidate_as_review_shows_it(repo: Path, home: Path) -> None:
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    batch = draft_batch(task["sources"][0])
    second = json.loads(json.dumps(batch["candidates"][0]))
    second["content"] = second["statements"][0]["text"] = "Push release tags only from main."
    batch["candidates"].append(second)
    staged = op("memory.stage", repo, batch)
    op("memory.stage", repo, store_all(staged["adjudicationTask"]))
    first_id, second_id = sorted(c["candidateId"] for c in staged["candidates"])
    shown = in_process("memory", "review", cwd=repo).stdout
    short = re.findall(r"^Candidate (\S+) \(revision", shown, re.MULTILINE)
    assert sorted(short) == [first_id[:20] + "-c1", second_id[:20] + "-c2"]  # 12 hex of 64
    whole_task = first_id[:20]  # names both candidates: refused, nothing discarded
    proc = in_process("memory", "discard", "--candidate", whole_task, cwd=repo)
    assert proc.returncode == 2 and "names 2 candidates" in proc.stderr, proc.stderr
    proc = in_process(
        "memory", "discard", "--candidate", f"{first_id[:16]}-c2", "--reason", "x", cwd=repo
    )
    assert proc.returncode == 0 and f"Discarded {second_id[:20]}-c2" in proc.stdout, proc.stderr
    code, printed = teamlore_in_pty(
        "memory", "confirm", "--candidate", f"{first_id[:20]}-c1", answers=["y"], cwd=repo
    )
    assert code == 0 and "Plan " in printed, printed
    states = sqlite3.connect(home / "memory-state.sqlite3")
    assert dict(states.execute("SELECT candidate_id, status FROM candidates")) == {
        first_id: "quarantined",  # in a generated plan, waiting for promote
        second_id: "discarded",
    }


def test_confirm_then_promote_writes_the_entry(quarantined: Path) -> None:
    code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=quarantined)
    assert code == 0, printed
    plan = {"planId": re.search(r"Plan (\S+) generated", printed).group(1)}  # type: ignore[union-attr]
    shown = in_process("memory", "status", cwd=quarantined).stdout
    assert "Promotion    1 plan prepared, not yet promoted:" in shown
    assert f"  teamlore memory promote --plan {plan['planId']}" in shown
    promoted = in_process(
        "memory", "promote", "--plan", plan["planId"], "--format", "json", cwd=quarantined
    )
    assert promoted.returncode == 0, promoted.stdout
    files = json.loads(promoted.stdout)["files"]
    assert len(files) == 1 and (quarantined / files[0]["targetPath"]).is_file()
    found = json.loads(
        in_process("memory", "search", "tag prefix", "--format", "json", cwd=quarantined).stdout
    )
    assert [r["path"] for r in found["results"]] == [files[0]["targetPath"]]


def test_promote_says_when_git_ignores_the_entry_it_wrote(quarantined: Path) -> None:
    """A `.threadshare/` line in .gitignore (or info/exclude) keeps every promoted entry out of
    the commit: promote writes it and says so, with the rule and what to do."""
    (quarantined / ".git" / "info" / "exclude").write_text(".threadshare/\n")
    code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=quarantined)
    assert code == 0, printed
    plan = re.search(r"Plan (\S+) generated", printed).group(1)  # type: ignore[union-attr]
    promoted = in_process("memory", "promote", "--plan", plan, cwd=quarantined)
    assert promoted.returncode == 0, promoted.stderr
    [entry] = (quarantined / ".threadshare/memory/entries").glob("*.md")
    written = entry.relative_to(quarantined).as_posix()
    assert written.startswith(".threadshare/memory/entries/")
    lines = promoted.stdout.splitlines()
    at = lines.index(
        "warn git ignores 1 file (.git/info/exclude:1 .threadshare/): your team will not get it"
    )
    assert lines[at + 1 :] == [
        f"  {written}",
        "  next: `git add -f` it once (git then shares its changes), or change the rule",
    ]


def test_a_full_repository_disk_is_named_and_status_keeps_answering(
    tmp_path: Path, home: Path
) -> None:
    """The worktree on a full disk, the state dir on another with room: promote and assemble
    refuse with DISK_FULL naming the repository's disk, not the state dir's; `memory status`
    (which finishes an interrupted promotion) still answers and says what it could not finish;
    with space again, promote finishes the approved plan."""
    with tmpfs(tmp_path / "disk", "8m") as disk:
        repo = release_repository(disk, home)
        quarantine(repo)
        code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=repo)
        assert code == 0, printed
        plan = re.search(r"Plan (\S+) generated", printed).group(1)  # type: ignore[union-attr]
        before = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
        fill_to_the_last_byte(disk)
        for args in (("memory", "assemble", "-p", "claude"), ("memory", "promote", "--plan", plan)):
            refused = in_process(*args, cwd=repo)
            assert refused.returncode == 1
            assert refused.stderr.startswith(
                "error DISK_FULL: a disk teamlore writes to is full, not the state directory's"
            ), refused.stderr
        # the promotion it could not finish is now in the way of an assemble, which says so
        refused = in_process("memory", "assemble", "-p", "claude", cwd=repo)
        assert refused.returncode == 1
        assert refused.stderr.startswith("error PLAN_STATE_INVALID: promotion"), refused.stderr
        after = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
        assert after == before  # no entry, no block, no work file left behind
        status = in_process("memory", "status", cwd=repo)
        assert status.returncode == 0, status.stderr
        assert f"Promotion    {plan} could not be finished:\n  DISK_FULL:" in status.stdout
        (disk / "filler").unlink()
        promoted = in_process("memory", "promote", "--plan", plan, cwd=repo)
        assert promoted.returncode == 0, promoted.stderr
        assert "applied (resumed an interrupted promotion)" in promoted.stdout


def _stage(repo: Path, text: str) -> None:
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    staged = op("memory.stage", repo, draft_batch(task["sources"][0], text))
    op("memory.stage", repo, store_all(staged["adjudicationTask"]))


def _provider_session_id(home: Path) -> str:
    conn = sqlite3.connect(home / "index.sqlite3")
    try:
        return str(conn.execute("SELECT provider_session_id FROM sessions").fetchone()[0])
    finally:
        conn.close()


def test_a_session_id_from_this_machine_never_reaches_the_tree(repo: Path, home: Path) -> None:
    session_id = _provider_session_id(home)
    _stage(repo, f"Run the release tests before pushing tags (see {session_id}).")
    proc = in_process("memory", "confirm", "--yes", "--format", "json", cwd=repo)
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "LINT_BLOCKED"
    rules = {f["rule"] for c in error["details"]["candidates"] for f in c["findings"]}
    assert "session.known-session-id" in rules
    blocked = error["details"]["candidates"][0]["candidateId"]
    assert error["message"].startswith(f"blocked by lint: {blocked} (")  # names the candidate
    assert session_id not in proc.stdout
    assert not list((repo / ".threadshare" / "memory" / "entries").glob("*.md"))


def test_confirm_refuses_an_unknown_candidate_and_reports_nothing_to_do(repo: Path) -> None:
    proc = in_process(
        "memory", "confirm", "--yes", "--candidate", "nope", "--format", "json", cwd=repo
    )
    assert (proc.returncode, json.loads(proc.stdout)["error"]["code"]) == (1, "CANDIDATE_NOT_FOUND")
    proc = in_process("memory", "confirm", "--format", "json", cwd=repo)
    assert (proc.returncode, json.loads(proc.stdout)["status"]) == (0, "nothing-to-confirm")


def test_sessions_search_filters_by_repository_after_mapping(repo: Path, tmp_path: Path) -> None:
    # the session was indexed before its worktree was mapped: the search index follows the mapping
    found = json.loads(
        in_process(
            "sessions", "search", "tag prefix", "--repository", str(repo), "--format", "json"
        ).stdout
    )
    assert 2 in [h["turn"] for h in found["hits"]]
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    assert in_process("sync", "--repository", str(other)).returncode == 0
    elsewhere = json.loads(
        in_process(
            "sessions", "search", "tag prefix", "--repository", str(other), "--format", "json"
        ).stdout
    )
    assert elsewhere["hits"] == []


def test_an_unexpected_failure_is_internal_not_a_traceback(
    quarantined: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug cannot be provoked honestly, so one is planted (review raises RuntimeError); the
    command runs in-process through the real typer app to see what a person would."""
    from typer.testing import CliRunner

    import teamlore.memory.promotion.queue as queue
    from teamlore.cli.main import app

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("planted bug")

    monkeypatch.setattr(queue, "review_queue", broken)
    monkeypatch.chdir(quarantined)
    monkeypatch.delenv("TEAMLORE_DEBUG", raising=False)
    text = CliRunner().invoke(app, ["memory", "confirm", "--yes"])
    assert text.exit_code == 1 and "Traceback" not in text.output
    assert "error INTERNAL:" in text.output and "TEAMLORE_DEBUG=1" in text.output
    as_json = CliRunner().invoke(app, ["memory", "confirm", "--yes", "--format", "json"])
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["error"]["code"] == "INTERNAL"


def test_the_git_hint_after_promote_shows_the_new_file(quarantined: Path) -> None:
    """A promoted entry is a new, untracked file: plain `git diff` prints nothing for it."""
    _, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=quarantined)
    plan_id = re.search(r"Plan (\S+) generated", printed).group(1)  # type: ignore[union-attr]
    promoted = in_process(
        "memory", "promote", "--plan", plan_id, cwd=quarantined, env={"COLUMNS": "80"}
    )
    assert promoted.returncode == 0, promoted.stderr
    hint = " ".join(promoted.stdout.split())
    commands = re.findall(r"`(git [^`]+)`", hint)
    assert commands, hint
    shown = "".join(
        subprocess.run(command, shell=True, cwd=quarantined, capture_output=True, text=True).stdout
        for command in commands
    )
    entry = next((quarantined / ".threadshare/memory/entries").glob("*.md"))
    assert entry.name in shown
    last_line = [line for line in entry.read_text(encoding="utf-8").splitlines() if line][-1]
    assert last_line in shown


@pytest.fixture()
def confirmed_with_one_left_out(repo: Path) -> tuple[str, str]:
    """`memory confirm` on a terminal (80 columns) answering y, with a second candidate lint
    blocks (it holds a token): (the blocked candidate's id, what the terminal showed)."""
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    batch = draft_batch(task["sources"][0])
    leaky = json.loads(json.dumps(batch["candidates"][0]))
    leaky["content"] = leaky["statements"][0]["text"] = f"Push release tags with {TOKEN}."
    batch["candidates"].append(leaky)
    staged = op("memory.stage", repo, batch)
    op("memory.stage", repo, store_all(staged["adjudicationTask"]))
    blocked = sorted(c["candidateId"] for c in staged["candidates"])[1]

    code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=repo)
    assert code == 0, printed
    return blocked, re.sub(r"\x1b\[[0-9;]*m", "", printed)


TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_blocked_candidate_is_left_out_and_named_and_the_others_are_confirmed(
    confirmed_with_one_left_out: tuple[str, str],
) -> None:
    """`memory confirm` refused the whole queue for one candidate holding a token, telling the
    person to name every other candidate with --candidate."""
    blocked, printed = confirmed_with_one_left_out
    shown = " ".join(printed.split())
    assert printed.count("[y/d/q/N]") == 1 and "Plan " in shown and " generated (1 file)" in shown
    short = f"{blocked[:20]}-c2"
    assert (
        f"Left out {short}: blocked by lint (secret.github-token); discard it: "
        f"teamlore memory discard --candidate {short}"
    ) in shown
    assert TOKEN not in printed


def test_the_left_out_line_is_wrapped_at_80_columns(
    confirmed_with_one_left_out: tuple[str, str],
) -> None:
    """It was printed as one long line that the terminal broke mid-word."""
    blocked, printed = confirmed_with_one_left_out
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Left out "))
    left_out = lines[start : start + 4]
    assert all(len(line) <= 80 for line in left_out), left_out
    discard = f"teamlore memory discard --candidate {blocked[:20]}-c2 --reason 'blocked by lint'"
    assert " ".join(left_out).endswith(f"{discard}, or keep its lesson: {discard} --extract-again")


def test_status_names_a_plan_a_later_merge_made_void(tmp_path: Path, home: Path) -> None:
    """The plan was listed as `prepared, not yet promoted` with its promote command after a
    merge had consumed its candidate; promote then refused it."""
    tests = Path(__file__).resolve().parents[1]  # consumed_world imports recall_world
    sys.path[:0] = [str(tests / "memory" / "promotion"), str(tests / "memory")]
    from consumed_world import (
        merge_into_a_later_candidate,
        prepare_plan,
        quarantined_release_candidate,
    )

    flow, consumed = quarantined_release_candidate(tmp_path, home)
    plan_id = prepare_plan(flow, consumed)
    merger = merge_into_a_later_candidate(flow, consumed)
    proc = in_process("memory", "status", cwd=flow.repo, env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "not yet promoted" not in proc.stdout
    assert f"teamlore memory promote --plan {plan_id}" not in proc.stdout
    assert "Promotion    1 plan prepared can no longer be promoted: review again" in proc.stdout
    said = " ".join(proc.stdout.split())  # wrapped at the width, as teamlore's own words are
    assert all(len(line) <= 200 for line in proc.stdout.splitlines())
    assert (
        f"{plan_id}: candidate {consumed[:20]}-c1 was quarantined at revision 2 when the plan "
        f"was made and is now discarded at revision 3: {merger[:20]}-c1 merged it when it was "
        "staged (PROMOTION_CANDIDATE_DRIFT)"
    ) in said


def test_the_entry_promoted_says_what_the_person_confirmed(repo: Path) -> None:
    """The person was asked about `/home/alice/shop/release.sh` and the entry said
    `{local-path}`; now confirm asks about the text promotion writes, and that text is the
    entry's body."""
    text = (
        "Run the release script from /home/alice/shop/release.sh, or "
        "C:\\Users\\bob\\shop\\release.ps1 on Windows, and read /Users/carol/.netrc first."
    )
    written = (
        "Run the release script from {local-path}, or {local-path} on Windows, and read "
        "{local-path} first."
    )
    _stage(repo, text)
    reviewed = json.loads(in_process("memory", "review", "--format", "json", cwd=repo).stdout)
    shown = reviewed["items"][0]["statements"][0]
    assert shown["writtenText"] == written
    code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=repo)
    assert code == 0, printed
    asked = " ".join(printed.split())
    assert "/home/alice" not in asked and " ".join(written.split()) in asked
    assert "3 local references will be written as {local-path}" in asked
    plan = re.search(r"Plan (\S+) generated", printed).group(1)  # type: ignore[union-attr]
    promoted = in_process("memory", "promote", "--plan", plan, "--format", "json", cwd=repo)
    assert promoted.returncode == 0, promoted.stdout
    files = json.loads(promoted.stdout)["files"]
    entry = (repo / files[0]["targetPath"]).read_text(encoding="utf-8")
    assert files[0]["targetPath"].endswith(
        "run-the-release-script-from-local-path-or-on-windows-and.md"
    )
    assert entry.split("\n---\n", 1)[1].strip() == shown["writtenText"]


def test_confirm_shows_a_candidate_in_the_order_review_does(quarantined: Path) -> None:
    """Confirm printed the diff before the statements and left out review's summary line
    (`entry: provenance …, claim support …`); now the order is review's: the summary line,
    the statements, then the diff, and only then the question."""
    code, printed = teamlore_in_pty("memory", "confirm", answers=["n"], cwd=quarantined)
    assert code == 0, printed
    asked = re.sub(r"\x1b\[[0-9;]*m", "", printed).split("Is statement s1 true?")[0]
    reviewed = in_process("memory", "review", cwd=quarantined, env={"COLUMNS": "80"}).stdout
    lines = asked.splitlines()

    def at(start: str) -> int:
        return next(n for n, line in enumerate(lines) if line.startswith(start))

    summary = next(line for line in reviewed.splitlines() if line.startswith("  entry: "))
    assert summary in lines
    statement = at("  s1 needs your confirmation")
    diff = at("  +++ b/.threadshare/memory/entries/")
    assert at("Candidate ") < lines.index(summary) < statement < diff
    assert asked.strip() == reviewed.strip()  # what review shows, every line of it


# -- stopping part-way: each answer is kept as it is given ----------------------------------------

TOPICS = ("tags", "builds", "caches", "deploys", "queues", "fonts", "ports", "locks")


def queue_of(repo: Path, n: int) -> list[str]:
    """`n` (at most 8: one batch) quarantined candidates of the release session, each a lesson
    of its own; their ids in the queue's order (shown as review shows them)."""
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    batch = draft_batch(task["sources"][0])
    for topic in TOPICS[1:n]:
        other = json.loads(json.dumps(batch["candidates"][0]))
        other["content"] = other["statements"][0]["text"] = f"Check the {topic} before a release."
        batch["candidates"].append(other)
    staged = op("memory.stage", repo, batch)
    op("memory.stage", repo, store_all(staged["adjudicationTask"]))
    reviewed = op("memory.review", repo, {"limit": 50})
    return [short_candidate_id(item["candidateId"]) for item in reviewed["items"]]


def shown_ids(printed: str) -> list[str]:
    return re.findall(r"Candidate (\S+) \(revision", re.sub(r"\x1b\[[0-9;]*m", "", printed))


def test_q_stops_asking_and_plans_what_was_confirmed(repo: Path, home: Path) -> None:
    """To promote 20 of 201 candidates a person answered N 181 times: `q` (not an answer
    before) was asked again, and the walk went on to the end."""
    first, second, third = queue_of(repo, 3)
    code, printed = teamlore_in_pty(
        "memory", "confirm", answers=["y", "q", "n", "n", "n"], cwd=repo
    )
    assert code == 0, printed
    said = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", printed).split())
    assert shown_ids(printed) == [first, second], said  # the third was never shown
    assert printed.count("[y/d/q/N]") == 2, said
    assert (
        f"Stopped at {second}: it stays in quarantine, and so does 1 more candidate, not shown "
        "yet. What you confirmed is kept." in said
    )
    assert re.search(r"Plan \S+ generated \(1 file\)\.", said), said
    waiting = op("memory.review", repo, {"limit": 50})
    confirmed = {
        short_candidate_id(i["candidateId"]): [s["confirmation"] for s in i["statements"]]
        for i in waiting["items"]
    }
    # the plan's candidate waits for promote; the others for a person
    assert confirmed == {first: ["confirmed"], second: ["required"], third: ["required"]}
    states = sqlite3.connect(home / "memory-state.sqlite3")
    assert [row[0] for row in states.execute("SELECT status FROM promotion_journal")] == [
        "generated"
    ]


def test_ctrl_c_keeps_what_was_answered_and_says_so(repo: Path) -> None:
    """After `y`, Ctrl-C gave `^C` and exit 130: no plan, and the `y` was lost."""
    first, second, third = queue_of(repo, 3)
    code, printed = teamlore_in_pty(
        "memory", "confirm", answers=["y", "d", b"\x03", "n"], cwd=repo, controlling=True
    )
    said = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", printed).replace("^C", "").split())
    assert code == 130, said
    assert said.endswith(
        f"Stopped: no plan made. Kept what you answered: 1 statement confirmed ({first} s1) "
        f"and 1 candidate discarded ({second}). `teamlore memory confirm` asks only about the "
        "rest; `q` at a question stops and plans what is confirmed."
    ), said[-400:]
    assert "Plan " not in said
    # the next run asks only about the third, and plans the first with it when confirmed
    code, printed = teamlore_in_pty("memory", "confirm", answers=["y", "n", "n"], cwd=repo)
    said = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", printed).split())
    assert code == 0 and shown_ids(printed) == [first, third], said
    assert printed.count("[y/d/q/N]") == 1, said
    assert re.search(r"Plan \S+ generated \(2 files\)\.", said), said


def test_the_first_question_waits_for_one_page_not_the_whole_queue(repo: Path) -> None:
    """Confirm reviewed every candidate before its first question (7.4 s for 201): the
    queue is reviewed a page at a time, the next when the person reaches it — so a candidate
    discarded elsewhere while the person answers the first page is never shown."""
    ids = queue_of(repo, 8)
    last = ids[-1]

    def discarded_meanwhile() -> str:
        known = op("memory.review", repo, {"limit": 50})["items"]
        whole = next(
            i["candidateId"] for i in known if short_candidate_id(i["candidateId"]) == last
        )
        op("memory.discard", repo, {"candidateId": whole, "reason": "a teammate's call"})
        return "n"

    code, printed = teamlore_in_pty(
        "memory", "confirm", answers=[discarded_meanwhile] + ["n"] * 8, cwd=repo
    )
    assert code == 0, printed
    assert shown_ids(printed) == ids[:-1], shown_ids(printed)
    assert "No candidate has every statement confirmed; no plan recorded." in printed


# -- a candidate changed elsewhere while the person answers -----------------------------------


def _confirm_op(repo: Path, ask: Any) -> dict[str, Any]:
    """`memory.confirm` as the CLI runs it on a terminal, `ask` answering each candidate."""
    return load_operations().get("memory.confirm").run(OpContext(cwd=repo, confirm=ask), {})


def _whole_id(repo: Path, short: str) -> str:
    items = op("memory.review", repo, {"limit": 50})["items"]
    return next(i["candidateId"] for i in items if short_candidate_id(i["candidateId"]) == short)


def test_a_candidate_discarded_elsewhere_mid_answer_is_skipped_and_the_walk_goes_on(
    repo: Path,
) -> None:
    """A `y` to a candidate another terminal discarded while it was asked about raised
    CANDIDATE_STALE out of the whole run: nothing after it was asked, nothing planned."""
    from teamlore.ops.memory.confirm import CONFIRMED

    first, second, third = queue_of(repo, 3)
    gone = _whole_id(repo, first)
    shown: list[str] = []

    def ask(item: dict[str, Any]) -> bool:
        shown.append(short_candidate_id(item["candidateId"]))
        if item["candidateId"] == gone:  # discarded elsewhere while the person reads it
            op("memory.discard", repo, {"candidateId": gone, "reason": "a teammate's call"})
        if shown[-1] == third:
            return False  # not now
        item[CONFIRMED] = [s["statementId"] for s in item["statements"]]
        return True

    result = _confirm_op(repo, ask)
    assert shown == [first, second, third]
    assert [(s["candidateId"], s["code"]) for s in result["skipped"]] == [(gone, "CANDIDATE_STALE")]
    assert result["status"] == "generated" and result["plan"]["candidateIds"] == [
        _whole_id(repo, second)
    ], result


def test_stopping_counts_a_left_out_candidate_once(repo: Path) -> None:
    """`q` at the only candidate lint does not block said `and so does 1 more candidate, not
    shown yet` of the blocked one, already named as left out."""
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    batch = draft_batch(task["sources"][0])
    leaky = json.loads(json.dumps(batch["candidates"][0]))
    leaky["content"] = leaky["statements"][0]["text"] = f"Push release tags with {TOKEN}."
    batch["candidates"].append(leaky)
    op("memory.stage", repo, store_all(op("memory.stage", repo, batch)["adjudicationTask"]))

    def stop(item: dict[str, Any]) -> bool:
        item["stop"] = True
        return False

    result = _confirm_op(repo, stop)
    assert len(result["leftOut"]) == 1
    assert result["stopped"]["notShown"] == 0, result["stopped"]


def test_confirm_says_what_it_skipped_and_what_it_kept_on_a_refusal(repo: Path) -> None:
    """The terminal showed only the error: neither the candidate skipped nor the `y` already
    stored (`_say_kept` ran only on Ctrl-C)."""
    first, second, third = queue_of(repo, 3)

    def discard(short: str, answer: str) -> Any:
        def meanwhile() -> str:
            whole = _whole_id(repo, short)
            op("memory.discard", repo, {"candidateId": whole, "reason": "a teammate's call"})
            return answer

        return meanwhile

    # the second is discarded while asked about (skipped); the first, confirmed, is discarded
    # while the third is asked about: the plan of it is refused at the end
    code, printed = teamlore_in_pty(
        "memory", "confirm", answers=["y", discard(second, "y"), discard(first, "n")], cwd=repo
    )
    said = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", printed).split())
    assert code == 1, said
    assert shown_ids(printed) == [first, second, third], said
    assert "CANDIDATE_STALE" in said
    assert said.endswith(
        f"Stopped: no plan made. Kept what you answered: 1 statement confirmed ({first} s1). "
        "`teamlore memory confirm` asks only about the rest; `q` at a question stops and "
        "plans what is confirmed."
    ), said[-400:]


def test_confirm_names_the_candidate_it_skipped(repo: Path) -> None:
    first, second = queue_of(repo, 2)

    def meanwhile() -> str:
        whole = _whole_id(repo, first)
        op("memory.discard", repo, {"candidateId": whole, "reason": "a teammate's call"})
        return "y"

    code, printed = teamlore_in_pty("memory", "confirm", answers=[meanwhile, "y"], cwd=repo)
    said = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", printed).split())
    assert code == 0, said
    assert shown_ids(printed) == [first, second], said
    assert re.search(r"Plan \S+ generated \(1 file\)\.", said), said
    assert f"Skipped {first}: changed meanwhile; review it again (CANDIDATE_STALE)." in said, said


def test_a_candidate_discarded_by_d_is_said_before_the_plan(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`d` discards at once (docs/memory.md): it was said after the plan it is not in."""
    from teamlore.cli.commands.review import _render_confirm

    _render_confirm(
        {
            "status": "prepared",
            "planId": "0" * 64,
            "files": [],
            "next": "teamlore memory promote --plan 000",
            "discarded": [
                {
                    "status": "discarded",
                    "candidateId": "extract-aaaaaaaaaaaa-c2",
                    "previousStatus": "quarantined",
                }
            ],
        }
    )
    printed = capsys.readouterr().out
    assert printed.index("Discarded") < printed.index("Plan ")
