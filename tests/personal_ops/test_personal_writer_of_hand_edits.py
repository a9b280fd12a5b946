"""What the personal Writer makes of a file edited by hand, through the real executable, a real
MCP server and a real model server on 127.0.0.1: a hand edit makes only the sections whose text
it changed the person's (imports and `memory_init` still update the others), a document the
Writer committed before it kept section digests falls back to the whole file, and YAML front
matter is the person's metadata: never sent to the model, kept byte for byte."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from personal_ops_world import (
    KEY_ENV,
    ModelServer,
    decision,
    poll_status,
    put,
    refs,
    retain,
    section_ref,
    server_params,
    with_sessions,
    write_config,
)

from support import teamlore_cli

ENV = {KEY_ENV: "sk-scripted"}
HAND_EDIT = "Coffee, not tea (I wrote this)."


def _import(tmp_path: Path, name: str, text: str) -> Any:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return teamlore_cli("personal", "import", name, cwd=tmp_path, env=ENV)


def _preferences(home: Path) -> Path:
    return home / "personal" / "preferences.md"


def _sent(model: ModelServer, number: int) -> dict[str, Any]:
    """The projection the Writer sent in its `number`th request."""
    projection: dict[str, Any] = json.loads(
        model.requests[number].json()["messages"][-1]["content"]
    )
    return projection


def _origins(model: ModelServer, number: int) -> dict[str, str]:
    documents = _sent(model, number)["documents"]
    return {s["title"]: s["origin"] for d in documents for s in d["sections"]}


def _rewrite(title: str, body: str) -> Any:
    """An answer that rewrites the section `title` of preferences.md."""
    return lambda p: [
        decision("retain", [put("preferences", title, body, section_ref(p, "preferences", title))],
                 refs(p))
    ]  # fmt: skip


def _two_imported_sections(home: Path, tmp_path: Path, model: ModelServer) -> None:
    write_config(home, model_url=model.base_url)
    model.script(
        "document_import",
        lambda p: [
            decision(
                "retain",
                [
                    put("preferences", "Editor", "Uses neovim."),
                    put("preferences", "Drinks", "Tea."),
                ],
                refs(p),
            )
        ],
    )
    assert _import(tmp_path, "a.md", "# Notes\n\nI use neovim. I drink tea.\n").returncode == 0


def _edit_drinks_by_hand(home: Path) -> None:
    path = _preferences(home)
    path.write_text(path.read_text().replace("Tea.", HAND_EDIT))


def test_a_hand_edit_makes_only_the_section_it_changed_the_persons(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    _two_imported_sections(home, tmp_path, model)
    _edit_drinks_by_hand(home)
    model.script(
        "document_import",
        _rewrite("Editor", "Uses neovim with lazy.nvim."),
        _rewrite("Drinks", "Green tea."),
    )

    updated = _import(tmp_path, "b.md", "# Notes\n\nI use neovim with lazy.nvim.\n")
    refused = _import(tmp_path, "c.md", "# Notes\n\nI drink green tea.\n")

    assert _origins(model, 1) == {"Editor": "import", "Drinks": "unsourced"}
    assert updated.returncode == 0, updated.stdout + updated.stderr
    # the commit that took in the hand edit keeps the section the person's
    assert _origins(model, 2) == {"Editor": "import", "Drinks": "unsourced"}
    assert refused.returncode == 1 and "UNAUTHORIZED_IMPORT_OVERWRITE" in refused.stdout
    assert _preferences(home).read_text() == (
        f"# Preferences\n\n## Editor\nUses neovim with lazy.nvim.\n\n## Drinks\n{HAND_EDIT}\n\n"
    )


def test_memory_init_updates_its_section_of_a_file_edited_elsewhere(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    _two_imported_sections(home, tmp_path, model)
    _edit_drinks_by_hand(home)
    model.script("agent_import", _rewrite("Editor", "Uses neovim; reported by the desktop app."))
    params = server_params(tmp_path, "-c", "init", "--client-id", "desk", "--global", env=ENV)

    async def body(sessions: list[Any], _: list[Any]) -> dict[str, Any]:
        arguments = {"importId": "imp-1", "contextId": "global", "sourceLabel": "desktop"}
        await sessions[0].call_tool(
            "memory_init", {**arguments, "basis": "saved_memories", "understanding": "Neovim."}
        )
        return await poll_status(
            sessions[0], {"importId": "imp-1"}, until={"processed", "quarantined", "dead"}
        )

    outcome = with_sessions([params], body)

    assert (outcome["state"], outcome["retainedIn"]) == ("processed", ["preferences"])
    assert _preferences(home).read_text() == (
        "# Preferences\n\n## Editor\nUses neovim; reported by the desktop app.\n\n"
        f"## Drinks\n{HAND_EDIT}\n\n"
    )


def _as_before_section_digests(home: Path) -> None:
    """The runtime DB as a teamlore that kept only each document's digest left it."""
    with sqlite3.connect(home / "personal" / "runtime.sqlite3") as conn:
        conn.execute("DROP TABLE IF EXISTS section_versions")
        conn.execute("PRAGMA user_version = 1")


def test_a_document_committed_before_section_digests_falls_back_to_the_whole_file(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    _two_imported_sections(home, tmp_path, model)
    _as_before_section_digests(home)
    _edit_drinks_by_hand(home)
    model.script("document_import", _rewrite("Editor", "Uses neovim with lazy.nvim."))

    refused = _import(tmp_path, "b.md", "# Notes\n\nI use neovim with lazy.nvim.\n")

    assert _origins(model, 1) == {"Editor": "unsourced", "Drinks": "unsourced"}
    assert refused.returncode == 1 and "UNAUTHORIZED_IMPORT_OVERWRITE" in refused.stdout


def test_a_document_committed_before_section_digests_gets_them_at_its_next_commit(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    _two_imported_sections(home, tmp_path, model)
    _as_before_section_digests(home)
    model.script(
        "document_import",
        retain("preferences", "Shell", "Uses fish."),
        _rewrite("Editor", "Uses neovim with lazy.nvim."),
    )
    assert _import(tmp_path, "b.md", "# Notes\n\nI use fish.\n").returncode == 0
    _edit_drinks_by_hand(home)

    updated = _import(tmp_path, "c.md", "# Notes\n\nI use neovim with lazy.nvim.\n")

    assert _origins(model, 2) == {"Editor": "import", "Drinks": "unsourced", "Shell": "import"}
    assert updated.returncode == 0, updated.stdout + updated.stderr


FRONT_MATTER = [
    b"---\ntitle: My preferences\ntags: [me, tools]\n---\n",
    b"---\r\ntitle: My preferences\r\ntags: [me, tools]\r\n---\r\n\r\n",  # another tool's CRLF
]


@pytest.mark.parametrize("front_matter", FRONT_MATTER, ids=["lf", "crlf-front-matter"])
def test_front_matter_is_never_sent_to_the_model_and_an_update_keeps_it_byte_for_byte(
    home: Path, tmp_path: Path, model: ModelServer, front_matter: bytes
) -> None:
    write_config(home, model_url=model.base_url)
    (home / "personal").mkdir(mode=0o700)
    _preferences(home).write_bytes(front_matter + b"# Preferences\n\n## Language\nChinese.\n\n")
    model.script("document_import", retain("preferences", "Editor", "Uses neovim."))

    done = _import(tmp_path, "a.md", "# Notes\n\nI use neovim.\n")

    assert done.returncode == 0, done.stdout + done.stderr
    [preferences] = [d for d in _sent(model, 0)["documents"] if d["target"] == "preferences"]
    assert [(s["title"], s["body"]) for s in preferences["sections"]] == [
        ("Language", "Chinese.\n\n")
    ]
    assert b"My preferences" not in model.requests[0].body
    assert _preferences(home).read_bytes() == (
        front_matter + b"# Preferences\n\n## Language\nChinese.\n\n## Editor\nUses neovim.\n\n"
    )


def test_a_secret_in_the_front_matter_stops_the_writer_before_its_model(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """As a secret typed into a section: the Writer does not update a file holding one."""
    token = "ghp_" + "R8a2Kd9sLq0ZxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi"  # the shape of one, not a real token
    write_config(home, model_url=model.base_url)
    (home / "personal").mkdir(mode=0o700)
    _preferences(home).write_text(f"---\ntoken: {token}\n---\n# Preferences\n")

    refused = _import(tmp_path, "a.md", "# Notes\n\nI use neovim.\n")

    assert refused.returncode == 1 and model.requests == []
    said = " ".join(refused.stdout.split())  # the Writer's line wraps at 80 columns
    assert "preferences.md:2 holds a secret (secret.github-token)" in said
    assert token not in refused.stdout + refused.stderr
