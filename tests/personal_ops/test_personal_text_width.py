"""docs/cli-output.md: teamlore's own words fit the width. At `COLUMNS=80` no line of a
`personal` text view passes 80 cells: an import's part lines and verdict, `flush`'s lines,
`status`'s job lines and `config`'s warning are wrapped at words under a hanging indent, each
`command` in backticks whole on one line, and every word is still said. A flush that finishes a
commit a crash interrupted says so (it said `complete: nothing was due`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from personal_ops_world import KEY_ENV, ModelServer, decision, put, write_config
from rich.cells import cell_len

from support import in_process

ENV = {KEY_ENV: "sk-scripted", "COLUMNS": "80"}


def unknown_evidence(p: dict[str, Any]) -> list[dict[str, Any]]:
    """An answer citing evidence the batch does not hold: the job fails and backs off."""
    return [decision("retain", [put("profile", "Boats", "Kayaks.")], ["ev_999999"])]


def personal(*args: str, cwd: Path) -> tuple[str, str]:
    done = in_process("personal", *args, cwd=cwd, env=ENV)
    return done.stdout, done.stderr


def personal_json(*args: str, cwd: Path) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(personal(*args, "--format", "json", cwd=cwd)[0])
    return result


def assert_fits(text: str, *, paths: Path | None = None) -> None:
    """No line passes 80 cells but one that names a path under `paths`, whole to copy."""
    lines = text.splitlines()
    too_wide = [line for line in lines if cell_len(line) > 80 and not _names(line, paths)]
    assert not too_wide, text


def _names(line: str, paths: Path | None) -> bool:
    return paths is not None and str(paths) in line


def words(text: str) -> str:
    return " ".join(text.split())


def test_every_personal_view_fits_80_columns_and_says_every_word(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    write_config(home, project_root=project, model_url=model.base_url, backoff_seconds=600)
    (tmp_path / "n.md").write_text("# Boats\n\nI paddle kayaks.\n", encoding="utf-8")
    model.script("document_import", unknown_evidence)

    imported, _ = personal("import", "n.md", "--workspace", str(project), cwd=tmp_path)
    flushed, _ = personal("flush", cwd=tmp_path)
    status, _ = personal("status", cwd=tmp_path)
    _, warned = personal("config", "--model-profile", "nowhere-to-be-found", cwd=tmp_path)

    job = personal_json("status", cwd=tmp_path)["jobs"][0]
    for view in (imported, flushed, warned):
        assert_fits(view)
    assert_fits(status, paths=home)  # the state dir's path, whole
    said = words(imported)
    assert f"part 1: claimed, issue INVALID_EVIDENCE_REFERENCE, job {job['id']} (retry)" in said
    retry = f"`teamlore personal retry {job['id']}`"
    assert f"incomplete: not every part was processed; {retry} then import again" in said
    assert retry in imported.splitlines()[-1] or retry in imported.splitlines()[-2]
    assert words(flushed) == (
        f"waiting: job {job['id']} retried at {job['retryAt']} (INVALID_EVIDENCE_REFERENCE);"
        f" {retry} incomplete: see `teamlore personal status`"
    )
    assert any(line.strip() == retry.split(";")[0] for line in flushed.splitlines())
    assert (
        f"job {job['id']} retry ({job['scope']}, document_import, attempts 1, issue"
        f" INVALID_EVIDENCE_REFERENCE, retry at {job['retryAt']})" in words(status)
    )
    assert "warning: model profile 'nowhere-to-be-found'" in words(warned)


def test_a_failed_jobs_flush_line_fits_80_columns(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url, backoff_seconds=600)
    (tmp_path / "n.md").write_text("# Boats\n\nI paddle kayaks.\n", encoding="utf-8")
    model.script("document_import", unknown_evidence)
    personal("import", "n.md", "--no-wait", cwd=tmp_path)

    flushed, _ = personal("flush", cwd=tmp_path)

    assert_fits(flushed)
    assert words(flushed).startswith("job ")
    assert ": failed (INVALID_EVIDENCE_REFERENCE)" in words(flushed)


def test_a_flush_says_it_completed_a_commit_a_crash_interrupted(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """The files and receipt of a commit were published, then the Writer died before the DB
    recorded it: the next flush completes it from the receipt and says so."""
    from teamlore.personal import commit, documents, queue
    from teamlore.personal.config import load_personal_settings_readonly
    from teamlore.personal.runtime_db import open_runtime_db

    write_config(home, model_url=model.base_url)
    (tmp_path / "n.md").write_text("# Boats\n\nI paddle kayaks.\n", encoding="utf-8")
    personal("import", "n.md", "--no-wait", cwd=tmp_path)
    root = documents.personal_root(home)
    conn = open_runtime_db(root)
    try:  # what a Writer did before it was killed: claim, then publish files and the receipt
        job = queue.claim(conn, load_personal_settings_readonly(home), now=time.time())
        assert job is not None
        receipt = {
            "format": commit.RECEIPT_FORMAT,
            "job_id": job.id,
            "outcome": "ignored",
            "observation_ids": list(job.observation_ids),
            "documents": [],
            "clear_targets": [],
            "remove_keys": [],
            "associations": [],
            "forget_observation_ids": [],
        }
        commit.publish(root, receipt, {})
    finally:
        conn.close()

    flushed, _ = personal("flush", cwd=tmp_path)

    assert_fits(flushed)
    assert "interrupted commit" in words(flushed), flushed
    assert job.id[:12] in flushed
    assert "nothing was due" not in flushed
    assert model.requests == []  # finished from the receipt: no model call
