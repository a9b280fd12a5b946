"""A password written out in Chinese in personal memory is what one written in English is
(`secret.prose`, core/secrets/rules.py): an import of it is refused, a hand edit that holds it is
masked for every reader (`personal show`, the session-start hook, `memory_read`) and named by
`doctor`; the reader's cheap test (`may_hold_secret`) lets the text through to the scanner."""

from __future__ import annotations

from pathlib import Path

import pytest
from personal_world import configure, settings

from teamlore.core import errors
from teamlore.ops.integrations.session_brief import compose_brief
from teamlore.ops.integrations.state_checks import personal_check
from teamlore.personal import api, documents, reader

VALUE = "Qw3rT9zX8pLm"
# templates, not secrets: `{{}}` is deleted (as in tests/memory/data/lint_corpus.jsonl)
LINE = "跳板机的登录密{{}}码：Qw3rT9zX8pLm".replace("{{}}", "")
PREFERENCES = f"# Preferences\n\n## 服务器\n{LINE}\n常用 tmux；回答用中文。\n"


def _preferences(home: Path) -> None:
    configure(home, settings(), project=False)
    root = documents.personal_root(home)
    root.mkdir(parents=True, mode=0o700, exist_ok=True)
    (root / "preferences.md").write_text(PREFERENCES, encoding="utf-8")


@pytest.mark.parametrize(
    "text",
    [
        "# 服务器\n\n跳板机的登录密{{}}码是 Qw3rT9zX8pLm\n",
        "# Servers\n\nThe jump host pass{{}}word is Qw3rT9zX8pLm\n",
    ],
    ids=["chinese", "english"],
)
def test_an_import_that_writes_a_password_out_is_refused(
    home: Path, tmp_path: Path, text: str
) -> None:
    configure(home, settings())
    path = tmp_path / "服务器.md"
    path.write_text(text.replace("{{}}", ""), encoding="utf-8")
    with pytest.raises(errors.TeamloreError) as refused:
        api.import_markdown(home, path)
    assert refused.value.code == "SENSITIVE_CONTENT_REJECTED"
    assert "(secret.prose)" in refused.value.message and VALUE not in refused.value.message
    assert not documents.personal_root(home).exists()


def test_a_hand_typed_chinese_password_is_masked_for_readers_and_named_by_doctor(
    home: Path,
) -> None:
    _preferences(home)
    assert reader.may_hold_secret(PREFERENCES)
    view = reader.read_memory(home, ["global"])
    [preferences] = [d for d in view.documents if d.target == "preferences"]
    assert "跳板机的登录密码：…[12 chars]\n常用 tmux；回答用中文。" in preferences.content
    assert [m.to_json() for m in view.masked] == [
        {"file": "preferences.md", "line": 4, "rule": "secret.prose"}
    ]
    assert VALUE not in reader.render_memory(view)
    check = personal_check(home)
    assert check.status == "fail" and VALUE not in check.message
    assert "preferences.md:4 holds a secret (secret.prose); agents read it masked" in check.message


def test_the_session_start_brief_sends_a_chinese_password_masked(
    home: Path, tmp_path: Path
) -> None:
    """What `teamlore hook session-start` sends as `additionalContext` (cli/hook_runner.py),
    built in this process."""
    _preferences(home)
    brief = compose_brief(tmp_path, "claude")
    assert VALUE not in brief and "跳板机的登录密码：…[12 chars]" in brief
    assert (documents.personal_root(home) / "preferences.md").read_text(encoding="utf-8") == (
        PREFERENCES
    )
