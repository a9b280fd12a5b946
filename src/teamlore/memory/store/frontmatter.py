"""The memory-file frontmatter dialect (the reference product's, byte for byte).

A document is `---\\n` + one `key: value` line per field + `\\n---\\n` + body. A value is a JSON
literal (string, number, true/false/null, array, object) or a bare string. An array or object may
span lines: its brackets are balanced (ignoring brackets inside JSON strings) and the following
lines are consumed until it closes. There are no comments: a bare string holding `#` is refused.
Limits: region <= 64 KiB, <= 512 lines, each line <= 8 KiB, JSON depth <= 16.

`serialize` is the canonical writer: fixed field order, compact single-line JSON, strings bare only
when they read back as the same string. `parse(serialize(x)) == x` for every serializable `x`, and
`serialize(parse(canonical))` gives back the same bytes.

Reading is tolerant where git on Windows is not our business to refuse: a UTF-8 BOM is skipped and
CRLF line ends are read as LF (lint warns about both; the writer never produces them). A lone CR,
invalid UTF-8, git's merge-conflict markers and every grammar error raise `MemoryFormatError`
with the file and line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias

from teamlore.core.errors import MEMORY_FILE_INVALID, TeamloreError
from teamlore.core.text.files import conflict_start

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"

FENCE = "---"
MAX_REGION_BYTES = 64 * 1024
# a memory document (entry, scene, doctrine, Skill) as a whole: the format's limit, which the
# tree's reader never reads past and lint names in the same words (layout.py, `too_large`)
MAX_DOCUMENT_BYTES = 64 * 1024
MAX_LINES = 512
MAX_LINE_BYTES = 8 * 1024
MAX_JSON_DEPTH = 16
UTF8_BOM = b"\xef\xbb\xbf"

KEY_PATTERN = re.compile(r"[a-z_][a-z0-9_-]*")
_LINE = re.compile(r"([a-z_][a-z0-9_-]*): (.+)")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_JSON_WORDS = frozenset({"true", "false", "null"})
# JavaScript's String.prototype.trim set, so bare values trim exactly as the reference does.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


class MemoryFormatError(TeamloreError):
    """A memory file that does not follow the format, located as precisely as we can.

    `reason` is a stable rule id (`format.invalid-line`, `capacity.scene-body`, `slug.id-mismatch`,
    ...) that lint reuses as its finding rule.
    """

    def __init__(
        self,
        why: str,
        *,
        reason: str,
        file: str,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.why = why
        self.reason = reason
        self.file = file
        self.line = line
        self.field = field
        where = file if line is None else f"{file}:{line}"
        subject = f" field {field!r}" if field else ""
        super().__init__(
            MEMORY_FILE_INVALID,
            f"{where}:{subject} {why}",
            file=file,
            line=line,
            field=field,
            why=why,
            reason=reason,
        )


class SerializationError(ValueError):
    """The value cannot be written in the dialect (it would not read back)."""


class DecodedText(NamedTuple):
    text: str
    had_bom: bool
    had_crlf: bool


class FrontmatterDocument(NamedTuple):
    """A memory file split into its frontmatter fields (with their lines) and its body (a
    tuple: one per file parsed)."""

    fields: dict[str, JsonValue]
    body: str
    body_line: int
    field_lines: dict[str, int]


def js_trim(value: str) -> str:
    return value.strip(_JS_WHITESPACE)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def decode_text(data: bytes | str, path: str) -> DecodedText:
    """UTF-8 bytes (or text) -> LF text. A BOM is skipped, CRLF becomes LF; a lone CR or invalid
    UTF-8 raises with the line it is on."""
    had_bom = False
    if isinstance(data, bytes):
        if data.startswith(UTF8_BOM):
            data = data[len(UTF8_BOM) :]
            had_bom = True
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise MemoryFormatError(
                f"invalid UTF-8 at byte {exc.start + (3 if had_bom else 0)}",
                reason="format.invalid-utf8",
                file=path,
                line=line,
            ) from None
    else:
        text = data
        if text.startswith("\ufeff"):
            text = text[1:]
            had_bom = True
    had_crlf = "\r\n" in text
    if had_crlf:
        text = text.replace("\r\n", "\n")
    stray = text.find("\r")
    if stray >= 0:
        raise MemoryFormatError(
            "a carriage return that does not end a line",
            reason="format.stray-cr",
            file=path,
            line=line_of(text, stray),
        )
    _refuse_merge_conflict(text, path)
    return DecodedText(text, had_bom, had_crlf)


MERGE_CONFLICT = "format.merge-conflict"  # the rule id of a file `git merge` left unresolved


def _refuse_merge_conflict(text: str, path: str) -> None:
    """A file `git merge` left with both sides in it (docs/memory.md, "Merge conflicts") would
    be read as one document holding both, and searched and assembled that way."""
    start = conflict_start(text)
    if start is not None:
        raise MemoryFormatError(
            "an unresolved git merge conflict starts here: keep what is right, delete the"
            " `<<<<<<<`, `=======` and `>>>>>>>` lines and commit",
            reason=MERGE_CONFLICT,
            file=path,
            line=line_of(text, start),
        )


class _BracketScanner:
    """Tracks JSON bracket depth across lines, ignoring brackets inside string literals."""

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False

    def feed(self, chunk: str) -> None:
        for ch in chunk:
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
            elif ch in "[{":
                self.depth += 1
                if self.depth > MAX_JSON_DEPTH:
                    raise _TooDeep
            elif ch in "]}":
                self.depth -= 1

    @property
    def balanced(self) -> bool:
        return self.depth <= 0 and not self.in_string


class _TooDeep(Exception):
    pass


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate object key {key!r}")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_json_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_json_depth(v) for v in value), default=0)
    return 0


def _load_json(raw: str, *, path: str, line: int, key: str) -> JsonValue:
    try:
        value: JsonValue = json.loads(
            raw, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant
        )
    except (ValueError, RecursionError) as exc:
        raise MemoryFormatError(
            f"value is not valid JSON ({exc})",
            reason="format.invalid-json-value",
            file=path,
            line=line,
            field=key,
        ) from None
    if _json_depth(value) > MAX_JSON_DEPTH:
        raise MemoryFormatError(
            f"JSON nests deeper than {MAX_JSON_DEPTH}",
            reason="format.json-too-deep",
            file=path,
            line=line,
            field=key,
        )
    return value


def _looks_like_json(raw: str) -> bool:
    return raw[0] in '[{"' or raw in _JSON_WORDS or _JSON_NUMBER.fullmatch(raw) is not None


def check_region_limits(lines: Sequence[str], *, path: str, first_line: int) -> None:
    total = sum(len(line.encode("utf-8")) + 1 for line in lines)
    if total > MAX_REGION_BYTES:
        raise MemoryFormatError(
            f"header is {total} bytes (at most {MAX_REGION_BYTES})",
            reason="format.frontmatter-too-large",
            file=path,
            line=first_line,
        )
    if len(lines) > MAX_LINES:
        raise MemoryFormatError(
            f"header has {len(lines)} lines (at most {MAX_LINES})",
            reason="format.too-many-lines",
            file=path,
            line=first_line,
        )
    for index, line in enumerate(lines):
        if len(line.encode("utf-8")) > MAX_LINE_BYTES:
            raise MemoryFormatError(
                f"line is longer than {MAX_LINE_BYTES} bytes",
                reason="format.line-too-long",
                file=path,
                line=first_line + index,
            )


def parse_fields(
    lines: Sequence[str], *, path: str, first_line: int
) -> tuple[dict[str, JsonValue], dict[str, int]]:
    """The `key: value` line grammar, shared by entry/Skill frontmatter and scene META."""
    check_region_limits(lines, path=path, first_line=first_line)
    fields: dict[str, JsonValue] = {}
    field_lines: dict[str, int] = {}
    index = 0
    while index < len(lines):
        lineno = first_line + index
        match = _LINE.fullmatch(lines[index])
        if match is None:
            raise MemoryFormatError(
                "expected `key: value` (lowercase key, one space after the colon)",
                reason="format.invalid-line",
                file=path,
                line=lineno,
            )
        key, raw = match.group(1), js_trim(match.group(2))
        if not raw:
            raise MemoryFormatError(
                "value is empty", reason="format.invalid-line", file=path, line=lineno, field=key
            )
        if key in fields:
            raise MemoryFormatError(
                f"field repeats (first on line {field_lines[key]})",
                reason="format.duplicate-key",
                file=path,
                line=lineno,
                field=key,
            )
        if raw[0] in "[{":
            scanner = _BracketScanner()
            collected = [raw]
            try:
                scanner.feed(raw)
                while not scanner.balanced:
                    index += 1
                    if index >= len(lines):
                        raise MemoryFormatError(
                            "JSON value never closes before the end of the header",
                            reason="format.unterminated-json",
                            file=path,
                            line=lineno,
                            field=key,
                        )
                    collected.append(lines[index])
                    scanner.feed("\n" + lines[index])
            except _TooDeep:
                raise MemoryFormatError(
                    f"JSON nests deeper than {MAX_JSON_DEPTH}",
                    reason="format.json-too-deep",
                    file=path,
                    line=lineno,
                    field=key,
                ) from None
            value = _load_json("\n".join(collected), path=path, line=lineno, key=key)
        elif _looks_like_json(raw):
            value = _load_json(raw, path=path, line=lineno, key=key)
        else:
            if "#" in raw:
                raise MemoryFormatError(
                    "`#` in a bare value (the dialect has no comments; quote the string)",
                    reason="format.comment-not-allowed",
                    file=path,
                    line=lineno,
                    field=key,
                )
            value = raw
        fields[key] = value
        field_lines[key] = lineno
        index += 1
    return fields, field_lines


def split_frontmatter(text: str, *, path: str) -> tuple[list[str], str, int]:
    """LF text -> (header lines, body, body line number)."""
    if not text.startswith(FENCE + "\n"):
        raise MemoryFormatError(
            "file must start with a `---` line",
            reason="format.missing-frontmatter",
            file=path,
            line=1,
        )
    end = text.find("\n" + FENCE + "\n", len(FENCE))
    if end < 0:
        raise MemoryFormatError(
            "the `---` header is never closed by a `---` line",
            reason="format.unterminated-frontmatter",
            file=path,
            line=1,
        )
    lines = [] if end == len(FENCE) else text[len(FENCE) + 1 : end].split("\n")
    body = text[end + len(FENCE) + 2 :]
    return lines, body, len(lines) + 3


def parse(data: bytes | str, path: str = "<memory>") -> FrontmatterDocument:
    """Parse a `---` fenced document. Raises MemoryFormatError, never anything else."""
    text = decode_text(data, path).text
    lines, body, body_line = split_frontmatter(text, path=path)
    fields, field_lines = parse_fields(lines, path=path, first_line=2)
    return FrontmatterDocument(fields, body, body_line, field_lines)


def _bare_ok(value: str) -> bool:
    return (
        value != ""
        and js_trim(value) == value
        and not any(ch in value for ch in "\n\r#")
        and value[0] not in '[{"'
        and value not in _JSON_WORDS
        and _JSON_NUMBER.fullmatch(value) is None
    )


def _check_json(value: Any, depth: int = 0) -> None:
    if depth > MAX_JSON_DEPTH:
        raise SerializationError(f"JSON nests deeper than {MAX_JSON_DEPTH}")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise SerializationError(f"object key {key!r} is not a string")
            _check_json(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)
    elif value is not None and not isinstance(value, bool | int | float | str):
        raise SerializationError(f"{type(value).__name__} has no JSON form")


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def format_value(value: JsonValue, *, quote: bool = False) -> str:
    """One value as it appears after `key: `."""
    _check_json(value)
    if isinstance(value, str) and not quote and _bare_ok(value):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as exc:
        raise SerializationError(str(exc)) from None


def format_fields(
    fields: Mapping[str, JsonValue],
    *,
    order: Sequence[str] = (),
    always_quote: Collection[str] = (),
) -> list[str]:
    """`key: value` lines: keys in `order` first, any others sorted."""
    for key in fields:
        if KEY_PATTERN.fullmatch(key) is None:
            raise SerializationError(f"key {key!r} is not a lowercase dialect key")
    keys = [k for k in order if k in fields] + sorted(k for k in fields if k not in order)
    lines = [f"{key}: {format_value(fields[key], quote=key in always_quote)}" for key in keys]
    try:
        check_region_limits(lines, path="<serialize>", first_line=2)
    except MemoryFormatError as exc:
        raise SerializationError(exc.why) from None
    if any(_has_surrogate(line) for line in lines):
        raise SerializationError("lone surrogate cannot be written as UTF-8")
    return lines


def serialize(
    fields: Mapping[str, JsonValue],
    body: str = "",
    *,
    order: Sequence[str] = (),
    always_quote: Collection[str] = (),
) -> str:
    """The canonical text of a document (always LF, never a BOM)."""
    if "\r" in body:
        raise SerializationError("body contains a carriage return")
    if _has_surrogate(body):
        raise SerializationError("lone surrogate cannot be written as UTF-8")
    lines = format_fields(fields, order=order, always_quote=always_quote)
    header = "".join(line + "\n" for line in lines)
    return f"{FENCE}\n{header}{FENCE}\n{body}"


# --- the canonical form, as lint compares a file with it ---------------------------------------


_SHOWN = 100  # the characters of a line `non_canonical` quotes


def non_canonical(text: str, canonical: str) -> tuple[int, str]:
    """Where a valid memory file differs from the canonical form the writer makes, and how to
    write it (lint's `format.non-canonical`): (line, message) of the first line that differs,
    with the line as the writer writes it. A hand-merged `occurred: ["2026-04-26", "2026-05-11"]`
    reads the same as the writer's `occurred: ["2026-04-26","2026-05-11"]`, but the next rewrite
    of the file (a promotion that updates the entry) changes the line in the diff a reviewer
    reads."""
    from teamlore.core.secrets import scrub

    lines, wanted = text.split("\n"), canonical.split("\n")
    line = next(
        (n for n, (have, want) in enumerate(zip(lines, wanted, strict=False), 1) if have != want),
        min(len(lines), len(wanted)) + 1,
    )
    have = lines[line - 1] if line <= len(lines) else None
    want = wanted[line - 1] if line <= len(wanted) else None
    if want is None:
        fix = "the writer ends the file before this line: delete it and the lines after it"
    elif have is None:
        fix = f"the writer ends the file with `{_shown(want)}`: add it"
    else:
        fix = f"the writer writes this line as `{_shown(want)}`: edit it so"
    message = (
        f"valid, but not in the canonical form: {fix} (no command rewrites it; JSON values "
        "have no space after `,` or `:`, and the fields keep the order docs/memory.md shows), "
        "or the next rewrite of the file (a promotion) changes it"
    )
    return min(line, max(len(lines), 1)), scrub(message)


def _shown(line: str) -> str:
    return line if len(line) <= _SHOWN else line[: _SHOWN - 1] + "…"
