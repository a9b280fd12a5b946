"""Pending runner plans and manifests on disk (docs/runner.md, "Plans and approval").

A plan file `<state>/runner-plans/<planDigest>.json` (dir 0700, file 0600) holds the
RunnerExecutionPlan@v1 (`plan`) plus what is needed to re-select its input at approval time
(`source`: the normalized extraction request and task id, or the extraction task whose drafts
are adjudicated), the runner choice, the profile document and a disclosure summary. It never
holds transcript text: approval re-derives the task from the index and compares digests.

A manifest file `manifest-<manifestDigest>.json` holds an AuthorizationManifest@v1 over several
pending plans plus the owner it belongs to. A run record `<planDigest>.run.json` says what
happened when the plan was approved (running → done | failed | indeterminate: a run record
still `running` when the next approval finds it means teamlore died while the bytes were out,
so the plan is never sent again and a new plan supersedes it — unless it still says
`NOT_SENT_YET`, written until the runner starts; `void`: an approval found the
plan void for good and removed its file and lock); the per-plan lock file `<planDigest>.lock`
makes concurrent approvals of one plan refuse (RUNNER_PLAN_BUSY).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from teamlore.contracts import digests
from teamlore.contracts.runner import (
    AUTHORIZATION_MANIFEST_FORMAT,
    AuthorizationManifest,
    ExecutionPlan,
    parse_execution_plan,
    plan_format,
)
from teamlore.core import errors
from teamlore.core.canonical import canonical_json, digest, sha256_hex
from teamlore.core.paths import (
    FILE_MODE,
    ensure_private_dir,
    read_private_file,
    resolve_home,
    write_private_file,
)
from teamlore.runner.profiles import Runner

PLAN_DIR = "runner-plans"
PLAN_FILE_FORMAT = "teamlore-runner-plan-file@1"
MANIFEST_FILE_FORMAT = "teamlore-runner-manifest-file@1"
MAX_PLANS_PER_MANIFEST = 8
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class Owner:
    """The worktree a plan belongs to (keyed ids, as in the state DB)."""

    repository_key: str
    worktree_key: str


def plan_dir(home: Path | None) -> Path:
    return ensure_private_dir(resolve_home(home) / PLAN_DIR)


def check_digest_argument(value: str) -> str:
    candidate = value.strip().lower()
    if not _HEX64.match(candidate):
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, "an approval digest is 64 lowercase hex characters"
        )
    return candidate


# -- building -----------------------------------------------------------------------------------


def coverage_item(
    source_kind: str,
    opaque_id: str,
    content: bytes,
    *,
    revision: int | None = None,
    truncated: bool = False,
) -> dict[str, Any]:
    return {
        "sourceKind": source_kind,
        "opaqueSourceId": opaque_id,
        "revision": revision,
        "contentDigest": sha256_hex(content),
        "bytes": len(content),
        "truncated": truncated,
    }


def build_plan(
    *,
    task_kind: str,
    task_id: str,
    stdin: bytes,
    coverage: list[dict[str, Any]],
    runner: Runner,
    supersedes: str | None = None,
) -> ExecutionPlan:
    body: dict[str, Any] = {
        "format": plan_format(coverage),
        "planDigest": None,
        "taskKind": task_kind,
        "taskId": task_id,
        "runnerInputDigest": digests.runner_input_digest(stdin),
        "inputCoverageDigest": digest(coverage),
        "inputCoverage": coverage,
        "runnerProfile": runner.profile_id,
        "provider": runner.provider,
        "model": runner.model,
        "endpoint": runner.endpoint,
        "bytesToSend": len(stdin),
        "localSessionPersistence": "none",
        "providerRetention": runner.retention,
        "authorization": "pending",
    }
    if supersedes is not None:
        body["supersedesPlanDigest"] = supersedes
    body["planDigest"] = digests.plan_digest(body)
    return parse_execution_plan(body)


def build_manifest(listed: list[dict[str, Any]]) -> AuthorizationManifest:
    """A manifest over plans given as {planDigest, taskKind, taskId, bytesToSend}."""
    listed = [
        {k: p[k] for k in ("planDigest", "taskKind", "taskId", "bytesToSend")} for p in listed
    ]
    body: dict[str, Any] = {
        "format": AUTHORIZATION_MANIFEST_FORMAT,
        "manifestDigest": None,
        "plans": listed,
        "totalBytes": sum(int(p["bytesToSend"]) for p in listed),
        "authorization": "pending",
    }
    body["manifestDigest"] = digests.manifest_digest(body)
    return AuthorizationManifest.from_wire(body)


# -- files --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlanFile:
    plan: ExecutionPlan
    owner: Owner
    runner: dict[str, Any]
    profile: dict[str, Any]
    source: dict[str, Any]
    disclosure: dict[str, Any]
    created_at: str

    @property
    def digest(self) -> str:
        assert self.plan.plan_digest is not None
        return self.plan.plan_digest

    def to_json(self) -> dict[str, Any]:
        return {
            "format": PLAN_FILE_FORMAT,
            "owner": {
                "repositoryKey": self.owner.repository_key,
                "worktreeKey": self.owner.worktree_key,
            },
            "createdAt": self.created_at,
            "runner": self.runner,
            "profile": self.profile,
            "source": self.source,
            "disclosure": self.disclosure,
            "plan": self.plan.to_wire(),
        }


def write_plan(home: Path | None, plan_file: PlanFile) -> Path:
    path = plan_dir(home) / f"{plan_file.digest}.json"
    write_private_file(path, orjson.dumps(plan_file.to_json(), option=orjson.OPT_INDENT_2))
    return path


def write_manifest(home: Path | None, manifest: AuthorizationManifest, owner: Owner) -> Path:
    path = plan_dir(home) / f"manifest-{manifest.manifest_digest}.json"
    document = {
        "format": MANIFEST_FILE_FORMAT,
        "owner": {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key},
        "manifest": manifest.to_wire(),
    }
    write_private_file(path, orjson.dumps(document, option=orjson.OPT_INDENT_2))
    return path


def _invalid(what: str) -> errors.TeamloreError:
    return errors.TeamloreError(errors.RUNNER_PLAN_INVALID, what)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads(read_private_file(path))
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError):
        raise _invalid(f"{path.name} cannot be read as JSON") from None
    if not isinstance(data, dict):
        raise _invalid(f"{path.name} is not a JSON object")
    return data


def _owner_of(data: dict[str, Any], name: str) -> Owner:
    owner = data.get("owner")
    if not isinstance(owner, dict):
        raise _invalid(f"{name} names no owner")
    return Owner(str(owner.get("repositoryKey")), str(owner.get("worktreeKey")))


def plan_kind(home: Path | None, plan_digest: str) -> str | None:
    """The task kind a stored plan names (None when there is no readable plan file); only to
    choose what to open before `load_plan` checks everything."""
    try:
        data = _read_json(plan_dir(home) / f"{plan_digest}.json")
    except errors.TeamloreError:
        return None
    plan = data.get("plan") if data else None
    return str(plan.get("taskKind")) if isinstance(plan, dict) else None


def load_plan(home: Path | None, plan_digest: str, owner: Owner) -> PlanFile:
    """The pending plan `plan_digest` of `owner`: RUNNER_PLAN_NOT_FOUND / RUNNER_PLAN_INVALID."""
    path = plan_dir(home) / f"{plan_digest}.json"
    return _plan_file(path, _read_json(path), plan_digest, owner)


def _plan_file(path: Path, data: dict[str, Any] | None, plan_digest: str, owner: Owner) -> PlanFile:
    if data is None or _owner_of(data, path.name) != owner:
        raise errors.TeamloreError(
            errors.RUNNER_PLAN_NOT_FOUND,
            f"no runner plan {plan_digest[:12]}… belongs to this worktree",
            planDigest=plan_digest,
        )
    if data.get("format") != PLAN_FILE_FORMAT:
        raise _invalid(f"{path.name} is not a {PLAN_FILE_FORMAT} file")
    try:
        plan = parse_execution_plan(data.get("plan"))
    except ValidationError as exc:
        raise _invalid(
            f"{path.name}: the plan does not verify ({errors.first_problem(exc)[1]})"
        ) from None
    if plan.plan_digest != plan_digest:
        raise _invalid(f"{path.name} holds a plan with another digest")
    fields = ("runner", "profile", "source", "disclosure")
    if not all(isinstance(data.get(key), dict) for key in fields):
        raise _invalid(f"{path.name} lacks runner, profile, source or disclosure")
    if digest(data["profile"]) != plan.runner_profile.rpartition(":")[2]:
        raise _invalid(f"{path.name}: the runner profile was edited")
    return PlanFile(
        plan,
        _owner_of(data, path.name),
        data["runner"],
        data["profile"],
        data["source"],
        data["disclosure"],
        str(data.get("createdAt", "")),
    )


_RAN_OR_OUT = ("done", "running", "indeterminate")
# in a `running` record until the runner starts: nothing of the plan has left yet
NOT_SENT_YET = "notSentYet"


def _state_of(folder: Path, plan_digest: str) -> object:
    """A plan's run state; a `running` record whose runner never started reads as not run (its
    approval stopped before anything left, or runs now and holds the plan's lock)."""
    try:
        record = _read_json(folder / f"{plan_digest}.run.json") or {}
    except errors.TeamloreError:
        return None
    return None if record.get(NOT_SENT_YET) else record.get("state")


def pending_plans(home: Path | None, owner: Owner, task_kind: str) -> list[PlanFile]:
    """The plans of `owner` and `task_kind` that have not run (one that failed may be approved
    again), newest first; plans that no longer verify are left to their approval to refuse.

    Plans are kept after they run (docs/runner.md "Plans that ran"), so a plan whose small run
    record says it ran, is out or may have reached the provider is passed over on that record
    alone: `memory status` never reads the body of such a plan, however many runs came before."""
    folder = resolve_home(home) / PLAN_DIR
    try:
        names = set(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found: list[PlanFile] = []
    for name in names:
        plan_digest, _, suffix = name.partition(".")
        if suffix != "json" or not _HEX64.match(plan_digest):
            continue
        if f"{plan_digest}.run.json" in names and _state_of(folder, plan_digest) in _RAN_OR_OUT:
            continue
        path = folder / name
        try:
            data = _read_json(path)
        except errors.TeamloreError:
            continue
        plan = data.get("plan") if data else None
        if not isinstance(plan, dict) or plan.get("taskKind") != task_kind:
            continue
        try:
            found.append(_plan_file(path, data, plan_digest, owner))
        except errors.TeamloreError:
            continue
    return sorted(found, key=lambda plan_file: plan_file.created_at, reverse=True)


def load_manifest(home: Path | None, manifest_digest: str, owner: Owner) -> AuthorizationManifest:
    path = plan_dir(home) / f"manifest-{manifest_digest}.json"
    data = _read_json(path)
    if data is None or _owner_of(data, path.name) != owner:
        raise errors.TeamloreError(
            errors.RUNNER_PLAN_NOT_FOUND,
            f"no runner manifest {manifest_digest[:12]}… belongs to this worktree",
            manifestDigest=manifest_digest,
        )
    try:
        manifest = AuthorizationManifest.from_wire(data.get("manifest"))
    except ValidationError as exc:
        raise _invalid(
            f"{path.name}: the manifest does not verify ({errors.first_problem(exc)[1]})"
        ) from None
    if manifest.manifest_digest != manifest_digest:
        raise _invalid(f"{path.name} holds a manifest with another digest")
    return manifest


# -- run records and the per-plan lock -----------------------------------------------------------


def run_record_path(home: Path | None, plan_digest: str) -> Path:
    return plan_dir(home) / f"{plan_digest}.run.json"


def read_run_record(home: Path | None, plan_digest: str) -> dict[str, Any] | None:
    try:
        return _read_json(run_record_path(home, plan_digest))
    except errors.TeamloreError:
        return None


def is_indeterminate(home: Path | None, plan_digest: str) -> bool:
    """Whether the delivery of `plan_digest` became indeterminate (it may have reached the
    provider; it is never sent again)."""
    record = read_run_record(home, plan_digest) or {}
    return record.get("state") == "indeterminate"


def write_run_record(home: Path | None, plan_digest: str, record: dict[str, Any]) -> None:
    write_private_file(run_record_path(home, plan_digest), canonical_json(record))


def sweep_void_plan(
    home: Path | None, plan_digest: str, owner: Owner, refusal: dict[str, Any]
) -> None:
    """Remove a plan its approval found void for good (RUNNER_PLAN_MISMATCH: its task or inputs
    changed, or its runner profile did beyond the limits) and its lock file; the caller holds
    that lock, so no other approval is running it. A small run record stays so that approving
    it again says why it cannot run (`void_refusal`), not that there is no such plan."""
    write_run_record(
        home,
        plan_digest,
        {
            "state": "void",
            "owner": {"repositoryKey": owner.repository_key, "worktreeKey": owner.worktree_key},
            "refusal": refusal,
        },
    )
    folder = plan_dir(home)
    for name in (f"{plan_digest}.json", f"{plan_digest}.lock"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(folder / name)


def void_refusal(home: Path | None, plan_digest: str, owner: Owner) -> dict[str, Any] | None:
    """The RUNNER_PLAN_MISMATCH (its message and details) of a plan of `owner` swept as void."""
    record = read_run_record(home, plan_digest) or {}
    if record.get("state") != "void" or not isinstance(record.get("refusal"), dict):
        return None
    try:
        if _owner_of(record, "the run record") != owner:
            return None
    except errors.TeamloreError:
        return None
    return dict(record["refusal"])


@contextmanager
def _held(path: Path, busy: errors.TeamloreError) -> Iterator[None]:
    """An exclusive, non-blocking lock on `path`; `busy` when another process holds it."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


def plan_lock(home: Path | None, plan_digest: str) -> contextlib.AbstractContextManager[None]:
    """Exclusive, non-blocking: a second approval of the same plan refuses at once."""
    busy = errors.TeamloreError(
        errors.RUNNER_PLAN_BUSY,
        f"plan {plan_digest[:12]}… is being run by another teamlore process",
        planDigest=plan_digest,
    )
    return _held(plan_dir(home) / f"{plan_digest}.lock", busy)


def manifest_lock(
    home: Path | None, manifest_digest: str
) -> contextlib.AbstractContextManager[None]:
    """Exclusive, non-blocking: a second approval of the same manifest refuses at once. The
    first one runs its plans and writes the one adjudication plan their drafts share; two at
    once would each write and print a plan of their own, the earlier one not covering every
    draft."""
    busy = errors.TeamloreError(
        errors.RUNNER_PLAN_BUSY,
        f"manifest {manifest_digest[:12]}… is being approved by another teamlore process",
        manifestDigest=manifest_digest,
    ).advising(
        "Let that approval finish: it prints the adjudication plan the manifest's drafts share "
        "(`teamlore memory status` names it too)."
    )
    return _held(plan_dir(home) / f"manifest-{manifest_digest}.lock", busy)
