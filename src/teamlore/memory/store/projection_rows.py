"""Turning the files of one memory tree scan into projection rows: parse each document by its kind,
check its declared id against its file name, and build the analyzed text and headline that FTS
and search use."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from teamlore.core.analyzer import analyze
from teamlore.core.text.files import lf_sha256
from teamlore.memory.store.frontmatter import MemoryFormatError, decode_text
from teamlore.memory.store.tree_reader import Diagnostic, Kind, _repo_path, _SourceFile, _TreeScan

# --------------------------------------------------------------------------------------------
# turning files into rows


class _Row(NamedTuple):
    """One document as the projection stores it (a tuple: one per document of the tree)."""

    kind: Kind
    entry_id: str
    path: str
    content_digest: str
    entry_type: str | None
    status: str
    superseded_by: str | None
    title: str
    frontmatter: dict[str, Any]
    body: str

    @property
    def revision(self) -> int:
        # derived from the content, so a rebuild gives an unchanged file the same revision
        return int(self.content_digest[:13], 16) + 1

    def searchable_text(self) -> str:
        return analyze(
            document_text(self.entry_id, self.title, self.entry_type, self.frontmatter, self.body)
        )


def document_text(
    entry_id: str, title: str, entry_type: str | None, frontmatter: dict[str, Any], body: str
) -> str:
    """What a projected document is found by, before analysis: its id as words, title, type,
    scene and body (the FTS row is this text analyzed; the embedding is of this text)."""
    parts = [entry_id.replace("-", " "), title]
    if entry_type:
        parts.append(entry_type)
    scene = frontmatter.get("scene")
    if isinstance(scene, str):
        parts.append(scene)
    parts.append(body)
    return "\n".join(p for p in parts if p)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s|(?<=[。！？])")
_WORD = re.compile(r"[^\W\d_]{2}")  # two letters in a row: a word, not a list number or "e.g."


def headline(title: str, body: str) -> str:
    """What a document says it is about, in one line: its title (a scene's summary, a Skill's
    description), else its body's first sentence (an entry states its claim first). Embedded
    alone for memory search's headline ranking (docs/hybrid-search.md "Fusion")."""
    if title.strip():
        return title.strip()
    text = body.strip()
    for end in _SENTENCE_END.finditer(text):
        sentence = text[: end.start()]
        if _WORD.search(sentence):  # "1." or "e.g." before any word is not a sentence yet
            return sentence.strip()
    return text


class ParsedDocument(NamedTuple):
    entry_id: str
    entry_type: str | None
    status: str
    superseded_by: str | None
    title: str
    frontmatter: dict[str, Any]
    body: str


def parse_document(kind: Kind, data: bytes, repo_path: str) -> ParsedDocument:
    """One memory file → what the projection keeps of it (raises MemoryFormatError)."""
    # the documents' models (pydantic) load only when a file is read into the projection
    from teamlore.memory.store import documents

    if kind == "entry":
        entry = documents.load_entry(data, repo_path)
        return ParsedDocument(
            entry_id=entry.id,
            entry_type=entry.type,
            status=entry.status,
            superseded_by=entry.superseded_by,
            title="",
            frontmatter=entry.model_dump(mode="json", exclude={"body"}),
            body=entry.body,
        )
    if kind == "scene":
        scene = documents.load_scene(data, repo_path)
        return ParsedDocument(
            entry_id=scene.name,
            entry_type=None,
            status="approved",
            superseded_by=None,
            title=scene.summary,
            frontmatter=scene.model_dump(mode="json", exclude={"body", "name"}),
            body=scene.body,
        )
    if kind == "skill":
        skill = documents.load_skill(data, repo_path)
        return ParsedDocument(
            entry_id=skill.name,
            entry_type=None,
            status="approved",
            superseded_by=None,
            title=skill.description,
            frontmatter=skill.model_dump(
                mode="json", by_alias=True, exclude_none=True, exclude={"body"}
            ),
            body=skill.body,
        )
    doctrine = documents.load_doctrine(data, repo_path)
    return ParsedDocument("doctrine", None, "approved", None, "", {}, doctrine.text)


def _declared_id(data: bytes, repo_path: str, line: int | None) -> str | None:
    """The id a file declares on `line` (used to explain an id that is not its file name)."""
    if line is None:
        return None
    try:
        text = decode_text(data, repo_path).text
    except MemoryFormatError:
        return None
    lines = text.split("\n")
    if not 0 < line <= len(lines):
        return None
    _key, _sep, value = lines[line - 1].partition(": ")
    value = value.strip()
    if value.startswith('"'):
        try:
            loaded = json.loads(value)
        except json.JSONDecodeError:
            return None
        return loaded if isinstance(loaded, str) else None
    return value or None


def _rows_from(scan: _TreeScan) -> list[_Row]:
    rows: list[_Row] = []
    owners: dict[tuple[str, str], str] = {}  # (kind, id) -> repository-relative path
    parsed_files: list[tuple[_SourceFile, ParsedDocument]] = []
    mismatches: list[tuple[_SourceFile, MemoryFormatError]] = []
    for source in sorted(scan.files, key=lambda f: f.path.encode("utf-8")):
        repo_path = _repo_path(source.path)
        try:
            parsed = parse_document(source.kind, source.data, repo_path)
        except MemoryFormatError as exc:
            if exc.reason in ("slug.id-mismatch", "slug.name-mismatch"):
                mismatches.append((source, exc))
            else:
                scan.diagnostics.append(diagnostic_of(exc))
            continue
        key = (source.kind, parsed.entry_id)
        if key in owners:  # defensive: file names are unique, so ids normally are too
            scan.diagnostics.append(
                Diagnostic(
                    code="duplicate-id",
                    file=repo_path,
                    field="id",
                    why=f"id {parsed.entry_id!r} is already used by {owners[key]}",
                )
            )
            continue
        owners[key] = repo_path
        parsed_files.append((source, parsed))
    for source, mismatch in mismatches:
        declared = _declared_id(source.data, mismatch.file, mismatch.line)
        holder = owners.get((source.kind, declared)) if declared else None
        if holder is not None:
            scan.diagnostics.append(
                Diagnostic(
                    code="duplicate-id",
                    file=mismatch.file,
                    line=mismatch.line,
                    field=mismatch.field,
                    why=f"id {declared!r} is already used by {holder}; {mismatch.why}",
                )
            )
        else:
            scan.diagnostics.append(diagnostic_of(mismatch))
    for source, parsed in parsed_files:
        rows.append(
            _Row(
                kind=source.kind,
                entry_id=parsed.entry_id,
                path=source.path,
                content_digest=lf_sha256(source.data),  # a CRLF checkout is no change
                entry_type=parsed.entry_type,
                status=parsed.status,
                superseded_by=parsed.superseded_by,
                title=parsed.title,
                frontmatter=parsed.frontmatter,
                body=parsed.body,
            )
        )
    return rows


def diagnostic_of(exc: MemoryFormatError) -> Diagnostic:
    """Why a file that does not parse is left out, located as the parser found it."""
    return Diagnostic(code=exc.reason, file=exc.file, line=exc.line, field=exc.field, why=exc.why)
