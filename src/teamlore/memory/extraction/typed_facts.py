"""Typed facts: statements teamlore renders and verifies itself, without a model.

Two versioned renderers with fixed templates (glossary: typed fact; the reference product
defines them but never calls them):

- `commit-changed-path@1` {commitHash: 40 hex, path: repo-relative, one line}
      → "Commit <commitHash> changed <path>."
  source: an immutable git object — the commit's own tree diff (`git diff-tree --root`).
- `command-exit@1` {command: one line, no backticks, exitCode: integer >= 0}
      → "Command `<command>` exited with code <exitCode>."
  source: a paired invocation/result in the L0 index — one shell tool use of a turn with its
  recorded exit code.

Recall offers them next to the transcript (`offer_typed_facts`): for every commit evidence item of
a task, one fact per changed path; for every shell command that failed and later succeeded in the
same chunk, the failing and the succeeding run. Each offer names the evidence id it cites, and a
command fact the call of that turn it is about (`tool`, as `teamlore sessions show` numbers it):
a turn that ran the command several times is one evidence id, and review shows the passage of
the run the fact names (`command_fact_run`), not the run whose output its words match best.

A fact leaves this machine in its shared form (`shared_form`): the command as the transcript next
to it shows it, its secrets masked and through the same `sanitize_text` with the same worktree
root (paths under the worktree repo-relative, other local paths, transcript file names and
provider session ids as placeholders), so the text an agent copies is the text memory lint
accepts. A commit path that
sanitizing would change (it holds a session id or a local path) is not offered as a fact.
Verification compares against the same shared form: the cited turn ran a command whose shared form
is the fact's command.

A statement is a typed fact only when `verify_statement` says so at review/prepare time: its text
parses as one of the templates and re-renders to exactly the same bytes, it cites exactly one
evidence item of the matching kind (a commit for commit-changed-path, a turn for command-exit),
and the immutable source confirms it (the commit changed that path; the turn — at the revision
the citation was staged with — ran that command with that exit code). Nothing a model sends can
set `typed-fact`: change one character of the text or add, drop or swap a citation and it is a
plain `unverified` statement again.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teamlore.contracts import digests
from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.core.secrets import masked_text, sanitize_text
from teamlore.core.secrets.sanitize import WorktreeRoots
from teamlore.repo.git import run_git

COMMIT_CHANGED_PATH = "commit-changed-path@1"
COMMAND_EXIT = "command-exit@1"
RENDERERS = (COMMIT_CHANGED_PATH, COMMAND_EXIT)
MAX_PATHS_PER_COMMIT = 20
MAX_FACTS_PER_TASK = 48

_HEX40 = re.compile(r"[0-9a-f]{40}")
_COMMIT_TEXT = re.compile(r"Commit ([0-9a-f]{40}) changed (.+)\.", re.DOTALL)
_COMMAND_TEXT = re.compile(r"Command `([^`\n]+)` exited with code (0|[1-9][0-9]{0,9})\.")


class TypedFactError(ValueError):
    """Parameters a renderer refuses (`typed-fact-invalid-params`)."""


def _single_line(value: str) -> bool:
    return bool(value) and value == value.strip() and not any(c in value for c in "\n\r\x00")


def render_commit_changed_path(commit_hash: str, path: str) -> str:
    if not _HEX40.fullmatch(commit_hash):
        raise TypedFactError("commitHash must be 40 lowercase hex digits")
    if not _single_line(path) or path.startswith("/") or ".." in path.split("/"):
        raise TypedFactError("path must be one repo-relative line")
    return f"Commit {commit_hash} changed {path}."


def render_command_exit(command: str, exit_code: int) -> str:
    if not _single_line(command) or "`" in command:
        raise TypedFactError("command must be one line without backticks")
    if isinstance(exit_code, bool) or not isinstance(exit_code, int) or exit_code < 0:
        raise TypedFactError("exitCode must be an integer >= 0")
    return f"Command `{command}` exited with code {exit_code}."


@dataclass(frozen=True, slots=True)
class ParsedFact:
    renderer: str
    params: dict[str, Any]


def parse_fact_text(text: str) -> ParsedFact | None:
    """The renderer and parameters whose exact output `text` is, else None."""
    match = _COMMIT_TEXT.fullmatch(text)
    if match is not None:
        params: dict[str, Any] = {"commitHash": match[1], "path": match[2]}
        try:
            rendered = render_commit_changed_path(match[1], match[2])
        except TypedFactError:
            return None
        return ParsedFact(COMMIT_CHANGED_PATH, params) if rendered == text else None
    match = _COMMAND_TEXT.fullmatch(text)
    if match is not None:
        params = {"command": match[1], "exitCode": int(match[2])}
        try:
            rendered = render_command_exit(match[1], int(match[2]))
        except TypedFactError:
            return None
        return ParsedFact(COMMAND_EXIT, params) if rendered == text else None
    return None


def shared_form(text: str, worktree_root: WorktreeRoots) -> str:
    """`text` as a fact may share it: exactly what the transcript shows (recall.path_cleaner);
    `worktree_root` the worktree's roots (`repo.worktrees.worktree_roots`) or its root."""
    return sanitize_text(masked_text(text), worktree_root=worktree_root)


# -- immutable sources ---------------------------------------------------------------------------


def commit_changed_paths(worktree_root: Path, commit_hash: str) -> list[str] | None:
    """The paths a commit changed against its first parent (all paths for a root commit);
    None when the commit object is not in the repository."""
    if not _HEX40.fullmatch(commit_hash):
        return None
    try:
        out = run_git(
            [
                "diff-tree",
                "--root",
                "--no-commit-id",
                "--name-only",
                "--no-renames",
                "--no-textconv",
                "--no-ext-diff",
                "-r",
                "-z",
                f"{commit_hash}^{{commit}}",
            ],
            cwd=worktree_root,
        )
    except errors.TeamloreError:
        return None
    return [p for p in out.decode("utf-8", "replace").split("\x00") if p]


@dataclass(frozen=True, slots=True)
class CommandRun:
    """One shell invocation of a turn with its recorded result."""

    command: str
    exit_code: int | None
    family: str
    tool: int | None = None  # the call's number in `teamlore sessions show` (1-based)


def turn_command_runs(tools: Iterable[Any]) -> list[CommandRun]:
    """Shell runs of a turn from `selection.ToolRow`-like objects (seq, command, exit_code,
    family)."""
    return [
        CommandRun(t.command.strip(), t.exit_code, t.family, t.seq + 1)
        for t in tools
        if t.family == "shell" and t.command
    ]


def command_fact_run(
    text: str, tools: Iterable[Any], *, worktree_root: WorktreeRoots, recorded: int | None = None
) -> int | None:
    """The call of a cited turn (`sessions show` number) a command-exit fact is about, the one
    recall offered it from: the `tool` recall recorded on the fact (`recorded`) when that call
    proves it (two facts of one turn alike in every word are two runs). A statement staged
    without one: for a failure, the first run of the command that exited so; for code 0, the
    first run that passed after a failed run of it in the turn (the fix the failure is paired
    with; a later pass only repeats it), else the turn's first pass (its failure was in an
    earlier turn). None: `text` is no command-exit fact, or no run of the turn proves it."""
    parsed = parse_fact_text(text)
    if parsed is None or parsed.renderer != COMMAND_EXIT:
        return None
    command, exit_code = parsed.params["command"], parsed.params["exitCode"]
    runs = [r for r in turn_command_runs(tools) if shared_form(r.command, worktree_root) == command]
    if any(r.tool == recorded and r.exit_code == exit_code for r in runs):
        return recorded
    first, failed = None, False
    for run in runs:
        if run.exit_code == exit_code and (exit_code != 0 or failed):
            return run.tool
        if run.exit_code == exit_code and first is None:
            first = run.tool
        failed = failed or run.exit_code not in (None, 0)
    return first


# -- verification --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CitedSource:
    """What the host resolved privately for one cited evidence id (see memory.review)."""

    kind: str  # commit | turn | path | unresolved
    commit_hash: str | None = None
    turn_runs: tuple[CommandRun, ...] | None = None  # None: turn changed since staging


def verify_statement(
    text: str,
    cited: Sequence[CitedSource],
    *,
    worktree_root: Path,
    roots: WorktreeRoots | None = None,
) -> str | None:
    """The renderer that proves `text` from its citations, or None (plain statement). Commands
    and paths compare in their shared form (`shared_form`), the only form recall offers."""
    parsed = parse_fact_text(text)
    if parsed is None or len(cited) != 1:
        return None
    source = cited[0]
    if parsed.renderer == COMMIT_CHANGED_PATH:
        if source.kind != "commit" or source.commit_hash != parsed.params["commitHash"]:
            return None
        path = parsed.params["path"]
        if shared_form(path, roots or worktree_root) != path:
            return None
        changed = commit_changed_paths(worktree_root, parsed.params["commitHash"])
        return COMMIT_CHANGED_PATH if changed and path in changed else None
    if source.kind != "turn" or source.turn_runs is None:
        return None
    for run in source.turn_runs:
        if run.exit_code == parsed.params["exitCode"] and (
            shared_form(run.command, roots or worktree_root) == parsed.params["command"]
        ):
            return COMMAND_EXIT
    return None


# -- offers (recall) -----------------------------------------------------------------------------


def _fact(
    renderer: str, params: dict[str, Any], text: str, evidence_id: str, run: int | None = None
) -> dict[str, Any]:
    """One offered fact; `run` (a tool number) only for a fact alike in every word to one
    offered before it from the same turn, so each has its own `factId` and the first keeps
    the id it always had."""
    named = {"renderer": renderer, "params": params, "ev": evidence_id}
    return {
        "factId": "tf-" + digest(named if run is None else {**named, "tool": run})[:16],
        "renderer": renderer,
        "params": params,
        "text": text,
        "evidenceIds": [evidence_id],
        "statementTextDigest": digests.statement_text_digest(text),
        "claimSupport": "typed-fact",
    }


def _command_facts(
    turns: Sequence[Any], turn_evidence: dict[int, str], roots: WorktreeRoots
) -> list[dict[str, Any]]:
    """Failed-then-passed pairs, matched on the command as run, offered in its shared form."""
    failed: dict[str, tuple[int, CommandRun]] = {}
    facts: list[dict[str, Any]] = []
    offered: set[str] = set()
    for turn in turns:
        for run in turn_command_runs(turn.tools):
            if run.exit_code is None or "`" in run.command or "\n" in run.command:
                continue
            if run.exit_code != 0:
                failed.setdefault(run.command, (turn.index, run))
                continue
            if run.command not in failed:
                continue
            fail_index, fail_run = failed.pop(run.command)
            pair: list[dict[str, Any]] = []
            for index, one in ((fail_index, fail_run), (turn.index, run)):
                evidence_id = turn_evidence.get(index)
                if evidence_id is None:
                    break
                command = shared_form(one.command, roots)
                try:
                    text = render_command_exit(command, int(one.exit_code or 0))
                except TypedFactError:
                    break
                params = {"command": command, "exitCode": one.exit_code}
                fact = _fact(COMMAND_EXIT, params, text, evidence_id)
                if fact["factId"] in offered:  # a turn that broke and fixed it again
                    fact = _fact(COMMAND_EXIT, params, text, evidence_id, run=one.tool)
                pair.append({**fact, "tool": one.tool})
            if len(pair) == 2:
                pair[0]["pairedWith"] = pair[1]["factId"]
                pair[1]["pairedWith"] = pair[0]["factId"]
                offered.update(f["factId"] for f in pair)
                facts.extend(pair)
    return facts


def _commit_facts(
    records: Iterable[Any], worktree_root: Path, roots: WorktreeRoots
) -> list[dict[str, Any]]:
    facts: list[dict[str, Any]] = []
    for record in records:
        if record.kind != "commit":
            continue
        commit_hash = str(record.pointer["commitHash"])
        for path in (commit_changed_paths(worktree_root, commit_hash) or [])[:MAX_PATHS_PER_COMMIT]:
            if shared_form(path, roots) != path:
                continue  # it names a session or a local path: no fact to share
            try:
                text = render_commit_changed_path(commit_hash, path)
            except TypedFactError:
                continue
            facts.append(
                _fact(
                    COMMIT_CHANGED_PATH,
                    {"commitHash": commit_hash, "path": path},
                    text,
                    record.evidence_id,
                )
            )
    return facts


def offer_typed_facts(
    index_conn: sqlite3.Connection,
    identity: Any,
    built_tasks: Iterable[Any],
    home: Path | None = None,
) -> list[dict[str, Any]]:
    """Typed facts for recall's returned tasks: `[{taskId, facts: [...]}]` (tasks without facts
    are left out). `built_tasks` are `memory.recall.BuiltTask`s; `identity` the owner."""
    from teamlore.memory.extraction.selection import load_turns
    from teamlore.repo.worktrees import worktree_roots

    roots = worktree_roots(identity.worktree_root, home)

    offers: list[dict[str, Any]] = []
    for built in built_tasks:
        indexes = [t.index for t in built.chunk.turns]
        turns = load_turns(index_conn, identity, built.session_key, indexes)
        wanted = set(built.binding["turnRevisions"])
        turns = [t for t in turns if t.revision in wanted]
        root = Path(identity.worktree_root)
        facts = _command_facts(turns, built.catalog.turn_evidence, roots)
        facts += _commit_facts(built.catalog.records, root, roots)
        if facts:
            offers.append({"taskId": built.task_id, "facts": facts[:MAX_FACTS_PER_TASK]})
    return offers
