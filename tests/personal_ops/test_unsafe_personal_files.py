"""A personal memory file teamlore will not read (a symbolic link, not a regular file, too
large) is refused with UNSAFE_FILE saying which file and what is wrong with it, and a next step
for that case: the same through memory_read over MCP and `teamlore personal show`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from personal_ops_world import payload, server_params, with_sessions, write_config

from support import teamlore_cli


def _read_both_ways(home: Path, cwd: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    async def body(sessions: list[Any], _: list[Any]) -> list[Any]:
        return [await sessions[0].call_tool("memory_read", {})]

    flags = ("-c", "read", "--client-id", "codex-cli", "--global")
    [read] = with_sessions([server_params(cwd, *flags)], body)
    shown = teamlore_cli("personal", "show", "--format", "json", cwd=cwd)
    assert shown.returncode == 1
    return payload(read)["error"], json.loads(shown.stdout)["error"]


@pytest.fixture()
def profile(home: Path) -> Path:
    write_config(home)
    (home / "personal").mkdir(mode=0o700)
    return home / "personal" / "profile.md"


def test_a_symlinked_document_is_named_as_a_symbolic_link(
    profile: Path, home: Path, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere.md").write_text("# Profile\n")
    profile.symlink_to(tmp_path / "elsewhere.md")
    over_mcp, over_cli = _read_both_ways(home, tmp_path)
    assert over_mcp == over_cli
    assert over_mcp["code"] == "UNSAFE_FILE"
    assert over_mcp["message"] == (
        "personal/profile.md is a symbolic link; teamlore reads and writes only regular files there"
    )
    assert over_mcp["next"] == (
        "Replace the link in personal/ with a regular file holding its content."
    )


def test_an_oversized_document_is_named_as_too_large_and_not_as_a_link(
    profile: Path, home: Path, tmp_path: Path
) -> None:
    profile.write_bytes(b"# Profile\n" + b"x" * 1_048_576)
    os.chmod(profile, 0o600)
    over_mcp, over_cli = _read_both_ways(home, tmp_path)
    assert over_mcp == over_cli
    assert over_mcp["code"] == "UNSAFE_FILE"
    assert over_mcp["message"] == (
        "personal/profile.md is 1,048,586 bytes, above the 1,048,576 bytes teamlore reads"
    )
    assert "link" not in over_mcp["next"] and over_mcp["next"].startswith("Shorten the file")


def test_a_folder_in_place_of_a_document_is_named_as_not_a_regular_file(
    profile: Path, home: Path, tmp_path: Path
) -> None:
    profile.mkdir()
    over_mcp, over_cli = _read_both_ways(home, tmp_path)
    assert over_mcp == over_cli
    assert over_mcp["message"] == (
        "personal/profile.md is not a regular file (a folder, a device or a pipe)"
    )
    assert "link" not in over_mcp["next"]
