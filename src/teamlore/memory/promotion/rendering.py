"""Rendering candidates into the files promotion writes: atomic claim units, per-statement support
and evidence, the entry file itself, and the table of candidate kinds (entry, skill, …) with the
review preview of each."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from teamlore.contracts._base import is_scene_name, scene_name_for
from teamlore.core import errors
from teamlore.core.canonical import sha256_hex
from teamlore.core.remedies import CANNOT_BE_PROMOTED, discard_command
from teamlore.core.secrets import sanitize_for_name
from teamlore.core.text.files import lf_sha256
from teamlore.memory.extraction.typed_facts import COMMIT_CHANGED_PATH, parse_fact_text
from teamlore.memory.promotion.rendered import RenderContext, RenderedFile
from teamlore.memory.promotion.review import (
    RAW_BLOCK_RULES,
    CandidateView,
    StatementView,
    as_written,
    entry_claim_support,
    weakest,
)
from teamlore.memory.store import layout
from teamlore.memory.store.documents import (
    Entry,
    dump_entry,
    load_entry,
    repo_relative_path_problem,
)
from teamlore.memory.store.frontmatter import MemoryFormatError
from teamlore.memory.store.lint import (
    Finding,
    known_session_id_findings,
    lint_bytes,
)
from teamlore.memory.store.slugs import is_slug, names_itself

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# the note `entry_text` writes after a listed statement: in a candidate's own text it would pass
# for teamlore's record of the evidence (docs/extraction.md, "One candidate, one entry"). Only
# that note's own form: `f(evidence: Ref)` in a lesson about code is not one
IMITATED_NOTE = "format.imitated-evidence-note"
_NOTE = re.compile(
    r"\(\s*evidence\s*:\s*(?:turn\s+of\s+\d{4}-\d{2}-\d{2}|commit\s+[0-9a-f]{7,64}\b|path\s+\S)",
    re.IGNORECASE,
)


def claim_units(statements: Sequence[StatementView]) -> list[list[StatementView]]:
    """Atomic claim units: statements resting on the same citation set form one unit (a claim
    and its restatements); a statement whose citations are all cited by another unit (a typed
    fact supporting a claim, say) joins that unit rather than become an entry of its own."""
    groups: dict[frozenset[str], list[StatementView]] = {}
    for statement in statements:
        key = frozenset(c.evidence_id for c in statement.citations)
        groups.setdefault(key, []).append(statement)
    keys = sorted(groups, key=len, reverse=True)
    units: dict[frozenset[str], list[StatementView]] = {}
    for key in keys:
        home = next((k for k in units if key <= k), None)
        units.setdefault(home if home is not None else key, []).extend(groups[key])
    order = {id(s): i for i, s in enumerate(statements)}
    return sorted(
        (sorted(u, key=lambda s: order[id(s)]) for u in units.values()),
        key=lambda u: order[id(u[0])],
    )


def entry_text(
    content: str, statements: Sequence[StatementView], public_identity: str | None
) -> str:
    """The body of a candidate's entry: its content, the lesson. When its statements rest on
    different evidence (several claim units: statements citing different turns), the body
    also lists each statement with its public evidence, so the lesson and what supports each
    part of it reach git together (docs/extraction.md, "One candidate, one entry")."""
    if len(claim_units(statements)) <= 1:
        return content
    lines = [content.strip(), "", "Statements:"]
    for statement in statements:
        evidence, occurred = unit_evidence([statement], public_identity)
        cited = [f"turn of {day}" for day in occurred]
        cited += [f"commit {c['hash']}" for c in evidence["commits"]]
        cited += [f"path {p}" for p in evidence["paths"]]
        text = " ".join(statement.text.split())
        lines.append(f"- {text}" + (f" (evidence: {'; '.join(cited)})" if cited else ""))
    return "\n".join(lines)


def name_text(payload: dict[str, Any], statements: Sequence[StatementView]) -> str:
    """What a new entry's id is built from, never the `Statements:` list and evidence notes
    `entry_text` adds, which every entry of a day shares (a Chinese lesson's id was
    `statements-evidence-turn-of-<day>-…`). An English lesson (ASCII words only) is named by
    its own words alone, as it always was (`run-alembic-upgrade-head-before-tests`); a lesson in
    another script, then its statements' own texts, whose ASCII words (file names, commands)
    name it when the lesson has too few."""
    content = str(payload.get("content", ""))
    if names_itself(content):
        return content
    return "\n".join([content, *(s.text for s in statements)])


def name_fallback(payload: dict[str, Any]) -> str:
    """What names an entry whose text has no ASCII word (all Chinese, say), before its content
    hash: its scene when that is an ASCII slug (the entries of one situation sort together),
    else its kind (`fact`, `task`, `method`, `artifact`)."""
    scene = payload.get("scene")
    if isinstance(scene, str) and is_slug(scene):
        return scene
    return str(payload.get("type") or "work_fact").removeprefix("work_").replace("_", "-")


def statement_support(statement: StatementView) -> str:
    """The support a statement has once prepared: its typed fact, else the confirmation."""
    return "typed-fact" if statement.typed_fact is not None else "human-confirmed"


def unit_evidence(
    statements: Iterable[StatementView], public_identity: str | None
) -> tuple[dict[str, Any], list[str]]:
    """Public evidence (commits + repo-relative paths) and `occurred` dates of a claim unit."""
    commits: set[str] = set()
    paths: set[str] = set()
    occurred: set[str] = set()
    for statement in statements:
        for cited in statement.citations:
            if cited.kind == "commit" and cited.commit_hash:
                commits.add(cited.commit_hash)
            elif cited.kind == "path" and cited.path:
                paths.add(cited.path)
            elif cited.kind == "turn":
                commits.update(cited.delivered_commits)
                if cited.occurred and _DATE.fullmatch(cited.occurred):
                    occurred.add(cited.occurred)
        if statement.typed_fact == COMMIT_CHANGED_PATH:
            parsed = parse_fact_text(statement.text)
            if parsed is not None:
                paths.add(str(parsed.params["path"]))
    evidence = {
        "commits": [{"repo": public_identity, "hash": h} for h in sorted(commits)]
        if public_identity
        else [],
        "paths": sorted(p for p in paths if repo_relative_path_problem(p) is None),
    }
    return evidence, sorted(occurred)


def _one_line(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text or None


def _body(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip() + "\n"


def _lint_entry(
    raw: bytes, sanitized: bytes, target_path: str, known_session_ids: frozenset[str]
) -> tuple[list[Finding], tuple[Finding, ...], tuple[Finding, ...]]:
    """(blocking findings, warnings, what sanitizing takes out): raw text blocks on
    secrets/session ids/provider paths (sanitizing must not hide them), the sanitized bytes
    block on anything. What else the raw text is found to hold and the sanitized bytes no longer
    do (a home path, written as {local-path}) does not block; it comes back as a warning saying
    so, for a blocked candidate to list with its findings (`preview_candidate`)."""
    found_raw = lint_bytes(raw, path=target_path, kind="entry")
    blocking = [
        f for f in found_raw if f.severity == "block" and f.rule.startswith(RAW_BLOCK_RULES)
    ]
    blocking += known_session_id_findings(
        raw.decode("utf-8", "replace"), path=target_path, known=known_session_ids
    )
    final = lint_bytes(sanitized, path=target_path, kind="entry")
    seen = {(f.rule, f.line) for f in blocking}
    blocking += [f for f in final if f.severity == "block" and (f.rule, f.line) not in seen]
    left = {(f.rule, f.line) for f in final}
    taken_out = tuple(
        f.model_copy(update={"severity": "warn", "message": f"{f.message}; {_TAKEN_OUT}"})
        for f in found_raw
        if f.severity == "block"
        and not f.rule.startswith(RAW_BLOCK_RULES)
        and (f.rule, f.line) not in left
    )
    return blocking, tuple(f for f in final if f.severity == "warn"), taken_out


# what a blocked candidate's finding on a home path says: promotion would not have written it
# (a path under the worktree or a `[paths] aliases` prefix of it is written relative instead)
_TAKEN_OUT = (
    "does not block: promotion writes it as {local-path} (only a path inside this repository"
    " is kept, made relative)"
)


def kept_text_findings(content: bytes, target_path: str, entry_id: str) -> list[Finding]:
    """The blocking findings of an approved entry a merge marks deprecated: it keeps the text a
    person wrote, and promote lints every file it writes (`PROMOTION_POLICY_DRIFT`), so an HTML
    comment in it blocks the candidate here, before anyone approves a plan that cannot land."""
    return [
        finding.model_copy(
            update={
                "message": f"{finding.message} (in entry {entry_id}, which this merge marks "
                "deprecated and keeps as a person wrote it)"
            }
        )
        for finding in lint_bytes(content, path=target_path, kind="entry")
        if finding.severity == "block"
    ]


def imitated_notes(texts: Iterable[str], raw: bytes, target_path: str) -> list[Finding]:
    """A blocking finding for each candidate text written into the file (`raw`) that holds
    the evidence note `entry_text` writes itself (`(evidence: commit …)`, `turn of …`,
    `path …`): in git it could not be told from the evidence teamlore records, while the front
    matter says otherwise. A statement that the file does not list reaches no reader of git."""
    lines = raw.decode("utf-8", "replace").split("\n")
    findings: list[Finding] = []
    for text in texts:
        found = _NOTE.search(text)
        if found is None:
            continue
        start = text.rfind("\n", 0, found.start()) + 1
        end = text.find("\n", found.end())
        held = text[start : None if end < 0 else end]
        shown = {held.strip(), " ".join(held.split())}  # as the body and as a listed statement
        line = next(
            (n for n, written in enumerate(lines, 1) if any(x in written for x in shown)), 0
        )
        if line == 0 or any(f.line == line for f in findings):  # a statement repeating
            continue  # the content is one line of the file: one finding
        findings.append(
            Finding(
                rule=IMITATED_NOTE,
                severity="block",
                file=target_path,
                line=line,
                message=f"the text writes its own evidence note {found.group()!r}…, as only "
                "teamlore does: cite evidence with evidenceIds, not in the text",
            )
        )
    return findings


def _entry_bytes(fields: dict[str, Any], target_path: str) -> bytes:
    try:
        return dump_entry(Entry.model_validate(fields))
    except (ValidationError, MemoryFormatError, ValueError) as exc:
        raise errors.TeamloreError(
            errors.LINT_BLOCKED,
            f"{target_path}: the entry would not follow the format ({exc.__class__.__name__})",
            findings=[
                {
                    "rule": "format.invalid-field",
                    "severity": "block",
                    "file": target_path,
                    "line": 0,
                    "message": str(exc).splitlines()[0][:200],
                }
            ],
        ) from None


def _approved_targets(
    view: CandidateView, ctx: RenderContext
) -> list[tuple[dict[str, Any], bytes]]:
    """The approved entries the candidate updates/merges, with their current bytes, after
    checking they are exactly what adjudication saw (`TARGET_DRIFT` otherwise)."""
    found: list[tuple[dict[str, Any], bytes]] = []
    for reference in view.payload.get("supersedes", []):
        if reference.get("sourceKind") != "approved":
            continue
        target_path = f"{layout.MEMORY_ROOT}/{reference['path']}"
        current = ctx.read(target_path)
        if current is None or reference.get("contentDigest") not in _digests_of(current):
            raise errors.TeamloreError(
                errors.TARGET_DRIFT,
                f"entry {reference['id']} {_what_happened(current)} since the candidate was "
                "adjudicated; discard it and extract it again "
                f"(`{discard_command(view.candidate_id, CANNOT_BE_PROMOTED, extract_again=True)}`)",
                candidateId=view.candidate_id,
                entryId=reference["id"],
            )
        found.append(({**reference, "targetPath": target_path}, current))
    return found


def _what_happened(current: bytes | None) -> str:
    """What became of an approved entry a candidate updates, in a few words."""
    if current is None:
        return "was deleted or renamed"
    try:
        entry = load_entry(current, "entry")
    except MemoryFormatError:
        return "was edited and no longer parses"
    if entry.status == "deprecated":
        by = f" (superseded by {entry.superseded_by})" if entry.superseded_by else ""
        return f"was deprecated{by}"
    return "was edited"


def _refuse_duplicate(view: CandidateView, ctx: RenderContext, texts: list[str]) -> None:
    """A new entry an approved one other than its targets already says: blocked (duplicates.py)."""
    besides = {str(r["id"]) for r in view.payload.get("supersedes", [])}
    found = ctx.approved_texts().duplicate_of(texts, besides=besides)
    if found is None:
        return
    says = "says the same" if found.exact else "says nearly the same"
    raise errors.TeamloreError(
        errors.DUPLICATE_ENTRY,
        f"approved entry {found.entry_id} {says} and was not adjudicated against; discard it, "
        "or adjudicate it again "
        f"(`{discard_command(view.candidate_id, CANNOT_BE_PROMOTED, extract_again=True)}`)",
        candidateId=view.candidate_id,
        entryId=found.entry_id,
        path=found.path,
        exact=found.exact,
    )


def _digests_of(current: bytes) -> tuple[str, str]:
    """What a target's `contentDigest` may be: its digest reading CRLF as LF, or, for a
    candidate adjudicated in a CRLF checkout before teamlore read it so, its bytes' sha256."""
    return lf_sha256(current), sha256_hex(current)


def _scene_of(payload: dict[str, Any]) -> str | None:
    """The candidate's scene as its entry names it. A candidate staged by 0.1.0 may name one
    the way it allowed (`chess_ui`): written under the name the upgrade renames it to
    (`chess-ui`, as `memory lint` advises for entries), in the diff the person reviews."""
    scene = _one_line(payload.get("scene"))
    if scene and not is_scene_name(scene):
        return scene_name_for(scene) or scene
    return scene


def render_entry_candidate(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    """The exact entry files promoting `view` writes (raises LINT_BLOCKED / TARGET_DRIFT)."""
    payload = view.payload
    # one entry per candidate: its content is the lesson and is never dropped
    units = [list(view.statements)]
    targets = _approved_targets(view, ctx)
    merge = bool(payload.get("mergedFrom"))
    files: list[RenderedFile] = []
    blocking: list[Finding] = []
    not_blocking: list[Finding] = []  # said when something else blocks it
    root = ctx.roots
    scene_raw = _scene_of(payload)
    primary_id: str | None = None
    for number, unit in enumerate(units):
        text = entry_text(payload.get("content", ""), unit, ctx.public_identity)
        evidence, occurred = unit_evidence(unit, ctx.public_identity)
        role = "new"
        current: bytes | None = None
        if number == 0 and targets:
            reference, current = targets[0]
            entry_id, role = str(reference["id"]), "update"
            target_path = reference["targetPath"]
            try:
                old = load_entry(current, target_path)
            except MemoryFormatError:
                old = None
            if old is not None:
                occurred = sorted({*occurred, *old.occurred})
                if merge:
                    commits = {c.hash: c.repo for c in old.evidence.commits}
                    commits.update({c["hash"]: c["repo"] for c in evidence["commits"]})
                    evidence = {
                        "commits": [{"repo": commits[h], "hash": h} for h in sorted(commits)],
                        "paths": sorted({*old.evidence.paths, *evidence["paths"]}),
                    }
        else:
            content = str(payload.get("content", ""))
            _refuse_duplicate(view, ctx, [as_written(t, root) for t in (content, text)])
            # the id reaches git as the file name: built from the sanitized text, like the body
            # (its hash of the whole text, as before: the same candidate keeps its id)
            entry_id = ctx.new_id(
                sanitize_for_name(name_text(payload, unit), worktree_root=root),
                name_fallback(payload),
                sanitize_for_name(text, worktree_root=root),
            )
            target_path = layout.entry_path(entry_id)
            current = ctx.read(target_path)
        if number == 0:
            occurred = sorted(
                {*occurred, *(d for d in payload.get("occurred") or [] if _DATE.fullmatch(str(d)))}
            )
            primary_id = entry_id
        fields = {
            "id": entry_id,
            "type": payload.get("type", "work_fact"),
            "status": "approved",
            "priority": int(payload.get("priority", 50)),
            "confidence": payload.get("confidence", "medium"),
            "provenance_strength": weakest([s.provenance_strength for s in unit]),
            "claim_support": entry_claim_support([statement_support(s) for s in unit]),
            "limitations": sorted({x for s in unit for x in s.assessment["limitations"]}),
            "scope": "repo",
            "scene": scene_raw,
            "occurred": occurred,
            "evidence": evidence,
            "superseded_by": None,
        }
        raw = _entry_bytes({**fields, "body": _body(text)}, target_path)
        scene = _one_line(as_written(scene_raw, root)) if scene_raw else None
        sanitized = _entry_bytes(
            {**fields, "scene": scene, "body": _body(as_written(text, root))},
            target_path,
        )
        unit_blocking, warnings, taken_out = _lint_entry(
            raw, sanitized, target_path, ctx.known_session_ids
        )
        blocking += unit_blocking
        not_blocking += [*taken_out, *warnings]
        agent_texts = [payload.get("content", ""), *(s.text for s in unit)]
        blocking += imitated_notes(agent_texts, raw, target_path)
        files.append(
            RenderedFile(
                target_path, entry_id, role, view.candidate_id, sanitized, current, warnings
            )
        )
    for reference, current in targets[1:]:
        target_path = reference["targetPath"]
        try:
            old = load_entry(current, target_path)
        except MemoryFormatError as exc:
            # the file is as adjudication saw it, yet broken: repairing it changes it, so the
            # candidate is extracted again after (discarding alone would leave the file broken)
            again = discard_command(view.candidate_id, CANNOT_BE_PROMOTED, extract_again=True)
            raise errors.TeamloreError(
                errors.TARGET_DRIFT,
                f"entry {reference['id']} no longer parses ({exc.reason}); it cannot be deprecated",
                entryId=reference["id"],
                path=target_path,
            ).advising(
                f"Fix {target_path} as `teamlore memory lint` says, then discard the candidate "
                f"with `{again}`."
            ) from None
        deprecated = dump_entry(
            old.model_copy(update={"status": "deprecated", "superseded_by": primary_id})
        )
        blocking += kept_text_findings(deprecated, target_path, str(reference["id"]))
        files.append(
            RenderedFile(
                target_path,
                str(reference["id"]),
                "deprecate",
                view.candidate_id,
                deprecated,
                current,
            )
        )
    if blocking:
        raise errors.TeamloreError(
            errors.LINT_BLOCKED,
            f"candidate {view.candidate_id}: {len(blocking)} blocking lint finding(s) "
            f"({', '.join(sorted({f.rule for f in blocking}))}); discard it",
            candidateId=view.candidate_id,
            findings=[f.model_dump() for f in blocking],
            # a blocked candidate has no files to show its warnings under: they come along
            notBlocking=[f.model_dump() for f in not_blocking],
        )
    return files


def _render_skill(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    from teamlore.memory.promotion.kinds import require

    render = require("skill").render
    if render is None:  # pragma: no cover - the skills package registers one
        raise RuntimeError("the skill kind has no renderer")
    return render(view, ctx)


@dataclass(frozen=True, slots=True)
class CandidateKind:
    """A kind of candidate that review shows and prepare plans: the `candidate_kind` it is
    stored under, and the renderer of the exact files promoting it writes. A new kind of
    candidate is one entry in `CANDIDATE_KINDS` (keyed by the PrepareRequest@v1 `kind`)."""

    stored: str
    render: Callable[[CandidateView, RenderContext], list[RenderedFile]]


CANDIDATE_KINDS: dict[str, CandidateKind] = {
    "entry": CandidateKind("entry", render_entry_candidate),
    "skill": CandidateKind("skill", _render_skill),
}
# a renderer refuses with one of these when the candidate cannot be promoted as it is: review
# shows it blocked (with the reason) instead of failing
BLOCKING_CODES = frozenset(
    code.code
    for code in (
        errors.LINT_BLOCKED,
        errors.TARGET_DRIFT,
        errors.DUPLICATE_ENTRY,
        errors.SKILL_TARGET_DRIFT,
        errors.MEMORY_CONTEXT_DRIFT,
    )
)


def candidate_kind(wire_kind: str) -> CandidateKind:
    kind = CANDIDATE_KINDS.get(wire_kind)
    if kind is None:
        raise errors.TeamloreError(
            errors.PREPARE_REQUEST_INVALID,
            f"kind {wire_kind!r} is not one of {', '.join(CANDIDATE_KINDS)}",
        )
    return kind


def wire_kind(stored: str) -> str:
    return next(wire for wire, kind in CANDIDATE_KINDS.items() if kind.stored == stored)


def render_candidate(view: CandidateView, ctx: RenderContext) -> list[RenderedFile]:
    """The exact files promoting `view` writes, by its kind."""
    return CANDIDATE_KINDS[wire_kind(view.kind)].render(view, ctx)


def preview_candidate(view: CandidateView, ctx: RenderContext) -> dict[str, Any]:
    """Review's view of `render_candidate`: the files, or the blocking findings (and those that
    do not block, which a blocked candidate has no file to show under), of a prepare
    of this candidate with the ones reviewed before it (`memory confirm` prepares them in
    review order). A new entry id one of those takes is taken (`ctx.assigned`): two candidates
    with the same first words were shown one file name and written as two. A blocked
    candidate takes none."""
    files: list[RenderedFile] = []
    findings: list[dict[str, Any]] = []
    not_blocking: list[dict[str, Any]] = []
    blocked = False
    own = ctx.fresh()
    own.existing_ids |= ctx.assigned
    try:
        files = render_candidate(view, own)
        ctx.assigned |= own.assigned
    except errors.TeamloreError as exc:
        if exc.code not in BLOCKING_CODES:
            raise
        blocked = True
        findings = list(exc.details.get("findings", [])) or [
            {"rule": exc.code, "severity": "block", "file": "", "line": 0, "message": exc.message}
        ]
        not_blocking = list(exc.details.get("notBlocking", []))
    evidence: dict[str, Any] = {
        "repository": ctx.public_identity,
        "commits": [],
        "paths": [],
        "occurred": [],
    }
    for unit in claim_units(view.statements):
        unit_public, occurred = unit_evidence(unit, ctx.public_identity)
        evidence["commits"] = sorted(
            {*evidence["commits"], *(c["hash"] for c in unit_public["commits"])}
        )
        evidence["paths"] = sorted({*evidence["paths"], *unit_public["paths"]})
        evidence["occurred"] = sorted({*evidence["occurred"], *occurred})
    return {
        "files": [f.to_json() for f in files],
        "blocked": blocked,
        "findings": findings,
        "notBlocking": not_blocking,
        "publicEvidence": evidence,
    }
