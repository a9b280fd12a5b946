"""Through the real executable, a real MCP server and a real model server on 127.0.0.1: a file's
YAML front matter is no part of what agents or the person read (`memory_read`, `personal show`
piped, in JSON and at a terminal), and a file holding only front matter reads as empty; an
import appends its section after exactly one blank line below a hand edit that ended without
one; `doctor` names every broken personal file, readable at 80 columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from personal_ops_world import (
    KEY_ENV,
    ModelServer,
    payload,
    retain,
    server_params,
    with_sessions,
    write_config,
)

from support import teamlore_cli, teamlore_in_pty

FRONT_MATTER = "---\ntitle: About me\naliases: [me]\n---\n\n"
PROFILE = FRONT_MATTER + "# Profile\n\n## Work\nThe user writes Rust at work.\n"


def _write(home: Path, name: str, text: str) -> None:
    (home / "personal" / "projects").mkdir(mode=0o700, parents=True, exist_ok=True)
    (home / "personal" / name).write_text(text, encoding="utf-8")


def _memory_read(tmp_path: Path) -> dict[str, Any]:
    async def body(sessions: list[Any], _: list[Any]) -> Any:
        return await sessions[0].call_tool("memory_read", {})

    params = server_params(tmp_path, "-c", "read", "--client-id", "codex", "--global")
    return payload(with_sessions([params], body))


def test_agents_and_the_person_read_the_memory_without_the_files_front_matter(
    home: Path, tmp_path: Path
) -> None:
    write_config(home)
    _write(home, "profile.md", PROFILE)
    _write(home, "preferences.md", "---\ntags: [prefs]\n---\n# Preferences\n")

    data = _memory_read(tmp_path)

    profile, preferences = data["documents"]
    assert profile["content"] == "# Profile\n\n## Work\nThe user writes Rust at work.\n"
    assert (profile["frontMatter"], profile["empty"]) == (True, False)
    assert (preferences["frontMatter"], preferences["empty"]) == (True, True)
    assert "About me" not in data["text"] and "tags:" not in data["text"]
    assert '<common-memory target="preferences">' not in data["text"]
    shown = teamlore_cli("personal", "show", "--format", "json", cwd=tmp_path)
    assert json.loads(shown.stdout) == data
    piped = teamlore_cli("personal", "show", cwd=tmp_path)
    assert piped.stdout == data["text"] + "\n"
    code, printed = teamlore_in_pty("personal", "show", answers=[], cwd=tmp_path)
    said = " ".join(printed.split())
    assert code == 0 and "About me" not in printed and "get 1 document" in said
    assert "── profile ── (front matter not shown: the file's own metadata" in said


def test_a_file_holding_only_front_matter_is_no_stored_memory(home: Path, tmp_path: Path) -> None:
    write_config(home)
    _write(home, "profile.md", FRONT_MATTER)

    data = _memory_read(tmp_path)

    assert data["empty"] is True and data["documents"][0]["empty"] is True
    assert data["text"].startswith("Personal memory has no stored content for context(s): global")
    code, printed = teamlore_in_pty("personal", "show", answers=[], cwd=tmp_path)
    assert code == 0 and "No personal memory is stored" in printed


def test_an_import_appends_its_section_after_one_blank_line_below_a_hand_edit(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url)
    hand_edited = "# Preferences\n\n## Tools\n- fish\n- uv"  # saved without a last line end
    _write(home, "preferences.md", hand_edited)
    model.script("document_import", retain("preferences", "Editor", "Uses neovim."))
    (tmp_path / "a.md").write_text("# Notes\n\nI use neovim.\n", encoding="utf-8")

    done = teamlore_cli("personal", "import", "a.md", cwd=tmp_path, env={KEY_ENV: "sk-scripted"})

    assert done.returncode == 0, done.stdout + done.stderr
    written = (home / "personal" / "preferences.md").read_text(encoding="utf-8")
    assert written == hand_edited + "\n\n## Editor\nUses neovim.\n\n"


def test_doctor_names_every_broken_personal_file_at_80_columns(home: Path, tmp_path: Path) -> None:
    write_config(home)
    _write(home, "profile.md", "# Profile\n\n## Work\n# Rust\n")
    _write(home, "preferences.md", "# Preferences\n\n## Shell\nfish\n")  # fine
    _write(home, "projects/app.md", "# Project\n\nloose text\n")
    too_large = "# Project\n\n## Build\n" + "x" * 17_000 + "\n"
    _write(home, "projects/web.md", too_large)

    text = teamlore_cli("doctor", cwd=tmp_path, env={"COLUMNS": "80"}).stdout
    as_json = json.loads(teamlore_cli("doctor", "--format", "json", cwd=tmp_path).stdout)

    [check] = [c for c in as_json["checks"] if c["check"] == "personal"]
    assert check["status"] == "fail"
    assert check["message"].startswith(
        "3 personal files need fixing (PERSONAL_DOCUMENT_INVALID, PERSONAL_DOCUMENT_TOO_LARGE): "
        "profile.md:4: '# Rust' is a level-1 heading"
    )
    assert "projects/app.md:3: 'loose text' is outside any section" in check["message"]
    assert f"projects/web.md holds {len(too_large):,} bytes, over the 16,384" in check["message"]
    assert "preferences.md" not in check["message"]
    assert check["fix"].startswith("edit each file as its message says")
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("fail personal"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    shown = lines[start:end]
    assert max(len(line) for line in shown) <= 80, "\n".join(shown)
    said = " ".join(" ".join(shown).split())
    for name in ("profile.md:4:", "projects/app.md:3:", "projects/web.md holds"):
        assert name in said, said
    assert "fix: edit each file as its message says" in said
