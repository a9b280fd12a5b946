"""The pattern rules of secret scanning: credential shapes (block), sensitive-but-shareable
shapes (warn), provider session ids and local paths, as compiled regular expressions."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from teamlore.core.secrets.heuristics import (
    Severity,
    _is_placeholder,
    _random_enough,
    looks_like_words,
)
from teamlore.core.secrets.shapes import (
    AWS_PREFIXES,
    PROSE_KEYS_ZH,
    SECRET_KEYWORDS,
    SECRET_SHAPES,
)
from teamlore.core.shapes.records import Record

# --- content rules --------------------------------------------------------------------------


class Hit(Record, frozen=True):
    """One span a rule found: where, how severe, and a message that never quotes the secret."""

    rule: str
    severity: Severity
    start: int
    end: int
    message: str


class _PatternRule(Record, frozen=True):
    """A rule that is one regular expression (and the group that holds the secret)."""

    rule: str
    severity: Severity
    pattern: re.Pattern[str]
    what: str
    group: int | str = 0
    accept: Callable[[re.Match[str]], bool] | None = None
    keep: int = 4
    # a cheap test every match passes, so a text that fails it is not searched by `pattern`
    # (whose lookbehind is tried at every position): one of `needles` is in the text (case
    # sensitive), and `gate`, a pattern with the same case rule, is found in it. On ASCII text
    # a case-insensitive gate is one of `folded` (lowercase) in the lowercased text instead:
    # exact there, while Unicode case rules (`ı` matches `I`, `ſ` matches `s`) need the gate
    needles: tuple[str, ...] = ()
    gate: re.Pattern[str] | None = None
    folded: tuple[str, ...] = ()

    def may_match(self, text: str, ascii_lower: str | None) -> bool:
        """`ascii_lower`: `text.lower()` when `text` is ASCII, else None."""
        if self.needles and not any(needle in text for needle in self.needles):
            return False
        if self.gate is None:
            return True
        if ascii_lower is not None and self.folded:
            return any(needle in ascii_lower for needle in self.folded)
        return self.gate.search(text) is not None


def _value_group_ok(match: re.Match[str]) -> bool:
    return _random_enough(match.group("value"))


def _url_password_ok(match: re.Match[str]) -> bool:
    password = match.group("password")
    return not _is_placeholder(password) and not _is_placeholder(match.group("user"))


def _sk_key_ok(match: re.Match[str]) -> bool:
    body = match.group(0)[3:]
    return any(ch.isdigit() for ch in body) and not looks_like_words(body)


def _secret(rule: str, pattern: re.Pattern[str], what: str, **options: Any) -> _PatternRule:
    """A `secret.*` rule (block) whose gate is its shape's needles (shapes.py): the one table
    `may_hold_secret` reads too, so a needle is never the scanner's alone. A case-insensitive
    shape's lowercase needles gate with the pattern's case rule (`(?i)`)."""
    shape = SECRET_SHAPES[rule]
    if shape.anycase and any(ch.isalpha() for needle in shape.needles for ch in needle):
        gate = re.compile("(?i)" + "|".join(map(re.escape, shape.needles)))
        options |= {"gate": gate, "folded": shape.needles}
    else:
        options |= {"needles": shape.needles}
    return _PatternRule(rule, "block", pattern, what, **options)


_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
_HOME_PREFIX = r"(?:~|\$HOME|\$\{HOME\}|%USERPROFILE%|%APPDATA%)"
_PROVIDER_LOCAL = (
    r"(?i:" + _HOME_PREFIX + r"[/\\]+\.(?:codex|claude)(?![A-Za-z0-9])"
    r"|\.codex[/\\]+(?:sessions|archived_sessions|history\.jsonl)"
    r"|\.claude[/\\]+(?:projects|todos|history\.jsonl)"
    r"|\$\{?CODEX_HOME\}?[/\\]+sessions"
    r"|AppData[/\\]+(?:Roaming|Local)[/\\]+(?:Claude|codex)(?![A-Za-z0-9]))"
)

_PATH_TAIL = r"[^\s\"'`<>|)\]},;]*"
# CI runners' homes are the same on every runner and say nothing about a person (docs/memory.md)
CI_HOMES = ("runner", "circleci", "travis", "vsts", "gitlab-runner", "jenkins", "buildkite-agent")
_NOT_CI_HOME = r"(?!(?:" + "|".join(CI_HOMES) + r")(?![A-Za-z0-9._-]))"
_HOME_ABSOLUTE = (
    r"(?:(?<![\w.~-])(?:/var|/export)?/(?:Users|home)/" + _NOT_CI_HOME + r"[A-Za-z0-9._-]+|"
    r"(?<![\w.~/-])/root(?=/)|"
    # a Linux home seen from Windows through WSL's share
    r"(?i:\\\\wsl(?:\$|\.localhost)\\[^\\\s]+\\home\\[^\\\s\"']+)|"
    # a Windows home seen from WSL, and macOS per-user temp folders: this machine only
    r"(?<![\w.~-])/mnt/[a-z]/Users/[A-Za-z0-9._ -]+|(?<![\w.~-])(?:/private)?/var/folders(?=/)|"
    r"(?i:(?<![A-Za-z])[A-Z]:(?:\\\\?|/)(?:Users|Documents and Settings)(?:\\\\?|/)[^\\/\s\"']+))"
)

# what joins a Chinese secret word to its value (the scanner reads `：` and `＝` as `:` and `=`):
# 是, 为/為, 设为/設為, 改为/改成, 设置为/設定為, 修改为, 均为/都是 (初始密码均为), 就是,
# 统一为/統一為, and a rotation: 改成了/改为了, 换成/换为/換成, 更新为/更新成/更新為, 变成(了)/變成;
# shapes.py's `secret.prose` shape holds the first character of each
_CONNECTORS_ZH = (
    r"是|[为為]|(?:[设設改换換][为為成]|[设設][置定][为為成]|修改[为為成]|更新[为為成]|[变變]成)了?"
    r"|[均都就][为為是]|[统統]一[为為]"
)
# a rotation in English: `was changed to`, `set to`, `reset to`, `updated to`, `set the password to`
_CONNECTORS_EN = (
    r"(?:(?:is|was|has been|have been|will be)[^\S\r\n]+)?(?:changed|set|reset|updated)"
    r"[^\S\r\n]+to|(?<=set the password)[^\S\r\n]+to"
)
# a CJK character, mark or full-width form (U+2E80-U+9FFF, compatibility ideographs,
# U+FE30-U+FE4F, U+FF00-U+FFEF)
_CJK = "\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
# a character of a value after a Chinese key: not a blank, a quote or `,;`, not a CJK character
# and not a Chinese quote mark. After any other key a value never starts with a CJK character:
# in `password 是否一致` 是 is no connector and 否一致 no value
_VALUE_ZH = "[^\\s\"'`,;“”‘’" + _CJK + "]"
_VALUE = "(?![" + _CJK + "])[^\\s\"'`,;]"

_RULES: tuple[_PatternRule, ...] = (
    _secret(
        "secret.private-key",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        "private key block",
        keep=11,
    ),
    _secret(
        "secret.aws-access-key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:" + "|".join(AWS_PREFIXES) + ")"
            r"[A-Z0-9]{16}(?![A-Za-z0-9])"
        ),
        "AWS access key id",
    ),
    _secret(
        "secret.github-token",
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[oprsu]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{22,})"),
        "GitHub token",
    ),
    _secret(
        "secret.gitlab-token",
        re.compile(r"(?<![A-Za-z0-9])gl(?:pat|dt|rt|ptt|cbt)-[A-Za-z0-9_-]{20,}"),
        "GitLab token",
    ),
    _secret(
        "secret.npm-token",
        re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        "npm token",
    ),
    _secret(
        "secret.pypi-token",
        re.compile(r"(?<![A-Za-z0-9])pypi-AgE[A-Za-z0-9_-]{50,}"),
        "PyPI token",
    ),
    _secret(
        "secret.google-api-key",
        re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        "Google API key",
    ),
    _secret(
        "secret.google-oauth",
        re.compile(r"(?<![A-Za-z0-9])(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{20,})"),
        "Google OAuth token or client secret",
    ),
    _secret(
        "secret.slack-webhook",
        re.compile(
            r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{20,}"
        ),
        "Slack webhook URL",
        keep=23,
    ),
    _secret(
        "secret.slack-token",
        re.compile(
            r"(?<![A-Za-z0-9])(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})"
        ),
        "Slack token",
    ),
    _secret(
        "secret.stripe-key",
        re.compile(
            r"(?<![A-Za-z0-9])(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[A-Za-z0-9]{24,})"
        ),
        "Stripe secret key",
    ),
    _secret(
        "secret.model-api-key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,}"),
        "model provider API key (OpenAI/Anthropic `sk-`)",
        accept=_sk_key_ok,
    ),
    _secret(
        "secret.sendgrid-key",
        re.compile(r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        "SendGrid API key",
    ),
    _secret(
        "secret.huggingface-token",
        re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}"),
        "Hugging Face token",
    ),
    _secret(
        "secret.telegram-bot-token",
        re.compile(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}"),
        "Telegram bot token",
    ),
    _secret(
        "secret.jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        "JSON Web Token",
    ),
    _secret(
        "secret.url-credentials",
        re.compile(
            r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^\s/@:]*):(?P<password>[^\s/@]+)@"
        ),
        "credentials in a URL",
        accept=_url_password_ok,
        keep=0,
    ),
    _secret(
        "secret.authorization-header",
        re.compile(
            r"(?i)(?:\bauthorization\s*[:=]\s*[\"']?(?:bearer|basic|token)|\bbearer)\s+"
            r"(?P<value>[A-Za-z0-9._~+/-]{16,}=*)"
        ),
        "credential in an Authorization header",
        group="value",
        accept=_value_group_ok,
        keep=0,
    ),
    _secret(
        "secret.assignment",
        re.compile(
            # the name's prefix is bounded: an unbounded lazy prefix rescans a long run of
            # name characters from every start (quadratic)
            r"(?i)(?<![A-Za-z0-9])(?P<key>[A-Za-z0-9_.-]{0,48}?"
            + SECRET_KEYWORDS
            + r")(?![A-Za-z0-9])"
            r"[\"']?\s*(?::=|=>|=|:)\s*"
            r"(?:(?P<quote>[\"'`])(?P<qvalue>[^\"'`\s]{6,})(?P=quote)|(?P<value>[^\s\"'`,;]{6,}))"
        ),
        "secret assigned to a credential name",
        keep=0,
    ),
    _secret(
        "secret.prose",
        # one line only (`[^\S\r\n]`: blank but not a line break): a key at a line's end is
        # never joined with the next line; a key inside a path (`/etc/passwd`, `..\passwd`) is
        # a file name, not a word of prose
        re.compile(
            r"(?i)(?P<key>(?<![A-Za-z_/\\-])(?:pass(?:word|wd|phrase)|pass phrase|pw|pwd|passwort"
            r"|mot de passe|contrase(?:ñ|n)a)|(?P<zh>" + "|".join(PROSE_KEYS_ZH) + r"))(?![A-Za-z])"
            r"(?P<about>[^\S\r\n]+(?:for|of|to)[^\S\r\n]+[^\r\n:=]{1,40}?)?"
            # a qualifier in brackets between the key and its colon: `password (staging):`
            r"(?:[^\S\r\n]*[(（][^()（）\r\n]{1,30}[)）](?=[^\S\r\n]*[:：]))?"
            r"(?P<sep>[^\S\r\n]*(?:"
            + _CONNECTORS_EN
            + r"|is|was|will be|lautet|est|es|:|=|"
            + _CONNECTORS_ZH
            + r")"
            r"[^\S\r\n]*:?|[^\S\r\n])[ \t]*"
            r"(?:(?P<quote>[\"'`])(?P<qvalue>[^\"'`\r\n]{6,64})(?P=quote)"
            # after a Chinese key, a Chinese quote mark may open the value, and a Chinese word or
            # mark (`。`, `”`) ends it: `密码是必须的` and `密码：见 1Password` hold no value
            r"|(?(zh)[“‘「『]?)(?P<value>(?(zh)" + _VALUE_ZH + r"{6,64}|" + _VALUE + r"{6,64})"
            r"(?:[ \t]+[a-z]{3,12}){0,7}))"
        ),
        "password or passphrase written out in prose",
        keep=0,
    ),
    _secret(
        "secret.cli-flag",
        re.compile(
            r"(?i)--(?:password|passwd|token|api-key|secret|client-secret)[= ]"
            r"(?P<value>[^\s\"'`]{6,})"
        ),
        "credential passed as a command-line flag",
        group="value",
        accept=_value_group_ok,
        keep=0,
    ),
    _PatternRule(
        "session.transcript-file",
        "block",
        re.compile(
            r"(?:rollout-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}[-:][0-9]{2}[-:][0-9]{2}-"
            + _UUID
            + r"(?:\.jsonl)?|(?<![0-9A-Za-z-])"
            + _UUID
            + r"\.jsonl)"
        ),
        "provider transcript file name",
        needles=("rollout-", ".jsonl"),
    ),
    _PatternRule(
        "path.provider-local",
        "block",
        re.compile(_PROVIDER_LOCAL),
        "provider-local path (session store)",
        keep=8,
        gate=re.compile(r"(?i)codex|claude"),
        folded=("codex", "claude"),
    ),
    _PatternRule(
        "path.home-absolute",
        "block",
        re.compile(_HOME_ABSOLUTE),
        "absolute home path (use a repo-relative path)",
        keep=6,
        gate=re.compile(r"/home/|/root/|/mnt/|/var/folders|(?i:wsl|users|documents and settings)"),
        folded=("/home/", "/root/", "/mnt/", "/var/folders", "wsl", "users", "documents and"),
    ),
)

EMAIL_ADDRESS = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
# `user@host` that is a login, not an address: the userinfo of a URL (`scheme://user:pw@host`),
# an SCP-style remote (`git@github.com:pat/app.git`, which scp and rsync take), or the host an
# ssh-like command logs in to, as its first argument after its options (`ssh -p 22 deploy@…`)
_URL_USERINFO = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/@]*")
_LOGIN_COMMAND = re.compile(
    r"(?:^|[\s`$(;|&])(?:ssh|mosh|sftp|ssh-copy-id)"
    r"(?:\s+-{1,2}[\w-]+(?:[= ][^\s;|&@-][^\s;|&@]*)?)*\s+$"
)
# scp or rsync with the address among its arguments: words (`notes.txt`, `-avz`) only, no
# sentence between (`rsync run, write to …`)
_COPY_COMMAND = re.compile(r"(?:^|[\s`$(;|&])(?:scp|rsync)(?:\s+[^\s;|&,]*[^\s;|&,.]){0,20}\s+$")
# how far before an address the login checks look: a login's command or URL is next to it, and
# a bounded look keeps a long line of many addresses linear
_LOGIN_REACH = 256


def is_email_address(match: re.Match[str]) -> bool:
    """An `EMAIL_ADDRESS` match that is an e-mail address, not a login to a host."""
    text, start, end = match.string, match.start(), match.end()
    line_start = text.rfind("\n", max(0, start - _LOGIN_REACH), start) + 1
    before = text[max(line_start, start - _LOGIN_REACH) : start]
    token = before.rsplit(None, 1)[-1] if before and not before[-1].isspace() else ""
    if token and _URL_USERINFO.fullmatch(token):
        return False
    if text[end : end + 1] == ":":
        if end < len(text) - 1 and not text[end + 1].isspace():
            return False  # user@host:path
        if _COPY_COMMAND.search(before):
            return False  # `scp notes.txt deploy@prod:` (the home folder there)
    return not _LOGIN_COMMAND.search(before)


_WARN_RULES: tuple[_PatternRule, ...] = (
    _PatternRule(
        "path.local-absolute",
        "warn",
        re.compile(r"(?<![\w.~-])(?:/private)?/tmp/[^\s\"'`<>|)\]},;]+|(?<![\w.~-])/mnt/[a-z]/\S+"),
        "absolute path on this machine (a temp or mounted drive path: is it meant for the team?)",
        keep=5,
        needles=("/tmp/", "/mnt/"),
    ),
    _PatternRule(
        "secret.long-hex",
        "warn",
        re.compile(r"(?<![0-9a-fA-F])[0-9a-fA-F]{32,}(?![0-9a-fA-F])"),
        "long hex value (a digest or an encoded secret?)",
        accept=lambda m: len(m.group(0)) != 40,
    ),
    _PatternRule(
        "pii.email",
        "warn",
        EMAIL_ADDRESS,
        "e-mail address",
        keep=2,
        needles=("@",),
        accept=is_email_address,
    ),
    _PatternRule(
        "net.ip-port",
        "warn",
        re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}(?!\d)"),
        "ip:port address",
        keep=0,
        needles=(":",),
        gate=re.compile(r"\.\d{1,3}:\d"),
    ),
    _PatternRule(
        "path.home-relative",
        "warn",
        re.compile(r"(?<![\w/])~/[^\s\"'`)\]]+"),
        "home-relative path",
        keep=2,
        needles=("~/",),
    ),
)

SESSION_ID_PATTERN = re.compile(r"(?<![0-9A-Za-z-])" + _UUID + r"(?![0-9A-Za-z-])")
_SESSION_CONTEXT = re.compile(
    r"session|agent|conversation|thread|rollout|transcript|resume|codex|claude|chat",
    re.IGNORECASE,
)
