"""A teammate's entry that lands with a `git pull` between staging a draft and staging its
decision makes the decision stale (docs/extraction.md "stage": a changed comparison set refuses
the decision), whatever the decision and however the entry overlaps the draft: in words, or
only in meaning (`recall-hybrid-rrf@2`, docs/hybrid-search.md). Two clones of one real git
repository: ana stages a draft and keeps the adjudication task; ken commits and pushes an
approved entry that says what her draft says; ana pulls, then stages her decision."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import (
    commit_all,
    draft_batch,
    entry_file,
    git,
    release_repository,
    shared_fixtures,
    teamlore_cli,
)

# ken's entry when it says the draft's lesson in other words: the real fixture entry, which
# shares no search term with the draft (tests/cli/test_memory_stage_dedup.py shows it)
REAL_ENTRY = "threadshare-team-memory-extraction-uses-a-two-stage-pipeline"
REAL_ENTRY_BODY = (
    "Threadshare team-memory extraction uses a two-stage pipeline: a restricted runner produces "
    "CandidateDraftBatch output from an ExtractionTask, Threadshare performs BM25 recall for "
    "related memories locally, and a separate AdjudicationTask produces the deduplication or "
    "merge decision before transactional quarantine."
)
SECOND_WORDING = (
    "Summarizing happens in phases: a sandboxed agent proposes notes, we look up similar "
    "existing notes on this machine with keyword scoring, and a second LLM call decides whether "
    "to fold them together or drop them, before anything is held for review."
)
# ken's entry when it shares the draft's words
WORDS_ENTRY = "summarizing-notes-happens-in-phases"
WORDS_BODY = (
    "Summarizing happens in phases: a sandboxed agent proposes notes, keyword scoring looks up "
    "similar existing notes, and a second LLM call decides whether to fold or drop them."
)
UNRELATED_BODY = "Descale the office coffee machine on the first Monday of each month."
WINDOW = ("--since", "2026-03-01T00:00:00.000Z", "--until", "2026-03-08T00:00:00.000Z")


def ana_clone(place: Path, home: Path) -> Path:
    """ana's clone: the release repository with the real fixture memory tree (without
    REAL_ENTRY), committed and pushed to a bare remote that ken clones."""
    root = release_repository(place, home)
    tree = shared_fixtures("threadshare-memory")
    memory = root / ".threadshare" / "memory"
    for folder in ("entries", "scenes"):
        for path in (tree / folder).glob("*.md"):
            if path.stem != REAL_ENTRY:
                shutil.copy(path, memory / folder / path.name)
    commit_all(root, "team memory")
    subprocess.run(
        ["git", "init", "-q", "--bare", "-b", "main", str(place / "remote.git")], check=True
    )
    git(root, "remote", "add", "origin", str(place / "remote.git"))
    git(root, "push", "-q", "-u", "origin", "main")
    return root


@dataclass(frozen=True)
class World:
    """ana's clone (`ana`), the remote and her state dir (`home`) in `place`, after she staged
    the draft `batch` and kept its adjudication `task`."""

    place: Path
    ana: Path
    home: Path
    batch: dict
    task: dict


@pytest.fixture(scope="module")
def kept_aside(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path]:
    """The world built once (recall and staging the draft by the CLI), and a copy of its folder
    kept aside for `world` to put back."""
    place = tmp_path_factory.mktemp("world")
    home = place / "state"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEAMLORE_HOME", str(home))
        ana = ana_clone(place, home)
        batch = draft_batch(recalled_task(ana), SECOND_WORDING)
        task = staged(ana, batch)["adjudicationTask"]
    aside = tmp_path_factory.mktemp("aside") / "world"
    shutil.copytree(place, aside, symlinks=True)
    return World(place, ana, home, batch, task), aside


@pytest.fixture()
def world(kept_aside: tuple[World, Path], monkeypatch: pytest.MonkeyPatch) -> World:
    """The world as staging the draft left it, put back at its own paths (the state dir records
    the repository's) before each test: one copy in place of building and staging it again."""
    world, aside = kept_aside
    shutil.rmtree(world.place)
    shutil.copytree(aside, world.place, symlinks=True)
    monkeypatch.setenv("TEAMLORE_HOME", str(world.home))
    return world


def ken_pushes(place: Path, entry_id: str, body: str) -> None:
    """ken clones the remote, commits one approved entry (as promotion writes it), pushes."""
    ken = place / "ken"
    git(place, "clone", "-q", str(place / "remote.git"), str(ken))
    path = ken / ".threadshare" / "memory" / "entries" / f"{entry_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(entry_file(entry_id, body))
    commit_all(ken, f"memory: {entry_id}")
    git(ken, "push", "-q", "origin", "main")


def recalled_task(repo: Path) -> dict:
    """`memory recall` over the session's week: its one extraction task."""
    done = teamlore_cli("memory", "recall", *WINDOW, "--format", "json", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    task: dict = json.loads(done.stdout)["sources"][0]
    return task


def stage(repo: Path, request: dict) -> subprocess.CompletedProcess[str]:
    """`memory stage --request -` in `repo`: the CLI's app run in this process (typer's
    CliRunner), for the ~0.5 s a `teamlore` process spends starting and loading the embedder;
    recall runs as a process (`recalled_task`), tests/cli/test_memory_stage*.py stage so too."""
    from typer.testing import CliRunner

    from teamlore.cli.main import app

    args = ["memory", "stage", "--request", "-", "--format", "json"]
    with contextlib.chdir(repo):
        done = CliRunner().invoke(
            app, args, input=json.dumps(request), env={"TEAMLORE_HOME": os.environ["TEAMLORE_HOME"]}
        )
    return subprocess.CompletedProcess(args, done.exit_code, done.stdout, done.stderr)


def staged(repo: Path, request: dict) -> dict:
    done = stage(repo, request)
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict = json.loads(done.stdout)
    return result


def recalled(task: dict) -> list[str]:
    return [hit["id"] for hit in task["recallSets"][0]["ordered"]]


def decision(task: dict, action: str, target: str) -> dict:
    merged = None if action in ("store", "skip") else {"content": SECOND_WORDING}
    return {
        "format": "threadshare-memory-adjudication-result@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "adjudications": [
            {
                "draftRef": task["drafts"][0]["candidateId"],
                "action": action,
                "targetIds": [] if action == "store" else [target],
                "mergedFields": merged,
            }
        ],
    }


@pytest.mark.parametrize(
    ("overlap", "action"),
    [
        ("meaning", "skip"),
        ("meaning", "store"),
        ("meaning", "update"),
        ("meaning", "merge"),
        ("words", "skip"),
        ("words", "store"),
    ],
)
def test_an_entry_pulled_after_the_task_makes_any_decision_stale(
    world: World, overlap: str, action: str
) -> None:
    ana, batch, task = world.ana, world.batch, world.task
    assert task["binding"]["recallAlgorithmVersion"] == "recall-hybrid-rrf@2"
    older = recalled(task)[0]  # the entry ana decides against: known before the pull
    new = REAL_ENTRY if overlap == "meaning" else WORDS_ENTRY
    assert new not in recalled(task)

    ken_pushes(world.place, new, REAL_ENTRY_BODY if overlap == "meaning" else WORDS_BODY)
    git(ana, "pull", "-q", "--ff-only")

    refused = stage(ana, decision(task, action, older))
    assert refused.returncode != 0, refused.stdout
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "ADJUDICATION_STALE", error
    assert error["details"]["reason"] == "result-set-digest-mismatch", error

    # staging the same draft batch again: a fresh task whose comparison list holds ken's entry
    fresh = staged(ana, batch)["adjudicationTask"]
    assert fresh["taskId"] != task["taskId"]
    assert new in recalled(fresh), recalled(fresh)
    done = staged(ana, decision(fresh, action, new))
    assert done["candidates"][0]["action"] == action


def test_an_unchanged_comparison_set_lets_the_decision_through(world: World) -> None:
    """The rerun at decision time ranks as the task did: nothing changed, nothing refused."""
    ana, task = world.ana, world.task
    done = staged(ana, decision(task, "skip", recalled(task)[0]))
    assert done["candidates"][0]["candidateStatus"] == "discarded"
    assert done["recallComparison"]["resultSetDigest"] == task["binding"]["resultSetDigest"]


def test_an_unrelated_entry_pulled_after_the_task_leaves_the_decision_valid(
    world: World,
) -> None:
    """The rerun embeds the pulled entry with the task's embedder and ranks as the task did:
    an entry about something else changes no comparison list, so nothing is refused."""
    ana, task = world.ana, world.task
    ken_pushes(world.place, "descale-the-coffee-machine", UNRELATED_BODY)
    git(ana, "pull", "-q", "--ff-only")
    done = staged(ana, decision(task, "skip", recalled(task)[0]))
    assert done["candidates"][0]["candidateStatus"] == "discarded"
    assert done["recallComparison"] == {
        "recallAlgorithmVersion": "recall-hybrid-rrf@2",
        "resultSetDigest": task["binding"]["resultSetDigest"],
    }


def test_with_embeddings_off_at_decision_time_the_pulled_entry_still_makes_it_stale(
    world: World,
) -> None:
    """No embedder to sync the vectors with at decision time (config changed, model gone): the
    rerun does not rank blind to the pulled entry, it falls back to words alone, which differs
    from the task; the task staged again is words-only and its decision goes through."""
    ana, batch, task = world.ana, world.batch, world.task
    assert task["binding"]["recallAlgorithmVersion"] == "recall-hybrid-rrf@2"
    ken_pushes(world.place, REAL_ENTRY, REAL_ENTRY_BODY)
    git(ana, "pull", "-q", "--ff-only")
    (world.home / "config.toml").write_text('[embeddings]\nbackend = "off"\n')

    refused = stage(ana, decision(task, "skip", recalled(task)[0]))
    assert refused.returncode != 0, refused.stdout
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "ADJUDICATION_STALE", error
    assert error["details"]["actualRecallAlgorithm"] == "recall-rrf@1", error

    fresh = staged(ana, batch)["adjudicationTask"]
    assert fresh["binding"]["recallAlgorithmVersion"] == "recall-rrf@1"
    done = staged(ana, decision(fresh, "store", ""))
    assert done["candidates"][0]["candidateStatus"] == "quarantined"
