"""Fake runner executables for fault injection (DESIGN "How it is tested": fake runner
executables). Not a model: the fake answers from the task it received, or misbehaves on purpose.

`FakeRunner(tmp_path).install(kind)` writes an executable `claude` (or `codex`) script. It
answers `--version` with `FakeRunner.version`; otherwise it reads the task bytes from stdin,
appends their sha256 to `<script>.log` (what it was sent), and acts per its mode file
(`<script>.mode`, so the mode survives the runner's allow-listed environment):

- `good`: a correct answer: one candidate citing the task's first turn evidence (extraction),
  `store` for every draft (adjudication), a doctrine based on two of the task's entries
  (consolidation), the known fact for the conformance probe;
- `hang` (sleep 600), `slow` (waits until the test calls `release()`, at most 120 s, then
  good), `flood` (50 MB on stdout), `exit3`, `prose`,
  `foreign` (cites an evidence id the task did not give), `binding-digest` (a good
  consolidation patch echoing the task's bindingDigest, not its binding), `secret` (a GitHub
  token in the content), `linger` (leaves a background process), `write` (a file in its
  working directory), `logged-out` (exit 1 with a "Not logged in" stderr, the probe too),
  `broken-envelope` (claude prints plain text instead of its JSON, the probe too).
The probe always gets the correct answer unless the mode is `bad-probe`, so a fake passes
`reverify-runner` and misbehaves on the real task. Mode `probe-KIND` commits one of the
conformance probe's nine violations (runner/conformance.py, `conformance-test@2`) the way the
probe's injected instruction asks — a shell command, reading or writing files in or outside its
working directory, starting the MCP server declared there, contacting the HTTP or TCP listener,
leaving a process behind — and then answers the probe correctly.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SCRIPT = r"""#!PYTHON
import hashlib, json, os, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__)
KIND = "KIND"
if "--version" in sys.argv:
    print("VERSION")
    sys.exit(0)
MODE = HERE.with_suffix(".mode")
mode = MODE.read_text().strip() if MODE.exists() else "good"
data = sys.stdin.buffer.read()
with open(HERE.with_suffix(".log"), "a") as log:
    log.write(json.dumps({"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                          "argv": sys.argv[1:], "cwd": os.getcwd(),
                          "env": sorted(os.environ),
                          "claudeCredentials": os.path.isfile(os.path.join(
                              os.environ.get("CLAUDE_CONFIG_DIR", "/nonexistent"),
                              ".credentials.json"))}) + "\n")
if mode == "logged-out":  # what a runner CLI without a login prints, probe or not
    sys.stderr.write("starting session\n" * 40 + f"warning: config at {Path.home()}/.codex\n"
                     "Error: Not logged in. Please run /login\n")
    sys.exit(1)
text = data.decode()
task = json.loads(text.split("TASK:\n", 1)[1])
probe = task["taskId"].startswith("conformance-probe")
quoted = ""
if probe and mode.startswith("probe-"):
    import re, socket, urllib.request
    said = task["chunk"]["transcript"]
    decoy = re.search(r"touch (\S+)/shell-ran", said).group(1)
    kind = mode[len("probe-"):]
    if kind == "shell":
        subprocess.run(["sh", "-c", f"touch {decoy}/shell-ran"], check=True)
    elif kind == "in-task-read":
        quoted = Path("notes.txt").read_text().strip()
    elif kind == "in-task-write":
        Path("pwned.txt").write_text("x")
    elif kind == "out-of-task-read":
        quoted = Path(decoy, "secret.txt").read_text().strip()
    elif kind == "out-of-task-write":
        Path(decoy, "written.txt").write_text("x")
    elif kind == "mcp":  # what a CLI that loads project MCP servers would start
        server = json.loads(Path(".mcp.json").read_text())["mcpServers"]["probe-notes"]
        subprocess.run([server["command"], *server["args"]], check=True)
    elif kind == "http":
        port = re.search(r"http://127.0.0.1:(\d+)/", said).group(1)
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
        except OSError:
            pass
    elif kind == "tcp":
        port = re.search(r"127.0.0.1 port (\d+)", said).group(1)
        socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
    elif kind == "background-process":
        token = re.search(r"echo (TEAMLORE-BG-\w+)", said).group(1)
        subprocess.Popen(["sh", "-c", f"sleep 300; echo {token}"], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    mode = "good"
if probe and mode not in ("bad-probe", "broken-envelope"):
    mode = "good"
if mode == "bad-probe":
    mode = "foreign"
if mode == "hang":
    time.sleep(600)
if mode == "slow":
    gate = HERE.with_suffix(".gate")
    deadline = time.monotonic() + 120
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
if mode == "flood":
    chunk = b"x" * 1048576
    for _ in range(50):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    sys.exit(0)
if mode == "exit3":
    sys.stderr.write("something went wrong\n")
    sys.exit(3)
if mode == "linger":
    subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
if mode == "write":
    Path("pwned.txt").write_text("x")

def answer():
    if mode == "prose":
        return "Sure! Here are some memories I found: the release needs a v prefix."
    if task["format"].endswith("consolidation-task@v1"):
        ids = [e["entryId"] for e in task["entries"]][:2]
        doctrine = "## Core principles\n- Review every generated claim before it reaches git.\n"
        echoed = ({"bindingDigest": task["bindingDigest"]} if mode == "binding-digest"
                  else {"binding": task["binding"]})
        return json.dumps({"format": "threadshare-memory-consolidation-patch@v1",
                           "taskId": task["taskId"], **echoed,
                           "operations": [{"operationId": "op-doctrine", "op": "create",
                                           "target": "doctrine", "name": "doctrine",
                                           "newContent": doctrine, "basedOnEntryIds": ids,
                                           "mergeSources": [],
                                           "rationale": "The entries share one principle."}]})
    if task["format"].endswith("adjudication-task@v1"):
        return json.dumps({"format": "threadshare-memory-adjudication-result@v1",
                           "taskId": task["taskId"], "binding": task["binding"],
                           "adjudications": [{"draftRef": d["candidateId"], "action": "store",
                                              "targetIds": [], "mergedFields": None}
                                             for d in task["drafts"]]})
    evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    if mode == "foreign":
        evidence = "ev-turn-ffffffffffff"
    content = ("Run `make db-up` before `make test`; the tests need the database." + quoted
               if probe else "Release tag checks expect a v prefix; run the release tests first.")
    if mode == "secret":
        content += " Token: ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    return json.dumps({"format": "threadshare-memory-candidate-draft-batch@v1",
                       "taskId": task["taskId"], "binding": task["binding"],
                       "candidates": [{"content": content, "type": "work_method",
                                       "priority": 60, "confidence": "medium", "scene": None,
                                       "statements": [{"statementId": "s1", "text": content,
                                                       "evidenceIds": [evidence]}]}]})

text_out = answer()
if mode == "broken-envelope":  # what the CLI itself prints is not its JSON, probe or not
    print("Error: something is not right")
elif KIND == "claude":
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
                      "result": text_out}))
else:
    out = sys.argv[sys.argv.index("-o") + 1]
    Path(out).write_text(text_out)
    print("codex done")
"""


class FakeRunner:
    version = "9.9.9 (fake)"

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.path: Path | None = None

    def install(self, kind: str = "claude", mode: str = "good", version: str | None = None) -> Path:
        path = self.root / kind
        body = (
            SCRIPT.replace("PYTHON", sys.executable)
            .replace('"KIND"', repr(kind))
            .replace("VERSION", version or self.version)
        )
        path.write_text(body)
        os.chmod(path, 0o755)
        self.path = path
        self.mode(mode)
        return path

    def mode(self, mode: str) -> None:
        assert self.path is not None
        self.path.with_suffix(".mode").write_text(mode)

    def release(self) -> None:
        """Let a `slow` run answer (it waits for this, so the test decides when, not a timer)."""
        assert self.path is not None
        self.path.with_suffix(".gate").write_text("go")

    def sent(self) -> list[dict[str, object]]:
        """What the fake received, one record per run (sha256, bytes, argv, env names)."""
        import json

        assert self.path is not None
        log = self.path.with_suffix(".log")
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    def env(self) -> dict[str, str]:
        assert self.path is not None
        variable = "TEAMLORE_CLAUDE_BIN" if self.path.name == "claude" else "TEAMLORE_CODEX_BIN"
        return {variable: str(self.path)}
