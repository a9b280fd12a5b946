"""Where Pi (`@earendil-works/pi-coding-agent`) loads extensions, and the one teamlore writes.

Pi auto-discovers `*.js` extensions in `<agent-dir>/extensions/` (user scope; the agent dir is
`$PI_CODING_AGENT_DIR`, default `~/.pi/agent`) and in `<repo>/.pi/extensions/` (project scope,
loaded once the user trusted the project). teamlore writes one whole file there,
`teamlore.js`, and owns it (installer.py, "whole files"). The extension (docs/agents.md, "Pi"):

- on `input` (a prompt the user typed, `source` interactive, or sent over RPC) pipes
  `{cwd, text, source, sessionId, turnId}` to `teamlore hook user-turn --client pi`, which queues
  the turn for the personal-memory Writer (glossary: Writer); a refusal (a secret or personal data
  the PII check stops, SENSITIVE_CONTENT_REJECTED) is shown as a notice, never sent anywhere;
- on `before_agent_start` (every prompt, after `input`; the capture runs on meanwhile and Pi's
  `session_shutdown` waits for it) pipes `{cwd}` to
  `teamlore hook session-start --client pi` and appends the brief it prints (the same one the
  Claude Code / Codex SessionStart hook injects, ops/integrations/session_brief.py) to the system
  prompt, so the newest memory is what the model sees.

Both hooks run as child processes with a time limit; any failure leaves the prompt as it was.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from teamlore.integrations.entries import FileEdits

CLI_NAME = "pi"
EXTENSION_NAME = "teamlore.js"
BRIEF_TIMEOUT_MS = 5000  # the hook gets 4.5 s of it: ~2 s measured at load 12 on 2 cores
TURN_TIMEOUT_MS = 10000

_SOURCE = """\
// teamlore for Pi: memory brief in the system prompt, your prompts to personal memory.
// Written by `teamlore install --client pi`; teamlore owns this whole file: `teamlore
// uninstall --client pi` removes it (a copy you edited is kept). See teamlore's docs/agents.md.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";

const TEAMLORE = __COMMAND__;
const TEAMLORE_ENV = __ENV__;

function teamlore(args, payload, timeoutMs) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    // the hook's own time budget, just inside ours (a busy machine still gets the brief)
    const budget = { TEAMLORE_HOOK_BUDGET: String((timeoutMs - 500) / 1000) };
    try {
      child = spawn(TEAMLORE[0], [...TEAMLORE.slice(1), ...args], {
        env: { ...budget, ...process.env, ...TEAMLORE_ENV },
        stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve(null);
      return;
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", () => { clearTimeout(timer); resolve(null); });
    child.on("close", () => {
      clearTimeout(timer);
      try { resolve(JSON.parse(out)); } catch { resolve(null); }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function sessionOf(ctx) {
  try {
    return String(ctx.sessionManager.getSessionId() || "none");
  } catch {
    return "none";
  }
}

export default function (pi) {
  let capturing = Promise.resolve();

  pi.on("input", (event, ctx) => {
    if (event.source === "extension" || typeof event.text !== "string" || !event.text.trim()) {
      return { action: "continue" };
    }
    const payload = {
      cwd: ctx.cwd,
      text: event.text,
      source: event.source,
      sessionId: sessionOf(ctx),
      turnId: randomUUID(),
    };
    const capture = teamlore(["hook", "user-turn", "--client", "pi"], payload, __TURN_MS__)
      .then((result) => {
        if (result && result.accepted === false && result.notice && ctx.hasUI) {
          ctx.ui.notify(`teamlore: ${result.notice}`, "warning");
        }
      })
      .catch(() => {});
    capturing = Promise.all([capturing, capture]); // shutdown waits for every one still running
    return { action: "continue" };
  });

  pi.on("before_agent_start", async (event, ctx) => {
    const args = ["hook", "session-start", "--client", "pi"];
    const result = await teamlore(args, { cwd: ctx.cwd }, __BRIEF_MS__);
    const text = result?.hookSpecificOutput?.additionalContext;
    if (typeof text !== "string" || !text) return undefined;
    return { systemPrompt: `${event.systemPrompt}\\n\\n${text}` };
  });

  pi.on("session_shutdown", async () => {
    await capturing; // the model never waits for the capture; Pi's exit does
  });
}
"""


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("PI_CODING_AGENT_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"


def extension_path(scope: str, root: Path | None) -> Path:
    if scope == "project":
        assert root is not None
        return root / ".pi" / "extensions" / EXTENSION_NAME
    return agent_dir() / "extensions" / EXTENSION_NAME


def extension_source(command: list[str], env: dict[str, str]) -> bytes:
    """The extension, starting teamlore as `command` (argv) with `env` added."""
    text = (
        _SOURCE.replace("__COMMAND__", json.dumps(command))
        .replace("__ENV__", json.dumps(env, sort_keys=True))
        .replace("__TURN_MS__", str(TURN_TIMEOUT_MS))
        .replace("__BRIEF_MS__", str(BRIEF_TIMEOUT_MS))
    )
    return text.encode("utf-8")


def plan_files(
    scope: str, root: Path | None, command: list[str], env: dict[str, str]
) -> list[FileEdits]:
    path = extension_path(scope, root)
    content = extension_source(command, env)
    return [FileEdits(path, "file", scope == "user", content=content)]
