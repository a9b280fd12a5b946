"""Canonical personal documents: Markdown under `<state>/personal/`.

| target          | file                        | first line   | context        |
|-----------------|-----------------------------|--------------|----------------|
| `profile`       | `profile.md`                | `# Profile`  | `global`       |
| `preferences`   | `preferences.md`            | `# Preferences` | `global`    |
| `project:<id>`  | `projects/<id>.md`          | `# Project`  | `project:<id>` |

A document is an optional YAML front matter block (`---` … `---` at the top, which some people
and tools add: metadata, kept byte for byte and never sent to the Writer's model), its H1 line,
optional blank lines, then `## <title>` sections (titles unique, no surrounding whitespace).
Fences (``` / ~~~) are tracked, so a fenced `## x` is body text. Bodies may hold lower headings
but no un-fenced H1/H2 and no setext underline. Section handles (`s1`, `s2`, ...) are positional
and recomputed on every parse. A change never rewrites an untouched section's bytes. A document
is at most 16 KiB and is never truncated: a change that would grow it past the limit is refused.
Personal files are never symlinks or hard links.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from pathlib import Path

from teamlore.core import errors
from teamlore.core.paths import ensure_private_dir, write_private_file
from teamlore.core.shapes.records import Record

MISSING_HASH = "missing"
MAX_FILE_BYTES = 1_048_576
DOCUMENT_HARD_LIMIT = 16_384  # what one personal document may hold after the Writer's edits
DOCUMENT_SOFT_BUDGET = 8_192  # where the Writer starts compacting (docs/personal.md)
MAX_TITLE_CHARS = 200

GLOBAL_TARGETS = ("profile", "preferences")
_TITLES = {"profile": "Profile", "preferences": "Preferences"}
_PROJECT_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")
_LOW_HEADING = re.compile(r"^ {0,3}#{1,2}(?:[ \t]|$)")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# whole lines, CRLF or LF, so one pattern finds the block in the file as saved and as read
_FRONT_MATTER_OPEN = re.compile(r"\A---[ \t]*\r?(?:\n|\Z)")
_FRONT_MATTER = re.compile(
    r"\A---[ \t]*\r?\n(?:[^\n]*\n)*?(?:---|\.\.\.)[ \t]*\r?(?:\n|\Z)(?:[ \t]*\r?\n)*"
)


def personal_root(home: Path) -> Path:
    """`<state>/personal` (not created here)."""
    return home / "personal"


def is_project_target(target: str) -> bool:
    return target.startswith("project:") and bool(_PROJECT_ID.match(target[len("project:") :]))


def validate_target(target: str) -> str:
    if target in GLOBAL_TARGETS or is_project_target(target):
        return target
    raise errors.TeamloreError(errors.INVALID_TARGET_REFERENCE, f"unknown target {target!r}")


def targets_for_context(context: str) -> list[str]:
    """`global` reads profile and preferences; `project:<id>` reads only that project."""
    if context == "global":
        return list(GLOBAL_TARGETS)
    if is_project_target(context):
        return [context]
    raise errors.TeamloreError(errors.CONTEXT_UNAVAILABLE, f"unknown context {context!r}")


def context_of_target(target: str) -> str:
    return "global" if target in GLOBAL_TARGETS else validate_target(target)


def relative_path(target: str) -> str:
    validate_target(target)
    if target in GLOBAL_TARGETS:
        return f"{target}.md"
    return f"projects/{target[len('project:') :]}.md"


def empty_document(target: str) -> str:
    title = _TITLES.get(target, "Project")
    return f"# {title}\n\n"


def content_hash(data: bytes | None) -> str:
    return MISSING_HASH if data is None else hashlib.sha256(data).hexdigest()


def title_key(title: str) -> str:
    """Association key of a section: sha256 of its title (titles are never stored)."""
    return hashlib.sha256(title.encode("utf-8")).hexdigest()


def unsafe_file(relative: str, problem: str, remedy: str) -> errors.TeamloreError:
    """UNSAFE_FILE saying what is wrong with personal/`relative`, and what fits that case."""
    return errors.TeamloreError(
        errors.UNSAFE_FILE, f"personal/{relative} {problem}", file=f"personal/{relative}"
    ).advising(remedy)


def symlink_refusal(relative: str) -> errors.TeamloreError:
    return unsafe_file(
        relative,
        "is a symbolic link; teamlore reads and writes only regular files there",
        "Replace the link in personal/ with a regular file holding its content.",
    )


def read_document_bytes(root: Path, target: str) -> bytes | None:
    """The file's bytes, or None when it (or the personal dir) does not exist. Creates nothing.

    A symlink, a non-regular file, a hard-linked file or one above 1 MiB is refused (UNSAFE_FILE).
    """
    relative = relative_path(target)
    path = root / relative
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise symlink_refusal(relative) from exc
        if exc.errno == errno.ENOTDIR:
            raise unsafe_file(
                relative,
                "has a file where a folder belongs in its path",
                "Move the file in its path aside so personal/ holds folders there.",
            ) from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise unsafe_file(
                relative,
                "is not a regular file (a folder, a device or a pipe)",
                "Move it aside; teamlore writes a regular file in its place.",
            )
        if info.st_nlink != 1:
            raise unsafe_file(
                relative,
                f"is hard-linked ({info.st_nlink} names share it)",
                "Replace it with a copy of its own (`cp`), so only personal/ names it.",
            )
        if info.st_size > MAX_FILE_BYTES:
            raise unsafe_file(
                relative,
                f"is {info.st_size:,} bytes, above the {MAX_FILE_BYTES:,} bytes teamlore reads",
                "Shorten the file by hand (a document holds 16 KiB at most), then retry.",
            )
        chunks: list[bytes] = []
        while chunk := os.read(fd, 65_536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_document_bytes(root: Path, target: str, data: bytes) -> None:
    """Atomically publish a document (0600), creating private directories as needed."""
    relative = relative_path(target)
    path = root / relative
    ensure_private_dir(path.parent)
    if path.is_symlink():
        raise symlink_refusal(relative)
    write_private_file(path, data)


class Section(Record, frozen=True):
    """One section of a personal-memory document."""

    ref: str
    title: str
    raw: str  # heading line + body, exactly as in the file

    @property
    def body(self) -> str:
        return self.raw.split("\n", 1)[1] if "\n" in self.raw else ""

    @property
    def key(self) -> str:
        return title_key(self.title)

    @property
    def digest(self) -> str:
        """What a hand edit of this section changes: its heading and text (trailing blank lines
        and spaces are layout, not text)."""
        return hashlib.sha256(self.raw.rstrip().encode("utf-8")).hexdigest()


class Document(Record, frozen=True):
    """One personal-memory document and its sections."""

    target: str
    preamble: str  # the H1 line and whatever blank lines follow it
    sections: tuple[Section, ...]
    front_matter: str = ""  # the YAML block above the H1 and the blank lines after it, if any

    def text(self) -> str:
        return self.front_matter + self.preamble + "".join(s.raw for s in self.sections)

    def section(self, ref: str) -> Section | None:
        return next((s for s in self.sections if s.ref == ref), None)

    @property
    def empty(self) -> bool:
        return not any(s.title or s.body.strip() for s in self.sections)


def _bad_change(where: str, why: str) -> errors.TeamloreError:
    """A Writer change that would break the section format: the model's answer is refused
    (INVALID_DECISION, retried like any unusable answer) and the file is untouched. Not
    PERSONAL_DOCUMENT_INVALID, which tells a person to fix the file by hand."""
    return errors.TeamloreError(
        errors.INVALID_DECISION, f"the answer's change to {where}: {why}; nothing was written"
    )


def _broken_file(target: str, line: int, found: str, fix: str) -> errors.TeamloreError:
    """A document file that breaks the format (a hand edit, usually): which file and line, what
    is there, and how to fix it (docs/personal.md "Editing by hand")."""
    where = f"{relative_path(target)}:{line}"
    return errors.TeamloreError(
        errors.PERSONAL_DOCUMENT_INVALID,
        f"{where}: {found}; {fix}",
        file=relative_path(target),
        line=line,
    )


def _shown(line: str) -> str:
    """A line of the file quoted in a message (short, one line)."""
    text = _without_secrets(line.rstrip("\n"))
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _without_secrets(text: str) -> str:
    """`text` of a file quoted in a message, each secret typed into it masked as every reader of
    the file gets it (personal/reader.py): the message is printed by `doctor` and `personal
    flush`, kept with the Writer's job and read by agents. Masked before it is cut short, so no
    part of a secret is left unmasked by the cut."""
    from teamlore.core.secrets.mask import masked_text  # the scanner, only for a suspect line

    return masked_text(text)


class _FenceTracker:
    """CommonMark-ish fence state, line by line."""

    def __init__(self) -> None:
        self.char = ""
        self.length = 0

    @property
    def open(self) -> bool:
        return self.length > 0

    def feed(self, line: str) -> bool:
        """Consume one line (without newline); True when the line is a fence marker or inside."""
        if self.open:
            stripped = line.lstrip(" ")
            if (
                len(line) - len(stripped) <= 3
                and stripped.startswith(self.char * self.length)
                and not stripped.rstrip(" \t").strip(self.char)
            ):
                self.char, self.length = "", 0
            return True
        match = _FENCE_OPEN.match(line)
        if match is None:
            return False
        fence, info = match.group("fence"), match.group("info")
        if fence[0] == "`" and "`" in info:
            return False  # inline code, not a fence
        self.char, self.length = fence[0], len(fence)
        return True


def check_body_lines(lines: list[str], where: str) -> None:
    """Refuse an un-fenced H1/H2, a setext underline or an unclosed fence in a body."""
    fences = _FenceTracker()
    previous_blank = True
    for line in lines:
        if fences.feed(line):
            previous_blank = False
            continue
        if _LOW_HEADING.match(line):
            raise _bad_change(
                where, "a level-1 or level-2 heading outside a code fence in the body"
            )
        if _SETEXT.match(line) and not previous_blank:
            raise _bad_change(where, "a setext heading (a line of = or -) in the body")
        previous_blank = not line.strip()
    if fences.open:
        raise _bad_change(where, "a code fence that is never closed")


def document_text(data: bytes, *, on_error: str = "strict") -> str:
    """A document file's text as the Writer and the readers see it: a byte order mark dropped
    and CRLF line ends read as LF, as a file saved by a Windows editor has them."""
    return data.decode("utf-8", on_error).removeprefix("\ufeff").replace("\r\n", "\n")


def front_matter_of(text: str) -> str:
    """The YAML front matter block at the top of `text` (with the blank lines after it, line
    ends as they are), or "" when there is none or it is never closed."""
    match = _FRONT_MATTER.match(text)
    return match.group(0) if match else ""


def saved_like(before: bytes | None, text: str) -> bytes:
    """`text` (LF lines) as the file it replaces was saved: with its byte order mark, its front
    matter byte for byte, and its CRLF line ends when every line had them."""
    if before is None:
        return text.encode("utf-8")
    from teamlore.core.text.files import with_line_ends_of  # the Writer's, not a queued turn's

    original = before.decode("utf-8", "replace")
    bom = "\ufeff" if original.startswith("\ufeff") else ""
    saved = original[len(bom) :]
    kept = front_matter_of(saved)
    read = kept.replace("\r\n", "\n")
    if kept and text.startswith(read):
        rest = with_line_ends_of(saved[len(kept) :], text[len(read) :])
        return (bom + kept + rest).encode("utf-8")
    return (bom + with_line_ends_of(original, text)).encode("utf-8")


def parse_document(target: str, data: bytes | None) -> Document:
    """Parse a document file (None = missing: an empty document). A file that breaks the format
    is refused with PERSONAL_DOCUMENT_INVALID naming its file and line, what was found there and
    how to fix it."""
    validate_target(target)
    if data is None:
        return Document(target, empty_document(target), ())
    try:
        text = document_text(data)
    except UnicodeDecodeError as exc:
        bad = data[: exc.start].count(b"\n") + 1
        raise _broken_file(target, bad, "the file is not UTF-8 text", "save it as UTF-8") from exc
    expected = empty_document(target).split("\n", 1)[0]
    front_matter = _front_matter(target, text)
    above = front_matter.count("\n")  # lines above the H1, for the line numbers of messages
    lines = text[len(front_matter) :].splitlines(keepends=True)
    if not lines or lines[0].rstrip("\n") != expected:
        first = "the line after the front matter" if front_matter else "the first line"
        if lines:
            found = f"{first} is {_shown(lines[0])}"
        else:
            found = "nothing follows the front matter" if front_matter else "the file is empty"
        raise _broken_file(target, above + 1, found, f"{first} must be {expected!r}")
    preamble = lines[0]
    index = 1
    while index < len(lines) and not lines[index].strip():
        preamble += lines[index]
        index += 1
    sections: list[Section] = []
    current: list[str] = []
    fences = _FenceTracker()
    fence_line = 0
    titles: dict[str, int] = {}
    previous_blank = True
    for number, line in enumerate(lines[index:], above + index + 1):
        bare = line.rstrip("\n")
        was_open = fences.open
        in_fence = fences.feed(bare)
        if fences.open and not was_open:
            fence_line = number
        if not in_fence and bare.startswith("## "):
            if current:
                sections.append(_section(target, len(sections) + 1, current))
            _check_heading(target, number, bare[3:], titles)
            titles[bare[3:]] = number
            current = [line]
            previous_blank = False
            continue
        if not in_fence:
            _check_body_line(target, number, bare, previous_blank, bool(current))
        previous_blank = not bare.strip()
        current.append(line)
    if fences.open:
        raise _broken_file(
            target,
            fence_line,
            f"the code fence {_shown(lines[fence_line - above - 1])} is never closed",
            f"add a closing {fences.char * fences.length} line after the code",
        )
    if current:
        sections.append(_section(target, len(sections) + 1, current))
    return Document(target, preamble, tuple(sections), front_matter)


def _front_matter(target: str, text: str) -> str:
    """The front matter block a file opens with (a `---` first line); one never closed is
    named as such, not as a first line that is not the H1."""
    if not _FRONT_MATTER_OPEN.match(text):
        return ""
    block = front_matter_of(text)
    if not block:
        raise _broken_file(
            target,
            1,
            "the front matter that '---' opens on line 1 is never closed",
            "end it with a `---` line, or remove the first line",
        )
    return block


def _check_heading(target: str, number: int, title: str, titles: dict[str, int]) -> None:
    if not title.strip():
        raise _broken_file(target, number, "a `## ` heading without a title", "give it a title")
    if title != title.strip():
        quoted = _without_secrets(title)
        raise _broken_file(
            target,
            number,
            f"the section title {quoted!r} has spaces around it",
            f"write it as `## {quoted.strip()}`",
        )
    if title in titles:
        raise _broken_file(
            target,
            number,
            f"the section title {_without_secrets(title)!r} is already used on line"
            f" {titles[title]}",
            "section titles must be unique: rename one, or merge the two sections",
        )


def _check_body_line(
    target: str, number: int, bare: str, previous_blank: bool, in_section: bool
) -> None:
    if _LOW_HEADING.match(bare):
        raise _broken_file(
            target,
            number,
            f"{_shown(bare)} is a level-1 heading or a `##` without a space",
            "start a section with `## <title>`, or use `###` for a heading inside one",
        )
    if _SETEXT.match(bare) and not previous_blank:
        raise _broken_file(
            target,
            number,
            f"{_shown(bare)} under a line makes that line a heading",
            "use `## <title>` or `###`, or put a blank line above it",
        )
    if not in_section and bare.strip():
        raise _broken_file(
            target,
            number,
            f"{_shown(bare)} is outside any section",
            "put a `## <title>` heading above it (text belongs to a section)",
        )


def _section(target: str, number: int, lines: list[str]) -> Section:
    title = lines[0].rstrip("\n")[3:]
    return Section(ref=f"s{number}", title=title, raw="".join(lines))


def check_title(target: str, title: str) -> None:
    if (
        not title
        or title != title.strip()
        or len(title) > MAX_TITLE_CHARS
        or _CONTROL.search(title)
    ):
        raise _bad_change(
            relative_path(target), "a section title must be one trimmed line without control chars"
        )


# control characters a body never keeps (tab and newline stay): written into a file they would
# act in a terminal that prints it (`cat`: an escape sequence, a bell), whoever sent them
_BODY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def render_section(target: str, title: str, body: str) -> str:
    check_title(target, title)
    body = _BODY_CONTROL.sub("", body.replace("\r\n", "\n")).strip("\n")
    check_body_lines(body.split("\n") if body else [], f"{relative_path(target)} {title!r}")
    return f"## {title}\n" + (f"{body}\n" if body else "") + "\n"


class PutSection(Record, frozen=True):
    """A Writer change: write this section (a new one when `section` is None)."""

    section: str | None
    title: str
    body: str


class RemoveSection(Record, frozen=True):
    """A Writer change: remove this section."""

    section: str


SectionOperation = PutSection | RemoveSection


def _separator(text: str, *, new: bool) -> str:
    """What goes between `text` and the next section: a line end if it lacks one, and before a
    new section a blank line if it ends without one (without it the file's last paragraph or
    list item runs into the new heading, and a CommonMark HTML block, `<details>` say, swallows
    the heading and the section). Nothing of `text` is changed."""
    ended = text if text.endswith("\n") else text + "\n"
    last_line = ended[:-1].rpartition("\n")[2]
    blank = "\n" if new and last_line.strip() else ""
    return ended[len(text) :] + blank


def apply_operations(
    document: Document, operations: list[SectionOperation], *, hard_limit: int = DOCUMENT_HARD_LIMIT
) -> Document:
    """Apply section operations (handles refer to `document`); untouched sections keep bytes."""
    target = document.target
    slots: list[Section | None] = list(document.sections)
    appended: list[Section] = []
    refs = {s.ref: i for i, s in enumerate(document.sections)}
    for op in operations:
        if op.section is not None and op.section not in refs:
            raise errors.TeamloreError(
                errors.INVALID_TARGET_REFERENCE, f"{target} has no section {op.section}"
            )
        if isinstance(op, RemoveSection):
            slots[refs[op.section]] = None
            continue
        raw = render_section(target, op.title, op.body)
        if op.section is None:
            appended.append(Section("new", op.title, raw))
        else:
            slots[refs[op.section]] = Section(op.section, op.title, raw)
    kept = [s for s in slots if s is not None] + appended
    titles = [s.title for s in kept]
    if len(titles) != len(set(titles)):
        raise _bad_change(relative_path(target), "two sections would have one title")
    text = document.front_matter + document.preamble
    for section in kept:
        text += _separator(text, new=section.ref == "new") + section.raw
    size = len(text.encode("utf-8"))
    if size > hard_limit:
        raise errors.TeamloreError(
            errors.PERSONAL_DOCUMENT_TOO_LARGE,
            f"{target} would be {size} bytes (limit {hard_limit}); nothing was truncated",
        )
    reparsed = parse_document(target, text.encode("utf-8"))
    return reparsed
