"""Every refusal says what to do next (the seed's `next`, core/remedies.py): a line of its own
for every code, short, and where it names a `teamlore` command, a real command with real flags
(checked against the CLI reference, docs/cli.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from teamlore.core import errors
from teamlore.core.remedies import NEXT, TOOL_FOR_COMMAND, TOOL_NEXT, discard_command

CLI_REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
GENERIC = {errors.USAGE_NEXT, errors.REFUSAL_NEXT}
MAX_CHARS = 80


def _commands() -> dict[str, set[str]]:
    """`teamlore memory recall` → its flags, from the generated CLI reference."""
    sections = re.split(r"^## ", CLI_REFERENCE.read_text(encoding="utf-8"), flags=re.M)[1:]
    out: dict[str, set[str]] = {}
    for section in sections:
        heading, _, body = section.partition("\n")
        out[heading.strip()] = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", body))
    return out


def _named_commands(step: str) -> list[str]:
    return [span for span in re.findall(r"`([^`]+)`", step) if span.startswith("teamlore ")]


def test_every_code_has_a_specific_short_next() -> None:
    generic = [
        code
        for code, error in errors.registered_codes().items()
        if errors.next_step(error) in GENERIC
        or (errors.next_step(error) == errors.INTERNAL_NEXT and code != "INTERNAL")
    ]
    assert generic == []
    too_long = {
        code: step
        for code, error in errors.registered_codes().items()
        if len(step := errors.next_step(error)) > MAX_CHARS
    }
    assert too_long == {}


def test_no_line_is_kept_for_a_code_that_does_not_exist() -> None:
    assert set(NEXT) - set(errors.registered_codes()) == set()
    assert set(TOOL_NEXT) - set(errors.registered_codes()) == set()


def test_a_tool_is_never_sent_to_help_it_does_not_have() -> None:
    """An MCP tool's caller has the tool's input schema, not `--help`: no refusal a tool
    returns points there, and the rest say what the CLI says."""
    for code, error in errors.registered_codes().items():
        step = errors.tool_next_step(error)
        assert "--help" not in step, code
        if "--help" not in errors.next_step(error):
            assert step == errors.next_step(error), code


def _command_of(span: str) -> str:
    """`teamlore sessions show KEY --turn N` → `teamlore sessions show`: the words before the
    first flag, without placeholders (KEY, PATH, N)."""
    words = span.split("--")[0].split()
    return " ".join(w for w in words if not w.isupper() and not w.isdigit())


def _wrong_commands(steps: dict[str, str]) -> dict[str, str]:
    commands = _commands()
    wrong: dict[str, str] = {}
    for code, step in steps.items():
        for span in _named_commands(step):
            name = _command_of(span)
            flags = set(re.findall(r"--[a-z][a-z0-9-]*", span))
            if name not in commands or not flags <= commands[name] | {"--help", "--format"}:
                wrong[code] = span
    return wrong


def test_a_command_a_next_names_exists_with_the_flags_it_names() -> None:
    steps = {code: errors.next_step(e) for code, e in errors.registered_codes().items()}
    assert _wrong_commands(steps) == {}


def test_the_reference_check_would_catch_a_made_up_command_or_flag() -> None:
    assert _wrong_commands(
        {
            "A": "Run `teamlore sync --bogus`.",
            "B": "Run `teamlore frobnicate`.",
            "C": "See `teamlore sessions show KEY --turn N` or `git status`.",
            "D": "Plan less: `teamlore memory extract --runner NAME --limit 1`.",
        }
    ) == {"A": "teamlore sync --bogus", "B": "teamlore frobnicate"}


def test_a_code_shared_by_team_and_personal_memory_guides_each_its_own_way() -> None:
    """SUBMISSION_CONFLICT: a team task reused (recall again for new work); a personal
    importId / submissionId reused says its own line (send it under a new id)."""
    from teamlore.personal.queue import PERSONAL_CONFLICT_NEXT

    assert "recall again" in errors.next_step(errors.SUBMISSION_CONFLICT)
    assert "new id" in PERSONAL_CONFLICT_NEXT and "recall" not in PERSONAL_CONFLICT_NEXT


def test_a_command_a_tool_also_does_is_mapped_to_a_real_tool_and_a_real_command() -> None:
    """`TOOL_FOR_COMMAND`: a tool's refusal names the tool beside the command; both exist (the
    tools any launch lists, the commands of the CLI reference)."""
    from teamlore.mcp.server import tools_for
    from teamlore.ops.registry import CAPABILITY_TIERS

    listed = {tool.name for capability in CAPABILITY_TIERS for tool in tools_for([capability])}
    assert set(TOOL_FOR_COMMAND.values()) - listed == set()
    assert {f"teamlore {command}" for command in TOOL_FOR_COMMAND} - set(_commands()) == set()


def test_a_tool_refusal_names_the_tool_beside_the_command_and_the_cli_only_the_command() -> None:
    refusal = errors.TeamloreError(errors.CANDIDATE_LOCKED)
    assert refusal.to_json()["next"] == NEXT["CANDIDATE_LOCKED"]
    assert refusal.to_json(for_tool=True)["next"] == (
        "Finish the plan it names: the tool `threadshare_memory_promote` or "
        "`teamlore memory promote --plan ID`."
    )
    # a `next` that leaves out `teamlore` names the whole command beside the tool
    coverage = errors.TeamloreError(errors.COVERAGE_INCOMPLETE).to_json(for_tool=True)["next"]
    assert coverage == (
        "Fix the files the tool `threadshare_memory_status` or `teamlore memory status` lists."
    )
    unmapped = errors.TeamloreError(errors.SESSION_NOT_FOUND)
    assert unmapped.to_json(for_tool=True)["next"] == NEXT["SESSION_NOT_FOUND"]


def test_a_discard_command_runs_as_printed_whatever_its_reason_holds() -> None:
    """The reason was put between double quotes as it was: one with a quote, a `$` or a
    backtick printed a command a shell runs otherwise (or not at all)."""
    reason = 'it said "don\'t" and cost $HOME `date`'
    command = discard_command("extract-1-c1", reason, extract_again=True)

    # the words a shell hands the command, as a person pastes it
    words = subprocess.run(
        ["sh", "-c", f"set -- {command}; printf '%s\\0' \"$@\""],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")[:-1]

    assert words == [
        *["teamlore", "memory", "discard", "--candidate", "extract-1-c1"],
        "--reason",
        reason,
        "--extract-again",
    ]
    assert discard_command("cand-1", "blocked by lint") == (
        "teamlore memory discard --candidate cand-1 --reason 'blocked by lint'"
    )
