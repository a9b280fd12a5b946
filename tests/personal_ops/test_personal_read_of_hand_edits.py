"""What agents and the person read of a personal file edited by hand, through the real
executable and a real MCP server over stdio: a secret typed into it is masked and said to be,
never printed; control characters show as escapes, the same in `memory_read`, `personal show`
(piped, JSON, at a terminal) and the session-start hook; the hook's process loads the secret
scanner only when a document may hold a secret. And `personal` refusals that leave the state as
it was: a workspace folder that does not exist, a Writer or an import that is not enabled."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from personal_ops_world import (
    KEY_ENV,
    ModelServer,
    payload,
    server_params,
    with_sessions,
    write_config,
)

from support import refusal_lines, teamlore_cli, teamlore_in_pty

TOKEN = "ghp_" + "R8a2Kd9sLq0ZxYw3Vb7Nc1Tm5Pe4Ju6Hf2Gi"  # the shape of one, not a real token
PROFILE = (
    "# Profile\n\n## Work\nThe user writes Rust at work.\n\n"
    f"## Tools\nMy GitHub token is {TOKEN}\nBell\a and \x1b[31mred\x1b[0m, zero\u200bwidth\n"
)
SHOWN = "Bell\\x07 and \\x1b[31mred\\x1b[0m, zero\\u200bwidth"
MASKED = [{"file": "profile.md", "line": 7, "rule": "secret.github-token"}]


def _profile(home: Path, text: str) -> None:
    (home / "personal").mkdir(mode=0o700, exist_ok=True)
    (home / "personal" / "profile.md").write_text(text, encoding="utf-8")


def _session_start(cwd: Path) -> tuple[str, set[str]]:
    """`teamlore hook session-start` as a client runs it: the brief it adds, and the modules
    its process imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "teamlore.cli.entry", "hook", "session-start"],
        input=json.dumps({"cwd": str(cwd)}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    brief = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    return brief, {line.rsplit("|", 1)[-1].strip() for line in lines}


def test_every_reader_gets_a_hand_typed_secret_masked_and_control_characters_shown(
    home: Path, tmp_path: Path
) -> None:
    write_config(home)
    _profile(home, PROFILE)

    async def body(sessions: list[Any], _: list[Any]) -> Any:
        return await sessions[0].call_tool("memory_read", {})

    read = with_sessions(
        [server_params(tmp_path, "-c", "read", "--client-id", "codex", "--global")], body
    )
    data = payload(read)
    [profile] = [d for d in data["documents"] if d["target"] == "profile"]
    assert profile["masked"] == MASKED
    assert "My GitHub token is …[40 chars]\n" + SHOWN in profile["content"]
    assert profile["bytes"] == len(PROFILE.encode())  # the file's size: it is left as it is
    text = read.content[0].text
    assert TOKEN not in json.dumps(data) and TOKEN not in text
    assert not any(ch in text for ch in "\a\x1b\u200b")
    assert text.endswith(
        "[teamlore: a secret typed into personal memory by hand is masked above as `…[N chars]`"
        " (profile.md:7 secret.github-token); the file keeps it until removed there by hand.]"
    )

    shown = teamlore_cli("personal", "show", "--format", "json", cwd=tmp_path)
    assert json.loads(shown.stdout) == data
    piped = teamlore_cli("personal", "show", cwd=tmp_path)
    assert piped.returncode == 0 and piped.stdout == text + "\n"
    note = (
        "note: profile.md:7 holds a secret (secret.github-token); agents read it masked, and it"
        " stays in the file until you remove it"
    )
    assert " ".join(piped.stderr.split()) == note
    assert max(len(line) for line in piped.stderr.splitlines()) <= 80  # a terminal's width
    code, printed = teamlore_in_pty("personal", "show", answers=[], cwd=tmp_path)
    said = " ".join(printed.split())
    assert code == 0 and TOKEN not in printed and "\x1b[31m" not in printed
    assert note in said and "My GitHub token is …[40 chars]" in said and SHOWN in said

    brief, _ = _session_start(tmp_path)
    assert TOKEN not in brief and "…[40 chars]" in brief and SHOWN in brief
    assert (home / "personal" / "profile.md").read_text(encoding="utf-8") == PROFILE


def test_a_private_key_typed_into_a_file_reaches_no_reader_but_as_one_mask(
    home: Path, tmp_path: Path
) -> None:
    """No line of its body, nor its END line, nor how many lines it has, nor its length (`…[1720
    chars]` told an RSA key from an Ed25519 one): `personal show` and the session-start brief get
    the block, BEGIN line to END line, as one `…[private key]`; a token keeps its `…[N chars]`."""
    write_config(home)
    body = base64.b64encode(random.Random(5).randbytes(400)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    block = "\n".join(["-----BEGIN PRIVATE KEY-----", *lines, "-----END PRIVATE KEY-----"])
    _profile(
        home,
        f"# Profile\n\n## Keys\nThe deploy key:\n{block}\nRotated yearly.\n"
        f"My GitHub token is {TOKEN}\n",
    )
    token_line = 5 + len(lines) + 3

    shown = teamlore_cli("personal", "show", "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    [profile] = [d for d in json.loads(shown.stdout)["documents"] if d["target"] == "profile"]
    masks = "The deploy key:\n…[private key]\nRotated yearly.\nMy GitHub token is …[40 chars]\n"
    assert masks in profile["content"]
    assert profile["masked"] == [
        {"file": "profile.md", "line": 5, "rule": "secret.private-key"},
        {"file": "profile.md", "line": token_line, "rule": "secret.github-token"},
    ]
    brief, _ = _session_start(tmp_path)
    assert masks in brief
    assert (
        "masked above as `…[N chars]` or `…[private key]` (profile.md:5 secret.private-key;"
        f" profile.md:{token_line} secret.github-token)"
    ) in brief
    for seen in (shown.stdout, shown.stderr, brief):
        assert not [line for line in lines if line in seen] and "PRIVATE KEY" not in seen
        assert TOKEN not in seen and str(len(block)) not in seen


def test_the_session_start_hook_loads_the_secret_scanner_only_for_what_may_hold_a_secret(
    home: Path, tmp_path: Path
) -> None:
    write_config(home)
    _profile(home, "# Profile\n\n## Work\nJosé writes Rust at work; see docs/personal.md.\n")
    brief, modules = _session_start(tmp_path)
    assert "José writes Rust" in brief
    # the rules' own cheap test (core/secrets/shapes.py), none of the scanner
    scanner = sorted(m for m in modules if m.startswith("teamlore.core.secrets"))
    assert scanner == ["teamlore.core.secrets", "teamlore.core.secrets.shapes"]

    _profile(home, f"# Profile\n\n## Work\nJosé writes Rust; token {TOKEN}.\n")
    brief, modules = _session_start(tmp_path)
    assert "teamlore.core.secrets.scan" in modules
    assert "token …[40 chars]." in brief and TOKEN not in brief


def test_show_refuses_a_workspace_folder_that_does_not_exist(home: Path, tmp_path: Path) -> None:
    write_config(home, project_root=tmp_path / "proj")
    missing = tmp_path / "no-such-folder"
    refused = teamlore_cli("personal", "show", "--workspace", str(missing), cwd=tmp_path)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refusal_lines(refused.stderr)[0] == f"error PATH_NOT_FOUND: {missing} does not exist"
    shown = teamlore_cli("personal", "show", "--workspace", str(missing), "--format", "json")
    assert json.loads(shown.stdout)["error"]["code"] == "PATH_NOT_FOUND"

    # an existing folder that is not registered still shows the global memory (a hook runs in
    # any folder), with a note
    unregistered = teamlore_cli("personal", "show", "--workspace", str(tmp_path), cwd=tmp_path)
    assert unregistered.returncode == 0 and "is not registered" in unregistered.stderr
    (tmp_path / "n.md").write_text("# N\n\nUses uv.\n")
    imported = teamlore_cli(
        "personal", "import", "n.md", "--workspace", str(missing), "--format", "json", cwd=tmp_path
    )
    assert json.loads(imported.stdout)["error"]["code"] == "PATH_NOT_FOUND"


def test_a_refused_flush_or_import_creates_no_state_dir(home: Path, tmp_path: Path) -> None:
    (tmp_path / "n.md").write_text("# N\n\nUses uv.\n")
    flush = teamlore_cli("personal", "flush", cwd=tmp_path)
    assert flush.returncode == 1 and flush.stderr.startswith("error WRITER_DISABLED:")
    imported = teamlore_cli("personal", "import", "n.md", cwd=tmp_path)
    assert imported.returncode == 1 and imported.stderr.startswith("error IMPORT_DISABLED:")
    assert not home.exists()


def test_a_broken_hand_edit_is_named_without_the_secret_typed_into_its_line(
    home: Path, tmp_path: Path, model: ModelServer
) -> None:
    """A line that breaks the format is quoted in PERSONAL_DOCUMENT_INVALID (doctor, the
    Writer's failed job, `personal flush`); a secret typed into it is masked there as every
    reader gets it: it used to be quoted whole, in the output and in the job kept in the
    runtime database."""
    write_config(home, model_url=model.base_url, backoff_seconds=600)
    _profile(home, f"# Profile\n\n## Work\nRust.\n# token {TOKEN}\n")
    env = {KEY_ENV: "sk-scripted"}
    (tmp_path / "n.md").write_text("# Tools\n\nI use fish.\n", encoding="utf-8")
    imported = teamlore_cli("personal", "import", "n.md", "--format", "json", cwd=tmp_path, env=env)
    flushed = teamlore_cli("personal", "flush", cwd=tmp_path, env=env)
    retried = teamlore_cli("personal", "flush", "--format", "json", cwd=tmp_path, env=env)
    doctor = teamlore_cli("doctor", cwd=tmp_path, env=env)
    doctor_json = teamlore_cli("doctor", "--format", "json", cwd=tmp_path, env=env)

    [run] = [r for r in json.loads(imported.stdout)["flush"]["runs"] if r["outcome"] != "idle"]
    assert (run["code"], model.answered) == ("PERSONAL_DOCUMENT_INVALID", [])
    said = "profile.md:5: '# token …[40 chars]' is a level-1 heading or a `##` without a space"
    assert run["message"].startswith(said)
    assert said in " ".join(doctor.stdout.split())
    for out in (imported, flushed, retried, doctor, doctor_json):
        assert TOKEN not in out.stdout + out.stderr
    for stored in (home / "personal").glob("runtime.sqlite3*"):
        assert TOKEN.encode() not in stored.read_bytes()
    assert TOKEN in (home / "personal" / "profile.md").read_text(encoding="utf-8")
