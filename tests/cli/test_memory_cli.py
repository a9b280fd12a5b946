"""`teamlore memory init|status|search|lint` in real git repositories."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import (
    draft_batch,
    git,
    in_process,
    memory_init,
    release_repository,
    store_all,
    teamlore_cli,
)

CLEAN_ENTRY = """---
id: export-order-must-be-stable
type: work_method
status: approved
priority: 70
confidence: high
provenance_strength: observed
claim_support: human-confirmed
limitations: ["not-authorship"]
scope: repo
scene: release-readiness
occurred: []
evidence: {"commits":[],"paths":["billing/export.py"]}
superseded_by: null
---
Sort invoice rows by id before exporting; commit 9f2c1e4b7a3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e fixed it.
"""


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "acme"
    root.mkdir()
    git(root, "init", "-q")
    return root


def cli_json(*args: str, cwd: Path) -> tuple[int, dict]:
    proc = in_process(*args, "--format", "json", cwd=cwd)
    return proc.returncode, json.loads(proc.stdout)


def test_init_creates_the_skeleton_once(repo: Path) -> None:
    code, first = cli_json("memory", "init", cwd=repo)
    assert code == 0
    assert first["created"] == [
        ".threadshare/memory/entries",
        ".threadshare/memory/entries/.gitkeep",
        ".threadshare/memory/scenes",
        ".threadshare/memory/scenes/.gitkeep",
        ".threadshare/memory/skills",
        ".threadshare/memory/skills/.gitkeep",
        ".threadshare/memory/index.json",
    ]
    index = json.loads((repo / ".threadshare/memory/index.json").read_text())
    assert index == {"format": "threadshare-memory-index@v1", "entries": [], "scenes": []}
    code, second = cli_json("memory", "init", cwd=repo)
    assert (code, second["created"]) == (0, [])


def test_init_leaves_every_folder_trackable_by_git(repo: Path) -> None:
    # git tracks files, not folders: without a file in them the empty folders would vanish
    # from the commit and a teammate's clone would lack them
    assert cli_json("memory", "init", cwd=repo)[0] == 0
    git(repo, "add", "-A")
    tracked = git(repo, "ls-files").split()
    for folder in ("entries", "scenes", "skills"):
        assert f".threadshare/memory/{folder}/.gitkeep" in tracked
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "memory")
    clone = repo.parent / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    for folder in ("entries", "scenes", "skills"):
        assert (clone / ".threadshare/memory" / folder).is_dir()
    code, lint = cli_json("memory", "lint", cwd=clone)
    assert code == 0 and lint["findings"] == []  # .gitkeep is not a memory document
    code, status = cli_json("memory", "status", cwd=clone)
    assert code == 0 and status["projection"]["coverage"] == "complete", status


def test_init_and_status_say_when_git_ignores_the_memory_tree(repo: Path) -> None:
    """`.threadshare` in .gitignore: the tree is made, and init and status name the rule, as
    the team would never get a file of it."""
    (repo / ".gitignore").write_text("*.log\n.threadshare\n")
    code, made = cli_json("memory", "init", cwd=repo)
    assert code == 0 and made["ignoredByGit"] == [
        {
            "rule": ".gitignore:2 .threadshare",
            "paths": [
                ".threadshare/memory/entries/.gitkeep",
                ".threadshare/memory/scenes/.gitkeep",
                ".threadshare/memory/skills/.gitkeep",
                ".threadshare/memory/index.json",
            ],
        }
    ]
    (repo / ".threadshare/memory/entries/export-order-must-be-stable.md").write_text(CLEAN_ENTRY)
    shown = in_process("memory", "status", cwd=repo).stdout.splitlines()
    at = shown.index(
        "warn git ignores 2 files (.gitignore:2 .threadshare): your team will not get them"
    )
    assert shown[at + 1 : at + 3] == [
        "  .threadshare/memory/entries/export-order-must-be-stable.md",
        "  .threadshare/memory/index.json",
    ]
    (repo / ".gitignore").write_text("*.log\n")
    code, status = cli_json("memory", "status", cwd=repo)
    assert (code, status["ignoredByGit"]) == (0, [])
    assert "git ignores" not in in_process("memory", "init", cwd=repo).stdout


def test_init_works_from_a_subdirectory_and_refuses_outside_git(repo: Path, tmp_path: Path) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert cli_json("memory", "init", cwd=sub)[0] == 0
    assert (repo / ".threadshare/memory/entries").is_dir()
    outside = tmp_path / "plain"
    outside.mkdir()
    code, result = cli_json("memory", "init", cwd=outside)
    assert (code, result["error"]["code"]) == (1, "NOT_A_GIT_REPOSITORY")
    assert not (outside / ".threadshare").exists()


def test_init_refuses_a_bare_repository(tmp_path: Path, home: Path) -> None:
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    code, result = cli_json("memory", "init", cwd=bare)
    assert (code, result["error"]["code"]) == (1, "BARE_REPOSITORY")


def test_lint_passes_clean_memory_and_blocks_a_secret(repo: Path) -> None:
    cli_json("memory", "init", cwd=repo)
    entries = repo / ".threadshare/memory/entries"
    (entries / "export-order-must-be-stable.md").write_text(CLEAN_ENTRY)
    code, report = cli_json("memory", "lint", cwd=repo)
    assert code == 0 and report["blocked"] is False, report
    leaked = CLEAN_ENTRY.replace("export-order-must-be-stable", "leak").replace(
        "Sort invoice rows", "Deploy with key AKIA" + "Q3EGRJ7XK2PLM5VN then sort rows"
    )
    (entries / "leak.md").write_text(leaked)
    proc = in_process("memory", "lint", "--format", "json", cwd=repo)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["blocked"] is True
    blocking = [f for f in report["findings"] if f["severity"] == "block"]
    assert [(f["file"], f["line"]) for f in blocking] == [
        (".threadshare/memory/entries/leak.md", 16)
    ]
    assert "Q3EGRJ7XK2PLM5VN" not in proc.stdout  # findings never echo the secret


def test_lint_given_files_and_a_home_path(repo: Path) -> None:
    draft = repo / "draft.md"
    draft.write_text("Run the tool from /home/dana/work/acme before release.\n")
    proc = in_process("memory", "lint", str(draft), "--format", "json", cwd=repo)
    report = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert report["files"] == ["draft.md"]
    assert any(f["severity"] == "block" for f in report["findings"])


def test_lint_of_a_file_that_cannot_exist_is_a_usage_error(repo: Path) -> None:
    """Missing, a name too long for the file system, a file used as a folder: each is `no such
    file` (exit 2), never an internal error. (A folder stands for the Markdown files under it.)"""
    (repo / "notes.md").write_text("fine\n")
    for given in ("missing.md", "n" * 5_000, "notes.md/inside.md"):
        proc = in_process("memory", "lint", given, "--format", "json", cwd=repo)
        assert proc.returncode == 2, proc.stdout
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "INVALID_ARGUMENT" and error["message"].endswith(": no such file")


def test_search_and_status_report_generation_and_coverage(repo: Path) -> None:
    cli_json("memory", "init", cwd=repo)
    (repo / ".threadshare/memory/entries/export-order-must-be-stable.md").write_text(CLEAN_ENTRY)
    code, found = cli_json("memory", "search", "invoice export", cwd=repo)
    assert code == 0 and found["coverage"] == "complete" and found["generation"] == 1
    assert [r["id"] for r in found["results"]] == ["export-order-must-be-stable"]
    assert set(found["results"][0]) >= {"id", "type", "score", "snippet", "path"}
    code, status = cli_json("memory", "status", cwd=repo)
    assert code == 0 and status["entries"]["approved"] == 1
    (repo / ".threadshare/memory/entries/broken.md").write_text("---\nid: other\n---\nx\n")
    code, partial = cli_json("memory", "search", "invoice", cwd=repo)
    assert partial["coverage"] == "partial" and partial["results"]


def test_status_says_how_many_problems_it_does_not_list(repo: Path) -> None:
    cli_json("memory", "init", cwd=repo)
    for n in range(12):
        (repo / f".threadshare/memory/entries/broken-{n:02}.md").write_text("---\nid: x\n---\n")
    code, status = cli_json("memory", "status", cwd=repo)
    assert code == 0 and len(status["projection"]["diagnostics"]) == 12
    text = in_process("memory", "status", cwd=repo, env={"COLUMNS": "80"}).stdout
    assert sum("broken-" in line for line in text.splitlines()) == 10
    assert "  … 2 more (--format json lists them all)" in text.splitlines()


def test_an_unquoted_multi_word_query_is_one_query(repo: Path) -> None:
    cli_json("memory", "init", cwd=repo)
    (repo / ".threadshare/memory/entries/export-order-must-be-stable.md").write_text(CLEAN_ENTRY)
    code, unquoted = cli_json("memory", "search", "sort", "invoice", "rows", cwd=repo)
    assert code == 0
    assert unquoted == cli_json("memory", "search", "sort invoice rows", cwd=repo)[1]
    assert unquoted["results"][0]["id"] == "export-order-must-be-stable"
    code, lexical = cli_json("memory", "search", "--lexical", "sort", "invoice", "rows", cwd=repo)
    assert lexical["paths"] == ["lexical"] and int(lexical["results"][0]["score"]) == 3
    text = in_process("memory", "search", "sort", "invoice", "rows", cwd=repo)
    assert text.returncode == 0 and "export-order-must-be-stable" in text.stdout
    assert teamlore_cli("memory", "search", cwd=repo).returncode == 2  # no query at all


def test_an_empty_or_blank_query_is_refused_before_the_projection_is_synced(
    repo: Path, home: Path
) -> None:
    """A refusal leaves the state as it was: the memory tree changed since the last search,
    and the refused search does not sync it into the projection first."""
    cli_json("memory", "init", cwd=repo)
    (repo / ".threadshare/memory/entries/export-order-must-be-stable.md").write_text(CLEAN_ENTRY)

    def state() -> dict[str, tuple[int, int]]:
        files = (f for f in home.rglob("*") if f.is_file())
        return {str(f): (f.stat().st_size, f.stat().st_mtime_ns) for f in files}

    before = state()
    for query in ("", " "):
        code, refused = cli_json("memory", "search", query, cwd=repo)
        assert (code, refused["error"]["code"]) == (2, "QUERY_EMPTY")
        assert state() == before
    code, found = cli_json("memory", "search", "invoice", cwd=repo)
    assert code == 0 and [r["id"] for r in found["results"]] == ["export-order-must-be-stable"]
    assert state() != before  # the search that ran synced it


@pytest.mark.parametrize("command", [("memory", "search"), ("sessions", "search")])
def test_a_query_whose_bytes_are_not_utf8_is_refused_as_a_usage_error(
    repo: Path, command: tuple[str, str]
) -> None:
    # a Latin-1 terminal sends `café` as b"caf\xe9": Python hands it over surrogate-escaped
    latin1 = b"invoice caf\xe9".decode("utf-8", "surrogateescape")
    proc = teamlore_cli(*command, latin1, cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert "INVALID_ARGUMENT" in proc.stderr and "QUERY" in proc.stderr
    assert "Traceback" not in proc.stderr and "INTERNAL" not in proc.stderr


def test_search_without_a_memory_tree_is_a_clear_refusal(repo: Path) -> None:
    code, result = cli_json("memory", "search", "anything", cwd=repo)
    assert (code, result["error"]["code"]) == (1, "MEMORY_NOT_INITIALIZED")


def test_lint_prints_one_finding_per_line_and_works_outside_git(tmp_path: Path, home: Path) -> None:
    """`path:line severity rule message`: piped (no colour), a blocking finding and a warning
    read apart by their words (they differed in colour only)."""
    outside = tmp_path / "drafts"
    outside.mkdir()
    (outside / "draft.md").write_text(
        "fine\nRun the tool from /home/dana/work/acme first.\nNotes live in ~/notes/acme.md.\n"
    )
    proc = in_process("memory", "lint", "draft.md", cwd=outside)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("draft.md:2 block path.home-absolute ")
    assert lines[1].startswith("draft.md:3 warn path.home-relative ")
    assert "\x1b[" not in proc.stdout
    assert lines[-1] == "2 findings, 1 blocking."
    as_json = in_process("memory", "lint", "draft.md", "-f", "json", cwd=outside)
    report = json.loads(as_json.stdout)
    assert report["files"] == ["draft.md"] and report["findings"][0]["line"] == 2


def test_a_request_file_is_read_up_to_a_bound(repo: Path, tmp_path: Path) -> None:
    """`--request` takes a JSON file or stdin: an endless one (/dev/zero) or one over 16 MiB is
    refused after reading 16 MiB, as are a folder and a file that is not JSON, each with exit 2."""
    big = tmp_path / "big.json"
    big.write_bytes(b'{"x": "' + b"y" * (16 << 20) + b'"}')
    not_json = tmp_path / "notes.json"
    not_json.write_text("[1, 2")
    for source, says in (
        ("/dev/zero", "larger than 16 MiB"),
        (str(big), "larger than 16 MiB"),
        (str(tmp_path), "Is a directory"),
        (str(not_json), "not JSON"),
    ):
        proc = in_process("memory", "stage", "--request", source, "-f", "json", cwd=repo)
        assert proc.returncode == 2, (source, proc.stdout)
        assert says in json.loads(proc.stdout)["error"]["message"]
    piped = teamlore_cli(
        "memory", "stage", "--request", "-", "-f", "json", cwd=repo, input=" " * ((16 << 20) + 1)
    )
    assert piped.returncode == 2 and "larger than 16 MiB" in piped.stdout


def test_recall_lists_each_deferred_task_on_its_own_line(tmp_path: Path, home: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import WINDOW, CodexSession, make_repo, sync

    repo = make_repo(tmp_path / "long")
    memory_init(repo, home)  # recall refuses a worktree without a memory tree
    session = CodexSession("h8", repo)
    for i in range(10):
        session.turn(f"turn {i} " + "y" * 30_000)  # one chunk per turn: 8 returned, 2 deferred
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    window = ("--since", WINDOW["since"], "--until", WINDOW["until"])

    done = in_process("memory", "recall", *window, cwd=repo)

    assert done.returncode == 0, done.stderr
    deferred = json.loads(in_process("memory", "recall", *window, "-f", "json", cwd=repo).stdout)[
        "coverage"
    ]["deferred"]
    shown = done.stdout.split("  deferred: 2\n")[1].splitlines()[:2]
    assert shown == [
        f"    {d['taskId'][:24]} turns {d['turnRange']['start']}–{d['turnRange']['end']}"
        for d in deferred
    ]
    assert "  not claimable: 0" in done.stdout


def test_recall_names_the_session_each_task_comes_from_as_sessions_list_does(
    tmp_path: Path, home: Path
) -> None:
    """At 80 columns the text view listed task ids and turn ranges only: which of the sessions
    a task came from could not be told. Each session's tasks now come under its key's first 12
    hex and its title (its first prompt here), as `sessions list` names it; never the whole key
    or the provider's session id."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import WINDOW, CodexSession, make_repo, sync

    repo = make_repo(tmp_path / "two")
    memory_init(repo, home)
    for suffix, topic in (("a1", "release script"), ("b2", "flaky export test")):
        session = CodexSession(suffix, repo)
        for i in range(3):
            session.turn(f"Fix the {topic}, step {i}")
        session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    window = ("--since", WINDOW["since"], "--until", WINDOW["until"])
    listed = json.loads(in_process("sessions", "list", "-f", "json", cwd=repo).stdout)
    keys = {s["derivedTitle"]: s["sessionKey"] for s in listed["sessions"]}

    done = in_process("memory", "recall", *window, cwd=repo, env={"COLUMNS": "80"})

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "2 extraction tasks"
    heads = [line for line in lines if line.startswith("  session ")]
    assert sorted(heads) == sorted(f"  session {key[:12]}  {title}" for title, key in keys.items())
    for head in heads:  # its task on the line under it
        assert lines[lines.index(head) + 1].startswith("    extract-")
    assert not any(key in done.stdout for key in keys.values())
    assert CodexSession("a1", repo).session_id not in done.stdout


def _note_of(lines: list[str]) -> str:
    """The `note: ` of a recall's text view, its lines (wrapped under `note: `) as one."""
    at = next(i for i, line in enumerate(lines) if line.startswith("note: "))
    end = next((i for i in range(at + 1, len(lines)) if not lines[i].startswith("      ")), None)
    return " ".join(" ".join(lines[at:end]).split())


def test_recall_says_its_coverage_in_words_and_names_sessions_as_sessions_list_does(
    tmp_path: Path, home: Path
) -> None:
    """The text view printed `notClaimable`, `alreadyExtractedTurns` and each session of its
    note by its 64-hex key; `sessions list` and `sessions show` use the first 12."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import WINDOW, CodexSession, make_repo, sync

    repo = make_repo(tmp_path / "short")
    memory_init(repo, home)
    CodexSession("s2", repo).turn("first turn").turn("second turn").write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    window = ("--since", WINDOW["since"], "--until", WINDOW["until"])
    as_json = json.loads(in_process("memory", "recall", *window, "-f", "json", cwd=repo).stdout)
    key = as_json["selection"]["rejectedSessions"][0]["sessionKey"]

    done = in_process("memory", "recall", *window, cwd=repo, env={"COLUMNS": "80"})

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("coverage:")
    assert lines[at + 1 : at + 7] == [
        "  chunks: 0",
        "  returned: 0",
        "  deferred: 0",
        "  not claimable: 0",
        "  turns already extracted: 0",
        "  truncated items: 0",
    ]
    note = _note_of(lines)
    assert note.endswith(f"Sessions considered: {key[:12]} (2 matching turns, fewer than 3)."), note
    assert key not in done.stdout


SCENE = (
    "-----META-START-----\ncreated: 2026-01-01\nupdated: 2026-01-01\n"
    'summary: "Release readiness"\nheat: 1\n-----META-END-----\n- Tag releases with a v prefix.\n'
)


def test_recall_leaves_out_a_symlinked_scene_and_says_so_as_search_does(
    tmp_path: Path, home: Path
) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import WINDOW, CodexSession, make_repo, sync

    repo = make_repo(tmp_path / "shop")
    CodexSession("l1", repo).turn("one").turn("two").turn("three").write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    assert in_process("memory", "init", cwd=repo).returncode == 0
    scenes = repo / ".threadshare/memory/scenes"
    (scenes / "release-readiness.md").write_text(SCENE)
    (tmp_path / "elsewhere.md").write_text(SCENE)
    (scenes / "linked.md").symlink_to(tmp_path / "elsewhere.md")
    window = ("--since", WINDOW["since"], "--until", WINDOW["until"])

    code, recalled = cli_json("memory", "recall", *window, cwd=repo)
    _, searched = cli_json("memory", "search", "release", cwd=repo)
    text = in_process("memory", "recall", *window, cwd=repo, env={"COLUMNS": "80"})

    assert code == 0 and len(recalled["sources"]) == 1
    memory = recalled["memoryContext"]
    assert [item["id"] for item in memory["items"]] == ["release-readiness"]
    assert searched["coverage"] == memory["coverage"] == "partial"
    assert (
        searched["leftOut"]
        == memory["leftOut"]
        == [
            {
                "code": "symlink",
                "file": ".threadshare/memory/scenes/linked.md",
                "line": None,
                "field": None,
                "why": "symbolic links are not allowed in the memory tree",  # as lint says
            }
        ]
    )
    assert "leftOut" not in recalled["skillContext"]
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[3:6] == [  # under the count, the session and its task
        "Not recalled: 1 file it cannot read:",
        "  symlink .threadshare/memory/scenes/linked.md: symbolic links are not allowed in the"
        " memory tree",
        "  next: fix them (`teamlore memory lint` shows each problem), then recall again.",
    ]


def _repo_with_a_scene_whose_heat_is_wrong(tmp_path: Path, home: Path) -> tuple[Path, dict]:
    """A synced worktree with a memory tree holding a good scene and one whose `heat` is not a
    number (`scenes/hot.md`), and the recall window of its sessions."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
    from recall_world import WINDOW, CodexSession, make_repo, sync

    repo = make_repo(tmp_path / "shop")
    CodexSession("l1", repo).turn("one").turn("two").turn("three").write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    assert in_process("memory", "init", cwd=repo).returncode == 0
    scenes = repo / ".threadshare/memory/scenes"
    (scenes / "release-readiness.md").write_text(SCENE)
    (scenes / "hot.md").write_text(SCENE.replace("heat: 1", 'heat: "very"'))
    return repo, WINDOW


def test_recall_leaves_out_a_broken_skill_and_a_scene_with_a_wrong_field_and_says_what_is_wrong(
    tmp_path: Path, home: Path
) -> None:
    """A SKILL.md that did not parse refused the whole recall; a scene whose `heat` is not a
    number was left out, but the text view did not say which field was wrong. Both are now
    left out and named, with the field, and `memory status` names the Skill too."""
    repo, sessions_window = _repo_with_a_scene_whose_heat_is_wrong(tmp_path, home)
    memory_dir = repo / ".threadshare/memory"
    for name, front in {"deploy": 'name: "deploy"', "broken": "name: [unclosed"}.items():
        (memory_dir / "skills" / name).mkdir()
        (memory_dir / "skills" / name / "SKILL.md").write_text(
            f'---\n{front}\ndescription: "Deploy."\n---\n1. Do it.\n'
        )
    window = ("--since", sessions_window["since"], "--until", sessions_window["until"])

    code, recalled = cli_json("memory", "recall", *window, cwd=repo)
    text = in_process("memory", "recall", *window, cwd=repo, env={"COLUMNS": "80"})
    status = in_process("memory", "status", cwd=repo, env={"COLUMNS": "80"})

    assert code == 0 and len(recalled["sources"]) == 1
    skills, memory = recalled["skillContext"], recalled["memoryContext"]
    assert [s["name"] for s in skills["skills"]] == ["deploy"]
    assert [item["id"] for item in memory["items"]] == ["release-readiness"]
    assert skills["coverage"] == memory["coverage"] == "partial"
    assert skills["leftOut"] == [
        {
            "code": "format.unterminated-json",
            "file": ".threadshare/memory/skills/broken/SKILL.md",
            "line": 2,
            "field": "name",
            "why": "JSON value never closes before the end of the header",
        }
    ]
    assert memory["leftOut"] == [
        {
            "code": "format.invalid-field",
            "file": ".threadshare/memory/scenes/hot.md",
            "line": 5,
            "field": "heat",
            "why": "Input should be a valid integer",
        }
    ]
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    at = lines.index("Not recalled: 2 invalid files:")  # read, but not valid: not unreadable
    assert lines[at + 1 : at + 4] == [  # one line each, never cut (the terminal wraps it)
        "  format.unterminated-json .threadshare/memory/skills/broken/SKILL.md:2 field `name`:"
        " JSON value never closes before the end of the header",
        "  format.invalid-field .threadshare/memory/scenes/hot.md:5 field `heat`:"
        " Input should be a valid integer",
        "  next: fix them (`teamlore memory lint` shows each problem), then recall again.",
    ]
    assert status.returncode == 0, status.stderr
    assert ".threadshare/memory/skills/broken/SKILL.md:2" in status.stdout


def test_recall_and_search_tell_a_file_they_cannot_read_from_an_invalid_one(
    tmp_path: Path, home: Path
) -> None:
    """Every file left out was one "it cannot read", a scene read whole whose `heat` is not a
    number too. A folder where a scene file is expected (unreadable as a file even for root)
    and that scene are now counted apart, in the header's order; the JSON is as it was."""
    repo, sessions_window = _repo_with_a_scene_whose_heat_is_wrong(tmp_path, home)
    scenes = repo / ".threadshare/memory/scenes"
    (scenes / "folder.md").mkdir()
    window = ("--since", sessions_window["since"], "--until", sessions_window["until"])

    _, recalled = cli_json("memory", "recall", *window, cwd=repo)
    _, searched = cli_json("memory", "search", "release", cwd=repo)
    recall = in_process("memory", "recall", *window, cwd=repo, env={"COLUMNS": "80"})
    search = in_process("memory", "search", "release", cwd=repo, env={"COLUMNS": "80"})

    expected = [
        {
            "code": "format.invalid-field",
            "file": ".threadshare/memory/scenes/hot.md",
            "line": 5,
            "field": "heat",
            "why": "Input should be a valid integer",
        },
        {
            "code": "not-a-file",
            "file": ".threadshare/memory/scenes/folder.md",
            "line": None,
            "field": None,
            "why": "not a regular file",
        },
    ]
    in_order = sorted(expected, key=str)  # the JSON names both as before, codes unchanged
    assert sorted(recalled["memoryContext"]["leftOut"], key=str) == in_order
    assert sorted(searched["leftOut"], key=str) == in_order
    for done, again, proc in (("recalled", "recall", recall), ("searched", "search", search)):
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        at = lines.index(f"Not {done}: 1 file it cannot read and 1 invalid file:")
        assert lines[at + 1 : at + 4] == [
            "  not-a-file .threadshare/memory/scenes/folder.md: not a regular file",
            "  format.invalid-field .threadshare/memory/scenes/hot.md:5 field `heat`:"
            " Input should be a valid integer",
            f"  next: fix them (`teamlore memory lint` shows each problem), then {again} again.",
        ]
        assert all(len(line) <= 80 for line in lines[at : at + 2]), lines[at : at + 2]


def test_the_cli_knows_every_code_of_a_file_the_memory_reader_did_not_read() -> None:
    """`say_left_out` counts a file as one "it cannot read" by its code (the CLI may not import
    the store): the codes it knows are the reader's skips and drift, a Skill folder without
    its SKILL.md aside (a tree to fix: lint blocks it, `tree.missing-skill-file`)."""
    import ast

    from teamlore.cli.output import _CANNOT_READ
    from teamlore.memory.store import tree_reader

    source = ast.parse(Path(tree_reader.__file__).read_text(encoding="utf-8"))
    codes = set()
    for node in ast.walk(source):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr == "_skip":
            assert isinstance(node.args[2], ast.Constant), ast.unparse(node)
            codes.add(node.args[2].value)
        for keyword in node.keywords:  # Diagnostic(code="source-drift", ...); `_skip`'s own aside
            if keyword.arg == "code" and isinstance(keyword.value, ast.Constant):
                codes.add(keyword.value.value)
    assert "missing-skill-file" in codes and "source-drift" in codes
    assert codes - {"missing-skill-file"} == _CANNOT_READ


def test_recall_of_extracted_turns_names_the_drafts_still_waiting_and_what_moves_them_on(
    tmp_path: Path, home: Path
) -> None:
    """It said only "every matching turn already extracted" while the drafts staged from those
    turns waited for an adjudication nobody had run; `memory status` named them."""
    repo = release_repository(tmp_path, home)
    window = ("--since", "2026-03-01", "--until", "2026-03-08")
    _, first = cli_json("memory", "recall", *window, cwd=repo)
    staged = tmp_path / "drafts.json"
    staged.write_text(json.dumps(draft_batch(first["sources"][0])))
    code, drafted = cli_json("memory", "stage", "--request", str(staged), cwd=repo)
    assert code == 0, drafted
    _, status = cli_json("memory", "status", cwd=repo)
    advised = status["adjudication"]["next"]

    code, again = cli_json("memory", "recall", *window, cwd=repo)
    text = in_process("memory", "recall", *window, cwd=repo, env={"COLUMNS": "80"})

    assert code == 0 and again["sources"] == []
    assert again["waiting"] == {"awaitingAdjudication": 1, "awaitingReview": 0, "next": advised}
    waiting = f" Staged from those turns, still waiting: 1 draft awaits adjudication: {advised}."
    assert again["note"].endswith(f"(every matching turn already extracted).{waiting}")
    assert text.returncode == 0, text.stderr
    note = _note_of(text.stdout.splitlines())
    assert note.endswith(waiting), note

    adjudicated = tmp_path / "adjudication.json"
    adjudicated.write_text(json.dumps(store_all(drafted["adjudicationTask"])))
    assert cli_json("memory", "stage", "--request", str(adjudicated), cwd=repo)[0] == 0

    _, reviewed_next = cli_json("memory", "recall", *window, cwd=repo)

    assert reviewed_next["waiting"] == {
        "awaitingAdjudication": 0,
        "awaitingReview": 1,
        "next": "teamlore memory review",
    }
    assert reviewed_next["note"].endswith(
        " still waiting: 1 quarantined candidate awaits review: teamlore memory review."
    )
