"""A candidate that merges two approved entries of the real reference memory tree (fixtures/
threadshare-memory: nobody here wrote it), staged the way an agent stages it: a draft
rewording what both entries say, the adjudication task that recalls them, and a `merge`
decision. Promoting it rewrites the first entry's file and marks the second deprecated,
superseded by the first; the review must say so before anyone approves."""

from __future__ import annotations

import shutil
from pathlib import Path

from support import draft_batch, release_repository, shared_fixtures
from teamlore.ops.registry import OpContext, run_operation

REWRITTEN = "threadshare-team-memory-extraction-uses-a-two-stage-pipeline"
DEPRECATED = "threadshare-team-memory-extraction-should-process-insights-h"
MERGED_LESSON = (
    "Threadshare team-memory extraction uses a two-stage pipeline over complete turn-bounded "
    "chunks: a restricted runner drafts candidates, BM25 recall finds related memories, and an "
    "AdjudicationTask decides dedup or merge before quarantine; stale checks bind only the "
    "task's inputs."
)
WINDOW = {"since": "2026-03-01T00:00:00.000Z", "until": "2026-03-08T00:00:00.000Z"}


def merging_repository(
    tmp_path: Path, home: Path, *, deprecated_body_note: str | None = None
) -> tuple[Path, str]:
    """The release repository holding the real memory tree and one quarantined candidate that
    merges REWRITTEN and DEPRECATED; (repository, candidate id). `deprecated_body_note` is a
    line a person wrote at the end of DEPRECATED's body by hand before the merge."""
    repo = release_repository(tmp_path, home)
    tree = shared_fixtures("threadshare-memory")
    memory = repo / ".threadshare" / "memory"
    for folder in ("entries", "scenes"):
        for path in (tree / folder).glob("*.md"):
            shutil.copyfile(path, memory / folder / path.name)  # the fixtures are read-only
    if deprecated_body_note is not None:
        hand_written = memory / "entries" / f"{DEPRECATED}.md"
        hand_written.write_text(f"{hand_written.read_text()}\n{deprecated_body_note}\n")
    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, dict(WINDOW))["sources"][0]
    adjudication = run_operation("memory.stage", ctx, draft_batch(task, MERGED_LESSON))[
        "adjudicationTask"
    ]
    pool = {item["id"] for item in adjudication["pool"]}
    assert {REWRITTEN, DEPRECATED} <= pool, f"recall did not find both entries: {sorted(pool)}"
    (draft,) = [d["candidateId"] for d in adjudication["drafts"]]
    decision = {
        "draftRef": draft,
        "action": "merge",
        "targetIds": [REWRITTEN, DEPRECATED],
        "mergedFields": {"content": MERGED_LESSON},
    }
    run_operation(
        "memory.stage",
        ctx,
        {
            "format": "threadshare-memory-adjudication-result@v1",
            "taskId": adjudication["taskId"],
            "binding": adjudication["binding"],
            "adjudications": [decision],
        },
    )
    return repo, draft
