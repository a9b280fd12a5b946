"""What a new user walking personal memory is told to do next, through the real executable, a
real model server on 127.0.0.1 and real MCP server processes: an import whose Writer was killed
waits for the lease (never `retry`), an unreadable file or a path through a file gets the code
of what is wrong, a secret is only ever removed, `show` with no context allowed says so, a file
name reaches the model as the label has it, and a bad status lookup is told how to fix it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from personal_ops_world import (
    KEY_ENV,
    ModelServer,
    payload,
    retain,
    server_params,
    with_sessions,
    write_config,
)

from support import (
    UNPRIVILEGED,
    refusal_lines,
    teamlore_cli,
    teamlore_in_pty,
    unprivileged_prefix,
)

ENV = {KEY_ENV: "sk-scripted"}
CLI = [sys.executable, "-m", "teamlore.cli.main"]


def cli_json(*args: str, cwd: Path) -> tuple[int, dict[str, Any]]:
    proc = teamlore_cli("personal", *args, "--format", "json", cwd=cwd, env=ENV)
    return proc.returncode, json.loads(proc.stdout)


# -- 1. an import killed while its job runs --------------------------------------------------


def test_an_import_killed_while_its_model_answers_says_to_wait_for_the_lease(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """`personal import` killed (-9) during its model call leaves the job running until its
    lease ends. Importing again said `personal retry J` (which refuses a running job,
    NOTHING_TO_RETRY), `flush` said only "see status" (JSON `waiting: []`) and `status` showed
    no lease end."""
    write_config(home, model_url=model.base_url)
    (tmp_path / "n.md").write_text("# Tools\n\nI use neovim.\n", encoding="utf-8")
    answering = threading.Event()

    def slowly(p: dict[str, Any]) -> list[dict[str, Any]]:
        answering.wait(60)  # the model answers slowly: the import is killed meanwhile
        return retain("preferences", "Editor", "Uses neovim.")(p)

    model.script("document_import", slowly)
    importing = subprocess.Popen(
        [*CLI, "personal", "import", "n.md"],
        cwd=tmp_path,
        env={**os.environ, **ENV},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not model.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert model.requests, "the Writer never called the model"
    finally:
        importing.send_signal(signal.SIGKILL)
        importing.wait(30)
        answering.set()

    code, again = cli_json("import", "n.md", cwd=tmp_path)
    assert code == 1 and again["complete"] is False
    (part,) = again["parts"]
    job, lease = part["jobId"], part["leaseEnds"]
    assert (part["state"], part["jobState"]) == ("claimed", "running") and lease
    text = teamlore_cli("personal", "import", "n.md", cwd=tmp_path, env=ENV).stdout
    said = " ".join(text.split())  # each sentence wrapped at 80 columns
    assert f"part 1: claimed, job {job} (running; its lease ends {lease})" in said
    assert said[said.index("incomplete: ") :] == (
        f"incomplete: not every part was processed; job {job} is running until {lease}:"
        " import again after that"
    )
    assert "personal retry" not in text

    code, flushed = cli_json("flush", cwd=tmp_path)
    assert code == 1
    assert [(j["id"], j["state"], j["leaseEnds"]) for j in flushed["waiting"]] == [
        (job, "running", lease)
    ]
    flush_text = teamlore_cli("personal", "flush", cwd=tmp_path, env=ENV).stdout
    assert f"waiting: job {job} is running until {lease}: flush again after that" in " ".join(
        flush_text.split()
    )

    _, status = cli_json("status", cwd=tmp_path)
    assert [(j["id"], j["leaseEnds"], j["retryAt"]) for j in status["jobs"]] == [(job, lease, None)]
    status_text = teamlore_cli("personal", "status", cwd=tmp_path, env=ENV).stdout
    assert f"issue -, lease ends {lease})" in " ".join(status_text.split())

    refused = teamlore_cli("personal", "retry", job, cwd=tmp_path, env=ENV)
    assert refusal_lines(refused.stderr)[0] == (
        f"error NOTHING_TO_RETRY: job {job} is running until {lease}"
    )
    assert len(model.requests) == 1  # nothing asked the model again while the lease runs


def test_memory_status_names_the_job_an_init_waits_behind_as_the_cli_does(
    home: Path, tmp_path: Path
) -> None:
    """An init behind a running job of its context said `pending, jobId: null` over MCP, with
    no `waitsFor`, where `personal import` named the job."""
    from teamlore.personal import documents, queue
    from teamlore.personal.config import load_personal_settings_readonly
    from teamlore.personal.runtime_db import open_runtime_db

    write_config(home)  # no model: no Writer runs in the MCP process
    (tmp_path / "first.md").write_text("# First\n\nThe app ships weekly.\n", encoding="utf-8")
    queued = teamlore_cli("personal", "import", "first.md", "--no-wait", cwd=tmp_path, env=ENV)
    assert queued.returncode == 0, queued.stdout + queued.stderr
    conn = open_runtime_db(documents.personal_root(home))
    try:  # what a Writer does before its model call (a kill then leaves the job running)
        job = queue.claim(conn, load_personal_settings_readonly(home), now=time.time())
    finally:
        conn.close()
    assert job is not None
    init = {
        "importId": "desk-1",
        "contextId": "global",
        "sourceLabel": "desktop",
        "basis": "unknown",
        "understanding": "Likes tortoises.",
    }

    async def body(sessions: list[Any], _: list[Any]) -> Any:
        (session,) = sessions
        assert payload(await session.call_tool("memory_init", init))["accepted"] is True
        return await session.call_tool("memory_status", {"importId": "desk-1"})

    result = with_sessions(
        [server_params(tmp_path, "-c", "init", "--client-id", "desk", "--global")], body
    )

    outcome = payload(result)["import"]
    assert (outcome["state"], outcome["jobId"]) == ("pending", None)
    held = outcome["waitsFor"]
    assert (held["jobId"], held["jobState"]) == (job.id, "running") and held["until"]
    status, cli = cli_json("status", "--client-id", "desk", "--import-id", "desk-1", cwd=tmp_path)
    assert (status, cli) == (0, payload(result))
    text = teamlore_cli(
        "personal", "status", "--client-id", "desk", "--import-id", "desk-1", env=ENV
    ).stdout
    assert " ".join(text.split()) == (  # wrapped at 80 columns
        f"pending (waits for job {job.id}, running; its lease ends {held['until']})"
    )


# -- 2. a file that cannot be read, a path through a file --------------------------------------


@pytest.fixture()
def as_user() -> list[str]:
    """Root reads a file whatever its mode: as root, the CLI runs as nobody (`setpriv`)."""
    return unprivileged_prefix()


@pytest.fixture()
def world(as_user: list[str]) -> Iterator[Path]:
    # not under pytest's temp base: that is private to root, and the user must reach it
    root = Path(tempfile.mkdtemp(prefix="teamlore-unreadable-import-"))
    os.chmod(root, 0o755)
    write_config(root / "state")
    (root / "pk.md").write_text("# Keys\n\nI rotate keys monthly.\n", encoding="utf-8")
    (root / "shut").mkdir()
    (root / "shut" / "x.md").write_text("# X\n\nNotes.\n", encoding="utf-8")
    if as_user:
        for path in [root, *root.rglob("*")]:
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
    os.chmod(root / "pk.md", 0)
    os.chmod(root / "shut", 0)
    try:
        yield root
    finally:
        os.chmod(root / "shut", 0o700)
        shutil.rmtree(root)


@pytest.mark.parametrize("name", ["pk.md", "shut/x.md"])
def test_a_file_that_cannot_be_read_is_permission_denied(
    as_user: list[str], world: Path, name: str
) -> None:
    """A chmod 000 file said `UNSUPPORTED_FILE_TYPE: pk.md` and to import a regular .md file;
    one in a folder that may not be entered already said PERMISSION_DENIED."""
    env = {**os.environ, "TEAMLORE_HOME": str(world / "state"), "HOME": str(world)}
    run = [*as_user, *CLI, "personal", "import", name]
    done = subprocess.run(run, cwd=world, env=env, capture_output=True, text=True, timeout=120)
    lines = refusal_lines(done.stderr)
    assert done.returncode == 1 and lines[0].startswith("error PERMISSION_DENIED: "), done.stderr
    if name == "pk.md":
        assert lines == [
            "error PERMISSION_DENIED: pk.md cannot be read: permission denied",
            "  next: Make the file readable to you (`ls -l` shows its owner and mode).",
        ]
    assert not (world / "state" / "personal" / "runtime.sqlite3").exists()


def test_a_path_through_a_file_is_a_file_that_does_not_exist(home: Path, tmp_path: Path) -> None:
    """`zh.md/x.md` said STATE_INVALID: "a file teamlore keeps has the wrong type …; move it
    aside" (zh.md is the person's, not teamlore's)."""
    write_config(home)
    (tmp_path / "zh.md").write_text("# 笔记\n\n我用 neovim。\n", encoding="utf-8")
    code, out = cli_json("import", "zh.md/x.md", cwd=tmp_path)
    assert (code, out["error"]["code"]) == (1, "FILE_NOT_FOUND")
    assert out["error"]["message"] == "x.md does not exist: a folder on its path is a file"
    assert not (home / "personal" / "runtime.sqlite3").exists()


# -- 3. a secret is removed; personal data may be allowed ------------------------------------

AWS = "# AWS\n\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
OPENSSH = (
    "# Keys\n\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXQAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
REMOVE = "  next: Remove it and send again."


@pytest.mark.parametrize("content", [AWS, OPENSSH], ids=["aws", "openssh"])
def test_a_secret_is_only_ever_removed(home: Path, tmp_path: Path, content: str) -> None:
    """A secret was told that `[personal] allowed_pii` lets pii.* pass, which only personal
    data's rules can."""
    write_config(home)
    (tmp_path / "s.md").write_text(content, encoding="utf-8")
    done = teamlore_cli("personal", "import", "s.md", cwd=tmp_path, env=ENV)
    lines = refusal_lines(done.stderr)
    assert done.returncode == 1 and "holds a secret (secret." in lines[0], done.stderr
    assert lines[1] == REMOVE


def test_memory_init_with_a_secret_is_told_to_remove_it_and_personal_data_how_to_allow_it(
    home: Path, tmp_path: Path
) -> None:
    write_config(home)
    sent = {"contextId": "global", "sourceLabel": "desktop", "basis": "unknown"}

    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        (session,) = sessions
        return [
            await session.call_tool(
                "memory_init", {**sent, "importId": f"i{n}", "understanding": text}
            )
            for n, text in enumerate(
                [
                    "Their key is AKIAIOSFODNN7EXAMPLE.",
                    "Mail them at mei@example.com.",
                    "Key AKIAIOSFODNN7EXAMPLE, mail mei@example.com.",
                ]
            )
        ]

    secret, pii, both = (
        payload(r)["error"]
        for r in with_sessions(
            [server_params(tmp_path, "-c", "init", "--client-id", "desk", "--global")], body
        )
    )
    assert secret["code"] == pii["code"] == both["code"] == "SENSITIVE_CONTENT_REJECTED"
    assert secret["next"] == "Remove it and send again."
    assert pii["next"] == (
        "Remove it and send again; [personal] allowed_pii in config.toml lets pii.* pass."
    )
    assert both["next"].startswith("Remove the secret, and the personal data or allow it")


# -- 4. worktrees from `~` in `personal config --format json`: test_personal_config.py -----------

# -- 5. `show` when no context is allowed --------------------------------------------------------


def test_show_with_no_context_allowed_says_so_instead_of_saying_nothing_is_stored(
    home: Path, tmp_path: Path
) -> None:
    """With `global` taken off the scopes, `show --workspace .` in an unregistered folder said
    it showed "the global context only" and that nothing was stored for "none", though
    profile.md holds a note."""
    write_config(home, scopes=["project:*"])
    (home / "personal").mkdir(mode=0o700)
    (home / "personal" / "profile.md").write_text("# Profile\n\n## Pets\nA tortoise.\n")
    why = "[personal] allowed_scopes allows none of these contexts (global)"

    piped = teamlore_cli("personal", "show", "--workspace", ".", cwd=tmp_path, env=ENV)

    assert piped.returncode == 0  # a session-start hook goes on in any folder
    assert piped.stderr == "note: . is not registered\n"
    assert piped.stdout == (
        f"Personal memory is not readable here: {why}. Do not infer or invent facts about the"
        " user.\n"
    )
    code, shown = cli_json("show", cwd=tmp_path)
    assert (code, shown["readDisabled"], shown["contexts"]) == (0, why, [])
    code, printed = teamlore_in_pty("personal", "show", answers=[], cwd=tmp_path)
    said = " ".join(printed.split())
    assert code == 0 and f"No personal memory is shown: {why};" in said, printed
    assert "no stored content" not in said and "No personal memory is stored" not in said


# -- 6. a file name with control characters ------------------------------------------------------

NAME = "ev\x1b[31mil\nx.md"
CLEAN = "ev[31milx.md"


def test_a_file_name_reaches_the_model_as_its_label_and_the_cli_have_it(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """The label was cleaned (`ev[31milx.md`) but the model got ESC and the newline
    (`"file_name": "ev\\u001b[31mil\\nx.md"`) and the CLI said `file: ev\\x1b[31mil x.md`."""
    write_config(home, model_url=model.base_url)
    (tmp_path / NAME).write_text("# Tools\n\nI use neovim.\n", encoding="utf-8")
    model.script("document_import", retain("preferences", "Editor", "Uses neovim."))

    code, out = cli_json("import", NAME, "--no-wait", cwd=tmp_path)
    assert code == 0, out
    assert (out["import"]["fileName"], out["import"]["label"]) == (CLEAN, CLEAN)
    text = teamlore_cli("personal", "import", NAME, cwd=tmp_path, env=ENV)
    assert text.returncode == 0, text.stdout + text.stderr
    assert text.stdout.startswith(f"file: {CLEAN} (")

    (observation,) = json.loads(model.requests[0].json()["messages"][-1]["content"])["observations"]
    assert observation["import"]["file_name"] == observation["import"]["source_label"] == CLEAN


def test_a_part_queued_with_the_raw_name_still_reaches_the_model_cleaned(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """A part queued before names were cleaned holds the raw one in its envelope."""
    from teamlore.personal import documents, importing, queue
    from teamlore.personal.runtime_db import open_runtime_db

    write_config(home, model_url=model.base_url)
    file = importing.MarkdownFile(NAME, "# Tools\n\nI use fish.\n")
    (part,) = importing.chunk_markdown(file.text)
    envelope = importing.part_envelope(file, part, 1, 1, label=CLEAN, author="unknown")
    assert json.loads(envelope)["fileName"] == NAME
    (home / "personal").mkdir(mode=0o700)
    conn = open_runtime_db(documents.personal_root(home))
    try:
        namespace = importing.markdown_namespace(file.import_id, "global")
        item = queue.EnqueueItem(namespace, "part-1", envelope, "global", "document_import")
        queue.enqueue(conn, item, now=time.time())
    finally:
        conn.close()
    model.script("document_import", retain("preferences", "Shell", "Uses fish."))

    flushed = teamlore_cli("personal", "flush", cwd=tmp_path, env=ENV)

    assert flushed.returncode == 0, flushed.stdout + flushed.stderr
    projection = json.loads(model.requests[0].json()["messages"][-1]["content"])
    assert projection["observations"][0]["import"]["file_name"] == CLEAN


# -- 7. a status lookup refused: the next line matches the message --------------------------------


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--client-id", "cli1", "--import-id", "a1", "--submission-id", "s"],
            [
                "error INVALID_SUBMISSION_ID: look up importId alone",
                "  next: Look up the importId alone, or the submissionId (with its"
                " conversationId).",
            ],
        ),
        (
            ["--import-id", "a1"],
            [
                "error INVALID_CLIENT_ID: pass --client-id of the MCP client that submitted it",
                "  next: Add --client-id ID: the id the MCP server that took it was launched with.",
            ],
        ),
        (
            ["--client-id", "cli1", "--conversation-id", "c"],
            [
                "error INVALID_SUBMISSION_ID: conversationId needs submissionId",
                "  next: Give the submissionId sent with that conversationId as well.",
            ],
        ),
    ],
)
def test_a_refused_status_lookup_says_what_to_do_about_what_it_says(
    home: Path, args: list[str], said: list[str]
) -> None:
    """Mixing --import-id with --submission-id was told to "use the submissionId and
    conversationId your relay call returned"; a missing --client-id, which characters a
    client id may have."""
    write_config(home)
    done = teamlore_cli("personal", "status", *args, env={**ENV, "COLUMNS": "200"})
    assert done.returncode == 2 and refusal_lines(done.stderr) == said, done.stderr
