"""What a person reads at 80 columns, command by command (a newcomer's walk of the text views):
no line padded with trailing spaces, counts in the right number, warnings that name what is wrong
and where to read more, files named from `~` as the rows above them name them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support import (
    draft_batch,
    git,
    in_process,
    release_repository,
    shared_fixtures,
    store_all,
    teamlore_in_pty,
    writable_copy,
)

AT_80 = {"COLUMNS": "80"}


def padded(text: str) -> list[str]:
    return [line for line in text.splitlines() if line != line.rstrip()]


def entry(slug: str, *, limitations: str = '["not-authorship"]', body: str = "Sort rows.") -> str:
    return f"""---
id: {slug}
type: work_method
status: approved
priority: 70
confidence: high
provenance_strength: observed
claim_support: human-confirmed
limitations: {limitations}
scope: repo
scene: release-readiness
occurred: []
evidence: {{"commits":[],"paths":["billing/export.py"]}}
superseded_by: null
---
{body}
"""


@pytest.fixture()
def repo(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "acme"
    root.mkdir()
    git(root, "init", "-q")
    assert in_process("memory", "init", cwd=root).returncode == 0
    return root


def write_entry(repo: Path, slug: str, text: str) -> None:
    (repo / ".threadshare" / "memory" / "entries" / f"{slug}.md").write_text(text)


def test_repo_list_pads_no_line_with_trailing_spaces(tmp_path: Path, home: Path) -> None:
    """Each row ended in the spaces rich pads its last column with, as `sessions list` did."""
    shop = tmp_path / "shop"
    shop.mkdir()
    git(shop, "init", "-q")
    assert in_process("sync", "--repository", str(shop)).returncode == 0
    done = in_process("repo", "list", env=AT_80)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split() == [
        *("repository", "status", "sessions", "commits", "path")
    ]
    assert padded(done.stdout) == []


def test_memory_status_names_the_lint_rules_and_where_to_read_the_findings(repo: Path) -> None:
    """`Lint 0 blocking, 1 warning` alone did not say what was wrong or where to look."""
    write_entry(repo, "one", entry("one"))
    clean = in_process("memory", "status", cwd=repo, env=AT_80).stdout.splitlines()
    assert clean[-1] == "Lint         0 blocking, 0 warnings in 2 files"
    write_entry(repo, "one", entry("one", limitations='["not-authorship","made-up-limit"]'))
    write_entry(repo, "two", entry("two", limitations='["made-up-limit"]'))
    done = in_process("memory", "status", cwd=repo, env=AT_80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Lint "))
    assert lines[at] == "Lint         0 blocking, 2 warnings in 3 files"
    assert lines[at + 1 : at + 3] == [
        "  entry.unknown-limitation (2)",
        "  next: `teamlore memory lint` shows each with its file, line and what to do",
    ]


def test_assemble_speaks_of_one_approved_entry_in_the_singular(repo: Path) -> None:
    write_entry(repo, "one", entry("one"))
    done = in_process("memory", "assemble", "-p", "claude", cwd=repo, env=AT_80)
    assert done.returncode == 0, done.stderr
    assert (
        "1 approved entry: agents search it with threadshare_memory_search (the block says"
        " so); it is not copied into the block."
    ) in " ".join(done.stdout.split())


def test_dry_run_diffs_name_the_file_from_home_as_its_row_does(tmp_path: Path) -> None:
    """The row said `would create  ~/.codex/config.toml`, the diff under it `+++ /home/…`;
    and uninstall's title read `(dry run, nothing written)`, install's `(dry run), nothing
    written`."""
    fake = tmp_path / "bin"
    fake.mkdir()
    codex = fake / "codex"
    codex.write_text('#!/bin/sh\necho "codex-cli 0.50.0"\n')
    codex.chmod(0o755)
    user = {
        **AT_80,
        "HOME": str(tmp_path / "home"),
        "CODEX_HOME": str(tmp_path / "home" / ".codex"),
        "TEAMLORE_HOME": str(tmp_path / "state"),
        "PATH": f"{fake}:/usr/bin:/bin",
    }
    (tmp_path / "home").mkdir()
    preview = in_process("install", "--client", "codex", "--dry-run", env=user)
    assert preview.returncode == 0, preview.stderr
    lines = preview.stdout.splitlines()
    assert lines[0] == "codex (user scope): would change (dry run), nothing written"
    at = lines.index("  would create  ~/.codex/config.toml")
    assert lines[at + 1 : at + 3] == ["--- /dev/null", "+++ ~/.codex/config.toml"]
    assert in_process("install", "--client", "codex", env=user).returncode == 0
    undo = in_process("uninstall", "--client", "codex", "--dry-run", env=user)
    assert undo.returncode == 0, undo.stderr
    lines = undo.stdout.splitlines()
    assert lines[0] == "codex (user scope): would change (dry run), nothing written"
    at = lines.index("  would remove  ~/.codex/config.toml")
    assert lines[at + 1 : at + 3] == ["--- ~/.codex/config.toml", "+++ /dev/null"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`teamlore demo` run once: its folder and what it printed."""
    root = tmp_path_factory.mktemp("demo")
    proc = in_process("demo", "--dir", str(root / "demo"), env={**AT_80, "HOME": str(root)})
    assert proc.returncode == 0, proc.stderr
    return root / "demo", proc.stdout


def test_the_demo_names_each_candidate_as_review_shows_it(demo: tuple[Path, str]) -> None:
    """The demo's review step printed `extract-aaea0dcf` (the first 16 characters), `memory
    review` and the page `extract-aaea0dcf1234-c1`, the form `memory confirm --candidate`
    takes."""
    lines = demo[1].splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(" 7. review "))
    # each candidate's line starts 6 columns in; what wraps from it goes on further in
    shown = [line.split()[0] for line in lines[at + 1 : at + 5] if re.match(r" {6}\S", line)]
    assert len(shown) == 2
    for candidate in shown:
        assert re.fullmatch(r"extract-[0-9a-f]{12}-c[0-9]+", candidate), shown


def test_the_demos_search_step_fits_80_columns(demo: tuple[Path, str]) -> None:
    """Each query's first hit was one line of up to 141 columns; it wraps under the query now
    (a file the demo prints afterwards is shown as it is, long lines and all)."""
    from rich.cells import cell_len

    lines = demo[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(" 3. sessions-search "))
    end = next(i for i, line in enumerate(lines) if line.startswith(" 4. memory-init "))
    step = lines[start:end]
    assert [line for line in step if cell_len(line) > 80] == []
    assert step[1].startswith("      flaky invoice export: 3 hits — user: The release job")
    assert step[2].startswith("        ")


def test_a_runner_with_nothing_to_plan_says_why_in_a_sentence(
    demo: tuple[Path, str], tmp_path: Path
) -> None:
    """`memory consolidate --runner claude` after a consolidation printed `no approved entries
    are new …` under its first line."""
    claude = tmp_path / "claude"
    claude.write_text('#!/bin/sh\necho "2.0.0 (Claude Code)"\n')
    claude.chmod(0o755)
    env = {**AT_80, "TEAMLORE_HOME": str(demo[0] / "state"), "TEAMLORE_CLAUDE_BIN": str(claude)}
    done = in_process(
        "memory", "consolidate", "--runner", "claude", cwd=demo[0] / "acme-billing", env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == (
        "No approved entries are new or changed since the last consolidation. Nothing to plan."
    )


def test_an_import_the_writer_did_not_run_for_says_what_to_do(tmp_path: Path, home: Path) -> None:
    """`writer: not run (WRITER_DISABLED: …)` then `incomplete: not every part was processed`,
    and not a word of how to let the Writer run."""
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nI prefer pytest over unittest.\n")
    assert in_process("personal", "config", "--allow", "document_import").returncode == 0
    done = in_process("personal", "import", str(notes), env=AT_80)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("writer: not run "))
    assert lines[at].startswith("writer: not run (WRITER_DISABLED: ")
    after = next(i for i in range(at + 1, len(lines)) if not lines[i].startswith(" " * 8))
    assert lines[after] == (
        "  next: Choose a model with `teamlore personal config --model-profile NAME`."
    )


IMPORT_ID = re.compile(r"md-[0-9a-f]{64}")


def test_personal_import_fits_80_columns_with_its_id_whole(tmp_path: Path, home: Path) -> None:
    """`accepted: queued as md-<64 hex> (1 part); accepted means durably queued, not remembered`
    was one line of 143 columns (the duplicate's 121, the Writer's not run 170): each sentence
    now wraps under its lead, the import id whole on a line of its own; JSON is as it was."""
    notes = tmp_path / "notes-from-the-coast.md"
    notes.write_text("# Notes\n\nI prefer pytest over unittest.\n")
    assert in_process("personal", "config", "--allow", "document_import").returncode == 0
    queued = in_process("personal", "import", str(notes), "--no-wait", env=AT_80)
    again = in_process("personal", "import", str(notes), "--no-wait", env=AT_80)
    unrun = in_process("personal", "import", str(notes), env=AT_80)  # no model: not run
    as_json = in_process("personal", "import", str(notes), "--no-wait", "--format", "json")
    import_id = json.loads(as_json.stdout)["importId"]
    assert IMPORT_ID.fullmatch(import_id)
    assert (queued.returncode, again.returncode, unrun.returncode) == (0, 0, 1)
    for done in (queued, again, unrun):
        lines = done.stdout.splitlines()
        assert [line for line in lines if len(line) > 80] == [], done.stdout
        assert padded(done.stdout) == []
        assert IMPORT_ID.findall(done.stdout) == [import_id]  # whole, never split
    accepted = queued.stdout.splitlines()
    at = next(i for i, line in enumerate(accepted) if line.startswith("accepted: "))
    assert accepted[at : at + 3] == [
        "accepted: 1 part queued as",
        f"          {import_id};",
        "          accepted means durably queued, not remembered",
    ]
    duplicate = again.stdout.splitlines()
    at = duplicate.index("duplicate: this exact content was already imported as")
    assert duplicate[at + 1] == f"           {import_id}"
    assert " ".join(unrun.stdout.split()).startswith(
        "file: notes-from-the-coast.md (40 bytes, 1 part); label: notes-from-the-coast.md;"
        " declared author: unknown; context: global duplicate: this exact content"
    )
    # the JSON view is the operation's result, untouched by the text view's wrapping
    assert json.loads(as_json.stdout)["import"] == {
        "importId": import_id,
        "contextId": "global",
        "fileName": "notes-from-the-coast.md",
        "bytes": 40,
        "parts": 1,
        "duplicate": True,
        "label": "notes-from-the-coast.md",
        "declaredAuthor": "unknown",
        "frontMatter": False,
    }


def test_org_sync_says_in_words_what_it_added_changed_and_deleted(repo: Path, home: Path) -> None:
    """It read `acme  synced +1 ~0 -0  1 document`."""
    write_entry(repo, "one", entry("one"))
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "memory")
    assert in_process("org", "add", str(repo)).returncode == 0
    done = in_process("org", "sync", "--lexical", env=AT_80)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "acme  synced  1 document (1 added, 0 changed, 0 deleted)"
    )


def test_org_add_says_what_it_added_within_80_columns(tmp_path: Path, home: Path) -> None:
    """`Added shop-frontend-service (github.com/…) to the org index, embedded (…).` ran to 138
    columns on one line."""
    clone = tmp_path / "shop-frontend-service"
    clone.mkdir()
    git(clone, "init", "-q")
    git(clone, "remote", "add", "origin", "git@github.com:acme-corp/shop-frontend-service.git")
    assert in_process("memory", "init", cwd=clone).returncode == 0
    git(clone, "add", "-A")
    git(clone, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "memory")
    done = in_process("org", "add", str(clone), env=AT_80)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(map(len, lines)) <= 80, lines
    assert " ".join(line.strip() for line in lines).startswith(
        "Added shop-frontend-service (github.com/acme-corp/shop-frontend-service) to the org"
        " index, embedded ("
    )


def test_status_says_a_source_folder_it_marks_with_a_cross_is_not_there(
    tmp_path: Path, home: Path
) -> None:
    """`Source      ✗ codex   ~/.codex/sessions` did not say what `✗` means."""
    codex_home = tmp_path / "no-codex"
    env = {**AT_80, "CODEX_HOME": str(codex_home), "HOME": str(tmp_path)}
    done = in_process("status", env=env)
    assert done.returncode == 0, done.stderr
    assert "Source      ✗ codex   ~/no-codex/sessions (not found)" in done.stdout.splitlines()
    (codex_home / "sessions").mkdir(parents=True)
    found = in_process("status", env=env)
    assert "Source      ✓ codex   ~/no-codex/sessions" in found.stdout.splitlines()


def test_memory_status_wraps_the_consolidation_line_at_words(demo: tuple[Path, str]) -> None:
    """`Consolidation baseline run-consolidate-…, 0 approved entries new since (due at 20)` was
    93 columns, past the edge of an 80-column terminal, where the other lines fit."""
    env = {**AT_80, "TEAMLORE_HOME": str(demo[0] / "state")}
    done = in_process("memory", "status", cwd=demo[0] / "acme-billing", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    at = next(i for i, line in enumerate(lines) if line.startswith("Consolidation "))
    assert re.fullmatch(r"Consolidation baseline run-consolidate-[0-9a-f]{12}, .*", lines[at])
    assert lines[at + 1].startswith(" " * len("Consolidation ") + "since")
    assert " ".join(" ".join(lines[at : at + 2]).split()).endswith(
        ", 0 approved entries new since (due at 20)"
    )


def test_the_demo_prints_its_search_queries_as_text(demo: tuple[Path, str]) -> None:
    """The queries were printed as Python reprs: `'flaky invoice export': 3 hits — …`."""
    lines = demo[1].splitlines()
    assert any(line.startswith("      flaky invoice export: 3 hits — ") for line in lines)
    assert "      invoice export: invoice-export-must-sort-rows-by-id-unordered-exports-made" in (
        lines
    )
    assert not [line for line in lines if line.startswith("      '")]


def test_the_demo_wraps_its_step_lines_at_words(demo: tuple[Path, str]) -> None:
    """` 6. stage  the demo's scripted agent proposed …` ran to 150 columns (the steps 101 to
    175, a candidate under `7. review` 91): each summary now wraps under itself. Left whole,
    as the terminal wraps them: what the demo quotes (search hits, files, the managed block)."""
    lines = demo[1].splitlines()
    steps = [i for i, line in enumerate(lines) if re.match(r"[ 1]\d\. [a-z-]+  \S", line)]
    assert len(steps) == 18
    own = []  # each step's line and the lines wrapped from it, under its summary
    for at in steps:
        name = re.match(r"[ 1]\d\. [a-z-]+  ", lines[at])
        assert name is not None
        end = at + 1
        while end < len(lines) and lines[end].startswith(" " * len(name.group())):
            end += 1
        own += lines[at:end]
    own += lines[steps[6] + 1 : steps[7]]  # the candidates `7. review` names
    assert [line for line in own if len(line) > 80] == []
    stage = lines[steps[5] : steps[6]]
    assert stage == [
        " 6. stage  the demo's scripted agent proposed 2 candidates (fixed answers, no",
        "           model) and adjudicated them against team memory; they wait in",
        "           quarantine",
    ]
    assert padded(demo[1]) == []


@pytest.fixture()
def reviewed(tmp_path: Path, home: Path) -> Path:
    """A git repository whose memory tree is a real team's (fixtures/threadshare-memory, 17
    entries and a scene) with one quarantined candidate whose file lint warns about."""
    from teamlore.ops.registry import OpContext, run_operation

    repo = release_repository(tmp_path, home)
    from recall_world import WINDOW  # tests/memory, on the path once the repository is made

    tree = shared_fixtures("threadshare-memory")
    writable_copy(tree, repo / ".threadshare" / "memory")
    ctx = OpContext(cwd=repo, home=home)
    task = run_operation("memory.recall", ctx, dict(WINDOW))["sources"][0]
    text = "Deploy <service> only after the release tests pass; tag it with a v prefix."
    staged = run_operation("memory.stage", ctx, draft_batch(task, text))
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))
    return repo


RAW_HTML = (
    "warn format.raw-html: raw HTML `<service>`: GitHub drops it or its attributes, so a"
    " teammate does not see what an agent reads; write Markdown, or put it in backticks to"
    " show it as text"
)


def test_review_promote_and_assemble_wrap_their_own_sentences_at_words(
    reviewed: Path,
) -> None:
    """At 80 columns `memory review` wrapped every line but a lint warning (186 columns),
    `memory promote` printed its note on git as one line of 239, and `memory assemble` its
    notes in lines of up to 228. Left whole: the file promote wrote (one token) and the
    managed block assemble wrote into CLAUDE.md (quoted: the terminal wraps it); a command
    to copy is never cut across lines."""
    review = in_process("memory", "review", cwd=reviewed, env=AT_80)
    assert review.returncode == 0, review.stderr
    lines = review.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    at = next(i for i, line in enumerate(lines) if line.startswith("  warn "))
    assert " ".join(" ".join(lines[at : at + 3]).split()) == RAW_HTML

    code, printed = teamlore_in_pty("memory", "confirm", answers=["y"], cwd=reviewed)
    assert code == 0, printed
    plan = re.search(r"Plan (\S+) generated", printed)
    assert plan is not None, printed
    promote = in_process("memory", "promote", "--plan", plan.group(1), cwd=reviewed, env=AT_80)
    assert promote.returncode == 0, promote.stderr
    [written] = (reviewed / ".threadshare/memory/entries").glob("deploy-service-*.md")
    row = f"  {written.relative_to(reviewed).as_posix()}:"
    lines = promote.stdout.splitlines()
    assert row in lines and len(row) > 80  # the file, a single token, whole on its line
    assert lines[lines.index(row) + 1] == "    written"  # and what became of it under it
    assert [line for line in lines if len(line) > 80 and line != row] == []
    assert "  `git add --intent-to-add .threadshare/memory && git diff` shows every line" in lines
    as_json = in_process(
        "memory", "promote", "--plan", plan.group(1), "--format", "json", cwd=reviewed
    )
    from teamlore.ops.memory.promote import GIT_NOTE

    assert json.loads(as_json.stdout)["git"] == GIT_NOTE  # the JSON is as it was

    assemble = in_process("memory", "assemble", "-p", "claude", cwd=reviewed, env=AT_80)
    assert assemble.returncode == 0, assemble.stderr
    lines = assemble.stdout.splitlines()
    begin = next(i for i, line in enumerate(lines) if line.startswith("<!-- BEGIN "))
    end = next(i for i, line in enumerate(lines) if line.startswith("<!-- END "))
    block = "\n".join(lines[begin : end + 1])
    assert block + "\n" in (reviewed / "CLAUDE.md").read_text()  # quoted as written
    own = lines[:begin] + lines[end + 1 :]
    assert [line for line in own if len(line) > 80] == []
    note = own[next(i for i, line in enumerate(own) if line.startswith("Nothing was staged")) :]
    assert " ".join(" ".join(note).split()).endswith("(new files too).")  # assemble's last
    assert " ".join(" ".join(note).split()).startswith(
        "Nothing was staged or committed; `git status` lists the changed and new files, and "
        "`git add --intent-to-add CLAUDE.md"
    )  # CLAUDE.md is new, untracked: plain `git diff` would show nothing of it
    words = " ".join(" ".join(own).split())
    assert (
        "18 approved entries: agents search them with threadshare_memory_search (the block"
        " says so); they are not copied into the block."
    ) in words
