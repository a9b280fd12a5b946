"""`secret.prose` reads a password written out in Chinese as it reads one in English: 密码, 口令,
密钥/秘钥 (密鑰, 金鑰), 私钥, 令牌 (so 登录密码, 访问令牌), joined to the value by 是, 为/為,
设为/改为/改成, `：`, `:`, `＝` or `=`; a Chinese mark (`。`, `，`) or word ends the value, and the
value must look as the English rule asks (letters with digits or symbols; plain words only after
口令 or in quotes). Sentences *about* passwords (`密码是必须的`, `忘记密码了`) pass. Not 验证码: a
one-time code is spent in minutes, no secret to block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import SHARED_FIXTURES, entry_file, writable_copy
from teamlore.core.secrets import scan_content
from teamlore.core.secrets.shapes import PROSE_KEYS_ZH
from teamlore.memory.store import layout
from teamlore.memory.store.lint import lint_text, lint_tree

# templates, not secrets: `{{}}` is deleted (as in test_lint_prose.py)
VALUE = "Zh8kP2qLm9vX"
WRITTEN_OUT = [
    ("预发布数据库的密{{}}码是 Zh8kP2qLm9vX。", VALUE),
    ("预发布数据库密{{}}码：Zh8kP2qLm9vX", VALUE),
    ("预发布数据库密{{}}码:Zh8kP2qLm9vX", VALUE),
    ("跳板机的登录密{{}}码是 Zh8kP2qLm9vX，别外传", VALUE),
    ("密{{}}码 = Zh8kP2qLm9vX", VALUE),
    ("密{{}}码＝Zh8kP2qLm9vX", VALUE),
    ("預發布資料庫的密{{}}碼為 Zh8kP2qLm9vX。", VALUE),
    ("金{{}}鑰：Zh8kP2qLm9vX", VALUE),
    ("服务的密{{}}钥为Zh8kP2qLm9vX，每季度轮换", VALUE),
    ("秘{{}}钥是 Zh8kP2qLm9vX", VALUE),
    ("部署机的私{{}}钥设为 'Zh8kP2qLm9vX'", VALUE),
    ("访问令{{}}牌改为 Zh8kP2qLm9vX", VALUE),
    ("root 密{{}}码改成 Zh8kP2qLm9vX 了", VALUE),
    ("密{{}}码是“Zh8kP2qLm9vX”", VALUE),
    ("口{{}}令为 correct horse battery staple", "correct horse battery staple"),
]
ABOUT_PASSWORDS = [
    "密{{}}码是必须的",
    "密{{}}码为空",
    "忘记密{{}}码了",
    "密{{}}码是什么",
    "修改密{{}}码的流程",
    "设置一个强密{{}}码",
    "密{{}}码：见 1Password",
    "密{{}}码为 123456",
    "密{{}}码是 ${DB_PASSWORD}",
    "密{{}}码是 <your-password>",
    "密{{}}码长度为 12 位",
    "密{{}}钥为 RSA-2048",
    "部署机的私{{}}钥为 id_ed25519",
    "令{{}}牌桶的速率为 100/s",
    "密{{}}码 密碼 = password",
    "验证码是 a8K3zQ",
    "口{{}}令为 the same one",
]


def _text(template: str) -> str:
    return template.replace("{{}}", "")


def _entry(body: str) -> str:
    return entry_file("note", body)


@pytest.mark.parametrize(("template", "value"), WRITTEN_OUT)
def test_a_password_written_out_in_chinese_blocks_and_is_masked_whole(
    template: str, value: str
) -> None:
    text = _text(template)
    [hit] = scan_content(text)
    assert (hit.rule, hit.severity, text[hit.start : hit.end]) == ("secret.prose", "block", value)
    assert hit.message.endswith(f": …[{len(value)} chars]`"), hit.message
    assert value[:3] not in hit.message


@pytest.mark.parametrize("template", ABOUT_PASSWORDS)
def test_a_sentence_about_passwords_in_chinese_is_no_secret(template: str) -> None:
    text = _text(template)
    assert [h.rule for h in scan_content(text) if h.severity == "block"] == [], text


def test_the_english_and_chinese_forms_are_found_and_masked_alike() -> None:
    english = "The staging database password is Zh8kP2qLm9vX."
    chinese = _text("预发布数据库的密{{}}码是 Zh8kP2qLm9vX。")
    for text, key, length in ((english, "password", 13), (chinese, "密码", 12)):
        findings = lint_text(_entry(text), path=".threadshare/memory/entries/note.md")
        assert [(f.rule, f.severity, f.line) for f in findings] == [("secret.prose", "block", 16)]
        assert f"`{key}: …[{length} chars]`" in findings[0].message
        assert VALUE not in findings[0].message


def test_memory_lint_of_a_tree_blocks_each_chinese_form_only(tmp_path: Path) -> None:
    if not SHARED_FIXTURES.joinpath("threadshare-memory").is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    memory = writable_copy(SHARED_FIXTURES / "threadshare-memory", tmp_path / layout.MEMORY_ROOT)
    (memory / "SOURCE.md").unlink(missing_ok=True)
    entries = memory / "entries"
    for name, template in [
        ("zh-is", WRITTEN_OUT[0][0]),
        ("zh-colon", WRITTEN_OUT[1][0]),
        ("zh-phrase", WRITTEN_OUT[-1][0]),
        ("zh-about", ABOUT_PASSWORDS[0]),
        ("zh-forgot", ABOUT_PASSWORDS[2]),
    ]:
        (entries / f"{name}.md").write_text(entry_file(name, _text(template)), encoding="utf-8")
    findings = lint_tree(tmp_path).findings
    assert sorted((f.file.rsplit("/", 1)[-1], f.rule, f.line) for f in findings) == [
        ("zh-colon.md", "secret.prose", 16),
        ("zh-is.md", "secret.prose", 16),
        ("zh-phrase.md", "secret.prose", 16),
    ]


_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_chinese_prose_in_the_shared_fixtures_and_the_lint_corpus_holds_no_new_finding() -> None:
    """The Chinese lines of the real session fixtures and of the lint corpus (its templates
    unfilled: the corpus's one Chinese secret, b098, blocks as `secret.prose` there) hold
    nothing the Chinese keys find."""
    data = Path(__file__).resolve().parents[1] / "data" / "lint_corpus.jsonl"
    paths = [data]
    if SHARED_FIXTURES.is_dir():
        paths += sorted(SHARED_FIXTURES.rglob("*.jsonl")) + sorted(SHARED_FIXTURES.rglob("*.md"))
    lines = [
        line
        for path in paths
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if _CJK.search(line)
    ]
    found = [
        line
        for line in lines
        if any(k in line for k in PROSE_KEYS_ZH)
        for hit in scan_content(_text(line))
        if hit.rule == "secret.prose"
    ]
    assert len(lines) > 30
    assert found == []
