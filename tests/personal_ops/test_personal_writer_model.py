"""The personal Writer's model: only the `[personal] model_profile` the person chose. With none
chosen, nothing is sent to any model — not through a `[models.default]` table meant for other
features, not through `OPENAI_BASE_URL`/`OPENAI_MODEL` — and the CLI and an init MCP process
say so in the same words. Its answers are read as the batch runner reads them (one Markdown
code fence around the JSON is fine)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
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

from support import refusal_lines, teamlore_cli
from teamlore.ops.personal.memory import WRITER_OFF

ENV = {KEY_ENV: "sk-scripted"}


def default_table(home: Path, model: ModelServer) -> dict[str, str]:
    """A `[models.default]` profile for other features (the batch runner), on this machine."""
    with (home / "config.toml").open("a", encoding="utf-8") as toml:
        toml.write(f'\n[models.default]\nbase_url = "{model.base_url}"\nmodel = "m"\n')
    return {}


def environment_only(home: Path, model: ModelServer) -> dict[str, str]:
    """No table at all: only the variables many developers have set."""
    return {"OPENAI_BASE_URL": model.base_url, "OPENAI_MODEL": "m"}


@pytest.mark.parametrize("endpoint", [default_table, environment_only])
def test_without_a_chosen_profile_import_and_flush_send_nothing(
    home: Path, tmp_path: Path, model: ModelServer, endpoint: Any
) -> None:
    write_config(home)  # [personal] with every class allowed, no model_profile
    env = endpoint(home, model)
    (tmp_path / "n.md").write_text("# N\n\nI like kayaking.\n", encoding="utf-8")

    imported = teamlore_cli("personal", "import", "n.md", "-f", "json", cwd=tmp_path, env=env)
    flushed = teamlore_cli("personal", "flush", cwd=tmp_path, env=env)

    out = json.loads(imported.stdout)
    assert imported.returncode == 1 and [p["state"] for p in out["parts"]] == ["pending"]
    error = out["flush"]["error"]
    assert (error["code"], error["message"]) == ("WRITER_DISABLED", WRITER_OFF)
    assert "default" not in error["message"] and "default" not in error["next"]
    assert flushed.returncode == 1
    assert refusal_lines(flushed.stderr)[0] == f"error WRITER_DISABLED: {WRITER_OFF}"
    assert model.requests == []


def test_an_init_process_without_a_chosen_profile_sends_nothing_and_says_why(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home)
    env = {**default_table(home, model), **environment_only(home, model)}
    params = server_params(tmp_path, "-c", "init", "--client-id", "desk", "--global", env=env)

    async def body(sessions: list[Any], _: list[Any]) -> dict[str, Any]:
        arguments = {"importId": "imp-1", "contextId": "global", "sourceLabel": "desktop"}
        await sessions[0].call_tool(
            "memory_init", {**arguments, "basis": "unknown", "understanding": "Likes kayaks."}
        )
        await anyio.sleep(1.5)  # the Writer would flush at once after memory_init
        return payload(await sessions[0].call_tool("memory_status", {"importId": "imp-1"}))

    status = with_sessions([params], body)
    started = subprocess.run(
        [params.command, *params.args], input="", capture_output=True, text=True, timeout=60,
        cwd=tmp_path, env=params.env,
    )  # fmt: skip

    assert status["import"]["state"] == "pending" and model.requests == []
    assert f"personal Writer off: WRITER_DISABLED: {WRITER_OFF}. " in started.stderr
    assert "--model-profile NAME" in started.stderr and "default" not in started.stderr


def test_a_chosen_default_profile_may_come_from_the_environment_alone(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """README's setup: `--model-profile default` with `OPENAI_BASE_URL`/`OPENAI_MODEL`."""
    write_config(home)
    env = environment_only(home, model)
    chosen = teamlore_cli("personal", "config", "--model-profile", "default", "-f", "json", env=env)
    (tmp_path / "n.md").write_text("# Tools\n\nI use neovim.\n", encoding="utf-8")
    model.script("document_import", retain("preferences", "Editor", "Uses neovim."))

    done = teamlore_cli("personal", "import", "n.md", cwd=tmp_path, env=env)

    assert json.loads(chosen.stdout)["warnings"] == []
    assert done.returncode == 0, done.stdout + done.stderr
    assert model.answered == ["document_import"]


def test_an_answer_in_a_markdown_fence_is_written_code_blocks_in_its_sections_too(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    write_config(home, model_url=model.base_url)
    model.fence = True
    (tmp_path / "n.md").write_text("# Setup\n\nI run uv sync first.\n", encoding="utf-8")
    body = "Before tests:\n```sh\nuv sync\n```"
    model.script("document_import", retain("preferences", "Setup", body))

    done = teamlore_cli("personal", "import", "n.md", cwd=tmp_path, env=ENV)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "part 1: processed; retained in preferences" in done.stdout
    assert f"## Setup\n{body}\n" in (home / "personal" / "preferences.md").read_text()


def test_an_unusable_endpoint_variable_or_env_file_is_advised_where_it_is_set(
    home: Path, tmp_path: Path
) -> None:
    """Neither comes from config.toml, which the usual next step of a config refusal named."""
    write_config(home)
    assert teamlore_cli("personal", "config", "--model-profile", "default").returncode == 0
    env = {"OPENAI_BASE_URL": "ftp://llm.example/v1", "OPENAI_MODEL": "m"}

    flushed = teamlore_cli("personal", "flush", "-f", "json", cwd=tmp_path, env=env)
    params = server_params(tmp_path, "-c", "init", "--client-id", "desk", "--global", env=env)
    started = subprocess.run(
        [params.command, *params.args], input="", capture_output=True, text=True, timeout=60,
        cwd=tmp_path, env=params.env,
    )  # fmt: skip
    (home / ".env").write_bytes(b"OPENAI_MODEL=\xff\n")
    unreadable = teamlore_cli("personal", "flush", "-f", "json", cwd=tmp_path)

    base_url = "Set OPENAI_BASE_URL (environment or the state dir's .env) to an http(s) URL."
    error = json.loads(flushed.stdout)["error"]
    assert (error["code"], error["next"]) == ("CONFIG_INVALID", base_url)
    assert f"OPENAI_BASE_URL: base_url must be an http:// or https:// URL. {base_url}" in (
        started.stderr
    )
    error = json.loads(unreadable.stdout)["error"]
    assert error["code"] == "CONFIG_INVALID" and error["message"].endswith(".env cannot be read")
    assert error["next"] == "Make the state dir's .env UTF-8 text you can read, or move it aside."
