"""The Codex adapter's record parsers: classifying a tool call into its family (shell,
code-mode cells, apply_patch, web, MCP, agents), reading a tool output's exit code and status
header, git facts of `session_meta`, and the small typed accessors the parser uses."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from pathlib import PureWindowsPath
from typing import Any

import orjson

from teamlore.sessions.model import (
    ToolCall,
    ToolFamily,
)
from teamlore.sessions.providers.apply_patch import parse_apply_patch, paths_written_in

SHELL_TOOLS = frozenset({"shell", "container.exec", "local_shell", "shell_command", "exec_command"})
SHELL_WRAPPERS = frozenset({"bash", "sh", "zsh", "dash", "fish", "powershell", "pwsh", "cmd"})
WRAPPER_FLAGS = frozenset({"-lc", "-c", "-ic", "-Command", "-command", "/c", "/C"})
READ_TOOLS = frozenset({"view_image", "read_file", "list_dir"})
SEARCH_TOOLS = frozenset({"grep_files", "file_search", "tool_search"})
WEB_TOOLS = frozenset({"web_search", "web.run", "web__run"})
AGENT_TOOLS = frozenset(
    {"spawn_agent", "send_input", "resume_agent", "wait_agent", "close_agent", "spawn_subagent"}
)
MCP_TOOLS = frozenset({"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"})

_EXIT_CODE = re.compile(r"^Exit code: (-?\d+)[ \t]*\r?$", re.M)
_PROCESS_EXITED = re.compile(r"^Process exited with code (-?\d+)[ \t]*\r?$", re.M)
_SANDBOX_EXIT = re.compile(r"\bexit code: (-?\d+)")
# `tools.NAME(` in a code-mode cell (`_code_mode` checks the word boundary before `tools`) and
# `cmd: "…"` / `"cmd": "…"`. Both start with a literal, so the regex engine jumps from one
# occurrence to the next (a leading `\b` or `"?` made it try every position of the cell).
_JS_TOOL = re.compile(r"tools\.([A-Za-z_]\w*)\s*\(")
_JS_CMD = re.compile(r'cmd"?\s*:\s*("(?:[^"\\\n]|\\.)*")')
_ERROR_PREFIXES = (
    "execution error:",
    "failed in sandbox",
    "apply_patch verification failed",
    "error: failed to find expected lines",
    "tool call error:",
    "aborted by user",
    "script failed",
    "script error:",
    "sandbox error",
)
_OK_PREFIXES = ("success.", "script completed", "plan updated")
# how much of an output's start is searched for its status header
_HEADER_WINDOW = 1024
_SHORT_HEADER = 300  # when no "Output:" line closes the header


class BadRecord(Exception):
    """A record whose shape this adapter cannot read."""


# ---- tool calls -------------------------------------------------------------------------------


def _classify(call_id: str, name: str, arguments: Any, at: str | None) -> ToolCall:
    args = arguments if isinstance(arguments, dict) else {}
    family: ToolFamily = "other"
    command: str | None = None
    written: list[str] = []
    read: list[str] = []
    base = name.rsplit(".", 1)[-1] if name.startswith("functions.") else name
    if base in SHELL_TOOLS:
        family = "shell"
        command = _command_line(args.get("cmd") if base == "exec_command" else args.get("command"))
        if command is not None and "*** Begin Patch" in command:
            written = paths_written_in(command)
            if written:
                family = "edit"
    elif base == "write_stdin":
        family = "shell"
    elif base == "apply_patch":
        family = "edit"
        text = arguments if isinstance(arguments, str) else _str(args.get("input")) or ""
        written = paths_written_in(text) or parse_apply_patch(text).paths_written()
    elif base == "exec" and isinstance(arguments, str):
        family, command, written = _code_mode(arguments)
    elif base in READ_TOOLS:
        family = "read"
        path = _str(args.get("path")) or _str(args.get("file_path")) or _str(args.get("dir_path"))
        read = [path] if path else []
    elif base in SEARCH_TOOLS:
        family = "search"
    elif base in WEB_TOOLS:
        family = "web"
    elif base in AGENT_TOOLS:
        family = "agent"
    elif base in MCP_TOOLS or base.startswith("mcp__") or "__" in base.strip("_"):
        family = "mcp"
    return ToolCall(call_id, name, family, arguments, at, written, read, command)


def _tag_content(text: str, name: str) -> str | None:
    """The content of the first `<name>…</name>` in `text` (linear: two `find`s)."""
    start = text.find(f"<{name}>")
    if start < 0:
        return None
    start += len(name) + 2
    end = text.find(f"</{name}>", start)
    return text[start:end] if end >= 0 else None


def _code_mode(source: str) -> tuple[ToolFamily, str | None, list[str]]:
    """0.144 code mode: a JavaScript cell calling `tools.<name>(…)`."""
    tools = {
        match.group(1)
        for match in _JS_TOOL.finditer(source)
        if not _word_char_before(source, match.start())
    }
    written = paths_written_in(source) if "apply_patch" in tools or "Begin Patch" in source else []
    commands: list[str] = []
    if "exec_command" in tools:
        for match in _JS_CMD.finditer(source):
            decoded = _json_or_raw(match.group(1))
            if isinstance(decoded, str):
                commands.append(decoded)
    command = "\n".join(commands) or None
    if written:
        return "edit", command, written
    if "exec_command" in tools or "write_stdin" in tools:
        return "shell", command, written
    if tools & WEB_TOOLS:
        return "web", None, written
    return "other", command, written


def _word_char_before(text: str, at: int) -> bool:
    """Whether `text[at - 1]` is a regex word character (so no `\\b` precedes `text[at]`)."""
    return at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_")


def _command_line(value: Any) -> str | None:
    """The command as one string: argv lists are joined; `bash -lc SCRIPT` and
    `powershell -Command SCRIPT` wrappers are unwrapped to SCRIPT."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not value or not all(isinstance(a, str) for a in value):
        return None
    if len(value) == 3 and value[1] in WRAPPER_FLAGS and _program(value[0]) in SHELL_WRAPPERS:
        return str(value[2])
    return shlex.join(value)


def _program(path: str) -> str:
    name = PureWindowsPath(path).name if "\\" in path else path.rsplit("/", 1)[-1]
    lowered = name.lower()
    return lowered[:-4] if lowered.endswith(".exe") else lowered


_URL_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@")
_COMMIT_HASH = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")


def _git_facts(git: Any) -> dict[str, str]:
    """`session_meta.git` (`{commit_hash, branch, repository_url}`, `{}` outside a repository):
    the branch, the remote URL without user or password (`https://user:token@host/…` keeps
    only the host and path), and the full commit hash. Absent or malformed fields are left out."""
    if not isinstance(git, dict):
        return {}
    facts: dict[str, str] = {}
    branch = _str(git.get("branch"))
    if branch:
        facts["branch"] = branch
    url = (_str(git.get("repository_url")) or "").strip()
    if url and "\x00" not in url:
        facts["remote"] = _URL_USERINFO.sub(r"\1", url)
    commit = (_str(git.get("commit_hash")) or "").strip().lower()
    if _COMMIT_HASH.match(commit):
        facts["commit"] = commit
    return facts


def _parent_session(payload: dict[str, Any]) -> str | None:
    forked = _str(payload.get("forked_from_id"))
    if forked:
        return forked
    source = payload.get("source")
    if isinstance(source, dict):
        return _find_key(source, "parent_thread_id", depth=4)
    return None


def _find_key(value: Any, key: str, depth: int) -> str | None:
    if depth < 0 or not isinstance(value, dict):
        return None
    found = _str(value.get(key))
    if found:
        return found
    for child in value.values():
        found = _find_key(child, key, depth - 1)
        if found:
            return found
    return None


# ---- outputs ----------------------------------------------------------------------------------


def _read_output(output: Any) -> tuple[str, int | None, bool | None]:
    """Text, exit code and error flag of a function/custom tool output, by generation: a JSON
    string `{output, metadata{exit_code}}` (legacy, 0.58, apply_patch), `Exit code: N` text (0.60+
    shell_command), `Process exited with code N` (unified exec), sandbox `exit code: N` text, or
    a list of content items (view_image, code mode)."""
    exit_code: int | None = None
    success: bool | None = None
    if isinstance(output, list):
        text = _content_text(output)
    elif isinstance(output, dict):
        text = _str(output.get("content")) or _str(output.get("output")) or ""
        success = output.get("success") if isinstance(output.get("success"), bool) else None
    elif isinstance(output, str):
        text = output
        if output.startswith("{") and '"metadata"' in output:
            wrapped = _wrapped_output(output)
            if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
                text = wrapped["output"]
                metadata = wrapped.get("metadata")
                if isinstance(metadata, dict) and isinstance(metadata.get("exit_code"), int):
                    exit_code = metadata["exit_code"]
    elif output is None:
        text = ""
    else:
        raise BadRecord(f"tool output is {type(output).__name__}")
    if exit_code is None:
        exit_code = parse_exit_code(text)
    if exit_code is not None:
        return text, exit_code, exit_code != 0
    if success is not None:
        return text, None, not success
    lowered = text[:_HEADER_WINDOW].lstrip().lower()
    if lowered.startswith("wall time:"):  # 0.171: `Wall time: 3.0 seconds\naborted by user`
        lowered = lowered.partition("\n")[2].lstrip()
    if lowered.startswith(_ERROR_PREFIXES):
        return text, None, True
    if lowered.startswith(_OK_PREFIXES):
        return text, None, False
    return text, None, None


def _mcp_outcome(item: dict[str, Any]) -> tuple[str, bool | None]:
    """Text and error flag of a 0.171 `McpToolCall` item: `status` `completed` or `failed`,
    `result{content, isError}` (the server's answer) or `error{message}` (the call never reached
    the server, e.g. refused by the approval policy). None while the call is not finished."""
    result, error = item.get("result"), item.get("error")
    text = _content_text(result.get("content")) if isinstance(result, dict) else ""
    message = _str(error.get("message")) if isinstance(error, dict) else _str(error)
    if message and not text:
        text = message
    status = item.get("status")
    if status == "failed" or error or (isinstance(result, dict) and result.get("isError") is True):
        return text, True
    return text, (False if status == "completed" else None)


def parse_exit_code(text: str) -> int | None:
    """The exit code stated in a Codex tool output's header, if any: `Exit code: N` (0.60+),
    `Process exited with code N` (unified exec), or a sandbox/execution error's `exit code: N`.
    Only the header (before the `Output:` line) is searched, so program output cannot fake it."""
    header = text[:_HEADER_WINDOW]
    output_line = _line_start(header, "Output:")
    header = header[:output_line] if output_line >= 0 else header[:_SHORT_HEADER]
    match = _EXIT_CODE.match(header)  # 0.60+: always the first line
    if match is None and "Process exited with code " in header:
        match = _PROCESS_EXITED.search(header)  # unified exec: a header line before "Output:"
    if match:
        return int(match.group(1))
    lowered = header.lstrip().lower()
    if lowered.startswith(("failed in sandbox", "execution error", "sandbox error")):
        match = _SANDBOX_EXIT.search(header)
        if match:
            return int(match.group(1))
    return None


def _line_start(text: str, prefix: str) -> int:
    """Where the first line of `text` that starts with `prefix` starts, or -1 (what a `^prefix`
    multiline search finds, with two `str` searches instead of a regex try at every position)."""
    if text.startswith(prefix):
        return 0
    found = text.find("\n" + prefix)
    return found + 1 if found >= 0 else -1


def _content_text(content: Any) -> str:
    """Text of a message's or output's content: a string, or a list of content items whose
    images become placeholders."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRecord(f"content is {type(content).__name__}")
    parts: list[str] = []
    for piece in content:
        if not isinstance(piece, dict):
            raise BadRecord("content item is not an object")
        kind = piece.get("type")
        if kind in ("input_text", "output_text", "text", "summary_text"):
            text = piece.get("text")
            if isinstance(text, str):
                parts.append(text)
        elif kind in ("input_image", "image", "output_image", "local_image"):
            source = piece.get("image_url") or piece.get("url") or piece.get("path")
            parts.append(_image_placeholder(source))
        else:
            parts.append(f"[{kind}]")
    return _join(parts)


def _join(parts: list[str]) -> str:
    out = ""
    for part in parts:
        if out and not out.endswith("\n") and part:
            out += "\n"
        out += part
    return out


def _image_placeholder(value: Any) -> str:
    """Never the image data itself: `[image: image/png, 91234 bytes]`."""
    if isinstance(value, dict):
        value = value.get("url") or value.get("image_url") or value.get("path")
    if not isinstance(value, str):
        return "[image]"
    if value.startswith("data:"):
        header, _, data = value.partition(",")
        media = header[5:].split(";", 1)[0] or "unknown"
        size = len(data) * 3 // 4 - data[-2:].count("=") if ";base64" in header else len(data)
        return f"[image: {media}, {size} bytes]"
    if len(value) > 512:
        return f"[image: {len(value)} characters]"
    return f"[image: {value}]"


# ---- small helpers ----------------------------------------------------------------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _joined_streams(payload: dict[str, Any]) -> str:
    return "".join(s for s in (payload.get("stdout"), payload.get("stderr")) if isinstance(s, str))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _require_str(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{record.get('type')} without {key}")
    return value


def _wrapped_output(text: str) -> Any:
    """`_json_or_raw` of a `{output, metadata}` tool output, decoded by orjson first (several
    times faster on long outputs). Only the `output` string and the integer exit code are read
    from it, and orjson decodes those as `json` does, except an integer beyond 64 bits, which
    it makes a float: that output, and what orjson refuses (NaN, lone surrogates), goes to
    `json` as before."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _json_or_raw(text)
    metadata = value.get("metadata") if isinstance(value, dict) else None
    if isinstance(metadata, dict) and isinstance(metadata.get("exit_code"), float):
        return _json_or_raw(text)
    return value


def _json_or_raw(text: str) -> Any:
    """Decoded JSON, or the text itself when it is not JSON (sanitised files)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _digest(value: Any) -> str:
    data = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()[:16]
