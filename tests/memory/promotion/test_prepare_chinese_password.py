"""A candidate that writes a password out in Chinese is staged, quarantined and blocked by
`secret.prose` as one written in English is (the walk of a Chinese-speaking user: it went to
quarantine with nothing blocking it, and its entry id was built from the password)."""

from __future__ import annotations

from pathlib import Path

from test_review import Flow, candidate, dump, request_for

VALUE = "Zh8kP2qLm9vX"
# a template, not a secret: `{{}}` is deleted (as in tests/memory/data/lint_corpus.jsonl)
TEXT = "预发布数据库的密{{}}码是 Zh8kP2qLm9vX，CI secret 里也有一份。".replace("{{}}", "")


def test_a_chinese_password_is_blocked_at_stage_and_never_names_an_entry(
    tmp_path: Path, home: Path
) -> None:
    flow = Flow(tmp_path, home)
    (cid,) = flow.quarantine([candidate(TEXT, [(TEXT, [flow.turn_ev(1)])])])
    item = flow.item(cid)
    assert item["blocked"] is True and item["files"] == []  # no entry id, no file name
    assert [f["rule"] for f in item["lintFindings"] if f["severity"] == "block"] == ["secret.prose"]
    assert all(VALUE not in f["message"] for f in item["lintFindings"])
    conn = flow.state()
    before = dump(conn)
    error = flow.refused("memory.prepare", request_for(item))
    assert error.code == "LINT_BLOCKED"
    assert [f["rule"] for f in error.details["findings"]] == ["secret.prose"]
    assert dump(conn) == before
    conn.close()
