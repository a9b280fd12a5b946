"""`secret.prose` reads a password written out in Chinese as it reads one in English: 密码, 口令,
密钥/秘钥 (密鑰, 金鑰), 私钥, 令牌 (so 登录密码, 访问令牌, and right after a Latin word: DB密码,
GitHub令牌, 账号/密码), joined to the value by 是, 为/為, 设为/改为/改成, 设置为/設定為, 修改为,
均为/都是, 就是, 统一为, a rotation (改成了, 换成/換成, 更新为/更新為, 变成/變成, 设置成), `：`,
`:`, `＝` or `=` (a bracketed qualifier may stand before the colon: `密码（预发布）：`);
a Chinese mark (`。`, `，`) or word ends the value,
and the value must look as the English rule asks (letters with digits or symbols; plain words
only after 口令 or in quotes). Sentences *about* passwords (`密码是必须的`, `忘记密码了`) pass, and
so does the name of an algorithm, an encoding or a standard, or a version (`密码为 SHA-256 哈希`,
`令牌为 JWT-RS256 签名`, `密码是 v1.2.3 版本之后才加密的`). Not 验证码: a one-time code is spent in
minutes, no secret to block."""

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
SHORT = "Xk9#mP2q"
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
    # a Latin word right before the key (the English keys' lookbehind is theirs alone)
    ("DB密{{}}码：Xk9#mP2q", SHORT),
    ("MySQL密{{}}码是 Xk9#mP2q", SHORT),
    ("root密{{}}码为 Xk9#mP2q", SHORT),
    ("GitHub令{{}}牌：ghx9Kq2LmZp0", "ghx9Kq2LmZp0"),
    # account/password: the account and the password are masked together
    ("账号/密{{}}码：admin/Xk9#mP2q", "admin/Xk9#mP2q"),
    ("密{{}}码设置为 Xk9#mP2q", SHORT),
    ("密{{}}碼設定為 Xk9#mP2q", SHORT),
    ("密{{}}码修改为 Xk9#mP2q", SHORT),
    ("初始密{{}}码均为 Xk9#mP2q", SHORT),
    ("默认密{{}}码都是 Xk9#mP2q", SHORT),
    ("密{{}}码就是 Xk9#mP2q", SHORT),
    ("测试环境密{{}}码统一为 Xk9#mP2q", SHORT),
    ("測試環境密{{}}碼統一為 Xk9#mP2q", SHORT),
    ("pass{{}}word 是 Xk9#mP2q", SHORT),
    # a rotation: 改成了/改为了, 换成/换为/換成, 更新为/更新成/更新為, 变成(了)/變成, 设置成
    ("新密{{}}码改成了 Zh8kP2qLm9vX，记得更新。", VALUE),
    ("密{{}}码改为了 Zh8kP2qLm9vX", VALUE),
    ("数据库密{{}}码换成 Zh8kP2qLm9vX 了。", VALUE),
    ("密{{}}码换为 Zh8kP2qLm9vX", VALUE),
    ("密{{}}碼換成 Zh8kP2qLm9vX", VALUE),
    ("密{{}}码设置成 Zh8kP2qLm9vX。", VALUE),
    ("密{{}}码更新为 Zh8kP2qLm9vX。", VALUE),
    ("密{{}}码更新成 Zh8kP2qLm9vX", VALUE),
    ("密{{}}碼更新為 Zh8kP2qLm9vX", VALUE),
    ("密{{}}码变成了 Zh8kP2qLm9vX。", VALUE),
    ("密{{}}码变成 Zh8kP2qLm9vX", VALUE),
    ("密{{}}碼變成 Zh8kP2qLm9vX", VALUE),
    # a qualifier in brackets between the key and `：`
    ("密{{}}码（预发布）：Zh8kP2qLm9vX", VALUE),
    ("密{{}}码(预发布): Zh8kP2qLm9vX", VALUE),
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
    # what a password is hashed or encoded with, a standard, a version: no value
    "密{{}}码为 SHA-256 哈希",
    "密{{}}码用 bcrypt 存储，密{{}}码为 bcrypt。",
    "访问令{{}}牌是 OAuth2.0 标准的",
    "令{{}}牌为 JWT-RS256 签名",
    "密{{}}码是 v1.2.3 版本之后才加密的",
    "密{{}}码为 base64 编码",
    "密{{}}钥为 AES-256-GCM",
    "密{{}}钥就是 ed25519 的",
    # after an English key, 是 followed by a Chinese word is no connector (是否: whether)
    "检查 pass{{}}word 是否与数据库中的哈希一致？",
    "pass{{}}word是否正确",
    # a rotation told, not its value
    "密{{}}码改成了什么",
    "密{{}}码换成更强的",
    "密{{}}码更新为 SHA-256 哈希",
    "密{{}}钥换成 AES-256-GCM",
    "密{{}}码变成了 v1.2.3 版本的格式",
    "密{{}}码（预发布）：见 1Password",
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


def test_two_rotations_on_one_line_are_both_masked() -> None:
    text = _text("跳板机密{{}}码改成了 Zh8kP2qLm9vX，预发布库密{{}}码更新为 Qw3rT9zX8pLm。")
    hits = scan_content(text)
    assert [(h.rule, text[h.start : h.end]) for h in hits] == [
        ("secret.prose", VALUE),
        ("secret.prose", "Qw3rT9zX8pLm"),
    ]


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


def _prose_findings(lines: list[str]) -> list[str]:
    return [
        line
        for line in lines
        if any(k in line for k in PROSE_KEYS_ZH)
        for hit in scan_content(_text(line))
        if hit.rule == "secret.prose"
    ]


def _chinese_lines(paths: list[Path]) -> list[str]:
    return [
        line
        for path in paths
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if _CJK.search(line)
    ]


def test_chinese_prose_in_the_lint_corpus_holds_no_new_finding() -> None:
    """The Chinese lines of the lint corpus (its templates unfilled: the corpus's one Chinese
    secret, b098, blocks as `secret.prose` there) hold nothing the Chinese keys find."""
    lines = _chinese_lines([Path(__file__).resolve().parents[1] / "data" / "lint_corpus.jsonl"])
    assert len(lines) >= 5
    assert _prose_findings(lines) == []


def test_chinese_prose_in_the_shared_fixtures_holds_no_new_finding() -> None:
    """The Chinese lines of the real session fixtures hold nothing the Chinese keys find."""
    if not SHARED_FIXTURES.is_dir():
        pytest.skip("../shared/fixtures is not available in this checkout")
    paths = sorted(SHARED_FIXTURES.rglob("*.jsonl")) + sorted(SHARED_FIXTURES.rglob("*.md"))
    lines = _chinese_lines(paths)
    assert len(lines) > 30
    assert _prose_findings(lines) == []
