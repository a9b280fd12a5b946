"""A session recorded in another folder, mapped to this worktree by `[paths] aliases` in
config.toml (docs/sessions.md): recorded on Windows in `C:\\Users\\YAROSLAV\\RAVE-ERA`, aliased
to the repository here. A path under that folder is a path in this repository, as one under the
worktree root is: recall's transcript and the text promotion writes show it relative
(`src/app/api/register/route.ts`), not as `{local-path}`."""

from __future__ import annotations

import json
from pathlib import Path

from recall_world import WINDOW, CodexSession, make_repo, sync

from support import RAVE_ERA_CWD, draft_batch, in_process, memory_init, store_all
from teamlore.ops.registry import OpContext, run_operation

ROUTE = RAVE_ERA_CWD + "\\src\\app\\api\\register\\route.ts"


def _aliased_repository(tmp_path: Path, home: Path) -> Path:
    """A registered repository owning one Codex session recorded in `RAVE_ERA_CWD`, mapped to
    it by an alias in config.toml (written before the sync, as a person does); no embeddings,
    which staging would load a model for."""
    repo = make_repo((tmp_path / "shop").resolve())
    home.mkdir(mode=0o700, exist_ok=True)
    config = home / "config.toml"
    aliases = f"[paths.aliases]\n'{RAVE_ERA_CWD}' = '{repo}'\n"
    config.write_text('[embeddings]\nbackend = "off"\n' + aliases, encoding="utf-8")
    config.chmod(0o600)
    session = CodexSession("a1", RAVE_ERA_CWD)  # type: ignore[arg-type]  # the Windows cwd
    session.user("The register form fails; fix it")
    session.shell(f"Get-Content {ROUTE}", "export async function POST() {}")
    session.answer(f"Fixed the handler in {ROUTE}.")
    session.turn("does the build pass?", "Yes: `npm run build` type-checks the route.")
    session.turn("anything else?", "Run `npm run build` before pushing.")
    session.write(tmp_path / "codex")
    sync(home, tmp_path / "codex", repo)
    memory_init(repo, home)
    return repo


def test_recall_and_review_write_a_path_under_an_alias_relative_to_the_repository(
    tmp_path: Path, home: Path
) -> None:
    repo = _aliased_repository(tmp_path, home)
    ctx = OpContext(cwd=repo, home=home)
    [task] = run_operation("memory.recall", ctx, dict(WINDOW))["sources"]
    transcript = task["chunk"]["transcript"]
    assert "YAROSLAV" not in transcript and "{local-path}" not in transcript
    assert "Get-Content src/app/api/register/route.ts" in transcript

    text = f"The register form posts to {ROUTE}; check it after `npm run build`."
    staged = run_operation("memory.stage", ctx, draft_batch(task, text))
    run_operation("memory.stage", ctx, store_all(staged["adjudicationTask"]))
    proc = in_process(
        "memory", "review", "--format", "json", cwd=repo, env={"TEAMLORE_HOME": str(home)}
    )
    assert proc.returncode == 0, proc.stderr
    [item] = json.loads(proc.stdout)["items"]
    written = "The register form posts to src/app/api/register/route.ts; check it after"
    assert item["writtenContent"].startswith(written)
    assert item["statements"][0]["writtenText"] == item["writtenContent"]
    assert item["writtenNotice"] == "paths under this worktree will be written relative to it"
