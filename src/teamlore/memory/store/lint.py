"""Memory lint: what must never reach the repository, and what a reviewer should look at.

`lint_text` checks one document (entry, scene, doctrine, Skill, index or plain text) and returns
findings; `lint_tree` checks a whole `.threadshare/memory` tree; `lint_paths` checks given files.
Content rules (secrets, provider session ids, local paths) come from `teamlore.core.secrets`;
this module adds the document rules. Policy version: `LINT_POLICY_VERSION`.

Block (promotion refused): every `secret.*`, `session.*` and `path.*` block rule of
`core.secrets`; `format.*`, `capacity.*`, `slug.*`: the file does not follow the format (same ids
as `MemoryFormatError.reason`) or holds managed-block marker text
(`format.managed-block-marker`) or markup a Markdown view hides while agents read it
(`format.html-comment`, `format.hidden-html`, `format.hidden-link-definition`,
`format.script-link`: `core.text.markup`), a capacity is exceeded, an id or name is not a valid
slug. Warn (shown in review, never blocks): the warn rules of `core.secrets`, BOM/CRLF,
non-canonical bytes, unknown limitation codes, other raw HTML (`format.raw-html`). Messages
never contain the matched secret, only a redacted preview (`ghp_…[40 chars]`).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Literal, Protocol, cast

from pydantic import BaseModel, Field

from teamlore.contracts._base import SCENE_NAME_RULE, is_scene_name, scene_name_for
from teamlore.core import errors, safe_write
from teamlore.core.errors import MEMORY_NOT_INITIALIZED, TeamloreError
from teamlore.core.failpoints import failpoint
from teamlore.core.paths import escaped_path
from teamlore.core.secrets import (
    CI_HOMES,
    SESSION_ID_PATTERN,
    Hit,
    Severity,
    redact,
    scan_content,
    scrub,
)
from teamlore.core.shapes.strict import STRICT_FROZEN, WIRE_FROZEN
from teamlore.core.text.hidden import HIDDEN, escaped
from teamlore.core.text.markup import MarkupKind, markup_in, might_hold_markup
from teamlore.memory.store import documents as docs
from teamlore.memory.store import layout
from teamlore.memory.store.frontmatter import (
    MemoryFormatError,
    decode_text,
    line_of,
    non_canonical,
    split_frontmatter,
)
from teamlore.memory.store.slugs import slug_problem

# bumped with every rule that blocks more: a plan prepared under an older policy is voided at
# promote (PROMOTION_POLICY_DRIFT). @2: `format.hidden-character`, the hidden-markup rules
# (`format.html-comment`, …) and, for candidates, `format.imitated-evidence-note`
# (memory/promotion/rendering.py)
LINT_POLICY_VERSION = "teamlore-sanitize@2"
HIDDEN_CHARACTER = "format.hidden-character"  # the rule id of a control or invisible character
MAX_SCENES = 15
SCENES_NEAR_LIMIT = 12
MAX_ENTRIES = 4096
MAX_SKILLS = 256

DocumentKind = Literal["entry", "scene", "doctrine", "skill", "index", "consolidated", "text"]


class Finding(BaseModel):
    """One lint result. `line` is 1-based; 0 means the whole file or directory."""

    model_config = STRICT_FROZEN

    rule: str
    severity: Severity
    file: str
    line: int
    message: str


class LintReport(BaseModel):
    model_config = WIRE_FROZEN

    policy_version: str = LINT_POLICY_VERSION
    files: list[str]
    findings: list[Finding]
    # each deprecated entry file with the id it names in superseded_by (not on the wire): what
    # the check of edits merged into a deprecated entry reads (memory/deprecations.py)
    superseded: list[tuple[str, str]] = Field(default_factory=list, exclude=True)

    def with_findings(self, more: Sequence[Finding]) -> LintReport:
        return self.model_copy(update={"findings": _sorted([*self.findings, *more])})

    @property
    def blocked(self) -> bool:
        return any(f.severity == "block" for f in self.findings)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "block"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warn"]


def known_session_id_findings(text: str, *, path: str, known: AbstractSet[str]) -> list[Finding]:
    """Block every UUID in `text` that is a provider session id this machine has indexed (the
    context-word rule cannot see an id that stands alone); `known` holds lowercase UUIDs."""
    findings = []
    for match in SESSION_ID_PATTERN.finditer(text):
        if match.group(0).lower() in known:
            findings.append(
                _finding(
                    "session.known-session-id",
                    "block",
                    path,
                    f"a provider session id from this machine: `{redact(match.group(0), 4)}`",
                    line_of(text, match.start()),
                )
            )
    return findings


# --- documents ------------------------------------------------------------------------------


def _format_finding(error: MemoryFormatError, path: str) -> Finding:
    subject = f"field `{error.field}`: " if error.field else ""
    return Finding(
        rule=error.reason,
        severity="block",
        file=path,
        line=error.line or 0,
        message=scrub(subject + error.why),
    )


def _canonical_bytes(
    kind: DocumentKind, data: bytes, path: str
) -> tuple[bytes | None, list[str], BaseModel | None]:
    """Load the document; return its canonical bytes, any unknown limitation codes and the
    loaded document (whose decoded field values are linted too)."""
    if kind == "entry":
        entry = docs.load_entry(data, path)
        unknown = [item for item in entry.limitations if item not in docs.KNOWN_LIMITATIONS]
        return docs.dump_entry(entry), unknown, entry
    if kind == "scene":
        scene = docs.load_scene(data, path)
        return docs.dump_scene(scene), [], scene
    if kind == "doctrine":
        return docs.dump_doctrine(docs.load_doctrine(data, path)), [], None
    if kind == "skill":
        skill = docs.load_skill(data, path)
        return docs.dump_skill(skill), [], skill
    if kind == "index":
        return docs.dump_index(docs.load_index(data, path)), [], None
    if kind == "consolidated":
        return docs.dump_consolidated(docs.load_consolidated(data, path)), [], None
    return None, [], None


def _strings(value: object, field: str) -> list[tuple[str, str]]:
    """(top-level field, string) for every string inside a decoded field value."""
    if isinstance(value, str):
        return [(field, value)]
    if isinstance(value, dict):
        return [pair for item in value.values() for pair in _strings(item, field)]
    if isinstance(value, list | tuple):
        return [pair for item in value for pair in _strings(item, field)]
    return []


def _field_findings(document: BaseModel, text: str, path: str) -> list[Finding]:
    """Every frontmatter field is content: its decoded value (YAML/JSON escapes resolved) is
    scanned like the body, and a hit is reported on the line of the field."""
    findings = []
    for name, value in document.model_dump(mode="json").items():
        if name == "body":
            continue
        for field, string in _strings(value, name):
            at = text.find(f"\n{field}:")
            line = line_of(text, at + 1) if at >= 0 else 1
            for hit in scan_content(string):
                if field == "id" and _is_own_id_hit(hit, string, {string}):
                    continue
                findings.append(
                    Finding(
                        rule=hit.rule,
                        severity=hit.severity,
                        file=path,
                        line=line,
                        message=f"field `{field}`: {hit.message}",
                    )
                )
    return findings


def _scene_name_findings(scene: str, text: str, path: str) -> list[Finding]:
    """An entry names its scene as `scenes/<name>.md` is named: never a path or several lines
    (a hand-edited `scene: ../../x` would reach consolidation as a scene name)."""
    if is_scene_name(scene):
        return []
    # the value is shown only when it is a name to mend (`chess_ui`): a path is not repeated
    meant = scene_name_for(scene)
    if meant is None:
        why = f"field `scene`: not a scene name: {SCENE_NAME_RULE}"
    else:  # layout.scene_names_taken reads the name advised here (`_ENTRY_RENAME`)
        why = (
            f"field `scene`: `{scene}` is not a scene name: {SCENE_NAME_RULE}; name it"
            f" `{meant}` here and in its scene file (`scenes/{meant}.md`)"
        )
    line = text.find("\nscene:") + 1
    return [_finding("slug.scene-name", "block", path, why, line_of(text, line))]


def _is_own_id_hit(hit: Hit, text: str, own_ids: AbstractSet[str]) -> bool:
    """An entropy hit on the document's own id or file name: ids are generated from the
    document's text (sanitized), which is judged itself, so the id is not judged again (a Chinese
    entry's `tsconfig-target-es2020-…-c82b2745f3` is not a secret)."""
    return (
        hit.rule == "secret.high-entropy"
        and text[hit.start : hit.end] in own_ids
        and slug_problem(text[hit.start : hit.end]) is None
    )


def _own_ids(path: str, document: BaseModel | None) -> set[str]:
    name = path.rsplit("/", 1)[-1]
    ids = {name, name.removesuffix(".md")}
    entry_id = getattr(document, "id", None)
    if isinstance(entry_id, str):
        ids.add(entry_id)
    return ids


def _local_home_slugs() -> tuple[str, ...]:
    """This machine's home folder as a slug (`home-alice`, `users-bob`): a name holding it was
    built from a local path. CI runners' shared homes say nothing about a person."""
    home = Path.home()
    parts = [p for p in home.parts if p not in ("/", "\\") and not p.endswith(":")]
    if len(parts) < 2 or parts[-1] in CI_HOMES:
        return ()
    slug = "-".join(p.lower() for p in parts)
    return (slug,) if slug_problem(slug) is None else ()


def name_findings(path: str) -> list[Finding]:
    """A file name is content too: it reaches git like the body. Its secret, session and path
    hits, and this machine's home folder slugged into it (`entries/home-alice-src-…md`)."""
    folder, _, name = path.rpartition("/")
    own = _own_ids(path, None)
    hits = [*scan_content(folder)] if folder else []
    hits += [h for h in scan_content(name) if not _is_own_id_hit(h, name, own)]
    findings = [
        Finding(
            rule=hit.rule,
            severity=hit.severity,
            file=path,
            line=0,
            message=f"file name: {hit.message}",
        )
        for hit in hits
    ]
    stem = path.rsplit("/", 1)[-1]
    for home in _local_home_slugs():
        if f"-{home}-" in f"-{stem}-" or stem.startswith(f"{home}-") or f"-{home}" in stem:
            findings.append(
                Finding(
                    rule="path.home-in-name",
                    severity="block",
                    file=path,
                    line=0,
                    message="file name: holds this machine's home folder as a slug"
                    " (ids must come from sanitized text)",
                )
            )
            break
    return findings


class _LineIndex:
    """Line numbers of offsets in one text in O(log n) each (many findings stay linear)."""

    def __init__(self, text: str) -> None:
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1


def lint_bytes(data: bytes, *, path: str, kind: DocumentKind) -> list[Finding]:
    """Lint one file's bytes; `path` is repo-relative and only used to label findings (and, for
    entries and Skills, to check the id against the file or directory name)."""
    return _lint_loaded(data, path, kind)[0]


def _lint_loaded(
    data: bytes, path: str, kind: DocumentKind
) -> tuple[list[Finding], BaseModel | None]:
    """`lint_bytes`, with the document as loaded (None when it did not load, or for text)."""
    findings: list[Finding] = []
    document: BaseModel | None = None
    try:
        decoded = decode_text(data, path)
    except MemoryFormatError as exc:
        return [_format_finding(exc, path)], None
    text = decoded.text
    if decoded.had_bom:
        findings.append(_finding("format.bom", "warn", path, "file starts with a UTF-8 BOM", 1))
    if decoded.had_crlf:
        crlf = "CRLF line endings (the writer uses LF)"
        findings.append(_finding("format.crlf", "warn", path, crlf, line_of(text, text.find("\n"))))
    own_ids: set[str] = set()
    if kind != "text":
        try:
            canonical, unknown, document = _canonical_bytes(kind, data, path)
        except MemoryFormatError as exc:
            findings.append(_format_finding(exc, path))
        else:
            findings.extend(name_findings(path))
            own_ids = _own_ids(path, document)
            if document is not None:
                findings.extend(_field_findings(document, text, path))
            if isinstance(document, docs.Entry) and document.scene is not None:
                findings.extend(_scene_name_findings(document.scene, text, path))
            if canonical is not None and canonical != text.encode("utf-8"):
                at, why = non_canonical(text, canonical.decode("utf-8"))
                findings.append(_finding("format.non-canonical", "warn", path, why, at))
            for code in unknown:
                findings.append(
                    Finding(
                        rule="entry.unknown-limitation",
                        severity="warn",
                        file=path,
                        line=0,
                        message=scrub(f"limitation `{code}` is not in the known vocabulary"),
                    )
                )
    lines = _LineIndex(text)
    findings.extend(_marker_findings(text, path, lines))
    findings.extend(_hidden_findings(text, path, lines))
    if kind not in ("index", "consolidated"):
        findings.extend(_markup_findings(text, path))
    content = [
        Finding(
            rule=hit.rule,
            severity=hit.severity,
            file=path,
            line=lines.line_of(hit.start),
            message=hit.message,
        )
        for hit in scan_content(text)
        if not _is_own_id_hit(hit, text, own_ids)
    ]
    # a field hit that the raw text already shows on the same line is reported once
    seen = {(f.rule, f.line) for f in content}
    findings = [f for f in findings if (f.rule, f.line) not in seen or f.line == 0] + content
    return _sorted(findings), document


def _marker_findings(text: str, path: str, lines: _LineIndex) -> list[Finding]:
    """Text that reads as a managed-block marker would let a document break out of the block
    in CLAUDE.md / AGENTS.md (docs/assemble.md)."""
    return [
        Finding(
            rule="format.managed-block-marker",
            severity="block",
            file=path,
            line=lines.line_of(match.start()),
            message="holds the text of a managed-block marker (`<!-- BEGIN/END THREADSHARE "
            "MEMORY`), which would break the block in CLAUDE.md / AGENTS.md; reword it",
        )
        for match in layout.MANAGED_MARKER_TEXT.finditer(text)
    ]


def _hidden_findings(text: str, path: str, lines: _LineIndex) -> list[Finding]:
    """A control character or one that renders as nothing (`core.text.hidden`): a reviewer
    never sees what it hides, an agent reads it, and a NUL makes git show the file as binary.
    One finding per line, naming the first such character."""
    findings: dict[int, Finding] = {}
    for match in HIDDEN.finditer(text):
        line = lines.line_of(match.start())
        if line not in findings:
            findings[line] = Finding(
                rule=HIDDEN_CHARACTER,
                severity="block",
                file=path,
                line=line,
                message=f"holds {escaped(match)}, a character a reader does not see as it is"
                " (a control or invisible character); remove it",
            )
    return list(findings.values())


# the rule and severity of each kind of markup a Markdown view shows otherwise than an agent reads
# it (`core.text.markup`): what hides something blocks, other raw HTML warns
_MARKUP_RULES: dict[MarkupKind, tuple[str, Severity]] = {
    "comment": ("format.html-comment", "block"),
    "hidden-element": ("format.hidden-html", "block"),
    "hidden-definition": ("format.hidden-link-definition", "block"),
    "script-link": ("format.script-link", "block"),
    "tag": ("format.raw-html", "warn"),
}


def _markup_findings(text: str, path: str) -> list[Finding]:
    """What a teammate reading the rendered file does not see as an agent reads it: hidden
    markup blocks, other raw HTML warns; once per rule and line. The front matter is not
    Markdown (GitHub shows it as a table of text), and a managed-block marker is named by its
    own rule."""
    body, first_line = text, 1
    if text.startswith("---\n") and might_hold_markup(text):
        with contextlib.suppress(MemoryFormatError):  # not a document: all of it is Markdown
            _, body, first_line = split_frontmatter(text, path=path)
    findings: dict[tuple[str, int], Finding] = {}
    for markup in markup_in(body, first_line=first_line):
        if markup.kind == "comment" and layout.MANAGED_MARKER_TEXT.match(markup.raw):
            continue
        rule, severity = _MARKUP_RULES[markup.kind]
        findings.setdefault(
            (rule, markup.line),
            Finding(
                rule=rule, severity=severity, file=path, line=markup.line, message=scrub(markup.why)
            ),
        )
    return list(findings.values())


def lint_text(text: str, *, path: str, kind: DocumentKind = "text") -> list[Finding]:
    """Lint one document given as text. `kind` "text" checks content only."""
    return lint_bytes(text.encode("utf-8", "surrogatepass"), path=path, kind=kind)


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.file, f.line, f.rule, f.message))


# --- tree -----------------------------------------------------------------------------------


# what a file of the memory folder that is not part of its layout is, and what to do with it;
# what the tree may hold is memory/store/layout.py's rule, which the tree's reader follows
UNEXPECTED_FILE = layout.UNEXPECTED_FILE


def _too_large(dir_fd: int, name: str, path: str, limit: int) -> Finding:
    size = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_size
    return _finding("capacity.file-size", "block", path, layout.too_large(size, limit))


def _tree_problem(problem: layout.TreeProblem, path: str) -> Finding:
    return _finding(problem.rule, "block", path, problem.why)


def _finding(rule: str, severity: Severity, path: str, message: str, line: int = 0) -> Finding:
    return Finding(rule=rule, severity=severity, file=path, line=line, message=message)


def _read_file(dir_fd: int, name: str, relative: str, limit: int) -> bytes:
    """The bytes of regular file `name`, read as safe_write reads (no symlink followed, never
    waiting on a FIFO swapped in after the listing, at most `limit` bytes): FileTooLarge over
    `limit`, UNSAFE_PATH when it is not a regular file."""
    data = safe_write.read_at(dir_fd, name, relative, limit)
    if data is None:
        raise FileNotFoundError(errno.ENOENT, "removed while the tree was linted", relative)
    return data


class FileLint(BaseModel):
    """What linting one tree file found, with what the tree-wide checks need of an entry."""

    model_config = STRICT_FROZEN

    findings: list[Finding]
    entry_id: str | None = None
    superseded_by: str | None = None


class LintMemo(Protocol):
    """`lint_tree_file`, or what it found before for the same path, kind and bytes
    (memory/store/lint_cache.py)."""

    def lint(self, path: str, kind: DocumentKind, data: bytes) -> FileLint: ...


def lint_tree_file(data: bytes, *, path: str, kind: DocumentKind) -> FileLint:
    findings, document = _lint_loaded(data, path, kind)
    if not isinstance(document, docs.Entry):
        return FileLint(findings=findings)
    return FileLint(findings=findings, entry_id=document.id, superseded_by=document.superseded_by)


# how far a tree's lint is: files done, files in the folder being linted, that folder
LintProgress = Callable[[int, int, str], None]


class _TreeLinter:
    def __init__(self, memo: LintMemo | None, progress: LintProgress | None) -> None:
        self.memo = memo
        self.progress = progress
        self.files: list[str] = []
        self.findings: list[Finding] = []
        self.entry_ids: set[str] = set()
        self.superseded: list[tuple[str, str]] = []

    def shown(self, relative: str) -> str:
        """`relative` as text that encodes to UTF-8; a name that is not UTF-8 is a finding."""
        shown = escaped_path(relative)
        if shown != relative:
            self.findings.append(
                _finding(
                    "tree.name-not-utf8",
                    "block",
                    shown,
                    "the name is not UTF-8 text (shown escaped); rename it",
                )
            )
        return shown

    def _kind_of(self, dir_fd: int, name: str, relative: str) -> str:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            self.findings.append(_finding("tree.symlink", "block", relative, layout.SYMLINK_WHY))
            return "link"
        if stat.S_ISDIR(st.st_mode):
            return "dir"
        if stat.S_ISREG(st.st_mode):
            return "file"
        self.findings.append(_tree_problem(layout.NOT_A_FILE, relative))
        return "other"

    def lint_file(
        self, dir_fd: int, name: str, relative: str, kind: DocumentKind, asset: bool = False
    ) -> None:
        self.files.append(relative)
        limit = docs.CONSOLIDATED_MAX_BYTES if kind == "consolidated" else docs.MAX_FILE_BYTES
        failpoint("lint.before-read")
        try:
            data = _read_file(dir_fd, name, relative, limit)
        except safe_write.FileTooLarge:
            self.findings.append(_too_large(dir_fd, name, relative, limit))
            return
        except TeamloreError:  # replaced after it was listed: name what is there now
            if self._kind_of(dir_fd, name, relative) == "file":
                self.findings.append(_tree_problem(layout.NOT_A_FILE, relative))
            return
        if asset and layout.binary_asset(data):  # an image beside SKILL.md: copied, not linted
            return
        if self.memo is not None:
            result = self.memo.lint(relative, kind, data)
        else:
            result = lint_tree_file(data, path=relative, kind=kind)
        self.findings.extend(result.findings)
        if result.entry_id is not None:
            self.entry_ids.add(result.entry_id)
        if result.superseded_by is not None:
            self.superseded.append((relative, result.superseded_by))

    def lint_documents_dir(self, parent_fd: int, name: str, kind: DocumentKind) -> int:
        relative = f"{layout.MEMORY_ROOT}/{name}"
        fd = layout.open_dir_nofollow(parent_fd, name, relative)
        count = 0
        try:
            children = sorted(os.listdir(fd))
            for done, child in enumerate(children):
                if self.progress is not None:
                    self.progress(done, len(children), relative)
                if layout.skipped(child):
                    continue  # `init`'s .gitkeep, which keeps the folder in git
                child_rel = self.shown(f"{relative}/{child}")
                child_kind = self._kind_of(fd, child, child_rel)
                document = child.endswith(".md")
                if child_kind == "dir" and document:
                    self.findings.append(_tree_problem(layout.NOT_A_FILE, child_rel))
                elif child_kind in ("dir", "file") and not document:
                    why = layout.stray_in_documents(name)
                    self.findings.append(_finding(layout.STRAY_RULE, "warn", child_rel, why))
                if child_kind != "file" or not document:
                    continue
                count += 1
                self.lint_file(fd, child, child_rel, kind)
            if self.progress is not None:
                self.progress(len(children), len(children), relative)
        finally:
            os.close(fd)
        return count

    def lint_skills_dir(self, parent_fd: int) -> int:
        relative = layout.SKILLS_DIR
        fd = layout.open_dir_nofollow(parent_fd, "skills", relative)
        count = 0
        try:
            for child in sorted(os.listdir(fd)):
                if layout.skipped(child):
                    continue
                child_rel = self.shown(f"{relative}/{child}")
                child_kind = self._kind_of(fd, child, child_rel)
                if child_kind == "file":  # a README.md: tolerated, as the readers leave it
                    why = layout.STRAY_IN_SKILLS
                    self.findings.append(_finding(layout.STRAY_RULE, "warn", child_rel, why))
                if child_kind != "dir":
                    continue
                count += 1
                problem = slug_problem(child, max_length=docs.SKILL_NAME_MAX_LENGTH)
                if problem is not None:
                    self.findings.append(
                        _finding(
                            "slug.invalid",
                            "block",
                            child_rel,
                            scrub(f"Skill directory name {problem}"),
                        )
                    )
                skill_fd = layout.open_dir_nofollow(fd, child, child_rel)
                try:
                    skill_rel = f"{child_rel}/{layout.SKILL_FILE_NAME}"
                    try:
                        kind = self._kind_of(skill_fd, layout.SKILL_FILE_NAME, skill_rel)
                    except FileNotFoundError:
                        missing = _tree_problem(layout.MISSING_SKILL_FILE, child_rel)
                        self.findings.append(missing)
                        continue
                    if kind == "file":
                        self.lint_file(skill_fd, layout.SKILL_FILE_NAME, skill_rel, "skill")
                    for fd_of, name, path in layout.skill_folder_files(skill_fd, child_rel):
                        if self._kind_of(fd_of, name, path) == "file":  # copied with SKILL.md
                            self.lint_file(fd_of, name, path, "text", asset=True)
                finally:
                    os.close(skill_fd)
        finally:
            os.close(fd)
        return count

    def capacity(self, count: int, limit: int, rule: str, path: str, what: str) -> None:
        if count > limit:
            self.findings.append(_finding(rule, "block", path, f"{count} {what} (at most {limit})"))


def lint_tree(
    worktree_root: str | os.PathLike[str],
    *,
    memo: LintMemo | None = None,
    progress: LintProgress | None = None,
) -> LintReport:
    """Lint every memory file under `<worktree_root>/.threadshare/memory` without following
    symlinks. Raises MEMORY_NOT_INITIALIZED when there is no tree, UNSAFE_PATH when its root is
    reached through a symlink. With a `memo`, a file it already knows is not linted again;
    `progress` hears of each file of the entries and scenes folders before it is linted."""
    linter = _TreeLinter(memo, progress)
    try:
        memory = layout.open_memory_root(worktree_root)
        memory_fd = memory.__enter__()
    except FileNotFoundError:
        raise TeamloreError(MEMORY_NOT_INITIALIZED) from None
    try:
        names = sorted(os.listdir(memory_fd))
        if "index.json" not in names:
            linter.findings.append(
                _finding(
                    "tree.missing-index",
                    "warn",
                    layout.INDEX_FILE,
                    "index.json is missing: `teamlore memory init` writes it",
                )
            )
        for name in names:
            relative = linter.shown(f"{layout.MEMORY_ROOT}/{name}")
            kind = linter._kind_of(memory_fd, name, relative)
            if kind in ("link", "other"):
                continue
            if kind == "file" and name in ("entries", "scenes", "skills"):
                linter.findings.append(_tree_problem(layout.not_a_directory(name), relative))
            elif kind == "dir" and name == "doctrine.md":
                linter.findings.append(_tree_problem(layout.NOT_A_FILE, relative))
            elif kind == "file" and name == "index.json":
                linter.lint_file(memory_fd, name, relative, "index")
            elif kind == "file" and name == "consolidated.json":
                linter.lint_file(memory_fd, name, relative, "consolidated")
            elif kind == "file" and name == "doctrine.md":
                linter.lint_file(memory_fd, name, relative, "doctrine")
            elif kind == "dir" and name == "entries":
                entries = linter.lint_documents_dir(memory_fd, name, "entry")
                linter.capacity(
                    entries, MAX_ENTRIES, "capacity.entry-count", layout.ENTRIES_DIR, "entries"
                )
            elif kind == "dir" and name == "scenes":
                scenes = linter.lint_documents_dir(memory_fd, name, "scene")
                linter.capacity(
                    scenes, MAX_SCENES, "capacity.scene-count", layout.SCENES_DIR, "scenes"
                )
                if SCENES_NEAR_LIMIT <= scenes <= MAX_SCENES:
                    linter.findings.append(
                        _finding(
                            "capacity.scene-count-near-limit",
                            "warn",
                            layout.SCENES_DIR,
                            f"{scenes} scenes: merge before creating more (limit {MAX_SCENES})",
                        )
                    )
            elif kind == "dir" and name == "skills":
                skills = linter.lint_skills_dir(memory_fd)
                linter.capacity(
                    skills, MAX_SKILLS, "capacity.skill-count", layout.SKILLS_DIR, "Skills"
                )
            else:
                linter.findings.append(
                    _finding("tree.unexpected-file", "warn", relative, UNEXPECTED_FILE)
                )
    finally:
        memory.__exit__(None, None, None)
    for path, target in linter.superseded:
        if target not in linter.entry_ids:
            linter.findings.append(
                _finding(
                    "entry.superseded-target-missing",
                    "warn",
                    path,
                    f"superseded_by names `{target}`, which is not an entry in this tree",
                )
            )
    renames = [(f.file, f.line, f.message) for f in linter.findings if f.rule == "slug.scene-name"]
    taken = layout.scene_names_taken(linter.files, _finding, renames)  # never merge two scenes
    return LintReport(
        files=sorted(linter.files),
        findings=_sorted([taken.get((f.file, f.rule), f) for f in linter.findings]),
        superseded=linter.superseded,
    )


def _files_under(paths: Sequence[Path]) -> list[Path]:
    """`paths` with each folder replaced by the Markdown files under it (sorted; dot-files and
    symlinked folders left out, as the tree linter leaves them)."""
    files: list[Path] = []
    for path in paths:
        if not os.path.isdir(path) or os.path.islink(path):
            files.append(path)
            continue
        for folder, subfolders, names in os.walk(path):  # never follows a symlinked folder
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            files.extend(
                Path(folder, name)
                for name in sorted(names)
                if name.endswith(".md") and not name.startswith(".")
            )
    return files


def lint_paths(worktree_root: str | os.PathLike[str], paths: Sequence[Path]) -> LintReport:
    """Lint the given files (absolute paths; a folder stands for the Markdown files under it).
    Files inside the memory tree are checked with the rules of their kind; any other file is
    linted as plain text (e.g. a draft before it is copied into the tree). A missing file is a
    usage error; a symlink is never followed."""
    root = Path(os.path.realpath(worktree_root))
    files: list[str] = []
    findings: list[Finding] = []
    for path in _files_under(paths):
        absolute = Path(os.path.abspath(path))
        try:
            shown = escaped_path(absolute.relative_to(root).as_posix())
        except ValueError:
            shown = escaped_path(absolute.name)
        kind = cast(DocumentKind, layout.document_kind(shown) or "text")
        files.append(shown)
        try:
            mode = os.lstat(absolute).st_mode
        except OSError:  # missing, or no file can have that name (too long, a file as a folder)
            mode = 0
        if stat.S_ISLNK(mode):
            findings.append(_finding("path.symlink", "block", shown, "file is a symlink"))
            continue
        if mode == 0:
            raise TeamloreError(errors.INVALID_ARGUMENT, f"{shown}: no such file")
        if not stat.S_ISREG(mode):
            raise TeamloreError(errors.INVALID_ARGUMENT, f"{shown}: not a regular file")
        limit = docs.CONSOLIDATED_MAX_BYTES if kind == "consolidated" else docs.MAX_FILE_BYTES
        dir_fd = os.open(absolute.parent, os.O_RDONLY)
        failpoint("lint.before-read")
        try:
            data = _read_file(dir_fd, absolute.name, shown, limit)
        except safe_write.FileTooLarge:
            findings.append(_too_large(dir_fd, absolute.name, shown, limit))
            continue
        except TeamloreError:  # replaced since the check above
            raise TeamloreError(errors.INVALID_ARGUMENT, f"{shown}: not a regular file") from None
        finally:
            os.close(dir_fd)
        findings.extend(lint_bytes(data, path=shown, kind=kind))
    return LintReport(files=files, findings=_sorted(findings))
