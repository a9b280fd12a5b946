"""Drive the real Claude Code and Codex CLIs offline against a scripted model on 127.0.0.1.

The one shared harness for tests where a real agent CLI must call teamlore (MCP tools, hooks,
skills, the batch runner). Background and every pitfall: docs/agents.md and the research note
`agent-cli-e2e.md`. Mark such tests `@pytest.mark.e2e`.

Installing the CLIs
    `agent_clis` (session fixture, in tests/conftest.py) -> `AgentClis(claude=Path, codex=Path)`.
    It runs `npm install --prefix <cache>` once for the pinned `@anthropic-ai/claude-code` and
    `@openai/codex` versions below; the cache (`$TEAMLORE_TEST_CACHE` or
    `~/.cache/teamlore-tests`) / `agent-clis-claude-<v>-codex-<v>` is reused when complete, and a
    file lock keeps parallel pytest processes from installing twice. It skips (clear reason) when
    npm is missing or the registry cannot be reached; any other install failure fails the test.
    Outside pytest: `install_agent_clis()` returns the same or raises `CliUnavailable`.

The scripted model
    with ScriptedModel(Scenario(steps=[ToolStep("threadshare_memory_search",
                                                {"query": "invoice", "limit": 5})],
                                final_text="done: {last_result}")) as model:
        run = run_claude(agent_clis, "find it", cwd=repo, home=tmp_path / "home",
                         model=model, mcp_config=claude_mcp_json)
        assert "invoice-export" in run.result

    `ScriptedModel` is a threaded stdlib HTTP server (port 0) answering
    - `POST /v1/messages` (Anthropic Messages API, SSE) for `claude`,
    - `POST /v1/responses` (OpenAI Responses API, SSE) for `codex`,
    - `HEAD /api/hello` (Claude's connectivity probe) with 200.
    It is stateless per conversation: the step to play is the number of tool results already in
    the request (tool-search results do not count), so one server can serve several runs. For
    step N it calls `steps[N].tool`, matched against the offered tools exactly or by the
    `__<tool>` suffix (`mcp__<server>__<tool>` in Claude, namespace `mcp__<server>` in Codex),
    narrowed by `ToolStep.server` when two servers offer the same tool. When the tool is
    deferred behind tool search (Claude `ToolSearch`, Codex `tool_search`), it first plays the
    search call itself; when Claude still connects the MCP servers (user-scope servers start
    without blocking in `-p` mode), it first calls `WaitForMcpServers`, as a model would. Neither
    counts as a step. After the last step it answers `final_text`.
    `ToolStep.input` may be a dict or a callable `(Turn) -> dict` computed from the conversation
    so far: `turn.results` are the tool result texts in order (Codex's `Wall time ... Output:`
    prefix removed), `turn.json(i)` parses one (default: the last), `turn.body` is the request.
    `final_text` may be a string (`{last_result}` is replaced by the last result text) or a
    callable `(Turn) -> str`. A request that offers no tools gets `side_text`, or `final_text`
    with `Scenario(answer_without_tools=True)` (the batch runner runs the CLIs with no tools).
    Loop guards: at most `max_searches` tool searches per conversation and `max_requests` model
    requests per server; past them the server answers a plain "loop guard" text (or HTTP 500)
    and records the trip in `model.errors`. A requested tool that is not offered is also recorded
    in `model.errors` and answered with text, so tests fail on `assert not model.errors`.
    Every request is kept in `model.requests` (`LoggedRequest`: api, path, headers, body, answer)
    and, with `log_path=`, appended to a JSONL file. `model.request_text()` is every body as one
    decoded string (to assert that a hook's brief or an AGENTS.md reached the model).

Running a CLI
    `run_claude(clis, prompt, cwd=, home=, model=, mcp_config=None, allowed_tools=("mcp__teamlore",)
    , tool_search=False, extra_args=(), env=None, timeout=90)` -> `ClaudeRun` (`.result`,
    `.data` = the `--output-format json` object, `.is_error`, `.permission_denials`, `.elapsed`).
    `run_codex(clis, prompt, cwd=, home=, model=, config_toml=None, model_slug="fake-model",
    extra_args=(), env=None, timeout=90)` -> `CodexRun` (`.last_message`, `.events`,
    `.tool_calls` = the `mcp_tool_call` items, `.elapsed`).
    Both: `HOME=home`, `CLAUDE_CONFIG_DIR=home/.claude` / `CODEX_HOME=home/.codex` (created, so
    `teamlore install` in the same HOME is what the CLI reads), an environment scrubbed of
    `CLAUDECODE`, `CLAUDE_CODE_*`, `ANTHROPIC_*`, `OPENAI_*`, `CODEX_*` and of any inherited
    `TEAMLORE_HOME` unless passed in `env`, `stdin=DEVNULL`, a hard timeout (the process group is
    killed and `CliTimeout` raised), no telemetry, no retries. Codex gets its model provider,
    approval policy, sandbox and no-phone-home settings as `-c` overrides, so `config.toml` stays
    whatever the test (or `teamlore install`) wrote; `config_toml=` writes one first.
    Lower level: `isolated_env(home, extra)` (the scrubbed environment) and
    `run_with_hard_timeout(argv, cwd, env, timeout)` (stdin closed, own process group, killed
    with its children at the timeout or when done) for other CLIs and hooks.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self, TypeVar

CLAUDE_CODE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"
CLAUDE_PACKAGE = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
CODEX_PACKAGE = f"@openai/codex@{CODEX_VERSION}"
INSTALL_TIMEOUT = 900.0
T = TypeVar("T")


# -- installing the CLIs ----------------------------------------------------------------------


class CliUnavailable(Exception):
    """The CLIs cannot be had here (no npm, registry unreachable); the message says why."""


@dataclass(frozen=True)
class AgentClis:
    prefix: Path
    claude: Path
    codex: Path


def cache_root() -> Path:
    configured = os.environ.get("TEAMLORE_TEST_CACHE")
    if configured:
        return Path(configured)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "teamlore-tests"


def _install_dir() -> Path:
    return cache_root() / f"agent-clis-claude-{CLAUDE_CODE_VERSION}-codex-{CODEX_VERSION}"


def _locate(prefix: Path) -> AgentClis | None:
    modules = prefix / "node_modules"
    claude = modules / "@anthropic-ai" / "claude-code" / "bin" / "claude.exe"
    if not claude.is_file() or claude.stat().st_size < 1_000_000:  # a stub, not the binary
        claude = modules / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
    codex = modules / ".bin" / "codex"
    if claude.is_file() and os.access(claude, os.X_OK) and codex.exists():
        return AgentClis(prefix=prefix, claude=claude, codex=codex)
    return None


def _npm(args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    npm = shutil.which("npm")
    if npm is None:
        raise CliUnavailable("npm is not on PATH: cannot install the claude/codex CLIs")
    env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
    return subprocess.run(
        [npm, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        stdin=subprocess.DEVNULL,
    )


# npm's words when a download failed on the way (DNS, refused, TLS, proxy), not the package
_FETCH_FAILED = re.compile(r"request to \S+ failed, reason:")


def _registry_reachable() -> bool:
    try:
        done = _npm(["view", CODEX_PACKAGE, "version"], timeout=60)
    except (subprocess.TimeoutExpired, OSError):
        return False
    return done.returncode == 0 and CODEX_VERSION in done.stdout


def install_cached(
    target: Path, packages: list[str], locate: Callable[[Path], T | None], marker: dict[str, str]
) -> T:
    """`npm install` `packages` into the cache folder `target` once (under a file lock, through
    a staging folder renamed into place), and what `locate` finds there. CliUnavailable when npm
    or its registry cannot be had; RuntimeError for any other install failure."""
    done_marker = target / ".complete"
    if done_marker.exists() and (found := locate(target)):
        return found
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another pytest process may be installing
        if done_marker.exists() and (found := locate(target)):
            return found
        staging = target.parent / f"{target.name}.partial-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        args = ["install", "--prefix", str(staging), "--no-audit", "--no-save", *packages]
        try:
            done = _npm(args, timeout=INSTALL_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise CliUnavailable(f"npm install timed out after {INSTALL_TIMEOUT:.0f}s") from exc
        if done.returncode != 0 or locate(staging) is None:
            shutil.rmtree(staging, ignore_errors=True)
            tail = (done.stderr or done.stdout).strip()[-1500:]
            if _FETCH_FAILED.search(tail) or not _registry_reachable():
                raise CliUnavailable(f"the npm registry is unreachable: {tail}")
            raise RuntimeError(f"npm install of {' '.join(packages)} failed:\n{tail}")
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        done_marker.write_text(json.dumps(marker))
    found = locate(target)
    assert found is not None
    return found


def install_agent_clis() -> AgentClis:
    """The pinned CLIs from the cache, installing them first when needed (under a file lock)."""
    marker = {"claude": CLAUDE_CODE_VERSION, "codex": CODEX_VERSION}
    return install_cached(_install_dir(), [CLAUDE_PACKAGE, CODEX_PACKAGE], _locate, marker)


# -- the scripted model -----------------------------------------------------------------------


@dataclass
class Turn:
    """What a scripted step sees: the request body and the tool results so far."""

    body: dict[str, Any]
    results: list[str]

    @property
    def last_result(self) -> str:
        return self.results[-1] if self.results else ""

    def json(self, index: int = -1) -> Any:
        """Parse one tool result as JSON (the first {...} or [...] in it)."""
        text = self.results[index]
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=0)
        return json.loads(text[start:])


InputSpec = Mapping[str, Any] | Callable[[Turn], Mapping[str, Any]]
TextSpec = str | Callable[[Turn], str]


@dataclass
class ToolStep:
    tool: str
    input: InputSpec = field(default_factory=dict)
    server: str | None = None


@dataclass
class Scenario:
    steps: list[ToolStep] = field(default_factory=list)
    final_text: TextSpec = "done"
    side_text: str = "OK"
    # a request that offers no tools (a batch runner runs the CLI with none) gets final_text
    # instead of side_text
    answer_without_tools: bool = False
    max_searches: int = 3
    max_requests: int = 40
    # answer every model request with this HTTP error status (an API outage; the CLI records
    # its own error message in the transcript)
    fail_status: int | None = None


@dataclass
class LoggedRequest:
    api: str
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    answer: Any = None


# Claude tools the scripted model calls on its own to reach a step's tool (not steps themselves)
_HELPER_TOOLS = ("ToolSearch", "WaitForMcpServers")
_CODEX_PREFIX = re.compile(r"\AWall time: [^\n]*\nOutput:\n")


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text")
        )
    return ""


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _matches(name: str, step: ToolStep, prefix: str = "") -> bool:
    full = f"{prefix}__{name}" if prefix else name
    if step.server is not None and not full.startswith(f"mcp__{step.server}__"):
        return False
    return full == step.tool or full.endswith(f"__{step.tool}")


class _Conversation:
    """One request parsed the same way for both APIs."""

    def __init__(self, model: ScriptedModel, api: str, body: dict[str, Any]) -> None:
        self.model = model
        self.api = api
        self.body = body
        self.results: list[str] = []
        self.searches = 0
        if api == "anthropic":
            self._read_anthropic()
        else:
            self._read_responses()

    def _read_anthropic(self) -> None:
        search_ids: set[str] = set()
        for message in self.body.get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use" and block.get("name") in _HELPER_TOOLS:
                    search_ids.add(block.get("id"))
                    self.searches += 1
                elif (
                    block.get("type") == "tool_result"
                    and block.get("tool_use_id") not in search_ids
                ):
                    self.results.append(_text_of(block.get("content")))

    def _read_responses(self) -> None:
        for item in self.body.get("input", []):
            kind = item.get("type")
            if kind == "tool_search_call":
                self.searches += 1
            elif kind == "function_call_output":
                output = item.get("output")
                text = output if isinstance(output, str) else _text_of(output)
                self.results.append(_CODEX_PREFIX.sub("", text, count=1))

    def turn(self) -> Turn:
        return Turn(body=self.body, results=list(self.results))


class ScriptedModel:
    """A scripted Anthropic Messages + OpenAI Responses endpoint on 127.0.0.1 (see module doc)."""

    def __init__(self, scenario: Scenario, log_path: Path | None = None) -> None:
        self.scenario = scenario
        self.log_path = log_path
        self.requests: list[LoggedRequest] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._counter = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        # `shutdown` waits for the loop's next poll (0.5 s by default)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.01,), daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """Claude's ANTHROPIC_BASE_URL; Codex's provider base_url is `base_url + "/v1"`."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(timeout=5)
        self._server.server_close()

    def request_text(self) -> str:
        """Every logged request body's strings, decoded, joined by newlines."""
        return "\n".join(s for r in self.requests for s in _strings(r.body))

    def model_requests(self, api: str | None = None) -> list[LoggedRequest]:
        return [
            r for r in self.requests if r.api in ((api,) if api else ("anthropic", "responses"))
        ]

    def tool_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """(full name, input) of every tool call the server answered with, in order; a Codex
        namespaced tool is named `<namespace>__<tool>` like Claude's `mcp__<server>__<tool>`."""
        calls = []
        for request in self.requests:
            answer = request.answer or {}
            if answer.get("kind") == "tool":
                prefix = f"{answer['namespace']}__" if answer["namespace"] else ""
                calls.append((prefix + answer["name"], answer["input"]))
        return calls

    # -- request handling ---------------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}_{self._counter:04d}"

    def _log(self, entry: LoggedRequest) -> None:
        with self._lock:
            self.requests.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as out:
                    out.write(json.dumps(entry.__dict__, default=str) + "\n")

    def _error(self, message: str) -> None:
        with self._lock:
            self.errors.append(message)

    def decide(self, api: str, body: dict[str, Any]) -> dict[str, Any]:
        """What to answer: {"kind": "text"|"tool"|"search"|"wait", ...}."""
        with self._lock:
            count = sum(1 for r in self.requests if r.api in ("anthropic", "responses"))
        if count >= self.scenario.max_requests:
            self._error(f"loop guard: more than {self.scenario.max_requests} model requests")
            return {"kind": "text", "text": "loop guard: too many requests"}
        offered = _offered_tools(api, body)
        if not offered and not self.scenario.answer_without_tools:
            return {"kind": "text", "text": self.scenario.side_text}
        conversation = _Conversation(self, api, body)
        index = len(conversation.results)
        steps = self.scenario.steps
        if index >= len(steps) or not offered:
            final = self.scenario.final_text
            turn = conversation.turn()
            text = (
                final(turn) if callable(final) else final.replace("{last_result}", turn.last_result)
            )
            return {"kind": "text", "text": text}
        step = steps[index]
        match = next(
            (tool for tool in offered.tools if _matches(tool.name, step, tool.namespace)), None
        )
        if match is None:
            deferred = _deferred_name(api, body, step)
            if offered.search and deferred and conversation.searches < self.scenario.max_searches:
                return {"kind": "search", "query": deferred}
            if offered.wait and conversation.searches < self.scenario.max_searches:
                return {"kind": "wait"}  # Claude: the MCP server is still connecting
            self._error(f"step {index}: tool {step.tool!r} not offered")
            return {"kind": "text", "text": f"SCRIPT ERROR: tool {step.tool} not offered"}
        arguments = step.input(conversation.turn()) if callable(step.input) else step.input
        return {
            "kind": "tool",
            "name": match.name,
            "namespace": match.namespace,
            "input": dict(arguments),
        }


@dataclass(frozen=True)
class _Tool:
    name: str
    namespace: str = ""


@dataclass
class _Offered:
    tools: list[_Tool]
    search: bool
    wait: bool = False

    def __bool__(self) -> bool:
        return bool(self.tools) or self.search


def _offered_tools(api: str, body: dict[str, Any]) -> _Offered:
    tools: list[_Tool] = []
    search = False
    if api == "anthropic":
        for tool in body.get("tools") or []:
            name = tool.get("name", "")
            if name == "ToolSearch":
                search = True
            elif name:
                tools.append(_Tool(name))
        return _Offered(tools, search, wait=any(t.name == "WaitForMcpServers" for t in tools))
    sources = list(body.get("tools") or [])
    for item in body.get("input", []):
        if item.get("type") == "tool_search_output":
            sources += item.get("tools") or []
    for tool in sources:
        kind = tool.get("type")
        if kind == "tool_search":
            search = True
        elif kind == "namespace":
            prefix = tool.get("name", "")
            tools += [_Tool(t.get("name", ""), prefix) for t in tool.get("tools") or []]
        elif kind == "function":
            tools.append(_Tool(tool.get("name", "")))
    return _Offered(tools, search)


def _deferred_name(api: str, body: dict[str, Any], step: ToolStep) -> str | None:
    """The full deferred tool name (Claude) or the bare tool name (Codex) to search for."""
    if api == "responses":
        return step.tool
    server = re.escape(step.server) if step.server else r"[A-Za-z0-9_-]+?"
    pattern = re.compile(rf"mcp__{server}__{re.escape(step.tool)}(?![A-Za-z0-9_-])")
    for text in _strings(body.get("messages", [])):
        found = pattern.search(text)
        if found:
            return found.group(0)
    return None


# -- SSE rendering ----------------------------------------------------------------------------


def _sse(events: list[tuple[str, dict[str, Any]]]) -> list[bytes]:
    return [
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()
        for name, data in events
    ]


def _anthropic_events(
    model: ScriptedModel, body: dict[str, Any], decision: dict[str, Any]
) -> list[bytes]:
    usage = {
        "input_tokens": 10,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "message": {
                    "id": model._next_id("msg"),
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "scripted"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                }
            },
        )
    ]
    if decision["kind"] == "text":
        stop = "end_turn"
        events += [
            ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
            (
                "content_block_delta",
                {"index": 0, "delta": {"type": "text_delta", "text": decision["text"]}},
            ),
        ]
    else:
        stop = "tool_use"
        if decision["kind"] == "search":
            name, arguments = "ToolSearch", {"query": f"select:{decision['query']}"}
        elif decision["kind"] == "wait":
            name, arguments = "WaitForMcpServers", {}
        else:
            name, arguments = decision["name"], decision["input"]
        events += [
            (
                "content_block_start",
                {
                    "index": 0,
                    "content_block": {
                        "type": "tool_use",
                        "id": model._next_id("toolu"),
                        "name": name,
                        "input": {},
                    },
                },
            ),
            (
                "content_block_delta",
                {
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(arguments)},
                },
            ),
        ]
    events += [
        ("content_block_stop", {"index": 0}),
        (
            "message_delta",
            {"delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}},
        ),
        ("message_stop", {}),
    ]
    return _sse(events)


def _responses_events(
    model: ScriptedModel, body: dict[str, Any], decision: dict[str, Any]
) -> list[bytes]:
    if decision["kind"] == "text":
        item: dict[str, Any] = {
            "type": "message",
            "id": model._next_id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": decision["text"], "annotations": []}],
        }
    elif decision["kind"] == "search":
        item = {
            "type": "tool_search_call",
            "call_id": model._next_id("call"),
            "execution": "client",
            "status": "completed",
            "arguments": {"query": decision["query"], "limit": 8},
        }
    else:
        item = {
            "type": "function_call",
            "id": model._next_id("fc"),
            "call_id": model._next_id("call"),
            "name": decision["name"],
            "arguments": json.dumps(decision["input"]),
            "status": "completed",
        }
        if decision["namespace"]:
            item["namespace"] = decision["namespace"]
    response_id = model._next_id("resp")
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    base = {"id": response_id, "object": "response", "model": body.get("model", "scripted")}
    return _sse(
        [
            ("response.created", {"response": {**base, "status": "in_progress", "output": []}}),
            (
                "response.output_item.added",
                {"output_index": 0, "item": {**item, "status": "in_progress"}},
            ),
            ("response.output_item.done", {"output_index": 0, "item": item}),
            (
                "response.completed",
                {"response": {**base, "status": "completed", "output": [item], "usage": usage}},
            ),
        ]
    )


def _handler_for(model: ScriptedModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _headers(self) -> dict[str, str]:
            return {k.lower(): v for k, v in self.headers.items()}

        def _plain(self, status: int, payload: bytes = b"") -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        def do_HEAD(self) -> None:
            model._log(LoggedRequest("probe", "HEAD", self.path, self._headers(), None))
            self._plain(200)

        def do_GET(self) -> None:
            model._log(LoggedRequest("other", "GET", self.path, self._headers(), None))
            self._plain(404, b'{"error":"not scripted"}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            path = self.path.split("?", 1)[0]
            api = (
                "anthropic"
                if path.endswith("/messages")
                else "responses"
                if path.endswith("/responses")
                else "other"
            )
            entry = LoggedRequest(api, "POST", self.path, self._headers(), body)
            if api == "other" or not isinstance(body, dict):
                model._log(entry)
                model._error(f"unexpected request {self.path}")
                self._plain(404, b'{"error":"not scripted"}')
                return
            if model.scenario.fail_status is not None:
                entry.answer = {"kind": "http-error", "status": model.scenario.fail_status}
                model._log(entry)
                error = {"type": "api_error", "message": "scripted outage"}
                self._plain(
                    model.scenario.fail_status,
                    json.dumps({"type": "error", "error": error}).encode(),
                )
                return
            decision = model.decide(api, body)
            entry.answer = decision
            model._log(entry)
            if decision.get("text", "").startswith("loop guard"):
                self._plain(500, b'{"error":"loop guard"}')
                return
            render = _anthropic_events if api == "anthropic" else _responses_events
            self._stream(render(model, body, decision))

        def _stream(self, chunks: list[bytes]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return Handler


# -- running the CLIs -------------------------------------------------------------------------


class CliTimeout(AssertionError):
    """The CLI did not finish within the hard timeout (its process group was killed)."""


_SCRUB_PREFIXES = ("CLAUDE_CODE_", "ANTHROPIC_", "OPENAI_", "CODEX_")
_SCRUB_NAMES = {"CLAUDECODE", "CLAUDE_CONFIG_DIR", "TEAMLORE_HOME", "MCP_TIMEOUT"}


def isolated_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """os.environ without agent/session variables, HOME set to `home` (created)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _SCRUB_NAMES and not key.startswith(_SCRUB_PREFIXES)
    }
    home.mkdir(parents=True, exist_ok=True)
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".codex").mkdir(exist_ok=True)
    env.update(
        {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CODEX_HOME": str(home / ".codex"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "NO_COLOR": "1",
        }
    )
    env.update(extra or {})
    return env


def run_with_hard_timeout(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        raise CliTimeout(
            f"{Path(argv[0]).name} did not finish in {timeout:.0f}s\n"
            f"stdout: {stdout[-2000:]}\nstderr: {stderr[-2000:]}"
        ) from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # MCP servers the CLI left behind
    elapsed = time.monotonic() - started
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr), elapsed


def run_until_interrupted(
    argv: list[str], cwd: Path, env: dict[str, str], when: Callable[[], bool], timeout: float
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run `argv` and press Ctrl-C (SIGINT to the CLI) once `when()` holds; then wait for it to
    exit (the hard timeout and the group kill as in `run_with_hard_timeout`)."""
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        while not when() and process.poll() is None:
            if time.monotonic() - started > timeout:
                raise CliTimeout(f"{Path(argv[0]).name}: the moment to interrupt never came")
            time.sleep(0.1)
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise CliTimeout(f"{Path(argv[0]).name} did not exit after Ctrl-C") from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    elapsed = time.monotonic() - started
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr), elapsed


@dataclass
class ClaudeRun:
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    data: dict[str, Any] | None

    @property
    def result(self) -> str:
        return str((self.data or {}).get("result", ""))

    @property
    def is_error(self) -> bool:
        return self.data is None or bool(self.data.get("is_error"))

    @property
    def permission_denials(self) -> list[Any]:
        return list((self.data or {}).get("permission_denials") or [])

    def describe(self) -> str:
        return f"rc={self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"


def run_claude(
    clis: AgentClis,
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    model: ScriptedModel,
    mcp_config: Mapping[str, Any] | Path | None = None,
    allowed_tools: Sequence[str] = ("mcp__teamlore",),
    tool_search: bool = False,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 90.0,
    persist: bool = False,
) -> ClaudeRun:
    """`claude -p PROMPT --output-format json` in an isolated HOME against `model`; `persist`
    keeps the session transcript (under `home/.claude/projects/`)."""
    run_env = isolated_env(
        home,
        {
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "scripted-test-key",
            "ENABLE_TOOL_SEARCH": "true" if tool_search else "false",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            **(env or {}),
        },
    )
    argv = [str(clis.claude), "-p", prompt, "--output-format", "json"]
    if not persist:
        argv.append("--no-session-persistence")
    if mcp_config is not None:
        if not isinstance(mcp_config, Path):
            path = home / f"mcp-{time.monotonic_ns()}.json"
            path.write_text(json.dumps(mcp_config))
            mcp_config = path
        argv += ["--mcp-config", str(mcp_config), "--strict-mcp-config"]
    if allowed_tools:
        argv += ["--allowedTools", ",".join(allowed_tools)]
    argv += list(extra_args)
    done, elapsed = run_with_hard_timeout(argv, cwd, run_env, timeout)
    try:
        data = json.loads(done.stdout)
    except ValueError:
        data = None
    return ClaudeRun(
        done.returncode, done.stdout, done.stderr, elapsed, data if isinstance(data, dict) else None
    )


@dataclass
class CodexRun:
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    last_message: str
    events: list[dict[str, Any]]

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """The completed `mcp_tool_call` items (server, tool, arguments, result, status)."""
        return [
            e["item"]
            for e in self.events
            if e.get("type") == "item.completed"
            and e.get("item", {}).get("type") == "mcp_tool_call"
        ]

    def describe(self) -> str:
        return f"rc={self.returncode}\nstdout: {self.stdout[-3000:]}\nstderr: {self.stderr[-3000:]}"


def codex_overrides(model: ScriptedModel, model_slug: str = "fake-model") -> list[str]:
    """`-c key=value` settings: the scripted provider, no approvals, no phoning home."""
    provider = (
        f'{{ name = "scripted model", base_url = "{model.base_url}/v1", wire_api = "responses", '
        'env_key = "SCRIPTED_MODEL_API_KEY", request_max_retries = 0, stream_max_retries = 0 }'
    )
    settings = {
        "model": json.dumps(model_slug),
        "model_provider": '"scripted"',
        "model_providers.scripted": provider,
        "approval_policy": '"never"',
        "sandbox_mode": '"read-only"',
        "check_for_update_on_startup": "false",
        "analytics.enabled": "false",
        "feedback.enabled": "false",
        "features.plugins": "false",
        "features.apps": "false",
    }
    return [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]


def run_codex(
    clis: AgentClis,
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    model: ScriptedModel,
    config_toml: str | None = None,
    model_slug: str = "fake-model",
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 90.0,
    persist: bool = False,
    interrupt_when: Callable[[], bool] | None = None,
) -> CodexRun:
    """`codex exec --json -o last.txt PROMPT` in an isolated HOME against `model`; `persist`
    keeps the session rollout (under `home/.codex/sessions/`); `interrupt_when` presses Ctrl-C
    once it holds (Codex then ends the turn as aborted)."""
    run_env = isolated_env(home, {"SCRIPTED_MODEL_API_KEY": "scripted-test-key", **(env or {})})
    codex_home = Path(run_env["CODEX_HOME"])
    if config_toml is not None:
        (codex_home / "config.toml").write_text(config_toml)
    last = home / f"codex-last-{time.monotonic_ns()}.txt"
    argv = [
        str(clis.codex),
        "exec",
        "--skip-git-repo-check",
        *(() if persist else ("--ephemeral",)),
        "--json",
        "-o",
        str(last),
        *codex_overrides(model, model_slug),
        *extra_args,
        prompt,
    ]
    if interrupt_when is None:
        done, elapsed = run_with_hard_timeout(argv, cwd, run_env, timeout)
    else:
        done, elapsed = run_until_interrupted(argv, cwd, run_env, interrupt_when, timeout)
    events = []
    for line in done.stdout.splitlines():
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict):
                events.append(event)
    message = last.read_text() if last.exists() else ""
    return CodexRun(done.returncode, done.stdout, done.stderr, elapsed, message, events)


class JsonLinesProcess:
    """A CLI that speaks one JSON record a line over stdio, in its own process group: a
    background thread collects what it says in `received`; leaving the `with` block closes its
    stdin, waits `close_wait` seconds for it to end, then kills the group."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        timeout: float,
        close_wait: float,
        stderr: int,
    ) -> None:
        self.timeout = timeout
        self.close_wait = close_wait
        self.received: list[dict[str, Any]] = []
        self._ready = threading.Condition()
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.process.stdin:
                self.process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=self.close_wait)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                with self._ready:
                    self.received.append(record)
                    self._ready.notify_all()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()


class CodexAppServer(JsonLinesProcess):
    """`codex app-server` (JSON-RPC over stdio) in an isolated HOME against `model`: for what
    `codex exec` cannot do, such as `thread/revert`.

        with CodexAppServer(clis, cwd=repo, home=home, model=model) as server:
            thread = server.request("thread/start", {"cwd": str(repo)})["thread"]["id"]
            turn = server.turn(thread, "hello")  # waits for turn/completed; returns the turn id
    """

    def __init__(
        self, clis: AgentClis, *, cwd: Path, home: Path, model: ScriptedModel, timeout: float = 60
    ) -> None:
        super().__init__(
            [str(clis.codex), "app-server", *codex_overrides(model)],
            cwd=cwd,
            env=isolated_env(home, {"SCRIPTED_MODEL_API_KEY": "scripted-test-key"}),
            timeout=timeout,
            close_wait=10,
            stderr=subprocess.PIPE,
        )
        self._next = 0
        self.request("initialize", {"clientInfo": {"name": "teamlore-tests", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "initialized"})

    def _wait(self, match: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        with self._ready:
            while True:
                found = next((m for m in self.received if match(m)), None)
                if found is not None:
                    self.received.remove(found)
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise CliTimeout(f"codex app-server: no {what}")
                self._ready.wait(left)

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self._next += 1
        ident = self._next
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        reply = self._wait(lambda m: m.get("id") == ident and "method" not in m, method)
        if "error" in reply:
            raise AssertionError(f"codex app-server {method}: {reply['error']}")
        return reply.get("result")

    def turn(self, thread_id: str, text: str) -> str:
        """Start a turn with `text` and wait until it completes; its turn id."""
        started = self.request(
            "turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]}
        )
        turn_id = str(started["turn"]["id"])
        self._wait(
            lambda m: (
                m.get("method") == "turn/completed"
                and m.get("params", {}).get("turn", {}).get("id") == turn_id
            ),
            f"turn/completed for {turn_id}",
        )
        return turn_id
