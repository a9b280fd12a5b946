"""What a new user met walking the batch runner (docs/runner.md): a backlog of eight or more
chunks still plans the adjudication of the drafts that wait, first; the openai runner fails
with the runner's codes; a key missing from the approving shell is named as such. Real CLI,
real SQLite, fake runner executables, a scripted model on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json
import signal
import sys
from pathlib import Path
from typing import Any

from runner_world import WINDOW, World, make_world
from test_runner_e2e import _task_in, answer
from test_runner_interrupts import _approve_in_background, _running
from test_runner_walk_fixes import _wait_for_runs

from teamlore.core.secrets.mask import masks_in, secret_hits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))
from scripted_server import Scripted, ScriptedServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "memory"))
from recall_world import CodexSession, sync


def test_waiting_drafts_are_planned_first_even_with_eight_chunks_to_extract(
    tmp_path: Path, home: Path
) -> None:
    """Ten sessions: one extraction ran alone (its drafts wait), nine chunks are left. The next
    plan holds the adjudication first and fills the rest of the manifest with extractions —
    not eight extractions and no adjudication, which never moves the waiting drafts on."""
    world = make_world(tmp_path, home, sessions=10)
    world.reverify()
    first = world.plan("claude", limit=1)
    world.run_approved(first["plans"][0]["planDigest"])

    preview = world.plan_by_cli("claude")

    kinds = [p["taskKind"] for p in preview["plans"]]
    assert kinds == ["adjudication"] + ["extraction"] * 7, kinds
    assert preview["deferredAdjudications"] == 0
    assert preview["plans"][0]["disclosure"]["drafts"] == 1
    assert preview["manifest"]["plans"] == 8
    code, status = world.cli("memory", "status")
    assert code == 0, status
    waiting = status["adjudication"]
    assert waiting["unplannedDrafts"] == 0 and waiting["plans"], waiting
    code, out = world.approve(preview["manifest"]["manifestDigest"], "--approve-manifest")
    assert code == 0 and out["failed"] == 0, out
    assert out["results"][0]["taskKind"] == "adjudication"


# -- the openai runner's failures are runner codes ---------------------------------------------


def _openai_world(tmp_path: Path, home: Path, server: ScriptedServer, **env: str) -> World:
    """A world whose openai runner talks to the scripted model at `server`, verified; the
    model answers every task correctly until a test scripts otherwise."""
    world = make_world(tmp_path, home)
    world.env = {"OPENAI_API_KEY": "dummy", **env}
    server.respond_with(lambda request: Scripted.chat(answer(_task_in(request.json()))))
    code, verdict = world.cli("memory", "reverify-runner", "--runner", "openai", *_openai(server))
    assert code == 0 and verdict["passed"], verdict
    return world


def _openai(server: ScriptedServer) -> list[str]:
    return ["--runner-model", "scripted-model", "--runner-endpoint", server.base_url]


def _window() -> list[str]:
    return ["--since", WINDOW["since"], "--until", WINDOW["until"]]


def _refusal(world: World, server: ScriptedServer, reply: Scripted) -> dict[str, Any]:
    """The error of approving a fresh openai plan whose model answers `reply`."""
    model = {"runnerModel": "scripted-model", "runnerEndpoint": server.base_url}
    # the plan in-process (`memory extract`'s operation: a step); its approval is the command
    code, preview = world.op(
        "memory.extract_preview", {"runner": "openai", "limit": 8, **model, **WINDOW}
    )
    assert code == 0, preview
    plan = preview["plans"][0]["planDigest"]
    server.respond_with(lambda request: reply)
    code, out = world.approve(plan)
    assert code == 1 and "error" in out, out
    return dict(out["error"])


def test_the_openai_runners_failures_are_the_runner_codes_runner_md_lists(
    tmp_path: Path, home: Path
) -> None:
    """A prose answer is RUNNER_OUTPUT_INVALID; an answer over the runner's output cap is
    RUNNER_OUTPUT_TOO_LARGE at that cap (not the model client's own 1 MiB); HTTP 401, 429
    and 500 are RUNNER_EXIT_NONZERO with the status in the message — the codes a CLI runner
    gives, so a script around the runner handles one family."""
    cap = 2 * 1024 * 1024
    with ScriptedServer() as server:
        world = _openai_world(tmp_path, home, server, TEAMLORE_RUNNER_MAX_OUTPUT_BYTES=str(cap))

        prose = _refusal(world, server, Scripted.chat("Sure! The release needs a v prefix."))
        assert prose["code"] == "RUNNER_OUTPUT_INVALID", prose
        assert prose["next"].startswith("Approve the same plan again")
        assert prose["details"]["usage"]["inputTokens"] == 11  # the billed answer's spend

        # 1.5 MB: over the client's 1 MiB, under the runner's cap: read, then judged as prose
        long = _refusal(world, server, Scripted.chat("x" * 1_500_000))
        assert long["code"] == "RUNNER_OUTPUT_INVALID", long

        huge = _refusal(world, server, Scripted.chat("x" * 3_000_000))
        assert huge["code"] == "RUNNER_OUTPUT_TOO_LARGE", huge
        assert str(cap) in huge["message"] and "TEAMLORE_RUNNER_MAX_OUTPUT_BYTES" in huge["message"]
        assert huge["details"]["maxOutputBytes"] == cap
        assert "JSON reliably" not in huge["next"]

        for status, model_code in (
            (401, "MODEL_AUTH_FAILED"),
            (429, "MODEL_RATE_LIMITED"),
            (500, "MODEL_UNAVAILABLE"),
        ):
            failed = _refusal(world, server, Scripted.error(status, headers={"Retry-After": "0"}))
            assert failed["code"] == "RUNNER_EXIT_NONZERO", failed
            assert f"HTTP {status}" in failed["message"], failed
            assert failed["details"]["modelCode"] == model_code
            assert "approve the plan again" in failed["next"]


# -- a key the approving shell lacks -----------------------------------------------------------


def test_a_key_missing_from_the_approving_shell_is_named_not_a_changed_runner(
    tmp_path: Path, home: Path
) -> None:
    """The openai runner against a local endpoint, which may take no key: verified from a
    shell without OPENAI_API_KEY, its pass still counts in a shell that has it; a plan made
    with the key and approved where it is unset says to set OPENAI_API_KEY (not to reverify),
    sends nothing and is kept, and runs once the key is back."""
    with ScriptedServer() as server:
        world = _openai_world(tmp_path, home, server, OPENAI_API_KEY="")  # verified keyless
        world.env = {"OPENAI_API_KEY": "dummy"}
        preview = world.plan_by_cli("openai", *_openai(server))
        assert preview["runnerConformance"]["verified"] is True, preview["runnerConformance"]
        plan = preview["plans"][0]["planDigest"]
        sent = len(server.requests)

        code, out = world.cli(
            "memory", "extract", "--approve-plan", plan, env={"OPENAI_API_KEY": ""}
        )
        assert code == 1, out
        error = out["error"]
        assert error["code"] != "RUNNER_NOT_CONFORMANT", error
        assert "OPENAI_API_KEY is no longer set" in error["message"], error
        assert error["next"].startswith("Set OPENAI_API_KEY in this shell")
        assert "reverify" not in error["message"] + error["next"]
        assert len(server.requests) == sent  # nothing was sent
        assert world.plan_path(plan).exists()  # kept for a shell that has the key

        code, done = world.approve(plan)
        assert code == 0 and done["results"][0]["candidates"] == 1, done
        assert server.requests[-1].headers["authorization"] == "Bearer dummy"


# -- what Ctrl-C and an empty digest say -------------------------------------------------------


def test_ctrl_c_during_a_manifest_shows_what_each_plan_came_to(tmp_path: Path, home: Path) -> None:
    """Three plans: the first finishes and stages a draft, the second is out when Ctrl-C
    comes, the third never starts. The text view shows each in the results table, says the
    draft waits for adjudication, and no line it wraps ends in a space."""
    world = make_world(tmp_path, home, sessions=3)
    world.reverify()
    preview = world.plan()
    manifest = preview["manifest"]["manifestDigest"]
    first, second, third = (p["planDigest"] for p in preview["plans"])
    world.fake.mode("slow")  # the first run waits for release()
    before = len(world.fake.sent())  # the probe's
    approval = _approve_in_background(world, "--approve-manifest", manifest)
    _running(world, first)
    _wait_for_runs(world, before + 1)  # the fake logs its task once it has read its mode
    world.fake.mode("hang")  # what the second run reads when it starts
    world.fake.release()
    _running(world, second)
    _wait_for_runs(world, before + 2)

    approval.send_signal(signal.SIGINT)
    out, err = approval.communicate(timeout=60)

    assert approval.returncode == 130, err
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if "…" in line[:20]}
    assert "done" in rows[first[:12] + "…"] and "1 draft staged" in rows[first[:12] + "…"], out
    assert "interrupted" in rows[second[:12] + "…"], out
    assert "not-started" in rows[third[:12] + "…"], out
    said = " ".join(err.split())
    assert "may have reached the provider" in said and "never sent again" in said, err
    assert f"`teamlore memory extract --approve-manifest {manifest}` runs them" in said
    assert "1 draft staged before the stop waits for adjudication" in said, err
    assert [line for line in (out + err).splitlines() if line.endswith(" ")] == []


def test_an_empty_digest_to_approve_is_named_as_such(tmp_path: Path, home: Path) -> None:
    """`--approve-plan "$(jq …)"` whose jq printed nothing: not a request to make a plan."""
    world = make_world(tmp_path, home)
    for command in (["extract", "--approve-plan"], ["extract", "--approve-manifest"],
                    ["consolidate", "--approve-plan"]):  # fmt: skip
        code, _, err = world.text("memory", *command, "")
        said = " ".join(err.split())
        assert code != 0 and f"{command[-1]} was given an empty digest" in said, err
        assert "--runner is required" not in said


# -- a secret in a transcript ------------------------------------------------------------------

TOKEN = "ghp_" + "Zq9Xw8Vu7Ts6Rp5On4Ml3Kj2Ih1Gf0EdCbAz9Y"


def _sent_strings(body: Any) -> list[str]:
    if isinstance(body, str):
        return [body]
    if isinstance(body, dict):
        return [s for v in body.values() for s in _sent_strings(v)]
    if isinstance(body, list):
        return [s for v in body for s in _sent_strings(v)]
    return []


def test_a_token_in_tool_output_is_masked_in_what_recall_and_the_runner_send(
    tmp_path: Path, home: Path
) -> None:
    """A GitHub token a tool printed: the agent-native recall and the runner's plan carry its
    redacted preview, never the token; the plan says how many secrets it masked; the bytes
    the model receives are the plan's runnerInputDigest and hold no secret the lint blocks."""
    world = make_world(tmp_path, home, sessions=0)
    session = CodexSession("s1", world.repo)
    session.user("The deploy fails with 401; look at the config")
    session.shell("cat deploy.env", f"GITHUB_TOKEN={TOKEN}\nREGION=eu-west-1\n" * 3)
    session.answer(f"The token {TOKEN} has expired; rotate it, then run make deploy again.")
    session.turn("and then?", "Run make deploy after rotating the token.")
    session.turn("anything else?", "Keep tokens out of deploy.env; read them from the vault.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", world.repo)

    code, recalled = world.cli("memory", "recall", *_window())
    assert code == 0, recalled
    assert recalled["sources"], recalled["note"]
    transcript = recalled["sources"][0]["chunk"]["transcript"]
    assert TOKEN not in json.dumps(recalled)
    assert transcript.count(f"…[{len(TOKEN)} chars]") == 4, transcript

    with ScriptedServer() as server:
        server.respond_with(lambda request: Scripted.chat(answer(_task_in(request.json()))))
        world.env = {"OPENAI_API_KEY": "dummy"}
        code, verdict = world.cli(
            "memory", "reverify-runner", "--runner", "openai", *_openai(server)
        )
        assert code == 0, verdict
        preview = world.plan_by_cli("openai", *_openai(server))
        (plan,) = preview["plans"]
        assert plan["disclosure"]["secretsMasked"] == 4, plan["disclosure"]
        code, text, _ = world.text(
            "memory", "extract", "--runner", "openai", *_openai(server), *_window()
        )
        assert code == 0 and "4 secrets masked" in " ".join(text.split()), text
        probes = len(server.requests)

        code, ran = world.approve(plan["planDigest"])
        assert code == 0, ran

        (sent,) = [
            s for r in server.requests[probes:probes + 1] for s in _sent_strings(r.json())
            if "TASK:\n{" in s
        ]  # fmt: skip
        assert hashlib.sha256(sent.encode("utf-8")).hexdigest() == plan["runnerInputDigest"]
        assert TOKEN not in sent and secret_hits(sent) == []
        assert all(TOKEN.encode() not in r.body for r in server.requests)


def test_previews_the_transcript_quotes_are_not_counted_as_secrets_masked(
    tmp_path: Path, home: Path
) -> None:
    """A transcript quoting earlier `memory lint` output holds redacted previews that no masking
    wrote: the plan counted every `…[N chars]` in its bytes, so it said 3 secrets masked where
    recall masked the one token."""
    world = make_world(tmp_path, home, sessions=0)
    session = CodexSession("s1", world.repo)
    quoted = "secret.github-token: ghp_…[40 chars] in entries/a.md; ghp_…[40 chars] in b.md"
    session.user(f"memory lint said: {quoted}. Why?")
    session.shell("cat deploy.env", f"GITHUB_TOKEN={TOKEN}\n")
    session.answer("Both entries quote a token; take it out of the entries and rotate it.")
    session.turn("and then?", "Run memory lint again.")
    session.turn("anything else?", "Keep tokens out of entries; read them from the vault.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", world.repo)
    code, recalled = world.cli("memory", "recall", *_window())
    assert code == 0 and recalled["sources"], recalled
    transcript = recalled["sources"][0]["chunk"]["transcript"]
    assert masks_in(transcript) == 3 and TOKEN not in transcript, transcript

    with ScriptedServer() as server:
        server.respond_with(lambda request: Scripted.chat(answer(_task_in(request.json()))))
        world.env = {"OPENAI_API_KEY": "dummy"}
        code, verdict = world.cli(
            "memory", "reverify-runner", "--runner", "openai", *_openai(server)
        )
        assert code == 0, verdict
        (plan,) = world.plan_by_cli("openai", *_openai(server))["plans"]
        assert plan["disclosure"]["secretsMasked"] == 1, plan["disclosure"]
        code, text, _ = world.text(
            "memory", "extract", "--runner", "openai", *_openai(server), *_window()
        )
        assert code == 0 and "1 secret masked" in " ".join(text.split()), text


def test_a_token_in_a_draft_an_agent_staged_is_masked_in_its_adjudication(
    tmp_path: Path, home: Path
) -> None:
    """An agent staged a draft that quotes a token (staging does not refuse it; review's lint
    blocks it later): the adjudication the runner plans for it sends the draft with the token
    masked, and says so."""
    world = make_world(tmp_path, home)
    code, recalled = world.op("memory.recall", dict(WINDOW))
    assert code == 0, recalled
    task = recalled["sources"][0]
    evidence = task["chunk"]["turnEvidence"][0]["evidenceId"]
    text = f"Release tags need a v prefix; the CI token is {TOKEN}."
    code, staged = world.op(
        "memory.stage",
        {
            "format": "threadshare-memory-candidate-draft-batch@v1",
            "taskId": task["taskId"],
            "binding": task["binding"],
            "candidates": [
                {
                    "content": text,
                    "type": "work_method",
                    "priority": 60,
                    "confidence": "medium",
                    "scene": None,
                    "statements": [{"statementId": "s1", "text": text, "evidenceIds": [evidence]}],
                }
            ],
        },
    )
    assert code == 0, staged
    with ScriptedServer() as server:
        server.respond_with(lambda request: Scripted.chat(answer(_task_in(request.json()))))
        world.env = {"OPENAI_API_KEY": "dummy"}
        code, verdict = world.cli(
            "memory", "reverify-runner", "--runner", "openai", *_openai(server)
        )
        assert code == 0, verdict
        (plan,) = world.plan_by_cli("openai", *_openai(server))["plans"]
        assert plan["taskKind"] == "adjudication"
        assert plan["disclosure"]["secretsMasked"] == 2, plan["disclosure"]
        probes = len(server.requests)
        code, ran = world.approve(plan["planDigest"])
        assert code == 0 and ran["results"][0]["quarantined"] == 1, ran
        (sent,) = [s for s in _sent_strings(server.requests[probes].json()) if "TASK:\n{" in s]
        assert hashlib.sha256(sent.encode("utf-8")).hexdigest() == plan["runnerInputDigest"]
        assert TOKEN not in sent and secret_hits(sent) == []
