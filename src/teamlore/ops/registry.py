"""The operation registry: every stable operation is defined once, here.

An operation has a name, a version, an input model (strict, extra=forbid: a pydantic model, or
for the operations a short CLI process runs a hand-checked `ops.plain_request.PlainRequest`), a
handler
that returns a JSON-ready result, a side-effect class and the MCP capability that exposes it
(None: CLI-only local housekeeping). The CLI and the MCP server are thin adapters over this
registry, so the same request gives the same result and the same errors on both.

An operation may be exposed at more than one tier (`also_in`, e.g. `memory_status` exists
for every personal tier). A server launched with several capabilities registers the union of their
tools (`Registry.for_capability(*capabilities)`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from teamlore.core import errors
from teamlore.core.shapes.records import Record, field

SideEffect = Literal["read", "state-write", "repo-write"]
# the seed's registry metadata (docs/seed-conformance.md, "Operation registry"): how settled an
# operation is, and what approval its effect needs (`canonical-write`: it writes reviewed memory
# only from a person's confirmation; `history-read`: it discloses past sessions to a model only
# on an approved plan)
Stability = Literal["stable", "experimental", "legacy-debt"]
ApprovalPolicy = Literal["none", "history-read", "canonical-write"]
Capability = Literal["team-read", "team", "init", "read", "relay", "org"]

# which tiers each MCP launch capability grants. An init or relay launch does not imply read:
# personal memory is read only by processes launched with `read`.
CAPABILITY_TIERS: dict[str, frozenset[str]] = {
    "team-read": frozenset({"team-read"}),
    "team": frozenset({"team-read", "team"}),
    "init": frozenset({"init"}),
    "read": frozenset({"read"}),
    "relay": frozenset({"relay"}),
    # the org index's read-only tools (`teamlore org serve`, docs/org.md)
    "org": frozenset({"org"}),
}
PERSONAL_CAPABILITIES = frozenset({"init", "read", "relay"})
# the modules that define each launch capability's MCP tools: an MCP server imports only its
# launch's (`load_capabilities`), not every operation (docs/architecture.md, "A short CLI process");
# tests/ops/test_registry.py checks this against `load_operations`
CAPABILITY_MODULES: dict[str, tuple[str, ...]] = {
    "team-read": ("teamlore.ops.memory.store", "teamlore.ops.memory.search"),
    "team": (
        "teamlore.ops.memory.assemble",
        "teamlore.ops.memory.consolidation",
        "teamlore.ops.memory.promote",
        "teamlore.ops.memory.recall",
        "teamlore.ops.memory.review",
        "teamlore.ops.memory.search",
        "teamlore.ops.memory.stage",
        "teamlore.ops.memory.store",
        "teamlore.ops.runner.plans",
    ),
    "init": ("teamlore.ops.personal.memory",),
    "read": ("teamlore.ops.personal.memory",),
    "relay": ("teamlore.ops.personal.memory",),
    "org": ("teamlore.ops.org.index",),
}

# the module that defines each operation: a process that runs one operation imports just its
# module, not every operation's (numpy, the contract models; docs/architecture.md, "A short CLI
# process"); tests/ops/test_registry.py checks this against `load_operations`
OPERATION_MODULES: dict[str, tuple[str, ...]] = {
    "teamlore.ops.demo.chain": ("demo",),
    "teamlore.ops.integrations.install": ("doctor", "install", "uninstall"),
    "teamlore.ops.integrations.mcp_config": ("mcp-config",),
    "teamlore.ops.memory.assemble": ("memory.assemble",),
    "teamlore.ops.memory.browse": ("memory.list", "memory.show"),
    "teamlore.ops.memory.confirm": ("memory.confirm",),
    "teamlore.ops.memory.consolidation": ("memory.synthesize",),
    "teamlore.ops.memory.promote": ("memory.promote",),
    "teamlore.ops.memory.recall": ("memory.recall",),
    "teamlore.ops.memory.review": (
        "memory.discard",
        "memory.prepare",
        "memory.review",
    ),
    "teamlore.ops.memory.search": ("memory.search",),
    "teamlore.ops.memory.stage": ("memory.stage",),
    "teamlore.ops.memory.store": ("memory.init", "memory.lint", "memory.status"),
    "teamlore.ops.org.index": (
        "org.add",
        "org.list",
        "org.remove",
        "org.search",
        "org.status",
        "org.sync",
    ),
    "teamlore.ops.org.tokens": ("org.token_create", "org.token_list", "org.token_revoke"),
    "teamlore.ops.personal.memory": (
        "personal.config",
        "personal.flush",
        "personal.import",
        "personal.init",
        "personal.queue_status",
        "personal.read",
        "personal.retry",
        "personal.show",
        "personal.status",
        "personal.submit_user_turn",
    ),
    "teamlore.ops.runner.plans": ("memory.consolidate_preview", "memory.extract_preview"),
    "teamlore.ops.runner.reverify": ("memory.reverify_runner",),
    "teamlore.ops.runner.run": ("memory.run_plan",),
    "teamlore.ops.sessions.exclusions": ("sessions.exclude", "sessions.include"),
    "teamlore.ops.sessions.index": (
        "sessions.list",
        "sessions.search",
        "sessions.show",
        "status",
        "sync",
    ),
    "teamlore.ops.sessions.repos": ("repo.forget", "repo.list", "repo.show"),
    "teamlore.ops.sessions.secret": ("secret.regenerate",),
}
_MODULE_OF_OPERATION = {
    name: module for module, names in OPERATION_MODULES.items() for name in names
}

ProgressCallback = Callable[[int, int, str], None]


class InputModel(Protocol):
    """What the registry asks of a request model: pydantic's `BaseModel` and
    `ops.plain_request.PlainRequest` both fit (pydantic loads only with a pydantic model)."""

    @classmethod
    def model_validate(cls, obj: Any) -> Any: ...

    @classmethod
    def model_validate_json(cls, json_data: str, *, strict: bool | None = None) -> Any: ...

    @classmethod
    def model_json_schema(cls) -> dict[str, Any]: ...


class OpContext(Record):
    """Who is asking and from where. Identity comes from here, never from request arguments.

    The MCP server fills the launch facts: `client_id` (a namespace, not authentication),
    `contexts` (personal-memory contexts frozen at launch: `global`, `project:<id>`),
    `capabilities` (the launch tiers) and `accept_user_turns` (the relay opt-in flag).
    `request_flush` asks a background Writer, when the process has one, to run now.
    `confirm` asks the person at the terminal to confirm one item (CLI-only operations such as
    `memory.confirm`; None means "confirmed": the CLI's `--yes`).
    `each` takes each finished part of a long operation's result as it is done (`org sync`: one
    repository's), for a text view that prints it then: a run cut short keeps what it said.
    `org_database` names the org index's PostgreSQL server (docs/org.md); None: the
    `TEAMLORE_ORG_DATABASE` variable, else the embedded index. `token_holder`: the caller is a
    bearer token's holder over `org serve`'s HTTP, not whoever set up the index: what it is told
    names no database server (docs/org.md "Serving").
    """

    cwd: Path
    home: Path | None = None
    progress: ProgressCallback | None = None
    client_id: str | None = None
    contexts: tuple[str, ...] = ()
    capabilities: frozenset[str] = frozenset()
    accept_user_turns: bool = False
    request_flush: Callable[[], None] | None = None
    confirm: Callable[[dict[str, Any]], bool] | None = None
    org_database: str | None = None  # `--database` / `org serve`'s; else TEAMLORE_ORG_DATABASE
    token_holder: bool = False  # `org serve`'s HTTP callers
    each: Callable[[dict[str, Any]], None] | None = None


class Operation(NamedTuple):
    name: str
    version: int
    summary: str
    input_model: type[InputModel]
    handler: Callable[[OpContext, Any], dict[str, Any]]
    side_effect: SideEffect
    capability: Capability | None = None
    mcp_tool: str | None = None
    description: str = ""
    also_in: frozenset[str] = frozenset()  # further tiers that expose the same tool
    idempotent: bool = False  # a write whose repetition with the same arguments changes nothing
    text_field: str | None = None  # MCP text content: this result field instead of the JSON
    stability: Stability = "stable"
    approval_policy: ApprovalPolicy = "none"
    destructive: bool = False  # it may end or overwrite something (MCP destructiveHint)
    response: str | None = None  # the response schema id; None: derived (`response_schema`)

    @property
    def response_schema(self) -> str:
        """The id of the response's schema: given, else `threadshare-memory-<verb>@v<version>`
        for a `threadshare_memory_<verb>` tool, `teamlore-<name>@v<version>` for the rest."""
        if self.response:
            return self.response
        tool = self.mcp_tool or ""
        if tool.startswith("threadshare_memory_"):
            verb = tool.removeprefix("threadshare_memory_").replace("_", "-")
            return f"threadshare-memory-{verb}@v{self.version}"
        return f"teamlore-{self.name.replace('.', '-').replace('_', '-')}@v{self.version}"

    def metadata(self) -> dict[str, Any]:
        """What the registry says about the operation beside its input schema."""
        return {
            "operation": self.name,
            "version": self.version,
            "stability": self.stability,
            "sideEffect": self.side_effect,
            "approvalPolicy": self.approval_policy,
            "responseSchema": self.response_schema,
        }

    @property
    def tiers(self) -> frozenset[str]:
        return self.also_in | ({self.capability} if self.capability else set())

    def run(self, ctx: OpContext, payload: dict[str, Any]) -> dict[str, Any]:
        # calls run at the same time, first calls too: an operation imports its modules on first
        # use, and Python's per-module import locks keep two threads importing them at once apart
        # as long as no modules import each other while loading (tests/test_architecture.py)
        return self.handler(ctx, parse_request(self.input_model, payload))

    def run_json(self, ctx: OpContext, arguments: dict[str, Any]) -> dict[str, Any]:
        """`run` for arguments that arrived as JSON (an MCP tool call): each has the JSON type
        its schema declares (`parse_request(strict=True)`)."""
        return self.handler(ctx, parse_request(self.input_model, arguments, strict=True))


def parse_request(model: type[InputModel], payload: dict[str, Any], *, strict: bool = False) -> Any:
    """The request, or INVALID_ARGUMENT naming its first problem (a `PlainRequest` raises it
    itself).

    The CLI and the page send Python values their own parsers made, and pydantic's lax mode
    reads them. `strict`: the payload is JSON from a client (MCP arguments), and each value must
    have the JSON type the schema declares: `"5"` is not an integer, `"yes"` not a boolean
    (pydantic's strict JSON mode). A number with no fraction (`5.0`) is an integer, as JSON
    Schema says: some clients send every number as a float."""
    try:
        if not strict:
            return model.model_validate(payload)
        whole = (
            {k: _integral(v) for k, v in payload.items()} if isinstance(payload, dict) else payload
        )
        return model.model_validate_json(json.dumps(whole), strict=True)
    except errors.TeamloreError:
        raise
    except Exception as exc:
        from pydantic import ValidationError  # loaded already: a pydantic model raised

        if isinstance(exc, ValidationError):
            from teamlore.contracts.formats import PATTERN_NAMES  # with a refusal only

            refusal = errors.from_validation_error(
                exc,
                errors.INVALID_ARGUMENT,
                plain=True,
                patterns=PATTERN_NAMES,
                schema=model.model_json_schema,
            )
            raise _naming_the_json_type(refusal, exc.errors()[0]) if strict else refusal from None
        raise


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _naming_the_json_type(refusal: errors.TeamloreError, first: Any) -> errors.TeamloreError:
    """A refusal of a value of the wrong JSON type says which type it was."""
    from teamlore.ops.plain_request import TYPE_ERRORS, given_type

    if first.get("type") not in TYPE_ERRORS:
        return refusal
    message = f"{refusal.message}{given_type(first.get('input'))}"
    return errors.TeamloreError(refusal.error, message, **refusal.details)


class Registry(Record):
    """Every operation by name: what the CLI and the MCP server expose."""

    operations: dict[str, Operation] = field(default_factory=dict)

    def add(self, op: Operation) -> Operation:
        if op.name in self.operations:
            raise ValueError(f"operation {op.name} defined twice")
        self.operations[op.name] = op
        return op

    def get(self, name: str) -> Operation:
        if name in _MODULE_OF_OPERATION:
            # even when registered: an operation registers part-way through its module's
            # import, and a first call on another thread must wait until the module has loaded
            # (the import lock; once loaded, a lookup in sys.modules)
            importlib.import_module(_MODULE_OF_OPERATION[name])
        if name not in self.operations:
            load_operations()
        return self.operations[name]

    def for_capability(self, *capabilities: str) -> list[Operation]:
        """The MCP tools a launch with these capabilities registers (union), by operation name:
        the order operations were imported in depends on what the process did before, and a
        client config written from this list (Codex's `enabled_tools`) must be the same bytes
        from any process."""
        tiers: frozenset[str] = frozenset().union(*(CAPABILITY_TIERS[c] for c in capabilities))
        return sorted(
            (op for op in self.operations.values() if op.mcp_tool and op.tiers & tiers),
            key=lambda op: op.name,
        )


REGISTRY = Registry()


def operation(
    name: str,
    *,
    version: int = 1,
    input_model: type[InputModel],
    side_effect: SideEffect,
    capability: Capability | None = None,
    mcp_tool: str | None = None,
    description: str = "",
    also_in: tuple[Capability, ...] = (),
    idempotent: bool = False,
    text_field: str | None = None,
    stability: Stability = "stable",
    approval_policy: ApprovalPolicy = "none",
    destructive: bool = False,
    response: str | None = None,
) -> Callable[
    [Callable[[OpContext, Any], dict[str, Any]]], Callable[[OpContext, Any], dict[str, Any]]
]:
    """Register the decorated handler as an operation."""

    def decorate(
        handler: Callable[[OpContext, Any], dict[str, Any]],
    ) -> Callable[[OpContext, Any], dict[str, Any]]:
        summary = (handler.__doc__ or name).strip().splitlines()[0]
        REGISTRY.add(
            Operation(
                name,
                version,
                summary,
                input_model,
                handler,
                side_effect,
                capability,
                mcp_tool,
                description or summary,
                frozenset(also_in),
                idempotent,
                text_field,
                stability,
                approval_policy,
                destructive,
                response,
            )
        )
        return handler

    return decorate


def run_operation(name: str, ctx: OpContext, payload: dict[str, Any]) -> dict[str, Any]:
    return REGISTRY.get(name).run(ctx, payload)


def load_capabilities(*capabilities: str) -> Registry:
    """The registry with at least the operations of these launch capabilities' MCP tools
    (`CAPABILITY_MODULES`)."""
    for capability in capabilities:
        for module in CAPABILITY_MODULES[capability]:
            importlib.import_module(module)
    return REGISTRY


def load_operations() -> Registry:
    """Import every module of `teamlore.ops` and its area sub-packages (each registers its
    operations; idempotent). A new operations module needs no registration anywhere else."""
    import pkgutil

    import teamlore.ops as package

    for module in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        if module.name != __name__:
            importlib.import_module(module.name)
    return REGISTRY
