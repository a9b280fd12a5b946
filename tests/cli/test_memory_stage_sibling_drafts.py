"""The user walk: `teamlore memory stage` with two drafts that say the same thing in one batch.
Each one's recall set offers the other (a draft's recall leaves out only itself,
docs/extraction.md); the text view marks it as a draft of this batch, and an agent that merges
one into the other is told to skip instead, which is then accepted."""

from __future__ import annotations

import json
from pathlib import Path

from support import draft_batch, in_process, release_repository
from teamlore.ops.memory.review import short_candidate_id

WINDOW = ("--since", "2026-03-01T00:00:00.000Z", "--until", "2026-03-08T00:00:00.000Z")
SAME_LESSON = (
    "Run pytest tests/test_release.py before pushing release tags.",
    "Before pushing a release tag, run pytest tests/test_release.py.",
)


def memory(repo: Path, *args: str, request: dict | None = None) -> tuple[int, str]:
    stdin = None if request is None else json.dumps(request)
    proc = in_process("memory", *args, cwd=repo, input=stdin, env={"COLUMNS": "100"})
    return proc.returncode, proc.stdout


def adjudication(task: dict, *decisions: tuple[str, str, list[str]]) -> dict:
    """AdjudicationResult@v1 for `task`; a merge keeps the first wording."""
    merged = {"content": SAME_LESSON[0]}
    return {
        "format": "threadshare-memory-adjudication-result@v1",
        "taskId": task["taskId"],
        "binding": task["binding"],
        "adjudications": [
            {
                "draftRef": ref,
                "action": action,
                "targetIds": targets,
                "mergedFields": merged if action == "merge" else None,
            }
            for ref, action, targets in decisions
        ],
    }


def test_a_recalled_sibling_draft_is_marked_and_skipped_to(tmp_path: Path, home: Path) -> None:
    repo = release_repository(tmp_path, home)
    (home / "config.toml").write_text('[embeddings]\nbackend = "off"\n')  # words suffice here
    _, recalled = memory(repo, "recall", *WINDOW, "--format", "json")
    batch = draft_batch(json.loads(recalled)["sources"][0], SAME_LESSON[0])
    second = json.loads(json.dumps(batch["candidates"][0]))
    second["content"] = second["statements"][0]["text"] = SAME_LESSON[1]
    batch["candidates"].append(second)

    _, text = memory(repo, "stage", "--request", "-", request=batch)
    _, raw = memory(repo, "stage", "--request", "-", "--format", "json", request=batch)
    task = json.loads(raw)["adjudicationTask"]
    c1, c2 = (d["candidateId"] for d in task["drafts"])
    first_hit = {s["draftRef"]: s["ordered"][0] for s in task["recallSets"]}[c1]
    assert (first_hit["sourceKind"], first_hit["id"]) == ("candidate", c2)
    assert f"1. candidate {short_candidate_id(c2)} (a draft of this batch: skip only)" in text

    merge = adjudication(task, (c1, "merge", [c2]), (c2, "store", []))
    code, out = memory(repo, "stage", "--request", "-", "--format", "json", request=merge)
    error = json.loads(out)["error"]
    assert (code, error["code"]) == (1, "ADJUDICATION_INVALID")
    assert error["next"].startswith(f"If {c1} repeats {c2}, skip {c1} to {c2};"), error

    skip = adjudication(task, (c1, "skip", [c2]), (c2, "store", []))
    code, out = memory(repo, "stage", "--request", "-", request=skip)
    assert code == 0, out
    # the draft skipped to is named as every other id here is, short (it was printed whole)
    assert f"  {short_candidate_id(c1)}: skip {short_candidate_id(c2)} -> discarded" in out
    assert f"  {short_candidate_id(c2)}: store -> quarantined" in out
    assert c2 not in out


def test_an_approved_entry_named_with_hex_is_shown_whole_as_a_target_and_a_draft_short() -> None:
    """Only a draft's candidate id is shortened: an approved entry's id is its name, hex and
    all (cut to 12 hex digits, `order-…3456` and `order-…3457` read alike, and
    `pin-ci-image-3f2a1b…` names no entry there is)."""
    from teamlore.cli.commands.memory import _stage_line

    task = "extract-d028d5124c49f73b674ff843c3656427040519731d3c391d03ab419467224bb3"
    entries = [
        "order-1234567890123456",
        "order-1234567890123457",
        "pin-ci-image-3f2a1b9c8d7e6f5a4b",
    ]
    line = _stage_line(
        {
            "candidateId": f"{task}-c1",
            "action": "merge",
            "targetIds": [*entries, f"{task}-c2"],
            "candidateStatus": "quarantined",
        }
    )
    assert line == (
        f"extract-d028d5124c49-c1: merge {', '.join(entries)}, extract-d028d5124c49-c2 "
        "-> quarantined"
    )
