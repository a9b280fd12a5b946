"""The three restricted runner profiles: `claude`, `codex`, `openai` (docs/runner.md).

A profile says exactly how a task's bytes reach a model and how the answer comes back:

- `claude`: `claude -p --output-format json --tools "" --strict-mcp-config --mcp-config
  '{"mcpServers":{}}' --no-session-persistence --setting-sources "" [--model M]`, the task on
  stdin (closed after the bytes), a throw-away HOME/CLAUDE_CONFIG_DIR, the endpoint through
  ANTHROPIC_BASE_URL; the answer is `.result` of the JSON on stdout.
- `codex`: `codex exec --skip-git-repo-check --ephemeral --sandbox read-only --color never
  --ignore-rules --json -o <file> -`, a one-time CODEX_HOME whose config.toml fixes approval
  "never", no MCP servers, every shell/code/browser/plugin feature off and (with an endpoint) a
  model provider speaking the Responses API; the answer is the `-o` last-message file, the
  tokens it spent are in the `--json` events on stdout.
- `openai`: no process: the existing OpenAI-compatible client (`teamlore.models`), model profile
  `[models.runner]` from config.toml (else `[models.default]`); the task bytes are the one user
  message.

Every CLI runs with an environment built from an allow-list (locale, proxy, certificates, the
credential variable of that CLI): nothing of the caller's agent session (CLAUDECODE, CODEX_*,
NODE_OPTIONS, LD_*, other secrets) leaks in. `describe()` is the profile document whose digest is
part of every plan (`runnerProfile`) — argv template, environment names, limits, binary identity —
so changing any of them voids pending plans.

The two CLI profiles are also RestrictedExtractionRunner@v1 documents (`restricted_profile`),
checked against that contract whenever a profile loads: a profile that would not be one (a tool,
a network or a session allowed; no argument template) refuses with `RUNNER_PROFILE_INVALID`
before anything runs. The `openai` runner starts no process and is not such a profile.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson
from pydantic import ValidationError

from teamlore.contracts.runner import (
    RESTRICTED_RUNNER_FORMAT,
    RestrictedExtractionRunner,
    RunnerConformance,
)
from teamlore.core import errors
from teamlore.core.canonical import digest
from teamlore.runner.binaries import BinaryIdentity, identify, resolve_binary
from teamlore.runner.process import RUN_MARKER_ENV, Limits, run_bounded
from teamlore.runner.scratch import scratch_folder
from teamlore.runner.usage import NOT_REPORTED, RunUsage, claude_usage, codex_usage

if TYPE_CHECKING:
    from teamlore.models.base import Usage

RunnerName = Literal["claude", "codex", "openai"]
RUNNER_NAMES: tuple[RunnerName, ...] = ("claude", "codex", "openai")
PROFILE_VERSION = "restricted-runner@1"

DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024
TIMEOUT_ENV = "TEAMLORE_RUNNER_TIMEOUT_S"
MAX_OUTPUT_ENV = "TEAMLORE_RUNNER_MAX_OUTPUT_BYTES"

# passed through to every CLI runner when set: locale, proxies, certificates
_COMMON_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
)
_CLAUDE_QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_MAX_RETRIES": "2",
}
_CODEX_FEATURES_OFF = (
    "shell_tool",
    "unified_exec",
    "code_mode_host",
    "apps",
    "plugins",
    "plugin_sharing",
    "remote_plugin",
    "browser_use",
    "browser_use_external",
    "computer_use",
    "image_generation",
    "multi_agent",
    "hooks",
    "view_image",
    "tool_suggest",
    "skill_mcp_dependency_install",
    "in_app_updates",
    "api_key_model_discovery",
    "shell_snapshot",
    "goals",
    "sleep_tool",
    "unbounded_connection_retries",
    "enable_request_compression",
)
CODEX_KEY_ENV = "TEAMLORE_RUNNER_API_KEY"

# called as a runner's bytes may start to leave: its process group, or None without a process
OnStart = Callable[[int | None], None]


def limits_from(environ: Mapping[str, str]) -> Limits:
    """The runner limits: defaults, or TEAMLORE_RUNNER_TIMEOUT_S / _MAX_OUTPUT_BYTES."""
    try:
        timeout = float(environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT_S)
        cap = int(environ.get(MAX_OUTPUT_ENV) or DEFAULT_MAX_OUTPUT_BYTES)
    except ValueError:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT, f"{TIMEOUT_ENV} / {MAX_OUTPUT_ENV} must be numbers"
        ) from None
    if not 0 < timeout <= 7200 or not 1024 <= cap <= 256 * 1024 * 1024:
        raise errors.TeamloreError(
            errors.INVALID_ARGUMENT,
            f"{TIMEOUT_ENV} must be in (0, 7200] and {MAX_OUTPUT_ENV} in [1024, 256 MiB]",
        )
    return Limits(timeout, cap)


@dataclass(frozen=True, slots=True)
class RunnerChoice:
    """What the user asked for: `--runner`, `--runner-model`, `--runner-endpoint`."""

    name: RunnerName
    model: str | None = None
    endpoint: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "endpoint": self.endpoint}


@dataclass(frozen=True, slots=True)
class RunOutput:
    """A runner's answer text and what the run spent as its client reported it, plus what the
    conformance probe judges: files the runner left in its working directory and processes
    left in its group after it exited."""

    text: str
    work_files: tuple[str, ...] = ()
    lingering: bool = False
    usage: RunUsage = NOT_REPORTED


@dataclass(slots=True)
class Runner:
    """A resolved runner: identity, disclosure facts and how to run one task."""

    choice: RunnerChoice
    provider: str
    model: str
    endpoint: str
    retention: Literal["unknown", "no-retention", "provider-policy"]
    binary: BinaryIdentity
    limits: Limits
    argv_template: tuple[str, ...]
    env_names: tuple[str, ...]
    execute: Callable[[bytes, OnStart | None, Mapping[str, bytes]], RunOutput] = field(repr=False)
    # the entries of `env_names` that carry a credential when the caller has one (an API key
    # variable, a copied login file), set or not: what a person sets in a shell, not a part of
    # the runner a conformance probe judges
    credential_names: tuple[str, ...] = ()

    def describe(self) -> dict[str, Any]:
        return {
            "profileVersion": PROFILE_VERSION,
            "runner": self.choice.name,
            "provider": self.provider,
            "model": self.model,
            "endpoint": self.endpoint,
            "binary": self.binary.to_json(),
            "argv": list(self.argv_template),
            "env": sorted(self.env_names),
            "timeoutSeconds": self.limits.timeout_s,
            "maxOutputBytes": self.limits.max_output_bytes,
        }

    @property
    def profile_id(self) -> str:
        """`runnerProfile` of a plan: the profile name and the digest of its document."""
        return f"{self.choice.name}-{PROFILE_VERSION}:{digest(self.describe())}"

    @property
    def conformance_key(self) -> str:
        """The conformance record's key: runner, provider, model and endpoint."""
        return f"{self.choice.name}:{digest([self.provider, self.model, self.endpoint])[:16]}"

    @property
    def fingerprint(self) -> str:
        """What a conformance record is bound to: the binary identity and the profile."""
        return digest({"binary": self.binary.to_json(), "profile": self.profile_id})

    def run(
        self,
        stdin: bytes,
        on_start: OnStart | None = None,
        *,
        work_seed: Mapping[str, bytes] | None = None,
    ) -> RunOutput:
        """Run one task; `on_start` is called as the bytes may start to leave (with the runner's
        process group, or None for a runner without a process). `work_seed` (the conformance
        probe only) puts files into the runner's working directory first: repo-relative names
        → bytes; RunOutput.work_files lists them too."""
        return self.execute(stdin, on_start, work_seed or {})


CLI_ADAPTERS = {"claude": "claude-cli", "codex": "codex-cli"}


def restricted_profile(
    runner: Runner, conformance: RunnerConformance | None = None
) -> RestrictedExtractionRunner:
    """The RestrictedExtractionRunner@v1 document of a CLI runner (RUNNER_PROFILE_INVALID when
    it would not be one)."""
    document = {
        "format": RESTRICTED_RUNNER_FORMAT,
        "adapter": CLI_ADAPTERS.get(runner.choice.name, runner.choice.name),
        "version": runner.binary.version,
        "argvTemplate": list(runner.argv_template),
        "toolPolicy": "none",
        "network": "model-only",
        "ephemeral": "required",
        "timeoutMs": round(runner.limits.timeout_s * 1000),
        "maxOutputBytes": runner.limits.max_output_bytes,
        "conformance": None if conformance is None else conformance.to_wire(),
    }
    try:
        return RestrictedExtractionRunner.from_wire(document)
    except ValidationError as exc:
        raise errors.from_validation_error(
            exc, errors.RUNNER_PROFILE_INVALID, prefix=f"{runner.choice.name} profile: "
        ) from None


def checked(runner: Runner) -> Runner:
    """`runner`, once its profile is a valid RestrictedExtractionRunner@v1."""
    restricted_profile(runner)
    return runner


def _passthrough(environ: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    return {name: environ[name] for name in names if environ.get(name)}


def _plant(work: Path, seed: Mapping[str, bytes]) -> None:
    for name, data in seed.items():
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _left_files(work: Path) -> tuple[str, ...]:
    return tuple(sorted(p.name for p in work.iterdir())) if work.is_dir() else ()


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise errors.TeamloreError(
            errors.RUNNER_OUTPUT_INVALID, f"{what} is not UTF-8 text", reason="not-utf8"
        ) from None


# -- claude -------------------------------------------------------------------------------------

CLAUDE_DEFAULT_ENDPOINT = "https://api.anthropic.com"
CLAUDE_LOGIN_ENTRY = "claude-config/.credentials.json"  # a copy of the caller's `claude login`


def _claude_argv(binary: Path, model: str | None) -> list[str]:
    argv = [
        str(binary),
        "-p",
        "--output-format",
        "json",
        "--tools",
        "",
        "--strict-mcp-config",
        "--mcp-config",
        '{"mcpServers":{}}',
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--disable-slash-commands",
    ]
    return [*argv, "--model", model] if model else argv


def _caller_claude_credentials(environ: Mapping[str, str]) -> Path | None:
    base = environ.get("CLAUDE_CONFIG_DIR") or (
        str(Path(environ["HOME"]) / ".claude") if environ.get("HOME") else None
    )
    if base is None or environ.get("ANTHROPIC_API_KEY"):
        return None
    found = Path(base) / ".credentials.json"
    return found if found.is_file() else None


def _claude_answer(stdout: bytes) -> str:
    text = _decode(stdout, "claude's output")
    try:
        result = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise errors.TeamloreError(
            errors.RUNNER_OUTPUT_INVALID,
            "claude did not print its --output-format json result",
            reason="not-json",
        ) from None
    if not isinstance(result, dict) or not isinstance(result.get("result"), str):
        raise errors.TeamloreError(
            errors.RUNNER_OUTPUT_INVALID, "claude's JSON has no result text", reason="no-result"
        )
    if result.get("is_error"):
        raise errors.TeamloreError(
            errors.RUNNER_OUTPUT_INVALID,
            f"claude reported an error ({result.get('subtype') or 'is_error'})",
            reason="runner-error",
        )
    return str(result["result"])


def _claude_reported_failure(stdout: bytes) -> str | None:
    """What a failed `claude -p --output-format json` said went wrong: its result text
    (`API Error: 500 …`, `Invalid API key · Please run /login`), where its stderr may hold
    only noise."""
    try:
        result = orjson.loads(stdout)
    except orjson.JSONDecodeError:
        return None
    if (
        isinstance(result, dict)
        and result.get("is_error")
        and isinstance(result.get("result"), str)
    ):
        return str(result["result"])
    return None


def claude_runner(choice: RunnerChoice, environ: Mapping[str, str], home: Path | None) -> Runner:
    binary_path = resolve_binary("claude", env_var="TEAMLORE_CLAUDE_BIN", environ=environ)
    limits = limits_from(environ)
    passed = _passthrough(environ, (*_COMMON_ENV, "ANTHROPIC_API_KEY"))
    endpoint = choice.endpoint or CLAUDE_DEFAULT_ENDPOINT

    credentials = None if choice.endpoint else _caller_claude_credentials(environ)

    def env_for(scratch: Path) -> dict[str, str]:
        env = {
            **passed,
            **_CLAUDE_QUIET,
            "HOME": str(scratch / "home"),
            "CLAUDE_CONFIG_DIR": str(scratch / "home" / ".claude"),
        }
        if choice.endpoint:
            env["ANTHROPIC_BASE_URL"] = choice.endpoint
        return env

    with scratch_folder() as probe_dir:
        (probe_dir / "home").mkdir()
        identity = identify(binary_path, env=env_for(probe_dir), cwd=probe_dir, home=home)

    def execute(stdin: bytes, on_start: OnStart | None, seed: Mapping[str, bytes]) -> RunOutput:
        with scratch_folder() as scratch:
            (scratch / "home").mkdir()
            (scratch / "work").mkdir()
            _plant(scratch / "work", seed)
            if credentials is not None:  # a `claude login` (no API key): copy only that file
                config = scratch / "home" / ".claude"
                config.mkdir(mode=0o700)
                shutil.copyfile(credentials, config / ".credentials.json")
                os.chmod(config / ".credentials.json", 0o600)
            env = env_for(scratch)
            env[RUN_MARKER_ENV] = scratch.name
            result = run_bounded(
                _claude_argv(binary_path, choice.model),
                stdin=stdin,
                env=env,
                cwd=scratch / "work",
                limits=limits,
                what="claude",
                on_start=on_start,
                reported_failure=_claude_reported_failure,
                spent=lambda stdout: claude_usage(stdout).to_json(),
            )
            usage = claude_usage(result.stdout)
            try:
                answer = _claude_answer(result.stdout)
            except errors.TeamloreError as err:
                err.details.setdefault("usage", usage.to_json())  # an error result still costs
                raise
            return RunOutput(answer, _left_files(scratch / "work"), result.lingering, usage)

    template = _claude_argv(Path("claude"), choice.model)
    env_names = (
        (*passed, *_CLAUDE_QUIET, "HOME", "CLAUDE_CONFIG_DIR")
        + (("ANTHROPIC_BASE_URL",) if choice.endpoint else ())
        + ((CLAUDE_LOGIN_ENTRY,) if credentials else ())
    )
    return checked(
        Runner(
            choice=choice,
            provider="anthropic" if not choice.endpoint else "anthropic-compatible",
            model=choice.model or "cli-default",
            endpoint=endpoint,
            retention="provider-policy",
            binary=identity,
            limits=limits,
            argv_template=tuple(template),
            env_names=tuple(env_names),
            execute=execute,
            credential_names=("ANTHROPIC_API_KEY", CLAUDE_LOGIN_ENTRY),
        )
    )


# -- codex --------------------------------------------------------------------------------------

CODEX_DEFAULT_ENDPOINT = "https://api.openai.com/v1"
CODEX_LOGIN_ENTRY = "codex-home/auth.json"  # a copy of the caller's `codex login`


def _toml_string(value: str) -> str:
    return orjson.dumps(value).decode()


def codex_config(choice: RunnerChoice) -> str:
    """The one-time CODEX_HOME/config.toml: top-level keys first, then tables."""
    lines = [
        'approval_policy = "never"',
        'sandbox_mode = "read-only"',
        'web_search = "disabled"',
        "check_for_update_on_startup = false",
    ]
    if choice.model:
        lines.append(f"model = {_toml_string(choice.model)}")
    if choice.endpoint:
        lines += [
            'model_provider = "teamlore_runner"',
            "",
            "[model_providers.teamlore_runner]",
            'name = "teamlore runner endpoint"',
            f"base_url = {_toml_string(choice.endpoint)}",
            'wire_api = "responses"',
            f'env_key = "{CODEX_KEY_ENV}"',
            "request_max_retries = 1",
            "stream_max_retries = 0",
        ]
    lines += ["", "[analytics]", "enabled = false", "", "[feedback]", "enabled = false", ""]
    lines += ["[features]", *(f"{name} = false" for name in _CODEX_FEATURES_OFF), ""]
    return "\n".join(lines)


def _codex_argv(binary: Path, answer_file: Path) -> list[str]:
    return [
        str(binary),
        "exec",
        "--skip-git-repo-check",
        "--ephemeral",
        "--sandbox",
        "read-only",
        "--color",
        "never",
        "--ignore-rules",
        "--json",
        "-o",
        str(answer_file),
        "-",
    ]


def _caller_codex_auth(environ: Mapping[str, str]) -> Path | None:
    base = environ.get("CODEX_HOME") or (
        str(Path(environ["HOME"]) / ".codex") if environ.get("HOME") else None
    )
    if base is None:
        return None
    auth = Path(base) / "auth.json"
    return auth if auth.is_file() else None


def codex_runner(choice: RunnerChoice, environ: Mapping[str, str], home: Path | None) -> Runner:
    binary_path = resolve_binary("codex", env_var="TEAMLORE_CODEX_BIN", environ=environ)
    limits = limits_from(environ)
    passed = _passthrough(environ, _COMMON_ENV)
    key = environ.get("OPENAI_API_KEY")
    auth_file = None if choice.endpoint else _caller_codex_auth(environ)

    def env_for(scratch: Path) -> dict[str, str]:
        env = {
            **passed,
            "HOME": str(scratch / "home"),
            "CODEX_HOME": str(scratch / "codex-home"),
        }
        if key:
            env[CODEX_KEY_ENV if choice.endpoint else "OPENAI_API_KEY"] = key
        return env

    def prepare(scratch: Path) -> None:
        (scratch / "home").mkdir()
        (scratch / "work").mkdir()
        codex_home = scratch / "codex-home"
        codex_home.mkdir(mode=0o700)
        (codex_home / "config.toml").write_text(codex_config(choice), encoding="utf-8")
        if auth_file is not None:
            shutil.copyfile(auth_file, codex_home / "auth.json")
            os.chmod(codex_home / "auth.json", 0o600)

    with scratch_folder() as probe_dir:
        prepare(probe_dir)
        identity = identify(binary_path, env=env_for(probe_dir), cwd=probe_dir, home=home)

    def execute(stdin: bytes, on_start: OnStart | None, seed: Mapping[str, bytes]) -> RunOutput:
        with scratch_folder() as scratch:
            prepare(scratch)
            _plant(scratch / "work", seed)
            answer_file = scratch / "last-message.txt"
            env = env_for(scratch)
            env[RUN_MARKER_ENV] = scratch.name
            result = run_bounded(
                _codex_argv(binary_path, answer_file),
                stdin=stdin,
                env=env,
                cwd=scratch / "work",
                limits=limits,
                what="codex",
                on_start=on_start,
                spent=lambda stdout: codex_usage(stdout).to_json(),
            )
            usage = codex_usage(result.stdout)
            try:
                answer = _read_answer_file(answer_file, limits)
            except errors.TeamloreError as err:
                err.details.setdefault("usage", usage.to_json())
                raise
            return RunOutput(answer, _left_files(scratch / "work"), result.lingering, usage)

    env_names = (*passed, "HOME", "CODEX_HOME") + (
        ((CODEX_KEY_ENV if choice.endpoint else "OPENAI_API_KEY"),) if key else ()
    )
    return checked(
        Runner(
            choice=choice,
            provider="openai" if not choice.endpoint else "openai-compatible",
            model=choice.model or "cli-default",
            endpoint=choice.endpoint or CODEX_DEFAULT_ENDPOINT,
            retention="provider-policy",
            binary=identity,
            limits=limits,
            argv_template=(*_codex_argv(Path("codex"), Path("<answer-file>")),),
            env_names=tuple(env_names) + ((CODEX_LOGIN_ENTRY,) if auth_file else ()),
            execute=execute,
            credential_names=("OPENAI_API_KEY", CODEX_KEY_ENV, CODEX_LOGIN_ENTRY),
        )
    )


def _read_answer_file(path: Path, limits: Limits) -> str:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise errors.TeamloreError(
            errors.RUNNER_OUTPUT_INVALID, "codex wrote no last message", reason="no-answer"
        ) from None
    if size > limits.max_output_bytes:
        raise errors.TeamloreError(
            errors.RUNNER_OUTPUT_TOO_LARGE,
            f"codex's last message is larger than {limits.max_output_bytes} bytes",
            maxOutputBytes=limits.max_output_bytes,
            stream="last-message",
        )
    return _decode(path.read_bytes(), "codex's last message")


# -- openai -------------------------------------------------------------------------------------

RUNNER_MODEL_PROFILE = "runner"
_API_PATHS = {"chat": "chat/completions", "responses": "responses"}


def _openai_limits(profile_name: str, environ: Mapping[str, str], home: Path | None) -> Limits:
    """The openai runner's limits: TEAMLORE_RUNNER_TIMEOUT_S when set (this run's explicit
    choice), else the `timeout_s` its model profile's table writes, else the runner default."""
    from teamlore.core.config import load_table
    from teamlore.models.profiles import ModelProfileConfig

    limits = limits_from(environ)
    if environ.get(TIMEOUT_ENV):
        return limits
    table = f"models.{profile_name}"
    config = load_table(table, ModelProfileConfig, home)
    if "timeout_s" not in config.model_fields_set:
        return limits
    return Limits(config.timeout_s, limits.max_output_bytes, f"timeout_s of [{table}]")


# a failed request of the openai runner, by the client's code: the runner code it is reported
# as (docs/runner.md "Limits and failures": one family of codes whatever the runner)
_OPENAI_REQUEST_FAILED = {
    "MODEL_AUTH_FAILED": "refused the request",
    "MODEL_RATE_LIMITED": "kept rate limiting the request",
    "MODEL_UNAVAILABLE": "failed",
    "MODEL_REQUEST_REJECTED": "rejected the request",
}


def _openai_failure(err: errors.TeamloreError, endpoint: str, limits: Limits) -> Exception:
    """A failed call of the client as the runner code a CLI runner's failure has
    (docs/runner.md): MODEL_TIMEOUT → RUNNER_TIMEOUT naming the setting that gave the limit; a
    response over the output cap → RUNNER_OUTPUT_TOO_LARGE; an answer that is no JSON object
    (prose, empty, cut off, refused) → RUNNER_OUTPUT_INVALID; a request refused or failed after
    the retries (HTTP 401/403, 429, 5xx, other 4xx, no connection) → RUNNER_EXIT_NONZERO. The
    client's message stays (it names the HTTP status), and `details.modelCode` keeps its code."""
    code = err.code
    details = {**err.details, "modelCode": code}
    if code == "MODEL_TIMEOUT":
        mapped = errors.TeamloreError(
            errors.RUNNER_TIMEOUT,
            f"the model at {endpoint} did not answer within its {limits.timeout_s:g} s limit "
            f"({limits.timeout_setting})",
            timeoutSeconds=limits.timeout_s,
            timeoutSetting=limits.timeout_setting,
        )
    elif code == "MODEL_BAD_RESPONSE" and err.details.get("reason") == "too_large":
        mapped = errors.TeamloreError(
            errors.RUNNER_OUTPUT_TOO_LARGE,
            f"the model at {endpoint} answered more than {limits.max_output_bytes} bytes "
            f"(the runner's output cap, {MAX_OUTPUT_ENV})",
            maxOutputBytes=limits.max_output_bytes,
            stream="response",
        )
    elif code == "MODEL_BAD_RESPONSE":
        mapped = errors.TeamloreError(
            errors.RUNNER_OUTPUT_INVALID, f"the model's answer is unusable: {err.message}"
        )
    elif code in _OPENAI_REQUEST_FAILED:
        mapped = errors.TeamloreError(
            errors.RUNNER_EXIT_NONZERO,
            f"the model at {endpoint} {_OPENAI_REQUEST_FAILED[code]} ({code}): {err.message}",
        )
    else:
        return err
    mapped.details.update({k: v for k, v in details.items() if k not in mapped.details})
    return mapped


def _spent(reported: Usage) -> RunUsage:
    """A model call's reported usage as a run's spend."""
    return RunUsage(
        reported.input_tokens,
        reported.output_tokens,
        reported.cost_usd,  # the provider's own figure, when it gives one (OpenRouter)
        "provider" if reported.cost_usd is not None else None,
    )


def openai_runner(choice: RunnerChoice, environ: Mapping[str, str], home: Path | None) -> Runner:
    from teamlore import __version__
    from teamlore.models.base import ChatMessage, ModelError, ModelRequest
    from teamlore.models.openai_compat import OpenAICompatClient
    from teamlore.models.profiles import load_profile, normalize_base_url, profile_names

    name = RUNNER_MODEL_PROFILE if RUNNER_MODEL_PROFILE in profile_names(home) else None
    # --runner-model / --runner-endpoint win over the profile (and may stand in for it)
    overlay = {**environ}
    overrides: dict[str, Any] = {}
    if choice.model:
        overlay["OPENAI_MODEL"] = overrides["model"] = choice.model
    if choice.endpoint:
        # checked before the profile reads it as OPENAI_BASE_URL, whose refusal would name
        # a variable the person never set
        try:
            overrides["base_url"] = normalize_base_url(choice.endpoint)
        except ValueError as exc:
            # the request field, as other refusals name it: the CLI shows it as its flag
            raise errors.TeamloreError(errors.INVALID_ARGUMENT, f"runnerEndpoint: {exc}") from None
        overlay["OPENAI_BASE_URL"] = choice.endpoint
    profile = load_profile(name, home=home, environ=overlay)
    profile = profile.model_copy(update=overrides)
    limits = _openai_limits(profile.name, environ, home)
    client_doc = {
        "client": "teamlore-openai-compat",
        "version": __version__,
        "api": profile.api,
        "profile": profile.name,
    }
    identity = BinaryIdentity(
        name="teamlore-openai-compat",
        path=Path("teamlore"),
        sha256=digest(client_doc),
        size=0,
        version=__version__,
    )

    def execute(stdin: bytes, on_start: OnStart | None, seed: Mapping[str, bytes]) -> RunOutput:
        # no working directory and no tools: `seed` has nowhere to go and nothing to read it
        request = ModelRequest(
            messages=(ChatMessage(role="user", content=_decode(stdin, "the task")),),
            max_output_tokens=16384,
            output="json_object",
        )
        with OpenAICompatClient.from_profile(
            profile, timeout_s=limits.timeout_s, max_response_bytes=limits.max_output_bytes
        ) as client:
            if on_start is not None:
                on_start(None)  # no process of its own: the bytes leave from here
            try:
                response = client.complete(request)
            except errors.TeamloreError as err:
                if isinstance(err, ModelError) and err.usage is not None:
                    # an unusable answer the provider still billed: its spend goes along
                    err.details["usage"] = _spent(err.usage).to_json()
                raise _openai_failure(err, profile.base_url, limits) from None
        spent = _spent(response.usage)
        if len(response.text.encode("utf-8")) > limits.max_output_bytes:
            raise errors.TeamloreError(
                errors.RUNNER_OUTPUT_TOO_LARGE,
                f"the model answered more than {limits.max_output_bytes} bytes",
                maxOutputBytes=limits.max_output_bytes,
                stream="response",
                usage=spent.to_json(),
            )
        return RunOutput(response.text, usage=spent)

    return Runner(
        choice=choice,
        provider="openai-compatible",
        model=profile.model,
        endpoint=profile.base_url,
        retention="provider-policy",
        binary=identity,
        limits=limits,
        argv_template=(f"POST {profile.base_url}/{_API_PATHS[profile.api]}",),
        env_names=(profile.api_key_env,) if profile.api_key is not None else (),
        execute=execute,
        credential_names=(profile.api_key_env,),
    )


def resolve_runner(
    choice: RunnerChoice, *, environ: Mapping[str, str] | None = None, home: Path | None = None
) -> Runner:
    """The runner for `choice`, its binary identified (RUNNER_BINARY_NOT_FOUND etc.)."""
    env = os.environ if environ is None else environ
    if choice.name == "claude":
        return claude_runner(choice, env, home)
    if choice.name == "codex":
        return codex_runner(choice, env, home)
    return openai_runner(choice, env, home)
