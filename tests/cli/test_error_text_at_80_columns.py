"""A refusal as a person reads it at 80 columns: `error CODE: message` and `next: …` wrapped at
words under their lead, candidate ids in the short form the text views show; `--format json`
keeps every candidate id in full, for the agent that acts on it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from support import draft_batch, release_repository, store_all, teamlore_cli
from teamlore.ops.registry import OpContext, load_operations

AT_80 = {"COLUMNS": "80"}
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
FULL_ID = re.compile(r"[0-9a-f]{64}")


def op(name: str, repo: Path, payload: dict[str, Any]) -> dict[str, Any]:
    return load_operations().get(name).run(OpContext(cwd=repo), payload)


def staged(repo: Path, *contents: str) -> list[str]:
    """Drafts of the release session, one per content, adjudicated and in quarantine: their
    ids, sorted (`-c1`, `-c2`, …)."""
    from recall_world import WINDOW

    task = op("memory.recall", repo, {"since": WINDOW["since"], "until": WINDOW["until"]})
    batch = draft_batch(task["sources"][0])
    batch["candidates"] = []
    for text in contents:
        candidate = json.loads(json.dumps(draft_batch(task["sources"][0])["candidates"][0]))
        candidate["content"] = candidate["statements"][0]["text"] = text
        batch["candidates"].append(candidate)
    drafted = op("memory.stage", repo, batch)
    op("memory.stage", repo, store_all(drafted["adjudicationTask"]))
    return sorted(c["candidateId"] for c in drafted["candidates"])


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    return release_repository(tmp_path, home)


def short(candidate_id: str) -> str:
    return f"{candidate_id[:20]}{candidate_id[-3:]}"


def test_a_stale_candidate_refusal_fits_80_columns_and_names_the_id_short(repo: Path) -> None:
    """Discarding a discarded candidate printed `error CANDIDATE_STALE: extract-<64 hex>-c1 is
    already discarded; …` on one line of about 180 columns."""
    [candidate] = staged(repo, "Run pytest tests/test_release.py before pushing release tags.")
    first = teamlore_cli(
        "memory", "discard", "--candidate", short(candidate), "--reason", "x", cwd=repo
    )
    assert first.returncode == 0, first.stderr
    again = teamlore_cli(
        "memory", "discard", "--candidate", short(candidate), "--reason", "x", cwd=repo, env=AT_80
    )
    assert again.returncode == 1 and again.stdout == ""
    lines = again.stderr.splitlines()
    assert [line for line in lines if len(line) > 80] == [], lines
    assert lines[0].startswith(f"error CANDIDATE_STALE: {short(candidate)} is already discarded;")
    nexts = [i for i, line in enumerate(lines) if line.startswith("  next: ")]
    assert len(nexts) == 1 and all(line.startswith("      ") for line in lines[1 : nexts[0]])
    assert all(line.startswith("        ") for line in lines[nexts[0] + 1 :])
    assert not FULL_ID.search(again.stderr)

    as_json = teamlore_cli(
        "memory", "discard", "--candidate", short(candidate), "--format", "json", cwd=repo
    )
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "CANDIDATE_STALE" and error["message"].startswith(
        f"{candidate} is already discarded;"
    )


def test_a_lint_refusal_fits_80_columns_and_keeps_its_command_whole(repo: Path) -> None:
    """`memory confirm --yes` on a candidate lint blocks printed `error LINT_BLOCKED: blocked
    by lint: extract-<64 hex>-c2 (…)` on one line of about 220 columns."""
    candidates = staged(repo, f"Push release tags with {TOKEN}.")
    [blocked] = candidates
    done = teamlore_cli(
        "memory", "confirm", "--yes", "--candidate", short(blocked), cwd=repo, env=AT_80
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    # past 80 columns only the command, whole on its line to be copied
    command = f"`teamlore memory discard --candidate {short(blocked)} --reason 'blocked by lint'`"
    assert [line for line in lines if len(line) > 80] == [f"      ({command}),"], lines
    words = " ".join(done.stderr.split())
    # one candidate: its id in the command, runnable as written (with the --reason a run
    # without a terminal needs), and the flag that keeps its lesson named apart
    assert words.startswith(
        f"error LINT_BLOCKED: blocked by lint: {short(blocked)} (secret.github-token); discard it"
        f" ({command}), or keep its lesson: with `--extract-again` it is extracted again"
    ), words
    assert any(command in line for line in lines)
    assert not FULL_ID.search(done.stderr)

    as_json = teamlore_cli(
        "memory", "confirm", "--yes", "--candidate", short(blocked), "--format", "json", cwd=repo
    )
    error = json.loads(as_json.stdout)["error"]
    assert error["code"] == "LINT_BLOCKED" and f"blocked by lint: {blocked} (" in error["message"]


def test_the_files_a_plan_writes_push_nothing_past_80_columns(repo: Path) -> None:
    """`memory confirm` printed `  .threadshare/memory/entries/<slug>.md (new)` and `memory
    promote` `  <the same file>: written` on one line past 80 columns: the file, one token, is
    left whole on its line; what follows it goes on under it."""
    from support import teamlore_in_pty

    staged(
        repo,
        "Staging 30: a lock timeout on the release database means another deploy holds the "
        "lock; wait for it, never force it.",
    )
    code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=repo)
    assert code == 0, printed
    named = re.search(r"\.threadshare/memory/entries/staging-30-\S+\.md", printed)
    assert named is not None, printed
    written = named.group()
    assert len(f"  {written}") > 74  # with ` (new)` it would not fit
    lines = printed.splitlines()
    at = lines.index(f"  {written}")
    assert lines[at + 1] == "    (new)"
    assert [line for line in lines[at - 1 :] if len(line) > 80 and line != f"  {written}"] == []
    plan = re.search(r"Plan (\S+) generated", printed)
    assert plan is not None
    promote = teamlore_cli("memory", "promote", "--plan", plan.group(1), cwd=repo, env=AT_80)
    assert promote.returncode == 0, promote.stderr
    lines = promote.stdout.splitlines()
    assert [line for line in lines if len(line) > 80 and line.strip() != f"{written}:"] == []
    at = lines.index(f"  {written}:")
    assert lines[at + 1] == "    written"
