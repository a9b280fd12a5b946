"""`teamlore personal …` as the command runs them: Markdown import with per-part status and
exit codes, flush/retry, and CLI/MCP parity for read and status (results and errors). In process
(`in_process`) where no process is under test; usage errors' exits, a pipe and a terminal
through the real executable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from personal_ops_world import (
    KEY_ENV,
    ModelServer,
    decision,
    payload,
    put,
    refs,
    remove,
    retain,
    section_ref,
    server_params,
    with_sessions,
    write_config,
)

from support import in_process, refusal_lines, teamlore_cli, teamlore_in_pty

ENV = {KEY_ENV: "sk-scripted"}


def cli_json(*args: str, cwd: Path, process: bool = False) -> tuple[int, dict[str, Any]]:
    """`personal ARGS --format json`: in process; in the real executable with `process`."""
    run = teamlore_cli if process else in_process
    proc = run("personal", *args, "--format", "json", cwd=cwd, env=ENV)
    return proc.returncode, json.loads(proc.stdout)


def notes_with_parts(path: Path) -> Path:
    """Two parts: each heading's section is ~20 KiB, so they cannot share one 32 KiB part."""
    para = ("I keep field notes about tortoises and tide tables. " * 8 + "\n\n") * 48
    path.write_text(f"# Notes\n\n## Animals\n\n{para}## Coast\n\n{para}", encoding="utf-8")
    return path


def test_import_reports_each_part_and_exits_1_until_complete(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url, backoff_seconds=600)
    (home / "personal").mkdir(mode=0o700)
    (home / "personal" / "preferences.md").write_text("# Preferences\n\n## Language\nChinese.\n")
    notes = notes_with_parts(tmp_path / "notes.md")
    model.script(
        "document_import",
        # an import may never remove the user's (here: hand-written) section
        lambda p: [forget_language(p)],
        retain("profile", "Field notes", "From notes.md (declared author: user): tortoises."),
    )

    code, first = cli_json("import", str(notes), "--author", "user", cwd=tmp_path)
    assert code == 1
    assert first["import"]["parts"] == 2 and first["complete"] is False
    jobs = [r for r in first["flush"]["runs"] if r["outcome"] != "idle"]
    assert [r["code"] for r in jobs] == ["UNAUTHORIZED_FORGET_EVIDENCE"]
    assert [(p["part"], p["state"]) for p in first["parts"]] == [(1, "claimed"), (2, "claimed")]
    job = first["parts"][0]["jobId"]
    assert first["parts"][0]["issue"] == "UNAUTHORIZED_FORGET_EVIDENCE"

    text = in_process("personal", "import", str(notes), cwd=tmp_path, env=ENV)
    assert text.returncode == 1  # resumed: still backing off, nothing skipped the backoff
    said = " ".join(text.stdout.split())  # the sentences wrap at 80 columns
    assert "duplicate: this exact content was already imported as md-" in said
    assert f"teamlore personal retry {job}" in text.stdout

    assert cli_json("retry", job, cwd=tmp_path) == (0, {"jobId": job, "requeued": 2})
    code, again = cli_json("import", str(notes), cwd=tmp_path)
    assert code == 0 and again["complete"] is True
    assert again["import"]["duplicate"] is True
    assert [(p["part"], p["state"], p["retainedIn"]) for p in again["parts"]] == [
        (1, "processed", ["profile"]),
        (2, "processed", ["profile"]),
    ]
    assert (home / "personal" / "preferences.md").read_text().endswith("## Language\nChinese.\n")
    assert model.answered == ["document_import", "document_import"]


def test_a_model_server_on_this_machine_runs_the_writer_without_a_key(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url)  # http://127.0.0.1:<port>/v1, as a local server
    (tmp_path / "n.md").write_text("# Tools\n\nI use neovim.\n", encoding="utf-8")
    model.script("document_import", retain("preferences", "Editor", "Uses neovim."))

    done = in_process("personal", "import", "n.md", cwd=tmp_path, env={KEY_ENV: ""})

    assert done.returncode == 0, done.stdout + done.stderr
    assert "part 1: processed; retained in preferences" in done.stdout
    assert "authorization" not in model.requests[0].headers
    assert "Uses neovim." in (home / "personal" / "preferences.md").read_text()


def test_flush_says_what_each_job_did_in_words(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url)
    (tmp_path / "n.md").write_text("# Tools\n\nI use fish.\n", encoding="utf-8")
    model.script("document_import", retain("preferences", "Shell", "Uses fish."))
    queued = in_process("personal", "import", "n.md", "--no-wait", cwd=tmp_path, env=ENV)
    assert "part 1: pending\n" in queued.stdout

    first = in_process("personal", "flush", env=ENV)
    again = in_process("personal", "flush", env=ENV)

    assert first.returncode == again.returncode == 0
    [job] = [line for line in first.stdout.splitlines() if line.startswith("job ")]
    assert job.endswith(": written into personal memory")
    assert first.stdout.splitlines()[-1] == "complete: nothing else is due"
    assert again.stdout == "complete: nothing was due\n"


def unknown_evidence(p: dict[str, Any]) -> list[dict[str, Any]]:
    """An answer that cites evidence the batch does not hold: the job fails and backs off."""
    return [decision("retain", [put("profile", "Boats", "Kayaks.")], ["ev_999999"])]


def test_a_failing_job_in_another_scope_does_not_stop_the_flush(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """docs/cli.md: `flush` runs the Writer until nothing is due. A project's job that fails
    (first in the queue) is reported; the global import behind it is still processed."""
    project = tmp_path / "proj"
    project.mkdir()
    write_config(home, project_root=project, model_url=model.base_url, backoff_seconds=600)
    (tmp_path / "proj.md").write_text("# Proj\n\nThe app ships weekly.\n", encoding="utf-8")
    (tmp_path / "me.md").write_text("# Me\n\nI use neovim.\n", encoding="utf-8")
    model.script(
        "document_import",
        unknown_evidence,
        retain("preferences", "Editor", "Uses neovim."),
        unknown_evidence,
    )
    queued = in_process(
        "personal", "import", "proj.md", "--workspace", str(project), "--no-wait",
        cwd=tmp_path, env=ENV,
    )  # fmt: skip
    assert queued.returncode == 0, queued.stdout + queued.stderr

    code, out = cli_json("import", "me.md", cwd=tmp_path)

    assert code == 0 and out["complete"] is True, out
    assert [(r["outcome"], r["code"]) for r in out["flush"]["runs"]][:2] == [
        ("failed", "INVALID_EVIDENCE_REFERENCE"),
        ("committed", None),
    ]
    assert [(p["state"], p["retainedIn"]) for p in out["parts"]] == [("processed", ["preferences"])]
    flushed = in_process("personal", "flush", cwd=tmp_path, env=ENV)
    assert flushed.returncode == 1 and "incomplete" in flushed.stdout  # still backing off
    assert model.answered == ["document_import", "document_import"]
    # what it waits for is named, with what brings it back (it said "see status" alone)
    said = flushed.stdout.split("\nincomplete:")[0]  # one job waits: its sentence, wrapped
    waiting = " ".join(said[said.index("waiting: ") :].split())
    job = out["flush"]["runs"][0]["jobId"]
    assert waiting.startswith(f"waiting: job {job} retried at ")
    assert waiting.endswith(f" (INVALID_EVIDENCE_REFERENCE); `teamlore personal retry {job}`")


def test_a_part_held_back_by_its_contexts_failing_job_says_which_and_until_when(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """A part behind a job of its own context that backs off said only `part 1: pending` and
    `incomplete` (JSON: `jobId: null`): one job per context runs at a time."""
    write_config(home, model_url=model.base_url, backoff_seconds=600)
    (tmp_path / "first.md").write_text("# First\n\nThe app ships weekly.\n", encoding="utf-8")
    (tmp_path / "second.md").write_text("# Second\n\nI use neovim.\n", encoding="utf-8")
    model.script("document_import", unknown_evidence)
    first = in_process("personal", "import", "first.md", cwd=tmp_path, env=ENV)
    assert first.returncode == 1, first.stdout + first.stderr

    code, out = cli_json("import", "second.md", cwd=tmp_path)

    assert code == 1 and out["complete"] is False
    (part,) = out["parts"]
    held = part["waitsFor"]
    assert part["state"] == "pending" and part["jobId"] is None
    assert held["jobState"] == "retry" and held["issue"] == "INVALID_EVIDENCE_REFERENCE"
    printed = in_process("personal", "import", "second.md", cwd=tmp_path, env=ENV).stdout
    text = " ".join(printed.split())  # each sentence wrapped at words
    assert (
        f"part 1: pending (waits for job {held['jobId']}, retried after"
        f" INVALID_EVIDENCE_REFERENCE at {held['until']})" in text
    )
    assert f"`teamlore personal retry {held['jobId']}` then import again" in text
    assert model.answered == ["document_import"]


def test_a_part_held_back_by_a_running_job_is_not_sent_to_retry_it(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """A Writer killed mid-call leaves its job running until the lease ends; `personal retry`
    then refuses it (NOTHING_TO_RETRY), so the verdict says to wait for the lease instead."""
    import time

    from teamlore.personal import documents, queue
    from teamlore.personal.config import load_personal_settings_readonly
    from teamlore.personal.runtime_db import open_runtime_db

    write_config(home, model_url=model.base_url)
    (tmp_path / "first.md").write_text("# First\n\nThe app ships weekly.\n", encoding="utf-8")
    (tmp_path / "second.md").write_text("# Second\n\nI use neovim.\n", encoding="utf-8")
    queued = in_process("personal", "import", "first.md", "--no-wait", cwd=tmp_path, env=ENV)
    assert queued.returncode == 0, queued.stdout + queued.stderr
    conn = open_runtime_db(documents.personal_root(home))
    try:  # what a Writer process does before its model call (the kill comes after)
        job = queue.claim(conn, load_personal_settings_readonly(home), now=time.time())
    finally:
        conn.close()
    assert job is not None

    text = in_process("personal", "import", "second.md", cwd=tmp_path, env=ENV).stdout

    verdict = " ".join(text[text.index("incomplete: ") :].split())  # wrapped at words
    assert verdict.startswith(f"incomplete: not every part was processed; job {job.id} is running")
    assert verdict.endswith(": import again after that")
    assert "personal retry" not in verdict
    assert model.answered == []


def forget_language(p: dict[str, Any]) -> dict[str, Any]:
    operation = remove("preferences", section_ref(p, "preferences", "Language"))
    return decision("forget", [operation], refs(p))


@pytest.mark.parametrize(
    ("option", "code"),
    [
        (["--author", "bogus"], "INVALID_IMPORT_AUTHOR"),
        (["--label", "a\x07b"], "INVALID_IMPORT_LABEL"),
    ],
)
def test_a_bad_option_value_is_a_usage_error_that_queues_nothing(
    home: Path, tmp_path: Path, option: list[str], code: str
) -> None:
    """docs/cli-output.md: a bad value is a usage error (exit 2), as `personal config --allow
    bogus` is; these two exited 1."""
    write_config(home)
    (tmp_path / "notes.md").write_text("# Notes\n\nI use neovim.\n", encoding="utf-8")
    status, out = cli_json("import", "notes.md", *option, cwd=tmp_path, process=True)
    assert (status, out["error"]["code"]) == (2, code)
    assert not (home / "personal" / "runtime.sqlite3").exists()


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--client-id", "bad id", "--import-id", "q1"], 2, "--client-id 'bad id' is not a"),
        (["--import-id", "q1"], 2, "pass --client-id of the MCP client that submitted it"),
        (["--conversation-id", "x"], 2, "INVALID_SUBMISSION_ID: conversationId needs"),
        (["--client-id", "abc"], 2, "give --import-id or --submission-id"),
    ],
)
def test_a_status_lookup_is_refused_for_what_is_wrong_with_it(
    home: Path, args: list[str], code: int, says: str
) -> None:
    """`--client-id 'bad id'` was told to pass a --client-id; `--conversation-id` alone got
    the client id's refusal (the MCP tool says INVALID_SUBMISSION_ID), and exited 1 where every
    other bad lookup exits 2; `--client-id` alone was ignored."""
    write_config(home)
    done = teamlore_cli("personal", "status", *args, env=ENV)
    said = "\n".join(refusal_lines(done.stderr))
    assert done.returncode == code and says in said, done.stderr


def test_an_import_into_a_project_the_scopes_do_not_allow_says_so(
    home: Path, tmp_path: Path
) -> None:
    """It said the MCP tool's "that context is not available to this process" and named no
    context; `personal show --workspace ""` said "note:  is not registered"."""
    project = tmp_path / "proj"
    project.mkdir()
    write_config(home, project_root=project, scopes=["global"])
    (tmp_path / "notes.md").write_text("# Notes\n\nThe app ships weekly.\n", encoding="utf-8")
    done = in_process(
        "personal", "import", "notes.md", "--workspace", str(project), cwd=tmp_path, env=ENV
    )
    assert done.returncode == 1
    assert "[personal] allowed_scopes does not allow project:" in refusal_lines(done.stderr)[0]
    shown = in_process("personal", "show", "--workspace", "", cwd=tmp_path, env=ENV)
    assert ". is not registered" in shown.stdout + shown.stderr


@pytest.mark.parametrize(
    ("name", "content", "code"),
    [
        ("notes.txt", "# Notes\n", "UNSUPPORTED_FILE_TYPE"),
        ("empty.md", " \n\n", "EMPTY_DOCUMENT"),
        ("nul.md", "a\x00b", "INVALID_ENCODING"),
        ("fence.md", "# N\n\n```\n" + "x = 1\n" * 7000 + "```\n", "IMPORT_CHUNK_TOO_LARGE"),
        ("missing.md", None, "FILE_NOT_FOUND"),
    ],
)
def test_refused_files_queue_nothing(
    home: Path, tmp_path: Path, name: str, content: str | None, code: str
) -> None:
    write_config(home)
    if content is not None:
        (tmp_path / name).write_text(content, encoding="utf-8")
    status, out = cli_json("import", name, cwd=tmp_path)
    assert (status, out["error"]["code"]) == (1, code)
    assert not (home / "personal" / "runtime.sqlite3").exists()


def test_a_refused_import_says_what_it_holds_and_how_to_let_personal_data_through(
    home: Path, tmp_path: Path
) -> None:
    write_config(home)
    (tmp_path / "contact.md").write_text("# Contact\n\nMail mei@example.com.\n", encoding="utf-8")
    (tmp_path / "keys.md").write_text(
        "# Keys\n\nghp_abcdefghijklmnopqrstuvwxyz0123456789AB\n", encoding="utf-8"
    )

    contact = in_process("personal", "import", "contact.md", cwd=tmp_path, env=ENV)
    keys = in_process("personal", "import", "keys.md", cwd=tmp_path, env=ENV)

    assert contact.returncode == keys.returncode == 1
    assert refusal_lines(contact.stderr) == [
        "error SENSITIVE_CONTENT_REJECTED: contact.md:3 (part 1/1) holds personal data"
        " (pii.email); nothing was queued",
        "  next: Remove it and send again; [personal] allowed_pii in config.toml lets pii.* pass.",
    ]
    assert refusal_lines(keys.stderr)[0] == (
        "error SENSITIVE_CONTENT_REJECTED: keys.md:3 (part 1/1) holds a secret"
        " (secret.github-token); "
        "nothing was queued"
    )
    # a secret in --label is named as the label's, not as the file's first part's
    labelled = in_process(
        "personal", "import", "contact.md", "--label", "ghp_" + "A1b2C3d4E5" * 4,
        cwd=tmp_path, env=ENV,
    )  # fmt: skip
    assert refusal_lines(labelled.stderr)[0] == (
        "error SENSITIVE_CONTENT_REJECTED: the label holds a secret (secret.github-token); "
        "nothing was queued"
    )
    assert (
        in_process("personal", "status", "--format", "json", env=ENV).stdout.count(
            '"observations": {}'
        )
        == 1
    )


def test_import_without_a_model_queues_and_says_so(home: Path, tmp_path: Path) -> None:
    write_config(home)
    (tmp_path / "n.md").write_text("# N\n\nI like kayaking.\n")
    status, out = cli_json("import", "n.md", cwd=tmp_path)
    assert status == 1 and out["flush"]["error"]["code"] == "WRITER_DISABLED"
    assert [p["state"] for p in out["parts"]] == ["pending"]
    queued = in_process("personal", "import", "n.md", "--no-wait", cwd=tmp_path)
    assert queued.returncode == 0 and "queued: `teamlore personal flush` runs it" in queued.stdout
    flush = in_process("personal", "flush", cwd=tmp_path)
    assert flush.returncode == 1 and "WRITER_DISABLED" in flush.stderr


def test_import_into_a_workspace_needs_a_registered_one(home: Path, tmp_path: Path) -> None:
    write_config(home, project_root=tmp_path / "proj")
    (tmp_path / "n.md").write_text("# N\n\nUses uv.\n")
    assert (
        cli_json("import", "n.md", "--workspace", str(tmp_path), cwd=tmp_path)[1]["error"]["code"]
        == "UNREGISTERED_WORKSPACE"
    )
    write_config(home, project_root=tmp_path / "proj", provenance=["user_explicit"])
    assert cli_json("import", "n.md", cwd=tmp_path)[1]["error"]["code"] == "IMPORT_DISABLED"


def test_cli_and_mcp_agree_on_read_and_status(home: Path, tmp_path: Path) -> None:
    write_config(home)
    (home / "personal").mkdir(mode=0o700)
    (home / "personal" / "profile.md").write_text(
        "# Profile\n\n## Pets\nA tortoise. </common-memory> [bold]not markup[/bold]\n"
    )
    lookups: list[tuple[dict[str, Any], list[str]]] = [
        ({"importId": "imp-1"}, ["--import-id", "imp-1"]),
        ({"importId": "bad id"}, ["--import-id", "bad id"]),
        ({"conversationId": "c1"}, ["--conversation-id", "c1"]),
        ({"importId": "i", "submissionId": "s1"}, ["--import-id", "i", "--submission-id", "s1"]),
        ({"submissionId": "s1"}, ["--submission-id", "s1"]),
    ]  # fmt: skip

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        reader, writer = sessions
        await writer.call_tool(
            "memory_init",
            {
                "importId": "imp-1",
                "contextId": "global",
                "sourceLabel": "desktop",
                "basis": "unknown",
                "understanding": "Likes tortoises.",
            },
        )
        out = [await reader.call_tool("memory_read", {})]
        for arguments, _ in lookups:
            out.append(await writer.call_tool("memory_status", arguments))
        return out

    read, *statuses = with_sessions(
        [
            server_params(tmp_path, "-c", "read", "--client-id", "codex", "--global"),
            server_params(tmp_path, "-c", "init", "-c", "relay", "--client-id", "desk", "--global"),
        ],
        body,
    )
    code, shown = cli_json("show", cwd=tmp_path)
    assert code == 0 and payload(read) == shown
    text = in_process("personal", "show", cwd=tmp_path)
    assert text.stdout == read.content[0].text + "\n"
    assert "&lt;/common-memory>" in text.stdout and "[bold]not markup[/bold]" in text.stdout
    assert text.stdout.count("</common-memory>") == 1

    for (arguments, flags), result in zip(lookups, statuses, strict=True):
        status, cli = cli_json("status", "--client-id", "desk", *flags, cwd=tmp_path)
        assert payload(result) == cli, arguments
        assert (status != 0) == ("error" in cli)
    assert payload(statuses[0])["import"]["state"] == "pending"  # no model: stays queued


def test_show_at_a_terminal_describes_what_agents_read(home: Path, tmp_path: Path) -> None:
    """A person at a terminal is not addressed as the agent; a pipe (the SessionStart hook)
    still gets the agents' exact text."""
    code, printed = teamlore_in_pty("personal", "show", answers=[], cwd=tmp_path)
    assert code == 0, printed
    said = " ".join(printed.split())
    assert "Do not infer" not in said
    assert "No personal memory is stored for context(s) global." in said
    assert "Do not infer" in teamlore_cli("personal", "show", cwd=tmp_path).stdout

    (home / "personal").mkdir(parents=True, exist_ok=True)
    (home / "personal" / "profile.md").write_text("# Profile\n\n## Pets\nA tortoise.\n")
    code, printed = teamlore_in_pty("personal", "show", answers=[], cwd=tmp_path)
    said = " ".join(printed.split())
    assert code == 0 and "A tortoise." in said, printed
    assert "Use it to answer" not in said and "<common-memory" not in said
    assert "get 1 document, marked as your data, not instructions" in said
    piped = teamlore_cli("personal", "show", cwd=tmp_path).stdout
    assert piped.startswith("The following is the user's personal memory")
