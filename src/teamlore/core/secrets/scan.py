"""Scanning text for secrets: `scan_content` reports each span once, by its most specific rule
(pattern rules first, then session ids, encoded and high-entropy tokens); `scrub` redacts them."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable

from teamlore.core.secrets.heuristics import (
    _CODE_REFERENCE,
    _HEX_OR_UUID,
    SESSION_CONTEXT_WINDOW,
    SLUG_HASH_SUFFIX_LENGTH,
    _decodes_to_text,
    _is_placeholder,
    decoded_text,
    looks_like_words,
    redact,
)
from teamlore.core.secrets.normalize import normalized_view
from teamlore.core.secrets.rules import (
    _RULES,
    _SESSION_CONTEXT,
    _WARN_RULES,
    SESSION_ID_PATTERN,
    Hit,
    _PatternRule,
)
from teamlore.core.secrets.shapes import (
    ENTROPY_MIN_BITS,
    ENTROPY_MIN_LENGTH,
    INTERNAL_EQUALS,
    SECRET_TOKEN,
    shannon_entropy,
)


def _match_span(rule: _PatternRule, match: re.Match[str]) -> tuple[int, int, str]:
    if rule.rule in ("secret.assignment", "secret.prose"):
        name = "qvalue" if match.group("qvalue") is not None else "value"
        return match.start(name), match.end(name), match.group(name)
    return match.start(rule.group), match.end(rule.group), match.group(rule.group)


def _assignment_ok(match: re.Match[str]) -> bool:
    quoted = match.group("qvalue")
    if quoted is not None:
        return not _is_placeholder(quoted) and _CODE_REFERENCE.fullmatch(quoted) is None
    value = match.group("value")
    if _is_placeholder(value) or _CODE_REFERENCE.fullmatch(value) is not None:
        return False
    if value.startswith(("/", "./", "~", "http:", "https:")):
        return False  # a path or URL, judged by the path and URL rules
    return not looks_like_words(value)


_PASSPHRASE_WORD = re.compile(r"[a-z]{3,12}")
# keys that are also shell commands: followed by a blank alone, they are a command line
_COMMAND_NAMES = re.compile(r"(?i)passwd|pwd")
_PROSE_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "is",
        "are",
        "was",
        "be",
        "been",
        "being",
        "to",
        "of",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "and",
        "or",
        "not",
        "no",
        "must",
        "should",
        "will",
        "can",
        "may",
        "stored",
        "required",
        "wrong",
        "changed",
        "reset",
        "sent",
        "read",
        "used",
        "set",
        "hashed",
        "expired",
        "incorrect",
        "invalid",
        "missing",
        "empty",
        "too",
        "long",
        "short",
        "field",
        "manager",
        "policy",
        "rotated",
    ]
)


# Chinese keys (rules.py): 口令 is a password or a passphrase; a key or token (密钥, 私钥, 令牌)
# is never made of words (`密钥为 RSA-2048` names an algorithm), as `secret.assignment` asks
_PHRASE_KEYS_ZH = frozenset(["口令"])
_KEY_WORDS_ZH = frozenset(["密钥", "密鑰", "秘钥", "秘鑰", "金钥", "金鑰", "私钥", "私鑰", "令牌"])
_KEY_FILE_NAME = re.compile(r"id_(?:rsa|dsa|ecdsa|ed25519)(?:-cert)?")  # `私钥为 id_ed25519`
# the name of an algorithm, an encoding or a standard (`密码为 SHA-256 哈希`, `password is
# bcrypt`, `令牌为 JWT-RS256 签名`), or of several joined (`hmac-sha256`), and a version
# (`密码是 v1.2.3 版本之后才加密的`): what a sentence says a password is hashed or encoded with
_ALGORITHM = (
    r"sha-?(?:1|224|256|384|512)|sha3-(?:224|256|384|512)|md5|bcrypt|scrypt|argon2(?:id|i|d)?"
    r"|pbkdf2|hmac|base(?:32|58|64)(?:url)?|hex|utf-?(?:8|16)|ascii|oauth(?:2(?:\.0)?)?|oidc"
    r"|jwt|jwe|jws|[hrpe]s(?:256|384|512)|aes(?:-?(?:128|192|256))?(?:-(?:gcm|cbc|ctr))?"
    r"|rsa(?:-(?:1024|2048|3072|4096))?|ed25519|ecdsa|x25519|totp|hotp|saml2?|ldap|ntlm|kerberos"
)
_NOT_A_SECRET = re.compile(
    # a sentence's own mark may follow (`bcrypt.`), not a password's (`Sha256!!`)
    r"(?i)(?:(?:" + _ALGORITHM + r")(?:[-+/](?:" + _ALGORITHM + r"))*|v?\d+(?:\.\d+)+)[.,;]?"
)


def _prose_secret_ok(match: re.Match[str]) -> bool:
    """A written-out password: a token that mixes letters with digits or symbols, or (after
    `passphrase` or 口令, or quoted) three or more plain words that are not a sentence about
    passwords."""
    quoted = match.group("qvalue")
    value = quoted if quoted is not None else match.group("value")
    if _is_placeholder(value) or _CODE_REFERENCE.fullmatch(value) is not None:
        return False
    key = match.group("key")
    command = _COMMAND_NAMES.fullmatch(key) and match.group("about") is None
    if command and not match.group("sep").strip():
        return False  # `passwd alice`, `pwd -P`: a command and its arguments, not a password
    phrase = "phrase" in key.lower() or key in _PHRASE_KEYS_ZH
    words = value.split()
    first = words[0] if words else value
    if _NOT_A_SECRET.fullmatch(first):
        return False
    if key in _KEY_WORDS_ZH and (looks_like_words(first) or _KEY_FILE_NAME.fullmatch(first)):
        return False
    parts = first.split("-")
    if len(parts) >= 3 and all(_PASSPHRASE_WORD.fullmatch(p) for p in parts):
        return phrase or quoted is not None
    has_letter = any(ch.isalpha() for ch in first)
    has_other = any(ch.isdigit() or not ch.isalnum() for ch in first)
    if has_letter and has_other and not first.startswith(("/", "./", "http", "$", "%", "~")):
        return True
    if not phrase and quoted is None:
        return False
    plain = [w for w in words if _PASSPHRASE_WORD.fullmatch(w)]
    return len(plain) >= 3 and not any(w in _PROSE_STOPWORDS for w in plain)


_ACCEPT_BY_RULE: dict[str, Callable[[re.Match[str]], bool]] = {
    "secret.assignment": lambda m: _assignment_ok(m),
    "secret.prose": _prose_secret_ok,
}


# a document with more hits of one rule than this is reported by its first ones: the verdict is
# the same, and a megabyte of repeated paths does not become a million findings
MAX_HITS_PER_RULE = 1000


def _pattern_hits(text: str, rules: Iterable[_PatternRule]) -> list[Hit]:
    hits: list[Hit] = []
    ascii_lower = text.lower() if text.isascii() else None
    for rule in rules:
        if not rule.may_match(text, ascii_lower):
            continue
        found = 0
        for match in rule.pattern.finditer(text):
            accept = _ACCEPT_BY_RULE.get(rule.rule, rule.accept)
            if accept is not None and not accept(match):
                continue
            found += 1
            if found > MAX_HITS_PER_RULE:
                break
            start, end, value = _match_span(rule, match)
            if rule.rule in ("secret.assignment", "secret.prose"):
                preview = f"{match.group('key')}: " + redact(value, 0)
            else:
                preview = redact(value, rule.keep)
            hits.append(Hit(rule.rule, rule.severity, start, end, f"{rule.what}: `{preview}`"))
    return hits


def _session_id_hits(text: str) -> list[Hit]:
    """A UUID next to session words blocks; any other UUID warns (a reviewer should know it
    may name a session; prepare also blocks the ids this machine has indexed)."""
    hits: list[Hit] = []
    for match in SESSION_ID_PATTERN.finditer(text):
        window = text[
            max(0, match.start() - SESSION_CONTEXT_WINDOW) : match.end() + SESSION_CONTEXT_WINDOW
        ]
        preview = redact(match.group(0), 4)
        if _SESSION_CONTEXT.search(window):
            hits.append(
                Hit(
                    "session.provider-session-id",
                    "block",
                    match.start(),
                    match.end(),
                    f"provider session id: `{preview}`",
                )
            )
        else:
            hits.append(
                Hit(
                    "session.uuid",
                    "warn",
                    match.start(),
                    match.end(),
                    f"a UUID (if it names a session or conversation, remove it): `{preview}`",
                )
            )
    return hits


_PUBLIC_PEM_BEGIN = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE(?: REQUEST)?))-----"
)
_BASE58 = r"[1-9A-HJ-NP-Za-km-z]"
_PUBLIC_MATERIAL = re.compile(
    r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp[0-9]+|sk-ssh-ed25519@openssh\.com)"
    r"\s+AAAA[A-Za-z0-9+/]+=*"
    r"|(?<![A-Za-z0-9])sha(?:256|384|512)-[A-Za-z0-9+/]{20,}=*"
    # public identifiers: EVM addresses, IPFS CIDs (v0 base58, v1 base32)
    r"|(?<![A-Za-z0-9])0x[0-9a-fA-F]{40}(?![0-9a-fA-F])"
    r"|(?<![A-Za-z0-9])Qm" + _BASE58 + r"{44}(?![A-Za-z0-9])"
    r"|(?<![A-Za-z0-9])baf[a-z2-7]{50,}(?![A-Za-z0-9])"
)
# a base58 account / program id (Solana and the like: 32-44 characters) next to words that say
# it is an address; without such a word a base58 string is judged like any other token
_BASE58_ACCOUNT = re.compile(r"(?<![A-Za-z0-9])" + _BASE58 + r"{32,44}(?![A-Za-z0-9])")
_ACCOUNT_CONTEXT = re.compile(
    r"program|address|pubkey|public key|mint|account|wallet|declare_id|solana|\bsol\b|signer"
    r"|validator|devnet|mainnet|testnet|airdrop",
    re.IGNORECASE,
)


# an id named as public by the words just before it: Grafana's `dashboard uid …`, `uid: …`,
# `/d/<uid>/` URLs; never when a credential word is near (`token`, `secret`, `key`, …). Hex
# digests (git SHAs, bundle and content hashes) are never judged by the entropy rule at all.
_PUBLIC_ID_CONTEXT = re.compile(
    r"(?i)(?:\b(?:dashboard|panel|folder|datasource)?[ _-]?uid[\s:=#'\"`]{0,4}|/d/)$"
)
_PUBLIC_ID_LOOKBEHIND = 32
_GRAFANA_PATH = re.compile(r"(?:^|/)d/[A-Za-z0-9]{7,64}(?:/|$)")
_CREDENTIAL_WORD = re.compile(r"(?i)token|secret|passw|api[_-]?key|credential|auth|private")
_PUBLIC_ID = re.compile(r"[A-Za-z0-9]{7,64}")


def _named_public_id(text: str, start: int, token: str) -> bool:
    """A token the text names as a public id (a Grafana uid) rather than a credential."""
    if _PUBLIC_ID.fullmatch(token) is None:
        return False
    before = text[max(0, start - _PUBLIC_ID_LOOKBEHIND) : start]
    return bool(_PUBLIC_ID_CONTEXT.search(before)) and not _CREDENTIAL_WORD.search(before)


def _public_spans(text: str) -> list[tuple[int, int]]:
    """Spans of public material (certificates, public keys, integrity hashes, addresses, CIDs)
    that the entropy rule must not flag. Linear: one scan per kind, `str.find` for PEM ends."""
    spans = [m.span() for m in _PUBLIC_MATERIAL.finditer(text)]
    no_end_after: dict[str, int] = {}
    for match in _PUBLIC_PEM_BEGIN.finditer(text):
        label = match.group("label")
        if label in no_end_after:
            continue
        end = text.find(f"-----END {label}-----", match.end())
        if end < 0:
            no_end_after[label] = match.start()  # no later BEGIN of this label has an END
            continue
        spans.append((match.start(), end + len(label) + 14))
    for match in _BASE58_ACCOUNT.finditer(text):
        window = text[max(0, match.start() - 48) : match.end() + 48]
        if _ACCOUNT_CONTEXT.search(window):
            spans.append(match.span())
    return spans


# teamlore's content-hash suffix, or any short hex tag (`payments-retry-7c1e`, `…-7fd2f23`)
_SLUG_HASH_SUFFIX = re.compile(rf"-[0-9a-f]{{4,{SLUG_HASH_SUFFIX_LENGTH}}}$")
_ID_NUMBER = re.compile(r"[0-9]+[a-z]{0,4}|[a-z]{1,3}[0-9]+[a-z]?")
_SLUG_SHAPE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


# a hex digest inside an id: a short or full git SHA, a content or bundle hash (`-3f2c1e4`)
_HEX_PART = re.compile(r"[0-9a-f]{7,64}")


def _is_slug_of_words(token: str) -> bool:
    """A lowercase slug made mostly of words (with short parts like `v2`, `es2020`, `30s`, hex
    digests such as git SHAs, and possibly teamlore's content-hash suffix), as entry ids are;
    random keys have no word parts."""
    if _SLUG_SHAPE.fullmatch(token) is None:
        return False
    stem = _SLUG_HASH_SUFFIX.sub("", token)
    if stem != token and len(stem) <= 4:
        return True  # `v-1c675b6acf`: a short word and a hash suffix (ids of non-ASCII text)
    segments = [s for s in stem.split("-") if _HEX_PART.fullmatch(s) is None or s.isalpha()]
    if not segments:
        return False
    numbered = [s for s in segments if looks_like_words(s) or _ID_NUMBER.fullmatch(s)]
    if not all(len(s) <= 4 or s in numbered for s in segments):
        return False
    worded = sum(len(s) for s in numbered)
    return worded * 2 >= sum(len(s) for s in segments)


def is_high_entropy_secret(token: str) -> bool:
    """The entropy rule on one token (see module doc for what is exempt)."""
    if len(token) < ENTROPY_MIN_LENGTH:
        return False
    if _is_slug_of_words(token):
        return False  # an entry id: words, short parts such as `v2`, maybe a hash suffix
    if _HEX_OR_UUID.fullmatch(token) is not None:
        return False  # hex digests and UUIDs: long-hex warning / session-id rule
    if shannon_entropy(token) < ENTROPY_MIN_BITS:
        return False
    if looks_like_words(token):
        return False
    return not _decodes_to_text(token)


def _is_path_like(token: str) -> bool:
    """`com/team-harness/app/commit/<hash>`: segments that are words, hex or short."""
    segments = [s for s in token.split("/") if s]
    if len(segments) < 2 or not any(len(s) >= 3 and looks_like_words(s) for s in segments):
        return False
    return all(
        len(s) < 8
        or looks_like_words(s)
        or _HEX_OR_UUID.fullmatch(s) is not None
        or _is_slug_of_words(s)
        for s in segments
    )


def _token_leaves(start: int, token: str) -> Iterable[tuple[int, str]]:
    """Split `key=value` at internal `=` and path-like tokens at `/`; yield (offset, piece)."""
    offset = 0
    for part in INTERNAL_EQUALS.split(token):
        if "/" in part.strip("/") and (_is_path_like(part) or _GRAFANA_PATH.search(part)):
            inner = 0
            for segment in part.split("/"):
                yield start + offset + inner, segment
                inner += len(segment) + 1
        else:
            yield start + offset, part
        offset += len(part) + 1


def _encoded_hits(text: str) -> list[Hit]:
    """Base64 (standard or URL-safe) tokens whose decoded text holds a credential: a token
    encoded once is still the token (a Kubernetes secret, a Basic header, a CI variable)."""
    hits: list[Hit] = []
    for match in SECRET_TOKEN.finditer(text):
        token = match.group(0).strip("-_/+")
        decoded = decoded_text(token)
        if decoded is None:
            continue
        inner = [h for h in _pattern_hits(decoded, _RULES) if h.severity == "block"]
        inner += _entropy_hits(decoded)
        if inner:
            start = match.start() + match.group(0).index(token)
            what = inner[0].message.split(":")[0]
            hits.append(
                Hit(
                    "secret.encoded",
                    "block",
                    start,
                    start + len(token),
                    f"base64 of a {what}: `{redact(token)}`",
                )
            )
    return hits


def _entropy_hits(text: str) -> list[Hit]:
    exempt = _Spans(_public_spans(text))
    hits: list[Hit] = []
    for match in SECRET_TOKEN.finditer(text):
        for offset, piece in _token_leaves(match.start(), match.group(0)):
            token = piece.strip("-_/+=")
            if not token or not is_high_entropy_secret(token):
                continue
            start = offset + piece.index(token)
            end = start + len(token)
            if exempt.covers(start, end) or _named_public_id(text, start, token):
                continue
            hits.append(
                Hit(
                    "secret.high-entropy",
                    "block",
                    start,
                    end,
                    f"high-entropy token ({shannon_entropy(token):.2f} bits/char): "
                    f"`{redact(token)}`",
                )
            )
    return hits


class _Spans:
    """Disjoint (start, end) spans kept sorted: overlap and cover checks in O(log n), so a text
    with many hits is not scanned once per hit."""

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for start, end in sorted(spans):
            if self.ends and start < self.ends[-1]:
                self.ends[-1] = max(self.ends[-1], end)  # merge overlapping spans
            else:
                self.starts.append(start)
                self.ends.append(end)

    def overlaps(self, start: int, end: int) -> bool:
        index = bisect.bisect_left(self.ends, start + 1)  # first span ending after `start`
        return index < len(self.starts) and self.starts[index] < end

    def covers(self, start: int, end: int) -> bool:
        index = bisect.bisect_right(self.starts, start) - 1
        return index >= 0 and self.ends[index] >= end

    def add(self, start: int, end: int) -> None:
        index = bisect.bisect_left(self.starts, start)
        self.starts.insert(index, start)
        self.ends.insert(index, end)


def scan_content(text: str) -> list[Hit]:
    """Every content hit in `text`; a span is reported once, by the most specific rule. The
    rules see the normalized text (NFKC, no invisible characters, look-alike letters folded:
    `normalize.py`); each hit names its span in `text`."""
    view = normalized_view(text)
    if view is None:
        return _scan(text)
    hits = []
    for hit in _scan(view.text):
        start, end = view.span(hit.start, hit.end)
        hits.append(hit._replace(start=start, end=end))
    return hits


def _scan(text: str) -> list[Hit]:
    accepted: list[Hit] = []
    taken = _Spans()
    for group in (
        _pattern_hits(text, _RULES),
        _session_id_hits(text),
        _encoded_hits(text),
        _entropy_hits(text),
        _pattern_hits(text, _WARN_RULES),
    ):
        for hit in group:
            if hit.end > hit.start and not taken.overlaps(hit.start, hit.end):
                accepted.append(hit)
                taken.add(hit.start, hit.end)
    return sorted(accepted, key=lambda h: (h.start, h.rule))


def scrub(message: str) -> str:
    """Replace anything secret-shaped inside a message by its preview."""
    for hit in sorted(scan_content(message), key=lambda h: -h.start):
        if hit.severity == "block":
            message = (
                message[: hit.start] + redact(message[hit.start : hit.end]) + message[hit.end :]
            )
    return message
