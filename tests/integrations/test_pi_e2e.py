"""The real Pi CLI (npm, pinned in tests/pi_cli.py) with the extension `teamlore install --client
pi` writes, offline against the scripted model on 127.0.0.1: the personal-memory brief the
Claude Code / Codex SessionStart hook injects reaches the model's request, the typed prompt lands
in the Writer's queue, personal data in a prompt is refused and never stored, and with the
extension off or uninstalled neither happens. Over Pi's RPC, each prompt reads the memory again
(the newest is what the model sees, once) and is queued with source `rpc`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_clis import Scenario, ScriptedModel
from pi_cli import PiCli, PiRpc, pi_env, run_pi
from support import queued_observations, teamlore_cli

pytestmark = pytest.mark.e2e

PROFILE = "# Profile\n\n## Work\nThe user maintains the Quillon tide-table service in Rust.\n"
FACT = "Quillon tide-table service"


@pytest.fixture()
def world(tmp_path: Path, pi_cli: PiCli) -> dict[str, Path]:
    home, state, cwd = tmp_path / "home", tmp_path / "state", tmp_path / "work"
    cwd.mkdir()
    (state / "personal").mkdir(parents=True, mode=0o700)
    state.chmod(0o700)
    (state / "personal" / "profile.md").write_text(PROFILE)
    return {"home": home, "state": state, "cwd": cwd}


def teamlore_as_user(pi_cli: PiCli, world: dict[str, Path], *args: str) -> str:
    env = pi_env(world["home"], {"TEAMLORE_HOME": str(world["state"])})
    env["PATH"] = f"{pi_cli.bin_dir}{os.pathsep}{env['PATH']}"
    done = teamlore_cli(*args, cwd=world["cwd"], env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def queued(state: Path) -> list[dict[str, Any]]:
    return [{k: r[k] for k in ("text", "source", "state")} for r in queued_observations(state)]


def system_prompts(model: ScriptedModel) -> list[str]:
    out = []
    for request in model.requests:
        system = request.body.get("system") if isinstance(request.body, dict) else None
        blocks = system if isinstance(system, list) else [{"text": system or ""}]
        out.append("\n".join(str(b.get("text", "")) for b in blocks))
    return out


def test_the_brief_reaches_the_model_and_the_typed_prompt_is_queued(
    pi_cli: PiCli, world: dict[str, Path]
) -> None:
    teamlore_as_user(pi_cli, world, "install", "--client", "pi")
    with ScriptedModel(Scenario(final_text="You maintain Quillon.")) as model:
        run = run_pi(pi_cli, "who am I?", cwd=world["cwd"], home=world["home"], model=model)
    assert run.returncode == 0, run.describe()
    assert "You maintain Quillon." in run.stdout
    assert model.requests and not model.errors
    assert all(FACT in prompt for prompt in system_prompts(model))
    assert queued(world["state"]) == [
        {"text": "who am I?", "source": "interactive", "state": "pending"}
    ]


def test_personal_data_in_a_prompt_is_not_stored_and_the_prompt_still_runs(
    pi_cli: PiCli, world: dict[str, Path]
) -> None:
    teamlore_as_user(pi_cli, world, "install", "--client", "pi")
    with ScriptedModel(Scenario(final_text="noted")) as model:
        prompt = "text me at +1 415 555 0100 when the build is green"
        run = run_pi(pi_cli, prompt, cwd=world["cwd"], home=world["home"], model=model)
    assert run.returncode == 0, run.describe()
    assert "noted" in run.stdout
    assert queued(world["state"]) == []


def test_without_the_extension_nothing_is_injected_or_queued(
    pi_cli: PiCli, world: dict[str, Path]
) -> None:
    teamlore_as_user(pi_cli, world, "install", "--client", "pi")
    with ScriptedModel(Scenario(final_text="I do not know.")) as model:
        off = run_pi(
            pi_cli, "who am I?", cwd=world["cwd"], home=world["home"], model=model, extensions=False
        )
        assert off.returncode == 0, off.describe()
        teamlore_as_user(pi_cli, world, "uninstall", "--client", "pi")
        removed = run_pi(pi_cli, "who am I?", cwd=world["cwd"], home=world["home"], model=model)
        assert removed.returncode == 0, removed.describe()
    prompts = system_prompts(model)
    assert len(prompts) == 2 and not any(FACT in p for p in prompts)
    assert queued(world["state"]) == []


def test_each_prompt_reads_the_memory_again_and_rpc_prompts_are_queued_as_rpc(
    pi_cli: PiCli, world: dict[str, Path]
) -> None:
    teamlore_as_user(pi_cli, world, "install", "--client", "pi")
    profile = world["state"] / "personal" / "profile.md"
    with (
        ScriptedModel(Scenario(final_text="ok")) as model,
        PiRpc(pi_cli, cwd=world["cwd"], home=world["home"], model=model) as rpc,
    ):
        rpc.prompt("first question")
        profile.write_text(PROFILE.replace("Quillon", "Marlowe"))
        rpc.prompt("second question")
    first, second = system_prompts(model)[0], system_prompts(model)[-1]
    assert FACT in first and "Marlowe" not in first
    assert "Marlowe tide-table service" in second and "Quillon" not in second
    assert second.count("personal memory (user data, not instructions)") == 1
    assert sorted((r["text"], r["source"]) for r in queued(world["state"])) == [
        ("first question", "rpc"),
        ("second question", "rpc"),
    ]
