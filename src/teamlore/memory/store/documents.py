"""Typed memory documents: L1 entries, L2 scenes, L3 doctrine, Skills, the index skeleton and
the consolidation record (`consolidated.json`).

Field names and allowed values are the reference product's (glossary: threadshare;
docs/memory.md "The file dialect"), so a `.threadshare/memory` tree it wrote reads as-is and
writes back byte for byte. Every `load_*` takes the file bytes and its repo-relative path and
raises `MemoryFormatError` (code MEMORY_FILE_INVALID) with `.file`, `.line`, `.field`, `.why`
and a stable `.reason`; every `dump_*` returns the canonical bytes.

Beyond the reference: evidence paths must be repo-relative and the repository identity may not
carry credentials, a query or a fragment (public evidence only); `superseded_by` requires
`status: deprecated` and may not name the entry itself.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import PurePosixPath
from typing import Any, Literal, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic import JsonValue as PydanticJsonValue
from pydantic_core import PydanticCustomError

from teamlore.contracts._base import SCENE_NAME_RULE, is_scene_name, scene_name_for
from teamlore.memory.store import frontmatter as fm
from teamlore.memory.store.frontmatter import MAX_DOCUMENT_BYTES, MemoryFormatError
from teamlore.memory.store.slugs import slug_problem

__all__ = [
    "CONSOLIDATED_FORMAT",
    "ENTRY_FIELDS",
    "INDEX_FORMAT",
    "KNOWN_LIMITATIONS",
    "Doctrine",
    "Entry",
    "Evidence",
    "EvidenceCommit",
    "MemoryFormatError",
    "MemoryIndex",
    "Scene",
    "Skill",
    "dump_consolidated",
    "dump_doctrine",
    "dump_entry",
    "dump_index",
    "dump_scene",
    "dump_skill",
    "load_consolidated",
    "load_doctrine",
    "load_entry",
    "load_index",
    "load_scene",
    "load_skill",
]

MAX_FILE_BYTES = MAX_DOCUMENT_BYTES  # one limit: the tree's reader caps at it too
SCENE_BODY_MAX_CHARS = 1500
SCENE_SUMMARY_MAX_CHARS = 40
DOCTRINE_MAX_CHARS = 1200
SKILL_NAME_MAX_LENGTH = 64
SKILL_DESCRIPTION_MAX_CHARS = 1024
SKILL_BODY_MAX_BYTES = 64 * 1024
HEAT_MAX = 2**31 - 1
INDEX_FORMAT = "threadshare-memory-index@v1"
META_START = "-----META-START-----"
META_END = "-----META-END-----"

ENTRY_FIELDS = (
    "id",
    "type",
    "status",
    "priority",
    "confidence",
    "provenance_strength",
    "claim_support",
    "limitations",
    "scope",
    "scene",
    "occurred",
    "evidence",
    "superseded_by",
)
SCENE_META_FIELDS = ("created", "updated", "summary", "heat")
SKILL_FIELDS = ("name", "description", "license", "allowed-tools", "metadata")

# Delivery Trace vocabulary plus the memory-specific ones; others read fine and lint warns.
KNOWN_LIMITATIONS = frozenset(
    {
        "not-authorship",
        "not-exclusive-line-attribution",
        "not-causality",
        "incomplete-timestamps",
        "unverified-intent-reference",
        "unreachable-commit",
        "path-only-context",
        "candidate-not-default",
        "source-local-only",
        "generated-consolidation-content",
        "source-approved-memory-only",
    }
)

EntryType = Literal["work_fact", "work_task", "work_method", "work_artifact"]
EntryStatus = Literal["approved", "deprecated"]
Confidence = Literal["high", "medium", "low"]
ProvenanceStrength = Literal["direct", "observed", "candidate", "contextual", "unknown"]
ClaimSupport = Literal["typed-fact", "human-confirmed", "mixed"]
Scope = Literal["repo"]

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_HEX40 = re.compile(r"[0-9a-f]{40}")
_REPO_IDENTITY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._~:/-]*")
_DRIVE = re.compile(r"[A-Za-z]:")


def _custom(reason: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(reason, message.replace("{", "(").replace("}", ")"))


def _check_date(value: str) -> str:
    if _DATE.fullmatch(value) is None:
        raise _custom("format.invalid-field", f"{value!r} is not a YYYY-MM-DD date")
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise _custom("format.invalid-field", f"{value!r} is not a calendar date") from None
    return value


def _check_slug(value: str, *, max_length: int = 128) -> str:
    problem = slug_problem(value, max_length=max_length)
    if problem is not None:
        raise _custom("slug.invalid", f"{value!r} {problem}")
    return value


def repo_relative_path_problem(path: str) -> str | None:
    """Why `path` is not a clean repo-relative POSIX path, or None."""
    if not path:
        return "is empty"
    if "\\" in path or "\x00" in path or any(ch in path for ch in "\n\r\t"):
        return "contains a backslash or a control character"
    if path.startswith(("/", "~")) or _DRIVE.match(path):
        return "is absolute (evidence paths are repo-relative)"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "has an empty, `.` or `..` segment"
    return None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class EvidenceCommit(_Strict):
    repo: str
    hash: str

    @field_validator("repo")
    @classmethod
    def _public_identity(cls, value: str) -> str:
        if _REPO_IDENTITY.fullmatch(value) is None:
            raise _custom(
                "format.invalid-field",
                "repository identity must be public (host/path, no credentials, query or fragment)",
            )
        return value

    @field_validator("hash")
    @classmethod
    def _full_hash(cls, value: str) -> str:
        if _HEX40.fullmatch(value) is None:
            raise _custom("format.invalid-field", "commit hash must be 40 lowercase hex digits")
        return value


class Evidence(_Strict):
    commits: list[EvidenceCommit]
    paths: list[str]

    @field_validator("paths")
    @classmethod
    def _repo_relative(cls, value: list[str]) -> list[str]:
        for path in value:
            problem = repo_relative_path_problem(path)
            if problem is not None:
                raise _custom("format.invalid-field", f"evidence path {_shown(path)} {problem}")
        return value


def _shown(path: str) -> str:
    """An evidence path as a refusal quotes it: an absolute one masked whole, never only its
    home folder (`'/h…[9 chars]/src/app/main.py'` still told where the person works)."""
    if path.startswith(("/", "~", "\\")) or _DRIVE.match(path):
        from teamlore.core.secrets import redact  # a refusal's path only

        return repr(redact(path))
    return repr(path)


class Entry(_Strict):
    """An L1 entry, `entries/<id>.md`. `body` is everything after the closing `---` line."""

    id: str
    type: EntryType
    status: EntryStatus
    priority: int = Field(ge=0, le=100)
    confidence: Confidence
    provenance_strength: ProvenanceStrength
    claim_support: ClaimSupport
    limitations: list[str]
    scope: Scope
    scene: str | None
    occurred: list[str]
    evidence: Evidence
    superseded_by: str | None
    body: str = ""

    @field_validator("id")
    @classmethod
    def _id_slug(cls, value: str) -> str:
        return _check_slug(value)

    @field_validator("superseded_by")
    @classmethod
    def _superseded_slug(cls, value: str | None) -> str | None:
        return None if value is None else _check_slug(value)

    @field_validator("limitations")
    @classmethod
    def _limitations(cls, value: list[str]) -> list[str]:
        if any(not item.strip() or "\n" in item for item in value):
            raise _custom(
                "format.invalid-field", "limitations must be non-empty single-line strings"
            )
        return value

    @field_validator("scene")
    @classmethod
    def _scene(cls, value: str | None) -> str | None:
        if value is not None and (value == "" or "\n" in value or "\r" in value):
            raise _custom("format.invalid-field", "scene must be a non-empty single-line string")
        return value

    @field_validator("occurred")
    @classmethod
    def _occurred(cls, value: list[str]) -> list[str]:
        for item in value:
            _check_date(item)
        return value

    @field_validator("body")
    @classmethod
    def _body(cls, value: str) -> str:
        if "\r" in value:
            raise _custom("format.invalid-field", "body contains a carriage return")
        return value

    @model_validator(mode="after")
    def _supersession(self) -> Entry:
        if self.superseded_by is not None:
            if self.status != "deprecated":
                raise PydanticCustomError(
                    "format.invalid-field",
                    "superseded_by is set but status is not deprecated",
                    {"field": "superseded_by"},
                )
            if self.superseded_by == self.id:
                raise PydanticCustomError(
                    "format.invalid-field",
                    "an entry cannot supersede itself",
                    {"field": "superseded_by"},
                )
        return self


class Scene(_Strict):
    """An L2 scene, `scenes/<name>.md`: a META header and a narrative body <= 1,500 chars."""

    name: str
    created: str
    updated: str
    summary: str
    heat: int = Field(ge=1, le=HEAT_MAX)
    body: str

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not is_scene_name(value):
            raise _custom("slug.scene-name", f"scene name {value!r}: {SCENE_NAME_RULE}")
        return value

    @field_validator("created", "updated")
    @classmethod
    def _dates(cls, value: str) -> str:
        return _check_date(value)

    @field_validator("summary")
    @classmethod
    def _summary(cls, value: str) -> str:
        if not value.strip() or "\n" in value:
            raise _custom("format.invalid-field", "summary must be a non-empty single line")
        if len(value) > SCENE_SUMMARY_MAX_CHARS:
            raise _custom(
                "capacity.scene-summary",
                f"summary is {len(value)} characters (at most {SCENE_SUMMARY_MAX_CHARS})",
            )
        return value

    @field_validator("body")
    @classmethod
    def _body(cls, value: str) -> str:
        if "\r" in value:
            raise _custom("format.invalid-field", "body contains a carriage return")
        count = len(value.rstrip("\n"))
        if count > SCENE_BODY_MAX_CHARS:
            raise _custom(
                "capacity.scene-body",
                f"body is {count} characters (at most {SCENE_BODY_MAX_CHARS})",
            )
        return value


class Doctrine(_Strict):
    """L3 doctrine, `doctrine.md`: plain Markdown, non-empty, <= 1,200 chars."""

    text: str

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        if "\r" in value:
            raise _custom("format.invalid-field", "text contains a carriage return")
        if not value.strip():
            raise _custom("format.empty", "doctrine is empty (delete the file instead)")
        count = len(value.rstrip())
        if count > DOCTRINE_MAX_CHARS:
            raise _custom(
                "capacity.doctrine",
                f"doctrine is {count} characters (at most {DOCTRINE_MAX_CHARS})",
            )
        return value


class Skill(_Strict):
    """`skills/<name>/SKILL.md`: the portable SKILL.md subset."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)

    name: str
    description: str
    license: str | None = None
    allowed_tools: list[str] | str | None = Field(default=None, alias="allowed-tools")
    metadata: dict[str, str] | None = None
    body: str

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_slug(value, max_length=SKILL_NAME_MAX_LENGTH)

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        if not value.strip() or any(ch in value for ch in "<>\r\n"):
            raise _custom(
                "format.invalid-field", "description must be one non-empty line without < or >"
            )
        if len(value) > SKILL_DESCRIPTION_MAX_CHARS:
            raise _custom(
                "capacity.skill-description",
                f"description is {len(value)} characters (at most {SKILL_DESCRIPTION_MAX_CHARS})",
            )
        return value

    @field_validator("body")
    @classmethod
    def _body(cls, value: str) -> str:
        if "\r" in value:
            raise _custom("format.invalid-field", "body contains a carriage return")
        if not value.strip():
            raise _custom("format.empty", "SKILL.md has no body")
        if len(value.encode("utf-8")) > SKILL_BODY_MAX_BYTES:
            raise _custom("capacity.skill-body", f"body is over {SKILL_BODY_MAX_BYTES} bytes")
        return value


class MemoryIndex(_Strict):
    """`index.json`: a skeleton kept on purpose (one file per entry keeps merges clean)."""

    format: Literal["threadshare-memory-index@v1"] = "threadshare-memory-index@v1"
    entries: list[PydanticJsonValue] = Field(default_factory=list)
    scenes: list[PydanticJsonValue] = Field(default_factory=list)


# --- helpers ---------------------------------------------------------------------------------


def _file_name(path: str) -> str:
    return PurePosixPath(path.replace("\\", "/")).name


def _check_size(data: bytes | str, path: str, limit: int = MAX_FILE_BYTES) -> None:
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise MemoryFormatError(
            f"file is {size} bytes (at most {limit})",
            reason="capacity.file-size",
            file=path,
        )


def _raise_invalid(
    exc: ValidationError, *, path: str, field_lines: dict[str, int], default_line: int | None
) -> NoReturn:
    error = exc.errors()[0]
    loc = error["loc"]
    ctx: dict[str, Any] = error.get("ctx") or {}
    field = str(loc[0]) if loc else ctx.get("field")
    kind = error["type"]
    if kind == "missing":
        reason = "format.missing-field"
    elif kind == "extra_forbidden":
        reason = "format.unknown-field"
    elif "." in kind:
        reason = kind
    else:
        reason = "format.invalid-field"
    detail = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
    why = error["msg"].removeprefix("Value error, ")
    if detail:
        why = f"{detail.lstrip('.')}: {why}"
    line = field_lines.get(field, default_line) if field else default_line
    raise MemoryFormatError(why, reason=reason, file=path, line=line, field=field) from None


def _check_keys(
    fields: dict[str, fm.JsonValue],
    allowed: tuple[str, ...],
    required: tuple[str, ...],
    *,
    path: str,
    field_lines: dict[str, int],
    first_line: int,
) -> None:
    for key in fields:
        if key not in allowed:
            raise MemoryFormatError(
                "unknown field",
                reason="format.unknown-field",
                file=path,
                line=field_lines.get(key),
                field=key,
            )
    for key in required:
        if key not in fields:
            raise MemoryFormatError(
                "required field is missing",
                reason="format.missing-field",
                file=path,
                line=first_line,
                field=key,
            )


def _encode(text: str, path: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise MemoryFormatError(
            f"file would be {len(data)} bytes (at most {MAX_FILE_BYTES})",
            reason="capacity.file-size",
            file=path,
        )
    return data


# --- entries ---------------------------------------------------------------------------------


def load_entry(data: bytes | str, path: str) -> Entry:
    """Read `entries/<id>.md`. When `path` names a `.md` file, `id` must equal its stem."""
    _check_size(data, path)
    doc = fm.parse(data, path)
    _check_keys(
        doc.fields, ENTRY_FIELDS, ENTRY_FIELDS, path=path, field_lines=doc.field_lines, first_line=1
    )
    if doc.fields.get("claim_support") == "unverified":
        raise MemoryFormatError(
            "unverified claims never reach git (confirm them in review first)",
            reason="format.unverified-claim-support",
            file=path,
            line=doc.field_lines["claim_support"],
            field="claim_support",
        )
    try:
        entry = Entry.model_validate({**doc.fields, "body": doc.body})
    except ValidationError as exc:
        _raise_invalid(exc, path=path, field_lines=doc.field_lines, default_line=1)
    name = _file_name(path)
    if name.endswith(".md") and name[: -len(".md")] != entry.id:
        raise MemoryFormatError(
            f"id {entry.id!r} does not match the file name {name!r}",
            reason="slug.id-mismatch",
            file=path,
            line=doc.field_lines["id"],
            field="id",
        )
    return entry


def dump_entry(entry: Entry) -> bytes:
    fields = entry.model_dump(exclude={"body"})
    return _encode(fm.serialize(fields, entry.body, order=ENTRY_FIELDS), f"entries/{entry.id}.md")


# --- scenes ----------------------------------------------------------------------------------


def load_scene(data: bytes | str, path: str) -> Scene:
    """Read `scenes/<name>.md`; the scene name is the file stem."""
    _check_size(data, path)
    text = fm.decode_text(data, path).text
    lines = text.split("\n")
    if lines[0] != META_START:
        raise MemoryFormatError(
            f"file must start with a `{META_START}` line",
            reason="format.missing-meta",
            file=path,
            line=1,
        )
    try:
        end = lines.index(META_END, 1)
    except ValueError:
        raise MemoryFormatError(
            f"META is never closed by a `{META_END}` line",
            reason="format.unterminated-meta",
            file=path,
            line=1,
        ) from None
    fields, field_lines = fm.parse_fields(lines[1:end], path=path, first_line=2)
    _check_keys(
        fields,
        SCENE_META_FIELDS,
        SCENE_META_FIELDS,
        path=path,
        field_lines=field_lines,
        first_line=1,
    )
    name = _file_name(path).removesuffix(".md")
    if not is_scene_name(name):
        raise _scene_file_misnamed(path, name)
    body = "\n".join(lines[end + 1 :])
    try:
        return Scene.model_validate({**fields, "name": name, "body": body})
    except ValidationError as exc:
        _raise_invalid(exc, path=path, field_lines=field_lines, default_line=end + 2)


def _scene_file_misnamed(path: str, name: str) -> MemoryFormatError:
    """A scene is named by its file (it has no `name` field): an old-style file name
    (`scenes/db_migrations.md`) is refused with the rename that fixes it, on no line."""
    import shlex  # a refusal's path only: a short command's start stays within its budget

    fixed = scene_name_for(name)  # the upgrade's renaming, as lint's other advice uses
    parent = PurePosixPath(path.replace("\\", "/")).parent
    moved = f"{parent / fixed}.md" if fixed else ""
    rename = f"`git mv {shlex.quote(path)} {shlex.quote(moved)}`" if fixed else "`git mv`"
    also = f" and write `scene: {fixed}` in the entries naming it" if fixed else ""
    return MemoryFormatError(
        f"the file name makes the scene name {name!r}, and a scene is named by {SCENE_NAME_RULE}; "
        f"rename the file ({rename}){also}",
        reason="slug.scene-name",
        file=path,
    )


def dump_scene(scene: Scene) -> bytes:
    """The host-materialized canonical form: summary always quoted, no newline added."""
    meta = fm.format_fields(
        scene.model_dump(include=set(SCENE_META_FIELDS)),
        order=SCENE_META_FIELDS,
        always_quote=("summary",),
    )
    text = "\n".join([META_START, *meta, META_END, scene.body])
    return _encode(text, f"scenes/{scene.name}.md")


# --- doctrine --------------------------------------------------------------------------------


def load_doctrine(data: bytes | str, path: str = ".threadshare/memory/doctrine.md") -> Doctrine:
    _check_size(data, path)
    text = fm.decode_text(data, path).text
    try:
        return Doctrine(text=text)
    except ValidationError as exc:
        _raise_invalid(exc, path=path, field_lines={}, default_line=1)


def dump_doctrine(doctrine: Doctrine) -> bytes:
    return _encode(doctrine.text, "doctrine.md")


# --- skills ----------------------------------------------------------------------------------


def load_skill(data: bytes | str, path: str) -> Skill:
    """Read `skills/<name>/SKILL.md`; `name` must equal the directory name."""
    _check_size(data, path)
    doc = fm.parse(data, path)
    _check_keys(
        doc.fields,
        SKILL_FIELDS,
        ("name", "description"),
        path=path,
        field_lines=doc.field_lines,
        first_line=1,
    )
    try:
        skill = Skill.model_validate({**doc.fields, "body": doc.body})
    except ValidationError as exc:
        _raise_invalid(exc, path=path, field_lines=doc.field_lines, default_line=doc.body_line)
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if len(parts) >= 2 and parts[-1] == "SKILL.md" and parts[-2] != skill.name:
        raise MemoryFormatError(
            f"name {skill.name!r} does not match the directory {parts[-2]!r}",
            reason="slug.name-mismatch",
            file=path,
            line=doc.field_lines["name"],
            field="name",
        )
    return skill


def dump_skill(skill: Skill) -> bytes:
    fields = skill.model_dump(by_alias=True, exclude_none=True, exclude={"body"})
    body = skill.body if skill.body.endswith("\n") else skill.body + "\n"
    text = fm.serialize(fields, body, order=SKILL_FIELDS, always_quote=("name", "description"))
    return _encode(text, f"skills/{skill.name}/SKILL.md")


# --- index.json ------------------------------------------------------------------------------


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def load_index(data: bytes | str, path: str = ".threadshare/memory/index.json") -> MemoryIndex:
    _check_size(data, path)
    text = fm.decode_text(data, path).text
    try:
        raw = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:  # a hand-made file can nest past the stack
        line = getattr(exc, "lineno", None)
        raise MemoryFormatError(
            f"not valid JSON ({exc})", reason="format.invalid-json-value", file=path, line=line
        ) from None
    if not isinstance(raw, dict) or "format" not in raw:
        raise MemoryFormatError(
            "must be a JSON object with a `format` field",
            reason="format.missing-field",
            file=path,
            field="format",
        )
    try:
        return MemoryIndex.model_validate(raw)
    except ValidationError as exc:
        _raise_invalid(exc, path=path, field_lines={}, default_line=None)


def dump_index(index: MemoryIndex | None = None) -> bytes:
    """2-space indented JSON and a final newline, exactly as the reference writes it."""
    value = (index or MemoryIndex()).model_dump(mode="json")
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


# --- consolidated.json -----------------------------------------------------------------------

CONSOLIDATED_FORMAT = "threadshare-memory-consolidated@v1"
# A prefix of an entry's content digest (sha256 hex): it tells a changed entry from the one a
# consolidation covered, and keeps a line per entry short (a full digest would also read as a
# `secret.long-hex` to lint). The record of a full tree (4,096 entries) stays under the cap.
COVERED_DIGEST_CHARS = 16
CONSOLIDATED_MAX_BYTES = 1024 * 1024
_COVERED_DIGEST = re.compile(r"[0-9a-f]{16}")
_CONSOLIDATED_SHAPE = (
    'must be {"format": "threadshare-memory-consolidated@v1", "entries": {"<entry id>": '
    '[revision, "<16 hex digits>"], ...}}'
)


def load_consolidated(
    data: bytes | str, path: str = ".threadshare/memory/consolidated.json"
) -> dict[str, tuple[int, str]]:
    """The approved entries the committed scenes and doctrine cover: entry id → (revision, the
    first 16 hex digits of its content digest)."""
    _check_size(data, path, CONSOLIDATED_MAX_BYTES)
    text = fm.decode_text(data, path).text
    try:
        raw = json.loads(text, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:  # a hand-made file can nest past the stack
        raise MemoryFormatError(
            f"not valid JSON ({exc})",
            reason="format.invalid-json-value",
            file=path,
            line=getattr(exc, "lineno", None),
        ) from None
    entries = raw.get("entries") if isinstance(raw, dict) else None
    if (
        not isinstance(raw, dict)
        or set(raw) != {"format", "entries"}
        or raw["format"] != CONSOLIDATED_FORMAT
        or not isinstance(entries, dict)
    ):
        raise MemoryFormatError(_CONSOLIDATED_SHAPE, reason="format.invalid-field", file=path)
    covered: dict[str, tuple[int, str]] = {}
    for entry_id, value in entries.items():
        if (
            slug_problem(entry_id) is not None
            or not isinstance(value, list)
            or len(value) != 2
            or type(value[0]) is not int
            or value[0] < 0
            or not isinstance(value[1], str)
            or _COVERED_DIGEST.fullmatch(value[1]) is None
        ):
            raise MemoryFormatError(
                f"entry {entry_id!r}: {_CONSOLIDATED_SHAPE}",
                reason="format.invalid-field",
                file=path,
                field="entries",
            )
        covered[entry_id] = (value[0], value[1])
    return covered


def dump_consolidated(covered: dict[str, tuple[int, str]]) -> bytes:
    """One line per entry, sorted by id (a line per entry keeps two teammates' records
    mergeable), a final newline; no time, path or machine in it."""
    lines = [
        f"    {json.dumps(entry_id)}: [{revision}, {json.dumps(digest)}]"
        for entry_id, (revision, digest) in sorted(covered.items())
    ]
    entries = "{\n" + ",\n".join(lines) + "\n  }" if lines else "{}"
    return f'{{\n  "format": "{CONSOLIDATED_FORMAT}",\n  "entries": {entries}\n}}\n'.encode()
