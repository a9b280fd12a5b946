"""`sessions search` and `sessions show` mask a transcript's secrets as memory search masks a
hit's (`…[36 chars]`), in the text view and in JSON alike: the operation masks what it returns
(ops/sessions/lineage.py `mask_shown`, sessions/passages.py `masked`), so every caller of
`sessions.search` and `sessions.show` (the CLI, the review page's session view) gets the same;
the index keeps the text as typed. A turn holding no secret comes through byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sessions.records import (
    codex_agent_message,
    codex_assistant_item,
    codex_event,
    codex_function_call,
    codex_function_output,
    codex_meta,
    codex_user_message,
    write_jsonl,
)
from support import in_process
from teamlore.ops.registry import OpContext, run_operation

SESSION_ID = "0199aaaa-0000-7000-8000-000000000001"
STRIPE_KEY = "sk_live_" + "51HxYzAbCdEfGhIjKlMnOpQr"  # two pieces: no whole key in this file
PASSWORD = "Xk9#" + "mP2q"
DB_PASSWORD = "hunter2" + "hunter2xyzQ9"  # named by its key in a tool call's input
NORMAL_PROMPT = "fix the rounding in cart totals  (two spaces, a tab\there)"
NORMAL_ANSWER = "Rounding fixed in cart.py:\n\n    total = round(total, 2)\n"


@pytest.fixture()
def indexed(home: Path, tmp_path: Path) -> str:
    """One Codex session of three turns, synced: a key typed in a prompt and repeated by the
    agent before a tool call and in the call's command, a password in a Chinese prompt, and a
    turn with no secret."""
    write_jsonl(
        tmp_path / "codex" / f"rollout-2026-01-01T00-00-00-{SESSION_ID}.jsonl",
        [
            codex_meta(SESSION_ID, cwd="/w/shop"),
            codex_user_message(f"export STRIPE_KEY={STRIPE_KEY} then deploy the checkout"),
            codex_assistant_item(f"Setting STRIPE_KEY={STRIPE_KEY} before the checkout deploy."),
            codex_function_call(
                "c1",
                "shell",
                {"command": ["bash", "-lc", f"STRIPE_KEY={STRIPE_KEY} npm run deploy"]},
            ),
            codex_function_output("c1", "deployed"),
            codex_function_call("c2", "db_connect", {"host": "db", "password": DB_PASSWORD}),
            codex_function_output("c2", "connected"),
            codex_assistant_item("The checkout is deployed."),
            codex_event("task_complete"),
            codex_user_message(f"数据库的密码是 {PASSWORD}，请连接数据库"),
            codex_agent_message("已连接数据库。"),
            codex_event("task_complete"),
            codex_user_message(NORMAL_PROMPT),
            codex_agent_message(NORMAL_ANSWER),
            codex_event("task_complete"),
        ],
    )
    synced = in_process("sync", "--source", f"codex={tmp_path / 'codex'}", "--format", "json")
    assert synced.returncode == 0, synced.stderr
    return SESSION_ID


def _json(*args: str) -> dict[str, Any]:
    done = in_process(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _text(*args: str) -> str:
    done = in_process(*args, env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def _no_secret(output: str) -> None:
    assert STRIPE_KEY not in output and STRIPE_KEY[8:] not in output
    assert PASSWORD not in output and "mP2q" not in output and DB_PASSWORD not in output


def test_sessions_show_masks_the_turn_texts_and_leaves_a_turn_without_secrets_as_typed(
    indexed: str,
) -> None:
    shown = _json("sessions", "show", indexed)
    _no_secret(json.dumps(shown, ensure_ascii=False))
    first, second, third = shown["turns"]
    assert first["user"] == "export STRIPE_KEY=…[32 chars] then deploy the checkout"
    assert second["user"] == "数据库的密码是 …[8 chars]，请连接数据库"
    assert (third["user"], third["assistant"]) == (NORMAL_PROMPT, NORMAL_ANSWER)
    # the tool call still comes after the words the agent said before it, which were masked
    said_before = first["assistant"][: first["tools"][0]["assistantOffset"]]
    assert said_before.rstrip("\n") == "Setting STRIPE_KEY=…[32 chars] before the checkout deploy."
    # the call's command, where a key is typed most often, is masked too, and an input's value
    # is judged beside its key, as the index holds it and search masks it
    call, connect = first["tools"]
    assert "npm run deploy" in str(call["command"]) and "…[32 chars]" in str(call["command"])
    assert connect["input"]["host"] == "db" and DB_PASSWORD not in str(connect["input"])
    page = _text("sessions", "show", indexed)
    _no_secret(page)
    assert page.index("…[32 chars] before the checkout") < page.index("#1 shell")
    assert page.index("#1 shell") < page.index("The checkout is deployed.")
    assert "数据库的密码是 …[8 chars]" in page and NORMAL_PROMPT.split("\t")[0] in page
    one_turn = _json("sessions", "show", indexed, "--turn", "1", "--tool", "1")
    assert one_turn["turns"][0]["user"] == first["user"]


def test_sessions_search_masks_its_snippets_in_text_json_and_the_operation(
    indexed: str, home: Path
) -> None:
    """A search for the secret itself still finds the turn (the index holds it as typed); the
    snippet shows it masked, also where the snippet is cut from the middle of the text."""
    ctx = OpContext(cwd=home, home=home)

    def snippets(query: str) -> list[str]:
        payload = {"query": query, "lexical": True, "sync_first": False}
        return [h["snippet"] for h in run_operation("sessions.search", ctx, payload)["hits"]]

    for query in ("STRIPE_KEY deploy", STRIPE_KEY, "密码", "数据库"):
        found = snippets(query)
        assert found, query
        _no_secret("\n".join(found))
    assert snippets("密码") == ["user: 数据库的密码是 …[8 chars]，请连接数据库"]
    assert snippets("rounding cart") == [
        "user: fix the rounding in cart totals (two spaces, a tab here)"
    ]
    for query in (STRIPE_KEY, "密码"):  # the CLI's views
        as_json = _json("sessions", "search", query, "--lexical")
        assert [h["snippet"] for h in as_json["hits"]] == snippets(query)
        text = _text("sessions", "search", query, "--lexical")
        _no_secret(text)
        shown = [line[2:] for line in text.splitlines() if line.startswith("  ")]
        assert shown == snippets(query)  # the text view prints each hit's masked snippet
