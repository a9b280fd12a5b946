"""Through the real executable, a real MCP server and a real model server on 127.0.0.1: a file's
YAML front matter is no part of what agents or the person read (`memory_read`, `personal show`
piped, in JSON and at a terminal), and a file holding only front matter reads as empty; a
Markdown import sends the model its notes without their front matter, and one holding only front
matter is refused as empty; an import appends its section after exactly one blank line below a
hand edit that ended without one; `doctor` names every broken personal file, readable at 80
columns, and a secret in a front matter as one agents do not receive."""

from __future__ import annotations

import hashlib
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


def test_an_import_sends_the_model_the_notes_without_their_front_matter(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """A notes file's front matter (an editor's title, tags, dates) is its metadata, not notes:
    the model gets the file from its first line after it, as the readers get a personal file."""
    write_config(home, model_url=model.base_url)
    notes = "# Coast\n\nI read the tide table before every walk.\n"
    whole = "---\ntitle: Walks by the sea\ntags: [coast, tides]\n---\n\n" + notes
    (tmp_path / "coast.md").write_text(whole, encoding="utf-8")
    model.script("document_import", retain("profile", "Coast", "Reads tide tables first."))

    done = teamlore_cli(
        "personal", "import", "coast.md", "--format", "json", cwd=tmp_path, env={KEY_ENV: "sk"}
    )

    assert done.returncode == 0, done.stdout + done.stderr
    [request] = model.requests
    [observation] = json.loads(request.json()["messages"][-1]["content"])["observations"]
    assert observation["text"] == notes
    sent = request.body.decode("utf-8")
    assert "Walks by the sea" not in sent and "tides]" not in sent
    imported = json.loads(done.stdout)["import"]
    assert imported["frontMatter"] is True and imported["bytes"] == len(whole)
    assert imported["importId"] == "md-" + hashlib.sha256(notes.encode()).hexdigest()
    assert "Reads tide tables first." in (home / "personal" / "profile.md").read_text()
    again = teamlore_cli("personal", "import", "coast.md", cwd=tmp_path, env={"COLUMNS": "80"})
    assert again.returncode == 0, again.stderr
    assert "front matter: left out (the file's own metadata; not sent to the model)" in (
        again.stdout.splitlines()
    )
    assert "duplicate: this exact content was already imported" in again.stdout


def test_an_import_holding_only_front_matter_is_refused_as_empty(
    home: Path, tmp_path: Path
) -> None:
    write_config(home)
    (tmp_path / "meta.md").write_bytes(b"\xef\xbb\xbf---\r\ntitle: Draft\r\n---\r\n\r\n  \r\n")

    refused = teamlore_cli("personal", "import", "meta.md", cwd=tmp_path)
    as_json = teamlore_cli("personal", "import", "meta.md", "--format", "json", cwd=tmp_path)

    assert refused.returncode == as_json.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines()[0] == (
        "error EMPTY_DOCUMENT: meta.md is empty but for its front matter"
    )
    assert json.loads(as_json.stdout)["error"]["code"] == "EMPTY_DOCUMENT"
    assert not (home / "personal" / "runtime.sqlite3").exists()


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


def test_doctor_says_a_secret_in_the_front_matter_is_one_agents_do_not_receive(
    home: Path, tmp_path: Path
) -> None:
    """Agents get a file without its front matter, so a secret there is not one they "read
    masked"; one in the body still is, and the Writer leaves the file alone for either."""
    token = "ghp_" + "R8a2Kd9sLq0ZxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi"  # the shape of one, not a real token
    write_config(home)
    _write(home, "profile.md", f"---\ntitle: About me\ntoken: {token}\n---\n\n# Profile\n")
    _write(home, "preferences.md", f"---\nkey: {token}\n---\n# Preferences\n\n## Git\n{token}\n")
    _write(home, "projects/app.md", f"---\ntitle: App\n---\n# Project\n\n## Ci\nuses {token}\n")

    text = teamlore_cli("doctor", cwd=tmp_path, env={"COLUMNS": "80"}).stdout
    as_json = json.loads(teamlore_cli("doctor", "--format", "json", cwd=tmp_path).stdout)

    [check] = [c for c in as_json["checks"] if c["check"] == "personal"]
    assert check["status"] == "fail" and token not in json.dumps(as_json) + text
    sentences = check["message"].split(": ", 1)[1]
    assert (
        "profile.md:3 holds a secret (secret.github-token) in its front matter, which agents do"
        " not receive; the Writer does not update the file until you remove it." in sentences
    )
    assert (
        "preferences.md:2 holds a secret (secret.github-token) in its front matter, which agents"
        " do not receive; preferences.md:7 holds one (secret.github-token) they read masked; the"
        " Writer does not update the file until you remove them." in sentences
    )
    assert (
        "projects/app.md:7 holds a secret (secret.github-token); agents read it masked; the"
        " Writer does not update the file until you remove it" in sentences
    )
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("fail personal"))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    said = " ".join(" ".join(lines[start:end]).split())
    assert "profile.md:3 holds a secret (secret.github-token) in its front matter" in said
